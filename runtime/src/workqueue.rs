//! A keyed work queue (client-go's rate-limited delaying workqueue, in small): a key is queued
//! at most once, is processed by one worker at a time (an add while it is processed runs it
//! again afterwards), can be added after a delay, and is retried with an exponential back-off
//! when its sync fails.
//!
//! kube-runtime's `Controller` only reconciles objects present in its store; several of the
//! manager's controllers must also act on objects that do not exist (a Node without its
//! NodeImage), and the daemon's executors must serialise work per pod while pods proceed in
//! parallel, so both drive their syncs from this queue, fed by their watches. The queue lives
//! inside its owner's future: dropping that future (leadership lost, shutdown) stops
//! everything, with nothing left running. The back-off is a parameter because upstream's
//! manager and daemon use different ceilings.

use std::{
    collections::{HashMap, HashSet, VecDeque},
    future::Future,
    sync::Arc,
    time::Duration,
};

use parking_lot::Mutex;
use tokio::{sync::Notify, time::Instant};

/// How long a failing key waits before its next try: `first` after one failure, doubling per
/// further consecutive failure, never more than `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// The delay after the first failure.
    pub first: Duration,
    /// The longest delay.
    pub max: Duration,
}

impl Backoff {
    /// A back-off from `first` doubling up to `max`.
    pub const fn new(first: Duration, max: Duration) -> Self {
        Self { first, max }
    }

    /// The retry delay after `failures` consecutive failures (at least one).
    pub fn delay(&self, failures: u32) -> Duration {
        self.first.saturating_mul(2u32.saturating_pow(failures.saturating_sub(1).min(16))).min(self.max)
    }
}

#[derive(Default)]
struct State {
    ready: VecDeque<String>,
    queued: HashSet<String>,
    processing: HashSet<String>,
    dirty: HashSet<String>,
    delayed: HashMap<String, Instant>,
    failures: HashMap<String, u32>,
}

/// A cheap handle; clone it into the watch handlers.
#[derive(Clone)]
pub struct WorkQueue {
    state: Arc<Mutex<State>>,
    notify: Arc<Notify>,
    backoff: Backoff,
}

impl WorkQueue {
    /// An empty queue retrying failed keys with `backoff`.
    pub fn new(backoff: Backoff) -> Self {
        Self { state: Arc::default(), notify: Arc::default(), backoff }
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
        // Wake a waiting worker so it sleeps until the new earliest deadline.
        self.notify.notify_one();
    }

    /// Keys queued or waiting for a delay (the queue-depth gauge).
    pub fn len(&self) -> usize {
        let state = self.state.lock();
        state.queued.len() + state.delayed.keys().filter(|k| !state.queued.contains(*k)).count()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next key to process (waiting for one to be due).
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

    /// Marks `key` processed; `result` is the sync's outcome: `Ok(Some(d))` to look again
    /// after `d`, `Ok(None)` for nothing more, `Err(())` to retry with back-off.
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
                    Some(self.backoff.delay(*failures))
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
    /// returns when to look at the key again (`Ok(None)`: only on the next event), or an error
    /// (logged by the caller) to retry with back-off.
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

    const TEST_BACKOFF: Backoff = Backoff::new(Duration::from_millis(500), Duration::from_secs(60));

    #[test]
    fn retries_double_up_to_the_ceiling() {
        let cases = [
            // The manager's back-off.
            (Backoff::new(Duration::from_millis(500), Duration::from_secs(60)), 60_000),
            // The daemon's (upstream `crr` queue).
            (Backoff::new(Duration::from_millis(500), Duration::from_secs(50)), 50_000),
        ];
        for (backoff, ceiling) in cases {
            let delays: Vec<u128> = (1..=9).map(|n| backoff.delay(n).as_millis()).collect();
            assert_eq!(delays, [500, 1000, 2000, 4000, 8000, 16000, 32000, ceiling, ceiling], "{backoff:?}");
            assert_eq!(backoff.delay(0), backoff.first, "no failure yet counts as the first");
            assert_eq!(backoff.delay(u32::MAX).as_millis(), ceiling);
        }
    }

    #[tokio::test]
    async fn keys_are_deduplicated_and_processed_once_at_a_time() {
        let queue = WorkQueue::new(TEST_BACKOFF);
        queue.add("a");
        queue.add("a");
        queue.add("b");
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.next().await, "a");
        queue.add("a");
        assert_eq!(queue.next().await, "b", "a is being processed: its new add waits");
        queue.done("a", Ok(None));
        assert_eq!(queue.next().await, "a", "the add during processing runs it again");
        queue.done("a", Ok(None));
        queue.done("b", Ok(None));
        assert!(queue.is_empty());
    }

    #[tokio::test]
    async fn delayed_and_failed_keys_come_back() {
        let queue = WorkQueue::new(TEST_BACKOFF);
        queue.add_after("later", Duration::from_millis(60));
        queue.add_after("later", Duration::from_millis(400));
        let started = Instant::now();
        assert_eq!(queue.next().await, "later");
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(60) && waited < Duration::from_millis(350), "{waited:?}");
        queue.done("later", Err(()));
        let failed_at = Instant::now();
        assert_eq!(queue.next().await, "later");
        assert!(failed_at.elapsed() >= TEST_BACKOFF.first, "a failure retries after the back-off");
        queue.done("later", Ok(Some(Duration::from_millis(80))));
        let ok_at = Instant::now();
        assert_eq!(queue.next().await, "later");
        assert!(ok_at.elapsed() >= Duration::from_millis(80));
    }

    #[tokio::test]
    async fn run_processes_with_several_workers() {
        let queue = WorkQueue::new(TEST_BACKOFF);
        for n in 0..20 {
            queue.add(format!("k{n}"));
        }
        let count = Arc::new(AtomicUsize::new(0));
        let counted = count.clone();
        let run = queue.run(3, move |_key| {
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
