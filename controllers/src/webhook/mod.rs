//! The admission and conversion webhook server (upstream `pkg/webhook`): one HTTPS server that
//! every manager replica runs, serving
//!
//! - `/mutate-apps-kruise-io-cloneset` and `/validate-apps-kruise-io-cloneset` ([`cloneset`]):
//!   CloneSet defaults, validation with field paths, and `policy.kruise.io/delete-protection`;
//! - `/mutate-apps-kruise-io-statefulset` and `/validate-apps-kruise-io-statefulset`
//!   ([`statefulset`]) and `/mutate-apps-kruise-io-daemonset` and
//!   `/validate-apps-kruise-io-daemonset` ([`daemonset`]): Advanced StatefulSet and Advanced
//!   DaemonSet defaults and validation;
//! - `/mutate-apps-kruise-io-{imagepulljob,imagelistpulljob,nodeimage}` and their
//!   `/validate-...` twins ([`imagejobs`]): defaults and validation of the pre-pull kinds;
//! - `/mutate-apps-kruise-io-containerrecreaterequest` ([`crr`]): ContainerRecreateRequest
//!   validation, defaults and the copy of its pod's identity (upstream has no validating twin);
//! - `/mutate-apps-kruise-io-sidecarset` and `/validate-apps-kruise-io-sidecarset`
//!   ([`sidecarset`]): SidecarSet defaults, hash annotations and validation, including the
//!   conflicts with other SidecarSets;
//! - `/mutate-apps-kruise-io-{broadcastjob,advancedcronjob}`, their `/validate-...` twins and
//!   `/validate-apps-kruise-io-v1alpha1-ephemeraljob` ([`jobs`]): defaults and validation of the
//!   Job kinds;
//! - `/validate-apps-kruise-io-resourcedistribution` ([`resourcedistribution`]):
//!   ResourceDistribution validation (refused while `ResourceDistributionGate` is off);
//! - `/mutate-apps-kruise-io-uniteddeployment` and `/validate-apps-kruise-io-uniteddeployment`
//!   ([`uniteddeployment`]): UnitedDeployment defaults and validation (both versions);
//! - `/validate-apps-kruise-io-persistentpodstate` ([`persistentpodstate`]): PersistentPodState
//!   validation, including the one-per-workload rule;
//! - `/mutate-pod` ([`pod`]): the `KruisePodReady` readiness gate on Kruise-owned pods, the
//!   WorkloadSpread subset of pods of a spread workload ([`workloadspread`]), the
//!   `pub.kruise.io/related-pub` annotation ([`pod_unavailable_budget`]) and the other pod
//!   mutations, such as [`pod_persistentpodstate`];
//! - `/validate-pod` (`vpod.kb.io`, `vpodeviction.kb.io`): the WorkloadSpread `deletingPods`
//!   bookkeeping of deletions and evictions ([`workloadspread`]), then the PodUnavailableBudget
//!   guard: evictions, deletions and in-place updates that would break a budget are refused
//!   ([`pod_unavailable_budget`]);
//! - `/validate-policy-kruise-io-podunavailablebudget` ([`podunavailablebudget`]):
//!   PodUnavailableBudget validation, including conflicts with the namespace's other budgets;
//! - `/validate-apps-kruise-io-nodepodprobe` ([`nodepodprobe`]): NodePodProbe validation (not in
//!   upstream, which has no webhook for it);
//! - `/validate-apps-kruise-io-workloadspread` ([`workloadspread`]): WorkloadSpread
//!   validation (refused while the `WorkloadSpread` gate is off);
//! - `/validate-namespace`, `/validate-customresourcedefinition`, `/validate-apps-deployment`,
//!   `/validate-apps-replicaset`, `/validate-apps-statefulset`, `/validate-service` and
//!   `/validate-ingress` ([`deletion_protection`]): `policy.kruise.io/delete-protection` on the
//!   DELETE of those built-in kinds and of CRDs;
//! - `/convert` ([`conversion`]): v1alpha1 <-> v1beta1 for every Kruise kind with two versions.
//!
//! The server manages its own trust ([`certs`]): a CA and serving certificate kept in Secret
//! `kruise-webhook-certs`, shared by all replicas and restarts; and its own registration
//! ([`configuration`]): the Mutating/ValidatingWebhookConfigurations and the CRDs' conversion
//! `caBundle`, re-applied when they drift. Everything it decides is a pure function of the
//! request or of the stored objects; [`WebhookServer`] is the I/O around them.
//!
//! ```no_run
//! # async fn run(client: kube::Client) -> Result<(), kruise_controllers::ControllerError> {
//! use kruise_controllers::webhook::{WebhookConfig, WebhookServer};
//! // Out of a cluster (or on the embedded control plane): reached at https://127.0.0.1:<port>.
//! let server = WebhookServer::start(client, WebhookConfig::local("127.0.0.1:0".parse().unwrap())).await?;
//! server.readiness().wait_ready(std::time::Duration::from_secs(30)).await?;
//! # server.shutdown().await; Ok(()) }
//! ```

