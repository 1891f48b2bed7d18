//! `policy.kruise.io/delete-protection` (upstream feature gate `ResourcesDeletionProtection`,
//! `pkg/webhook/util/deletionprotection` and the DELETE handlers of `pkg/webhook/{namespace,
//! customresourcedefinition,builtinworkloads,service,ingress}`): a label that makes the API
//! server refuse to delete the object it is on.
//!
//! - `Always`: every DELETE is refused.
//! - `Cascading`: the DELETE is refused while deleting the object would take live things with
//!   it: a workload with `spec.replicas > 0` (CloneSet, Advanced StatefulSet, Deployment,
//!   ReplicaSet, apps/v1 StatefulSet), a namespace with active pods or Bound claims, a CRD with
//!   custom resources not being deleted (only with gate `DeletionProtectionForCRDCascadingGate`;
//!   without it a `Cascading` CRD cannot be deleted at all). Services and Ingresses honour only
//!   `Always`.
//!
//! Any other value, no label, or an object already being deleted: allowed.
//!
//! The decision is [`protection`] then [`refusal`], pure over the object and the counts the
//! caller looked up ([`Dependents`]); [`prepare`] and [`answer`] wrap it for an admission
//! review of the built-in kinds and CRDs, and [`workload_refusal`] for the Kruise workloads'
//! own validating webhooks. The webhooks for the built-in kinds are registered with an
//! `objectSelector` on the label's existence, so only labelled objects are sent here.

use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::Value;

use super::admission::{allowed, errored, object_value};
use kruise_crds::common::well_known::DELETE_PROTECTION;

/// The prefix of every refusal, which clients (and upstream's e2e) look for.
pub const FORBIDDEN: &str = "forbidden by ResourcesProtectionDeletion";

/// A `policy.kruise.io/delete-protection` value that protects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// Never delete.
    Always,
    /// Do not delete while the object still has live dependents.
    Cascading,
}

impl Protection {
    fn label(self) -> &'static str {
        match self {
            Self::Always => "Always",
            Self::Cascading => "Cascading",
        }
    }
}

/// What a `Cascading` object's deletion would take with it, as the caller counted it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dependents {
    /// Services and Ingresses: `Cascading` protects nothing.
    NotProtected,
    /// Workloads: `spec.replicas` (absent: nothing is protected, as upstream's nil pointer).
    Replicas(Option<i64>),
    /// Namespaces: pods neither terminal nor terminating, and claims Bound and not terminating.
    Namespace {
        /// Active pods in the namespace.
        active_pods: usize,
        /// Bound PersistentVolumeClaims in the namespace.
        bound_claims: usize,
    },
    /// CRDs: custom resources not being deleted.
    CustomResources(usize),
    /// CRDs while gate `DeletionProtectionForCRDCascadingGate` is off: the custom resources
    /// are not counted, so the deletion is refused.
    CrdCascadingGateOff,
    /// The counting failed; the refusal message says why (upstream refuses then too).
    Unknown(String),
}

/// The protection `object` asks for: None without the label, with another value, or when the
/// object is already being deleted (a DELETE of a terminating object is never refused).
pub fn protection(object: &Value) -> Option<Protection> {
    if object.pointer("/metadata/deletionTimestamp").is_some_and(|value| !value.is_null()) {
        return None;
    }
    match object.pointer("/metadata/labels")?.get(DELETE_PROTECTION)?.as_str()? {
        "Always" => Some(Protection::Always),
        "Cascading" => Some(Protection::Cascading),
        _ => None,
    }
}

