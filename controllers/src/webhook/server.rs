//! The HTTPS server and its background sync: certificates from the Secret (hot-swapped into
//! the TLS acceptor when they change), then the webhook configurations and CRD conversions,
//! repeated every resync period so that drift (another writer, a renewed certificate, a
//! re-applied CRD) is repaired.

use std::{
    collections::BTreeMap,
    fmt,
    net::{IpAddr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use axum::{Json, Router, body::Bytes, extract::State, routing::post};
use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1beta1::SidecarSet;
use kube::{
    api::Api,
    core::{
        DynamicObject,
        admission::{AdmissionRequest, AdmissionResponse},
    },
    runtime::reflector,
};
use parking_lot::RwLock;
use rustls::{
    ServerConfig,
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};
use serde_json::Value;
use tokio::{
    net::TcpListener,
    sync::{Notify, watch},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

use super::{
    CLONESET_MUTATING_PATH, CLONESET_VALIDATING_PATH, CONTAINERRECREATEREQUEST_MUTATING_PATH,
    CONVERSION_PATH, DAEMONSET_MUTATING_PATH, DAEMONSET_VALIDATING_PATH, IMAGELISTPULLJOB_MUTATING_PATH,
    IMAGELISTPULLJOB_VALIDATING_PATH, IMAGEPULLJOB_MUTATING_PATH, IMAGEPULLJOB_VALIDATING_PATH,
    NODEIMAGE_MUTATING_PATH, NODEIMAGE_VALIDATING_PATH, POD_MUTATING_PATH, SIDECARSET_MUTATING_PATH,
    SIDECARSET_VALIDATING_PATH, STATEFULSET_MUTATING_PATH, STATEFULSET_VALIDATING_PATH, WebhookConfig,
    WebhookEndpoint,
    admission::{into_review, parse_review},
    certs::{self, CertArtifacts, CertSecretSpec, ServingNames},
    cloneset::{self, PodLookup},
    configuration::{self, ClientTarget},
    conversion, crr, daemonset,
    deletion_protection::{self, DeletionOptions, Dependents, Lookup, Prepared, Target, ValidationOptions},
    imagejobs::{self, ImageKind},
    jobs::{self, JobKind},
    pod::{self, PodMutationOptions, SidecarContext},
    pod_persistentpodstate::PersistentPodStateContext,
    pod_unavailable_budget,
    sidecarset::{self, SidecarSetAdmission, SidecarSetLookups},
    statefulset, workloadspread,
};
use crate::{
    ControllerError,
    persistentpodstate::core::{WHITELIST_KEY as PPS_WHITELIST_KEY, WhiteList},
};
use kruise_crds::apps::v1beta1::PersistentPodState;

/// Largest request body accepted (an AdmissionReview carries the object and the old object).
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;
/// How long a TLS handshake may take before the connection is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// First retry delay after a failed sync (doubling up to the resync period).
const FIRST_RETRY: Duration = Duration::from_millis(500);
/// After a watched object changed, wait this long for more changes before syncing.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// How soon a pass that deferred to a live peer checks again.
const PEER_RECHECK: Duration = Duration::from_secs(2);

/// Where the server stands; see [`WebhookReadiness`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadinessState {
    /// A valid serving certificate from the Secret is loaded: TLS handshakes succeed.
    pub cert_loaded: bool,
    /// The webhook configurations and CRD conversions have been applied at least once (or
    /// their management is off).
    pub configured: bool,
    /// The last sync error, cleared by the next successful sync.
    pub last_error: Option<String>,
}

/// A cloneable view of the server's readiness, for the manager's `/readyz` (upstream waits
/// for the webhook controller's first successful sync).
#[derive(Clone)]
pub struct WebhookReadiness(watch::Receiver<ReadinessState>);

impl fmt::Debug for WebhookReadiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("WebhookReadiness").field(&*self.0.borrow()).finish()
    }
}

impl WebhookReadiness {
    /// The current state.
    pub fn state(&self) -> ReadinessState {
        self.0.borrow().clone()
    }

    /// Certificate loaded and configurations applied.
    pub fn is_ready(&self) -> bool {
        let state = self.0.borrow();
        state.cert_loaded && state.configured
    }

    /// Waits until [`is_ready`](Self::is_ready), failing after `timeout` with the last sync
    /// error (upstream's `--webhook-initialize-timeout`).
    pub async fn wait_ready(&self, timeout: Duration) -> Result<(), ControllerError> {
        let mut receiver = self.0.clone();
        let waited =
            tokio::time::timeout(timeout, receiver.wait_for(|state| state.cert_loaded && state.configured))
                .await;
        match waited {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => {
                Err(ControllerError::Invalid("the webhook server stopped before it was ready".into()))
            }
            Err(_) => Err(ControllerError::Invalid(format!(
                "the webhook server was not ready within {timeout:?}: {}",
                self.state().last_error.unwrap_or_else(|| "no sync finished yet".into())
            ))),
        }
    }
}

/// The certificate the TLS acceptor serves; replaced when the Secret changes.
#[derive(Debug, Default)]
struct CertSlot(RwLock<Option<Arc<CertifiedKey>>>);

impl ResolvesServerCert for CertSlot {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.0.read().clone()
    }
}

/// What the request handlers share.
#[derive(Clone)]
struct HandlerState {
    client: kube::Client,
    validation: ValidationOptions,
    pods: PodMutationOptions,
    statefulset: statefulset::StatefulSetAdmission,
    deletion: DeletionOptions,
    sidecarset: SidecarSetAdmission,
    /// Every SidecarSet, kept by a watch, for injection on the pod create path.
    sidecarsets: reflector::Store<SidecarSet>,
    /// The manager namespace: the SidecarSets' ControllerRevisions and `kruise-configuration`.
    namespace: String,
    /// Upstream's `ResourceDistributionGate`: off, every ResourceDistribution write is refused.
    resource_distribution_gate: bool,
    /// The PodUnavailableBudget gates.
    pub_gates: pod_unavailable_budget::PubGates,
    /// Spends budgets' disruptions for the pod webhook.
    pub_guard: crate::podunavailablebudget::admit::Guard,
    /// Upstream's `WorkloadSpread` gate: pods are spread and WorkloadSpread writes admitted.
    workloadspread_gate: bool,
}