pub mod admission;
pub mod certs;
pub mod cloneset;
pub mod configuration;
pub mod conversion;
pub mod crr;
pub mod daemonset;
pub mod deletion_protection;
pub mod imagejobs;
pub mod jobs;
pub mod nodepodprobe;
pub mod peers;
pub mod persistentpodstate;
pub mod pod;
pub mod pod_persistentpodstate;
pub mod pod_unavailable_budget;
pub mod podprobemarker;
pub mod podunavailablebudget;
pub mod resourcedistribution;
mod server;
pub mod sidecarset;
pub mod statefulset;
pub mod uniteddeployment;
pub mod workloadspread;

use std::{
    net::{IpAddr, SocketAddr},
    time::Duration,
};

pub use server::{ReadinessState, WebhookReadiness, WebhookServer};

/// Path of the CloneSet defaulting webhook.
pub const CLONESET_MUTATING_PATH: &str = "/mutate-apps-kruise-io-cloneset";
/// Path of the CloneSet validating webhook.
pub const CLONESET_VALIDATING_PATH: &str = "/validate-apps-kruise-io-cloneset";
/// Path of the Advanced StatefulSet defaulting webhook.
pub const STATEFULSET_MUTATING_PATH: &str = "/mutate-apps-kruise-io-statefulset";
/// Path of the Advanced StatefulSet validating webhook.
pub const STATEFULSET_VALIDATING_PATH: &str = "/validate-apps-kruise-io-statefulset";
/// Path of the Advanced DaemonSet defaulting webhook.
pub const DAEMONSET_MUTATING_PATH: &str = "/mutate-apps-kruise-io-daemonset";
/// Path of the Advanced DaemonSet validating webhook.
pub const DAEMONSET_VALIDATING_PATH: &str = "/validate-apps-kruise-io-daemonset";
/// Path of the ImagePullJob defaulting webhook.
pub const IMAGEPULLJOB_MUTATING_PATH: &str = "/mutate-apps-kruise-io-imagepulljob";
/// Path of the ImagePullJob validating webhook.
pub const IMAGEPULLJOB_VALIDATING_PATH: &str = "/validate-apps-kruise-io-imagepulljob";
/// Path of the ImageListPullJob defaulting webhook.
pub const IMAGELISTPULLJOB_MUTATING_PATH: &str = "/mutate-apps-kruise-io-imagelistpulljob";
/// Path of the ImageListPullJob validating webhook.
pub const IMAGELISTPULLJOB_VALIDATING_PATH: &str = "/validate-apps-kruise-io-imagelistpulljob";
/// Path of the NodeImage defaulting webhook.
pub const NODEIMAGE_MUTATING_PATH: &str = "/mutate-apps-kruise-io-nodeimage";
/// Path of the NodeImage validating webhook.
pub const NODEIMAGE_VALIDATING_PATH: &str = "/validate-apps-kruise-io-nodeimage";
/// Path of the ContainerRecreateRequest mutating webhook (it also validates, as upstream's).
pub const CONTAINERRECREATEREQUEST_MUTATING_PATH: &str = "/mutate-apps-kruise-io-containerrecreaterequest";
/// Path of the SidecarSet defaulting webhook.
pub const SIDECARSET_MUTATING_PATH: &str = "/mutate-apps-kruise-io-sidecarset";
/// Path of the SidecarSet validating webhook.
pub const SIDECARSET_VALIDATING_PATH: &str = "/validate-apps-kruise-io-sidecarset";
/// Path of the BroadcastJob defaulting webhook.
pub const BROADCASTJOB_MUTATING_PATH: &str = "/mutate-apps-kruise-io-broadcastjob";
/// Path of the BroadcastJob validating webhook.
pub const BROADCASTJOB_VALIDATING_PATH: &str = "/validate-apps-kruise-io-broadcastjob";
/// Path of the AdvancedCronJob defaulting webhook.
pub const ADVANCEDCRONJOB_MUTATING_PATH: &str = "/mutate-apps-kruise-io-advancedcronjob";
/// Path of the AdvancedCronJob validating webhook.
pub const ADVANCEDCRONJOB_VALIDATING_PATH: &str = "/validate-apps-kruise-io-advancedcronjob";
/// Path of the EphemeralJob validating webhook (upstream names it after its only version).
pub const EPHEMERALJOB_VALIDATING_PATH: &str = "/validate-apps-kruise-io-v1alpha1-ephemeraljob";
/// Path of the ResourceDistribution validating webhook (both versions, as upstream since the
/// v1beta1 promotion).
pub const RESOURCEDISTRIBUTION_VALIDATING_PATH: &str = "/validate-apps-kruise-io-resourcedistribution";
/// Path of the UnitedDeployment defaulting webhook (both versions).
pub const UNITEDDEPLOYMENT_MUTATING_PATH: &str = "/mutate-apps-kruise-io-uniteddeployment";
/// Path of the UnitedDeployment validating webhook (both versions).
pub const UNITEDDEPLOYMENT_VALIDATING_PATH: &str = "/validate-apps-kruise-io-uniteddeployment";
/// Path of the PersistentPodState validating webhook (both versions).
pub const PERSISTENTPODSTATE_VALIDATING_PATH: &str = "/validate-apps-kruise-io-persistentpodstate";
/// Path of the pod validating webhook (`vpod.kb.io` and `vpodeviction.kb.io`).
pub const POD_VALIDATING_PATH: &str = "/validate-pod";
/// Path of the PodUnavailableBudget validating webhook (both versions).
pub const PODUNAVAILABLEBUDGET_VALIDATING_PATH: &str = "/validate-policy-kruise-io-podunavailablebudget";
/// Path of the WorkloadSpread validating webhook.
pub const WORKLOADSPREAD_VALIDATING_PATH: &str = "/validate-apps-kruise-io-workloadspread";
/// Path of the pod mutating webhook.
pub const POD_MUTATING_PATH: &str = "/mutate-pod";
/// Path of the PodProbeMarker validating webhook.
pub const PODPROBEMARKER_VALIDATING_PATH: &str = "/validate-apps-kruise-io-podprobemarker";
/// Path of the NodePodProbe validating webhook (a kruise-rs addition: upstream has none).
pub const NODEPODPROBE_VALIDATING_PATH: &str = "/validate-apps-kruise-io-nodepodprobe";
/// Path of the Deployment deletion-protection webhook (upstream `vbuiltindeployment.kb.io`).
pub const DEPLOYMENT_VALIDATING_PATH: &str = "/validate-apps-deployment";
/// Path of the ReplicaSet deletion-protection webhook (upstream `vbuiltinreplicaset.kb.io`).
pub const REPLICASET_VALIDATING_PATH: &str = "/validate-apps-replicaset";
/// Path of the apps/v1 StatefulSet deletion-protection webhook (`vbuiltinstatefulset.kb.io`).
pub const BUILTIN_STATEFULSET_VALIDATING_PATH: &str = "/validate-apps-statefulset";
/// Path of the CRD deletion-protection webhook (`vcustomresourcedefinition.kb.io`).
pub const CRD_VALIDATING_PATH: &str = "/validate-customresourcedefinition";
/// Path of the Namespace deletion-protection webhook (`vnamespace.kb.io`).
pub const NAMESPACE_VALIDATING_PATH: &str = "/validate-namespace";
/// Path of the Service deletion-protection webhook (`vservice.kb.io`).
pub const SERVICE_VALIDATING_PATH: &str = "/validate-service";
/// Path of the Ingress deletion-protection webhook (`vingress.kb.io`).
pub const INGRESS_VALIDATING_PATH: &str = "/validate-ingress";
/// Path of the conversion webhook.
pub const CONVERSION_PATH: &str = kruise_crds::crd::CONVERSION_PATH;
/// Name of the MutatingWebhookConfiguration the server maintains.
pub const MUTATING_CONFIGURATION_NAME: &str = "kruise-mutating-webhook-configuration";
/// Name of the ValidatingWebhookConfiguration the server maintains.
pub const VALIDATING_CONFIGURATION_NAME: &str = "kruise-validating-webhook-configuration";
/// Default Secret holding the certificates (upstream `SECRET_NAME`).
pub const DEFAULT_SECRET_NAME: &str = "kruise-webhook-certs";
/// Default webhook Service (upstream `SERVICE_NAME`).
pub const DEFAULT_SERVICE_NAME: &str = kruise_crds::crd::WEBHOOK_SERVICE;
/// Default manager namespace (upstream `POD_NAMESPACE` default).
pub const DEFAULT_NAMESPACE: &str = kruise_crds::crd::KRUISE_NAMESPACE;
/// Default listening port (upstream `WEBHOOK_PORT`).
pub const DEFAULT_PORT: u16 = 9876;

