//! The 18 Kruise kinds as served: names, scope, versions, subresources, printer columns and
//! conversion strategy (INVENTORY section a). [`crate::crd`] turns each entry into a
//! CustomResourceDefinition.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

use schemars::JsonSchema;

use crate::{
    apps::{v1alpha1, v1beta1},
    policy,
    resource::{APPS_GROUP, KruiseObject, POLICY_GROUP},
    schema::{SchemaError, object_schema},
};

/// One kind: everything its CRD says apart from the per-version schemas' contents.
#[derive(Clone, Debug)]
pub struct KindInfo {
    /// API group.
    pub group: &'static str,
    /// Kind name.
    pub kind: &'static str,
    /// Resource name in URLs.
    pub plural: &'static str,
    /// Singular resource name.
    pub singular: &'static str,
    /// kubectl short names.
    pub short_names: &'static [&'static str],
    /// Namespaced (true) or cluster-scoped.
    pub namespaced: bool,
    /// Whether the CRD converts between versions through the webhook's `/convert`
    /// (upstream enables it for the kinds whose versions differ).
    pub conversion_webhook: bool,
    /// Served versions, oldest first.
    pub versions: Vec<VersionInfo>,
}

/// One served version of a kind.
#[derive(Clone, Debug)]
pub struct VersionInfo {
    /// Version name (`v1alpha1`, `v1beta1`).
    pub name: &'static str,
    /// Whether objects are stored at this version.
    pub storage: bool,
    /// The `openAPIV3Schema` of this version.
    pub schema: fn() -> Result<JSONSchemaProps, SchemaError>,
    /// Columns `kubectl get` shows.
    pub printer_columns: &'static [PrinterColumn],
    /// Whether the status subresource is served (every Kruise kind has it).
    pub status_subresource: bool,
    /// Paths of the scale subresource, for kinds HPA and `kubectl scale` drive.
    pub scale: Option<ScalePaths>,
}

/// A `kubectl get` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Column header.
    pub name: &'static str,
    /// OpenAPI type of the value (`integer`, `string`, `date`, `boolean`).
    pub type_: &'static str,
    /// JSONPath of the value.
    pub json_path: &'static str,
    /// 0 shows always, 1 only with `-o wide`.
    pub priority: i32,
    /// Column description.
    pub description: &'static str,
}

/// Where the scale subresource finds replicas and the selector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalePaths {
    /// Desired replicas.
    pub spec_replicas: &'static str,
    /// Observed replicas.
    pub status_replicas: &'static str,
    /// Serialized label selector (for HPA).
    pub label_selector: &'static str,
}

const fn column(
    name: &'static str,
    type_: &'static str,
    json_path: &'static str,
    description: &'static str,
) -> PrinterColumn {
    PrinterColumn { name, type_, json_path, priority: 0, description }
}

const fn wide(
    name: &'static str,
    type_: &'static str,
    json_path: &'static str,
    description: &'static str,
) -> PrinterColumn {
    PrinterColumn { name, type_, json_path, priority: 1, description }
}

const AGE: PrinterColumn =
    column("AGE", "date", ".metadata.creationTimestamp", "Time since the object was created.");

const REPLICAS_SCALE: ScalePaths = ScalePaths {
    spec_replicas: ".spec.replicas",
    status_replicas: ".status.replicas",
    label_selector: ".status.labelSelector",
};

fn schema_of<T>() -> Result<JSONSchemaProps, SchemaError>
where
    T: KruiseObject,
    T::Spec: JsonSchema,
    T::Status: JsonSchema,
{
    let kind = T::kind(&());
    let version = T::version(&());
    object_schema::<T::Spec, T::Status>(&format!("{kind} ({version}): a Kruise {kind} object."))
}

type SchemaFn = fn() -> Result<JSONSchemaProps, SchemaError>;

