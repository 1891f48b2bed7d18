//! Test fixtures of the decision core: DaemonSet `ds` in namespace `default`, nodes and pods.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Container, Node, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta, Time},
        util::intstr::IntOrString,
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{DaemonSet, DaemonSetSpec},
    common::well_known::CONTROLLER_REVISION_HASH,
};

/// "Now" of every test: a fixed instant.
pub fn now() -> Timestamp {
    Timestamp::from_second(1_000_000).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// A defaulted DaemonSet of `nginx:1` selecting `app=<name>`.
pub fn daemonset(name: &str) -> DaemonSet {
    let labels: BTreeMap<String, String> = [("app".to_string(), name.to_string())].into();
    let mut ds = DaemonSet::new(
        name,
        DaemonSetSpec {
            selector: Some(LabelSelector { match_labels: Some(labels.clone()), ..Default::default() }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "main".into(),
                        image: Some("nginx:1".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
    );
    ds.metadata.namespace = Some("default".into());
    ds.metadata.uid = Some("ds-uid".into());
    kruise_crds::defaults::default_daemonset_v1beta1(&mut ds);
    ds
}

/// `ds` with `maxSurge` set and `maxUnavailable` 0.
pub fn surge(mut ds: DaemonSet, surge: i32) -> DaemonSet {
    let rolling = ds.spec.update_strategy.rolling_update.get_or_insert_with(Default::default);
    rolling.max_surge = Some(IntOrString::Int(surge));
    rolling.max_unavailable = Some(IntOrString::Int(0));
    ds
}

/// A node with labels.
pub fn node(name: &str, labels: &[(&str, &str)]) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A pod of `ds` bound to `node` at revision `hash`, Running but not Ready.
pub fn pod(name: &str, node: &str, hash: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            labels: Some(
                [
                    ("app".to_string(), "ds".to_string()),
                    (CONTROLLER_REVISION_HASH.to_string(), hash.to_string()),
                ]
                .into(),
            ),
            creation_timestamp: Some(Time(now())),
            ..Default::default()
        },
        spec: Some(PodSpec { node_name: Some(node.into()), ..Default::default() }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![]),
            ..Default::default()
        }),
    }
}

/// [`pod`], Ready since `since`.
pub fn ready_pod(name: &str, node: &str, hash: &str, since: Timestamp) -> Pod {
    let mut pod = pod(name, node, hash);
    pod.status.as_mut().and_then(|s| s.conditions.as_mut()).into_iter().for_each(|c| {
        c.push(PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(since)),
            ..Default::default()
        })
    });
    pod
}
