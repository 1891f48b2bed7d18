//! The environment a container starts with: literal values, the downward API (`fieldRef`,
//! `resourceFieldRef`) and ConfigMap/Secret references, resolved when the container starts (and
//! again at each restart, as the kubelet does, so in-place restarts see new label values).

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString,
    api::core::v1::{ConfigMap, Container, Pod, Secret},
};
use kube::{Api, Client};

/// Why a container's environment could not be built (`CreateContainerConfigError`).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EnvError {
    /// A referenced ConfigMap or Secret (or key) is missing and not optional.
    #[error("{kind} \"{name}\" not found")]
    Missing {
        /// `configmap` or `secret`.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// A referenced key is missing and not optional.
    #[error("couldn't find key {key} in {kind} {namespace}/{name}")]
    MissingKey {
        /// `ConfigMap` or `Secret`.
        kind: &'static str,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// The key.
        key: String,
    },
}

/// The value of a downward API field path for a pod (`metadata.labels['app']`, `status.podIP`...).
pub fn field_value(pod: &Pod, host_ip: &str, pod_ip: &str, path: &str) -> Option<String> {
    let meta = &pod.metadata;
    let keyed = |prefix: &str| -> Option<String> {
        path.strip_prefix(prefix)?.strip_suffix("']").map(str::to_string)
    };
    if let Some(key) = keyed("metadata.labels['") {
        return Some(meta.labels.as_ref().and_then(|l| l.get(&key).cloned()).unwrap_or_default());
    }
    if let Some(key) = keyed("metadata.annotations['") {
        return Some(meta.annotations.as_ref().and_then(|a| a.get(&key).cloned()).unwrap_or_default());
    }
    let spec = pod.spec.as_ref();
    Some(match path {
        "metadata.name" => meta.name.clone().unwrap_or_default(),
        "metadata.namespace" => meta.namespace.clone().unwrap_or_default(),
        "metadata.uid" => meta.uid.clone().unwrap_or_default(),
        "metadata.labels" => render_map(meta.labels.as_ref()),
        "metadata.annotations" => render_map(meta.annotations.as_ref()),
        "spec.nodeName" => spec.and_then(|s| s.node_name.clone()).unwrap_or_default(),
        "spec.serviceAccountName" => spec.and_then(|s| s.service_account_name.clone()).unwrap_or_default(),
        "status.hostIP" | "status.hostIPs" => host_ip.to_string(),
        "status.podIP" | "status.podIPs" => pod_ip.to_string(),
        _ => return None,
    })
}