/// v1alpha1 served and v1beta1 stored, with the same columns and subresources.
fn alpha_and_beta(
    alpha: SchemaFn,
    beta: SchemaFn,
    columns: &'static [PrinterColumn],
    scale: Option<ScalePaths>,
) -> Vec<VersionInfo> {
    vec![
        VersionInfo {
            name: "v1alpha1",
            storage: false,
            schema: alpha,
            printer_columns: columns,
            status_subresource: true,
            scale,
        },
        VersionInfo {
            name: "v1beta1",
            storage: true,
            schema: beta,
            printer_columns: columns,
            status_subresource: true,
            scale,
        },
    ]
}

/// Only v1alpha1, stored.
fn alpha_only(schema: SchemaFn, columns: &'static [PrinterColumn]) -> Vec<VersionInfo> {
    vec![VersionInfo {
        name: "v1alpha1",
        storage: true,
        schema,
        printer_columns: columns,
        status_subresource: true,
        scale: None,
    }]
}

const CONTAINERS: PrinterColumn =
    wide("CONTAINERS", "string", ".spec.template.spec.containers[*].name", "Names of the containers.");
const IMAGES: PrinterColumn =
    wide("IMAGES", "string", ".spec.template.spec.containers[*].image", "Images of the containers.");

const CLONESET_COLUMNS: &[PrinterColumn] = &[
    column("DESIRED", "integer", ".spec.replicas", "Desired number of pods."),
    column("UPDATED", "integer", ".status.updatedReplicas", "Pods at the update revision."),
    column("UPDATED_READY", "integer", ".status.updatedReadyReplicas", "Ready pods at the update revision."),
    column(
        "UPDATED_AVAILABLE",
        "integer",
        ".status.updatedAvailableReplicas",
        "Available pods at the update revision.",
    ),
    column("READY", "integer", ".status.readyReplicas", "Ready pods."),
    column("TOTAL", "integer", ".status.replicas", "Pods owned by the CloneSet."),
    AGE,
    CONTAINERS,
    IMAGES,
    wide("SELECTOR", "string", ".status.labelSelector", "Label selector of the pods."),
];

const STATEFULSET_COLUMNS: &[PrinterColumn] = &[
    column("DESIRED", "integer", ".spec.replicas", "Desired number of pods."),
    column("CURRENT", "integer", ".status.replicas", "Pods owned by the StatefulSet."),
    column("UPDATED", "integer", ".status.updatedReplicas", "Pods at the update revision."),
    column("READY", "integer", ".status.readyReplicas", "Ready pods."),
    AGE,
    CONTAINERS,
    IMAGES,
];

const DAEMONSET_COLUMNS: &[PrinterColumn] = &[
    column("DESIRED", "integer", ".status.desiredNumberScheduled", "Nodes that should run the pod."),
    column("CURRENT", "integer", ".status.currentNumberScheduled", "Nodes running the pod."),
    column("READY", "integer", ".status.numberReady", "Nodes whose pod is ready."),
    column("UP-TO-DATE", "integer", ".status.updatedNumberScheduled", "Nodes running the updated pod."),
    column("AVAILABLE", "integer", ".status.numberAvailable", "Nodes whose pod is available."),
    AGE,
    CONTAINERS,
    IMAGES,
];

const SIDECARSET_COLUMNS: &[PrinterColumn] = &[
    column("MATCHED", "integer", ".status.matchedPods", "Pods the SidecarSet selects."),
    column("UPDATED", "integer", ".status.updatedPods", "Pods with the latest sidecars."),
    column("READY", "integer", ".status.readyPods", "Selected pods that are ready."),
    AGE,
];

const BROADCASTJOB_COLUMNS: &[PrinterColumn] = &[
    column("Desired", "integer", ".status.desired", "Nodes the job should run on."),
    column("Active", "integer", ".status.active", "Running pods."),
    column("Succeeded", "integer", ".status.succeeded", "Pods that succeeded."),
    column("Failed", "integer", ".status.failed", "Pods that failed."),
    AGE,
];

