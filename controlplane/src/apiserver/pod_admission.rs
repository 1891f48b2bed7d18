//! kube-apiserver's built-in admission for pods that reads other objects, run on create before
//! the admission webhooks as in kube-apiserver:
//! - `ServiceAccount`: the pod runs as `default` unless it names an account; the account must
//!   exist (the `default` one is waited for briefly, as the controller makes it); its image pull
//!   secrets are copied to a pod without any; and, unless the pod or the account opt out, every
//!   container mounts a projected `kube-api-access-xxxxx` volume with the account's token, the
//!   cluster CA and the namespace.
//! - `Priority`: the pod's priority and preemption policy from its PriorityClass, or from the
//!   global default class, or 0 and `PreemptLowerPriority`; on update the stored values are kept
//!   when the new object leaves them out.

use std::time::Duration;

use serde_json::{Value, json};

use super::objects;
use crate::storage::{CollectionKey, ObjectKey, Store};

/// The account a pod runs as when it names none.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// Where the token volume is mounted in every container.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The prefix of the token volume's name.
const TOKEN_VOLUME_PREFIX: &str = "kube-api-access-";

/// Why the ServiceAccount plugin refused a pod (a 403 with this message).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("error looking up service account {namespace}/{name}: serviceaccount \"{name}\" not found")]
pub struct ServiceAccountError {
    /// The pod's namespace.
    pub namespace: String,
    /// The account it names.
    pub name: String,
}

/// The name of the account `pod` runs as (`default` when it names none), or None for a mirror
/// pod, which the plugin leaves alone.
pub fn account_name(pod: &Value) -> Option<String> {
    if objects::labels_of(pod, "annotations").contains_key("kubernetes.io/config.mirror") {
        return None;
    }
    let named = pod.pointer("/spec/serviceAccountName").and_then(Value::as_str).unwrap_or_default();
    Some(if named.is_empty() { DEFAULT_SERVICE_ACCOUNT.to_string() } else { named.to_string() })
}

/// The ServiceAccount plugin on a pod being created (pure): `account` is the ServiceAccount the
/// pod runs as, as looked up (None when it does not exist); `suffix` names a new token volume.
pub fn admit_service_account(
    pod: &mut Value,
    namespace: &str,
    account: Option<&Value>,
    suffix: &str,
) -> Result<(), ServiceAccountError> {
    let Some(name) = account_name(pod) else { return Ok(()) };
    let account = account
        .ok_or_else(|| ServiceAccountError { namespace: namespace.to_string(), name: name.clone() })?;
    if !pod.get("spec").is_some_and(Value::is_object) {
        pod["spec"] = json!({});
    }
    let spec = &mut pod["spec"];
    spec["serviceAccountName"] = json!(name);
    spec["serviceAccount"] = json!(name);
    let automount = spec
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| account.get("automountServiceAccountToken").and_then(Value::as_bool))
        .unwrap_or(true);
    if automount {
        mount_token(spec, suffix);
    }
    let has_pull_secrets =
        spec.get("imagePullSecrets").and_then(Value::as_array).is_some_and(|s| !s.is_empty());
    let account_secrets: Vec<Value> = account
        .get("imagePullSecrets")
        .and_then(Value::as_array)
        .map(|secrets| {
            secrets.iter().map(|s| json!({"name": s.get("name").cloned().unwrap_or(json!(""))})).collect()
        })
        .unwrap_or_default();
    if !has_pull_secrets && !account_secrets.is_empty() {
        spec["imagePullSecrets"] = json!(account_secrets);
    }
    Ok(())
}