/// The routes: the three admission webhooks and `/convert`.
fn router(state: HandlerState) -> Router {
    Router::new()
        .route(CLONESET_MUTATING_PATH, post(mutate_cloneset))
        .route(CLONESET_VALIDATING_PATH, post(validate_cloneset))
        .route(STATEFULSET_MUTATING_PATH, post(mutate_statefulset))
        .route(STATEFULSET_VALIDATING_PATH, post(validate_statefulset))
        .route(DAEMONSET_MUTATING_PATH, post(|body| review(daemonset::mutate, body)))
        .route(DAEMONSET_VALIDATING_PATH, post(|body| review(daemonset::validate, body)))
        .route(POD_MUTATING_PATH, post(mutate_pod))
        .route(IMAGEPULLJOB_MUTATING_PATH, post(|body| image_admission(ImageKind::ImagePullJob, true, body)))
        .route(
            IMAGEPULLJOB_VALIDATING_PATH,
            post(|body| image_admission(ImageKind::ImagePullJob, false, body)),
        )
        .route(
            IMAGELISTPULLJOB_MUTATING_PATH,
            post(|body| image_admission(ImageKind::ImageListPullJob, true, body)),
        )
        .route(
            IMAGELISTPULLJOB_VALIDATING_PATH,
            post(|body| image_admission(ImageKind::ImageListPullJob, false, body)),
        )
        .route(NODEIMAGE_MUTATING_PATH, post(|body| image_admission(ImageKind::NodeImage, true, body)))
        .route(NODEIMAGE_VALIDATING_PATH, post(|body| image_admission(ImageKind::NodeImage, false, body)))
        .route(
            super::BROADCASTJOB_MUTATING_PATH,
            post(|body| job_admission(JobKind::BroadcastJob, true, body)),
        )
        .route(
            super::BROADCASTJOB_VALIDATING_PATH,
            post(|body| job_admission(JobKind::BroadcastJob, false, body)),
        )
        .route(
            super::ADVANCEDCRONJOB_MUTATING_PATH,
            post(|body| job_admission(JobKind::AdvancedCronJob, true, body)),
        )
        .route(
            super::ADVANCEDCRONJOB_VALIDATING_PATH,
            post(|body| job_admission(JobKind::AdvancedCronJob, false, body)),
        )
        .route(
            super::EPHEMERALJOB_VALIDATING_PATH,
            post(|body| job_admission(JobKind::EphemeralJob, false, body)),
        )
        .route(SIDECARSET_MUTATING_PATH, post(|body| review(sidecarset::mutate, body)))
        .route(SIDECARSET_VALIDATING_PATH, post(validate_sidecarset))
        .route(CONTAINERRECREATEREQUEST_MUTATING_PATH, post(mutate_crr))
        .route(super::PODPROBEMARKER_VALIDATING_PATH, post(validate_podprobemarker))
        .route(super::NODEPODPROBE_VALIDATING_PATH, post(validate_nodepodprobe))
        .route(super::RESOURCEDISTRIBUTION_VALIDATING_PATH, post(validate_resourcedistribution))
        .route(super::UNITEDDEPLOYMENT_MUTATING_PATH, post(mutate_uniteddeployment))
        .route(super::UNITEDDEPLOYMENT_VALIDATING_PATH, post(validate_uniteddeployment))
        .route(super::PERSISTENTPODSTATE_VALIDATING_PATH, post(validate_persistentpodstate))
        .route(super::POD_VALIDATING_PATH, post(validate_pod))
        .route(super::PODUNAVAILABLEBUDGET_VALIDATING_PATH, post(validate_podunavailablebudget))
        .route(super::WORKLOADSPREAD_VALIDATING_PATH, post(validate_workloadspread))
        .route(super::DEPLOYMENT_VALIDATING_PATH, post(|state, body| protect(state, Target::Workload, body)))
        .route(super::REPLICASET_VALIDATING_PATH, post(|state, body| protect(state, Target::Workload, body)))
        .route(
            super::BUILTIN_STATEFULSET_VALIDATING_PATH,
            post(|state, body| protect(state, Target::Workload, body)),
        )
        .route(
            super::CRD_VALIDATING_PATH,
            post(|state, body| protect(state, Target::CustomResourceDefinition, body)),
        )
        .route(super::NAMESPACE_VALIDATING_PATH, post(|state, body| protect(state, Target::Namespace, body)))
        .route(super::SERVICE_VALIDATING_PATH, post(|state, body| protect(state, Target::Service, body)))
        .route(super::INGRESS_VALIDATING_PATH, post(|state, body| protect(state, Target::Ingress, body)))
        .route(CONVERSION_PATH, post(convert))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

async fn mutate_cloneset(body: Bytes) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) => into_review(cloneset::mutate(&request)),
        Err(response) => into_review(*response),
    })
}

async fn validate_cloneset(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    let names = cloneset::pods_to_look_up(&request);
    let mut lookups = BTreeMap::new();
    if !names.is_empty() {
        let namespace = request.namespace.clone().unwrap_or_default();
        let api: Api<Pod> = Api::namespaced(state.client.clone(), &namespace);
        for name in names {
            let lookup = match api.get(&name).await {
                Ok(pod) => PodLookup::Found {
                    terminating: pod.metadata.deletion_timestamp.is_some(),
                    controller_uid: pod
                        .metadata
                        .owner_references
                        .unwrap_or_default()
                        .into_iter()
                        .find(|owner| owner.controller == Some(true))
                        .map(|owner| owner.uid),
                },
                Err(kube::Error::Api(status)) => PodLookup::Failed(status.message),
                Err(error) => PodLookup::Failed(error.to_string()),
            };
            lookups.insert(name, lookup);
        }
    }
    Json(into_review(cloneset::validate(&request, &lookups, state.validation)))
}

