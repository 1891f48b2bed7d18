//! What kube-apiserver's per-kind strategies do for built-in kinds: type checking against the
//! Kubernetes types, defaults, status handling on create, and the validation rules our clients
//! rely on (names, pod specs, immutable pod fields, selector/template agreement).

use k8s_openapi::api::core::v1::{Pod, PodSpec};
use kruise_machinery::{
    field::{ErrorList, ErrorType, FieldError, FieldPath},
    validation::{
        meta::{validate_label_selector, validate_object_meta},
        pod::validate_pod_spec,
    },
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::objects;
use crate::{
    registry::ResourceDef,
    semantics::{autoscaling, defaults, networking},
};

/// The result of decoding a built-in object into its Kubernetes type.
pub struct Decoded {
    /// The object as the type serializes it (unknown fields dropped), when it decoded.
    pub object: Option<Value>,
    /// The type error, if the object does not have the shape of its type.
    pub errors: ErrorList,
    /// Fields the type does not declare, as `.spec.foo[0].bar`.
    pub unknown: Vec<String>,
}

/// Decodes a built-in object into its Kubernetes type: unknown fields are dropped (and
/// reported, for `fieldValidation`), a wrong shape is an error. Kinds without a Rust type are
/// passed through unchanged.
pub fn type_check(def: &ResourceDef, object: &Value) -> Decoded {
    let mut decoded = type_check_as(def, object);
    if (def.group.as_str(), def.kind.as_str()) == ("networking.k8s.io", "Ingress")
        && let Some(decoded) = decoded.object.as_mut()
    {
        keep_absent_path_types(object, decoded);
    }
    decoded
}

/// [`type_check`] through the kind's Rust type.
fn type_check_as(def: &ResourceDef, object: &Value) -> Decoded {
    macro_rules! check {
        ($($group:literal / $kind:literal => $ty:ty),+ $(,)?) => {
            match (def.group.as_str(), def.kind.as_str()) {
                $( ($group, $kind) => decode::<$ty>(object), )+
                _ => Decoded { object: Some(object.clone()), errors: Vec::new(), unknown: Vec::new() },
            }
        };
    }
    use k8s_openapi::api::{
        admissionregistration::v1 as admission, apps::v1 as apps, autoscaling::v2 as autoscaling,
        batch::v1 as batch, coordination::v1 as coordination, core::v1 as core, events::v1 as events,
        networking::v1 as networking, policy::v1 as policy, rbac::v1 as rbac, scheduling::v1 as scheduling,
        storage::v1 as storage,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
    check! {
        "" / "Namespace" => core::Namespace,
        "" / "Node" => core::Node,
        "" / "Pod" => core::Pod,
        "" / "ConfigMap" => core::ConfigMap,
        "" / "Secret" => core::Secret,
        "" / "Service" => core::Service,
        "" / "Endpoints" => core::Endpoints,
        "" / "ServiceAccount" => core::ServiceAccount,
        "" / "PersistentVolumeClaim" => core::PersistentVolumeClaim,
        "" / "PersistentVolume" => core::PersistentVolume,
        "" / "Event" => core::Event,
        "" / "PodTemplate" => core::PodTemplate,
        "" / "ResourceQuota" => core::ResourceQuota,
        "" / "LimitRange" => core::LimitRange,
        "apps" / "ControllerRevision" => apps::ControllerRevision,
        "apps" / "Deployment" => apps::Deployment,
        "apps" / "ReplicaSet" => apps::ReplicaSet,
        "apps" / "StatefulSet" => apps::StatefulSet,
        "apps" / "DaemonSet" => apps::DaemonSet,
        "batch" / "Job" => batch::Job,
        "batch" / "CronJob" => batch::CronJob,
        "coordination.k8s.io" / "Lease" => coordination::Lease,
        "autoscaling" / "HorizontalPodAutoscaler" => autoscaling::HorizontalPodAutoscaler,
        "networking.k8s.io" / "Ingress" => networking::Ingress,
        "networking.k8s.io" / "IngressClass" => networking::IngressClass,
        "policy" / "PodDisruptionBudget" => policy::PodDisruptionBudget,
        "events.k8s.io" / "Event" => events::Event,
        "scheduling.k8s.io" / "PriorityClass" => scheduling::PriorityClass,
        "storage.k8s.io" / "StorageClass" => storage::StorageClass,
        "rbac.authorization.k8s.io" / "ClusterRole" => rbac::ClusterRole,
        "rbac.authorization.k8s.io" / "ClusterRoleBinding" => rbac::ClusterRoleBinding,
        "rbac.authorization.k8s.io" / "Role" => rbac::Role,
        "rbac.authorization.k8s.io" / "RoleBinding" => rbac::RoleBinding,
        "admissionregistration.k8s.io" / "MutatingWebhookConfiguration" => admission::MutatingWebhookConfiguration,
        "admissionregistration.k8s.io" / "ValidatingWebhookConfiguration" => admission::ValidatingWebhookConfiguration,
        "apiextensions.k8s.io" / "CustomResourceDefinition" => apiextensions::CustomResourceDefinition,
    }
}

/// The typed round trip writes `pathType: ""` for an Ingress path that has none (the Rust type
/// requires it, the Go type does not): leave it absent, so that validation reports it as
/// required, as kube-apiserver does.
fn keep_absent_path_types(original: &Value, decoded: &mut Value) {
    let rules = original.pointer("/spec/rules").and_then(Value::as_array).cloned().unwrap_or_default();
    for (rule_index, rule) in rules.iter().enumerate() {
        let paths = rule.pointer("/http/paths").and_then(Value::as_array).cloned().unwrap_or_default();
        for (path_index, path) in paths.iter().enumerate() {
            if path.get("pathType").is_none_or(Value::is_null)
                && let Some(typed) = decoded
                    .pointer_mut(&format!("/spec/rules/{rule_index}/http/paths/{path_index}"))
                    .and_then(Value::as_object_mut)
            {
                typed.remove("pathType");
            }
        }
    }
}

fn decode<T: DeserializeOwned + serde::Serialize>(object: &Value) -> Decoded {
    let mut unknown = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| {
        let text = render_path(&path);
        if !matches!(text.as_str(), ".apiVersion" | ".kind") {
            unknown.push(text);
        }
    };
    let result: Result<T, _> = serde_ignored::deserialize(object, &mut record);
    match result {
        Ok(typed) => {
            let mut value = serde_json::to_value(&typed).unwrap_or_else(|_| object.clone());
            // Typed serialization leaves out apiVersion/kind; keep the caller's.
            for field in ["apiVersion", "kind"] {
                if let Some(v) = object.get(field) {
                    value[field] = v.clone();
                }
            }
            Decoded { object: Some(value), errors: Vec::new(), unknown }
        }
        Err(error) => Decoded {
            object: None,
            errors: vec![FieldError {
                kind: ErrorType::TypeInvalid,
                path: FieldPath::default(),
                value: None,
                detail: error.to_string(),
            }],
            unknown,
        },
    }
}

/// `.spec.containers[0].foo`, as kube-apiserver names unknown fields.
fn render_path(path: &serde_ignored::Path<'_>) -> String {
    match path {
        serde_ignored::Path::Root => String::new(),
        serde_ignored::Path::Seq { parent, index } => format!("{}[{index}]", render_path(parent)),
        serde_ignored::Path::Map { parent, key } => format!("{}.{key}", render_path(parent)),
        serde_ignored::Path::Some { parent }
        | serde_ignored::Path::NewtypeStruct { parent }
        | serde_ignored::Path::NewtypeVariant { parent } => render_path(parent),
    }
}

/// Whether kube-apiserver keeps `metadata.generation` for objects of `def` (their strategies set
/// it to 1 on create and move it with the spec); custom resources always have one. Other kinds
/// (ConfigMaps, Services, ServiceAccounts, Nodes, ...) have none.
pub fn tracks_generation(def: &ResourceDef) -> bool {
    def.is_custom()
        || matches!(
            (def.group.as_str(), def.kind.as_str()),
            ("", "Pod" | "PodTemplate" | "ReplicationController")
                | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
                | ("batch", "Job" | "CronJob")
                | ("networking.k8s.io", "Ingress" | "IngressClass" | "NetworkPolicy")
                | ("policy", "PodDisruptionBudget")
                | ("scheduling.k8s.io", "PriorityClass")
                | ("admissionregistration.k8s.io", _)
                | ("apiextensions.k8s.io", "CustomResourceDefinition")
        )
}

/// Defaults and status set when a built-in object is created (kube-apiserver strategies'
/// `PrepareForCreate` plus the declarative defaults).
pub fn prepare_create(def: &ResourceDef, object: &mut Value) {
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "Pod") => {
            default_pod(object);
            add_default_tolerations(object);
            object["status"] = json!({"phase": "Pending", "qosClass": qos_class(object)});
        }
        ("", "Node") => add_not_ready_taint(object),
        ("", "Namespace") => {
            default_namespace(object);
            object["status"] = json!({"phase": "Active"});
        }
        ("", "Secret") => {
            if object.get("type").is_none_or(Value::is_null) {
                object["type"] = json!("Opaque");
            }
            merge_string_data(object);
        }
        ("", "PersistentVolume") => {
            default_volume(object);
            object["status"] = json!({"phase": "Pending"});
        }
        ("scheduling.k8s.io", "PriorityClass") => default_priority_class(object),
        ("storage.k8s.io", "StorageClass") => default_storage_class(object),
        ("", "Service") => default_service(object),
        ("", "PersistentVolumeClaim") => {
            if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
                spec.entry("volumeMode").or_insert(json!("Filesystem"));
            }
            object["status"] = json!({"phase": "Pending"});
        }
        ("batch", "Job") => {
            default_workload(def, object);
            generate_job_selector(object);
            object.as_object_mut().map(|o| o.remove("status"));
        }
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("batch", "CronJob") => {
            default_workload(def, object);
            object.as_object_mut().map(|o| o.remove("status"));
        }
        ("", "PodTemplate") => default_workload(def, object),
        ("admissionregistration.k8s.io", _) => default_webhooks(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            default_crd(object);
            object.as_object_mut().map(|o| o.remove("status"));
        }
        ("policy", "PodDisruptionBudget") => {
            object.as_object_mut().map(|o| o.remove("status"));
        }
        // The strategies reset status on create; Go then writes the (non-pointer) empty parts.
        ("networking.k8s.io", "Ingress") => object["status"] = json!({"loadBalancer": {}}),
        ("autoscaling", "HorizontalPodAutoscaler") => {
            default_hpa(object);
            object["status"] = json!({"desiredReplicas": 0});
        }
        ("networking.k8s.io", "IngressClass") => default_ingress_class(object),
        _ => {}
    }
}

