//! The manager's work queue: the shared [`kruise_runtime::workqueue`] with the manager's retry
//! back-off. The NodeImage, image job, ContainerRecreateRequest and probe controllers drive their
//! reconciles from it because they must also act on objects that do not exist (a Node without
//! its NodeImage), which kube-runtime's `Controller` cannot.

use std::time::Duration;

pub use kruise_runtime::workqueue::{Backoff, WorkQueue};

/// The manager's retry back-off for failed reconciles: 500 ms doubling to a minute.
pub const BACKOFF: Backoff = Backoff::new(Duration::from_millis(500), Duration::from_secs(60));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_reconciles_back_off_to_a_minute() {
        assert_eq!(
            (BACKOFF.delay(1), BACKOFF.delay(9)),
            (Duration::from_millis(500), Duration::from_secs(60))
        );
    }
}