async fn mutate_statefulset(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) => into_review(statefulset::mutate(&request, state.statefulset)),
        Err(response) => into_review(*response),
    })
}

async fn validate_statefulset(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    let mut classes = statefulset::StorageClasses::new();
    for name in statefulset::storage_classes_to_look_up(&request, state.statefulset) {
        let lookup = statefulset::look_up_storage_class(&state.client, name.as_deref()).await;
        classes.insert(name, lookup);
    }
    Json(into_review(statefulset::validate(&request, state.validation, state.statefulset, &classes)))
}

/// A deletion-protection review of a built-in kind or a CRD: the pure decision of
/// [`deletion_protection`], with the counting `Cascading` needs done here.
async fn protect(State(state): State<HandlerState>, target: Target, body: Bytes) -> Json<Value> {
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    let response = match deletion_protection::prepare(&request, target, state.deletion) {
        Prepared::Answer(response) => *response,
        Prepared::Protected { protection, lookup } => {
            let dependents = match lookup {
                Lookup::Known(dependents) => dependents,
                Lookup::NamespaceContents(namespace) => {
                    count_namespace_contents(&state.client, &namespace).await
                }
                Lookup::CustomResources(resources) => count_custom_resources(&state.client, &resources).await,
            };
            deletion_protection::answer(&request, target, protection, &dependents)
        }
    };
    Json(into_review(response))
}

/// The active pods and Bound claims of a namespace (claims are listed only when no pod is
/// active, as upstream's check stops at the pods).
async fn count_namespace_contents(client: &kube::Client, namespace: &str) -> Dependents {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    use kube::api::ListParams;

    fn values<K: serde::Serialize>(items: Vec<K>) -> Vec<Value> {
        items.into_iter().filter_map(|item| serde_json::to_value(item).ok()).collect()
    }
    let pods = match Api::<Pod>::namespaced(client.clone(), namespace).list(&ListParams::default()).await {
        Ok(list) => values(list.items),
        Err(error) => {
            return Dependents::Unknown(format!(
                "{} for list pods error: {error}",
                deletion_protection::FORBIDDEN
            ));
        }
    };
    let active_pods = pods.iter().filter(|pod| deletion_protection::is_pod_active(pod)).count();
    if active_pods > 0 {
        return Dependents::Namespace { active_pods, bound_claims: 0 };
    }
    let claims = match Api::<PersistentVolumeClaim>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
    {
        Ok(list) => values(list.items),
        Err(error) => {
            return Dependents::Unknown(format!(
                "{} for list pvc error: {error}",
                deletion_protection::FORBIDDEN
            ));
        }
    };
    let bound_claims = claims.iter().filter(|claim| deletion_protection::is_claim_bound(claim)).count();
    Dependents::Namespace { active_pods, bound_claims }
}

/// The custom resources of a CRD not being deleted, in every namespace (metadata only).
async fn count_custom_resources(
    client: &kube::Client,
    resources: &deletion_protection::CustomResources,
) -> Dependents {
    use kube::api::{ApiResource, ListParams};

    let api_resource = ApiResource {
        group: resources.group.clone(),
        version: resources.version.clone(),
        api_version: format!("{}/{}", resources.group, resources.version),
        kind: resources.kind.clone(),
        plural: resources.plural.clone(),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &api_resource);
    match api.list_metadata(&ListParams::default()).await {
        Ok(list) => Dependents::CustomResources(
            list.items.iter().filter(|item| item.metadata.deletion_timestamp.is_none()).count(),
        ),
        Err(error) => Dependents::Unknown(format!(
            "failed to list CRs of {}/{}, Kind={}: {error}",
            resources.group, resources.version, resources.list_kind
        )),
    }
}

/// Answers a review with a handler that needs nothing but the request.
async fn review(
    handler: fn(&AdmissionRequest<DynamicObject>) -> AdmissionResponse,
    body: Bytes,
) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) => into_review(handler(&request)),
        Err(response) => into_review(*response),
    })
}

async fn image_admission(kind: ImageKind, mutating: bool, body: Bytes) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) if mutating => into_review(imagejobs::mutate(kind, &request)),
        Ok(request) => into_review(imagejobs::validate(kind, &request)),
        Err(response) => into_review(*response),
    })
}

async fn job_admission(kind: JobKind, mutating: bool, body: Bytes) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) if mutating => into_review(jobs::mutate(kind, &request)),
        Ok(request) => into_review(jobs::validate(kind, &request)),
        Err(response) => into_review(*response),
    })
}

async fn validate_nodepodprobe(body: Bytes) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) => into_review(super::nodepodprobe::validate(&request)),
        Err(response) => into_review(*response),
    })
}

async fn validate_podprobemarker(body: Bytes) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) => into_review(super::podprobemarker::validate(&request)),
        Err(response) => into_review(*response),
    })
}

/// `/validate-pod`, in upstream's order: the WorkloadSpread bookkeeping of pod deletions and
/// evictions first, then the PodUnavailableBudget guard of updates, deletions and evictions.
async fn validate_pod(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    if let Err(message) = record_spread_deletion(&state, &request).await {
        return Json(into_review(super::admission::errored(&request, 500, &message)));
    }
    Json(into_review(
        pod_unavailable_budget::validate(&request, state.pub_gates, &state.client, &state.pub_guard).await,
    ))
}

