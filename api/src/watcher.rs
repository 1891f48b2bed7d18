//! The rollout watcher: follows the workloads of every running rollout and appends each state
//! transition to the store as it happens, so the history shows how every rollout ended even
//! when nobody was watching, and even across API restarts (on start it catches up with whatever
//! happened while it was down). On the same ticks it carries image pulls and recreates on
//! ([`crate::operations::reconcile_tasks`]): their results and transitions, and the next batch
//! of a workload's recreate.
//!
//! It reacts to CloneSet watch events (a Kubernetes watch over all namespaces) and also re-checks
//! every `interval`, which covers deleted workloads and a watch that is reconnecting. Transitions
//! are compare-and-set in the store, so several API replicas watching at once record each
//! transition once.

use std::{collections::HashMap, future::Future, time::Duration};

use futures::StreamExt;
use kruise_crds::apps::v1beta1::CloneSet;
use kube::{
    Api,
    runtime::{WatchStreamExt, watcher},
};

use crate::{
    operations::{Operations, WATCHER_ACTOR},
    store::{NewTransition, RolloutRow, now},
    workload::cloneset as cs,
};

/// Runs until `shutdown` completes.
pub async fn run(ops: Operations, interval: Duration, shutdown: impl Future<Output = ()>) {
    let (events_tx, mut events) = tokio::sync::mpsc::channel::<()>(1);
    let client = ops.client().clone();
    let watch = tokio::spawn(async move {
        let api: Api<CloneSet> = Api::all(client);
        let mut stream = watcher(api, watcher::Config::default()).default_backoff().boxed();
        while let Some(event) = stream.next().await {
            match event {
                Ok(_) => {
                    let _ = events_tx.try_send(());
                }
                Err(error) => tracing::debug!(%error, "CloneSet watch error (retrying)"),
            }
        }
    });
    tokio::pin!(shutdown);
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = tick.tick() => {}
            Some(()) = events.recv() => {
                // Let a burst of status updates settle into one pass.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        ops.notify_changed();
        reconcile_all(&ops).await;
        crate::operations::reconcile_tasks(&ops).await;
    }
    watch.abort();
}

/// One pass over every running rollout.
pub async fn reconcile_all(ops: &Operations) {
    let rows = match ops.store().active_rollouts().await {
        Ok(rows) => rows,
        Err(error) => {
            tracing::warn!(%error, "rollout watcher: the store is unavailable; retrying");
            return;
        }
    };
    let mut sets: HashMap<(String, String), Option<CloneSet>> = HashMap::new();
    for row in rows {
        let key = (row.namespace.clone(), row.workload_name.clone());
        if !sets.contains_key(&key) {
            let api: Api<CloneSet> = Api::namespaced(ops.client().clone(), &row.namespace);
            match api.get_opt(&row.workload_name).await {
                Ok(set) => {
                    sets.insert(key.clone(), set);
                }
                Err(error) => {
                    tracing::debug!(%error, rollout = %row.id, "rollout watcher: cannot read the workload");
                    continue;
                }
            }
        }
        let set = sets.get(&key).and_then(Option::as_ref);
        reconcile(ops, &row, set).await;
    }
}

async fn reconcile(ops: &Operations, row: &RolloutRow, set: Option<&CloneSet>) {
    let stored = row.state();
    let derived = cs::derive(stored, row.generation, row.revision.as_deref(), set);
    if row.revision.is_none()
        && let Some(revision) = &derived.revision
        && let Err(error) = ops.store().set_rollout_revision(&row.id, revision).await
    {
        tracing::warn!(%error, rollout = %row.id, "rollout watcher: could not record the revision");
    }
    if derived.state == stored {
        return;
    }
    let progress = match set {
        Some(set) => {
            let pods = if derived.state.is_terminal() { ops_pods(ops, set).await } else { None };
            serde_json::to_value(cs::progress(
                set,
                derived.revision.as_deref(),
                pods.as_deref(),
                row.created_at,
            ))
            .ok()
        }
        None => None,
    };
    let transition = NewTransition {
        rollout_id: row.id.clone(),
        time: now(),
        from_state: Some(stored),
        to_state: derived.state,
        actor: WATCHER_ACTOR.into(),
        reason: derived.reason.into(),
        message: derived.message.clone(),
        progress,
    };
    match ops.store().transition(stored, derived.revision.as_deref(), &transition).await {
        Ok(true) => {
            ops.metrics().transition(derived.state.as_str());
            tracing::info!(
                rollout = %row.id,
                namespace = %row.namespace,
                workload = %row.workload_name,
                from = stored.as_str(),
                to = derived.state.as_str(),
                reason = derived.reason,
                "rollout state changed"
            );
        }
        Ok(false) => {}
        Err(error) => {
            tracing::warn!(%error, rollout = %row.id, "rollout watcher: could not record a transition")
        }
    }
}

async fn ops_pods(ops: &Operations, set: &CloneSet) -> Option<Vec<k8s_openapi::api::core::v1::Pod>> {
    ops.pods_for_progress(set).await
}
