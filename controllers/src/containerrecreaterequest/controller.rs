//! The ContainerRecreateRequest controller loop: the shared caches of requests and pods (a pod
//! change wakes the unfinished requests labelled with its UID; the pod itself is read fresh
//! from the API when a request is reconciled), a queue of requests on the queue harness, and the API writes the steps of [`super::core`] call
//! for. Writes to a request are followed by resourceVersion expectations, so a reconcile never
//! acts on a copy older than its own last write.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::core::v1::{ObjectReference, Pod},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{
    CONTAINER_RECREATE_REQUEST_ACTIVE_KEY, CONTAINER_RECREATE_REQUEST_POD_UID_KEY,
    CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY, ContainerRecreateRequest, ContainerRecreateRequestPhase,
};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, Patch, PatchParams},
    runtime::reflector::ObjectRef,
};
use serde_json::{Value, json};

use super::core::{
    Step, container_status_snapshot, decide, has_kruise_readiness_gate, holds_unready, is_finished,
    kruise_pod_ready_condition, readiness_key, with_pre_recreate_grace,
};
use crate::{
    ControllerError,
    imagejob::{key, split_key},
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        events::{EventKind, EventRecorder},
        expectations::{EXPECTATION_TIMEOUT, ResourceVersionExpectations},
        harness::QueueController,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "containerrecreaterequest";
/// Concurrent reconciles (upstream `--crr-workers`).
pub const WORKERS: usize = 3;
/// Attempts of a read-modify-write that keeps meeting conflicts.
const CONFLICT_RETRIES: usize = 5;

struct Context {
    client: Client,
    requests: Informer<ContainerRecreateRequest>,
    rv: ResourceVersionExpectations,
    recorder: EventRecorder,
}

fn request_key(crr: &ContainerRecreateRequest) -> String {
    key(
        crr.metadata.namespace.as_deref().unwrap_or_default(),
        crr.metadata.name.as_deref().unwrap_or_default(),
    )
}

fn reference(crr: &ContainerRecreateRequest) -> ObjectReference {
    ObjectReference {
        api_version: Some("apps.kruise.io/v1beta1".into()),
        kind: Some("ContainerRecreateRequest".into()),
        name: crr.metadata.name.clone(),
        namespace: crr.metadata.namespace.clone(),
        uid: crr.metadata.uid.clone(),
        resource_version: crr.metadata.resource_version.clone(),
        ..Default::default()
    }
}

/// Runs the ContainerRecreateRequest controller until the future is dropped; `on_synced` is
/// called once the request and pod caches hold their initial lists.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let client = caches.client().clone();
    let (requests, pods) = (caches.informer::<ContainerRecreateRequest>(), caches.informer::<Pod>());
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let ctx = Arc::new(Context {
        client: client.clone(),
        requests: requests.clone(),
        rv: ResourceVersionExpectations::new(),
        recorder: EventRecorder::new(client.clone(), "containerrecreaterequest-controller"),
    });

    let expectations = ctx.clone();
    controller.watch(&requests, move |event, queue| match event {
        CacheEvent::Applied { new, .. } => queue.add(request_key(new)),
        CacheEvent::Deleted(crr) => expectations.rv.delete(&request_key(crr)),
        CacheEvent::Synced => {}
    });
    // A pod change wakes the unfinished requests labelled with its UID.
    let all_requests = requests.clone();
    controller.watch(&pods, move |event, queue| {
        let Some(pod) = event.object() else { return };
        let Some(uid) = pod.metadata.uid.as_deref() else { return };
        for crr in all_requests.state() {
            let labelled = crr
                .metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(CONTAINER_RECREATE_REQUEST_POD_UID_KEY))
                .is_some_and(|pod_uid| pod_uid == uid);
            if labelled && !is_finished(&crr) && crr.metadata.namespace == pod.metadata.namespace {
                queue.add(request_key(&crr));
            }
        }
    });
    let initial_keys = move || requests.state().iter().map(|crr| request_key(crr)).collect();
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &key).await }
        })
        .await;
}

