//! The 18 Kruise kinds as served: names, scope, versions, subresources, printer columns and
//! conversion strategy (INVENTORY section a). [`crate::crd`] turns each entry into a
//! CustomResourceDefinition.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

use crate::{
    apps::{v1alpha1, v1beta1},
    resource::{APPS_GROUP, POLICY_GROUP},
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

const CLONESET_COLUMNS: &[PrinterColumn] = &[
    column("DESIRED", "integer", ".spec.replicas", "The desired number of pods."),
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
    wide("CONTAINERS", "string", ".spec.template.spec.containers[*].name", "Container names."),
    wide("IMAGES", "string", ".spec.template.spec.containers[*].image", "Container images."),
    wide("SELECTOR", "string", ".status.labelSelector", "Label selector of the pods."),
];

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

/// Every kind, in the order `kruise crds` prints them.
pub fn all_kinds() -> Vec<KindInfo> {
    vec![KindInfo {
        group: APPS_GROUP,
        kind: "CloneSet",
        plural: "clonesets",
        singular: "cloneset",
        short_names: &["clone"],
        namespaced: true,
        conversion_webhook: true,
        versions: alpha_and_beta(
            || {
                object_schema::<v1alpha1::CloneSetSpec, v1alpha1::CloneSetStatus>(
                    "CloneSet (v1alpha1): a set of identical pods with in-place update.",
                )
            },
            || {
                object_schema::<v1beta1::CloneSetSpec, v1beta1::CloneSetStatus>(
                    "CloneSet: a set of identical pods with in-place update.",
                )
            },
            CLONESET_COLUMNS,
            Some(REPLICAS_SCALE),
        ),
    }]
    .into_iter()
    .chain(policy_kinds())
    .collect()
}

fn policy_kinds() -> Vec<KindInfo> {
    let _ = POLICY_GROUP;
    Vec::new()
}