/// Why the deletion is refused, in upstream's words, or None when it is allowed.
pub fn refusal(protection: Protection, dependents: &Dependents) -> Option<String> {
    let prefix = format!("{FORBIDDEN} for {DELETE_PROTECTION}={}", protection.label());
    if protection == Protection::Always {
        return Some(prefix);
    }
    match dependents {
        Dependents::NotProtected | Dependents::Replicas(None) => None,
        Dependents::Replicas(Some(replicas)) => {
            (*replicas > 0).then(|| format!("{prefix} and replicas {replicas}>0"))
        }
        Dependents::Namespace { active_pods, bound_claims } => {
            if *active_pods > 0 {
                Some(format!("{prefix} and active pods {active_pods}>0"))
            } else if *bound_claims > 0 {
                Some(format!("{prefix} and \"Bound\" status pvc {bound_claims}>0"))
            } else {
                None
            }
        }
        Dependents::CustomResources(active) => {
            (*active > 0).then(|| format!("{prefix} and active CRs {active}>0"))
        }
        Dependents::CrdCascadingGateOff => {
            Some("feature-gate DeletionProtectionForCRDCascadingGate is not enabled".to_string())
        }
        Dependents::Unknown(message) => Some(message.clone()),
    }
}

/// The Kruise workloads' validating webhooks' knobs (CloneSet, Advanced StatefulSet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidationOptions {
    /// Enforce `policy.kruise.io/delete-protection` on DELETE (upstream feature gate
    /// `ResourcesDeletionProtection`).
    pub deletion_protection: bool,
}

impl Default for ValidationOptions {
    fn default() -> Self {
        Self { deletion_protection: true }
    }
}

/// Why deleting the workload `old` (CloneSet, Advanced StatefulSet, Deployment, ReplicaSet,
/// StatefulSet) is refused: `Always`, or `Cascading` while `spec.replicas > 0`.
pub fn workload_refusal(old: &Value) -> Option<String> {
    let replicas = old.pointer("/spec/replicas").and_then(Value::as_i64);
    refusal(protection(old)?, &Dependents::Replicas(replicas))
}

/// Whether a pod still counts against its namespace's deletion: not `Succeeded` or `Failed`
/// and not being deleted (Kubernetes' `IsPodActive`).
pub fn is_pod_active(pod: &Value) -> bool {
    let terminal =
        matches!(pod.pointer("/status/phase").and_then(Value::as_str), Some("Succeeded" | "Failed"));
    !terminal && !is_deleting(pod)
}

/// Whether a claim still counts against its namespace's deletion: `Bound` and not being deleted.
pub fn is_claim_bound(claim: &Value) -> bool {
    claim.pointer("/status/phase").and_then(Value::as_str) == Some("Bound") && !is_deleting(claim)
}

/// Whether the object has a deletionTimestamp.
pub fn is_deleting(object: &Value) -> bool {
    object.pointer("/metadata/deletionTimestamp").is_some_and(|value| !value.is_null())
}

/// The built-in kinds (and CRDs) that have a deletion-protection webhook of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// apps/v1 Deployment, ReplicaSet and StatefulSet (`vbuiltin*.kb.io`).
    Workload,
    /// core/v1 Namespace (`vnamespace.kb.io`).
    Namespace,
    /// apiextensions.k8s.io CustomResourceDefinition (`vcustomresourcedefinition.kb.io`).
    CustomResourceDefinition,
    /// core/v1 Service (`vservice.kb.io`).
    Service,
    /// networking.k8s.io Ingress (`vingress.kb.io`).
    Ingress,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Self::Workload => "workload",
            Self::Namespace => "Namespace",
            Self::CustomResourceDefinition => "CustomResourceDefinition",
            Self::Service => "Service",
            Self::Ingress => "Ingress",
        }
    }
}

/// The custom resources of a CRD, as its storage version serves them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomResources {
    /// API group.
    pub group: String,
    /// The storage version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// List kind (named in the message when the list fails, as upstream's).
    pub list_kind: String,
}

/// What the caller must count before [`answer`] can decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Nothing: the object itself says everything.
    Known(Dependents),
    /// The pods and claims of this namespace.
    NamespaceContents(String),
    /// These custom resources, in every namespace.
    CustomResources(CustomResources),
}