async fn reconcile(ctx: &Context, crr_key: &str) -> Result<Option<Duration>, ControllerError> {
    let (namespace, name) = split_key(crr_key);
    let Some(crr) = ctx.requests.get(&ObjectRef::new(name).within(namespace)) else { return Ok(None) };
    if !ctx.rv.is_satisfied(
        crr_key,
        crr.metadata.resource_version.as_deref().unwrap_or_default(),
        Instant::now(),
        EXPECTATION_TIMEOUT,
    ) {
        return Ok(Some(Duration::from_millis(500)));
    }
    let api: Api<ContainerRecreateRequest> = Api::namespaced(ctx.client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), namespace);
    let pod = if is_finished(&crr) && !holds_unready(&crr) {
        None
    } else {
        pods.get_opt(&crr.spec.pod_name).await?
    };
    match decide(&crr, pod.as_ref(), Timestamp::now()) {
        Step::Nothing => Ok(None),
        Step::Wait(after) => Ok(after),
        Step::Release => {
            release(ctx, &api, &pods, &crr, pod.as_ref()).await?;
            Ok(None)
        }
        Step::Deactivate => {
            let patch = json!({"metadata": {"labels": {CONTAINER_RECREATE_REQUEST_ACTIVE_KEY: null}}});
            let written = api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await?;
            ctx.rv.expect(
                crr_key,
                written.metadata.resource_version.as_deref().unwrap_or_default(),
                Instant::now(),
            );
            tracing::debug!(containerrecreaterequest = %crr_key, "finished: no longer active");
            Ok(None)
        }
        Step::Delete => {
            tracing::info!(containerrecreaterequest = %crr_key, "deleting the request after its ttlSecondsAfterFinished");
            match api.delete(name, &DeleteParams::default()).await {
                Ok(_) => Ok(None),
                Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
                Err(error) => Err(error.into()),
            }
        }
        Step::Complete(message) => {
            let now = Timestamp::now();
            let patch = json!({"status": {
                "phase": ContainerRecreateRequestPhase::Completed.as_str(),
                "completionTime": k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now),
                "message": message,
            }});
            let written = api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await?;
            ctx.rv.expect(
                crr_key,
                written.metadata.resource_version.as_deref().unwrap_or_default(),
                Instant::now(),
            );
            tracing::info!(containerrecreaterequest = %crr_key, %message, "completed the request as failed");
            ctx.recorder.publish(
                reference(&crr),
                EventKind::Warning,
                "RecreateFailed",
                format!("Pod {}: {message}", crr.spec.pod_name),
            );
            Ok(None)
        }
        Step::Recreating { requeue, acquire_unready } => {
            if let Some(pod) = &pod
                && let Some(snapshot) = container_status_snapshot(&crr, pod)
            {
                let patch = json!({"status": {"containerStatusSnapshot": snapshot}});
                let written = api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await?;
                ctx.rv.expect(
                    crr_key,
                    written.metadata.resource_version.as_deref().unwrap_or_default(),
                    Instant::now(),
                );
            }
            if acquire_unready && let Some(pod) = &pod {
                acquire_unready_hold(ctx, &api, &pods, &crr, pod).await?;
            }
            Ok(Some(requeue))
        }
    }
}

/// Sets the request's finalizers to `edit` of the stored ones (read fresh, written with its
/// resourceVersion, retried on conflicts); false when the request is gone.
async fn edit_finalizers(
    ctx: &Context,
    api: &Api<ContainerRecreateRequest>,
    name: &str,
    edit: impl Fn(&mut Vec<String>),
) -> Result<bool, ControllerError> {
    for _ in 0..CONFLICT_RETRIES {
        let Some(fresh) = api.get_opt(name).await? else { return Ok(false) };
        let mut finalizers = fresh.finalizers().to_vec();
        edit(&mut finalizers);
        if finalizers == fresh.finalizers() {
            return Ok(true);
        }
        let patch =
            json!({"metadata": {"finalizers": finalizers, "resourceVersion": fresh.resource_version()}});
        match api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(written) => {
                ctx.rv.expect(
                    &request_key(&written),
                    written.metadata.resource_version.as_deref().unwrap_or_default(),
                    Instant::now(),
                );
                return Ok(true);
            }
            Err(kube::Error::Api(status)) if status.code == 409 => continue,
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(false),
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!(
        "ContainerRecreateRequest {name}: too many conflicts on its finalizers"
    )))
}