/// Defaults applied on every write (creates and updates), as the declarative defaults are.
pub fn prepare_write(def: &ResourceDef, object: &mut Value) {
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "Pod") => default_pod(object),
        ("", "Namespace") => default_namespace(object),
        ("", "Secret") => merge_string_data(object),
        ("", "PersistentVolume") => default_volume(object),
        ("scheduling.k8s.io", "PriorityClass") => default_priority_class(object),
        ("storage.k8s.io", "StorageClass") => default_storage_class(object),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job" | "CronJob")
        | ("", "PodTemplate") => default_workload(def, object),
        ("admissionregistration.k8s.io", _) => default_webhooks(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => default_crd(object),
        ("autoscaling", "HorizontalPodAutoscaler") => default_hpa(object),
        ("networking.k8s.io", "IngressClass") => default_ingress_class(object),
        _ => {}
    }
}

fn default_hpa(object: &mut Value) {
    with_typed_object::<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler>(
        object,
        autoscaling::default_hpa,
    );
}

fn default_ingress_class(object: &mut Value) {
    with_typed_object::<k8s_openapi::api::networking::v1::IngressClass>(
        object,
        networking::default_ingress_class,
    );
}

/// Taint key of a node whose Ready condition is not True.
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Taint key of a node that stopped reporting.
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// kube-apiserver's DefaultTolerationSeconds plugin: pods tolerate a not-ready or unreachable
/// node for 300 seconds unless they say otherwise.
fn add_default_tolerations(object: &mut Value) {
    let tolerations: Vec<Value> =
        object.pointer("/spec/tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
    let tolerates = |key: &str| {
        tolerations.iter().any(|t| {
            let t_key = t.get("key").and_then(Value::as_str).unwrap_or_default();
            let effect = t.get("effect").and_then(Value::as_str).unwrap_or_default();
            (t_key == key || t_key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        })
    };
    let mut added = tolerations.clone();
    for key in [TAINT_NOT_READY, TAINT_UNREACHABLE] {
        if !tolerates(key) {
            added.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}),
            );
        }
    }
    if added.len() != tolerations.len()
        && let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
    {
        spec.insert("tolerations".into(), json!(added));
    }
}

