//! Admission for PodUnavailableBudget (upstream `pkg/webhook/podunavailablebudget/validating`,
//! `vpodunavailablebudget.kb.io`): CREATE and UPDATE at both served versions are checked with
//! `kruise_crds::validation::validate_podunavailablebudget_{v1alpha1,v1beta1}` (exactly one of
//! selector and targetRef, exactly one of maxUnavailable and minAvailable, each well formed,
//! known protect operations, selector and target unchanged on update), and against the other
//! budgets of the namespace: two budgets may not name the same workload or have loosely
//! overlapping selectors (upstream `validatePubConflict`). A refusal is a 422 naming every field
//! (upstream answers 400 with the same aggregate message).
//!
//! As upstream, every write is refused while both PodUnavailableBudget gates are off.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kruise_crds::{
    field::{ErrorList, FieldError, FieldPath},
    policy::{v1alpha1, v1beta1},
    resource::POLICY_GROUP,
    validation::{validate_podunavailablebudget_v1alpha1, validate_podunavailablebudget_v1beta1},
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::Value;

use super::admission::{allowed, check, errored, invalid, object_value, object_version};
use crate::podunavailablebudget::core::is_reference_equal;

/// The kind's name.
const KIND: &str = "PodUnavailableBudget";

/// What a budget guards, in the form both versions share.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Guarded {
    /// Name of the budget.
    pub name: String,
    /// Its selector.
    pub selector: Option<LabelSelector>,
    /// Its target.
    pub target: Option<v1beta1::TargetReference>,
}

impl From<&v1beta1::PodUnavailableBudget> for Guarded {
    fn from(budget: &v1beta1::PodUnavailableBudget) -> Self {
        Self {
            name: budget.metadata.name.clone().unwrap_or_default(),
            selector: budget.spec.selector.clone(),
            target: budget.spec.target_reference.clone(),
        }
    }
}

/// What a budget's JSON (either version: the fields have the same names) guards.
fn guarded_of(raw: &Value) -> Guarded {
    let field = |pointer: &str| raw.pointer(pointer).filter(|v| !v.is_null()).cloned();
    Guarded {
        name: raw.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string(),
        selector: field("/spec/selector").and_then(|v| serde_json::from_value(v).ok()),
        target: field("/spec/targetRef").and_then(|v| serde_json::from_value(v).ok()),
    }
}

/// Whether the request needs the namespace's other budgets (a write that will be validated).
pub fn needs_others(request: &AdmissionRequest<DynamicObject>, gate_enabled: bool) -> bool {
    gate_enabled && matches!(request.operation, Operation::Create | Operation::Update)
}

