//! The one pod predicate that reads the CloneSet itself: whether it was asked to delete the pod
//! (label or `scaleStrategy.podsToDelete`). Every other pod predicate is shared by the workload
//! controllers and lives in [`crate::workload::pods`].

use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1beta1::CloneSet;

use crate::workload::pods::has_specified_delete_label;

/// Whether the CloneSet was asked to delete this pod: by the specified-delete label or by name in
/// `scaleStrategy.podsToDelete` (upstream `isSpecifiedDelete`).
pub fn is_specified_delete(cs: &CloneSet, pod: &Pod) -> bool {
    if has_specified_delete_label(pod) {
        return true;
    }
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    cs.spec.scale_strategy.pods_to_delete.iter().any(|candidate| candidate == name)
}

#[cfg(test)]
mod tests {
    use kruise_crds::common::well_known::SPECIFIED_DELETE;

    use super::*;

    #[test]
    fn specified_delete_by_label_or_name() {
        let mut cs = CloneSet::new("web", Default::default());
        cs.spec.scale_strategy.pods_to_delete = vec!["web-b".into()];
        let mut by_name = Pod::default();
        by_name.metadata.name = Some("web-b".into());
        let mut by_label = Pod::default();
        by_label.metadata.labels = Some([(SPECIFIED_DELETE.to_string(), String::new())].into());
        let neither = Pod::default();
        assert!(is_specified_delete(&cs, &by_name));
        assert!(is_specified_delete(&cs, &by_label));
        assert!(!is_specified_delete(&cs, &neither));
    }
}