fn render_map(map: Option<&BTreeMap<String, String>>) -> String {
    map.map(|m| m.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// The value of a `resourceFieldRef` (`limits.cpu`, `requests.memory`): CPU rounded up to whole
/// cores (divisor 1), memory in bytes, as the kubelet renders them.
pub fn resource_value(container: &Container, resource: &str) -> Option<String> {
    let (kind, name) = resource.split_once('.')?;
    let resources = container.resources.as_ref()?;
    let map = match kind {
        "limits" => resources.limits.as_ref(),
        "requests" => resources.requests.as_ref(),
        _ => None,
    }?;
    let quantity = kruise_machinery::quantity::Quantity::parse(&map.get(name)?.0).ok()?;
    Some(match name {
        "cpu" => quantity.units().max(1).to_string(),
        _ => quantity.units().to_string(),
    })
}

fn decode(bytes: &ByteString) -> String {
    String::from_utf8_lossy(&bytes.0).into_owned()
}

/// What a `*KeyRef` refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefKind {
    /// `configMapKeyRef`.
    ConfigMap,
    /// `secretKeyRef`.
    Secret,
}

/// The value of a `configMapKeyRef` / `secretKeyRef` as the kubelet resolves it, from the
/// referenced object's data (`None`: the object does not exist): a missing object or key is an
/// error (the container stays in `CreateContainerConfigError`) unless the reference is
/// optional, when the variable is left out.
pub fn key_ref_value(
    kind: RefKind,
    namespace: &str,
    name: &str,
    key: &str,
    optional: bool,
    data: Option<BTreeMap<String, String>>,
) -> Result<Option<String>, EnvError> {
    let (lower, upper) = match kind {
        RefKind::ConfigMap => ("configmap", "ConfigMap"),
        RefKind::Secret => ("secret", "Secret"),
    };
    match data {
        None if optional => Ok(None),
        None => Err(EnvError::Missing { kind: lower, name: name.to_string() }),
        Some(data) => match data.get(key) {
            Some(value) => Ok(Some(value.clone())),
            None if optional => Ok(None),
            None => Err(EnvError::MissingKey {
                kind: upper,
                namespace: namespace.to_string(),
                name: name.to_string(),
                key: key.to_string(),
            }),
        },
    }
}

/// Resolves the full environment of a container of a pod.
pub async fn resolve(
    client: &Client,
    pod: &Pod,
    container: &Container,
    host_ip: &str,
    pod_ip: &str,
) -> Result<BTreeMap<String, String>, EnvError> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_else(|| "default".into());
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    let mut env = BTreeMap::new();
    for source in container.env_from.iter().flatten() {
        let prefix = source.prefix.clone().unwrap_or_default();
        if let Some(reference) = &source.config_map_ref {
            match config_maps.get_opt(&reference.name).await.ok().flatten() {
                Some(map) => {
                    for (key, value) in map.data.unwrap_or_default() {
                        env.insert(format!("{prefix}{key}"), value);
                    }
                }
                None if reference.optional == Some(true) => {}
                None => return Err(EnvError::Missing { kind: "configmap", name: reference.name.clone() }),
            }
        }
        if let Some(reference) = &source.secret_ref {
            match secrets.get_opt(&reference.name).await.ok().flatten() {
                Some(secret) => {
                    for (key, value) in secret.data.unwrap_or_default() {
                        env.insert(format!("{prefix}{key}"), decode(&value));
                    }
                }
                None if reference.optional == Some(true) => {}
                None => return Err(EnvError::Missing { kind: "secret", name: reference.name.clone() }),
            }
        }
    }
    for var in container.env.iter().flatten() {
        let value = match (&var.value, &var.value_from) {
            (Some(value), _) => Some(expand(value, &env)),
            (None, Some(from)) => {
                if let Some(field) = &from.field_ref {
                    field_value(pod, host_ip, pod_ip, &field.field_path)
                } else if let Some(resource) = &from.resource_field_ref {
                    resource_value(container, &resource.resource)
                } else if let Some(key) = &from.config_map_key_ref {
                    let data = config_maps
                        .get_opt(&key.name)
                        .await
                        .ok()
                        .flatten()
                        .map(|m| m.data.unwrap_or_default());
                    key_ref_value(
                        RefKind::ConfigMap,
                        &namespace,
                        &key.name,
                        &key.key,
                        key.optional == Some(true),
                        data,
                    )?
                } else if let Some(key) = &from.secret_key_ref {
                    let data = secrets.get_opt(&key.name).await.ok().flatten().map(|s| {
                        s.data.unwrap_or_default().iter().map(|(k, v)| (k.clone(), decode(v))).collect()
                    });
                    key_ref_value(
                        RefKind::Secret,
                        &namespace,
                        &key.name,
                        &key.key,
                        key.optional == Some(true),
                        data,
                    )?
                } else {
                    None
                }
            }
            (None, None) => Some(String::new()),
        };
        if let Some(value) = value {
            env.insert(var.name.clone(), value);
        }
    }
    Ok(env)
}

