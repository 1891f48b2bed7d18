//! The upstream e2e suite (`test/e2e` of github.com/openkruise/kruise) cut into groups: one per
//! kind and API version, chosen by source file (Ginkgo's `--ginkgo.focus-file`), so that each
//! group runs alone on a fresh cluster and a spec's group never depends on its text.

/// One group of upstream e2e specs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// Short name, used on the command line and in the expectation file.
    pub name: &'static str,
    /// The Kruise kind (or feature) the specs exercise.
    pub kind: &'static str,
    /// Source files under `test/e2e/`.
    pub files: &'static [&'static str],
    /// Whether kruise-rs implements the kind (the others are listed, not yet counted).
    pub implemented: bool,
}

impl Group {
    /// The `--ginkgo.focus-file` value selecting exactly this group's files.
    pub fn focus_file(&self) -> String {
        let files: Vec<String> =
            self.files.iter().map(|file| format!("test/e2e/{}$", regex_escape(file))).collect();
        format!("({})", files.join("|"))
    }

    /// Whether a spec defined in `file` (a path ending in `test/e2e/<file>`) belongs here.
    pub fn owns(&self, file: &str) -> bool {
        self.files.iter().any(|own| file.ends_with(&format!("test/e2e/{own}")))
    }
}

fn regex_escape(text: &str) -> String {
    text.chars().fold(String::new(), |mut out, c| {
        if ".+*?()|[]{}^$\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
        out
    })
}

const fn group(
    name: &'static str,
    kind: &'static str,
    files: &'static [&'static str],
    implemented: bool,
) -> Group {
    Group { name, kind, files, implemented }
}