const ADVANCEDCRONJOB_COLUMNS: &[PrinterColumn] = &[
    column("Schedule", "string", ".spec.schedule", "Cron schedule."),
    column("Type", "string", ".status.type", "Kind of job created."),
    column("LastScheduleTime", "date", ".status.lastScheduleTime", "Last time a job was scheduled."),
    AGE,
];

const IMAGEPULLJOB_COLUMNS_V1BETA1: &[PrinterColumn] = &[
    column("TOTAL", "integer", ".status.desired", "Nodes to pull on."),
    column("ACTIVE", "integer", ".status.active", "Nodes pulling now."),
    column("SUCCEED", "integer", ".status.succeeded", "Nodes that pulled."),
    column("FAILED", "integer", ".status.failed", "Nodes that failed."),
    AGE,
];

const IMAGEPULLJOB_COLUMNS_V1ALPHA1: &[PrinterColumn] = &[
    column("TOTAL", "integer", ".status.desired", "Nodes to pull on."),
    column("ACTIVE", "integer", ".status.active", "Nodes pulling now."),
    column("SUCCEED", "integer", ".status.succeeded", "Nodes that pulled."),
    column("FAILED", "integer", ".status.failed", "Nodes that failed."),
    AGE,
    column("MESSAGE", "string", ".status.message", "Summary of the job."),
];

const IMAGELISTPULLJOB_COLUMNS: &[PrinterColumn] = &[
    column("TOTAL", "integer", ".status.desired", "Images to pull."),
    column("SUCCEEDED", "integer", ".status.succeeded", "Images pulled everywhere."),
    column("COMPLETED", "integer", ".status.completed", "Images whose job finished."),
    AGE,
];

const NODEIMAGE_COLUMNS: &[PrinterColumn] = &[
    column("DESIRED", "integer", ".status.desired", "Images wanted on the node."),
    column("PULLING", "integer", ".status.pulling", "Images being pulled."),
    column("SUCCEED", "integer", ".status.succeeded", "Images pulled."),
    column("FAILED", "integer", ".status.failed", "Images that failed."),
    AGE,
];

const CRR_COLUMNS: &[PrinterColumn] = &[
    column("PHASE", "string", ".status.phase", "Phase of the request."),
    column("POD", "string", ".spec.podName", "Pod whose containers are recreated."),
    column("NODE", "string", ".metadata.labels.crr\\.apps\\.kruise\\.io/node-name", "Node of the pod."),
    AGE,
];

const RESOURCEDISTRIBUTION_COLUMNS: &[PrinterColumn] = &[
    column("TOTAL", "integer", ".status.desired", "Namespaces to distribute to."),
    column("SUCCEED", "integer", ".status.succeeded", "Namespaces distributed to."),
    column("FAILED", "integer", ".status.failed", "Namespaces that failed."),
];

const UNITEDDEPLOYMENT_COLUMNS: &[PrinterColumn] = &[
    column("DESIRED", "integer", ".spec.replicas", "Desired number of pods."),
    column("CURRENT", "integer", ".status.replicas", "Pods across subsets."),
    column("UPDATED", "integer", ".status.updatedReplicas", "Pods at the update revision."),
    column("READY", "integer", ".status.readyReplicas", "Ready pods."),
    AGE,
];

const WORKLOADSPREAD_COLUMNS: &[PrinterColumn] = &[
    column("WorkloadName", "string", ".spec.targetRef.name", "Name of the spread workload."),
    column("WorkloadKind", "string", ".spec.targetRef.kind", "Kind of the spread workload."),
    column(
        "Adaptive",
        "boolean",
        ".spec.scheduleStrategy.type[?(@ == \"Adaptive\")]",
        "Whether scheduling is adaptive.",
    ),
    column("Age", "date", ".metadata.creationTimestamp", "Time since the object was created."),
];

const PUB_COLUMNS: &[PrinterColumn] = &[
    column("Allowed", "integer", ".status.unavailableAllowed", "Pods that may still be made unavailable."),
    column("Current", "integer", ".status.currentAvailable", "Pods available now."),
    column("Desired", "integer", ".status.desiredAvailable", "Pods that must stay available."),
    column("Total", "integer", ".status.totalReplicas", "Pods protected."),
];

