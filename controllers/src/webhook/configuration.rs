//! The configuration controller's desired state and its application: the
//! `kruise-mutating-webhook-configuration` and `kruise-validating-webhook-configuration` objects
//! (only the webhooks this build serves, with upstream's names, rules and policies from
//! `config/webhook/manifests.yaml` and `patch_manifests.yaml`), and the conversion webhook of
//! every Kruise CRD whose strategy is `Webhook` (upstream `pkg/webhook/util/configuration` and
//! `pkg/webhook/util/crd`).
//!
//! What the objects should say is built by pure functions; [`ensure_webhook_configurations`]
//! and [`ensure_crd_conversions`] compare it with what is stored and write only on drift. The
//! comparison treats fields the API server fills in (defaults such as `matchPolicy` or
//! `timeoutSeconds`) as matching, so a stable cluster is never written to.

use k8s_openapi::{
    ByteString,
    api::admissionregistration::v1::{
        MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
        ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement, ObjectMeta},
};
use kruise_crds::{
    common::well_known::DELETE_PROTECTION,
    crd::CONVERSION_PATH,
    resource::{APPS_GROUP, POLICY_GROUP},
};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::{
    BUILTIN_STATEFULSET_VALIDATING_PATH, CLONESET_MUTATING_PATH, CLONESET_VALIDATING_PATH,
    CONTAINERRECREATEREQUEST_MUTATING_PATH, CRD_VALIDATING_PATH, DAEMONSET_MUTATING_PATH,
    DAEMONSET_VALIDATING_PATH, DEPLOYMENT_VALIDATING_PATH, IMAGELISTPULLJOB_MUTATING_PATH,
    IMAGELISTPULLJOB_VALIDATING_PATH, IMAGEPULLJOB_MUTATING_PATH, IMAGEPULLJOB_VALIDATING_PATH,
    INGRESS_VALIDATING_PATH, MUTATING_CONFIGURATION_NAME, NAMESPACE_VALIDATING_PATH, NODEIMAGE_MUTATING_PATH,
    NODEIMAGE_VALIDATING_PATH, POD_MUTATING_PATH, REPLICASET_VALIDATING_PATH, SERVICE_VALIDATING_PATH,
    SIDECARSET_MUTATING_PATH, SIDECARSET_VALIDATING_PATH, STATEFULSET_MUTATING_PATH,
    STATEFULSET_VALIDATING_PATH, VALIDATING_CONFIGURATION_NAME, conversion::converts,
};
use crate::ControllerError;

/// Field manager of the controller's writes.
const FIELD_MANAGER: &str = "kruise-webhook-controller";

/// How the API server reaches this webhook server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientTarget {
    /// Through a Service (in a cluster): `service.{namespace,name,port}` plus the path.
    Service {
        /// Namespace of the Service.
        namespace: String,
        /// Name of the Service.
        name: String,
        /// Service port (upstream: 443).
        port: i32,
    },
    /// Directly at a URL base such as `https://127.0.0.1:9876` (out-of-cluster managers and the
    /// embedded control plane); the path is appended.
    Url(String),
}

/// One admission webhook this build serves.
struct WebhookSpec {
    name: &'static str,
    path: &'static str,
    group: &'static str,
    versions: &'static [&'static str],
    operations: &'static [&'static str],
    resource: &'static str,
    /// Exempt namespaces labelled `control-plane` (upstream's pod webhooks).
    exempt_control_plane: bool,
    /// Send only objects labelled `policy.kruise.io/delete-protection` (upstream's
    /// `objectSelector` on the deletion-protection webhooks of built-in kinds): a DELETE of
    /// anything else never waits for this server.
    only_delete_protected: bool,
}

/// A deletion-protection webhook of a built-in kind (DELETE only, labelled objects only).
const fn protection(
    name: &'static str,
    path: &'static str,
    group: &'static str,
    versions: &'static [&'static str],
    resource: &'static str,
) -> WebhookSpec {
    WebhookSpec {
        name,
        path,
        group,
        versions,
        operations: &["DELETE"],
        resource,
        exempt_control_plane: false,
        only_delete_protected: true,
    }
}

