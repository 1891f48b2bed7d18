//! Table tests ported from upstream's `pub_control_test.go`, `pub_control_utils_test.go`,
//! `pub_controller_test.go` and `pub_pod_event_handler_test.go`, under upstream's case names.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use serde_json::{Value, json};

use super::*;

fn pod(value: Value) -> Pod {
    serde_json::from_value(value).unwrap()
}

/// Upstream's `podDemo`: a Running, Ready nginx pod of ReplicaSet `nginx`.
fn pod_demo() -> Value {
    json!({
        "metadata": {
            "name": "test-pod", "namespace": "default",
            "labels": {"app": "nginx", "pub-controller": "true"},
            "annotations": {},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "nginx",
                "uid": "606132e0-85ef-460a-8cf5-cd8f915a8cc3", "controller": true}]
        },
        "spec": {"containers": [{"name": "nginx", "image": "nginx:v1"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "nginx", "image": "nginx:v1", "ready": true, "restartCount": 0,
                "imageID": "nginx@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d"}]
        }
    })
}

/// Upstream's `pubDemo`: selector `pub-controller=true`, maxUnavailable 30%.
fn pub_demo() -> PodUnavailableBudget {
    serde_json::from_value(json!({
        "apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "pub-test", "namespace": "default", "annotations": {}},
        "spec": {"selector": {"matchLabels": {"pub-controller": "true"}}, "maxUnavailable": "30%"},
        "status": {"unavailableAllowed": 0, "currentAvailable": 0, "desiredAvailable": 0, "totalReplicas": 0}
    }))
    .unwrap()
}

fn with_protect_annotation(value: &str) -> PodUnavailableBudget {
    let mut budget = pub_demo();
    budget.metadata.annotations = Some([(PUB_PROTECT_OPERATIONS_KEY.to_string(), value.to_string())].into());
    budget
}

#[test]
fn test_is_pod_ready() {
    let mut not_ready = pod_demo();
    not_ready["status"]["conditions"][0]["status"] = json!("False");
    let mut labelled = pod_demo();
    labelled["metadata"]["labels"]["unavailable-pod.kruise.io/reason"] = json!("true");
    let cases = [
        ("pod ready", pod_demo(), true),
        ("pod not ready", not_ready, false),
        ("pod contains unavailable label", labelled, false),
    ];
    for (name, value, expected) in cases {
        assert_eq!(is_pod_ready(&pod(value)), expected, "{name}");
    }
}

#[test]
fn test_is_pod_unavailable_changed() {
    let old = pod_demo();
    let mut annotations = pod_demo();
    annotations["metadata"]["annotations"]["add"] = json!("annotations");
    let mut label = pod_demo();
    label["metadata"]["labels"]["unavailable-pod.kruise.io/reason"] = json!("true");
    let mut image = pod_demo();
    image["spec"]["containers"][0]["image"] = json!("nginx:v2");
    let cases = [
        ("only annotations change", annotations.clone(), false),
        ("only annotations change with featureGate enabled", annotations, false),
        ("add unavailable label", label, true),
        ("image changed", image, true),
    ];
    for (name, new, expected) in cases {
        assert_eq!(is_pod_unavailable_changed(&pod(old.clone()), &pod(new)), expected, "{name}");
    }
}

fn with_resources(resources: Value) -> Value {
    let mut value = pod_demo();
    value["spec"]["containers"][0]["resources"] = resources;
    value
}