/// The first step of a review: an answer that needs no lookup, or the protection and what to
/// count for it.
#[derive(Debug)]
pub enum Prepared {
    /// Answer this.
    Answer(Box<AdmissionResponse>),
    /// The object is protected; count `lookup`, then call [`answer`].
    Protected {
        /// The protection asked for.
        protection: Protection,
        /// What to count.
        lookup: Lookup,
    },
}

/// Knobs of the built-in kinds' deletion webhooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeletionOptions {
    /// Enforce the label at all (upstream gate `ResourcesDeletionProtection`).
    pub enabled: bool,
    /// Count custom resources for `Cascading` CRDs (upstream gate
    /// `DeletionProtectionForCRDCascadingGate`).
    pub crd_cascading: bool,
}

impl Default for DeletionOptions {
    fn default() -> Self {
        Self { enabled: true, crd_cascading: false }
    }
}

/// Reads a review for `target`: anything but a DELETE of the object itself, a missing old
/// object, a kind or version the target does not handle, or an unprotected object is allowed at
/// once (upstream's handlers do the same); an undecodable old object is a 400.
pub fn prepare(
    request: &AdmissionRequest<DynamicObject>,
    target: Target,
    options: DeletionOptions,
) -> Prepared {
    let answer = |response: AdmissionResponse| Prepared::Answer(Box::new(response));
    if request.operation != Operation::Delete
        || request.sub_resource.as_deref().is_some_and(|s| !s.is_empty())
    {
        return answer(allowed(request));
    }
    let old = match object_value(request.old_object.as_ref()) {
        Ok(Some(old)) => old,
        Ok(None) => {
            tracing::info!(name = %request.name, kind = %request.kind.kind, "no old object on a DELETE; allowing it");
            return answer(allowed(request));
        }
        Err(error) => return answer(errored(request, 400, &error.to_string())),
    };
    if !options.enabled {
        return answer(allowed(request));
    }
    let Some(protection) = protection(&old) else { return answer(allowed(request)) };
    let lookup = match target {
        Target::Workload => match request.kind.kind.as_str() {
            "Deployment" | "ReplicaSet" | "StatefulSet" => {
                Lookup::Known(Dependents::Replicas(old.pointer("/spec/replicas").and_then(Value::as_i64)))
            }
            other => {
                tracing::info!(kind = other, name = %request.name, "no deletion protection for this kind");
                return answer(allowed(request));
            }
        },
        Target::Service => Lookup::Known(Dependents::NotProtected),
        Target::Ingress => match request.kind.version.as_str() {
            "v1" | "v1beta1" => Lookup::Known(Dependents::NotProtected),
            _ => return answer(allowed(request)),
        },
        Target::Namespace => Lookup::NamespaceContents(request.name.clone()),
        Target::CustomResourceDefinition => {
            if !matches!(request.kind.version.as_str(), "v1" | "v1beta1") {
                return answer(allowed(request));
            }
            match (protection, options.crd_cascading) {
                (Protection::Always, _) => Lookup::Known(Dependents::NotProtected),
                (Protection::Cascading, false) => Lookup::Known(Dependents::CrdCascadingGateOff),
                (Protection::Cascading, true) => match custom_resources(&old) {
                    Some(resources) => Lookup::CustomResources(resources),
                    // No storage version: nothing can be stored, so nothing is protected.
                    None => Lookup::Known(Dependents::CustomResources(0)),
                },
            }
        }
    };
    // `Always` needs no counting.
    let lookup =
        if protection == Protection::Always { Lookup::Known(Dependents::NotProtected) } else { lookup };
    Prepared::Protected { protection, lookup }
}

