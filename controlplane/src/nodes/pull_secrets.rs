//! Registry credentials from a pod's `imagePullSecrets` (`kubernetes.io/dockerconfigjson` and
//! `kubernetes.io/dockercfg`), matched to an image's registry host as the kubelet does.

use base64::Engine;
use k8s_openapi::api::core::v1::Secret;
use serde_json::Value;

/// Username and password for a registry.
pub type Credentials = (String, String);

fn host_of(key: &str) -> &str {
    let key = key.trim_start_matches("https://").trim_start_matches("http://");
    key.split('/').next().unwrap_or(key)
}

fn entry_credentials(entry: &Value) -> Option<Credentials> {
    if let (Some(user), Some(password)) = (entry["username"].as_str(), entry["password"].as_str()) {
        return Some((user.to_string(), password.to_string()));
    }
    let auth = entry["auth"].as_str()?;
    let decoded = base64::engine::general_purpose::STANDARD.decode(auth).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// The credentials a docker config (the `auths` map, or the legacy top-level map) holds for
/// `registry` (`docker.io` also matches `index.docker.io` entries).
pub fn credentials_in(config: &Value, registry: &str) -> Option<Credentials> {
    let auths = config.get("auths").unwrap_or(config).as_object()?;
    let matches = |key: &str| {
        let host = host_of(key);
        host == registry
            || (registry == "docker.io" && matches!(host, "index.docker.io" | "registry-1.docker.io"))
    };
    auths.iter().find(|(key, _)| matches(key)).and_then(|(_, entry)| entry_credentials(entry))
}

/// The credentials a pull secret holds for `registry`.
pub fn credentials_from_secret(secret: &Secret, registry: &str) -> Option<Credentials> {
    let data = secret.data.as_ref()?;
    let raw = data.get(".dockerconfigjson").or_else(|| data.get(".dockercfg"))?;
    let config: Value = serde_json::from_slice(&raw.0).ok()?;
    credentials_in(&config, registry)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn credentials_match_the_registry_host() {
        let auth = base64::engine::general_purpose::STANDARD.encode("bob:hunter2");
        let config = json!({"auths": {
            "https://private.example/v1/": {"auth": auth},
            "other.example": {"username": "u", "password": "p"},
            "https://index.docker.io/v1/": {"username": "hub", "password": "pw"},
        }});
        assert_eq!(credentials_in(&config, "private.example"), Some(("bob".into(), "hunter2".into())));
        assert_eq!(credentials_in(&config, "other.example"), Some(("u".into(), "p".into())));
        assert_eq!(credentials_in(&config, "docker.io"), Some(("hub".into(), "pw".into())));
        assert_eq!(credentials_in(&config, "nowhere.example"), None);
        let legacy = json!({"legacy.example": {"username": "a", "password": "b"}});
        assert_eq!(credentials_in(&legacy, "legacy.example"), Some(("a".into(), "b".into())));
    }
}