#[test]
fn test_can_resize_inplace() {
    let burstable =
        json!({"requests": {"cpu": "100m", "memory": "100Mi"}, "limits": {"cpu": "200m", "memory": "200Mi"}});
    let guaranteed =
        json!({"requests": {"cpu": "200m", "memory": "200Mi"}, "limits": {"cpu": "200m", "memory": "200Mi"}});
    let bigger =
        json!({"requests": {"cpu": "150m", "memory": "100Mi"}, "limits": {"cpu": "300m", "memory": "200Mi"}});
    let storage = json!({"requests": {"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "1Gi"},
                         "limits": {"cpu": "200m", "memory": "200Mi"}});
    let mut static_pod = with_resources(bigger.clone());
    static_pod["metadata"]["annotations"]["kubernetes.io/config.source"] = json!("file");
    let mut restart = with_resources(bigger.clone());
    restart["spec"]["containers"][0]["resizePolicy"] =
        json!([{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]);
    let mut mixed = with_resources(bigger.clone());
    mixed["spec"]["containers"][0]["resizePolicy"] = json!([
        {"resourceName": "cpu", "restartPolicy": "NotRequired"},
        {"resourceName": "memory", "restartPolicy": "RestartContainer"}
    ]);
    let mut mixed_old = with_resources(burstable.clone());
    mixed_old["spec"]["containers"][0]["resizePolicy"] =
        mixed["spec"]["containers"][0]["resizePolicy"].clone();
    let mut restart_old = with_resources(burstable.clone());
    restart_old["spec"]["containers"][0]["resizePolicy"] =
        restart["spec"]["containers"][0]["resizePolicy"].clone();
    let mut labelled = with_resources(bigger.clone());
    labelled["metadata"]["labels"]["unavailable-pod.kruise.io/reason"] = json!("true");
    let cases = [
        ("qos changed", with_resources(burstable.clone()), with_resources(guaranteed), false),
        ("resources changed", with_resources(burstable.clone()), with_resources(bigger.clone()), true),
        ("storage resources changed 1", with_resources(burstable.clone()), with_resources(storage), false),
        ("resources changed but static pod", with_resources(burstable.clone()), static_pod, false),
        ("resources changed but resizePolicy is restart", restart_old, restart, false),
        // Memory did not change, so its restart policy does not matter.
        ("resources changed mixed resizePolicy", mixed_old, mixed, true),
        ("resources changed but add unavailable labels", with_resources(burstable), labelled, false),
    ];
    for (name, old, new, expected) in cases {
        assert_eq!(can_resize_in_place(&pod(old), &pod(new)), expected, "{name}");
    }
}

#[test]
fn test_is_need_pub_protection() {
    use PubOperation::*;
    let cases = [
        ("pub protect update by default", pub_demo(), Update, false, true),
        ("pub protect delete by default", pub_demo(), Delete, false, true),
        ("pub protect evict by default", pub_demo(), Evict, false, true),
        (
            "pub not protect resize by default when featureGate InPlacePodVerticalScaling is enabled",
            pub_demo(),
            Resize,
            true,
            false,
        ),
        (
            "pub protect resize by default when featureGate InPlacePodVerticalScaling is disabled",
            pub_demo(),
            Resize,
            false,
            true,
        ),
        ("pub protect resize", with_protect_annotation("RESIZE"), Resize, false, true),
        ("pub protect update", with_protect_annotation("RESIZE,UPDATE"), Update, false, true),
        (
            "pub won't protect update when resize set",
            with_protect_annotation("RESIZE,DELETE"),
            Update,
            false,
            false,
        ),
        (
            "pub not protect update when resize not set",
            with_protect_annotation("EVICT,DELETE"),
            Update,
            false,
            false,
        ),
        (
            "pub protect resize when update set and featureGate InPlacePodVerticalScaling is disabled",
            with_protect_annotation("EVICT,UPDATE"),
            Resize,
            false,
            true,
        ),
        (
            "pub not protect resize when update set and featureGate InPlacePodVerticalScaling enabled",
            with_protect_annotation("EVICT,UPDATE"),
            Resize,
            true,
            false,
        ),
        (
            "pub not protect resize when featureGate InPlacePodVerticalScaling enabled",
            with_protect_annotation("EVICT"),
            Resize,
            true,
            false,
        ),
        (
            "pub not protect resize when featureGate InPlacePodVerticalScaling disabled",
            with_protect_annotation("EVICT"),
            Resize,
            false,
            false,
        ),
    ];
    for (name, budget, operation, inplace, expected) in cases {
        assert_eq!(is_need_pub_protection(&budget, &operation, inplace), expected, "{name}");
    }
    // The spec field wins over the annotation.
    let mut budget = with_protect_annotation("EVICT");
    budget.spec.protect_operations = vec![Delete];
    assert!(is_need_pub_protection(&budget, &Delete, false));
    assert!(!is_need_pub_protection(&budget, &Evict, false));
}

fn budget_with_status(allowed: i32, desired: i32) -> PodUnavailableBudget {
    let mut budget = pub_demo();
    budget.status = Some(PodUnavailableBudgetStatus {
        unavailable_allowed: allowed,
        desired_available: desired,
        current_available: desired + allowed,
        total_replicas: desired + allowed,
        ..Default::default()
    });
    budget
}

/// Upstream `TestPodUnavailableBudgetValidatePod`: the pre-checks, then the quota.
#[test]
fn test_pod_unavailable_budget_validate_pod() {
    let related = |mut value: Value| {
        value["metadata"]["annotations"][POD_RELATED_PUB_KEY] = json!("pub-test");
        value
    };
    let mut deleting = related(pod_demo());
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    let mut not_ready = related(pod_demo());
    not_ready["status"]["conditions"][0]["status"] = json!("False");
    let mut labelled = related(pod_demo());
    labelled["metadata"]["labels"]["unavailable-pod.kruise.io/reason"] = json!("true");
    let mut inconsistent = related(pod_demo());
    inconsistent["metadata"]["annotations"]["apps.kruise.io/inplace-update-grace"] = json!("{}");
    let mut no_protect = related(pod_demo());
    no_protect["metadata"]["annotations"][POD_PUB_NO_PROTECTION_KEY] = json!("true");
    let mut ignored_budget = budget_with_status(1, 7);
    ignored_budget.spec.ignored_pod_selector =
        Some(serde_json::from_value(json!({"matchLabels": {"app": "nginx"}})).unwrap());

    let now = Timestamp::now();
    // (name, pod, budget, allowed)
    let cases = [
        ("valid update pod, allow", related(pod_demo()), budget_with_status(1, 7), true),
        ("valid update pod, reject", related(pod_demo()), budget_with_status(0, 7), false),
        // A pod being deleted is no longer Ready in upstream's fixture; ours keeps Ready, so the
        // quota decides: the budget has none and the pod has a related PUB.
        ("valid update pod, pod not ready, ignore", not_ready, budget_with_status(0, 7), true),
        ("valid update pod, pod unavailable labels, ignore", labelled, budget_with_status(0, 7), true),
        (
            "valid delete pod, pod state is inconsistent(inplace update not completed yet), ignore",
            inconsistent,
            budget_with_status(0, 7),
            true,
        ),
        ("valid delete pod, pod declared no protect , ignore", no_protect, budget_with_status(0, 7), true),
        (
            "valid delete pod, pod matches ignored selector, ignore",
            related(pod_demo()),
            {
                let mut b = ignored_budget.clone();
                b.status.as_mut().unwrap().unavailable_allowed = 0;
                b
            },
            true,
        ),
    ];
    for (name, value, budget, expected) in cases {
        let pod = pod(value);
        let allowed = match pod_precheck(&pod) {
            Precheck::Allow(_) => true,
            Precheck::LookUp(found) => {
                assert_eq!(found, "pub-test", "{name}");
                match budget_precheck(&pod, &budget, &PubOperation::Update, false) {
                    Some(_) => true,
                    None => {
                        let mut status = budget.status.clone().unwrap_or_default();
                        check_and_decrement("pub-test", "test-pod", &mut status, &PubOperation::Update, now)
                            .is_ok()
                    }
                }
            }
        };
        assert_eq!(allowed, expected, "{name}");
    }
    let _ = deleting;
}

#[test]
fn check_and_decrement_records_by_operation() {
    let now = Timestamp::now();
    let mut status = PodUnavailableBudgetStatus { unavailable_allowed: 2, ..Default::default() };
    check_and_decrement("pub-test", "a", &mut status, &PubOperation::Update, now).unwrap();
    check_and_decrement("pub-test", "b", &mut status, &PubOperation::Evict, now).unwrap();
    assert_eq!(status.unavailable_allowed, 0);
    assert!(status.unavailable_pods.contains_key("a") && status.disrupted_pods.contains_key("b"));
    let refused = check_and_decrement("pub-test", "c", &mut status, &PubOperation::Delete, now).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "podunavailablebudget.policy.kruise.io \"pub-test\" is forbidden: pub unavailable allowed is negative"
    );
}

#[test]
fn test_desired_available_for_pub() {
    let mut budget = pub_demo();
    budget.spec.max_unavailable = Some(IntOrString::String("10%".into()));
    assert_eq!(
        desired_available(&budget, 15).unwrap(),
        13,
        "DesiredAvailableForPub, maxUnavailable 10%, total 15"
    );
}

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Upstream's Deployment `nginx` (10 replicas) and its ReplicaSet, as the finder sees them.
struct Finder {
    deployment_replicas: i32,
    deleting: bool,
    replica_sets: Vec<&'static str>,
}

impl WorkloadFinder for Finder {
    fn workload(&self, _api_version: &str, kind: &str, _namespace: &str, _name: &str) -> Option<Workload> {
        match kind {
            "Deployment" | "ReplicaSet" => Some(Workload {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name: "nginx".into(),
                uid: "f6d5b184-d82f-461c-a432-fbd59e2f0379".into(),
                replicas: self.deployment_replicas,
                deleting: self.deleting,
                pod_owner_uids: self.replica_sets.iter().map(|s| s.to_string()).collect(),
            }),
            _ => None,
        }
    }
}

const RS1: &str = "606132e0-85ef-460a-8cf5-cd8f915a8cc3";

fn pods(count: usize, edit: impl Fn(usize, &mut Value)) -> Vec<Pod> {
    (0..count)
        .map(|i| {
            let mut value = pod_demo();
            value["metadata"]["name"] = json!(format!("test-pod-{i}"));
            edit(i, &mut value);
            pod(value)
        })
        .collect()
}

fn reconcile(
    budget: &PodUnavailableBudget,
    pods: &[Pod],
    finder: &Finder,
    now: Timestamp,
) -> PodUnavailableBudgetStatus {
    let refs: Vec<&Pod> = pods.iter().collect();
    let (matched, expected) = pods_for_budget(budget, &refs, finder);
    let desired = desired_available(budget, expected).unwrap();
    compute_status(budget, &matched, expected, desired, now).0
}

fn status(allowed: i32, current: i32, desired: i32, total: i32) -> PodUnavailableBudgetStatus {
    PodUnavailableBudgetStatus {
        unavailable_allowed: allowed,
        current_available: current,
        desired_available: desired,
        total_replicas: total,
        ..Default::default()
    }
}

fn target_ref_budget(max: &str) -> PodUnavailableBudget {
    let mut budget = pub_demo();
    budget.spec.selector = None;
    budget.spec.target_reference = Some(TargetReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: "nginx".into(),
    });
    budget.spec.max_unavailable = Some(IntOrString::String(max.into()));
    budget
}