const EPHEMERALJOB_COLUMNS: &[PrinterColumn] = &[
    column("STATUS", "string", ".status.phase", "Phase of the job."),
    column("MATCH", "integer", ".status.match", "Pods matched."),
    column("SUCCEED", "integer", ".status.succeeded", "Ephemeral containers that succeeded."),
    column("FAILED", "integer", ".status.failed", "Ephemeral containers that failed."),
    column("RUNNING", "integer", ".status.running", "Ephemeral containers running."),
    column("WAITING", "integer", ".status.waiting", "Ephemeral containers waiting."),
    AGE,
];

#[allow(clippy::too_many_arguments)]
fn kind(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    singular: &'static str,
    short_names: &'static [&'static str],
    namespaced: bool,
    conversion_webhook: bool,
    versions: Vec<VersionInfo>,
) -> KindInfo {
    KindInfo { group, kind, plural, singular, short_names, namespaced, conversion_webhook, versions }
}

/// Every kind, in the order `kruise crds` prints them.
pub fn all_kinds() -> Vec<KindInfo> {
    vec![
        kind(
            APPS_GROUP,
            "CloneSet",
            "clonesets",
            "cloneset",
            &["clone"],
            true,
            true,
            alpha_and_beta(
                schema_of::<v1alpha1::CloneSet>,
                schema_of::<v1beta1::CloneSet>,
                CLONESET_COLUMNS,
                Some(REPLICAS_SCALE),
            ),
        ),
        kind(
            APPS_GROUP,
            "StatefulSet",
            "statefulsets",
            "statefulset",
            &["sts", "asts"],
            true,
            true,
            alpha_and_beta(
                schema_of::<v1alpha1::StatefulSet>,
                schema_of::<v1beta1::StatefulSet>,
                STATEFULSET_COLUMNS,
                Some(REPLICAS_SCALE),
            ),
        ),
        kind(
            APPS_GROUP,
            "DaemonSet",
            "daemonsets",
            "daemonset",
            &["daemon", "ads"],
            true,
            true,
            alpha_and_beta(
                schema_of::<v1alpha1::DaemonSet>,
                schema_of::<v1beta1::DaemonSet>,
                DAEMONSET_COLUMNS,
                None,
            ),
        ),
        kind(
            APPS_GROUP,
            "SidecarSet",
            "sidecarsets",
            "sidecarset",
            &[],
            false,
            true,
            alpha_and_beta(
                schema_of::<v1alpha1::SidecarSet>,
                schema_of::<v1beta1::SidecarSet>,
                SIDECARSET_COLUMNS,
                None,
            ),
        ),
        kind(
            APPS_GROUP,
            "BroadcastJob",
            "broadcastjobs",
            "broadcastjob",
            &["bcj"],
            true,
            false,
            alpha_and_beta(
                schema_of::<v1alpha1::BroadcastJob>,
                schema_of::<v1beta1::BroadcastJob>,
                BROADCASTJOB_COLUMNS,
                None,
            ),
        ),
        kind(
            APPS_GROUP,
            "AdvancedCronJob",
            "advancedcronjobs",
            "advancedcronjob",
            &["acj"],
            true,
            false,
            alpha_and_beta(
                schema_of::<v1alpha1::AdvancedCronJob>,
                schema_of::<v1beta1::AdvancedCronJob>,
                ADVANCEDCRONJOB_COLUMNS,
                None,
            ),
        ),
        kind(APPS_GROUP, "ImagePullJob", "imagepulljobs", "imagepulljob", &[], true, false, {
            let mut versions = alpha_and_beta(
                schema_of::<v1alpha1::ImagePullJob>,
                schema_of::<v1beta1::ImagePullJob>,
                IMAGEPULLJOB_COLUMNS_V1BETA1,
                None,
            );
            versions[0].printer_columns = IMAGEPULLJOB_COLUMNS_V1ALPHA1;
            versions
        }),
        kind(
            APPS_GROUP,
            "ImageListPullJob",
            "imagelistpulljobs",
            "imagelistpulljob",
            &[],
            true,
            false,
            alpha_and_beta(
                schema_of::<v1alpha1::ImageListPullJob>,
                schema_of::<v1beta1::ImageListPullJob>,
                IMAGELISTPULLJOB_COLUMNS,
                None,
            ),
        ),
        kind(
            APPS_GROUP,
            "NodeImage",
            "nodeimages",
            "nodeimage",
            &[],
            false,
            false,
            alpha_and_beta(
                schema_of::<v1alpha1::NodeImage>,
                schema_of::<v1beta1::NodeImage>,
                NODEIMAGE_COLUMNS,
                None,
            ),
        ),
        kind(
            APPS_GROUP,
            "ContainerRecreateRequest",
            "containerrecreaterequests",
            "containerrecreaterequest",
            &["crr"],
            true,
            true,
            alpha_and_beta(
                schema_of::<v1alpha1::ContainerRecreateRequest>,
                schema_of::<v1beta1::ContainerRecreateRequest>,
                CRR_COLUMNS,
                None,
            ),
        ),
        kind(
            APPS_GROUP,
            "ResourceDistribution",
            "resourcedistributions",
            "resourcedistribution",
            &["distributor"],
            false,
            true,
            alpha_and_beta(
                schema_of::<v1alpha1::ResourceDistribution>,
                schema_of::<v1beta1::ResourceDistribution>,
                RESOURCEDISTRIBUTION_COLUMNS,
                None,
            ),
        ),
        kind(
            APPS_GROUP,
            "UnitedDeployment",
            "uniteddeployments",
            "uniteddeployment",
            &["ud"],
            true,
            true,
            alpha_and_beta(
                schema_of::<v1alpha1::UnitedDeployment>,
                schema_of::<v1beta1::UnitedDeployment>,
                UNITEDDEPLOYMENT_COLUMNS,
                Some(REPLICAS_SCALE),
            ),
        ),
        kind(
            APPS_GROUP,
            "WorkloadSpread",
            "workloadspreads",
            "workloadspread",
            &["ws"],
            true,
            true,
            alpha_and_beta(
                schema_of::<v1alpha1::WorkloadSpread>,
                schema_of::<v1beta1::WorkloadSpread>,
                WORKLOADSPREAD_COLUMNS,
                None,
            ),
        ),
        kind(
            POLICY_GROUP,
            "PodUnavailableBudget",
            "podunavailablebudgets",
            "podunavailablebudget",
            &["pub"],
            true,
            false,
            alpha_and_beta(
                schema_of::<policy::v1alpha1::PodUnavailableBudget>,
                schema_of::<policy::v1beta1::PodUnavailableBudget>,
                PUB_COLUMNS,
                None,
            ),
        ),
        kind(
            APPS_GROUP,
            "PodProbeMarker",
            "podprobemarkers",
            "podprobemarker",
            &[],
            true,
            false,
            alpha_only(schema_of::<v1alpha1::PodProbeMarker>, &[]),
        ),
        kind(
            APPS_GROUP,
            "NodePodProbe",
            "nodepodprobes",
            "nodepodprobe",
            &[],
            false,
            false,
            alpha_only(schema_of::<v1alpha1::NodePodProbe>, &[]),
        ),
        kind(
            APPS_GROUP,
            "PersistentPodState",
            "persistentpodstates",
            "persistentpodstate",
            &[],
            true,
            true,
            alpha_and_beta(
                schema_of::<v1alpha1::PersistentPodState>,
                schema_of::<v1beta1::PersistentPodState>,
                &[],
                None,
            ),
        ),
        kind(
            APPS_GROUP,
            "EphemeralJob",
            "ephemeraljobs",
            "ephemeraljob",
            &["ejob"],
            true,
            false,
            alpha_only(schema_of::<v1alpha1::EphemeralJob>, EPHEMERALJOB_COLUMNS),
        ),
    ]
}