const MUTATING: &[WebhookSpec] = &[
    WebhookSpec {
        name: "mpod.kb.io",
        path: POD_MUTATING_PATH,
        group: "",
        versions: &["v1"],
        operations: &["CREATE"],
        resource: "pods",
        exempt_control_plane: true,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "mcloneset.kb.io",
        path: CLONESET_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "clonesets",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "mstatefulset.kb.io",
        path: STATEFULSET_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "statefulsets",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "mdaemonset.kb.io",
        path: DAEMONSET_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "daemonsets",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "mcontainerrecreaterequest.kb.io",
        path: CONTAINERRECREATEREQUEST_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "containerrecreaterequests",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "mimagelistpulljob-v1beta1.kb.io",
        path: IMAGELISTPULLJOB_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "imagelistpulljobs",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "mimagepulljob-v1beta1.kb.io",
        path: IMAGEPULLJOB_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "imagepulljobs",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "msidecarset.kb.io",
        path: SIDECARSET_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "sidecarsets",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "mnodeimage.kb.io",
        path: NODEIMAGE_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "nodeimages",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "mbroadcastjob.kb.io",
        path: super::BROADCASTJOB_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "broadcastjobs",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "madvancedcronjob.kb.io",
        path: super::ADVANCEDCRONJOB_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "advancedcronjobs",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "muniteddeployment.kb.io",
        path: super::UNITEDDEPLOYMENT_MUTATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "uniteddeployments",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
];

const VALIDATING: &[WebhookSpec] = &[
    WebhookSpec {
        name: "vcloneset.kb.io",
        path: CLONESET_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE", "DELETE"],
        resource: "clonesets",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vstatefulset.kb.io",
        path: STATEFULSET_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE", "DELETE"],
        resource: "statefulsets",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vdaemonset.kb.io",
        path: DAEMONSET_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "daemonsets",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vimagelistpulljob-v1beta1.kb.io",
        path: IMAGELISTPULLJOB_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "imagelistpulljobs",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vimagepulljob-v1beta1.kb.io",
        path: IMAGEPULLJOB_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "imagepulljobs",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vsidecarset.kb.io",
        path: SIDECARSET_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "sidecarsets",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vpodprobemarker.kb.io",
        path: super::PODPROBEMARKER_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1"],
        operations: &["CREATE", "UPDATE"],
        resource: "podprobemarkers",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    // Not in upstream, which never checks a NodePodProbe: written by hand, a bad one would be
    // stored and skipped by the node daemon; refused here with its field paths instead.
    WebhookSpec {
        name: "vnodepodprobe.kb.io",
        path: super::NODEPODPROBE_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1"],
        operations: &["CREATE", "UPDATE"],
        resource: "nodepodprobes",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vnodeimage.kb.io",
        path: NODEIMAGE_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "nodeimages",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vbroadcastjob.kb.io",
        path: super::BROADCASTJOB_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "broadcastjobs",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vadvancedcronjob.kb.io",
        path: super::ADVANCEDCRONJOB_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "advancedcronjobs",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vephemeraljobs.kb.io",
        path: super::EPHEMERALJOB_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1"],
        operations: &["CREATE", "UPDATE"],
        resource: "ephemeraljobs",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vworkloadspread.kb.io",
        path: super::WORKLOADSPREAD_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "workloadspreads",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vresourcedistribution.kb.io",
        path: super::RESOURCEDISTRIBUTION_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "resourcedistributions",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vuniteddeployment.kb.io",
        path: super::UNITEDDEPLOYMENT_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE", "DELETE"],
        resource: "uniteddeployments",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vpersistentpodstate.kb.io",
        path: super::PERSISTENTPODSTATE_VALIDATING_PATH,
        group: APPS_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "persistentpodstates",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
    protection("vbuiltindeployment.kb.io", DEPLOYMENT_VALIDATING_PATH, "apps", &["v1"], "deployments"),
    protection("vbuiltinreplicaset.kb.io", REPLICASET_VALIDATING_PATH, "apps", &["v1"], "replicasets"),
    protection(
        "vbuiltinstatefulset.kb.io",
        BUILTIN_STATEFULSET_VALIDATING_PATH,
        "apps",
        &["v1"],
        "statefulsets",
    ),
    protection(
        "vcustomresourcedefinition.kb.io",
        CRD_VALIDATING_PATH,
        "apiextensions.k8s.io",
        &["v1", "v1beta1"],
        "customresourcedefinitions",
    ),
    protection("vnamespace.kb.io", NAMESPACE_VALIDATING_PATH, "", &["v1"], "namespaces"),
    protection("vservice.kb.io", SERVICE_VALIDATING_PATH, "", &["v1"], "services"),
    protection(
        "vingress.kb.io",
        INGRESS_VALIDATING_PATH,
        "networking.k8s.io",
        &["v1", "v1beta1"],
        "ingresses",
    ),
    // The PodUnavailableBudget guard: pod updates and deletions, and evictions, which the API
    // server admits as a CREATE of the `pods/eviction` subresource (the deletion an eviction
    // makes is not admitted again).
    WebhookSpec {
        name: "vpod.kb.io",
        path: super::POD_VALIDATING_PATH,
        group: "",
        versions: &["v1"],
        operations: &["UPDATE", "DELETE"],
        resource: "pods",
        exempt_control_plane: true,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vpodeviction.kb.io",
        path: super::POD_VALIDATING_PATH,
        group: "",
        versions: &["v1"],
        operations: &["CREATE"],
        resource: "pods/eviction",
        exempt_control_plane: true,
        only_delete_protected: false,
    },
    WebhookSpec {
        name: "vpodunavailablebudget.kb.io",
        path: super::PODUNAVAILABLEBUDGET_VALIDATING_PATH,
        group: kruise_crds::resource::POLICY_GROUP,
        versions: &["v1alpha1", "v1beta1"],
        operations: &["CREATE", "UPDATE"],
        resource: "podunavailablebudgets",
        exempt_control_plane: false,
        only_delete_protected: false,
    },
];

/// The admission `clientConfig` for `path`.
pub fn admission_client_config(
    target: &ClientTarget,
    path: &str,
    ca_bundle: &ByteString,
) -> WebhookClientConfig {
    match target {
        ClientTarget::Service { namespace, name, port } => WebhookClientConfig {
            ca_bundle: Some(ca_bundle.clone()),
            service: Some(ServiceReference {
                namespace: namespace.clone(),
                name: name.clone(),
                path: Some(path.to_string()),
                port: Some(*port),
            }),
            url: None,
        },
        ClientTarget::Url(base) => WebhookClientConfig {
            ca_bundle: Some(ca_bundle.clone()),
            service: None,
            url: Some(format!("{}{path}", base.trim_end_matches('/'))),
        },
    }
}

fn rules(spec: &WebhookSpec) -> Option<Vec<RuleWithOperations>> {
    let strings = |items: &[&str]| Some(items.iter().map(|item| item.to_string()).collect());
    Some(vec![RuleWithOperations {
        api_groups: strings(&[spec.group]),
        api_versions: strings(spec.versions),
        operations: strings(spec.operations),
        resources: strings(&[spec.resource]),
        scope: None,
    }])
}

/// The pod webhook's namespaces: not those labelled `control-plane` (upstream's rule, which
/// its `kruise-system` namespace carries) and, when the manager runs behind a Service, never its
/// own namespace, label or not. The webhook fails closed (`failurePolicy: Fail`, or pods would
/// miss their sidecars and readiness gates), so while no manager answers no pod can be created
/// where it applies (upstream issue #634); the manager's own pods must stay creatable then, or it
/// could never come back.
fn namespace_selector(spec: &WebhookSpec, target: &ClientTarget) -> Option<LabelSelector> {
    spec.exempt_control_plane.then(|| {
        let mut requirements = vec![LabelSelectorRequirement {
            key: "control-plane".into(),
            operator: "DoesNotExist".into(),
            values: None,
        }];
        if let ClientTarget::Service { namespace, .. } = target {
            requirements.push(LabelSelectorRequirement {
                key: "kubernetes.io/metadata.name".into(),
                operator: "NotIn".into(),
                values: Some(vec![namespace.clone()]),
            });
        }
        LabelSelector { match_expressions: Some(requirements), match_labels: None }
    })
}

fn object_selector(spec: &WebhookSpec) -> Option<LabelSelector> {
    spec.only_delete_protected.then(|| LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: DELETE_PROTECTION.into(),
            operator: "Exists".into(),
            values: None,
        }]),
        match_labels: None,
    })
}

