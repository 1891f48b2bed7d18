//! The `controller_queue_depth` gauge: how many objects are waiting for a reconcile.
//!
//! kube-runtime's scheduler does not expose its length, so the controller reports it here:
//! every watch event that maps to an object marks it pending, and the start of its reconcile
//! clears it. A set, like the scheduler, so that ten events about one object count once.

use std::{collections::HashSet, sync::Arc};

use parking_lot::Mutex;

use super::Metrics;

/// Objects triggered but not yet being reconciled, mirrored into the queue-depth gauge.
#[derive(Clone)]
pub struct PendingQueue {
    keys: Arc<Mutex<HashSet<String>>>,
    metrics: Metrics,
    controller: &'static str,
}

impl PendingQueue {
    /// An empty queue reporting as `controller`.
    pub fn new(metrics: Metrics, controller: &'static str) -> Self {
        metrics.set_queue_depth(controller, 0);
        Self { keys: Arc::default(), metrics, controller }
    }

    /// A watch event asked for `key` (`namespace/name`) to be reconciled.
    pub fn triggered(&self, key: String) {
        let depth = {
            let mut keys = self.keys.lock();
            keys.insert(key);
            keys.len()
        };
        self.metrics.set_queue_depth(self.controller, depth as i64);
    }

    /// The reconcile of `key` started.
    pub fn started(&self, key: &str) {
        let depth = {
            let mut keys = self.keys.lock();
            keys.remove(key);
            keys.len()
        };
        self.metrics.set_queue_depth(self.controller, depth as i64);
    }

    /// Objects waiting now.
    pub fn depth(&self) -> usize {
        self.keys.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_triggers_count_once_and_a_started_reconcile_clears_them() {
        let queue = PendingQueue::new(Metrics::new(), "test");
        queue.triggered("ns/a".into());
        queue.triggered("ns/a".into());
        queue.triggered("ns/b".into());
        assert_eq!(queue.depth(), 2);
        queue.started("ns/a");
        assert_eq!(queue.depth(), 1);
        queue.started("ns/unknown");
        assert_eq!(queue.depth(), 1);
        assert!(queue.metrics.render().contains("kruise_controller_queue_depth{controller=\"test\"} 1"));
    }
}
