//! What the NodeImage, ImagePullJob and ImageListPullJob controllers share (upstream
//! `pkg/util/imagejob` and bits of `pkg/daemon/util`): how a job's image becomes a NodeImage
//! entry (name and tag), which NodeImages a job targets, the time arithmetic on `metav1.Time`,
//! and the well-known names.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};
use kruise_crds::{
    apps::v1beta1::{ImagePullJob, NodeImage},
    selector,
    validation::parse_image_reference,
};

/// Finalizer an ImagePullJob carries until its synced pull secrets are released (upstream
/// `defaults.ProtectionFinalizer`).
pub const PROTECTION_FINALIZER: &str = "apps.kruise.io/deletion-protection";

/// Namespace the daemon reads pull secrets from; ImagePullJob pull secrets are copied there
/// (upstream `GetKruiseDaemonConfigNamespace`).
pub const DAEMON_CONFIG_NAMESPACE: &str = "kruise-daemon-config";

/// The NodeImage entry for an image reference (upstream `NormalizeImageRefToNameTag`): the
/// familiar repository name (`nginx`, `quay.io/org/app`) and the tag (`latest` when none is
/// written; the digest for a digested reference).
pub fn image_name_tag(image: &str) -> Result<(String, String), String> {
    let reference =
        parse_image_reference(image).map_err(|error| format!("invalid image {image}: {error}"))?;
    Ok((reference.familiar_name(), reference.pull_tag()))
}

/// Time elapsed from `since` to `now` (zero when `since` is in the future).
pub fn elapsed(since: &Time, now: Timestamp) -> Duration {
    let signed = now.duration_since(since.0);
    Duration::try_from(signed).unwrap_or(Duration::ZERO)
}

/// `now` as a `metav1.Time`.
pub fn time(now: Timestamp) -> Time {
    Time(now)
}

/// `namespace/name` of a namespaced object.
pub fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Splits a `namespace/name` key.
pub fn split_key(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

/// Whether a pod counts for a pod selector: scheduled, not terminating, not finished (upstream
/// `IsPodActive` plus a node name).
pub fn pod_is_active_on_a_node(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    pod.metadata.deletion_timestamp.is_none()
        && !matches!(phase, Some("Succeeded") | Some("Failed"))
        && pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty())
}

/// The NodeImages a job pulls on (upstream `GetNodeImagesForJob`), in order: with a pod
/// selector, the nodes of the active pods it matches in the job's namespace (pods by name, each
/// node once; nodes without a NodeImage are skipped); with node names, those that exist; with a
/// label selector, the NodeImages (which carry their node's labels) it matches; with neither,
/// every NodeImage (by name).
pub fn node_images_for_job<'a>(
    job: &ImagePullJob,
    node_images: &'a BTreeMap<String, NodeImage>,
    pods: &[&Pod],
) -> Vec<&'a NodeImage> {
    let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
    let template = &job.spec.template;
    if let Some(pod_selector) = &template.pod_selector {
        let mut pods: Vec<&&Pod> = pods
            .iter()
            .filter(|pod| pod.metadata.namespace.as_deref() == Some(namespace))
            .filter(|pod| pod_is_active_on_a_node(pod))
            .filter(|pod| {
                selector::matches(pod_selector, pod.metadata.labels.as_ref().unwrap_or(&BTreeMap::new()))
            })
            .collect();
        pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let mut seen = std::collections::BTreeSet::new();
        return pods
            .iter()
            .filter_map(|pod| pod.spec.as_ref().and_then(|s| s.node_name.clone()))
            .filter(|node| seen.insert(node.clone()))
            .filter_map(|node| node_images.get(&node))
            .collect();
    }
    match &template.selector {
        None => node_images.values().collect(),
        Some(node_selector) if !node_selector.names.is_empty() => {
            node_selector.names.iter().filter_map(|name| node_images.get(name)).collect()
        }
        Some(node_selector) => node_images
            .values()
            .filter(|node_image| {
                selector::matches(
                    &node_selector.label_selector,
                    node_image.metadata.labels.as_ref().unwrap_or(&BTreeMap::new()),
                )
            })
            .collect(),
    }
}

