//! Advanced StatefulSet (`apps.kruise.io/v1beta1`) as a [`RolloutTarget`]. Its partition is an
//! ordinal — pods with a lower ordinal keep the previous revision — so it is a count only: a
//! percentage in a request is turned into a count against `spec.replicas` when it is written,
//! rounded up like a CloneSet's (and, below 100%, never every pod). It has no `maxSurge`.

use k8s_openapi::{
    api::core::v1::PodTemplateSpec,
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use kruise_crds::{
    apps::v1beta1::{PodUpdatePolicy as KruisePodUpdatePolicy, StatefulSet, StatefulSetUpdateStrategyType},
    intstr::partition_replicas,
    validation::validate_statefulset_v1beta1,
};

use super::{PodTemplateWorkload, RolloutTarget, StatusView};
use crate::model::{PodUpdatePolicy, WorkloadKind};

/// The desired replicas (StatefulSet default 1).
fn replicas(set: &StatefulSet) -> i32 {
    set.spec.replicas.unwrap_or(1)
}

impl RolloutTarget for StatefulSet {
    const KIND: WorkloadKind = WorkloadKind::StatefulSet;

    template_target_accessors!();
    rolling_update_pause_accessors!();

    fn desired(&self) -> i32 {
        replicas(self)
    }

    fn partition(&self) -> Option<IntOrString> {
        self.spec.update_strategy.rolling_update.as_ref()?.partition.map(IntOrString::Int)
    }

    fn set_partition(&mut self, partition: Option<IntOrString>) {
        let count = partition.map(|p| self.kept_for(Some(&p)));
        self.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).partition = count;
    }

    fn kept_for(&self, partition: Option<&IntOrString>) -> i32 {
        partition_replicas(partition, Some(replicas(self))).unwrap_or(0)
    }

    fn status_view(&self) -> StatusView {
        let status = self.status.clone().unwrap_or_default();
        let conditions = apps_v1_conditions!(status.conditions);
        replica_status_view!(status, conditions)
    }
}

impl PodTemplateWorkload for StatefulSet {
    spec_accessors!(
        default: |set: &mut StatefulSet| kruise_crds::defaults::default_statefulset_v1beta1(set, true),
        validate: validate_statefulset_v1beta1
    );
    pod_update_policy_accessors!();

    fn strategy_problem(&self) -> Option<String> {
        (self.spec.update_strategy.type_ == StatefulSetUpdateStrategyType::OnDelete).then(|| {
            "its update strategy is OnDelete: pods change only when deleted, so a rollout cannot drive them".into()
        })
    }