/// kube-apiserver's TaintNodesByCondition plugin: a new node is not schedulable until the node
/// lifecycle controller sees it Ready.
fn add_not_ready_taint(object: &mut Value) {
    if !object.get("spec").is_some_and(Value::is_object) {
        object["spec"] = json!({});
    }
    let taints = object["spec"].as_object_mut().map(|spec| spec.entry("taints").or_insert_with(|| json!([])));
    if let Some(taints) = taints.and_then(Value::as_array_mut)
        && !taints.iter().any(|t| t["key"] == TAINT_NOT_READY && t["effect"] == "NoSchedule")
    {
        taints.push(json!({"key": TAINT_NOT_READY, "effect": "NoSchedule"}));
    }
}

/// The defaults kube-apiserver gives a pod on every write (see [`defaults::pod`]).
fn default_pod(object: &mut Value) {
    with_typed::<PodSpec>(object, "spec", defaults::pod);
}

/// Decodes `object[field]` as `T`, applies `change` and writes it back; leaves the object alone
/// when the field does not decode (the type check reports that).
fn with_typed<T: DeserializeOwned + serde::Serialize + Default>(
    object: &mut Value,
    field: &str,
    change: impl FnOnce(&mut T),
) {
    let current = object.get(field).cloned().unwrap_or(json!({}));
    let Ok(mut typed) = serde_json::from_value::<T>(current) else { return };
    change(&mut typed);
    if let Ok(value) = serde_json::to_value(&typed) {
        object[field] = value;
    }
}