/// PodUnavailableBudget validation, with the other budgets of the namespace read live.
async fn validate_podunavailablebudget(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    use super::podunavailablebudget as pub_webhook;
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    let gate = state.pub_gates.any();
    let mut others = Vec::new();
    if pub_webhook::needs_others(&request, gate) {
        let namespace = request.namespace.clone().unwrap_or_default();
        let api: Api<kruise_crds::policy::v1beta1::PodUnavailableBudget> =
            Api::namespaced(state.client.clone(), &namespace);
        match api.list(&Default::default()).await {
            Ok(list) => others = list.items.iter().map(pub_webhook::Guarded::from).collect(),
            Err(error) => {
                return Json(into_review(super::admission::errored(
                    &request,
                    500,
                    &format!("query other podUnavailableBudget failed, err: {error}"),
                )));
            }
        }
    }
    Json(into_review(pub_webhook::validate(&request, gate, &others)))
}

async fn validate_resourcedistribution(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) => {
            into_review(super::resourcedistribution::validate(&request, state.resource_distribution_gate))
        }
        Err(response) => into_review(*response),
    })
}

async fn mutate_uniteddeployment(body: Bytes) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) => into_review(super::uniteddeployment::mutate(&request)),
        Err(response) => into_review(*response),
    })
}

async fn validate_uniteddeployment(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    Json(match parse_review(&body) {
        Ok(request) => into_review(super::uniteddeployment::validate(&request, state.validation)),
        Err(response) => into_review(*response),
    })
}

async fn validate_persistentpodstate(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    if !matches!(
        request.operation,
        kube::core::admission::Operation::Create | kube::core::admission::Operation::Update
    ) {
        return Json(into_review(super::admission::allowed(&request)));
    }
    let namespace = request.namespace.clone().unwrap_or_default();
    let lookups = async {
        let whitelist = persistentpodstate_whitelist(&state).await?;
        let others = Api::<PersistentPodState>::namespaced(state.client.clone(), &namespace)
            .list(&Default::default())
            .await
            .map_err(|error| format!("query other PersistentPodState failed, err: {error}"))?
            .items;
        Ok::<_, String>(super::persistentpodstate::PersistentPodStateLookups { others, whitelist })
    };
    match lookups.await {
        Ok(lookups) => Json(into_review(super::persistentpodstate::validate(&request, &lookups))),
        Err(message) => Json(into_review(super::admission::errored(&request, 500, &message))),
    }
}

/// `PPS_Watch_Custom_Workload_WhiteList` of `kruise-configuration` (empty when either is
/// missing; unparsable JSON is an error, as upstream's).
async fn persistentpodstate_whitelist(state: &HandlerState) -> Result<WhiteList, String> {
    use k8s_openapi::api::core::v1::ConfigMap;
    let configuration = Api::<ConfigMap>::namespaced(state.client.clone(), &state.namespace)
        .get_opt(KRUISE_CONFIGURATION)
        .await
        .map_err(|error| format!("failed to get persistent pod state config white list, error: {error}"))?;
    let text = configuration.and_then(|map| map.data).and_then(|data| data.get(PPS_WHITELIST_KEY).cloned());
    WhiteList::parse(text.as_deref()).map_err(|error| {
        format!("the {PPS_WHITELIST_KEY} key of {KRUISE_CONFIGURATION} is not valid JSON: {error}")
    })
}

/// What PersistentPodState injection needs for a pod being created: the PersistentPodStates
/// of its namespace (only when its controller could be targeted) and the white list (only when
/// that controller is not a StatefulSet).
async fn persistentpodstate_context(
    state: &HandlerState,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<PersistentPodStateContext, String> {
    let pod = request.object.as_ref().and_then(|object| serde_json::to_value(object).ok());
    let Some(target) = pod.as_ref().and_then(super::pod_persistentpodstate::controller_target) else {
        return Ok(PersistentPodStateContext::default());
    };
    let mut context = PersistentPodStateContext::default();
    if !context.whitelist.allows(&target.api_version, &target.kind) {
        context.whitelist = persistentpodstate_whitelist(state).await?;
        if !context.whitelist.allows(&target.api_version, &target.kind) {
            return Ok(context);
        }
    }
    let namespace = request.namespace.clone().filter(|ns| !ns.is_empty()).unwrap_or_else(|| "default".into());
    context.states = match Api::<PersistentPodState>::namespaced(state.client.clone(), &namespace)
        .list(&Default::default())
        .await
    {
        Ok(list) => list.items,
        // No PersistentPodState CRD installed: nothing to inject.
        Err(kube::Error::Api(status)) if status.code == 404 => Vec::new(),
        Err(error) => return Err(format!("failed to list PersistentPodStates: {error}")),
    };
    Ok(context)
}

async fn validate_sidecarset(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    let needed = sidecarset::lookups_needed(&request);
    match look_up_for_sidecarset(&state.client, &state.namespace, &needed).await {
        Ok(lookups) => Json(into_review(sidecarset::validate(&request, &lookups, state.sidecarset))),
        Err(message) => Json(into_review(super::admission::errored(&request, 500, &message))),
    }
}

/// Reads what SidecarSet validation needs; a failed read denies the request (upstream answers
/// an internal error the same way) rather than admitting a SidecarSet it could not check.
async fn look_up_for_sidecarset(
    client: &kube::Client,
    namespace: &str,
    needed: &sidecarset::LookupsNeeded,
) -> Result<SidecarSetLookups, String> {
    use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::ConfigMap};
    use kruise_crds::{
        apps::v1beta1::SidecarSet,
        validation::{SIDECARSET_PATCH_METADATA_WHITELIST_KEY, SIDECARSET_REVISION_OWNER_LABEL},
    };
    let mut lookups = SidecarSetLookups::default();
    if needed.sidecarsets {
        lookups.others = Api::<SidecarSet>::all(client.clone())
            .list(&Default::default())
            .await
            .map_err(|error| format!("query other sidecarsets failed, err: {error}"))?
            .items;
    }
    let revisions = Api::<ControllerRevision>::namespaced(client.clone(), namespace);
    if let Some(name) = &needed.revision_name {
        let found = revisions
            .get_opt(name)
            .await
            .map_err(|error| format!("failed to get ControllerRevision {namespace}/{name}: {error}"))?;
        lookups.revisions.extend(found);
    }
    if let Some(owner) = &needed.custom_version_owner {
        let params =
            kube::api::ListParams::default().labels(&format!("{SIDECARSET_REVISION_OWNER_LABEL}={owner}"));
        let listed = revisions.list(&params).await.map_err(|error| {
            format!("failed to list the ControllerRevisions of SidecarSet {owner}: {error}")
        })?;
        lookups.revisions.extend(listed.items);
    }
    if needed.whitelist {
        let configuration = Api::<ConfigMap>::namespaced(client.clone(), namespace)
            .get_opt(KRUISE_CONFIGURATION)
            .await
            .map_err(|error| {
                format!("failed to get ConfigMap {namespace}/{KRUISE_CONFIGURATION}: {error}")
            })?;
        let text = configuration
            .and_then(|map| map.data)
            .and_then(|data| data.get(SIDECARSET_PATCH_METADATA_WHITELIST_KEY).cloned());
        if let Some(text) = text {
            lookups.whitelist = Some(serde_json::from_str(&text).map_err(|error| {
                format!("the {SIDECARSET_PATCH_METADATA_WHITELIST_KEY} key of {KRUISE_CONFIGURATION} is not valid JSON: {error}")
            })?);
        }
    }
    Ok(lookups)
}

