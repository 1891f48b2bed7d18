//! The daemon's work queue: the shared [`kruise_runtime::workqueue`] with upstream
//! kruise-daemon's retry back-off. The container recreate executor keys it by pod, so the
//! requests of one pod are carried out one at a time while pods proceed in parallel.

use std::time::Duration;

pub use kruise_runtime::workqueue::{Backoff, WorkQueue};

/// The daemon's retry back-off for failed syncs (upstream `crr` queue): 500 ms doubling to 50 s.
pub const BACKOFF: Backoff = Backoff::new(Duration::from_millis(500), Duration::from_secs(50));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_syncs_back_off_to_fifty_seconds() {
        assert_eq!(
            (BACKOFF.delay(1), BACKOFF.delay(9)),
            (Duration::from_millis(500), Duration::from_secs(50))
        );
    }
}
