//! Spending a budget's disruption on one pod (upstream `PodUnavailableBudgetValidatePod`), the
//! I/O shared by the pod webhook (eviction, deletion, in-place update) and the CloneSet
//! controller's own in-place updates.
//!
//! The budget is read from the API (not a cache: a stale status could allow two disruptions
//! for one), decremented with [`core::check_and_decrement`] and written back with its
//! resourceVersion; a conflict (another replica or request spent one meanwhile) re-reads and
//! tries again, four times half a second apart as upstream's `ConflictRetry`. Within this
//! process the requests for one budget take turns, so they do not conflict with each other.

use std::{collections::HashMap, sync::Arc, sync::LazyLock, time::Duration};

use k8s_openapi::{
    api::core::v1::{ObjectReference, Pod},
    jiff::Timestamp,
};
use kruise_crds::policy::v1beta1::{PodUnavailableBudget, PubOperation};
use kube::{Api, Client, api::PostParams};

use super::core::{self, Precheck};
use crate::runtime::events::{EventKind, EventRecorder};

/// Attempts at the status write (upstream `ConflictRetry.Steps`).
const ATTEMPTS: usize = 4;
/// Pause between attempts (upstream `ConflictRetry.Duration`).
const RETRY_PAUSE: Duration = Duration::from_millis(500);

/// One lock per budget for the requests of this process.
static LOCKS: LazyLock<parking_lot::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> =
    LazyLock::new(Default::default);

fn lock_for(key: &str) -> Arc<tokio::sync::Mutex<()>> {
    LOCKS.lock().entry(key.to_string()).or_default().clone()
}

/// What the budget says about one operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead (the disruption, if one was needed, is recorded).
    Allowed,
    /// Refused, with upstream's message.
    Refused(String),
}

/// The knobs of the check.
#[derive(Clone)]
pub struct Guard {
    client: Client,
    /// Upstream `InPlacePodVerticalScaling`: off, guarding UPDATE guards RESIZE too.
    pub vertical_scaling: bool,
    recorder: Option<EventRecorder>,
}

impl Guard {
    /// A guard reading and writing budgets through `client`.
    pub fn new(client: Client, vertical_scaling: bool) -> Self {
        Self { client, vertical_scaling, recorder: None }
    }

    /// Also records a `PubPreventPodDeletion` Warning on each refused pod.
    pub fn with_events(mut self, component: &str) -> Self {
        self.recorder = Some(EventRecorder::new(self.client.clone(), component));
        self
    }

    /// Decides `operation` on `pod` by `user`, spending a disruption of its budget unless
    /// `dry_run`. Errors are failures to read the budget; a failed write is a refusal, as
    /// upstream.
    pub async fn validate_pod(
        &self,
        pod: &Pod,
        operation: &PubOperation,
        user: &str,
        dry_run: bool,
    ) -> Result<Verdict, kube::Error> {
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        let namespace =
            pod.metadata.namespace.clone().filter(|ns| !ns.is_empty()).unwrap_or_else(|| "default".into());
        let budget_name = match core::pod_precheck(pod) {
            Precheck::Allow(reason) => {
                tracing::debug!(%namespace, pod = %pod_name, operation = operation.as_str(), reason, "PUB: allowed");
                return Ok(Verdict::Allowed);
            }
            Precheck::LookUp(name) => name,
        };
        let api: Api<PodUnavailableBudget> = Api::namespaced(self.client.clone(), &namespace);
        let Some(budget) = api.get_opt(&budget_name).await? else {
            tracing::debug!(%namespace, pod = %pod_name, pub_name = %budget_name, "PUB: the pod's budget is gone");
            return Ok(Verdict::Allowed);
        };
        if let Some(reason) = core::budget_precheck(pod, &budget, operation, self.vertical_scaling) {
            tracing::debug!(%namespace, pod = %pod_name, pub_name = %budget_name, operation = operation.as_str(), reason, "PUB: allowed");
            return Ok(Verdict::Allowed);
        }
        let lock = lock_for(&format!("{namespace}/{budget_name}"));
        let _turn = lock.lock().await;
        // Re-read under the lock: a request that held it may just have spent the last one.
        let mut current = match api.get_opt(&budget_name).await? {
            Some(budget) => budget,
            None => return Ok(Verdict::Allowed),
        };
        for attempt in 0..ATTEMPTS {
            let mut status = current.status.clone().unwrap_or_default();
            if core::is_pod_recorded(&pod_name, &status) {
                // A request that held the lock (or another replica) spent it for this pod.
                return Ok(Verdict::Allowed);
            }
            if let Err(refusal) =
                core::check_and_decrement(&budget_name, &pod_name, &mut status, operation, Timestamp::now())
            {
                tracing::info!(%namespace, pod = %pod_name, pub_name = %budget_name, operation = operation.as_str(), %user, "PUB: refused");
                self.record_refusal(pod);
                return Ok(Verdict::Refused(refusal.to_string()));
            }
            if dry_run {
                return Ok(Verdict::Allowed);
            }
            current.status = Some(status);
            match api.replace_status(&budget_name, &PostParams::default(), &current).await {
                Ok(_) => {
                    tracing::debug!(%namespace, pod = %pod_name, pub_name = %budget_name, operation = operation.as_str(), "PUB: disruption recorded");
                    return Ok(Verdict::Allowed);
                }
                Err(kube::Error::Api(status)) if status.code == 404 => return Ok(Verdict::Allowed),
                Err(kube::Error::Api(status)) if status.code == 409 && attempt + 1 < ATTEMPTS => {
                    tokio::time::sleep(RETRY_PAUSE).await;
                    match api.get_opt(&budget_name).await? {
                        Some(fresh) => current = fresh,
                        None => return Ok(Verdict::Allowed),
                    }
                }
                Err(kube::Error::Api(status)) if status.code == 409 => break,
                Err(error) => return Ok(Verdict::Refused(error.to_string())),
            }
        }
        Ok(Verdict::Refused(format!(
            "Timeout: couldn't update PodUnavailableBudget {budget_name} due to conflicts"
        )))
    }

    fn record_refusal(&self, pod: &Pod) {
        let Some(recorder) = &self.recorder else { return };
        let reference = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            name: pod.metadata.name.clone(),
            namespace: pod.metadata.namespace.clone(),
            uid: pod.metadata.uid.clone(),
            ..Default::default()
        };
        recorder.publish(
            reference,
            EventKind::Warning,
            "PubPreventPodDeletion",
            "openkruise pub prevents pod deletion".into(),
        );
    }
}