/// Mounts the token volume (an existing `kube-api-access-*` volume, or a new one) in every init
/// and app container that has nothing mounted at the token path yet.
fn mount_token(spec: &mut Value, suffix: &str) {
    let existing = spec
        .get("volumes")
        .and_then(Value::as_array)
        .and_then(|volumes| {
            volumes
                .iter()
                .filter_map(|v| v.get("name").and_then(Value::as_str))
                .find(|name| name.starts_with(TOKEN_VOLUME_PREFIX))
        })
        .map(str::to_string);
    let volume_name = existing.clone().unwrap_or_else(|| format!("{TOKEN_VOLUME_PREFIX}{suffix}"));
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        for container in spec.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
            let has_mount = container.get("volumeMounts").and_then(Value::as_array).is_some_and(|mounts| {
                mounts.iter().any(|m| m.get("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH))
            });
            if has_mount {
                continue;
            }
            let mount = json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
            match container.get_mut("volumeMounts").and_then(Value::as_array_mut) {
                Some(mounts) => mounts.push(mount),
                None => container["volumeMounts"] = json!([mount]),
            }
            mounted = true;
        }
    }
    if existing.is_none() && mounted {
        let volume = json!({"name": volume_name, "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ]}});
        match spec.get_mut("volumes").and_then(Value::as_array_mut) {
            Some(volumes) => volumes.push(volume),
            None => spec["volumes"] = json!([volume]),
        }
    }
}

/// [`admit_service_account`] with the account from `store`; the `default` account is waited
/// for up to about 1.5 s (ten looks), as kube-apiserver does while the controller makes it.
pub async fn admit_service_account_from(
    store: &Store,
    namespace: &str,
    pod: &mut Value,
) -> Result<(), ServiceAccountError> {
    let Some(name) = account_name(pod) else { return Ok(()) };
    let key = ObjectKey {
        group: String::new(),
        resource: "serviceaccounts".into(),
        namespace: Some(namespace.to_string()),
        name: name.clone(),
    };
    let attempts = if name == DEFAULT_SERVICE_ACCOUNT { 10 } else { 1 };
    let mut account = store.get(&key);
    for _ in 1..attempts {
        if account.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
        account = store.get(&key);
    }
    admit_service_account(pod, namespace, account.as_deref(), &objects::random_suffix())
}

/// The classes kube-apiserver makes at start (`scheduling.k8s.io` post-start hook).
pub const SYSTEM_PRIORITY_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// Why the Priority plugin refused a pod (a 403 with this message).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum PriorityError {
    /// `priorityClassName` names no class.
    #[error("no PriorityClass with name {0} was found")]
    NoClass(String),
    /// The pod set a priority of its own that differs from its class's.
    #[error(
        "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {computed} from the given PriorityClass name"
    )]
    Priority {
        /// What the pod said.
        given: i64,
        /// What the class says.
        computed: i64,
    },
    /// The pod set a preemption policy of its own that differs from its class's.
    #[error(
        "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {computed} from the given PriorityClass name"
    )]
    PreemptionPolicy {
        /// What the pod said.
        given: String,
        /// What the class says.
        computed: String,
    },
}

/// The Priority plugin on a pod being created (pure): `class` finds a PriorityClass by name,
/// `classes` are all of them (for the global default).
pub fn admit_priority(
    pod: &mut Value,
    class: impl Fn(&str) -> Option<Value>,
    classes: &[Value],
) -> Result<(), PriorityError> {
    let named =
        pod.pointer("/spec/priorityClassName").and_then(Value::as_str).unwrap_or_default().to_string();
    let (class_name, priority, policy) = if named.is_empty() {
        // The lowest-valued global default, in case a race made two.
        let default = classes
            .iter()
            .filter(|c| c.get("globalDefault").and_then(Value::as_bool) == Some(true))
            .min_by_key(|c| c.get("value").and_then(Value::as_i64).unwrap_or(0));
        match default {
            Some(default) => (
                default.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string(),
                default.get("value").and_then(Value::as_i64).unwrap_or(0),
                default.get("preemptionPolicy").and_then(Value::as_str).map(str::to_string),
            ),
            None => (String::new(), 0, Some("PreemptLowerPriority".to_string())),
        }
    } else {
        let found = class(&named).ok_or_else(|| PriorityError::NoClass(named.clone()))?;
        (
            named.clone(),
            found.get("value").and_then(Value::as_i64).unwrap_or(0),
            found.get("preemptionPolicy").and_then(Value::as_str).map(str::to_string),
        )
    };
    let spec = &pod["spec"];
    if let Some(given) = spec.get("priority").and_then(Value::as_i64)
        && given != priority
    {
        return Err(PriorityError::Priority { given, computed: priority });
    }
    if let (Some(given), Some(computed)) = (spec.get("preemptionPolicy").and_then(Value::as_str), &policy)
        && given != computed
    {
        return Err(PriorityError::PreemptionPolicy { given: given.to_string(), computed: computed.clone() });
    }
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else { return Ok(()) };
    if class_name.is_empty() {
        spec.remove("priorityClassName");
    } else {
        spec.insert("priorityClassName".into(), json!(class_name));
    }
    spec.insert("priority".into(), json!(priority));
    if let Some(policy) = policy {
        spec.insert("preemptionPolicy".into(), json!(policy));
    }
    Ok(())
}