/// How the API server reaches the webhook server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WebhookEndpoint {
    /// Through Service `service_name` in `namespace`, port 443 (in a cluster).
    Service,
    /// At `https://host:port` (upstream `WEBHOOK_HOST`/`WEBHOOK_PORT`): an out-of-cluster manager
    /// or the embedded control plane. `port: None` uses the port actually bound. The host is
    /// added to the certificate's names.
    Url {
        /// DNS name or IP literal the API server connects to.
        host: String,
        /// Port, or the bound one.
        port: Option<u16>,
    },
}

/// Everything the webhook server is configured with.
#[derive(Clone, Debug)]
pub struct WebhookConfig {
    /// Listening address (port 0 picks a free port).
    pub bind: SocketAddr,
    /// Manager namespace: holds the certificate Secret and the Service.
    pub namespace: String,
    /// Name of the certificate Secret.
    pub secret_name: String,
    /// Name of the webhook Service (also the base of the certificate's DNS names).
    pub service_name: String,
    /// How the API server reaches this server.
    pub endpoint: WebhookEndpoint,
    /// More names (DNS names or IP literals) the certificate must cover.
    pub extra_hosts: Vec<String>,
    /// More IPs the certificate must cover.
    pub extra_ips: Vec<IpAddr>,
    /// Renew the certificate this long before it (or its CA) expires (upstream
    /// `CERTS_RENEW_BEFORE`, six months).
    pub renew_before: Duration,
    /// How often the certificate, the configurations and the CRDs are re-checked.
    pub resync_period: Duration,
    /// Create and repair the webhook configurations and the CRDs' conversion settings (off
    /// when they are managed elsewhere, e.g. with external certificates).
    pub manage_configurations: bool,
    /// Enforce `policy.kruise.io/delete-protection` on DELETE of CloneSets, Advanced
    /// StatefulSets and the built-in kinds of [`deletion_protection`] (upstream feature gate
    /// `ResourcesDeletionProtection`).
    pub deletion_protection: bool,
    /// Honour `Cascading` on CRDs by counting their custom resources (upstream feature gate
    /// `DeletionProtectionForCRDCascadingGate`); off, a `Cascading` CRD cannot be deleted.
    pub crd_cascading_deletion_protection: bool,
    /// Give every new pod the `KruisePodReady` gate, not only Kruise-owned ones (upstream
    /// feature gate `KruisePodReadinessGate`).
    pub readiness_gate_for_all_pods: bool,
    /// Default and check `volumeClaimUpdateStrategy` of Advanced StatefulSets (upstream feature
    /// gate `StatefulSetAutoResizePVCGate`).
    pub statefulset_auto_resize_pvc: bool,
    /// Allow SidecarSets to patch any pod annotation when no whitelist rule applies (upstream
    /// feature gate `SidecarSetPatchPodMetadataDefaultsAllowed`).
    pub sidecarset_patch_metadata_defaults_allowed: bool,
    /// Sort injected sidecars by name (upstream feature gate
    /// `EnableSortSidecarContainerByName`).
    pub sort_sidecars_by_name: bool,
    /// Admit ResourceDistribution writes (upstream feature gate `ResourceDistributionGate`,
    /// whose webhook refuses them all while it is off). On by default here so that callers
    /// that do not set it from the gates keep admitting them; `kruise manager` (and so
    /// `kruise up`) and the test harness set it from `--feature-gates`.
    pub resource_distribution_gate: bool,
    /// The PodUnavailableBudget gates (`PodUnavailableBudgetDeleteGate`, on by default;
    /// `PodUnavailableBudgetUpdateGate`, off; `InPlacePodVerticalScaling`, off), which decide
    /// what the pod webhook guards and whether budgets are admitted at all.
    pub pod_unavailable_budget: pod_unavailable_budget::PubGates,
    /// Spread pods of WorkloadSpread targets and admit WorkloadSpread writes (upstream feature
    /// gate `WorkloadSpread`, on by default).
    pub workloadspread_gate: bool,
}

