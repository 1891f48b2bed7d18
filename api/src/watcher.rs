//! The rollout watcher: follows the workloads of every running rollout and appends each state
//! transition to the store as it happens, so the history shows how every rollout ended even
//! when nobody was watching, and even across API restarts (on start it catches up with whatever
//! happened while it was down). On the same ticks it carries image pulls and recreates on
//! ([`crate::operations::reconcile_tasks`]): their results and transitions, and the next batch
//! of a workload's recreate.
//!
//! It reacts to CloneSet, StatefulSet, DaemonSet and SidecarSet watch events (Kubernetes
//! watches over all namespaces; SidecarSets are cluster-scoped) and also re-checks every `interval`, which covers deleted workloads and a watch
//! that is reconnecting. Transitions are compare-and-set in the store, so several API replicas
//! watching at once record each transition once.

use std::{future::Future, time::Duration};

use futures::StreamExt;
use kruise_crds::apps::v1beta1::{CloneSet, DaemonSet, SidecarSet, StatefulSet};
use kube::{
    Api, Client,
    runtime::{WatchStreamExt, watcher},
};
use tokio::{sync::mpsc, task::JoinHandle};

use crate::{
    operations::{Live, Operations, PodCounts, WATCHER_ACTOR},
    store::{NewTransition, RolloutRow, now},
    workload::RolloutTarget,
};

/// Watches every workload of kind `W` and signals `events` at each change (a full channel
/// already holds a signal, which is enough).
fn watch_kind<W: RolloutTarget>(client: Client, events: mpsc::Sender<()>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let api: Api<W> = Api::all(client);
        let mut stream = watcher(api, watcher::Config::default()).default_backoff().boxed();
        while let Some(event) = stream.next().await {
            match event {
                Ok(_) => {
                    let _ = events.try_send(());
                }
                Err(error) => {
                    tracing::debug!(%error, kind = W::KIND.as_str(), "workload watch error (retrying)")
                }
            }
        }
    })
}

/// Runs until `shutdown` completes.
pub async fn run(ops: Operations, interval: Duration, shutdown: impl Future<Output = ()>) {
    let (events_tx, mut events) = mpsc::channel::<()>(1);
    let client = ops.client().clone();
    let watches = [
        watch_kind::<CloneSet>(client.clone(), events_tx.clone()),
        watch_kind::<StatefulSet>(client.clone(), events_tx.clone()),
        watch_kind::<DaemonSet>(client.clone(), events_tx.clone()),
        watch_kind::<SidecarSet>(client, events_tx),
    ];
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
    for watch in watches {
        watch.abort();
    }
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
    for row in rows {
        match ops.live(&row, PodCounts::WhenEnded).await {
            Ok(live) => record_live(ops, &row, &live).await,
            Err(error) => {
                tracing::debug!(%error, rollout = %row.id, "rollout watcher: cannot read the workload")
            }
        }
    }
}

/// Records what the workload shows of a running rollout: its revision once known, and a
/// transition when the state it implies is not the stored one. The store's compare-and-set makes
/// this safe to call from several places at once (the watcher, and a client's read that saw the
/// change first, so that the state it answers is already in the history).
pub(crate) async fn record_live(ops: &Operations, row: &RolloutRow, live: &Live) {
    let stored = row.state();
    let Live { derived, progress, .. } = live;
    if row.revision.is_none()
        && let Some(revision) = &derived.revision
        && let Err(error) = ops.store().set_rollout_revision(&row.id, revision).await
    {
        tracing::warn!(%error, rollout = %row.id, "rollout watcher: could not record the revision");
    }
    if derived.state == stored {
        return;
    }
    let transition = NewTransition {
        rollout_id: row.id.clone(),
        time: now(),
        from_state: Some(stored),
        to_state: derived.state,
        actor: WATCHER_ACTOR.into(),
        reason: derived.reason.into(),
        message: derived.message.clone(),
        progress: progress.as_ref().and_then(|p| serde_json::to_value(p).ok()),
    };
    match ops.store().transition(stored, derived.revision.as_deref(), &transition).await {
        Ok(true) => {
            ops.metrics().transition(derived.state.as_str());
            tracing::info!(
                rollout = %row.id,
                namespace = %row.namespace,
                kind = %row.workload_kind,
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
