//! Expectations: what a controller has asked the API for and not yet seen in its cache. A
//! controller that acts on a stale cache would create or delete the same pod twice; instead it
//! records every create and delete it issues, and does not scale a workload again until its cache
//! shows all of them (or they time out, when something else removed the object first). Updates are
//! tracked by resourceVersion: after patching a pod, the controller waits until the cached pod is
//! at least that new.
//!
//! Pure data structures with the time passed in, so the rules are table-tested.

use std::{
    collections::{HashMap, HashSet},
    time::{Duration, Instant},
};

use parking_lot::Mutex;

/// How long an unobserved expectation blocks its workload (upstream's `ExpectationTimeout`).
pub const EXPECTATION_TIMEOUT: Duration = Duration::from_secs(300);

/// A create or a delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleAction {
    /// A pod (or PVC) was created.
    Create,
    /// A pod was deleted.
    Delete,
}

#[derive(Default, Debug)]
struct Pending {
    names: HashMap<(ScaleAction, String), Instant>,
}

/// Whether a workload's expectations are met.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Satisfied {
    /// Nothing pending: the cache shows every create and delete.
    Yes,
    /// Some are pending; look again after this long at the latest.
    No {
        /// Time until the oldest pending expectation times out.
        retry_after: Duration,
        /// How many are pending.
        pending: usize,
    },
}

/// Creates and deletes per workload (key `namespace/name`), by object name.
#[derive(Default)]
pub struct ScaleExpectations {
    pending: Mutex<HashMap<String, Pending>>,
    timed_out: Mutex<u64>,
}

impl ScaleExpectations {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `name` was asked to be created or deleted for `workload`, at `now`.
    pub fn expect(&self, workload: &str, action: ScaleAction, name: &str, now: Instant) {
        self.pending
            .lock()
            .entry(workload.to_string())
            .or_default()
            .names
            .insert((action, name.to_string()), now);
    }

    /// Forgets an expectation (the request failed, so nothing will be observed).
    pub fn forget(&self, workload: &str, action: ScaleAction, name: &str) {
        if let Some(pending) = self.pending.lock().get_mut(workload) {
            pending.names.remove(&(action, name.to_string()));
        }
    }

    /// Marks what the cache shows: created names present, deleted names absent (or terminating).
    pub fn observe(&self, workload: &str, present: &HashSet<String>) {
        let mut all = self.pending.lock();
        let Some(pending) = all.get_mut(workload) else { return };
        pending.names.retain(|(action, name), _| match action {
            ScaleAction::Create => !present.contains(name),
            ScaleAction::Delete => present.contains(name),
        });
        if pending.names.is_empty() {
            all.remove(workload);
        }
    }

    /// Whether the workload may scale again, dropping expectations older than `timeout`.
    pub fn satisfied(&self, workload: &str, now: Instant, timeout: Duration) -> Satisfied {
        let mut all = self.pending.lock();
        let Some(pending) = all.get_mut(workload) else { return Satisfied::Yes };
        let before = pending.names.len();
        pending.names.retain(|_, since| now.saturating_duration_since(*since) < timeout);
        let dropped = before - pending.names.len();
        if dropped > 0 {
            *self.timed_out.lock() += dropped as u64;
            tracing::warn!(workload, dropped, "expectations timed out; the cache never showed them");
        }
        if pending.names.is_empty() {
            all.remove(workload);
            return Satisfied::Yes;
        }
        let oldest = pending.names.values().min().copied().unwrap_or(now);
        Satisfied::No {
            retry_after: timeout.saturating_sub(now.saturating_duration_since(oldest)),
            pending: pending.names.len(),
        }
    }

    /// Drops everything about a workload (it was deleted).
    pub fn delete(&self, workload: &str) {
        self.pending.lock().remove(workload);
    }

    /// How many expectations have timed out so far (a metric).
    pub fn timeouts(&self) -> u64 {
        *self.timed_out.lock()
    }
}

/// The resourceVersion a controller wrote per object (key `namespace/name`), until its cache
/// shows that version or newer.
#[derive(Default)]
pub struct ResourceVersionExpectations {
    expected: Mutex<HashMap<String, (u64, Instant)>>,
}