/// On update, a pod that leaves out its priority or preemption policy keeps the stored ones
/// (validation then refuses any other change to them).
pub fn keep_priority(old: &Value, pod: &mut Value) {
    for field in ["priority", "preemptionPolicy"] {
        let Some(stored) = old.pointer(&format!("/spec/{field}")) else { continue };
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut)
            && spec.get(field).is_none_or(Value::is_null)
        {
            spec.insert(field.to_string(), stored.clone());
        }
    }
}

/// [`admit_priority`] with the classes in `store`.
pub fn admit_priority_from(store: &Store, pod: &mut Value) -> Result<(), PriorityError> {
    let collection = CollectionKey {
        group: "scheduling.k8s.io".into(),
        resource: "priorityclasses".into(),
        namespace: None,
    };
    let (classes, _) = store.list(&collection);
    let classes: Vec<Value> = classes.iter().map(|c| (**c).clone()).collect();
    let lookup = |name: &str| {
        store
            .get(&ObjectKey {
                group: collection.group.clone(),
                resource: collection.resource.clone(),
                namespace: None,
                name: name.to_string(),
            })
            .map(|class| (*class).clone())
    };
    admit_priority(pod, lookup, &classes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, value: i64, global: bool, policy: Option<&str>) -> Value {
        let mut class = json!({"metadata": {"name": name}, "value": value, "globalDefault": global});
        if let Some(policy) = policy {
            class["preemptionPolicy"] = json!(policy);
        }
        class
    }

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": spec})
    }

    fn admit(mut pod: Value, classes: &[Value]) -> Result<Value, PriorityError> {
        let lookup = |name: &str| classes.iter().find(|c| c["metadata"]["name"] == name).cloned();
        admit_priority(&mut pod, lookup, classes).map(|()| pod["spec"].clone())
    }

    #[test]
    fn priorities_come_from_the_class_the_default_class_or_zero() {
        let high = class("high", 1000, false, Some("Never"));
        let default = class("standard", 10, true, Some("PreemptLowerPriority"));
        let lower_default = class("batch", 5, true, None);
        type Case = (&'static str, Value, Vec<Value>, Result<Value, PriorityError>);
        let cases: Vec<Case> = vec![
            (
                "no classes",
                json!({}),
                vec![],
                Ok(json!({"priority": 0, "preemptionPolicy": "PreemptLowerPriority"})),
            ),
            (
                "named class",
                json!({"priorityClassName": "high"}),
                vec![high.clone()],
                Ok(json!({"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "Never"})),
            ),
            (
                "global default",
                json!({}),
                vec![high.clone(), default.clone()],
                Ok(
                    json!({"priorityClassName": "standard", "priority": 10, "preemptionPolicy": "PreemptLowerPriority"}),
                ),
            ),
            (
                "the lowest of two defaults, without a policy",
                json!({}),
                vec![default.clone(), lower_default],
                Ok(json!({"priorityClassName": "batch", "priority": 5})),
            ),
            (
                "missing class",
                json!({"priorityClassName": "gone"}),
                vec![],
                Err(PriorityError::NoClass("gone".into())),
            ),
            (
                "own priority",
                json!({"priority": 7}),
                vec![],
                Err(PriorityError::Priority { given: 7, computed: 0 }),
            ),
            (
                "same priority",
                json!({"priority": 0}),
                vec![],
                Ok(json!({"priority": 0, "preemptionPolicy": "PreemptLowerPriority"})),
            ),
            (
                "own policy",
                json!({"priorityClassName": "high", "preemptionPolicy": "PreemptLowerPriority"}),
                vec![high],
                Err(PriorityError::PreemptionPolicy {
                    given: "PreemptLowerPriority".into(),
                    computed: "Never".into(),
                }),
            ),
        ];
        for (case, spec, classes, expected) in cases {
            assert_eq!(admit(pod(spec), &classes), expected, "{case}");
        }
    }

    #[test]
    fn pods_run_as_their_account_with_its_token_mounted() {
        let account = json!({"metadata": {"name": "default"}, "imagePullSecrets": [{"name": "registry"}]});
        let mut pod = pod(json!({
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "a", "volumeMounts": [{"name": "x", "mountPath": "/x"}]}, {"name": "b"}],
        }));
        admit_service_account(&mut pod, "ns", Some(&account), "abcde").unwrap();
        let spec = &pod["spec"];
        assert_eq!(
            (&spec["serviceAccountName"], &spec["serviceAccount"]),
            (&json!("default"), &json!("default"))
        );
        let mount = json!({"name": "kube-api-access-abcde", "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
        assert_eq!(spec["containers"][0]["volumeMounts"], json!([{"name": "x", "mountPath": "/x"}, mount]));
        assert_eq!(spec["containers"][1]["volumeMounts"], json!([mount]));
        assert_eq!(spec["initContainers"][0]["volumeMounts"], json!([mount]));
        assert_eq!(spec["volumes"][0]["name"], "kube-api-access-abcde");
        assert_eq!(
            spec["volumes"][0]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
            3607
        );
        assert_eq!(spec["imagePullSecrets"], json!([{"name": "registry"}]));
    }

    #[test]
    fn opting_out_missing_accounts_and_mirror_pods() {
        let account = json!({"metadata": {"name": "builder"}, "automountServiceAccountToken": false});
        let mut opted_out = pod(json!({"serviceAccountName": "builder", "containers": [{"name": "a"}]}));
        admit_service_account(&mut opted_out, "ns", Some(&account), "abcde").unwrap();
        assert!(opted_out["spec"].get("volumes").is_none(), "the account opts out");
        let mut pod_wins = pod(
            json!({"serviceAccountName": "builder", "automountServiceAccountToken": true, "containers": [{"name": "a"}]}),
        );
        admit_service_account(&mut pod_wins, "ns", Some(&account), "abcde").unwrap();
        assert_eq!(pod_wins["spec"]["volumes"][0]["name"], "kube-api-access-abcde", "the pod's choice wins");
        let mut missing = pod(json!({"serviceAccountName": "gone", "containers": []}));
        let error = admit_service_account(&mut missing, "ns", None, "abcde").unwrap_err();
        assert_eq!(
            error.to_string(),
            "error looking up service account ns/gone: serviceaccount \"gone\" not found"
        );
        let mut mirror = json!({"metadata": {"annotations": {"kubernetes.io/config.mirror": "x"}}, "spec": {"containers": []}});
        admit_service_account(&mut mirror, "ns", None, "abcde").unwrap();
        assert!(mirror["spec"].get("serviceAccountName").is_none());
    }

    #[test]
    fn updates_keep_the_stored_priority() {
        let old = pod(json!({"priority": 1000, "preemptionPolicy": "Never"}));
        let mut new = pod(json!({"containers": []}));
        keep_priority(&old, &mut new);
        assert_eq!(new["spec"], json!({"containers": [], "priority": 1000, "preemptionPolicy": "Never"}));
    }
}