impl Default for WebhookConfig {
    /// In-cluster defaults: `0.0.0.0:9876`, reached through `kruise-webhook-service` in
    /// `kruise-system`, a one-minute resync as upstream's webhook controller.
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([0, 0, 0, 0], DEFAULT_PORT)),
            namespace: DEFAULT_NAMESPACE.to_string(),
            secret_name: DEFAULT_SECRET_NAME.to_string(),
            service_name: DEFAULT_SERVICE_NAME.to_string(),
            endpoint: WebhookEndpoint::Service,
            extra_hosts: Vec::new(),
            extra_ips: Vec::new(),
            renew_before: certs::DEFAULT_RENEW_BEFORE,
            resync_period: Duration::from_secs(60),
            manage_configurations: true,
            deletion_protection: true,
            crd_cascading_deletion_protection: false,
            readiness_gate_for_all_pods: false,
            statefulset_auto_resize_pvc: false,
            sidecarset_patch_metadata_defaults_allowed: false,
            sort_sidecars_by_name: false,
            resource_distribution_gate: true,
            pod_unavailable_budget: pod_unavailable_budget::PubGates {
                delete: true,
                update: false,
                vertical_scaling: false,
            },
            workloadspread_gate: true,
        }
    }
}

impl WebhookConfig {
    /// Out-of-cluster defaults: listen on `bind` and register `https://<bind ip>:<bound port>`
    /// (an unspecified bind address registers `127.0.0.1`).
    pub fn local(bind: SocketAddr) -> Self {
        let host = if bind.ip().is_unspecified() { "127.0.0.1".to_string() } else { bind.ip().to_string() };
        Self { bind, endpoint: WebhookEndpoint::Url { host, port: None }, ..Self::default() }
    }
}