/// The manager's ConfigMap of cluster-wide settings (upstream `kruise-configuration`).
const KRUISE_CONFIGURATION: &str = "kruise-configuration";

async fn mutate_crr(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    let lookup = match crr::pod_to_look_up(&request) {
        Some((namespace, name)) => Some(look_up_crr_pod(&state.client, &namespace, &name).await),
        None => None,
    };
    Json(into_review(crr::mutate(&request, lookup.as_ref())))
}

/// The pod a ContainerRecreateRequest names, and its node's labels.
async fn look_up_crr_pod(client: &kube::Client, namespace: &str, name: &str) -> crr::PodLookup {
    let pod = match Api::<Pod>::namespaced(client.clone(), namespace).get_opt(name).await {
        Ok(Some(pod)) => pod,
        Ok(None) => return crr::PodLookup::NotFound,
        Err(error) => return crr::PodLookup::Failed(error.to_string()),
    };
    let node_name = pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).unwrap_or_default();
    let node_labels = if node_name.is_empty() {
        None
    } else {
        match Api::<k8s_openapi::api::core::v1::Node>::all(client.clone()).get_opt(&node_name).await {
            Ok(node) => node.map(|node| node.metadata.labels.unwrap_or_default()),
            Err(error) => return crr::PodLookup::Failed(format!("failed to get Node {node_name}: {error}")),
        }
    };
    crr::PodLookup::Found { pod: Box::new(pod), node_labels }
}

async fn mutate_pod(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    let mut sidecars = match sidecar_context(&state, &request).await {
        Ok(sidecars) => sidecars,
        Err(message) => return Json(into_review(super::admission::errored(&request, 500, &message))),
    };
    match pod_unavailable_budget::related_budget_for_new_pod(&state.client, &request, state.pub_gates).await {
        Ok(related) => sidecars.related_pub = related,
        // As upstream, a failed lookup leaves the annotation to the PUB controller.
        Err(message) => tracing::warn!(%message, "looking up the PodUnavailableBudget of a new pod"),
    }
    let spread = match spread_pod(&state, &request).await {
        Ok(spread) => spread,
        Err(message) => return Json(into_review(super::admission::errored(&request, 500, &message))),
    };
    Json(into_review(pod::mutate(&request, state.pods, &sidecars, spread.as_ref())))
}

/// The WorkloadSpread subset of a pod being created (not on dry runs, as upstream).
async fn spread_pod(
    state: &HandlerState,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<Option<workloadspread::SpreadAssignment>, String> {
    let is_pod =
        request.resource.resource == "pods" && request.sub_resource.as_deref().unwrap_or("").is_empty();
    if !state.workloadspread_gate
        || request.operation != kube::core::admission::Operation::Create
        || !is_pod
        || request.dry_run
    {
        return Ok(None);
    }
    let Some(raw) =
        super::admission::object_value(request.object.as_ref()).map_err(|error| error.to_string())?
    else {
        return Ok(None);
    };
    let pod: Pod = super::admission::decode("Pod", &raw)?;
    let namespace = pod
        .metadata
        .namespace
        .clone()
        .or_else(|| request.namespace.clone())
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "default".into());
    workloadspread::assign_pod(&state.client, &namespace, &pod, &state.namespace).await
}

async fn validate_workloadspread(State(state): State<HandlerState>, body: Bytes) -> Json<Value> {
    let request = match parse_review(&body) {
        Ok(request) => request,
        Err(response) => return Json(into_review(*response)),
    };
    let namespace = request.namespace.clone().unwrap_or_default();
    let others = if state.workloadspread_gate
        && matches!(
            request.operation,
            kube::core::admission::Operation::Create | kube::core::admission::Operation::Update
        ) {
        match workloadspread::list_spreads(&state.client, &namespace).await {
            Ok(others) => others,
            Err(message) => return Json(into_review(super::admission::errored(&request, 500, &message))),
        }
    } else {
        Vec::new()
    };
    let custom = workloadspread::custom_workloads(&state.client, &state.namespace).await;
    Json(into_review(workloadspread::validate(&request, state.workloadspread_gate, &others, &custom)))
}

