//! Advanced DaemonSet (`apps.kruise.io/v1beta1`) as a [`RolloutTarget`]. Its pods are one per
//! node, so the counts are nodes: `status.desiredNumberScheduled` is what a finished rollout has
//! updated, and a percentage partition is scaled against it rounding down, as the DaemonSet
//! controller does. `podUpdatePolicy` maps to `rollingUpdateType` (InPlaceIfPossible stays,
//! ReCreate is Standard; there is no in-place-only update). The status has no count of updated
//! ready pods; it is taken as the available pods less those not updated (a lower bound, so a
//! rollout never reads as done early).

use k8s_openapi::{
    api::core::v1::PodTemplateSpec,
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use kruise_crds::{
    apps::v1beta1::{
        DaemonSet, DaemonSetRollingUpdateType, DaemonSetUpdateStrategyType, RollingUpdateDaemonSet,
    },
    intstr::scaled_value,
    validation::validate_daemonset_v1beta1,
};
use kube::ResourceExt;

use super::{PodTemplateWorkload, RolloutTarget, StatusView};
use crate::model::{PodUpdatePolicy, WorkloadKind};

fn rolling(set: &mut DaemonSet) -> &mut RollingUpdateDaemonSet {
    set.spec.update_strategy.rolling_update.get_or_insert_with(Default::default)
}

impl RolloutTarget for DaemonSet {
    const KIND: WorkloadKind = WorkloadKind::DaemonSet;

    template_target_accessors!();

    fn desired(&self) -> i32 {
        self.status.as_ref().map_or(0, |s| s.desired_number_scheduled)
    }

    fn partition(&self) -> Option<IntOrString> {
        self.spec.update_strategy.rolling_update.as_ref()?.partition.clone()
    }

    fn set_partition(&mut self, partition: Option<IntOrString>) {
        rolling(self).partition = partition;
    }

    fn kept_for(&self, partition: Option<&IntOrString>) -> i32 {
        let desired = self.desired();
        partition
            .and_then(|p| scaled_value(p, desired, false).ok())
            .map_or(0, |kept| kept.clamp(0, desired.max(0)))
    }

    fn paused(&self) -> bool {
        self.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.paused).unwrap_or(false)
    }

    fn set_paused(&mut self, paused: bool) {
        rolling(self).paused = Some(paused);
    }

    fn status_view(&self) -> StatusView {
        let status = self.status.clone().unwrap_or_default();
        let not_updated = (status.current_number_scheduled - status.updated_number_scheduled).max(0);
        StatusView {
            observed_generation: status.observed_generation,
            current_revision: String::new(),
            existing: status.current_number_scheduled,
            updated: status.updated_number_scheduled,
            updated_ready: (status.number_available - not_updated)
                .clamp(0, status.updated_number_scheduled.max(0)),
            ready: status.number_ready,
            conditions: apps_v1_conditions!(status.conditions),
            label_selector: None,
            update_revision: status.update_revision,
        }
    }
}

impl PodTemplateWorkload for DaemonSet {
    spec_accessors!(default: kruise_crds::defaults::default_daemonset_v1beta1, validate: validate_daemonset_v1beta1);

    fn strategy_problem(&self) -> Option<String> {
        (self.spec.update_strategy.type_ == DaemonSetUpdateStrategyType::OnDelete).then(|| {
            "its update strategy is OnDelete: pods change only when deleted, so a rollout cannot drive them".into()
        })
    }

    fn set_pod_update_policy(&mut self, policy: PodUpdatePolicy) -> Result<(), String> {
        rolling(self).type_ = match policy {
            PodUpdatePolicy::InPlaceIfPossible => DaemonSetRollingUpdateType::InPlaceIfPossible,
            PodUpdatePolicy::ReCreate => DaemonSetRollingUpdateType::Standard,
            PodUpdatePolicy::InPlaceOnly => {
                return Err(
                    "a DaemonSet has no in-place-only update: use InPlaceIfPossible or ReCreate".into()
                );
            }
        };
        Ok(())
    }

    fn set_max_unavailable(&mut self, value: IntOrString) {
        rolling(self).max_unavailable = Some(value);
    }

    fn set_max_surge(&mut self, value: IntOrString) -> Result<(), String> {
        rolling(self).max_surge = Some(value);
        Ok(())
    }