/// Upstream `TestPubReconcile` (the decision part: which pods, which count, which status).
#[test]
fn test_pub_reconcile() {
    let now = Timestamp::now();
    let finder =
        |replicas, deleting| Finder { deployment_replicas: replicas, deleting, replica_sets: vec![RS1] };
    let ten = pods(10, |_, _| {});
    let with_total = {
        let mut b = pub_demo();
        b.spec.protect_total_replicas = Some(15);
        b
    };
    let cases: Vec<(&str, PodUnavailableBudget, Vec<Pod>, Finder, PodUnavailableBudgetStatus)> = vec![
        (
            "select matched deployment(replicas=0), selector and maxUnavailable 30%",
            pub_demo(),
            pods(10, |_, _| {}),
            finder(0, false),
            status(10, 10, 0, 0),
        ),
        (
            "select matched pub.spec.protectTotalReplicas=15 and selector, selector and maxUnavailable 30%",
            with_total,
            ten.clone(),
            finder(10, false),
            status(0, 10, 10, 15),
        ),
        (
            "selector over a Deployment of 10, maxUnavailable 30%",
            pub_demo(),
            ten.clone(),
            finder(10, false),
            status(3, 10, 7, 10),
        ),
        (
            "select matched deployment(Deletion), selector and maxUnavailable 30%",
            pub_demo(),
            ten.clone(),
            finder(10, true),
            status(10, 10, 0, 0),
        ),
        (
            "select matched deployment(replicas=0,maxSurge=0,maxUnavailable=30%), and pub(targetRef,maxUnavailable=30%)",
            target_ref_budget("30%"),
            ten.clone(),
            finder(0, false),
            status(0, 0, 0, 0),
        ),
        (
            "select matched deployment(replicas=10,maxSurge=0,maxUnavailable=30%), and pub(targetRef,maxUnavailable=30%)",
            target_ref_budget("30%"),
            pods(10, |i, value| {
                if i < 3 {
                    value["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
                }
            }),
            finder(10, false),
            status(0, 7, 7, 10),
        ),
        (
            "select matched deployment(replicas=1,maxSurge=0,maxUnavailable=30%), and pub(targetRef,maxUnavailable=30%)",
            target_ref_budget("30%"),
            ten.clone(),
            finder(1, false),
            status(10, 10, 0, 1),
        ),
        (
            "select matched deployment(replicas=1,maxSurge=0,maxUnavailable=30%), spec.protectTotalReplicas=15 and pub(targetRef,maxUnavailable=30%)",
            {
                let mut b = target_ref_budget("30%");
                b.spec.protect_total_replicas = Some(15);
                b
            },
            ten.clone(),
            finder(1, false),
            status(0, 10, 10, 15),
        ),
        (
            "select matched deployment(deletion), and pub(targetRef,maxUnavailable=30%)",
            target_ref_budget("30%"),
            ten.clone(),
            finder(10, true),
            status(0, 0, 0, 0),
        ),
        (
            "select matched deployment, maxUnavailable 0%",
            target_ref_budget("0%"),
            ten.clone(),
            finder(10, false),
            status(0, 10, 10, 10),
        ),
        (
            "select matched deployment, maxUnavailable 100%",
            target_ref_budget("100%"),
            ten.clone(),
            finder(10, false),
            status(10, 10, 0, 10),
        ),
        (
            "select matched deployment, minAvailable 50%",
            {
                let mut b = target_ref_budget("0%");
                b.spec.max_unavailable = None;
                b.spec.min_available = Some(IntOrString::String("50%".into()));
                b
            },
            ten.clone(),
            finder(10, false),
            status(5, 10, 5, 10),
        ),
        (
            "select matched deployment, minAvailable 80%",
            {
                let mut b = target_ref_budget("0%");
                b.spec.max_unavailable = None;
                b.spec.min_available = Some(IntOrString::String("80%".into()));
                b
            },
            ten.clone(),
            finder(10, false),
            status(2, 10, 8, 10),
        ),
    ];
    for (name, budget, pods, finder, expected) in cases {
        assert_eq!(reconcile(&budget, &pods, &finder, now), expected, "{name}");
    }
}

/// Upstream's cases with records: recorded pods are unavailable until the records expire.
#[test]
fn test_pub_reconcile_with_records() {
    let now = Timestamp::now();
    let finder = Finder { deployment_replicas: 20, deleting: false, replica_sets: vec![RS1] };
    let recent = Time(now);
    let old = Time(now.checked_sub(SignedDuration::from_secs(60)).unwrap());
    // "select matched deployment, 10 UnavailablePods and 10 DisruptionPods"
    let twenty = pods(20, |_, _| {});
    let mut budget = pub_demo();
    let mut records = PodUnavailableBudgetStatus::default();
    for i in 0..10 {
        records.unavailable_pods.insert(format!("test-pod-{i}"), recent.clone());
        records.disrupted_pods.insert(format!("test-pod-{}", i + 10), recent.clone());
    }
    budget.status = Some(records.clone());
    let status = reconcile(&budget, &twenty, &finder, now);
    assert_eq!(
        (
            status.unavailable_allowed,
            status.current_available,
            status.desired_available,
            status.total_replicas
        ),
        (0, 0, 14, 20)
    );
    assert_eq!((status.unavailable_pods.len(), status.disrupted_pods.len()), (10, 10));

    // "... 10 DisruptionPods(5 delay) and 5 deletion": expired disruption records are dropped
    // (the pods are reported NotDeleted) and deleted pods leave their records.
    let mixed = pods(20, |i, value| {
        if (15..20).contains(&i) {
            value["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
    });
    for i in 10..15 {
        records.disrupted_pods.insert(format!("test-pod-{i}"), old.clone());
    }
    budget.status = Some(records);
    let refs: Vec<&Pod> = mixed.iter().collect();
    let (matched, expected) = pods_for_budget(&budget, &refs, &finder);
    let (status, built) = compute_status(&budget, &matched, expected, 14, now);
    assert_eq!(built.not_deleted.len(), 5);
    assert_eq!((status.unavailable_pods.len(), status.disrupted_pods.len()), (10, 0));
    assert_eq!((status.current_available, status.unavailable_allowed), (5, 0));
    assert!(built.recheck.is_some());
}

/// Upstream `TestPodEventHandler`: a readiness change queues the budget, a spec change alone
/// does not.
#[test]
fn test_pod_event_handler() {
    let old = pod(pod_demo());
    let mut not_ready = pod_demo();
    not_ready["status"]["conditions"][0]["status"] = json!("False");
    assert_eq!(is_pod_available_changed(&old, &pod(not_ready)), Some(std::time::Duration::ZERO));
    let mut image = pod_demo();
    image["spec"]["containers"][0]["image"] = json!("nginx:latest");
    assert_eq!(is_pod_available_changed(&old, &pod(image)), None);
    let mut deleting = pod_demo();
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    assert_eq!(is_pod_available_changed(&old, &pod(deleting)), Some(std::time::Duration::from_secs(5)));
}

/// Upstream `TestGetPodUnavailableBudgetForPod` and the workload event handler's matching.
#[test]
fn test_get_pod_unavailable_budget_for_pod() {
    let labels: BTreeMap<String, String> = [("pub-controller".to_string(), "true".to_string())].into();
    let by_selector = pub_demo();
    let by_ref = target_ref_budget("30%");
    let deployment =
        TargetReference { api_version: "apps/v1".into(), kind: "Deployment".into(), name: "nginx".into() };
    // "matched pub"
    assert_eq!(
        matching_budget([&by_selector], "default", None, &labels).and_then(|b| b.metadata.name.as_deref()),
        Some("pub-test")
    );
    // "no matched pub targetRef deployment, for unequal ns"
    assert!(matching_budget([&by_ref], "other", Some(&deployment), &labels).is_none());
    assert!(matching_budget([&by_ref], "default", Some(&deployment), &labels).is_some());
    // Another version of the same group still names the workload.
    let v1beta1 = TargetReference { api_version: "apps/v1beta1".into(), ..deployment.clone() };
    assert!(matching_budget([&by_ref], "default", Some(&v1beta1), &labels).is_some());
    // An empty selector matches nothing.
    let mut empty = pub_demo();
    empty.spec.selector = Some(LabelSelector::default());
    assert!(matching_budget([&empty], "default", None, &labels).is_none());
    // "matched pub by deprecated annotation"
    let mut deprecated = pod_demo();
    deprecated["metadata"]["annotations"][DEPRECATED_POD_RELATED_PUB_KEY] = json!("pub-test");
    assert_eq!(related_pub_name(&pod(deprecated)), Some("pub-test"));
}

#[test]
fn digest_images_are_consistent_only_when_reported() {
    let mut value = pod_demo();
    value["spec"]["containers"][0]["image"] =
        json!("nginx@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d");
    assert!(is_pod_state_consistent(&pod(value.clone())));
    value["status"]["containerStatuses"][0]["imageID"] = json!("nginx@sha256:0000");
    assert!(!is_pod_state_consistent(&pod(value)));
}