/// Every group of the suite, implemented kinds first.
pub const GROUPS: &[Group] = &[
    group("cloneset-v1alpha1", "CloneSet", &["apps/v1alpha1/cloneset.go"], true),
    group("cloneset-v1beta1", "CloneSet", &["apps/v1beta1/cloneset.go"], true),
    group("statefulset-v1beta1", "StatefulSet", &["apps/v1beta1/statefulset.go"], true),
    group("daemonset-v1alpha1", "DaemonSet", &["apps/v1alpha1/daemonset.go"], true),
    group(
        "daemonset-v1beta1",
        "DaemonSet",
        &["apps/v1beta1/daemonset.go", "apps/v1beta1/daemonset_filter_nodes.go"],
        true,
    ),
    group(
        "imagepull-v1alpha1",
        "ImagePullJob",
        &["apps/v1alpha1/pullimages.go", "apps/v1alpha1/imagelistpulljobs.go"],
        true,
    ),
    group(
        "imagepull-v1beta1",
        "ImagePullJob",
        &["apps/v1beta1/pullimages.go", "apps/v1beta1/imagelistpulljobs.go"],
        true,
    ),
    group("crr-v1alpha1", "ContainerRecreateRequest", &["apps/v1alpha1/containerrecreate.go"], true),
    group("crr-v1beta1", "ContainerRecreateRequest", &["apps/v1beta1/containerrecreaterequest.go"], true),
    group("podprobemarker", "PodProbeMarker", &["apps/v1alpha1/podprobemarker.go"], true),
    group("inplace-vpa", "CloneSet (in-place resize)", &["apps/v1alpha1/inplace_vpa.go"], true),
    group("containermeta", "CloneSet (env from metadata)", &["apps/v1alpha1/containermeta.go"], true),
    group(
        "containerpriority",
        "container launch priority",
        &["apps/v1alpha1/containerlaunchpriority.go"],
        true,
    ),
    group("deletionprotection", "deletion protection", &["policy/v1alpha1/deletionprotection.go"], true),
    group("broadcastjob-v1alpha1", "BroadcastJob", &["apps/v1alpha1/broadcastjob.go"], true),
    group("broadcastjob-v1beta1", "BroadcastJob", &["apps/v1beta1/broadcastjob.go"], true),
    group("advancedcronjob-v1alpha1", "AdvancedCronJob", &["apps/v1alpha1/advancedcronjob.go"], true),
    group("advancedcronjob-v1beta1", "AdvancedCronJob", &["apps/v1beta1/advancedcronjob.go"], true),
    group("ephemeraljob", "EphemeralJob", &["apps/v1alpha1/ephemeraljob.go"], true),
    group(
        "resourcedistribution-v1alpha1",
        "ResourceDistribution",
        &["apps/v1alpha1/resourcedistribution.go"],
        true,
    ),
    group(
        "resourcedistribution-v1beta1",
        "ResourceDistribution",
        &["apps/v1beta1/resourcedistribution.go"],
        true,
    ),
    group("uniteddeployment-v1alpha1", "UnitedDeployment", &["apps/v1alpha1/uniteddeployment.go"], true),
    group("uniteddeployment-v1beta1", "UnitedDeployment", &["apps/v1beta1/uniteddeployment.go"], true),
    group(
        "sidecarset-v1alpha1",
        "SidecarSet",
        &[
            "apps/v1alpha1/sidecarset.go",
            "apps/v1alpha1/sidecarset_hotupgrade.go",
            "apps/v1alpha1/sidecarset_resources_policy.go",
            "apps/v1alpha1/sidecarterminator.go",
        ],
        false,
    ),
    group(
        "sidecarset-v1beta1",
        "SidecarSet",
        &[
            "apps/v1beta1/sidecarset.go",
            "apps/v1beta1/sidecarset_hotupgrade.go",
            "apps/v1beta1/sidecarset_resources_policy.go",
        ],
        false,
    ),
    group("workloadspread-v1alpha1", "WorkloadSpread", &["apps/v1alpha1/workloadspread.go"], true),
    group("workloadspread-v1beta1", "WorkloadSpread", &["apps/v1beta1/workloadspread.go"], true),
    group(
        "persistentpodstate-v1alpha1",
        "PersistentPodState",
        &["apps/v1alpha1/persistent_pod_state.go"],
        true,
    ),
    group(
        "persistentpodstate-v1beta1",
        "PersistentPodState",
        &["apps/v1beta1/persistent_pod_state.go"],
        true,
    ),
    group("podunavailablebudget", "PodUnavailableBudget", &["policy/v1alpha1/podunavailablebudget.go"], true),
];

/// The group named `name`.
pub fn by_name(name: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|group| group.name == name)
}

/// The group a spec defined in `file` belongs to.
pub fn of_file(file: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|group| group.owns(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_belongs_to_one_group_and_names_are_unique() {
        let mut files: Vec<&str> = GROUPS.iter().flat_map(|group| group.files.iter().copied()).collect();
        let count = files.len();
        files.sort_unstable();
        files.dedup();
        assert_eq!(files.len(), count, "a file in two groups");
        let mut names: Vec<&str> = GROUPS.iter().map(|group| group.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), GROUPS.len(), "a name used twice");
    }

    #[test]
    fn focus_file_selects_the_group_files_only() {
        let group = by_name("daemonset-v1beta1").unwrap();
        let focus = regex::Regex::new(&group.focus_file()).unwrap();
        assert!(focus.is_match("github.com/openkruise/kruise/test/e2e/apps/v1beta1/daemonset.go"));
        assert!(
            focus.is_match("github.com/openkruise/kruise/test/e2e/apps/v1beta1/daemonset_filter_nodes.go")
        );
        assert!(!focus.is_match("github.com/openkruise/kruise/test/e2e/apps/v1alpha1/daemonset.go"));
        assert_eq!(
            of_file("x/test/e2e/apps/v1alpha1/sidecarterminator.go").map(|g| g.name),
            Some("sidecarset-v1alpha1")
        );
        assert_eq!(of_file("x/test/e2e/apps/v1alpha1/nothing.go"), None);
    }
}
