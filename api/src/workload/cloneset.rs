//! CloneSet as a [`RolloutTarget`]: its partition is a count or a percentage of replicas
//! (rounded up, and below 100% never every pod), and it reports updated-ready pods itself.

use k8s_openapi::{
    api::core::v1::PodTemplateSpec,
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use kruise_crds::{
    apps::v1beta1::{CloneSet, PodUpdatePolicy as KruisePodUpdatePolicy},
    intstr::partition_replicas,
    validation::validate_cloneset_v1beta1,
};

use super::{PodTemplateWorkload, RolloutTarget, StatusView, condition};
use crate::model::{PodUpdatePolicy, WorkloadKind};

/// The desired replicas (CloneSet default 1).
pub fn replicas(set: &CloneSet) -> i32 {
    set.spec.replicas.unwrap_or(1)
}

impl RolloutTarget for CloneSet {
    const KIND: WorkloadKind = WorkloadKind::CloneSet;

    template_target_accessors!();
    rolling_update_pause_accessors!();

    fn desired(&self) -> i32 {
        replicas(self)
    }

    fn partition(&self) -> Option<IntOrString> {
        self.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.partition.clone())
    }

    fn set_partition(&mut self, partition: Option<IntOrString>) {
        self.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).partition = partition;
    }

    fn kept_for(&self, partition: Option<&IntOrString>) -> i32 {
        partition_replicas(partition, Some(replicas(self))).unwrap_or(0)
    }

    fn status_view(&self) -> StatusView {
        let status = self.status.clone().unwrap_or_default();
        let conditions = status
            .conditions
            .iter()
            .map(|c| {
                condition(
                    &c.type_,
                    &c.status,
                    Some(&c.reason),
                    Some(&c.message),
                    c.last_transition_time.as_ref(),
                )
            })
            .collect();
        replica_status_view!(status, conditions)
    }
}

impl PodTemplateWorkload for CloneSet {
    spec_accessors!(
        default: |set: &mut CloneSet| kruise_crds::defaults::default_cloneset_v1beta1(set, true),
        validate: validate_cloneset_v1beta1
    );
    pod_update_policy_accessors!();

    fn strategy_problem(&self) -> Option<String> {
        None
    }