/// Decodes a whole object as `T`, applies `change` and writes it back (apiVersion and kind kept).
fn with_typed_object<T: DeserializeOwned + serde::Serialize>(
    object: &mut Value,
    change: impl FnOnce(&mut T),
) {
    let Ok(mut typed) = serde_json::from_value::<T>(object.clone()) else { return };
    change(&mut typed);
    if let Ok(mut value) = serde_json::to_value(&typed) {
        for field in ["apiVersion", "kind"] {
            if let Some(v) = object.get(field) {
                value[field] = v.clone();
            }
        }
        *object = value;
    }
}

/// The QoS class of a pod from its containers' resources.
pub fn qos_class(object: &Value) -> &'static str {
    let Ok(pod) = serde_json::from_value::<Pod>(object.clone()) else { return "BestEffort" };
    let spec = pod.spec.unwrap_or_default();
    let containers: Vec<_> = spec.containers.iter().chain(spec.init_containers.iter().flatten()).collect();
    let mut any = false;
    let mut guaranteed = true;
    for container in &containers {
        let resources = container.resources.clone().unwrap_or_default();
        let requests = resources.requests.unwrap_or_default();
        let limits = resources.limits.unwrap_or_default();
        if !requests.is_empty() || !limits.is_empty() {
            any = true;
        }
        for name in ["cpu", "memory"] {
            match (requests.get(name), limits.get(name)) {
                (Some(request), Some(limit)) if request.0 == limit.0 => {}
                (None, Some(_)) => {}
                _ => guaranteed = false,
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

fn default_namespace(object: &mut Value) {
    if let Some(name) = objects::name(object).map(str::to_string) {
        let metadata = objects::metadata_mut(object);
        let labels = metadata.entry("labels").or_insert_with(|| json!({}));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert("kubernetes.io/metadata.name".into(), json!(name));
        }
    }
    let spec = object.as_object_mut().map(|o| o.entry("spec").or_insert_with(|| json!({})));
    if let Some(spec) = spec.and_then(Value::as_object_mut) {
        spec.entry("finalizers").or_insert_with(|| json!(["kubernetes"]));
    }
}

/// `stringData` is write-only: its entries are stored (base64-encoded) in `data`, replacing
/// entries of the same key, as kube-apiserver's conversion of Secrets does.
fn merge_string_data(object: &mut Value) {
    use base64::Engine;
    let Some(string_data) = object.as_object_mut().and_then(|o| o.remove("stringData")) else { return };
    let Some(entries) = string_data.as_object().filter(|entries| !entries.is_empty()) else { return };
    if !object.get("data").is_some_and(Value::is_object) {
        object["data"] = json!({});
    }
    if let Some(data) = object.get_mut("data").and_then(Value::as_object_mut) {
        for (key, value) in entries {
            let text = value.as_str().unwrap_or_default();
            data.insert(key.clone(), json!(base64::engine::general_purpose::STANDARD.encode(text)));
        }
    }
}

/// PersistentVolume defaults: `Retain` reclaim policy, `Filesystem` volume mode.
fn default_volume(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else { return };
    spec.entry("persistentVolumeReclaimPolicy").or_insert(json!("Retain"));
    spec.entry("volumeMode").or_insert(json!("Filesystem"));
}

/// PriorityClass default: pods of the class preempt lower-priority pods.
fn default_priority_class(object: &mut Value) {
    if let Some(class) = object.as_object_mut() {
        class.entry("preemptionPolicy").or_insert(json!("PreemptLowerPriority"));
    }
}

/// StorageClass defaults: volumes are deleted when released and bound at once.
fn default_storage_class(object: &mut Value) {
    if let Some(class) = object.as_object_mut() {
        class.entry("reclaimPolicy").or_insert(json!("Delete"));
        class.entry("volumeBindingMode").or_insert(json!("Immediate"));
    }
}

fn default_service(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else { return };
    spec.entry("type").or_insert(json!("ClusterIP"));
    spec.entry("sessionAffinity").or_insert(json!("None"));
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.entry("protocol").or_insert(json!("TCP"));
            if let Some(number) = port.get("port").cloned() {
                port.entry("targetPort").or_insert(number);
            }
        }
    }
}