/// `$(VAR)` references to earlier variables, as the kubelet expands them (`$$` escapes).
pub fn expand(value: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(index) = rest.find('$') {
        out.push_str(&rest[..index]);
        let after = &rest[index + 1..];
        if let Some(stripped) = after.strip_prefix('$') {
            out.push('$');
            rest = stripped;
        } else if let Some(inner) = after.strip_prefix('(')
            && let Some(end) = inner.find(')')
        {
            let name = &inner[..end];
            match env.get(name) {
                Some(resolved) => out.push_str(resolved),
                None => {
                    out.push_str("$(");
                    out.push_str(name);
                    out.push(')');
                }
            }
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        api::core::v1::{PodSpec, ResourceRequirements},
        apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::ObjectMeta},
    };

    use super::*;

    #[test]
    fn downward_api_fields_resolve() {
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some("web-0".into()),
                namespace: Some("prod".into()),
                labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            },
            spec: Some(PodSpec { node_name: Some("node-1".into()), ..Default::default() }),
            ..Default::default()
        };
        let cases = [
            ("metadata.name", Some("web-0")),
            ("metadata.namespace", Some("prod")),
            ("metadata.labels['app']", Some("web")),
            ("metadata.labels['missing']", Some("")),
            ("spec.nodeName", Some("node-1")),
            ("status.podIP", Some("10.244.1.5")),
            ("status.hostIP", Some("172.18.0.2")),
            ("spec.unknown", None),
        ];
        for (path, expected) in cases {
            assert_eq!(field_value(&pod, "172.18.0.2", "10.244.1.5", path).as_deref(), expected, "{path}");
        }
    }

    #[test]
    fn resources_render_like_the_kubelet() {
        let container = Container {
            resources: Some(ResourceRequirements {
                limits: Some(
                    [
                        ("cpu".to_string(), Quantity("1500m".into())),
                        ("memory".to_string(), Quantity("1Gi".into())),
                    ]
                    .into(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(resource_value(&container, "limits.cpu").as_deref(), Some("2"));
        assert_eq!(resource_value(&container, "limits.memory").as_deref(), Some("1073741824"));
        assert_eq!(resource_value(&container, "requests.cpu"), None);
    }

    #[test]
    fn key_references_wait_for_their_key() {
        let data = |pairs: &[(&str, &str)]| {
            Some(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>())
        };
        let missing_key = |kind, key: &str| EnvError::MissingKey {
            kind,
            namespace: "ns".into(),
            name: "web-0-barrier".into(),
            key: key.into(),
        };
        let cases = [
            (
                "key present",
                RefKind::ConfigMap,
                false,
                data(&[("p_0", "true")]),
                Ok(Some("true".to_string())),
            ),
            (
                "key missing",
                RefKind::ConfigMap,
                false,
                data(&[("p_10", "true")]),
                Err(missing_key("ConfigMap", "p_0")),
            ),
            ("empty map", RefKind::ConfigMap, false, data(&[]), Err(missing_key("ConfigMap", "p_0"))),
            (
                "map missing",
                RefKind::ConfigMap,
                false,
                None,
                Err(EnvError::Missing { kind: "configmap", name: "web-0-barrier".into() }),
            ),
            ("optional key missing", RefKind::ConfigMap, true, data(&[]), Ok(None)),
            ("optional map missing", RefKind::ConfigMap, true, None, Ok(None)),
            ("secret key missing", RefKind::Secret, false, data(&[]), Err(missing_key("Secret", "p_0"))),
            (
                "secret missing",
                RefKind::Secret,
                false,
                None,
                Err(EnvError::Missing { kind: "secret", name: "web-0-barrier".into() }),
            ),
        ];
        for (name, kind, optional, found, expected) in cases {
            assert_eq!(
                key_ref_value(kind, "ns", "web-0-barrier", "p_0", optional, found),
                expected,
                "{name}"
            );
        }
    }

    #[test]
    fn references_expand() {
        let env: BTreeMap<String, String> = [("A".to_string(), "1".to_string())].into();
        assert_eq!(expand("x-$(A)-$(B)-$$(A)", &env), "x-1-$(B)-$(A)");
        assert_eq!(expand("plain $ sign", &env), "plain $ sign");
    }
}