fn review_versions() -> Vec<String> {
    vec!["v1".into(), "v1beta1".into()]
}

fn metadata(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        labels: Some([("app.kubernetes.io/managed-by".to_string(), "kruise-webhook".to_string())].into()),
        ..Default::default()
    }
}

/// `kruise-mutating-webhook-configuration` as it should be.
pub fn desired_mutating(target: &ClientTarget, ca_bundle: &ByteString) -> MutatingWebhookConfiguration {
    MutatingWebhookConfiguration {
        metadata: metadata(MUTATING_CONFIGURATION_NAME),
        webhooks: Some(
            MUTATING
                .iter()
                .map(|spec| MutatingWebhook {
                    admission_review_versions: review_versions(),
                    client_config: admission_client_config(target, spec.path, ca_bundle),
                    failure_policy: Some("Fail".into()),
                    name: spec.name.into(),
                    namespace_selector: namespace_selector(spec, target),
                    rules: rules(spec),
                    side_effects: "None".into(),
                    ..Default::default()
                })
                .collect(),
        ),
    }
}

/// `kruise-validating-webhook-configuration` as it should be.
pub fn desired_validating(target: &ClientTarget, ca_bundle: &ByteString) -> ValidatingWebhookConfiguration {
    ValidatingWebhookConfiguration {
        metadata: metadata(VALIDATING_CONFIGURATION_NAME),
        webhooks: Some(
            VALIDATING
                .iter()
                .map(|spec| ValidatingWebhook {
                    admission_review_versions: review_versions(),
                    client_config: admission_client_config(target, spec.path, ca_bundle),
                    failure_policy: Some("Fail".into()),
                    name: spec.name.into(),
                    namespace_selector: namespace_selector(spec, target),
                    object_selector: object_selector(spec),
                    rules: rules(spec),
                    side_effects: "None".into(),
                    ..Default::default()
                })
                .collect(),
        ),
    }
}

