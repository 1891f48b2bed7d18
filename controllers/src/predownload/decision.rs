//! Whether a rollout pre-downloads its images: pure functions of numbers the workload has
//! already worked out.

use std::collections::BTreeMap;

use k8s_openapi::{api::core::v1::PodTemplateSpec, apimachinery::pkg::util::intstr::IntOrString};
use kruise_crds::{
    common::well_known::{IMAGE_PRE_DOWNLOAD_CREATED, IMAGE_PRE_DOWNLOAD_IGNORED},
    intstr::scaled_value,
};

/// Upstream's `minimumReplicasToPreDownloadImage`: CloneSets and StatefulSets this small do not
/// pre-download (a DaemonSet has no such floor).
pub const MINIMUM_REPLICAS: i32 = 3;

/// What to do about the update revision's images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The revision is already labelled created or ignored.
    AlreadyDecided,
    /// Fewer updated-ready pods than asked for: look again later.
    NotYet,
    /// Label the revision ignored, for this reason.
    Ignore(&'static str),
    /// Create one job per container whose image changed (container → image).
    Create(BTreeMap<String, String>),
}

/// A rollout as [`decide`] sees it, whatever the workload. `Default` is the most permissive
/// rollout: no minimum of ready pods, no exclusion, no size floor, updatable in place.
#[derive(Clone, Debug)]
pub struct Rollout<'a> {
    /// Labels of the update revision (where the decision is remembered).
    pub update_revision_labels: &'a BTreeMap<String, String>,
    /// Pods the workload wants (replicas; a DaemonSet's desired number scheduled).
    pub replicas: i32,
    /// Updated-ready pods required before pre-downloading (already scaled; see
    /// [`min_updated_ready`]).
    pub min_updated_ready: i32,
    /// Updated-ready pods of the update revision (0 when the status counts another revision).
    pub updated_ready: i32,
    /// Why the update strategy rules pre-download out (ReCreate, OnDelete), if it does.
    pub excluded_by_strategy: Option<&'static str>,
    /// Skip workloads of [`MINIMUM_REPLICAS`] pods or fewer.
    pub skip_small: bool,
    /// Pods kept at old revisions (already scaled).
    pub partition: i32,
    /// Pods updated at once (already scaled).
    pub max_unavailable: i32,
    /// Whether pods can move to the update revision in place.
    pub in_place_possible: bool,
    /// The images the update revision changes, per container ([`changed_images`]).
    pub changed_images: BTreeMap<String, String>,
}

impl Default for Rollout<'_> {
    fn default() -> Self {
        static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
        Self {
            update_revision_labels: &NO_LABELS,
            replicas: 0,
            min_updated_ready: 0,
            updated_ready: 0,
            excluded_by_strategy: None,
            skip_small: false,
            partition: 0,
            max_unavailable: 0,
            in_place_possible: true,
            changed_images: BTreeMap::new(),
        }
    }
}

/// Upstream's decision, in upstream's order: the minimum of updated-ready pods first, then a
/// decision already taken, then the reasons to ignore the revision.
pub fn decide(rollout: &Rollout<'_>) -> Decision {
    if rollout.min_updated_ready > rollout.updated_ready {
        return Decision::NotYet;
    }
    let labels = rollout.update_revision_labels;
    if labels.contains_key(IMAGE_PRE_DOWNLOAD_CREATED) || labels.contains_key(IMAGE_PRE_DOWNLOAD_IGNORED) {
        return Decision::AlreadyDecided;
    }
    if let Some(reason) = rollout.excluded_by_strategy {
        return Decision::Ignore(reason);
    }
    if rollout.skip_small && rollout.replicas <= MINIMUM_REPLICAS {
        return Decision::Ignore("replicas are 3 or fewer");
    }
    if rollout.partition == 0 && rollout.max_unavailable >= rollout.replicas {
        return Decision::Ignore("every pod updates in one batch");
    }
    if !rollout.in_place_possible {
        return Decision::Ignore("the revision cannot be updated in place");
    }
    Decision::Create(rollout.changed_images.clone())
}

/// The minimum of updated-ready pods, from the `imagePreDownloadMinUpdatedReadyPods` field or
/// else the `apps.kruise.io/image-predownload-min-updated-ready-pods` annotation (an int or a
/// percent of `replicas`, rounded up); 0 when neither is set or the value is malformed.
pub fn min_updated_ready(field: Option<i32>, annotation: Option<&str>, replicas: i32) -> i32 {
    let value = match (field, annotation) {
        (Some(count), _) => IntOrString::Int(count),
        (None, Some(text)) => match text.parse::<i32>() {
            Ok(count) => IntOrString::Int(count),
            Err(_) => IntOrString::String(text.to_string()),
        },
        (None, None) => return 0,
    };
    scaled_value(&value, replicas, true).unwrap_or(0)
}