/// The WorkloadSpread bookkeeping of a pod deletion or eviction (`deletingPods`); nothing to do
/// for other requests or while the `WorkloadSpread` gate is off.
async fn record_spread_deletion(
    state: &HandlerState,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<(), String> {
    if !state.workloadspread_gate {
        return Ok(());
    }
    match workloadspread::pod_for_validation(&state.client, request).await? {
        Some((pod, operation)) => {
            workloadspread::record_pod_deletion(&state.client, &pod, operation, &state.namespace).await
        }
        None => Ok(()),
    }
}

/// The SidecarSets (from the watch cache; listed from the API until the cache has synced)
/// and, when one has a namespace selector, the labels of the pod's namespace.
async fn sidecar_context(
    state: &HandlerState,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<SidecarContext, String> {
    if request.operation != kube::core::admission::Operation::Create {
        return Ok(SidecarContext::default());
    }
    let sidecarsets: Vec<SidecarSet> =
        if futures::FutureExt::now_or_never(state.sidecarsets.wait_until_ready())
            .is_some_and(|ready| ready.is_ok())
        {
            state.sidecarsets.state().iter().map(|sidecarset| (**sidecarset).clone()).collect()
        } else {
            match Api::<SidecarSet>::all(state.client.clone()).list(&Default::default()).await {
                Ok(list) => list.items,
                // No SidecarSet CRD installed: nothing can be injected.
                Err(kube::Error::Api(status)) if status.code == 404 => Vec::new(),
                Err(error) => return Err(format!("failed to list SidecarSets: {error}")),
            }
        };
    let sidecarsets = pin_revisions(state, request, sidecarsets).await?;
    let namespace_labels = if crate::sidecarset::inject::needs_namespace_labels(&sidecarsets) {
        let name = request.namespace.clone().filter(|ns| !ns.is_empty()).unwrap_or_else(|| "default".into());
        match Api::<k8s_openapi::api::core::v1::Namespace>::all(state.client.clone()).get_opt(&name).await {
            Ok(namespace) => namespace.map(|namespace| namespace.metadata.labels.unwrap_or_default()),
            Err(error) => return Err(format!("failed to get Namespace {name}: {error}")),
        }
    } else {
        None
    };
    let persistent_pod_state = persistentpodstate_context(state, request).await?;
    Ok(SidecarContext { sidecarsets, namespace_labels, now: None, persistent_pod_state, related_pub: None })
}

async fn convert(body: Bytes) -> Json<Value> {
    Json(conversion::handle(&body))
}

/// A running webhook server (HTTPS listener plus the certificate and configuration sync).
pub struct WebhookServer {
    local_addr: SocketAddr,
    readiness: WebhookReadiness,
    cancel: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookServer").field("local_addr", &self.local_addr).finish_non_exhaustive()
    }
}

impl WebhookServer {
    /// Binds `config.bind` and starts serving and syncing in the background. Returns once the
    /// listener is bound; TLS handshakes succeed once the certificate is loaded (watch
    /// [`readiness`](Self::readiness)). Fails only when the address cannot be bound.
    pub async fn start(client: kube::Client, config: WebhookConfig) -> Result<Self, ControllerError> {
        let listener = TcpListener::bind(config.bind).await.map_err(|source| ControllerError::Io {
            what: format!("binding the webhook server to {}", config.bind),
            source,
        })?;
        let local_addr = listener.local_addr().map_err(|source| ControllerError::Io {
            what: "reading the webhook server's address".into(),
            source,
        })?;
        let (target, url_host) = client_target(&config, local_addr);
        let mut extra_hosts = config.extra_hosts.clone();
        extra_hosts.extend(url_host);
        let names = ServingNames::for_service(
            &config.service_name,
            &config.namespace,
            &extra_hosts,
            &config.extra_ips,
        );
        let cert_spec = CertSecretSpec {
            namespace: config.namespace.clone(),
            name: config.secret_name.clone(),
            names,
            renew_before: config.renew_before,
        };

        let slot = Arc::new(CertSlot::default());
        let tls = tls_config(slot.clone())?;
        let (state_tx, state_rx) = watch::channel(ReadinessState::default());
        let cancel = CancellationToken::new();
        let (sidecarset_reader, sidecarset_writer) = reflector::store::<SidecarSet>();
        let sidecarset_watch =
            tokio::spawn(watch_sidecarsets(client.clone(), sidecarset_writer, cancel.clone()));
        let handlers = HandlerState {
            client: client.clone(),
            validation: ValidationOptions { deletion_protection: config.deletion_protection },
            pods: PodMutationOptions {
                readiness_gate_for_all_pods: config.readiness_gate_for_all_pods,
                sort_sidecars_by_name: config.sort_sidecars_by_name,
            },
            statefulset: statefulset::StatefulSetAdmission {
                auto_resize_pvc: config.statefulset_auto_resize_pvc,
            },
            deletion: DeletionOptions {
                enabled: config.deletion_protection,
                crd_cascading: config.crd_cascading_deletion_protection,
            },
            sidecarset: SidecarSetAdmission {
                patch_metadata_defaults_allowed: config.sidecarset_patch_metadata_defaults_allowed,
            },
            namespace: config.namespace.clone(),
            sidecarsets: sidecarset_reader,
            resource_distribution_gate: config.resource_distribution_gate,
            pub_gates: config.pod_unavailable_budget,
            pub_guard: crate::podunavailablebudget::admit::Guard::new(
                client.clone(),
                config.pod_unavailable_budget.vertical_scaling,
            )
            .with_events("kruise-manager"),
            workloadspread_gate: config.workloadspread_gate,
        };
        tracing::info!(address = %local_addr, ?target, "webhook server listening");
        let serve = tokio::spawn(serve(listener, router(handlers), tls, cancel.clone()));
        let changed = Arc::new(Notify::new());
        let watch = tokio::spawn(watch_changes(
            client.clone(),
            config.namespace.clone(),
            config.secret_name.clone(),
            config.manage_configurations,
            changed.clone(),
            cancel.clone(),
        ));
        let sync = tokio::spawn(
            Syncer {
                client,
                cert_spec,
                target,
                manage_configurations: config.manage_configurations,
                resync: config.resync_period.max(Duration::from_millis(100)),
                slot,
                state: state_tx,
                loaded: None,
                changed,
            }
            .run(cancel.clone()),
        );
        Ok(Self {
            local_addr,
            readiness: WebhookReadiness(state_rx),
            cancel,
            tasks: vec![serve, watch, sync, sidecarset_watch],
        })
    }

    /// The address actually bound (the port when `bind` asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The readiness signal.
    pub fn readiness(&self) -> WebhookReadiness {
        self.readiness.clone()
    }

    /// Stops accepting, closes open connections and ends the sync.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        for task in std::mem::take(&mut self.tasks) {
            let _ = task.await;
        }
    }
}