/// The custom resources a CRD serves, at its storage version.
pub fn custom_resources(crd: &Value) -> Option<CustomResources> {
    let spec = crd.get("spec")?;
    let text = |pointer: &str| spec.pointer(pointer).and_then(Value::as_str).map(str::to_string);
    let version = spec
        .get("versions")
        .and_then(Value::as_array)
        .and_then(|versions| {
            versions.iter().find(|version| version.get("storage").and_then(Value::as_bool) == Some(true))
        })
        .and_then(|version| version.get("name"))
        .and_then(Value::as_str)
        // apiextensions v1beta1 may name only `spec.version`.
        .map(str::to_string)
        .or_else(|| text("/version"))?;
    let kind = text("/names/kind")?;
    Some(CustomResources {
        group: text("/group")?,
        version,
        list_kind: text("/names/listKind").unwrap_or_else(|| format!("{kind}List")),
        kind,
        plural: text("/names/plural")?,
    })
}

/// The decision once the dependents are counted: 403 with upstream's message, or allowed.
pub fn answer(
    request: &AdmissionRequest<DynamicObject>,
    target: Target,
    protection: Protection,
    dependents: &Dependents,
) -> AdmissionResponse {
    match refusal(protection, dependents) {
        Some(message) => {
            tracing::info!(
                kind = target.name(),
                name = %request.name,
                namespace = ?request.namespace,
                user = ?request.user_info.username,
                %message,
                "refused a protected deletion"
            );
            errored(request, 403, &message)
        }
        None => allowed(request),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kube::core::admission::AdmissionRequest;
    use serde_json::json;

    use super::*;

    const ALWAYS: &str =
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always";
    const CASCADING: &str =
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading";

    fn labelled(label: Option<&str>, deleting: bool, spec: Value) -> Value {
        let mut object = json!({"metadata": {"name": "x", "namespace": "default"}, "spec": spec});
        if let Some(label) = label {
            object["metadata"]["labels"] = json!({DELETE_PROTECTION: label, "app": "x"});
        }
        if deleting {
            object["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        }
        object
    }

    /// INVENTORY (webhooks): `ValidateWorkloadDeletion` and its siblings, value by value.
    #[test]
    fn refusal_table() {
        use Dependents::*;
        let cascading = |rest: &str| Some(format!("{CASCADING} and {rest}"));
        let cases: Vec<(&str, Protection, Dependents, Option<String>)> = vec![
            (
                "always refuses whatever the counts",
                Protection::Always,
                Replicas(Some(0)),
                Some(ALWAYS.into()),
            ),
            ("always refuses a service", Protection::Always, NotProtected, Some(ALWAYS.into())),
            ("cascading service is not protected", Protection::Cascading, NotProtected, None),
            (
                "cascading workload with replicas",
                Protection::Cascading,
                Replicas(Some(3)),
                cascading("replicas 3>0"),
            ),
            ("cascading workload scaled to zero", Protection::Cascading, Replicas(Some(0)), None),
            ("cascading workload without replicas", Protection::Cascading, Replicas(None), None),
            (
                "namespace with active pods (pods named before claims)",
                Protection::Cascading,
                Namespace { active_pods: 2, bound_claims: 1 },
                cascading("active pods 2>0"),
            ),
            (
                "namespace with a bound claim",
                Protection::Cascading,
                Namespace { active_pods: 0, bound_claims: 1 },
                cascading("\"Bound\" status pvc 1>0"),
            ),
            ("empty namespace", Protection::Cascading, Namespace { active_pods: 0, bound_claims: 0 }, None),
            (
                "crd with custom resources",
                Protection::Cascading,
                CustomResources(1),
                cascading("active CRs 1>0"),
            ),
            ("crd without custom resources", Protection::Cascading, CustomResources(0), None),
            (
                "crd cascading without its gate",
                Protection::Cascading,
                CrdCascadingGateOff,
                Some("feature-gate DeletionProtectionForCRDCascadingGate is not enabled".into()),
            ),
            (
                "counting failed",
                Protection::Cascading,
                Unknown("forbidden by ResourcesProtectionDeletion for list pods error: boom".into()),
                Some("forbidden by ResourcesProtectionDeletion for list pods error: boom".into()),
            ),
        ];
        for (name, protection, dependents, expected) in cases {
            assert_eq!(refusal(protection, &dependents), expected, "{name}");
        }
    }

    #[test]
    fn protection_and_workload_table() {
        let cases = [
            ("no label", labelled(None, false, json!({"replicas": 3})), None, None),
            (
                "always",
                labelled(Some("Always"), false, json!({"replicas": 0})),
                Some(Protection::Always),
                Some(ALWAYS.to_string()),
            ),
            (
                "always but already deleting",
                labelled(Some("Always"), true, json!({"replicas": 3})),
                None,
                None,
            ),
            (
                "cascading with replicas",
                labelled(Some("Cascading"), false, json!({"replicas": 3})),
                Some(Protection::Cascading),
                Some(format!("{CASCADING} and replicas 3>0")),
            ),
            (
                "cascading at zero",
                labelled(Some("Cascading"), false, json!({"replicas": 0})),
                Some(Protection::Cascading),
                None,
            ),
            ("unknown value", labelled(Some("Sometimes"), false, json!({"replicas": 3})), None, None),
            ("lower case is not a value", labelled(Some("always"), false, json!({})), None, None),
        ];
        for (name, object, expected_protection, expected_refusal) in cases {
            assert_eq!(protection(&object), expected_protection, "{name}");
            assert_eq!(workload_refusal(&object), expected_refusal, "{name}");
        }
    }

    #[test]
    fn counting_helpers() {
        let pod = |phase: &str, deleting: bool| {
            let mut pod = json!({"metadata": {"name": "p"}, "status": {"phase": phase}});
            if deleting {
                pod["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
            }
            pod
        };
        assert!(is_pod_active(&pod("Running", false)));
        assert!(is_pod_active(&pod("Pending", false)));
        assert!(is_pod_active(&json!({"metadata": {"name": "p"}})));
        assert!(!is_pod_active(&pod("Running", true)));
        assert!(!is_pod_active(&pod("Succeeded", false)));
        assert!(!is_pod_active(&pod("Failed", false)));
        assert!(is_claim_bound(&pod("Bound", false)));
        assert!(!is_claim_bound(&pod("Bound", true)));
        assert!(!is_claim_bound(&pod("Pending", false)));

        let crd = json!({"spec": {"group": "e2e.kruise.io", "names": {"kind": "Case", "plural": "cases"},
            "versions": [{"name": "v1alpha1", "storage": false}, {"name": "v1beta1", "storage": true}]}});
        assert_eq!(
            custom_resources(&crd),
            Some(CustomResources {
                group: "e2e.kruise.io".into(),
                version: "v1beta1".into(),
                kind: "Case".into(),
                plural: "cases".into(),
                list_kind: "CaseList".into(),
            })
        );
        assert_eq!(custom_resources(&json!({"spec": {"group": "g"}})), None);
    }

    fn review(
        group: &str,
        version: &str,
        kind: &str,
        operation: &str,
        old: Value,
    ) -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": group, "version": version, "kind": kind},
                "resource": {"group": group, "version": version, "resource": "things"},
                "name": "x", "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": null, "oldObject": old,
            }
        });
        super::super::admission::parse_review(body.to_string().as_bytes()).unwrap()
    }

    fn lookup_of(prepared: Prepared) -> Option<(Protection, Lookup)> {
        match prepared {
            Prepared::Answer(response) => {
                assert!(response.allowed, "{:?}", response.result);
                None
            }
            Prepared::Protected { protection, lookup } => Some((protection, lookup)),
        }
    }

    /// What each kind's handler looks up, per label, operation and gate.
    #[test]
    fn prepare_table() {
        let on = DeletionOptions { enabled: true, crd_cascading: true };
        let always = labelled(Some("Always"), false, json!({"replicas": 2}));
        let cascading = labelled(Some("Cascading"), false, json!({"replicas": 2}));
        let mut crd = labelled(
            Some("Cascading"),
            false,
            json!({"group": "g", "names": {"kind": "K", "plural": "ks"}, "versions": [{"name": "v1", "storage": true}]}),
        );
        crd["metadata"].as_object_mut().unwrap().remove("namespace");
        let known = |dependents| Some((Protection::Cascading, Lookup::Known(dependents)));
        let cases = [
            (
                "deployment always",
                review("apps", "v1", "Deployment", "DELETE", always.clone()),
                Target::Workload,
                on,
                Some((Protection::Always, Lookup::Known(Dependents::NotProtected))),
            ),
            (
                "replicaset cascading",
                review("apps", "v1", "ReplicaSet", "DELETE", cascading.clone()),
                Target::Workload,
                on,
                known(Dependents::Replicas(Some(2))),
            ),
            (
                "daemonset is not a protected workload",
                review("apps", "v1", "DaemonSet", "DELETE", cascading.clone()),
                Target::Workload,
                on,
                None,
            ),
            (
                "update is not checked",
                review("apps", "v1", "Deployment", "UPDATE", always.clone()),
                Target::Workload,
                on,
                None,
            ),
            (
                "gate off",
                review("apps", "v1", "Deployment", "DELETE", always.clone()),
                Target::Workload,
                DeletionOptions { enabled: false, crd_cascading: false },
                None,
            ),
            ("no old object", review("", "v1", "Service", "DELETE", Value::Null), Target::Service, on, None),
            (
                "service cascading",
                review("", "v1", "Service", "DELETE", cascading.clone()),
                Target::Service,
                on,
                known(Dependents::NotProtected),
            ),
            (
                "ingress v1",
                review("networking.k8s.io", "v1", "Ingress", "DELETE", always.clone()),
                Target::Ingress,
                on,
                Some((Protection::Always, Lookup::Known(Dependents::NotProtected))),
            ),
            (
                "namespace cascading",
                review("", "v1", "Namespace", "DELETE", cascading.clone()),
                Target::Namespace,
                on,
                Some((Protection::Cascading, Lookup::NamespaceContents("x".into()))),
            ),
            (
                "crd cascading",
                review("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "DELETE", crd.clone()),
                Target::CustomResourceDefinition,
                on,
                Some((
                    Protection::Cascading,
                    Lookup::CustomResources(CustomResources {
                        group: "g".into(),
                        version: "v1".into(),
                        kind: "K".into(),
                        plural: "ks".into(),
                        list_kind: "KList".into(),
                    }),
                )),
            ),
            (
                "crd cascading without its gate",
                review("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "DELETE", crd),
                Target::CustomResourceDefinition,
                DeletionOptions { enabled: true, crd_cascading: false },
                known(Dependents::CrdCascadingGateOff),
            ),
        ];
        for (name, request, target, options, expected) in cases {
            assert_eq!(lookup_of(prepare(&request, target, options)), expected, "{name}");
        }
    }

    #[test]
    fn answers_are_403_with_the_reason() {
        let request = review("", "v1", "Namespace", "DELETE", labelled(Some("Cascading"), false, json!({})));
        let response = answer(
            &request,
            Target::Namespace,
            Protection::Cascading,
            &Dependents::Namespace { active_pods: 1, bound_claims: 0 },
        );
        assert!(!response.allowed);
        assert_eq!(response.result.code, 403);
        assert_eq!(response.result.reason, "Forbidden");
        assert_eq!(response.result.message, format!("{CASCADING} and active pods 1>0"));
        let response = answer(
            &request,
            Target::Namespace,
            Protection::Cascading,
            &Dependents::Namespace { active_pods: 0, bound_claims: 0 },
        );
        assert!(response.allowed);
    }
}