    /// The controller names a revision `<daemonset>-<hash>` and reports only the hash.
    fn revision_object_names(&self, revision: &str) -> Vec<String> {
        vec![format!("{}-{revision}", self.name_any()), revision.to_string()]
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
            apply_request, check_promotion, kept_by_partition, progress,
            testing::{ProblemCase, assert_problems, request, state_of},
        },
    };

    fn daemonset(nodes: i32, rolling: Value) -> DaemonSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "default", "generation": 1},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}},
                             "spec": {"containers": [{"name": "agent", "image": "busybox:1.36"}]}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}
            },
            "status": {"observedGeneration": 1, "desiredNumberScheduled": nodes, "currentNumberScheduled": nodes,
                       "updatedNumberScheduled": nodes, "numberReady": nodes, "numberAvailable": nodes,
                       "numberMisscheduled": 0, "updateRevision": "5d8f"}
        }))
        .unwrap()
    }

    #[test]
    fn maps_the_strategy() {
        // (podUpdatePolicy, maxSurge, maxUnavailable, rollingUpdateType)
        let cases = [
            (PodUpdatePolicy::InPlaceIfPossible, None, 1, DaemonSetRollingUpdateType::InPlaceIfPossible),
            (PodUpdatePolicy::ReCreate, Some(1), 0, DaemonSetRollingUpdateType::Standard),
        ];
        for (policy, surge, unavailable, expected) in cases {
            let mut req = request(WorkloadKind::DaemonSet, &[("agent", "busybox:1.37")]);
            req.strategy.pod_update_policy = Some(policy);
            req.strategy.partition = Some(IntOrPercent::Percent("50%".into()));
            req.strategy.max_surge = surge.map(IntOrPercent::Int);
            req.strategy.max_unavailable = Some(IntOrPercent::Int(unavailable));
            let next = apply_request(&daemonset(3, json!({})), &req).unwrap();
            let rolling = next.spec.update_strategy.rolling_update.clone().unwrap();
            assert_eq!(rolling.type_, expected);
            assert_eq!(rolling.partition, Some(IntOrString::String("50%".into())));
            assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(unavailable)));
            assert_eq!((rolling.max_surge, rolling.paused), (surge.map(IntOrString::Int), Some(false)));
            assert_eq!(kept_by_partition(&next), 1, "50% of 3 nodes rounds down to 1");
            assert_eq!(next.spec.template.spec.unwrap().containers[0].image.as_deref(), Some("busybox:1.37"));
        }
    }

    #[test]
    fn names_the_request_field_of_each_problem() {
        let on_delete = {
            let mut set = daemonset(3, json!({}));
            set.spec.update_strategy.type_ = DaemonSetUpdateStrategyType::OnDelete;
            set
        };
        // (case, workload, images, edit, fields, message fragment of the first)
        let cases: Vec<ProblemCase<DaemonSet>> = vec![
            ("OnDelete", on_delete, &[("agent", "busybox:2")], |_| {}, &["workload.name"], "OnDelete"),
            (
                "surge while updating in place",
                daemonset(3, json!({})),
                &[("agent", "busybox:2")],
                |r| {
                    r.strategy.pod_update_policy = Some(PodUpdatePolicy::InPlaceIfPossible);
                    r.strategy.max_surge = Some(IntOrPercent::Int(1));
                },
                &["strategy.maxSurge"],
                "must be 0 for rollingUpdateType InPlaceIfPossible",
            ),
            (
                "unknown container",
                daemonset(3, json!({})),
                &[("sidecar", "busybox")],
                |_| {},
                &["images.sidecar"],
                "DaemonSet agent has no container named \"sidecar\"",
            ),
            (
                "partition above the nodes",
                daemonset(3, json!({})),
                &[("agent", "busybox:2")],
                |r| r.strategy.partition = Some(IntOrPercent::Int(4)),
                &["strategy.partition"],
                "between 0 and the workload's replicas (3)",
            ),
            (
                "in place only",
                daemonset(3, json!({})),
                &[("agent", "busybox:2")],
                |r| r.strategy.pod_update_policy = Some(PodUpdatePolicy::InPlaceOnly),
                &["strategy.podUpdatePolicy"],
                "InPlaceIfPossible or ReCreate",
            ),
            (
                "surge and unavailability both zero",
                daemonset(3, json!({})),
                &[("agent", "busybox:2")],
                |r| {
                    r.strategy.max_surge = Some(IntOrPercent::Int(0));
                    r.strategy.max_unavailable = Some(IntOrPercent::Int(0));
                },
                &["strategy.maxUnavailable"],
                "",
            ),
            (
                "bad image",
                daemonset(3, json!({})),
                &[("agent", "Busy Box")],
                |_| {},
                &["images.agent"],
                "invalid image reference",
            ),
        ];
        assert_problems(cases);
    }

    #[test]
    fn derives_states_and_progress_from_the_status() {
        let rolling = |partition: Option<i32>, updated: i32, available: i32, paused: bool| {
            let mut set = daemonset(4, json!({"partition": partition, "paused": paused}));
            set.metadata.generation = Some(2);
            let status = set.status.as_mut().unwrap();
            status.observed_generation = 2;
            status.update_revision = "77c4".into();
            status.updated_number_scheduled = updated;
            status.number_available = available;
            set
        };
        // (partition, updated nodes, available pods, paused, state, reason)
        let cases = [
            (Some(2), 1, 4, false, RolloutState::Progressing, "Observed"),
            (Some(2), 2, 3, false, RolloutState::Progressing, "Observed"),
            (Some(2), 2, 4, false, RolloutState::Paused, "PartitionReached"),
            (None, 4, 3, false, RolloutState::Progressing, "Observed"),
            (None, 4, 4, false, RolloutState::Succeeded, "Observed"),
            (None, 2, 4, true, RolloutState::Paused, "Paused"),
        ];
        for (partition, updated, available, paused, state, reason) in cases {
            let set = rolling(partition, updated, available, paused);
            assert_eq!(
                state_of(&set, 2, "77c4"),
                (state, reason),
                "{partition:?} {updated}/{available} {paused}"
            );
        }
        let set = rolling(Some(1), 3, 3, false);
        let progress = progress(&set, Some("77c4"), None, chrono::Utc::now());
        assert_eq!(
            (
                progress.replicas,
                progress.updated,
                progress.updated_ready,
                progress.expected_updated,
                progress.partition
            ),
            (4, 3, 2, 3, 1),
            "3 available with 1 not updated: at least 2 updated ones are"
        );
        assert_eq!(
            check_promotion(&set, &IntOrPercent::Int(2)).unwrap_err(),
            "keeps 2 pod(s) back, more than the current partition (1): promote only moves forward"
        );
        assert_eq!(set.revision_object_names("77c4"), ["agent-77c4", "77c4"]);
    }
}