/// Whether a job could pull on `node_image` (upstream `GetActiveJobsForNodeImage`), to know
/// which jobs a NodeImage event concerns. A pod-selected job is concerned by every NodeImage
/// (its pods' nodes are not known here; the job's reconcile sorts it out).
pub fn job_concerns_node_image(job: &ImagePullJob, node_image: &NodeImage) -> bool {
    let template = &job.spec.template;
    if template.pod_selector.is_some() {
        return true;
    }
    let name = node_image.metadata.name.as_deref().unwrap_or_default();
    match &template.selector {
        None => true,
        Some(node_selector) if !node_selector.names.is_empty() => {
            node_selector.names.iter().any(|n| n == name)
        }
        Some(node_selector) => selector::matches(
            &node_selector.label_selector,
            node_image.metadata.labels.as_ref().unwrap_or(&BTreeMap::new()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn images_become_name_and_tag() {
        let digest = "sha256:0000000000000000000000000000000000000000000000000000000000000abc";
        let cases = [
            ("nginx", ("nginx", "latest")),
            ("nginx:1.25", ("nginx", "1.25")),
            ("docker.io/library/busybox:1", ("busybox", "1")),
            ("quay.io/org/app:v2", ("quay.io/org/app", "v2")),
            ("registry:5000/team/app", ("registry:5000/team/app", "latest")),
        ];
        for (image, (name, tag)) in cases {
            assert_eq!(image_name_tag(image), Ok((name.to_string(), tag.to_string())), "{image}");
        }
        assert_eq!(image_name_tag(&format!("app@{digest}")), Ok(("app".into(), digest.into())));
        assert!(image_name_tag("Not Valid").is_err());
    }

    fn node_image(name: &str, zone: &str) -> NodeImage {
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {"zone": zone}}}))
            .unwrap_or_default()
    }

    fn job(template: serde_json::Value) -> ImagePullJob {
        let mut spec = json!({"image": "nginx"});
        if let (Some(spec), Some(extra)) = (spec.as_object_mut(), template.as_object()) {
            spec.extend(extra.clone());
        }
        serde_json::from_value(json!({"metadata": {"name": "j", "namespace": "ns"}, "spec": spec}))
            .unwrap_or_default()
    }

    fn pod(name: &str, node: &str, app: &str, phase: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "labels": {"app": app}},
            "spec": {"nodeName": node, "containers": []},
            "status": {"phase": phase}
        }))
        .unwrap_or_default()
    }

    #[test]
    fn jobs_select_node_images_by_names_labels_or_pods() {
        let all: BTreeMap<String, NodeImage> = [("n1", "a"), ("n2", "b"), ("n3", "a")]
            .iter()
            .map(|(n, z)| (n.to_string(), node_image(n, z)))
            .collect();
        let names = |selected: Vec<&NodeImage>| -> Vec<String> {
            selected.iter().map(|n| n.metadata.name.clone().unwrap_or_default()).collect()
        };
        let pods = [
            pod("p2", "n3", "web", "Running"),
            pod("p1", "n2", "web", "Running"),
            pod("p3", "n2", "web", "Running"),
            pod("p4", "n1", "web", "Succeeded"),
            pod("p5", "n1", "db", "Running"),
            pod("p6", "gone", "web", "Running"),
        ];
        let pods: Vec<&Pod> = pods.iter().collect();
        let cases = [
            (json!({}), vec!["n1", "n2", "n3"]),
            (json!({"selector": {"names": ["n3", "n1", "missing"]}}), vec!["n3", "n1"]),
            (json!({"selector": {"matchLabels": {"zone": "a"}}}), vec!["n1", "n3"]),
            (json!({"podSelector": {"matchLabels": {"app": "web"}}}), vec!["n2", "n3"]),
        ];
        for (template, expected) in cases {
            let job = job(template.clone());
            assert_eq!(names(node_images_for_job(&job, &all, &pods)), expected, "{template}");
        }
        let by_zone = job(json!({"selector": {"matchLabels": {"zone": "a"}}}));
        assert!(job_concerns_node_image(&by_zone, &all["n1"]));
        assert!(!job_concerns_node_image(&by_zone, &all["n2"]));
        assert!(job_concerns_node_image(&job(json!({"podSelector": {}})), &all["n2"]));
    }

    #[test]
    fn elapsed_time_never_goes_negative() {
        let start = Timestamp::from_second(1000).unwrap_or(Timestamp::UNIX_EPOCH);
        let later = Timestamp::from_second(1030).unwrap_or(Timestamp::UNIX_EPOCH);
        assert_eq!(elapsed(&Time(start), later), Duration::from_secs(30));
        assert_eq!(elapsed(&Time(later), start), Duration::ZERO);
        assert_eq!(split_key("ns/name"), ("ns", "name"));
    }
}
