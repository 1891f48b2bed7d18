//! Hashes that must equal the ones Go code computes (upstream `pkg/util/containermeta` and the
//! kubelet's `HashContainer`): the kubelet's container hash and Kruise's hash of a container's
//! env-from-metadata values. Both are FNV-32a over `hashutil.DeepHashObject(json.Marshal(x))`,
//! i.e. over spew's `%#v` rendering of a byte slice: `([]uint8)[123 34 ...]`.
//!
//! Two parties compute them and compare: the node daemon reports them per running container in
//! the `apps.kruise.io/runtime-containers-meta` annotation ([`super::RuntimeContainerMetaSet`]),
//! the in-place update engine's completion check recomputes them from the pod spec; they live
//! here, in the crate both depend on, and the encoding has to be byte-for-byte Go's (HTML-safe
//! string escaping included) so that a Go kruise-manager or kruise-daemon agrees with ours.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Container;
pub use kruise_machinery::kubelet_hash::{deep_hash_bytes, go_json_string, kubelet_container_hash};

/// Env vars whose downward-API values never count (SidecarSet hot-upgrade bookkeeping).
pub const EXCLUDED_ENV_FROM_METADATA: [&str; 2] = ["SIDECARSET_VERSION", "SIDECARSET_VERSION_ALT"];

/// Splits a downward-API path with a subscript: `metadata.labels['k']` -> (`metadata.labels`,
/// `k`). Mirrors `fieldpath.SplitMaybeSubscriptedPath`.
pub fn split_subscripted_path(path: &str) -> Option<(&str, &str)> {
    let inner = path.strip_suffix("']")?;
    let (head, key) = inner.split_once("['")?;
    (!head.is_empty()).then_some((head, key))
}

/// The env vars of a container that take their value from a subscripted downward-API path
/// (`fieldRef`, no literal value), excluding the SidecarSet version vars: `(env name, path,
/// key)`.
fn env_from_metadata_refs(container: &Container) -> impl Iterator<Item = (&str, &str, &str)> {
    container.env.iter().flatten().filter_map(|env| {
        if env.value.as_deref().is_some_and(|v| !v.is_empty()) {
            return None;
        }
        let field_path = &env.value_from.as_ref()?.field_ref.as_ref()?.field_path;
        if EXCLUDED_ENV_FROM_METADATA.contains(&env.name.as_str()) {
            return None;
        }
        let (path, key) = split_subscripted_path(field_path)?;
        Some((env.name.as_str(), path, key))
    })
}

/// Whether the container reads `metadata.labels['key']` (`path` = `metadata.labels`) or
/// `metadata.annotations['key']` into an env var: a change of that key then needs the
/// container restarted to take effect.
pub fn container_references_metadata(container: &Container, path: &str, key: &str) -> bool {
    env_from_metadata_refs(container).any(|(_, p, k)| p == path && k == key)
}

/// Hash of `json.Marshal([]EnvVar{{Name, Value}})`, sorted by name (Go's `omitempty` drops an
/// empty value; no env vars marshal as `null`).
fn hash_envs(mut envs: Vec<(String, String)>) -> u64 {
    envs.sort_by(|a, b| a.0.cmp(&b.0));
    let json = if envs.is_empty() {
        "null".to_string()
    } else {
        let items: Vec<String> = envs
            .iter()
            .map(|(name, value)| {
                if value.is_empty() {
                    format!("{{\"name\":{}}}", go_json_string(name))
                } else {
                    format!("{{\"name\":{},\"value\":{}}}", go_json_string(name), go_json_string(value))
                }
            })
            .collect();
        format!("[{}]", items.join(","))
    };
    deep_hash_bytes(json.as_bytes())
}