/// The selector and pod labels kube-apiserver's Job strategy generates on create (unless
/// `manualSelector`).
fn generate_job_selector(object: &mut Value) {
    let uid = objects::uid(object).unwrap_or_default().to_string();
    let name = objects::name(object).unwrap_or_default().to_string();
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else { return };
    let manual = spec.get("manualSelector").and_then(Value::as_bool).unwrap_or(false);
    if manual || uid.is_empty() {
        return;
    }
    let generated = json!({
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": uid,
        "job-name": name,
    });
    spec.insert("selector".into(), json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}));
    let template = spec.entry("template").or_insert_with(|| json!({}));
    let labels = objects::metadata_mut(template).entry("labels").or_insert_with(|| json!({}));
    if let (Some(labels), Some(generated)) = (labels.as_object_mut(), generated.as_object()) {
        for (key, value) in generated {
            labels.insert(key.clone(), value.clone());
        }
    }
}

/// The declarative defaults of a workload and of its pod template (see [`defaults`]).
fn default_workload(def: &ResourceDef, object: &mut Value) {
    use k8s_openapi::api::{apps::v1 as apps, batch::v1 as batch, core::v1 as core};
    match def.kind.as_str() {
        "Deployment" => with_typed_object::<apps::Deployment>(object, defaults::deployment),
        "ReplicaSet" => with_typed_object::<apps::ReplicaSet>(object, defaults::replica_set),
        "StatefulSet" => with_typed_object::<apps::StatefulSet>(object, defaults::stateful_set),
        "DaemonSet" => with_typed_object::<apps::DaemonSet>(object, defaults::daemon_set),
        "Job" => with_typed_object::<batch::Job>(object, defaults::job),
        "CronJob" => with_typed_object::<batch::CronJob>(object, defaults::cron_job),
        "PodTemplate" => with_typed_object::<core::PodTemplate>(object, |template| {
            defaults::pod_template(template.template.get_or_insert_with(Default::default))
        }),
        _ => {}
    }
}

