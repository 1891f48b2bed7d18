//! A keyed work queue for the daemon's workers (client-go's rate-limited delaying workqueue, in
//! small): a key is queued at most once, processed by one task at a time (an add while it is
//! processed runs it again afterwards), can be added after a delay, and is retried with an
//! exponential back-off when its sync fails. The container recreate executor keys it by pod,
//! so the requests of one pod are carried out one at a time while pods proceed in parallel.
//!
//! The manager has the same queue (`kruise_controllers::runtime::workqueue`); the daemon keeps
//! its own because it does not link the manager's crate, and its back-off is upstream
//! kruise-daemon's (500 ms doubling to 50 s) rather than the manager's.

use std::{
    collections::{HashMap, HashSet, VecDeque},
    future::Future,
    sync::Arc,
    time::Duration,
};

use parking_lot::Mutex;
use tokio::{sync::Notify, time::Instant};

/// First retry delay after a failed sync.
pub const FIRST_RETRY: Duration = Duration::from_millis(500);
/// Longest retry delay (upstream `crr` queue: 50 s).
pub const MAX_RETRY: Duration = Duration::from_secs(50);

#[derive(Default)]
struct State {
    ready: VecDeque<String>,
    queued: HashSet<String>,
    processing: HashSet<String>,
    dirty: HashSet<String>,
    delayed: HashMap<String, Instant>,
    failures: HashMap<String, u32>,
}

/// A cheap handle: clone it into the watch handlers.
#[derive(Clone, Default)]
pub struct WorkQueue {
    state: Arc<Mutex<State>>,
    notify: Arc<Notify>,
}

/// The retry delay after `failures` consecutive failures (at least one).
pub fn retry_delay(failures: u32) -> Duration {
    FIRST_RETRY.saturating_mul(2u32.saturating_pow(failures.saturating_sub(1).min(16))).min(MAX_RETRY)
}

impl WorkQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues `key` now.
    pub fn add(&self, key: impl Into<String>) {
        let key = key.into();
        {
            let mut state = self.state.lock();
            if state.processing.contains(&key) {
                state.dirty.insert(key);
                return;
            }
            if !state.queued.insert(key.clone()) {
                return;
            }
            state.ready.push_back(key);
        }
        self.notify.notify_one();
    }

    /// Queues `key` after `delay` (an earlier pending delay of the same key wins).
    pub fn add_after(&self, key: impl Into<String>, delay: Duration) {
        if delay.is_zero() {
            self.add(key);
            return;
        }
        let key = key.into();
        let at = Instant::now() + delay;
        {
            let mut state = self.state.lock();
            let entry = state.delayed.entry(key).or_insert(at);
            if at < *entry {
                *entry = at;
            }
        }
        self.notify.notify_one();
    }

    /// Keys queued or waiting for a delay.
    pub fn len(&self) -> usize {
        let state = self.state.lock();
        state.queued.len() + state.delayed.keys().filter(|k| !state.queued.contains(*k)).count()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    async fn next(&self) -> String {
        loop {
            let wake_at = {
                let mut state = self.state.lock();
                let now = Instant::now();
                let due: Vec<String> =
                    state.delayed.iter().filter(|(_, at)| **at <= now).map(|(key, _)| key.clone()).collect();
                for key in due {
                    state.delayed.remove(&key);
                    if state.processing.contains(&key) {
                        state.dirty.insert(key);
                    } else if state.queued.insert(key.clone()) {
                        state.ready.push_back(key);
                    }
                }
                if let Some(key) = state.ready.pop_front() {
                    state.queued.remove(&key);
                    state.processing.insert(key.clone());
                    return key;
                }
                state.delayed.values().min().copied()
            };
            match wake_at {
                Some(at) => {
                    tokio::select! {
                        _ = self.notify.notified() => {}
                        _ = tokio::time::sleep_until(at) => {}
                    }
                }
                None => self.notify.notified().await,
            }
        }
    }

    fn done(&self, key: &str, result: Result<Option<Duration>, ()>) {
        let requeue = {
            let mut state = self.state.lock();
            state.processing.remove(key);
            let retry = match result {
                Ok(after) => {
                    state.failures.remove(key);
                    after
                }
                Err(()) => {
                    let failures = state.failures.entry(key.to_string()).or_insert(0);
                    *failures = failures.saturating_add(1);
                    Some(retry_delay(*failures))
                }
            };
            if state.dirty.remove(key) && state.queued.insert(key.to_string()) {
                state.ready.push_back(key.to_string());
            }
            retry
        };
        self.notify.notify_one();
        if let Some(after) = requeue {
            self.add_after(key.to_string(), after);
        }
    }

    /// Processes keys with `workers` concurrent syncs until the future is dropped. `sync`
    /// returns when to look at the key again (`Ok(None)`: only on the next event), or an
    /// error (logged by the caller) to retry with back-off.
    pub async fn run<F, Fut, E>(&self, workers: usize, sync: F)
    where
        F: Fn(String) -> Fut + Clone,
        Fut: Future<Output = Result<Option<Duration>, E>>,
    {
        let loops = (0..workers.max(1)).map(|_| {
            let sync = sync.clone();
            async move {
                loop {
                    let key = self.next().await;
                    let result = sync(key.clone()).await.map_err(|_| ());
                    self.done(&key, result);
                }
            }
        });
        futures::future::join_all(loops).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn retries_back_off_to_fifty_seconds() {
        let delays: Vec<u128> = (1..=9).map(|n| retry_delay(n).as_millis()).collect();
        assert_eq!(delays, [500, 1000, 2000, 4000, 8000, 16000, 32000, 50000, 50000]);
    }

    #[tokio::test]
    async fn one_key_is_processed_once_at_a_time() {
        let queue = WorkQueue::new();
        queue.add("pod-a");
        queue.add("pod-a");
        queue.add("pod-b");
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.next().await, "pod-a");
        queue.add("pod-a");
        assert_eq!(queue.next().await, "pod-b", "pod-a is being processed: its new add waits");
        queue.done("pod-a", Ok(None));
        assert_eq!(queue.next().await, "pod-a", "the add during processing runs it again");
        queue.done("pod-a", Ok(None));
        queue.done("pod-b", Ok(None));
        assert!(queue.is_empty());
    }

    #[tokio::test]
    async fn delayed_and_failed_keys_come_back() {
        let queue = WorkQueue::new();
        queue.add_after("later", Duration::from_millis(60));
        let started = Instant::now();
        assert_eq!(queue.next().await, "later");
        assert!(started.elapsed() >= Duration::from_millis(60));
        queue.done("later", Err(()));
        let failed_at = Instant::now();
        assert_eq!(queue.next().await, "later");
        assert!(failed_at.elapsed() >= FIRST_RETRY, "a failure retries after the back-off");
        queue.done("later", Ok(None));
    }

    #[tokio::test]
    async fn run_processes_with_several_workers() {
        let queue = WorkQueue::new();
        for n in 0..20 {
            queue.add(format!("k{n}"));
        }
        let count = Arc::new(AtomicUsize::new(0));
        let counted = count.clone();
        let run = queue.run(4, move |_key| {
            let count = counted.clone();
            async move {
                count.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ()>(None)
            }
        });
        let _ = tokio::time::timeout(Duration::from_millis(200), run).await;
        assert_eq!(count.load(Ordering::SeqCst), 20);
    }
}
