//! Test fixtures shared by the decision core's table tests: a set `web` in namespace `prod` and
//! pods of it in any state.

use k8s_openapi::{
    api::core::v1::{
        Container, PersistentVolumeClaim, PersistentVolumeClaimSpec, Pod, PodCondition, PodSpec, PodStatus,
        PodTemplateSpec,
    },
    apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time},
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{StatefulSet, StatefulSetSpec},
    common::{LIFECYCLE_STATE_KEY, LifecycleState},
};

use super::{identity::new_pod, options::CoreOptions};

/// "Now" of every test: a fixed instant.
pub fn now() -> Timestamp {
    Timestamp::from_second(1_000_000).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Set `web` in `prod`: `replicas` pods of `nginx:1`, service `web-svc`, one claim template
/// `data` labelled `tier=db`.
pub fn set(replicas: i32) -> StatefulSet {
    let mut set = StatefulSet::new(
        "web",
        StatefulSetSpec {
            replicas: Some(replicas),
            service_name: "web-svc".into(),
            selector: Some(LabelSelector {
                match_labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some([("app".to_string(), "web".to_string())].into()),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "main".into(),
                        image: Some("nginx:1".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            volume_claim_templates: vec![PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some("data".into()),
                    labels: Some([("tier".to_string(), "db".to_string())].into()),
                    ..Default::default()
                },
                spec: Some(PersistentVolumeClaimSpec::default()),
                status: None,
            }],
            ..Default::default()
        },
    );
    set.metadata.namespace = Some("prod".into());
    set.metadata.uid = Some("set-uid".into());
    set.metadata.generation = Some(1);
    set
}

/// A pod of [`set`] being built: created Running and Ready (since long ago) at a revision.
pub struct P(pub Pod);

impl P {
    /// Pod `web-<ordinal>` at `revision`, Running, Ready, lifecycle `Normal`.
    pub fn new(ordinal: i32, revision: &str) -> Self {
        let sts = set(1);
        let mut pod = new_pod(&sts, &sts.spec.template, revision, ordinal, &CoreOptions::default(), now());
        pod.metadata.uid = Some(format!("uid-{ordinal}"));
        pod.status = Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(Time(Timestamp::UNIX_EPOCH)),
                ..Default::default()
            }]),
            ..Default::default()
        });
        P(pod)
    }

    /// In phase `phase`, not Ready.
    pub fn phase(mut self, phase: &str) -> Self {
        let status = self.0.status.get_or_insert_with(Default::default);
        status.phase = Some(phase.into());
        status.conditions = None;
        self
    }

    /// Running but not Ready.
    pub fn not_ready(self) -> Self {
        self.phase("Running")
    }

    /// Ready since `since`.
    pub fn ready_since(mut self, since: Timestamp) -> Self {
        if let Some(conditions) = self.0.status.as_mut().and_then(|s| s.conditions.as_mut()) {
            for condition in conditions.iter_mut().filter(|c| c.type_ == "Ready") {
                condition.last_transition_time = Some(Time(since));
            }
        }
        self
    }

    /// With a deletionTimestamp.
    pub fn terminating(mut self) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
        self
    }

    /// In lifecycle state `state`.
    pub fn state(self, state: LifecycleState) -> Self {
        self.label(LIFECYCLE_STATE_KEY, state.as_str())
    }

    /// With label `key=value`.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.0.metadata.labels.get_or_insert_with(Default::default).insert(key.into(), value.into());
        self
    }

    /// With condition `type_` at `status`.
    pub fn condition(mut self, type_: &str, status: &str) -> Self {
        let conditions =
            self.0.status.get_or_insert_with(Default::default).conditions.get_or_insert_with(Vec::new);
        conditions.retain(|c| c.type_ != type_);
        conditions.push(PodCondition { type_: type_.into(), status: status.into(), ..Default::default() });
        self
    }

    /// The pod.
    pub fn pod(self) -> Pod {
        self.0
    }
}