/// Adds (`hold`) or removes the request's entry in the pod's `KruisePodReady` condition (read
/// fresh, written with its resourceVersion, retried on conflicts).
async fn set_pod_hold(
    pods: &Api<Pod>,
    pod: &Pod,
    crr: &ContainerRecreateRequest,
    hold: bool,
) -> Result<(), ControllerError> {
    let key = readiness_key(crr);
    let name = pod.name_any();
    let mut current = pod.clone();
    for attempt in 0..CONFLICT_RETRIES {
        if attempt > 0 {
            match pods.get_opt(&name).await? {
                Some(fresh) if fresh.metadata.uid == pod.metadata.uid => current = fresh,
                _ => return Ok(()),
            }
        }
        let Some(condition) = kruise_pod_ready_condition(&current, &key, hold) else { return Ok(()) };
        let patch: Value = json!({
            "metadata": {"resourceVersion": current.resource_version()},
            "status": {"conditions": [condition]},
        });
        match pods.patch_status(&name, &PatchParams::default(), &Patch::Strategic(&patch)).await {
            Ok(_) => {
                tracing::info!(pod = %name, containerrecreaterequest = %key, hold, "set the pod's KruisePodReady hold");
                return Ok(());
            }
            Err(kube::Error::Api(status)) if status.code == 409 => continue,
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!("Pod {name}: too many conflicts on its KruisePodReady condition")))
}

/// Holds the pod not ready for the request's `unreadyGracePeriodSeconds` (finalizer first, so
/// that the hold is always released), then sets `PreRecreateGrace`, whose transition time
/// starts the grace period the daemon waits out.
async fn acquire_unready_hold(
    ctx: &Context,
    api: &Api<ContainerRecreateRequest>,
    pods: &Api<Pod>,
    crr: &ContainerRecreateRequest,
    pod: &Pod,
) -> Result<(), ControllerError> {
    let name = crr.name_any();
    if has_kruise_readiness_gate(pod) {
        let added = edit_finalizers(ctx, api, &name, |finalizers| {
            if !finalizers.iter().any(|f| f == CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY) {
                finalizers.push(CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY.into());
            }
        })
        .await?;
        if !added {
            return Ok(());
        }
        set_pod_hold(pods, pod, crr, true).await?;
    } else {
        tracing::info!(
            containerrecreaterequest = %readiness_key(crr),
            pod = %pod.name_any(),
            "cannot hold the pod not ready: it has no KruisePodReady readiness gate"
        );
    }
    let Some(fresh) = api.get_opt(&name).await? else { return Ok(()) };
    let conditions = fresh.status.as_ref().map(|s| s.conditions.clone()).unwrap_or_default();
    if let Some(conditions) = with_pre_recreate_grace(&conditions, Timestamp::now()) {
        let patch = json!({"status": {"conditions": conditions}});
        let written = api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch)).await?;
        ctx.rv.expect(
            &request_key(&written),
            written.metadata.resource_version.as_deref().unwrap_or_default(),
            Instant::now(),
        );
    }
    Ok(())
}

/// Releases the pod held not ready by a finished request and drops its finalizer.
async fn release(
    ctx: &Context,
    api: &Api<ContainerRecreateRequest>,
    pods: &Api<Pod>,
    crr: &ContainerRecreateRequest,
    pod: Option<&Pod>,
) -> Result<(), ControllerError> {
    if let Some(pod) = pod
        && pod.metadata.deletion_timestamp.is_none()
        && has_kruise_readiness_gate(pod)
    {
        set_pod_hold(pods, pod, crr, false).await?;
    }
    edit_finalizers(ctx, api, &crr.name_any(), |finalizers| {
        finalizers.retain(|f| f != CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY);
    })
    .await?;
    Ok(())
}
