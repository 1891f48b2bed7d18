//! The loop every queue-driven controller runs, written once: it follows the shared caches the
//! controller reads, holds reconciles back until all of them are listed, queues the
//! controller's initial keys, publishes `kruise_controller_queue_depth` and the reconcile
//! metrics, logs failures and retries them with the manager's back-off.
//!
//! A controller supplies what is its own: which changes queue which keys (one handler per
//! kind it follows), its initial keys and its reconcile of one key.
//!
//! The NodeImage, image job, ContainerRecreateRequest, probe, launch-priority and pod readiness
//! controllers run on it; they key their work by name rather than by object because some must
//! act on objects that do not exist (a Node without its NodeImage), which kube-runtime's
//! `Controller` cannot.

use std::{
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use super::{
    Metrics,
    cache::{CacheEvent, Cached, Informer},
    workqueue::{BACKOFF, WorkQueue},
};
use crate::ControllerError;

/// What one reconcile returns: look again after this long (`Some`), or on the next change.
pub type Reconciled = Result<Option<Duration>, ControllerError>;

/// How soon a key handled before the caches were listed is tried again.
pub const NOT_SYNCED_RETRY: Duration = Duration::from_millis(200);
/// How often the queue-depth gauge is refreshed.
const DEPTH_PERIOD: Duration = Duration::from_secs(1);

type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A queue-driven controller being put together, then run by [`QueueController::run`].
pub struct QueueController {
    name: &'static str,
    workers: usize,
    queue: WorkQueue,
    metrics: Metrics,
    synced: Arc<AtomicBool>,
    tasks: Vec<Task>,
    waits: Vec<Task>,
}

impl QueueController {
    /// A controller called `name` (in metrics and logs) reconciling with `workers` concurrent
    /// workers. Its metric series exist from now on, at zero.
    pub fn new(name: &'static str, workers: usize, metrics: Metrics) -> Self {
        metrics.init_controller(name);
        Self {
            name,
            workers,
            queue: WorkQueue::new(BACKOFF),
            metrics,
            synced: Arc::new(AtomicBool::new(false)),
            tasks: Vec::new(),
            waits: Vec::new(),
        }
    }

    /// The queue, for handlers and reconciles that queue further keys.
    pub fn queue(&self) -> WorkQueue {
        self.queue.clone()
    }

    /// Whether every cache the controller reads is listed (shared with its reconciles).
    pub fn synced(&self) -> Arc<AtomicBool> {
        self.synced.clone()
    }

    /// Follows `informer`: reconciles wait for its first list, and `handle` turns each change
    /// into the keys it queues.
    pub fn watch<K: Cached>(
        &mut self,
        informer: &Informer<K>,
        mut handle: impl FnMut(&CacheEvent<K>, &WorkQueue) + Send + 'static,
    ) -> &mut Self {
        let queue = self.queue.clone();
        let subscription = informer.subscribe();
        self.tasks.push(Box::pin(subscription.for_each(move |event| handle(&event, &queue))));
        self.reads(informer)
    }

    /// Reads `informer` without following its changes: reconciles still wait for its first list.
    pub fn reads<K: Cached>(&mut self, informer: &Informer<K>) -> &mut Self {
        let informer = informer.clone();
        self.waits.push(Box::pin(async move { informer.until_synced().await }));
        self
    }

    /// Runs `task` alongside the controller (a watch of its own), and waits for `listed` before
    /// the first reconcile.
    pub fn alongside(
        &mut self,
        task: impl Future<Output = ()> + Send + 'static,
        listed: impl Future<Output = ()> + Send + 'static,
    ) -> &mut Self {
        self.tasks.push(Box::pin(task));
        self.waits.push(Box::pin(listed));
        self
    }

    /// Runs the controller until the future is dropped. Once every cache is listed, the keys of
    /// `initial_keys` are queued and `on_synced` is called; `reconcile` handles one key at a
    /// time per worker (never the same key twice at once).
    pub async fn run<R, Fut>(
        self,
        initial_keys: impl FnOnce() -> Vec<String> + Send,
        on_synced: impl FnOnce() + Send,
        reconcile: R,
    ) where
        R: Fn(String) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Reconciled> + Send,
    {
        let Self { name, workers, queue, metrics, synced, tasks, waits } = self;
        let listed = {
            let (queue, synced) = (queue.clone(), synced.clone());
            async move {
                for wait in waits {
                    wait.await;
                }
                synced.store(true, Ordering::SeqCst);
                tracing::info!(controller = name, "controller caches synced");
                for key in initial_keys() {
                    queue.add(key);
                }
                on_synced();
                std::future::pending::<()>().await;
            }
        };
        let depth = {
            let (queue, metrics) = (queue.clone(), metrics.clone());
            async move {
                loop {
                    metrics.set_queue_depth(name, i64::try_from(queue.len()).unwrap_or(i64::MAX));
                    tokio::time::sleep(DEPTH_PERIOD).await;
                }
            }
        };
        let work = queue.run(workers, move |key: String| {
            let (reconcile, metrics, synced) = (reconcile.clone(), metrics.clone(), synced.clone());
            async move { reconcile_and_record(name, &metrics, &synced, key, reconcile).await }
        });
        tokio::join!(futures::future::join_all(tasks), listed, depth, work);
    }
}

/// One reconcile with its metrics and its failure logged; held back until the caches are listed.
async fn reconcile_and_record<R, Fut>(
    name: &'static str,
    metrics: &Metrics,
    synced: &AtomicBool,
    key: String,
    reconcile: R,
) -> Reconciled
where
    R: Fn(String) -> Fut,
    Fut: Future<Output = Reconciled>,
{
    if !synced.load(Ordering::SeqCst) {
        return Ok(Some(NOT_SYNCED_RETRY));
    }
    let started = Instant::now();
    let result = reconcile(key.clone()).await;
    let seconds = started.elapsed().as_secs_f64();
    match &result {
        Ok(Some(_)) => metrics.reconciled(name, "requeue", seconds),
        Ok(None) => metrics.reconciled(name, "success", seconds),
        Err(error) => {
            metrics.reconciled(name, "error", seconds);
            tracing::warn!(controller = name, %key, %error, "reconcile failed");
        }
    }
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use std::sync::atomic::AtomicUsize;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::{ResourceExt, api::ObjectMeta, runtime::watcher};
    use parking_lot::Mutex;

    use super::*;

    fn config_map(name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn series(metrics: &Metrics, name: &str) -> Vec<String> {
        metrics
            .render()
            .lines()
            .filter(|line| line.contains(name) && !line.starts_with('#'))
            .map(str::to_owned)
            .collect()
    }

    #[tokio::test]
    async fn reconciles_wait_for_the_list_then_run_once_per_key_with_metrics() {
        let metrics = Metrics::new();
        let informer = Informer::<ConfigMap>::default();
        let mut controller = QueueController::new("harness-test", 2, metrics.clone());
        controller.watch(&informer, |event, queue| {
            if let Some(object) = event.object() {
                queue.add(object.name_any());
            }
        });
        assert!(
            series(&metrics, "harness-test").iter().any(|line| line.contains("queue_depth")),
            "series exist before the first reconcile"
        );
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let failures = Arc::new(AtomicUsize::new(0));
        let (synced_tx, synced_rx) = tokio::sync::oneshot::channel();
        let task = {
            let (seen, failures) = (seen.clone(), failures.clone());
            tokio::spawn(controller.run(
                || vec!["initial".into()],
                move || {
                    let _ = synced_tx.send(());
                },
                move |key: String| {
                    let (seen, failures) = (seen.clone(), failures.clone());
                    async move {
                        // "flaky" fails once, then succeeds on the back-off retry.
                        if key == "flaky" && failures.fetch_add(1, Ordering::SeqCst) == 0 {
                            return Err(ControllerError::Invalid("first try fails".into()));
                        }
                        seen.lock().push(key);
                        Ok(None)
                    }
                },
            ))
        };
        // Changes before the list are queued but not reconciled until it completes.
        informer.apply(watcher::Event::Init);
        informer.apply(watcher::Event::InitApply(config_map("a")));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(seen.lock().is_empty(), "nothing reconciled before the list completes");
        informer.apply(watcher::Event::InitDone);
        tokio::time::timeout(Duration::from_secs(5), synced_rx).await.unwrap().unwrap();
        informer.apply(watcher::Event::Apply(config_map("flaky")));
        tokio::time::timeout(Duration::from_secs(10), async {
            while seen.lock().len() < 3 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("every key reconciled");
        let mut keys = seen.lock().clone();
        keys.sort();
        assert_eq!(keys, ["a", "flaky", "initial"]);
        let rendered = series(&metrics, "harness-test").join("\n");
        assert!(rendered.contains("result=\"error\""), "{rendered}");
        assert!(rendered.contains("result=\"success\""), "{rendered}");
        task.abort();
    }
}