fn parse(rv: &str) -> Option<u64> {
    rv.parse().ok()
}

impl ResourceVersionExpectations {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `object` was written at resourceVersion `rv`.
    pub fn expect(&self, object: &str, rv: &str, now: Instant) {
        if let Some(rv) = parse(rv) {
            let mut all = self.expected.lock();
            let entry = all.entry(object.to_string()).or_insert((rv, now));
            if rv >= entry.0 {
                *entry = (rv, now);
            }
        }
    }

    /// Whether the cached copy (at `cached_rv`) is at least as new as what was written; a met or
    /// timed-out expectation is dropped.
    pub fn is_satisfied(&self, object: &str, cached_rv: &str, now: Instant, timeout: Duration) -> bool {
        let mut all = self.expected.lock();
        let Some((want, since)) = all.get(object).copied() else { return true };
        let seen = parse(cached_rv).is_some_and(|seen| seen >= want);
        if seen || now.saturating_duration_since(since) >= timeout {
            all.remove(object);
            return true;
        }
        false
    }

    /// Forgets an object (it was deleted).
    pub fn delete(&self, object: &str) {
        self.expected.lock().remove(object);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> HashSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn creates_and_deletes_block_until_the_cache_shows_them() {
        let expectations = ScaleExpectations::new();
        let t0 = Instant::now();
        let timeout = Duration::from_secs(300);
        assert_eq!(expectations.satisfied("ns/cs", t0, timeout), Satisfied::Yes);
        expectations.expect("ns/cs", ScaleAction::Create, "cs-a", t0);
        expectations.expect("ns/cs", ScaleAction::Delete, "cs-old", t0);
        assert!(matches!(expectations.satisfied("ns/cs", t0, timeout), Satisfied::No { pending: 2, .. }));
        // The cache shows the new pod but still the old one.
        expectations.observe("ns/cs", &names(&["cs-a", "cs-old"]));
        assert!(matches!(expectations.satisfied("ns/cs", t0, timeout), Satisfied::No { pending: 1, .. }));
        expectations.observe("ns/cs", &names(&["cs-a"]));
        assert_eq!(expectations.satisfied("ns/cs", t0, timeout), Satisfied::Yes);
    }

    #[test]
    fn stale_expectations_time_out_and_are_counted() {
        let expectations = ScaleExpectations::new();
        let t0 = Instant::now();
        let timeout = Duration::from_secs(10);
        expectations.expect("ns/cs", ScaleAction::Create, "cs-a", t0);
        let Satisfied::No { retry_after, .. } =
            expectations.satisfied("ns/cs", t0 + Duration::from_secs(4), timeout)
        else {
            panic!("pending")
        };
        assert_eq!(retry_after, Duration::from_secs(6));
        assert_eq!(expectations.satisfied("ns/cs", t0 + Duration::from_secs(11), timeout), Satisfied::Yes);
        assert_eq!(expectations.timeouts(), 1);
    }

    #[test]
    fn failed_requests_are_forgotten() {
        let expectations = ScaleExpectations::new();
        let t0 = Instant::now();
        expectations.expect("ns/cs", ScaleAction::Create, "cs-a", t0);
        expectations.forget("ns/cs", ScaleAction::Create, "cs-a");
        assert_eq!(expectations.satisfied("ns/cs", t0, EXPECTATION_TIMEOUT), Satisfied::Yes);
    }

    #[test]
    fn resource_versions_wait_for_the_cache() {
        let expectations = ResourceVersionExpectations::new();
        let t0 = Instant::now();
        let timeout = Duration::from_secs(10);
        expectations.expect("ns/pod", "120", t0);
        assert!(!expectations.is_satisfied("ns/pod", "119", t0, timeout));
        assert!(expectations.is_satisfied("ns/pod", "120", t0, timeout));
        assert!(expectations.is_satisfied("ns/pod", "1", t0, timeout), "met once, then forgotten");
        expectations.expect("ns/pod", "200", t0);
        assert!(expectations.is_satisfied("ns/pod", "5", t0 + timeout, timeout), "times out");
    }
}