impl Drop for WebhookServer {
    /// A server dropped without [`shutdown`](Self::shutdown) (its owner was aborted) must not
    /// keep serving and rewriting the webhook configurations in the background.
    fn drop(&mut self) {
        self.cancel.cancel();
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// How the API server is to reach us, and the URL host the certificate must then name.
fn client_target(config: &WebhookConfig, bound: SocketAddr) -> (ClientTarget, Option<String>) {
    match &config.endpoint {
        WebhookEndpoint::Service => (
            ClientTarget::Service {
                namespace: config.namespace.clone(),
                name: config.service_name.clone(),
                port: 443,
            },
            None,
        ),
        WebhookEndpoint::Url { host, port } => {
            let port = port.unwrap_or(bound.port());
            let bare = host.trim_start_matches('[').trim_end_matches(']').to_string();
            let authority = match bare.parse::<IpAddr>() {
                Ok(IpAddr::V6(_)) => format!("[{bare}]:{port}"),
                _ => format!("{bare}:{port}"),
            };
            (ClientTarget::Url(format!("https://{authority}")), Some(bare))
        }
    }
}

fn tls_config(slot: Arc<CertSlot>) -> Result<Arc<ServerConfig>, ControllerError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|error| ControllerError::Tls(error.to_string()))?
        .with_no_client_auth()
        .with_cert_resolver(slot);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Accepts TLS connections and serves `router` on each until `cancel`.
async fn serve(listener: TcpListener, router: Router, tls: Arc<ServerConfig>, cancel: CancellationToken) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    loop {
        let accepted = tokio::select! {
            () = cancel.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "accepting a webhook connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let router = router.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(error)) => {
                    tracing::debug!(%peer, %error, "webhook TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "webhook TLS handshake timed out");
                    return;
                }
            };
            let service =
                hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let router = router.clone();
                    async move {
                        use tower::ServiceExt;
                        router.oneshot(request.map(axum::body::Body::new)).await
                    }
                });
            let io = hyper_util::rt::TokioIo::new(stream);
            let builder = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            let connection = builder.serve_connection(io, service);
            tokio::select! {
                result = connection => {
                    if let Err(error) = result {
                        tracing::debug!(%peer, %error, "webhook connection ended with an error");
                    }
                }
                () = cancel.cancelled() => {}
            }
        });
    }
}

/// The background sync of certificates and configurations.
struct Syncer {
    client: kube::Client,
    cert_spec: CertSecretSpec,
    target: ClientTarget,
    manage_configurations: bool,
    resync: Duration,
    slot: Arc<CertSlot>,
    state: watch::Sender<ReadinessState>,
    /// The artifacts currently served.
    loaded: Option<CertArtifacts>,
    /// Poked when a watched object changed: sync now rather than at the next period.
    changed: Arc<Notify>,
}

impl Syncer {
    async fn run(mut self, cancel: CancellationToken) {
        let mut retry = FIRST_RETRY;
        loop {
            let delay = match self.sync_once().await {
                Ok(outcome) => {
                    retry = FIRST_RETRY;
                    self.state.send_modify(|state| state.last_error = None);
                    match outcome {
                        // Take over as soon as the peer goes: nothing we watch changes then.
                        SyncOutcome::DeferredToPeer => self.resync.min(PEER_RECHECK),
                        SyncOutcome::Done => self.resync,
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, retry_in = ?retry, "webhook sync failed");
                    self.state.send_modify(|state| state.last_error = Some(error.to_string()));
                    let delay = retry;
                    retry = (retry * 2).min(self.resync);
                    delay
                }
            };
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(delay) => {}
                () = self.changed.notified() => {
                    tokio::time::sleep(DEBOUNCE).await;
                }
            }
        }
    }

    async fn sync_once(&mut self) -> Result<SyncOutcome, ControllerError> {
        let artifacts = match certs::ensure_secret(&self.client, &self.cert_spec).await {
            Err(ControllerError::Kube(kube::Error::Api(status))) if status.code == 404 => {
                // The namespace itself is missing (a fresh cluster or the embedded control
                // plane): create it, then try again.
                certs::ensure_namespace(&self.client, &self.cert_spec.namespace).await?;
                certs::ensure_secret(&self.client, &self.cert_spec).await?
            }
            other => other?,
        };
        if self.loaded.as_ref() != Some(&artifacts) {
            let key = certs::certified_key(&artifacts)?;
            *self.slot.0.write() = Some(key);
            tracing::info!(secret = %self.cert_spec.name, "loaded the webhook serving certificate");
            self.loaded = Some(artifacts.clone());
            self.state.send_modify(|state| state.cert_loaded = true);
        }
        let mut outcome = SyncOutcome::Done;
        if self.manage_configurations {
            let ca_bundle = certs::ca_bundle(&artifacts);
            let configurations =
                configuration::ensure_webhook_configurations(&self.client, &self.target, &ca_bundle).await?;
            let crds = configuration::ensure_crd_conversions(&self.client, &self.target, &ca_bundle).await?;
            if !configurations.written.is_empty() || !crds.written.is_empty() {
                tracing::info!(configurations = ?configurations.written, crds = crds.written.len(), "webhook configuration applied");
            }
            if !configurations.deferred_to_peer.is_empty() || !crds.deferred_to_peer.is_empty() {
                outcome = SyncOutcome::DeferredToPeer;
            }
        }
        self.state.send_modify(|state| state.configured = true);
        Ok(outcome)
    }
}