    fn set_max_surge(&mut self, _value: IntOrString) -> Result<(), String> {
        Err("a StatefulSet replaces pods without surging: maxSurge is not supported (use maxUnavailable)"
            .into())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::{Value, json};

    use super::*;
    use crate::{
        model::IntOrPercent,
        store::RolloutState,
        workload::{
            apply_request, check_promotion, kept_by_partition, progress, rolled_back,
            testing::{ProblemCase, assert_problems, request, resources, state_of},
            with_partition,
        },
    };

    fn statefulset(replicas: i32, rolling: Value) -> StatefulSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "default", "generation": 1},
            "spec": {
                "replicas": replicas,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}},
                             "spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                                      "containers": [{"name": "main", "image": "nginx:1.25"}]}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}
            },
            "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                       "updatedReadyReplicas": replicas, "readyReplicas": replicas,
                       "updateRevision": "db-aaa", "currentRevision": "db-aaa"}
        }))
        .unwrap()
    }

    fn set() -> StatefulSet {
        statefulset(3, json!({"podUpdatePolicy": "InPlaceIfPossible"}))
    }

    #[test]
    fn partitions_are_written_as_counts() {
        // (request partition, replicas, written partition)
        let cases = [
            (IntOrPercent::Int(2), 3, Some(2)),
            (IntOrPercent::Percent("50%".into()), 3, Some(2)),
            (IntOrPercent::Percent("99%".into()), 3, Some(2)),
            (IntOrPercent::Percent("100%".into()), 3, Some(3)),
            (IntOrPercent::Percent("0%".into()), 3, Some(0)),
            (IntOrPercent::Percent("10%".into()), 10, Some(1)),
        ];
        for (partition, replicas, written) in cases {
            let mut req = request(WorkloadKind::StatefulSet, &[("main", "nginx:1.26")]);
            req.strategy.partition = Some(partition.clone());
            let next = apply_request(&statefulset(replicas, json!({})), &req).unwrap();
            let rolling = next.spec.update_strategy.rolling_update.clone().unwrap();
            assert_eq!(rolling.partition, written, "{partition:?} of {replicas}");
            assert_eq!(kept_by_partition(&next), written.unwrap_or(0));
        }
        let next =
            apply_request(&set(), &request(WorkloadKind::StatefulSet, &[("main", "nginx:1.26")])).unwrap();
        assert_eq!(next.spec.update_strategy.rolling_update.unwrap().partition, None, "omitted: every pod");
    }

    #[test]
    fn applies_images_resources_and_strategy() {
        let mut req = request(WorkloadKind::StatefulSet, &[("main", "nginx:1.26")]);
        req.resources.insert("main".into(), resources(&[("memory", "64Mi")], &[]));
        req.strategy.pod_update_policy = Some(PodUpdatePolicy::ReCreate);
        req.strategy.max_unavailable = Some(IntOrPercent::Int(1));
        req.strategy.paused = Some(true);
        let next = apply_request(&set(), &req).unwrap();
        let container = &next.spec.template.spec.as_ref().unwrap().containers[0];
        assert_eq!(container.image.as_deref(), Some("nginx:1.26"));
        assert_eq!(container.resources.as_ref().unwrap().requests.as_ref().unwrap()["memory"].0, "64Mi");
        let rolling = next.spec.update_strategy.rolling_update.unwrap();
        assert_eq!(rolling.pod_update_policy, KruisePodUpdatePolicy::ReCreate);
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(1)));
        assert!(rolling.paused);
    }

    #[test]
    fn names_the_request_field_of_each_problem() {
        let without_gate = {
            let mut set = statefulset(3, json!({}));
            set.spec.template.spec.as_mut().unwrap().readiness_gates = None;
            set
        };
        let on_delete = {
            let mut set = set();
            set.spec.update_strategy.type_ = StatefulSetUpdateStrategyType::OnDelete;
            set
        };
        let in_place = |req: &mut crate::model::RolloutRequest| {
            req.strategy.pod_update_policy = Some(PodUpdatePolicy::InPlaceIfPossible)
        };
        let in_place_only_resources = |req: &mut crate::model::RolloutRequest| {
            req.strategy.pod_update_policy = Some(PodUpdatePolicy::InPlaceOnly);
            req.resources.insert("main".into(), resources(&[("cpu", "1")], &[]));
        };
        // (case, workload, images, edit, fields, message fragment of the first)
        let cases: Vec<ProblemCase<StatefulSet>> = vec![
            (
                "resources with InPlaceOnly",
                set(),
                &[("main", "nginx:2")],
                in_place_only_resources,
                &["workload"],
                "only container images may change",
            ),
            (
                "unknown container",
                set(),
                &[("sidecar", "busybox")],
                |_| {},
                &["images.sidecar"],
                "StatefulSet db has no container named \"sidecar\" (containers: main)",
            ),
            (
                "partition above replicas",
                set(),
                &[("main", "nginx:2")],
                |r| r.strategy.partition = Some(IntOrPercent::Int(4)),
                &["strategy.partition"],
                "between 0 and the workload's replicas (3)",
            ),
            (
                "negative partition",
                set(),
                &[("main", "nginx:2")],
                |r| r.strategy.partition = Some(IntOrPercent::Int(-1)),
                &["strategy.partition"],
                "out of range",
            ),
            (
                "percentage above 100",
                set(),
                &[("main", "nginx:2")],
                |r| r.strategy.partition = Some(IntOrPercent::Percent("120%".into())),
                &["strategy.partition"],
                "between 0% and 100%",
            ),
            (
                "max surge",
                set(),
                &[("main", "nginx:2")],
                |r| r.strategy.max_surge = Some(IntOrPercent::Int(1)),
                &["strategy.maxSurge"],
                "not supported",
            ),
            (
                "in place without the readiness gate",
                without_gate,
                &[("main", "nginx:2")],
                in_place,
                &["strategy.podUpdatePolicy"],
                "InPlaceUpdateReady",
            ),
            ("OnDelete", on_delete, &[("main", "nginx:2")], |_| {}, &["workload.name"], "OnDelete"),
        ];
        assert_problems(cases);
    }

    #[test]
    fn derives_states_and_progress_from_the_status() {
        let rolling = |partition: Option<i32>, updated: i32, updated_ready: i32, paused: bool| {
            let mut set = statefulset(3, json!({"partition": partition, "paused": paused}));
            set.metadata.generation = Some(2);
            let status = set.status.as_mut().unwrap();
            status.observed_generation = 2;
            status.update_revision = "db-bbb".into();
            status.updated_replicas = updated;
            status.updated_ready_replicas = updated_ready;
            set
        };
        // (partition, updated, updated ready, paused, revision, state, reason)
        let cases = [
            (Some(1), 1, 0, false, "db-bbb", RolloutState::Progressing, "Observed"),
            (Some(1), 2, 2, false, "db-bbb", RolloutState::Paused, "PartitionReached"),
            (None, 2, 2, false, "db-bbb", RolloutState::Progressing, "Observed"),
            (None, 1, 1, true, "db-bbb", RolloutState::Paused, "Paused"),
            (None, 3, 3, false, "db-bbb", RolloutState::Succeeded, "Observed"),
            (None, 3, 2, false, "db-bbb", RolloutState::Progressing, "Observed"),
            (None, 3, 3, false, "db-ccc", RolloutState::Aborted, "Superseded"),
        ];
        for (partition, updated, ready, paused, revision, state, reason) in cases {
            let set = rolling(partition, updated, ready, paused);
            assert_eq!(
                state_of(&set, 2, revision),
                (state, reason),
                "{partition:?} {updated}/{ready} {paused}"
            );
        }
        let set = rolling(Some(1), 2, 1, false);
        let progress = progress(&set, Some("db-bbb"), None, chrono::Utc::now());
        assert_eq!(
            (
                progress.replicas,
                progress.updated,
                progress.updated_ready,
                progress.expected_updated,
                progress.partition
            ),
            (3, 2, 1, 2, 1)
        );
        assert_eq!(progress.update_revision.as_deref(), Some("db-bbb"));
    }

    #[test]
    fn promote_and_abort_clear_the_partition() {
        let set = statefulset(3, json!({"partition": 2, "paused": true}));
        assert_eq!(check_promotion(&set, &IntOrPercent::Int(1)), Ok(IntOrString::Int(1)));
        assert!(check_promotion(&set, &IntOrPercent::Int(3)).unwrap_err().contains("only moves forward"));
        let promoted = with_partition(&set, Some(IntOrString::String("34%".into())));
        let rolling = promoted.spec.update_strategy.rolling_update.as_ref().unwrap();
        assert_eq!((rolling.partition, rolling.paused), (Some(2), false), "34% of 3 rounds up to 2");
        let template: PodTemplateSpec =
            serde_json::from_value(json!({"spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}}))
                .unwrap();
        let back = rolled_back(&set, template.clone());
        assert_eq!(back.spec.template, template);
        assert_eq!(back.spec.update_strategy.rolling_update.unwrap().partition, None);
    }
}