/// The env-from-metadata hash the node daemon must report for a container once it runs with
/// the pod's current labels and annotations (`EnvFromMetadataHasher.GetExpectHash`).
pub fn expected_env_from_metadata_hash(
    container: &Container,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> u64 {
    let envs = env_from_metadata_refs(container)
        .filter_map(|(name, path, key)| {
            let value = match path {
                "metadata.labels" => labels.get(key),
                "metadata.annotations" => annotations.get(key),
                _ => return None,
            };
            Some((name.to_string(), value.cloned().unwrap_or_default()))
        })
        .collect();
    hash_envs(envs)
}

/// The env-from-metadata hash of a running container, from the values its env vars actually
/// hold (`GetCurrentHash`); the node daemon reads them inside the container. `read` returns
/// the value of an env var by name.
pub fn current_env_from_metadata_hash<E>(
    container: &Container,
    mut read: impl FnMut(&str) -> Result<String, E>,
) -> Result<u64, E> {
    let mut envs = Vec::new();
    for (name, path, _) in env_from_metadata_refs(container) {
        if matches!(path, "metadata.labels" | "metadata.annotations") {
            envs.push((name.to_string(), read(name)?));
        }
    }
    Ok(hash_envs(envs))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, ObjectFieldSelector};

    use super::*;

    fn field_env(name: &str, path: &str) -> EnvVar {
        EnvVar {
            name: name.into(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector { field_path: path.into(), ..Default::default() }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn literal_env(name: &str, value: &str) -> EnvVar {
        EnvVar { name: name.into(), value: Some(value.into()), ..Default::default() }
    }

    #[test]
    fn subscripted_paths() {
        let cases = [
            ("metadata.labels['app']", Some(("metadata.labels", "app"))),
            ("metadata.annotations['a/b']", Some(("metadata.annotations", "a/b"))),
            ("metadata.name", None),
            ("['x']", None),
            ("metadata.labels['x'", None),
        ];
        for (path, expected) in cases {
            assert_eq!(split_subscripted_path(path), expected, "{path}");
        }
    }

    #[test]
    fn env_hashes_agree_between_spec_and_runtime() {
        // Ported from upstream TestEnvFromMetadataHasher, with our own data.
        let labels: BTreeMap<String, String> =
            [("l1".to_string(), "foo".to_string()), ("l2".to_string(), "bar".to_string())].into();
        let spec = Container {
            name: "c".into(),
            env: Some(vec![literal_env("e1", "a"), field_env("e2", "metadata.labels['l1']")]),
            ..Default::default()
        };
        let expected = expected_env_from_metadata_hash(&spec, &labels, &BTreeMap::new());
        let running = Container {
            name: "c".into(),
            env: Some(vec![field_env("e2", "metadata.labels['l1']"), literal_env("e1", "a")]),
            ..Default::default()
        };
        let read = |values: &'static [(&'static str, &'static str)]| {
            move |name: &str| -> Result<String, ()> {
                Ok(values.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()).unwrap_or_default())
            }
        };
        assert_eq!(current_env_from_metadata_hash(&running, read(&[("e2", "foo")])).unwrap(), expected);
        assert_ne!(current_env_from_metadata_hash(&running, read(&[("e2", "bar")])).unwrap(), expected);
    }

    #[test]
    fn excluded_and_literal_envs_do_not_count() {
        let empty =
            expected_env_from_metadata_hash(&Container::default(), &BTreeMap::new(), &BTreeMap::new());
        let container = Container {
            env: Some(vec![
                field_env("SIDECARSET_VERSION", "metadata.annotations['v']"),
                literal_env("x", "y"),
                field_env("name", "metadata.name"),
            ]),
            ..Default::default()
        };
        let annotations: BTreeMap<String, String> = [("v".to_string(), "1".to_string())].into();
        assert_eq!(expected_env_from_metadata_hash(&container, &BTreeMap::new(), &annotations), empty);
        assert!(!container_references_metadata(&container, "metadata.annotations", "v"));
    }

    #[test]
    fn env_hash_of_nothing_is_hash_of_null() {
        assert_eq!(
            expected_env_from_metadata_hash(&Container::default(), &BTreeMap::new(), &BTreeMap::new()),
            deep_hash_bytes(b"null")
        );
    }
}