/// Whether a sync pass left something to another live replica.
enum SyncOutcome {
    Done,
    DeferredToPeer,
}

/// Replaces each SidecarSet that pins a revision (`injectionStrategy.revision`) by the
/// revision the new pod gets, read from the ControllerRevisions of the manager namespace.
async fn pin_revisions(
    state: &HandlerState,
    request: &AdmissionRequest<DynamicObject>,
    sidecarsets: Vec<SidecarSet>,
) -> Result<Vec<SidecarSet>, String> {
    use crate::sidecarset::pinning::{pins_revision, revision_for_pod};
    use k8s_openapi::api::apps::v1::ControllerRevision;
    if !sidecarsets.iter().any(pins_revision) {
        return Ok(sidecarsets);
    }
    let pod_labels: BTreeMap<String, String> =
        request.object.as_ref().and_then(|object| object.metadata.labels.clone()).unwrap_or_default();
    let revisions: Api<ControllerRevision> = Api::namespaced(state.client.clone(), &state.namespace);
    let mut chosen = Vec::with_capacity(sidecarsets.len());
    for set in sidecarsets {
        if !pins_revision(&set) {
            chosen.push(set);
            continue;
        }
        let name = set.metadata.name.clone().unwrap_or_default();
        let params = kube::api::ListParams::default()
            .labels(&format!("{}={name}", kruise_crds::validation::SIDECARSET_REVISION_OWNER_LABEL));
        let listed = revisions.list(&params).await.map_err(|error| {
            format!("failed to list the ControllerRevisions of SidecarSet {name}: {error}")
        })?;
        chosen.push(revision_for_pod(&set, &listed.items, &pod_labels, rand::random::<f64>()));
    }
    Ok(chosen)
}

/// Keeps `writer` filled with every SidecarSet until cancelled: the pod webhook injects from
/// it instead of listing SidecarSets on every pod create. Without the CRD the watch retries
/// with backoff and the webhook falls back to listing (which then finds nothing).
async fn watch_sidecarsets(
    client: kube::Client,
    writer: reflector::store::Writer<SidecarSet>,
    cancel: CancellationToken,
) {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};
    let stream =
        reflector::reflector(writer, watcher(Api::<SidecarSet>::all(client), watcher::Config::default()))
            .default_backoff()
            .for_each(|event| async move {
                if let Err(error) = event {
                    tracing::debug!(%error, "SidecarSet watch interrupted");
                }
            });
    tokio::select! {
        () = stream => {}
        () = cancel.cancelled() => {}
    }
}

/// Watches what the sync maintains (the Secret, both webhook configurations, the CRDs) and
/// pokes `changed` on every event, so that a new CRD, an edited configuration or a certificate
/// renewed by another replica is handled within moments (upstream's webhook controller is
/// informer-driven too). The periodic resync still covers a watch that cannot be established.
async fn watch_changes(
    client: kube::Client,
    namespace: String,
    secret_name: String,
    manage_configurations: bool,
    changed: Arc<Notify>,
    cancel: CancellationToken,
) {
    use futures::{StreamExt, stream::BoxStream};
    use k8s_openapi::{
        api::{
            admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
            core::v1::Secret,
        },
        apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    };
    use kube::runtime::{WatchStreamExt, watcher};

    fn named(name: &str) -> watcher::Config {
        watcher::Config::default().fields(&format!("metadata.name={name}"))
    }
    fn events<K>(api: Api<K>, config: watcher::Config) -> BoxStream<'static, ()>
    where
        K: kube::Resource + Clone + serde::de::DeserializeOwned + fmt::Debug + Send + 'static,
    {
        watcher(api, config)
            .default_backoff()
            .filter_map(|event| async move {
                match event {
                    Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_) | watcher::Event::InitDone) => {
                        Some(())
                    }
                    Ok(_) => None,
                    Err(error) => {
                        tracing::debug!(%error, "webhook watch interrupted");
                        None
                    }
                }
            })
            .boxed()
    }

    let mut streams =
        vec![events(Api::<Secret>::namespaced(client.clone(), &namespace), named(&secret_name))];
    if manage_configurations {
        streams.push(events(
            Api::<MutatingWebhookConfiguration>::all(client.clone()),
            named(super::MUTATING_CONFIGURATION_NAME),
        ));
        streams.push(events(
            Api::<ValidatingWebhookConfiguration>::all(client.clone()),
            named(super::VALIDATING_CONFIGURATION_NAME),
        ));
        streams.push(events(Api::<CustomResourceDefinition>::all(client), watcher::Config::default()));
    }
    let mut merged = futures::stream::select_all(streams);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            next = merged.next() => match next {
                Some(()) => changed.notify_one(),
                None => return,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    #[test]
    fn client_targets_table() {
        let bound: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let mut config = WebhookConfig::default();
        assert_eq!(
            client_target(&config, bound),
            (
                ClientTarget::Service {
                    namespace: "kruise-system".into(),
                    name: "kruise-webhook-service".into(),
                    port: 443
                },
                None
            )
        );
        let cases = [
            ("127.0.0.1", None, "https://127.0.0.1:40000", "127.0.0.1"),
            ("127.0.0.1", Some(9876), "https://127.0.0.1:9876", "127.0.0.1"),
            ("::1", None, "https://[::1]:40000", "::1"),
            ("[::1]", None, "https://[::1]:40000", "::1"),
            ("webhook.example.com", None, "https://webhook.example.com:40000", "webhook.example.com"),
        ];
        for (host, port, url, named) in cases {
            config.endpoint = WebhookEndpoint::Url { host: host.into(), port };
            assert_eq!(
                client_target(&config, bound),
                (ClientTarget::Url(url.into()), Some(named.into())),
                "{host}"
            );
        }
    }
}