/// Helpers of the admission handlers' tests: building a review, applying the answer's patch,
/// reading the fields a refusal names.
#[cfg(test)]
pub(crate) mod testing {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kube::core::{
        DynamicObject,
        admission::{AdmissionRequest, AdmissionResponse},
    };
    use serde_json::{Value, json};

    /// An `admission.k8s.io/v1` review of `operation` on an `apps.kruise.io/<version>` `kind`
    /// named `name` in `default`, by `admin`.
    pub fn review(
        kind: &str,
        resource: &str,
        name: &str,
        (operation, version): (&str, &str),
        object: Value,
        old: Value,
    ) -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps.kruise.io", "version": version, "kind": kind},
                "resource": {"group": "apps.kruise.io", "version": version, "resource": resource},
                "name": name, "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object, "oldObject": old,
            }
        });
        super::admission::parse_review(body.to_string().as_bytes()).unwrap()
    }

    /// `object` with the response's JSON patch applied.
    pub fn apply(response: &AdmissionResponse, object: &Value) -> Value {
        let mut object = object.clone();
        if let Some(bytes) = &response.patch {
            let patch: json_patch::Patch = serde_json::from_slice(bytes).unwrap();
            json_patch::patch(&mut object, &patch.0).unwrap();
        }
        object
    }

    /// The field paths a refusal names.
    pub fn fields(response: &AdmissionResponse) -> Vec<String> {
        response
            .result
            .details
            .as_ref()
            .map(|d| d.causes.iter().map(|c| c.field.clone()).collect())
            .unwrap_or_default()
    }
}