    fn set_max_surge(&mut self, value: IntOrString) -> Result<(), String> {
        self.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).max_surge = Some(value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;
    use crate::{
        model::IntOrPercent,
        store::RolloutState,
        workload::{
            DEADLINE_EXCEEDED, apply_request, derive, kept_by_partition,
            testing::{fields, request, resources, state_of},
            with_partition, with_paused,
        },
    };

    fn cloneset(replicas: i32) -> CloneSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default", "generation": 1},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}
            },
            "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                       "updatedReadyReplicas": replicas, "readyReplicas": replicas,
                       "updateRevision": "web-aaa", "currentRevision": "web-aaa"}
        }))
        .unwrap()
    }

    fn cs_request(images: &[(&str, &str)]) -> crate::model::RolloutRequest {
        request(WorkloadKind::CloneSet, images)
    }

    #[test]
    fn applies_images_resources_and_strategy() {
        let mut req = cs_request(&[("nginx", "nginx:1.26")]);
        req.resources.insert("nginx".into(), resources(&[("cpu", "100m")], &[]));
        req.strategy.partition = Some(IntOrPercent::Percent("40%".into()));
        req.strategy.max_unavailable = Some(IntOrPercent::Int(2));
        let next = apply_request(&cloneset(5), &req).unwrap();
        let container = &next.spec.template.spec.as_ref().unwrap().containers[0];
        assert_eq!(container.image.as_deref(), Some("nginx:1.26"));
        assert_eq!(container.resources.as_ref().unwrap().requests.as_ref().unwrap()["cpu"].0, "100m");
        let rolling = next.spec.update_strategy.rolling_update.clone().unwrap();
        assert_eq!(rolling.partition, Some(IntOrString::String("40%".into())));
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(2)));
        assert!(!rolling.paused);
        assert_eq!(kept_by_partition(&next), 2, "40% of 5 rounds up to 2");
    }

    #[test]
    fn names_the_request_field_of_each_problem() {
        let mut req = cs_request(&[("nginx", "Nginx:UPPER"), ("sidecar", "busybox")]);
        req.strategy.partition = Some(IntOrPercent::Int(9));
        req.strategy.max_surge = Some(IntOrPercent::Percent("lots".into()));
        req.resources.insert("nginx".into(), resources(&[("cpu", "a lot")], &[]));
        let errors = apply_request(&cloneset(5), &req).unwrap_err();
        assert_eq!(
            fields(&errors),
            [
                "images.nginx",
                "images.sidecar",
                "resources.nginx.requests.cpu",
                "strategy.partition",
                "strategy.maxSurge"
            ],
            "{errors:?}"
        );
        assert!(errors[1].message.contains("CloneSet web has no container named \"sidecar\""), "{errors:?}");
        assert!(errors[3].message.contains("between 0 and the workload's replicas (5)"), "{errors:?}");
        let mut percent = cs_request(&[("nginx", "nginx:2")]);
        percent.strategy.partition = Some(IntOrPercent::Percent("150%".into()));
        assert_eq!(fields(&apply_request(&cloneset(5), &percent).unwrap_err()), ["strategy.partition"]);
        assert_eq!(fields(&apply_request(&cloneset(5), &cs_request(&[])).unwrap_err()), ["images"]);
    }

    #[test]
    fn cloneset_validation_is_mapped_to_request_fields() {
        let mut req = cs_request(&[("nginx", "nginx:1.26")]);
        req.resources.insert("nginx".into(), resources(&[("cpu", "2")], &[("cpu", "1")]));
        let errors = apply_request(&cloneset(2), &req).unwrap_err();
        assert_eq!(fields(&errors), ["resources.nginx"], "{errors:?}");
    }

    fn with_status(
        mut set: CloneSet,
        f: impl FnOnce(&mut kruise_crds::apps::v1beta1::CloneSetStatus),
    ) -> CloneSet {
        f(set.status.as_mut().unwrap());
        set
    }

    #[test]
    fn derives_states_from_the_status() {
        let base = cloneset(4);
        let mut rolling = base.clone();
        rolling.metadata.generation = Some(2);
        let rolling = with_status(rolling, |s| {
            s.observed_generation = 2;
            s.update_revision = "web-bbb".into();
            s.updated_replicas = 1;
            s.updated_ready_replicas = 0;
        });
        let pending = derive(RolloutState::Pending, Some(3), None, Some(&rolling));
        assert_eq!(pending.state, RolloutState::Pending, "generation 3 not observed yet");
        let progressing = derive(RolloutState::Pending, Some(2), None, Some(&rolling));
        assert_eq!(
            (progressing.state, progressing.revision.as_deref()),
            (RolloutState::Progressing, Some("web-bbb"))
        );

        let done = with_status(rolling.clone(), |s| {
            s.updated_replicas = 4;
            s.updated_ready_replicas = 4;
        });
        assert_eq!(state_of(&done, 2, "web-bbb").0, RolloutState::Succeeded);
        assert_eq!(state_of(&done, 2, "web-ccc"), (RolloutState::Aborted, "Superseded"));
        assert_eq!(
            derive(RolloutState::Succeeded, Some(2), Some("web-ccc"), Some(&done)).state,
            RolloutState::Succeeded
        );
        assert_eq!(
            derive::<CloneSet>(RolloutState::Progressing, Some(2), Some("web-bbb"), None).state,
            RolloutState::Failed
        );

        let partitioned = with_status(with_partition(&rolling, Some(IntOrString::Int(2))), |s| {
            s.updated_replicas = 2;
            s.updated_ready_replicas = 2;
        });
        assert_eq!(state_of(&partitioned, 2, "web-bbb"), (RolloutState::Paused, "PartitionReached"));
        assert_eq!(state_of(&with_paused(&rolling, true), 2, "web-bbb").0, RolloutState::Paused);

        let stalled = with_status(rolling, |s| {
            s.conditions.push(kruise_crds::apps::v1beta1::CloneSetCondition {
                type_: "Progressing".into(),
                status: "False".into(),
                reason: DEADLINE_EXCEEDED.into(),
                message: "stuck".into(),
                ..Default::default()
            })
        });
        assert_eq!(state_of(&stalled, 2, "web-bbb"), (RolloutState::Failed, DEADLINE_EXCEEDED));
    }
}