/// Containers of `new` worth pulling: those none of the `old` templates has, and those whose
/// image differs from a same-named container of some old template (a DaemonSet compares with
/// every old revision, the others with the current one).
pub fn changed_images(old: &[&PodTemplateSpec], new: &PodTemplateSpec) -> BTreeMap<String, String> {
    let image_of = |template: &PodTemplateSpec, name: &str| {
        template
            .spec
            .iter()
            .flat_map(|spec| &spec.containers)
            .find(|c| c.name == name)
            .map(|c| c.image.clone().unwrap_or_default())
    };
    new.spec
        .iter()
        .flat_map(|spec| &spec.containers)
        .filter(|c| {
            let image = c.image.clone().unwrap_or_default();
            let olds: Vec<String> = old.iter().filter_map(|template| image_of(template, &c.name)).collect();
            olds.is_empty() || olds.iter().any(|old| *old != image)
        })
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use serde_json::json;

    use super::*;

    fn template(images: &[(&str, &str)]) -> PodTemplateSpec {
        serde_json::from_value(json!({"spec": {"containers": images.iter().map(|(n, i)| json!({"name": n, "image": i})).collect::<Vec<_>>()}})).unwrap()
    }

    #[test]
    fn decision_table() {
        let images: BTreeMap<String, String> = [("app".to_string(), "nginx:2".to_string())].into();
        let none = BTreeMap::new();
        let created = BTreeMap::from([(IMAGE_PRE_DOWNLOAD_CREATED.to_string(), "true".to_string())]);
        let ignored = BTreeMap::from([(IMAGE_PRE_DOWNLOAD_IGNORED.to_string(), "true".to_string())]);
        let base = |labels| Rollout {
            update_revision_labels: labels,
            replicas: 5,
            skip_small: true,
            max_unavailable: 1,
            changed_images: images.clone(),
            ..Rollout::default()
        };
        let cases: Vec<(&str, Rollout<'_>, Decision)> = vec![
            ("rolling in place", base(&none), Decision::Create(images.clone())),
            ("already created", base(&created), Decision::AlreadyDecided),
            ("already ignored", base(&ignored), Decision::AlreadyDecided),
            (
                "too few updated-ready pods, even when decided",
                Rollout { min_updated_ready: 2, updated_ready: 1, ..base(&created) },
                Decision::NotYet,
            ),
            (
                "enough updated-ready pods",
                Rollout { min_updated_ready: 2, updated_ready: 2, ..base(&none) },
                { Decision::Create(images.clone()) },
            ),
            (
                "excluded by the strategy",
                Rollout { excluded_by_strategy: Some("ReCreate"), ..base(&none) },
                Decision::Ignore("ReCreate"),
            ),
            (
                "3 pods skipped when small workloads are",
                Rollout { replicas: 3, max_unavailable: 1, ..base(&none) },
                Decision::Ignore("replicas are 3 or fewer"),
            ),
            (
                "3 pods kept without the floor (DaemonSet)",
                Rollout { replicas: 3, skip_small: false, ..base(&none) },
                Decision::Create(images.clone()),
            ),
            (
                "one batch",
                Rollout { max_unavailable: 5, ..base(&none) },
                Decision::Ignore("every pod updates in one batch"),
            ),
            (
                "a partition splits even one batch",
                Rollout { max_unavailable: 5, partition: 2, ..base(&none) },
                Decision::Create(images.clone()),
            ),
            (
                "not in place",
                Rollout { in_place_possible: false, ..base(&none) },
                Decision::Ignore("the revision cannot be updated in place"),
            ),
        ];
        for (name, rollout, want) in cases {
            assert_eq!(decide(&rollout), want, "{name}");
        }
    }

    #[test]
    fn min_updated_ready_table() {
        let cases = [
            (None, None, 10, 0),
            (Some(2), None, 10, 2),
            (Some(2), Some("5"), 10, 2),
            (None, Some("3"), 10, 3),
            (None, Some("25%"), 10, 3),
            (None, Some("nonsense"), 10, 0),
        ];
        for (field, annotation, replicas, want) in cases {
            assert_eq!(min_updated_ready(field, annotation, replicas), want, "{field:?} {annotation:?}");
        }
    }

    #[test]
    fn changed_images_table() {
        let cases: Vec<(Vec<PodTemplateSpec>, PodTemplateSpec, Vec<(&str, &str)>)> = vec![
            (vec![template(&[("a", "x:1")])], template(&[("a", "x:1")]), vec![]),
            (vec![template(&[("a", "x:1")])], template(&[("a", "x:2")]), vec![("a", "x:2")]),
            (vec![template(&[("a", "x:1")])], template(&[("a", "x:1"), ("b", "y:1")]), vec![("b", "y:1")]),
            (vec![template(&[("a", "x:1"), ("b", "y:1")])], template(&[("a", "x:1")]), vec![]),
            (vec![], template(&[("a", "x:1")]), vec![("a", "x:1")]),
            (
                vec![template(&[("a", "x:2")]), template(&[("a", "x:1")])],
                template(&[("a", "x:2")]),
                vec![("a", "x:2")],
            ),
            (vec![template(&[("a", "x:2")]), template(&[("b", "y:1")])], template(&[("a", "x:2")]), vec![]),
        ];
        for (old, new, want) in cases {
            let want: BTreeMap<String, String> =
                want.into_iter().map(|(c, i)| (c.to_string(), i.to_string())).collect();
            assert_eq!(changed_images(&old.iter().collect::<Vec<_>>(), &new), want, "{old:?}");
        }
    }
}
