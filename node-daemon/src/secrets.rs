//! Registry credentials from the pull secrets a NodeImage references (upstream
//! `pkg/daemon/util/secret_manager.go` and `pkg/util/secret`): Secrets are read from the API and
//! cached for 5-10 minutes, and the entries of their docker config (`.dockerconfigjson` or the
//! legacy `.dockercfg`) that match an image's registry become the credentials of its pull.
//!
//! Credentials never reach a log: [`RegistryAuth`]'s `Debug` hides them, and callers log only
//! how many credentials they tried.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use base64::Engine as _;
use k8s_openapi::api::core::v1::Secret;
use kruise_crds::{apps::v1beta1::ReferenceObject, validation::ImageReference};
use kube::{Api, Client};
use parking_lot::Mutex;
use serde_json::Value;

/// A username and password for one registry.
#[derive(Clone, PartialEq, Eq)]
pub struct RegistryAuth {
    /// The user.
    pub username: String,
    /// The password or token.
    pub password: String,
}

impl std::fmt::Debug for RegistryAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RegistryAuth(<redacted>)")
    }
}

/// Reads referenced Secrets through the API, caching each for 5-10 minutes (randomised so that
/// the daemons of a cluster do not refresh together).
pub struct SecretCache {
    client: Client,
    cache: Mutex<HashMap<(String, String), (Instant, Secret)>>,
}

impl SecretCache {
    /// An empty cache.
    pub fn new(client: Client) -> Self {
        Self { client, cache: Mutex::new(HashMap::new()) }
    }

    /// The Secrets `references` name; those that cannot be read are logged and left out (the
    /// pull then goes on anonymously, as upstream).
    pub async fn get(&self, references: &[ReferenceObject]) -> Vec<Secret> {
        let mut secrets = Vec::new();
        for reference in references {
            let key = (reference.namespace.clone(), reference.name.clone());
            let cached =
                self.cache.lock().get(&key).filter(|(deadline, _)| Instant::now() < *deadline).cloned();
            if let Some((_, secret)) = cached {
                secrets.push(secret);
                continue;
            }
            let api: Api<Secret> = Api::namespaced(self.client.clone(), &reference.namespace);
            match api.get(&reference.name).await {
                Ok(secret) => {
                    let lifetime = Duration::from_secs(300 + rand::random_range(0..300));
                    self.cache.lock().insert(key, (Instant::now() + lifetime, secret.clone()));
                    secrets.push(secret);
                }
                Err(error) => tracing::warn!(
                    namespace = %reference.namespace,
                    name = %reference.name,
                    %error,
                    "cannot read a pull secret"
                ),
            }
        }
        secrets
    }
}

/// The credentials in `secrets` for the registry of `image`, in the order found.
pub fn registry_auths(secrets: &[Secret], image: &ImageReference) -> Vec<RegistryAuth> {
    let mut auths = Vec::new();
    for secret in secrets {
        let Some(data) = secret.data.as_ref() else { continue };
        let Some(raw) = data.get(".dockerconfigjson").or_else(|| data.get(".dockercfg")) else { continue };
        let Ok(config) = serde_json::from_slice::<Value>(&raw.0) else { continue };
        for auth in auths_in(&config, image) {
            if !auths.contains(&auth) {
                auths.push(auth);
            }
        }
    }
    auths
}

/// Docker Hub's names in docker configs.
const DOCKER_HUB: [&str; 3] = ["docker.io", "index.docker.io", "registry-1.docker.io"];

/// Whether a docker config key (`https://index.docker.io/v1/`, `registry:5000/team`) covers
/// the image: same registry host, and the image's path under the key's path when it has one
/// (the kubelet keyring's matching).
pub fn key_matches(key: &str, image: &ImageReference) -> bool {
    let key = key.trim();
    let key = key.split_once("://").map_or(key, |(_, rest)| rest);
    let key = key.trim_end_matches('/');
    let (host, path) = key.split_once('/').unwrap_or((key, ""));
    let same_host =
        host == image.domain || (DOCKER_HUB.contains(&host) && DOCKER_HUB.contains(&image.domain.as_str()));
    if !same_host {
        return false;
    }
    // Docker Hub keys carry the API version (`/v1/`), which is not a repository path.
    let path = if DOCKER_HUB.contains(&host) && (path == "v1" || path == "v2") { "" } else { path };
    path.is_empty() || image.path == path || image.path.starts_with(&format!("{path}/"))
}

fn auths_in(config: &Value, image: &ImageReference) -> Vec<RegistryAuth> {
    let Some(entries) = config.get("auths").unwrap_or(config).as_object() else { return Vec::new() };
    entries
        .iter()
        .filter(|(key, _)| key_matches(key, image))
        .filter_map(|(_, entry)| entry_auth(entry))
        .collect()
}

fn entry_auth(entry: &Value) -> Option<RegistryAuth> {
    if let (Some(username), Some(password)) = (entry["username"].as_str(), entry["password"].as_str())
        && !username.is_empty()
    {
        return Some(RegistryAuth { username: username.into(), password: password.into() });
    }
    let encoded = entry["auth"].as_str()?;
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (username, password) = text.split_once(':')?;
    Some(RegistryAuth { username: username.into(), password: password.into() })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::ByteString;
    use kruise_crds::validation::parse_image_reference;
    use serde_json::json;

    use super::*;

    fn secret(config: Value) -> Secret {
        Secret {
            data: Some(
                [(
                    ".dockerconfigjson".to_string(),
                    ByteString(serde_json::to_vec(&config).unwrap_or_default()),
                )]
                .into(),
            ),
            ..Default::default()
        }
    }

    fn image(reference: &str) -> ImageReference {
        parse_image_reference(reference).unwrap_or_else(|error| panic!("{reference}: {error}"))
    }

    #[test]
    fn keys_match_host_and_path_prefix() {
        let cases = [
            ("private.example", "private.example/team/app:v1", true),
            ("https://private.example/v1/", "private.example/team/app:v1", false),
            ("private.example/team", "private.example/team/app:v1", true),
            ("private.example/other", "private.example/team/app:v1", false),
            ("private.example/tea", "private.example/team/app:v1", false),
            ("https://index.docker.io/v1/", "nginx:1.25", true),
            ("docker.io", "team/app", true),
            ("other.example", "private.example/app", false),
            ("registry:5000", "registry:5000/app", true),
        ];
        for (key, reference, expected) in cases {
            assert_eq!(key_matches(key, &image(reference)), expected, "{key} vs {reference}");
        }
    }

    #[test]
    fn credentials_come_from_matching_entries_only() {
        let encoded = base64::engine::general_purpose::STANDARD.encode("robot:s3cret");
        let secrets = [
            secret(json!({"auths": {
                "private.example": {"auth": encoded},
                "other.example": {"username": "u", "password": "p"},
            }})),
            secret(json!({"auths": {"private.example": {"username": "second", "password": "pw"}}})),
            Secret::default(),
        ];
        let auths = registry_auths(&secrets, &image("private.example/team/app:v1"));
        assert_eq!(
            auths,
            [
                RegistryAuth { username: "robot".into(), password: "s3cret".into() },
                RegistryAuth { username: "second".into(), password: "pw".into() },
            ]
        );
        assert!(registry_auths(&secrets, &image("nginx")).is_empty());
        assert_eq!(format!("{:?}", auths[0]), "RegistryAuth(<redacted>)", "credentials never print");
    }
}