/// The `spec.conversion` a converted Kruise CRD should have (as JSON: a merge patch body that
/// also clears the other way of reaching the server).
pub fn desired_conversion(target: &ClientTarget, ca_bundle: &ByteString) -> Value {
    let ca = serde_json::to_value(ca_bundle).unwrap_or(Value::Null);
    let client_config = match target {
        ClientTarget::Service { namespace, name, port } => json!({
            "caBundle": ca,
            "service": {"namespace": namespace, "name": name, "path": CONVERSION_PATH, "port": port},
            "url": null,
        }),
        ClientTarget::Url(base) => json!({
            "caBundle": ca,
            "url": format!("{}{CONVERSION_PATH}", base.trim_end_matches('/')),
            "service": null,
        }),
    };
    json!({
        "strategy": "Webhook",
        "webhook": {"clientConfig": client_config, "conversionReviewVersions": ["v1", "v1beta1"]},
    })
}

/// Whether `stored` says at least what `desired` says: every member of a desired object is
/// present and matches (extra stored members, such as server-filled defaults, are fine),
/// arrays match element by element with equal lengths, and a desired `null` means "absent".
pub fn contains(stored: &Value, desired: &Value) -> bool {
    match (stored, desired) {
        (Value::Object(stored), Value::Object(desired)) => {
            desired.iter().all(|(key, want)| match stored.get(key) {
                Some(have) => contains(have, want),
                None => want.is_null(),
            })
        }
        (Value::Array(stored), Value::Array(desired)) => {
            stored.len() == desired.len()
                && stored.iter().zip(desired).all(|(have, want)| contains(have, want))
        }
        (stored, desired) => stored == desired,
    }
}

/// Whether a CRD is one whose conversion this server should own: a Kruise group, strategy
/// `Webhook`, and a kind `/convert` handles.
pub fn manages_conversion(crd: &CustomResourceDefinition) -> bool {
    let spec = &crd.spec;
    (spec.group == APPS_GROUP || spec.group == POLICY_GROUP)
        && !spec.versions.is_empty()
        && spec.conversion.as_ref().is_some_and(|conversion| conversion.strategy == "Webhook")
        && converts(&spec.group, &spec.names.kind)
}

/// What one pass of [`ensure_webhook_configurations`] or [`ensure_crd_conversions`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Objects created or patched.
    pub written: Vec<String>,
    /// Objects left alone because they point at another replica that is alive
    /// ([`super::peers`]); the caller checks again soon, to take over when it goes.
    pub deferred_to_peer: Vec<String>,
}