fn default_webhooks(object: &mut Value) {
    let Some(webhooks) = object.get_mut("webhooks").and_then(Value::as_array_mut) else { return };
    for webhook in webhooks.iter_mut().filter_map(Value::as_object_mut) {
        webhook.entry("failurePolicy").or_insert(json!("Fail"));
        webhook.entry("matchPolicy").or_insert(json!("Equivalent"));
        webhook.entry("timeoutSeconds").or_insert(json!(10));
        webhook.entry("namespaceSelector").or_insert(json!({}));
        webhook.entry("objectSelector").or_insert(json!({}));
        if webhook.contains_key("reinvocationPolicy") || webhook.get("sideEffects").is_some() {
            // Validating webhooks have no reinvocationPolicy; mutating ones default it below.
        }
        if let Some(rules) = webhook.get_mut("rules").and_then(Value::as_array_mut) {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                rule.entry("scope").or_insert(json!("*"));
            }
        }
    }
    if objects::meta_str(object, "name").is_some()
        && object.get("kind").and_then(Value::as_str) == Some("MutatingWebhookConfiguration")
        && let Some(webhooks) = object.get_mut("webhooks").and_then(Value::as_array_mut)
    {
        for webhook in webhooks.iter_mut().filter_map(Value::as_object_mut) {
            webhook.entry("reinvocationPolicy").or_insert(json!("Never"));
        }
    }
}

fn default_crd(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else { return };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        names.entry("singular").or_insert_with(|| json!(kind.to_lowercase()));
        names.entry("listKind").or_insert_with(|| json!(format!("{kind}List")));
    }
    spec.entry("conversion").or_insert_with(|| json!({"strategy": "None"}));
}

/// Validation of a built-in object on create (`old` None) or update.
pub fn validate(
    def: &ResourceDef,
    object: &Value,
    old: Option<&Value>,
    subresource: Option<&str>,
) -> ErrorList {
    let meta =
        serde_json::from_value(object.get("metadata").cloned().unwrap_or(json!({}))).unwrap_or_default();
    let mut errors = validate_object_meta(&meta, def.namespaced);
    if def.kind == "Namespace" || def.kind == "Node" {
        errors.retain(|e| e.path.as_str() != "metadata.namespace");
    }
    if (def.group.as_str(), def.kind.as_str()) == ("", "Event") {
        // Core Events only need names usable as a path segment.
        errors.retain(|e| e.path.as_str() != "metadata.name" || !valid_path_segment(objects::name(object)));
    }
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "Pod") => {
            match serde_json::from_value::<PodSpec>(object.get("spec").cloned().unwrap_or(json!({}))) {
                Ok(spec) => {
                    errors.extend(validate_pod_spec(&spec, &FieldPath::root("spec"), &[]));
                    errors.extend(host_network_ports(&spec, &FieldPath::root("spec"), true));
                }
                Err(error) => {
                    errors.push(FieldError::invalid(&FieldPath::root("spec"), "", error.to_string()))
                }
            }
            let spec = object.get("spec").cloned().unwrap_or(json!({}));
            errors.extend(super::ephemeral::validate_spec(&spec));
            match (old, subresource) {
                (None, _) => errors.extend(super::ephemeral::validate_create(&spec)),
                // pods/resize may change container resources, pods/ephemeralcontainers may
                // add ephemeral containers; other writes keep pods immutable.
                (Some(_), Some("resize")) => {}
                (Some(old), Some(super::ephemeral::SUBRESOURCE)) => {
                    errors.extend(super::ephemeral::validate_update(old, object));
                }
                (Some(old), _) => errors.extend(validate_pod_update(old, object)),
            }
        }
        ("", "PersistentVolumeClaim") if subresource != Some("status") => {
            if let Some(old) = old {
                errors.extend(super::claim_admission::validate_update(old, object));
            }
        }
        ("" | "events.k8s.io", "Event") => {
            errors.extend(super::events::validate(&def.group, object, old));
        }
        ("networking.k8s.io", "Ingress") if subresource != Some("status") => {
            let class = objects::labels_of(object, "annotations").remove("kubernetes.io/ingress.class");
            errors.extend(networking::validate_ingress(object.get("spec"), class.as_deref(), old.is_none()));
        }
        ("networking.k8s.io", "IngressClass") => {
            let spec = |object: &Value| -> Option<k8s_openapi::api::networking::v1::IngressClassSpec> {
                serde_json::from_value(object.get("spec")?.clone()).ok()
            };
            let old_spec = old.and_then(spec);
            errors.extend(networking::validate_ingress_class(spec(object).as_ref(), old_spec.as_ref()));
        }
        ("autoscaling", "HorizontalPodAutoscaler") if subresource != Some("status") => {
            let spec =
                |object: &Value| -> Option<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerSpec> {
                    serde_json::from_value(object.get("spec")?.clone()).ok()
                };
            let old_spec = old.and_then(spec);
            errors.extend(autoscaling::validate_hpa(spec(object).as_ref(), old_spec.as_ref()));
        }
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("batch", "Job") => {
            errors.extend(validate_workload_selector(object));
            let template = FieldPath::root("spec").child("template").child("spec");
            if let Some(spec) =
                object.pointer("/spec/template/spec").and_then(|s| serde_json::from_value(s.clone()).ok())
            {
                errors.extend(host_network_ports(&spec, &template, false));
            }
            if let Some(old) = old {
                let selector_path = FieldPath::root("spec").child("selector");
                if old.pointer("/spec/selector") != object.pointer("/spec/selector") && def.kind != "Job" {
                    errors.push(FieldError::invalid(&selector_path, "", "field is immutable"));
                }
            }
        }
        _ => {}
    }
    errors
}