/// The validating webhook; `gate_enabled` is either PodUnavailableBudget gate, `others` the
/// budgets of the request's namespace.
pub fn validate(
    request: &AdmissionRequest<DynamicObject>,
    gate_enabled: bool,
    others: &[Guarded],
) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    if !gate_enabled {
        return errored(
            request,
            400,
            "feature PodUnavailableBudget is invalid, please open via feature-gate(PodUnavailableBudgetDeleteGate, PodUnavailableBudgetUpdateGate)",
        );
    }
    let (raw, old) = match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    {
        (Ok(Some(raw)), Ok(old)) => (raw, old.filter(|_| request.operation == Operation::Update)),
        (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
        (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
    };
    let guarded = guarded_of(&raw);
    let errors = match object_version(request, Some(&raw)).as_str() {
        "v1beta1" => check::<v1beta1::PodUnavailableBudget>(KIND, &raw, old.as_ref(), |object, old| {
            validate_podunavailablebudget_v1beta1(object, old)
        }),
        "v1alpha1" => check::<v1alpha1::PodUnavailableBudget>(KIND, &raw, old.as_ref(), |object, old| {
            validate_podunavailablebudget_v1alpha1(object, old)
        }),
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match errors {
        Ok(mut errors) => {
            errors.extend(validate_conflicts(&guarded, others));
            if errors.is_empty() {
                allowed(request)
            } else {
                let name = raw.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(&request.name);
                invalid(request, POLICY_GROUP, KIND, name, &errors)
            }
        }
        Err(message) => errored(request, 400, &message),
    }
}

/// The conflicts with the other budgets of the namespace (upstream `validatePubConflict`): the
/// first other budget naming the same workload, or with a loosely overlapping selector.
pub fn validate_conflicts(budget: &Guarded, others: &[Guarded]) -> ErrorList {
    let path = FieldPath::root("spec");
    let mut errors = ErrorList::new();
    for other in others.iter().filter(|other| other.name != budget.name) {
        match (&budget.target, &other.target, &budget.selector, &other.selector) {
            (Some(mine), Some(theirs), _, _) if is_reference_equal(mine, theirs) => {
                errors.push(FieldError::invalid(
                    &path.child("targetRef"),
                    format!("{}/{}/{}", mine.api_version, mine.kind, mine.name),
                    format!(
                        "pub.spec.targetReference is in conflict with other PodUnavailableBudget {}",
                        other.name
                    ),
                ));
                return errors;
            }
            (None, _, Some(mine), Some(theirs)) | (_, None, Some(mine), Some(theirs))
                if is_selector_loose_overlap(mine, theirs) =>
            {
                errors.push(FieldError::invalid(
                    &path.child("selector"),
                    kruise_crds::selector::to_selector_string(mine),
                    format!(
                        "pub.spec.selector is in conflict with other PodUnavailableBudget {}",
                        other.name
                    ),
                ));
                return errors;
            }
            _ => {}
        }
    }
    errors
}

fn requirements(selector: &LabelSelector) -> BTreeMap<String, LabelSelectorRequirement> {
    let mut map: BTreeMap<String, LabelSelectorRequirement> = BTreeMap::new();
    for requirement in selector.match_expressions.iter().flatten() {
        map.insert(requirement.key.clone(), requirement.clone());
    }
    for (key, value) in selector.match_labels.iter().flatten() {
        map.insert(
            key.clone(),
            LabelSelectorRequirement {
                key: key.clone(),
                operator: "In".into(),
                values: Some(vec![value.clone()]),
            },
        );
    }
    map
}

/// Whether two selectors constrain the same keys in compatible ways (upstream
/// `IsSelectorLooseOverlap`): a key only one of them names makes them distinct.
pub fn is_selector_loose_overlap(first: &LabelSelector, second: &LabelSelector) -> bool {
    let (a, b) = (requirements(first), requirements(second));
    a.iter().all(|(key, left)| b.get(key).is_some_and(|right| requirement_overlap(left, right)))
        && b.iter().all(|(key, right)| a.get(key).is_some_and(|left| requirement_overlap(right, left)))
}

fn requirement_overlap(first: &LabelSelectorRequirement, second: &LabelSelectorRequirement) -> bool {
    let values = |r: &LabelSelectorRequirement| r.values.clone().unwrap_or_default();
    let overlaps = |a: &[String], b: &[String]| a.iter().any(|v| b.contains(v));
    let contains_all = |a: &[String], b: &[String]| b.iter().all(|v| a.contains(v));
    let (one, two) = (values(first), values(second));
    match (first.operator.as_str(), second.operator.as_str()) {
        ("In", "Exists") => true,
        ("In", "In") => overlaps(&two, &one),
        ("In", "NotIn") => !contains_all(&two, &one),
        ("Exists", "In" | "NotIn" | "Exists") => true,
        ("NotIn", "Exists" | "DoesNotExist" | "NotIn") => true,
        ("NotIn", "In") => !contains_all(&one, &two),
        ("DoesNotExist", "DoesNotExist" | "NotIn") => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;
    use crate::webhook::testing::fields;

    /// Upstream's `pubDemo` (webhook tests) at `version`.
    fn pub_demo(version: &str) -> Value {
        json!({
            "apiVersion": format!("policy.kruise.io/{version}"), "kind": "PodUnavailableBudget",
            "metadata": {"name": "pub-test", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "pub-controller"}}, "maxUnavailable": "30%"}
        })
    }

    fn run(
        version: &str,
        operation: &str,
        object: Value,
        old: Value,
        others: &[Guarded],
    ) -> AdmissionResponse {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "policy.kruise.io", "version": version, "kind": "PodUnavailableBudget"},
                "resource": {"group": "policy.kruise.io", "version": version, "resource": "podunavailablebudgets"},
                "name": "pub-test", "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"}, "object": object, "oldObject": old,
            }
        });
        let request = crate::webhook::admission::parse_review(body.to_string().as_bytes()).unwrap();
        validate(&request, true, others)
    }

    /// Upstream `TestValidatingPub`: each invalid spec, at both versions, names its field.
    #[test]
    fn test_validating_pub() {
        let edit = |f: &dyn Fn(&mut Value)| {
            let mut value = pub_demo("v1beta1");
            f(&mut value);
            value
        };
        let cases: Vec<(&str, Value, Vec<&str>)> = vec![
            (
                "valid pub, TargetReference and MaxUnavailable",
                edit(&|v| {
                    v["spec"]["selector"] = Value::Null;
                    v["spec"]["targetRef"] = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cloneset-test"});
                }),
                vec![],
            ),
            (
                "valid pub, Selector and MinAvailable",
                edit(&|v| {
                    v["spec"]["maxUnavailable"] = Value::Null;
                    v["spec"]["minAvailable"] = json!("30%");
                }),
                vec![],
            ),
            (
                "invalid pub, Selector and TargetReference are mutually exclusive",
                edit(&|v| {
                    v["spec"]["targetRef"] = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cloneset-test"});
                }),
                vec!["spec.selector"],
            ),
            (
                "invalid pub, Selector and TargetReference are nil",
                edit(&|v| {
                    v["spec"]["selector"] = Value::Null;
                }),
                vec!["spec.selector"],
            ),
            (
                "invalid pub, MaxUnavailable and MinAvailable are mutually exclusive",
                edit(&|v| {
                    v["spec"]["minAvailable"] = json!("30%");
                }),
                vec!["spec.minAvailable"],
            ),
            (
                "invalid pub, MaxUnavailable and MinAvailable are nil",
                edit(&|v| {
                    v["spec"]["maxUnavailable"] = Value::Null;
                }),
                vec!["spec.maxUnavailable"],
            ),
            (
                "invalid pub, MaxUnavailable over 100%",
                edit(&|v| {
                    v["spec"]["maxUnavailable"] = json!("130%");
                }),
                vec!["spec.maxUnavailable"],
            ),
            (
                "invalid pub, MinAvailable negative",
                edit(&|v| {
                    v["spec"]["maxUnavailable"] = Value::Null;
                    v["spec"]["minAvailable"] = json!(-1);
                }),
                vec!["spec.minAvailable"],
            ),
            (
                "invalid pub, empty selector",
                edit(&|v| {
                    v["spec"]["selector"] = json!({});
                }),
                vec!["spec.selector"],
            ),
            (
                "valid pub ignoredPodSelector",
                edit(&|v| {
                    v["spec"]["ignoredPodSelector"] = json!({"matchLabels": {"ignored": "true"}});
                }),
                vec![],
            ),
            (
                "invalid pub empty ignoredPodSelector",
                edit(&|v| {
                    v["spec"]["ignoredPodSelector"] = json!({});
                }),
                vec!["spec.ignoredPodSelector"],
            ),
            (
                "invalid pub, unknown protect operation",
                edit(&|v| {
                    v["spec"]["protectOperations"] = json!(["DELETE", "REBOOT"]);
                }),
                vec!["spec.protectOperations[1]"],
            ),
        ];
        for (name, object, expected) in cases {
            let response = run("v1beta1", "CREATE", object.clone(), Value::Null, &[]);
            assert_eq!(response.allowed, expected.is_empty(), "{name}: {:?}", response.result);
            assert_eq!(fields(&response), expected, "{name}");
            if object["spec"].get("protectOperations").is_none()
                && object["spec"].get("ignoredPodSelector").is_none()
            {
                let mut alpha = object.clone();
                alpha["apiVersion"] = json!("policy.kruise.io/v1alpha1");
                let response = run("v1alpha1", "CREATE", alpha, Value::Null, &[]);
                assert_eq!(fields(&response), expected, "{name} (v1alpha1)");
            }
        }
    }

    /// Upstream `TestPubConflictWithOthers`.
    #[test]
    fn test_pub_conflict_with_others() {
        let selector = |labels: Value| -> Option<LabelSelector> {
            Some(serde_json::from_value(json!({"matchLabels": labels})).unwrap())
        };
        let target = |name: &str| {
            Some(v1beta1::TargetReference {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name: name.into(),
            })
        };
        let other =
            |name: &str, selector: Option<LabelSelector>, target: Option<v1beta1::TargetReference>| Guarded {
                name: name.into(),
                selector,
                target,
            };
        let mine = other("pub-test", selector(json!({"app": "pub-controller"})), None);
        let cases = [
            (
                "no conflict with other pubs, and Selector",
                other("other", selector(json!({"app": "other"})), None),
                true,
            ),
            (
                "conflict with other pubs, and Selector",
                other("other", selector(json!({"app": "pub-controller"})), None),
                false,
            ),
            (
                "no conflict, more labels",
                other("other", selector(json!({"app": "pub-controller", "version": "v1"})), None),
                true,
            ),
            ("itself", other("pub-test", selector(json!({"app": "pub-controller"})), None), true),
        ];
        for (name, other, ok) in cases {
            assert_eq!(validate_conflicts(&mine, std::slice::from_ref(&other)).is_empty(), ok, "{name}");
        }
        let by_ref = other("pub-test", None, target("nginx"));
        // "invalid conflict with other pubs, and TargetReference"
        let errors = validate_conflicts(&by_ref, &[other("other", None, target("nginx"))]);
        assert_eq!(errors.iter().map(|e| e.path.to_string()).collect::<Vec<_>>(), ["spec.targetRef"]);
        // "no conflict with other pubs, and TargetReference"
        assert!(validate_conflicts(&by_ref, &[other("other", None, target("web"))]).is_empty());
        // Through the webhook: the conflict is a field error too.
        let response = run(
            "v1beta1",
            "CREATE",
            pub_demo("v1beta1"),
            Value::Null,
            &[other("other", selector(json!({"app": "pub-controller"})), None)],
        );
        assert_eq!(fields(&response), ["spec.selector"]);
    }

    #[test]
    fn test_validating_update_pub() {
        let old = pub_demo("v1beta1");
        let mut new = old.clone();
        new["spec"]["selector"] = json!({"matchLabels": {"app": "other"}});
        let response = run("v1beta1", "UPDATE", new, old.clone(), &[]);
        assert_eq!(fields(&response), ["spec.selector"], "invalid pub, Selector changed");
        let response = run("v1beta1", "UPDATE", old.clone(), old, &[]);
        assert!(response.allowed, "valid pub, selector not changed");
    }
}