impl Applied {
    fn merge(&mut self, other: Applied) {
        self.written.extend(other.written);
        self.deferred_to_peer.extend(other.deferred_to_peer);
    }
}

/// Creates both webhook configurations or patches their `webhooks` when they drifted.
pub async fn ensure_webhook_configurations(
    client: &kube::Client,
    target: &ClientTarget,
    ca_bundle: &ByteString,
) -> Result<Applied, ControllerError> {
    let mut applied = Applied::default();
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    applied.merge(ensure_one(&mutating, &desired_mutating(target, ca_bundle), target).await?);
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    applied.merge(ensure_one(&validating, &desired_validating(target, ca_bundle), target).await?);
    Ok(applied)
}

/// Creates `desired` or merge-patches its `webhooks` list when the stored one differs (unless
/// it points at a live peer).
async fn ensure_one<K>(api: &Api<K>, desired: &K, target: &ClientTarget) -> Result<Applied, ControllerError>
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let name = desired.meta().name.clone().unwrap_or_default();
    let desired_value = serde_json::to_value(desired)?;
    let desired_webhooks = desired_value.get("webhooks").cloned().unwrap_or(Value::Array(Vec::new()));
    let mut applied = Applied::default();
    match api.get_opt(&name).await? {
        None => match api
            .create(&PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() }, desired)
            .await
        {
            Ok(_) => {
                tracing::info!(configuration = %name, "created the webhook configuration");
                applied.written.push(name);
            }
            // Another replica created it meanwhile; the next pass compares.
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => return Err(error.into()),
        },
        Some(stored) => {
            let stored_value = serde_json::to_value(&stored)?;
            let stored_webhooks = stored_value.get("webhooks").cloned().unwrap_or(Value::Array(Vec::new()));
            if contains(&stored_webhooks, &desired_webhooks) {
                return Ok(applied);
            }
            if super::peers::held_by_live_peer(&stored_webhooks, target).await {
                applied.deferred_to_peer.push(name);
                return Ok(applied);
            }
            let patch = json!({"metadata": {"labels": desired_value.pointer("/metadata/labels")}, "webhooks": desired_webhooks});
            api.patch(
                &name,
                &PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() },
                &Patch::Merge(&patch),
            )
            .await?;
            tracing::info!(configuration = %name, "patched the webhook configuration (caBundle, clientConfig or rules drifted)");
            applied.written.push(name);
        }
    }
    Ok(applied)
}