/// A name that may appear as one URL path segment (what kube-apiserver asks of kinds without a
/// stricter rule); an absent name is not one (it is reported as required).
fn valid_path_segment(name: Option<&str>) -> bool {
    name.is_some_and(|name| {
        !name.is_empty() && name != "." && name != ".." && !name.contains('/') && !name.contains('%')
    })
}

/// The ports of a host-network pod are host ports: each `hostPort` must equal its
/// `containerPort` (in a template, 0 too is allowed: the pod's defaults fill it in).
fn host_network_ports(spec: &PodSpec, path: &FieldPath, is_pod: bool) -> ErrorList {
    if spec.host_network != Some(true) {
        return Vec::new();
    }
    let mut errors = Vec::new();
    for (index, container) in spec.containers.iter().enumerate() {
        for (port_index, port) in container.ports.iter().flatten().enumerate() {
            let host = port.host_port.unwrap_or(0);
            if (is_pod || host != 0) && host != port.container_port {
                errors.push(FieldError::invalid(
                    &path.child("containers").index(index).child("ports").index(port_index).child("hostPort"),
                    host,
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
    errors
}

fn validate_workload_selector(object: &Value) -> ErrorList {
    let path = FieldPath::root("spec").child("selector");
    let Some(selector) = object.pointer("/spec/selector") else {
        return vec![FieldError::required(&path, "")];
    };
    let Ok(selector) = serde_json::from_value(selector.clone()) else {
        return vec![FieldError::invalid(&path, "", "not a label selector")];
    };
    let mut errors = validate_label_selector(&selector, &path);
    if kruise_machinery::selector::is_empty(&selector) {
        errors.push(FieldError::invalid(&path, "{}", "empty selector is invalid for deployment"));
    } else {
        let labels = objects::labels(object.pointer("/spec/template").unwrap_or(&Value::Null));
        if !kruise_machinery::selector::matches(&selector, &labels) {
            errors.push(FieldError::invalid(
                &FieldPath::root("spec").child("template").child("metadata").child("labels"),
                format!("{labels:?}"),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errors
}

/// Pods are mostly immutable: beyond metadata, only container and init container images,
/// `activeDeadlineSeconds`, added tolerations and `terminationGracePeriodSeconds` may change
/// (resources change through `pods/resize`).
fn validate_pod_update(old: &Value, new: &Value) -> ErrorList {
    let mut old_spec = old.get("spec").cloned().unwrap_or(json!({}));
    let mut new_spec = new.get("spec").cloned().unwrap_or(json!({}));
    for spec in [&mut old_spec, &mut new_spec] {
        for list in ["containers", "initContainers"] {
            if let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) {
                for container in containers.iter_mut().filter_map(Value::as_object_mut) {
                    container.remove("image");
                }
            }
        }
        if let Some(spec) = spec.as_object_mut() {
            spec.remove("activeDeadlineSeconds");
            spec.remove("tolerations");
            spec.remove("terminationGracePeriodSeconds");
        }
    }
    // The scheduler's binding sets nodeName once.
    if old_spec.get("nodeName").is_none()
        && let Some(spec) = new_spec.as_object_mut()
    {
        spec.remove("nodeName");
    }
    if old_spec == new_spec {
        Vec::new()
    } else {
        vec![FieldError::forbidden(
            &FieldPath::root("spec"),
            "pod updates may not change fields other than `spec.containers[*].image`, \
             `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to \
             existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was \
             previously negative)",
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn def(group: &str, kind: &str) -> std::sync::Arc<ResourceDef> {
        Registry::with_builtins().find_kind(group, kind).unwrap()
    }

    #[test]
    fn pods_get_core_defaults_and_pending_status() {
        let mut pod =
            json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        prepare_create(&def("", "Pod"), &mut pod);
        assert_eq!(pod["status"]["phase"], "Pending");
        assert_eq!(pod["status"]["qosClass"], "BestEffort");
        assert_eq!(pod["spec"]["containers"][0]["imagePullPolicy"], "Always", "untagged image means latest");
        assert_eq!(pod["spec"]["restartPolicy"], "Always");
        assert_eq!(pod["spec"]["enableServiceLinks"], true);
    }

    #[test]
    fn unknown_fields_and_wrong_types_are_reported() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x", "imagePullPolcy": "A"}]}});
        let decoded = type_check(&def("", "Pod"), &pod);
        assert!(decoded.errors.is_empty());
        assert_eq!(decoded.unknown, [".spec.containers[0].imagePullPolcy"]);
        assert!(decoded.object.unwrap()["spec"]["containers"][0].get("imagePullPolcy").is_none(), "dropped");
        let bad = json!({"metadata": {"name": "p"}, "spec": {"containers": "nope"}});
        assert_eq!(type_check(&def("", "Pod"), &bad).errors.len(), 1);
    }

    #[test]
    fn pod_updates_may_change_images_only() {
        let old = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "a:1"}]}});
        let mut image = old.clone();
        image["spec"]["containers"][0]["image"] = json!("a:2");
        assert!(validate_pod_update(&old, &image).is_empty());
        let mut env = old.clone();
        env["spec"]["containers"][0]["env"] = json!([{"name": "X", "value": "1"}]);
        assert_eq!(validate_pod_update(&old, &env).len(), 1);
    }

    #[test]
    fn namespaces_get_their_name_label_and_finalizer() {
        let mut ns = json!({"metadata": {"name": "team-a"}});
        prepare_create(&def("", "Namespace"), &mut ns);
        assert_eq!(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "team-a");
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(ns["status"]["phase"], "Active");
    }

    #[test]
    fn secrets_store_string_data_in_data() {
        let mut secret = json!({"metadata": {"name": "s"}, "data": {"a": "eA==", "b": "eQ=="}, "stringData": {"b": "two", "c": "3"}});
        prepare_create(&def("", "Secret"), &mut secret);
        assert_eq!(secret["type"], "Opaque");
        assert_eq!(secret["data"], json!({"a": "eA==", "b": "dHdv", "c": "Mw=="}));
        assert!(secret.get("stringData").is_none());
    }

    #[test]
    fn volumes_and_classes_get_their_defaults() {
        let mut volume = json!({"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "1Gi"}}});
        prepare_create(&def("", "PersistentVolume"), &mut volume);
        assert_eq!(volume["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(volume["spec"]["volumeMode"], "Filesystem");
        assert_eq!(volume["status"]["phase"], "Pending");
        let mut class = json!({"metadata": {"name": "high"}, "value": 10});
        prepare_write(&def("scheduling.k8s.io", "PriorityClass"), &mut class);
        assert_eq!(class["preemptionPolicy"], "PreemptLowerPriority");
        let mut storage = json!({"metadata": {"name": "sc"}, "provisioner": "x"});
        prepare_create(&def("storage.k8s.io", "StorageClass"), &mut storage);
        assert_eq!(
            (storage["reclaimPolicy"].as_str(), storage["volumeBindingMode"].as_str()),
            (Some("Delete"), Some("Immediate"))
        );
    }

    #[test]
    fn qos_classes() {
        let pod = |resources: Value| json!({"spec": {"containers": [{"name": "c", "resources": resources}]}});
        assert_eq!(qos_class(&pod(json!({}))), "BestEffort");
        assert_eq!(qos_class(&pod(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))), "Guaranteed");
        assert_eq!(qos_class(&pod(json!({"requests": {"cpu": "1"}}))), "Burstable");
    }
}
