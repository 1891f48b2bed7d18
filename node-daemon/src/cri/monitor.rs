//! The runtime health check behind `/readyz`: `Version` every few seconds while the runtime
//! answers; when it does not, the daemon reports NotReady and retries with a growing back-off
//! (reconnecting each time), and turns Ready again as soon as the runtime answers.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use tokio_util::sync::CancellationToken;

use super::CriClient;
use crate::metrics::DaemonMetrics;

/// How often the runtime is checked.
#[derive(Clone, Debug)]
pub struct MonitorOptions {
    /// Between checks while the runtime answers.
    pub healthy_interval: Duration,
    /// First retry after a failure; doubled on each further failure.
    pub initial_backoff: Duration,
    /// Longest wait between retries.
    pub max_backoff: Duration,
}

impl Default for MonitorOptions {
    fn default() -> Self {
        Self {
            healthy_interval: Duration::from_secs(5),
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(5),
        }
    }
}

/// The wait after `failures` consecutive failed checks (at least one).
pub fn retry_delay(options: &MonitorOptions, failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(16));
    options.initial_backoff.saturating_mul(factor).min(options.max_backoff)
}

/// Checks the runtime until `stop` fires, keeping `ready` (the `cri` readiness check) and the
/// `cri_up` gauge current.
pub async fn monitor(
    cri: CriClient,
    ready: Arc<AtomicBool>,
    metrics: DaemonMetrics,
    options: MonitorOptions,
    stop: CancellationToken,
) {
    let mut failures = 0u32;
    loop {
        let wait = match cri.version().await {
            Ok(version) => {
                if failures > 0 || !ready.load(Ordering::SeqCst) {
                    tracing::info!(
                        runtime = %version.runtime_name,
                        runtime_version = %version.runtime_version,
                        api = %version.runtime_api_version,
                        "container runtime is reachable"
                    );
                }
                failures = 0;
                ready.store(true, Ordering::SeqCst);
                metrics.set_cri_up(true);
                options.healthy_interval
            }
            Err(error) => {
                failures = failures.saturating_add(1);
                if failures == 1 {
                    tracing::warn!(%error, "container runtime is not reachable: reporting NotReady and retrying");
                } else {
                    tracing::debug!(%error, failures, "container runtime still not reachable");
                }
                ready.store(false, Ordering::SeqCst);
                metrics.set_cri_up(false);
                cri.reset().await;
                retry_delay(&options, failures)
            }
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_up_to_the_cap() {
        let options = MonitorOptions::default();
        let delays: Vec<u128> = (1..=7).map(|n| retry_delay(&options, n).as_millis()).collect();
        assert_eq!(delays, [250, 500, 1000, 2000, 4000, 5000, 5000]);
        assert_eq!(retry_delay(&options, u32::MAX), Duration::from_secs(5));
    }
}