/// Points the conversion webhook of every managed Kruise CRD at this server (unless it points
/// at a live peer).
pub async fn ensure_crd_conversions(
    client: &kube::Client,
    target: &ClientTarget,
    ca_bundle: &ByteString,
) -> Result<Applied, ControllerError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let desired = desired_conversion(target, ca_bundle);
    let mut applied = Applied::default();
    for crd in api.list(&ListParams::default()).await?.items {
        if !manages_conversion(&crd) {
            continue;
        }
        let stored = serde_json::to_value(&crd.spec.conversion)?;
        if contains(&stored, &desired) {
            continue;
        }
        let name = crd.metadata.name.clone().unwrap_or_default();
        if super::peers::held_by_live_peer(&stored, target).await {
            applied.deferred_to_peer.push(name);
            continue;
        }
        let patch = json!({"spec": {"conversion": desired}});
        api.patch(
            &name,
            &PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() },
            &Patch::Merge(&patch),
        )
        .await?;
        tracing::info!(crd = %name, "pointed the CRD's conversion webhook at this server");
        applied.written.push(name);
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn ca() -> ByteString {
        ByteString(b"-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n".to_vec())
    }

    #[test]
    fn configurations_hold_the_served_webhooks_only() {
        let target = ClientTarget::Service {
            namespace: "kruise-system".into(),
            name: "kruise-webhook-service".into(),
            port: 443,
        };
        let mutating = serde_json::to_value(desired_mutating(&target, &ca())).unwrap();
        assert_eq!(mutating["metadata"]["name"], "kruise-mutating-webhook-configuration");
        let names: Vec<&str> =
            mutating["webhooks"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "mpod.kb.io",
                "mcloneset.kb.io",
                "mstatefulset.kb.io",
                "mdaemonset.kb.io",
                "mcontainerrecreaterequest.kb.io",
                "mimagelistpulljob-v1beta1.kb.io",
                "mimagepulljob-v1beta1.kb.io",
                "msidecarset.kb.io",
                "mnodeimage.kb.io",
                "mbroadcastjob.kb.io",
                "madvancedcronjob.kb.io",
                "muniteddeployment.kb.io"
            ]
        );
        let pod = &mutating["webhooks"][0];
        assert_eq!(
            pod["rules"],
            json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}])
        );
        assert_eq!(
            pod["namespaceSelector"],
            json!({"matchExpressions": [
                {"key": "control-plane", "operator": "DoesNotExist"},
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kruise-system"]},
            ]}),
            "the manager's own namespace is exempt even unlabelled, so it can restart while the webhook is down"
        );
        let by_url = serde_json::to_value(desired_mutating(
            &ClientTarget::Url("https://127.0.0.1:9876/".into()),
            &ca(),
        ))
        .unwrap();
        assert_eq!(
            by_url["webhooks"][0]["namespaceSelector"],
            json!({"matchExpressions": [{"key": "control-plane", "operator": "DoesNotExist"}]}),
            "a manager outside the cluster has no namespace of its own to exempt"
        );
        assert_eq!(pod["failurePolicy"], "Fail");
        assert_eq!(pod["sideEffects"], "None");
        assert_eq!(pod["admissionReviewVersions"], json!(["v1", "v1beta1"]));
        assert_eq!(
            pod["clientConfig"]["service"],
            json!({"namespace": "kruise-system", "name": "kruise-webhook-service", "path": "/mutate-pod", "port": 443})
        );
        assert!(pod["clientConfig"]["caBundle"].is_string());

        let validating = serde_json::to_value(desired_validating(
            &ClientTarget::Url("https://127.0.0.1:9876/".into()),
            &ca(),
        ))
        .unwrap();
        let names: Vec<&str> =
            validating["webhooks"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "vcloneset.kb.io",
                "vstatefulset.kb.io",
                "vdaemonset.kb.io",
                "vimagelistpulljob-v1beta1.kb.io",
                "vimagepulljob-v1beta1.kb.io",
                "vsidecarset.kb.io",
                "vpodprobemarker.kb.io",
                "vnodepodprobe.kb.io",
                "vnodeimage.kb.io",
                "vbroadcastjob.kb.io",
                "vadvancedcronjob.kb.io",
                "vephemeraljobs.kb.io",
                "vworkloadspread.kb.io",
                "vresourcedistribution.kb.io",
                "vuniteddeployment.kb.io",
                "vpersistentpodstate.kb.io",
                "vbuiltindeployment.kb.io",
                "vbuiltinreplicaset.kb.io",
                "vbuiltinstatefulset.kb.io",
                "vcustomresourcedefinition.kb.io",
                "vnamespace.kb.io",
                "vservice.kb.io",
                "vingress.kb.io",
                "vpod.kb.io",
                "vpodeviction.kb.io",
                "vpodunavailablebudget.kb.io"
            ]
        );
        // Upstream's deletion-protection webhooks: DELETE only, labelled objects only.
        let webhook = |name: &str| {
            validating["webhooks"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap().clone()
        };
        let namespace = &webhook("vnamespace.kb.io");
        assert_eq!(
            namespace["rules"],
            json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["namespaces"]}])
        );
        assert_eq!(
            namespace["objectSelector"],
            json!({"matchExpressions": [{"key": "policy.kruise.io/delete-protection", "operator": "Exists"}]})
        );
        assert_eq!(namespace["clientConfig"]["url"], "https://127.0.0.1:9876/validate-namespace");
        let crd = &webhook("vcustomresourcedefinition.kb.io");
        assert_eq!(crd["rules"][0]["apiGroups"], json!(["apiextensions.k8s.io"]));
        assert_eq!(crd["rules"][0]["apiVersions"], json!(["v1", "v1beta1"]));
        let builtin_statefulset = webhook("vbuiltinstatefulset.kb.io");
        assert_eq!(builtin_statefulset["rules"][0]["resources"], json!(["statefulsets"]));
        assert_eq!(builtin_statefulset["rules"][0]["apiGroups"], json!(["apps"]));
        assert!(validating["webhooks"][0].get("objectSelector").is_none());
        let daemonset = &validating["webhooks"][2];
        assert_eq!(
            daemonset["rules"],
            json!([{"apiGroups": ["apps.kruise.io"], "apiVersions": ["v1alpha1", "v1beta1"], "operations": ["CREATE", "UPDATE"], "resources": ["daemonsets"]}])
        );
        let cloneset = &validating["webhooks"][0];
        assert_eq!(cloneset["name"], "vcloneset.kb.io");
        assert_eq!(cloneset["rules"][0]["operations"], json!(["CREATE", "UPDATE", "DELETE"]));
        assert_eq!(cloneset["rules"][0]["apiVersions"], json!(["v1alpha1", "v1beta1"]));
        assert_eq!(
            cloneset["clientConfig"]["url"],
            "https://127.0.0.1:9876/validate-apps-kruise-io-cloneset"
        );
        assert!(cloneset.get("namespaceSelector").is_none());
        // The pod webhook (WorkloadSpread bookkeeping, then the PodUnavailableBudget guard) sees
        // pod updates, deletions and evictions.
        assert_eq!(
            webhook("vpod.kb.io")["rules"],
            json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE", "DELETE"], "resources": ["pods"]}])
        );
        let eviction = webhook("vpodeviction.kb.io");
        assert_eq!(
            eviction["rules"],
            json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods/eviction"]}])
        );
        assert_eq!(eviction["clientConfig"]["url"], "https://127.0.0.1:9876/validate-pod");
        assert_eq!(
            webhook("vpodunavailablebudget.kb.io")["rules"][0]["apiVersions"],
            json!(["v1alpha1", "v1beta1"])
        );
    }

    #[test]
    fn containment_table() {
        let cases = [
            (json!({"a": 1, "b": 2}), json!({"a": 1}), true),
            (json!({"a": 1}), json!({"a": 2}), false),
            (json!({"a": 1}), json!({"a": 1, "b": null}), true),
            (json!({"a": 1, "b": 3}), json!({"a": 1, "b": null}), false),
            (json!({"a": [{"x": 1, "default": true}]}), json!({"a": [{"x": 1}]}), true),
            (json!({"a": [{"x": 1}, {"x": 2}]}), json!({"a": [{"x": 1}]}), false),
            (json!({}), json!({"a": {}}), false),
            (json!("s"), json!("s"), true),
        ];
        for (stored, desired, expected) in cases {
            assert_eq!(contains(&stored, &desired), expected, "{stored} ⊇ {desired}");
        }
    }

    #[test]
    fn conversion_targets_replace_each_other() {
        let url = desired_conversion(&ClientTarget::Url("https://127.0.0.1:1".into()), &ca());
        assert_eq!(url["webhook"]["clientConfig"]["url"], "https://127.0.0.1:1/convert");
        assert!(url["webhook"]["clientConfig"]["service"].is_null());
        let stored_service = json!({"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}, "conversionReviewVersions": ["v1", "v1beta1"]}});
        assert!(!contains(&stored_service, &url));
        let mut stored_url = url.clone();
        stored_url["webhook"]["clientConfig"].as_object_mut().unwrap().remove("service");
        assert!(contains(&stored_url, &url));
        let service = desired_conversion(
            &ClientTarget::Service { namespace: "n".into(), name: "s".into(), port: 443 },
            &ca(),
        );
        assert_eq!(service["webhook"]["clientConfig"]["service"]["path"], "/convert");
        assert!(!contains(&stored_url, &service));
    }

    #[test]
    fn only_kruise_webhook_crds_with_a_converter_are_managed() {
        let crds = kruise_crds::crd::all_crds().unwrap();
        let managed: Vec<String> = crds
            .iter()
            .filter(|crd| manages_conversion(crd))
            .map(|crd| crd.spec.names.kind.clone())
            .collect();
        assert!(managed.contains(&"CloneSet".to_string()), "{managed:?}");
        for crd in &crds {
            let webhook = crd.spec.conversion.as_ref().is_some_and(|c| c.strategy == "Webhook");
            assert_eq!(manages_conversion(crd), webhook, "{}", crd.spec.names.kind);
        }
        let mut foreign = crds[0].clone();
        foreign.spec.group = "example.com".into();
        assert!(!manages_conversion(&foreign));
    }
}
