//! Well-known labels and annotations (INVENTORY section g) that more than one component reads.

/// Pod label naming the workload revision the pod was created from (`<workload>-<hash>`).
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
/// Pod label carrying the short revision hash (what Kruise Rollout selects canaries by).
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// CloneSet pod label with the instance id shared by the pod and its PVCs.
pub const CLONESET_INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";
/// Pod label asking the owning workload to delete the pod (honouring maxUnavailable).
pub const SPECIFIED_DELETE: &str = "apps.kruise.io/specified-delete";
/// v1alpha1 CloneSet label: do not count PreparingDelete pods when scaling.
pub const CLONESET_SCALING_EXCLUDE_PREPARING_DELETE: &str =
    "apps.kruise.io/cloneset-scaling-exclude-preparing-delete";
/// v1alpha1 annotation form of `inPlaceUpdateStrategy.imagePreDownloadParallelism`.
pub const IMAGE_PRE_DOWNLOAD_PARALLELISM: &str = "apps.kruise.io/image-predownload-parallelism";
/// v1alpha1 annotation form of `inPlaceUpdateStrategy.imagePreDownloadTimeoutSeconds`.
pub const IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS: &str = "apps.kruise.io/image-predownload-timeout-seconds";
/// v1alpha1 annotation form of `inPlaceUpdateStrategy.imagePreDownloadMinUpdatedReadyPods`.
pub const IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS: &str =
    "apps.kruise.io/image-predownload-min-updated-ready-pods";
/// Label guarding workloads, namespaces and CRDs against deletion (`Always` or `Cascading`).
pub const DELETE_PROTECTION: &str = "policy.kruise.io/delete-protection";
/// Readiness gate and condition with which several writers keep a pod NotReady.
pub const KRUISE_POD_READY: &str = "KruisePodReady";
/// Kubernetes pod-deletion-cost annotation, read by CloneSet scale-in ranking.
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// ControllerRevision label: ImagePullJobs were created for the images of this revision.
/// (Upstream's spelling, `pre-predownload`, kept.)
pub const IMAGE_PRE_DOWNLOAD_CREATED: &str = "apps.kruise.io/pre-predownload-created";
/// ControllerRevision label: this revision's images are not pre-downloaded (ReCreate, too few
/// replicas, one batch, or not updatable in place).
pub const IMAGE_PRE_DOWNLOAD_IGNORED: &str = "apps.kruise.io/image-predownload-ignored";
