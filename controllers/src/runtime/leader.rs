//! Leader election on a `coordination.k8s.io/v1` Lease, as controller-runtime does it: only the
//! holder of a fresh lease reconciles; the others keep trying, and one of them takes over once
//! the holder stops renewing for `lease_duration`. Writes use the Lease's resourceVersion, so two
//! candidates can never both believe they won.

use std::time::Duration;

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::Timestamp,
};
use kube::{Api, Client, api::PostParams};
use tokio::sync::watch;

/// Lease timings (controller-runtime's defaults).
#[derive(Clone, Debug)]
pub struct LeaderElectionConfig {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease (`kruise-manager`).
    pub name: String,
    /// This candidate's identity (hostname + a random suffix).
    pub identity: String,
    /// How long a lease is valid without renewal.
    pub lease_duration: Duration,
    /// How often the holder renews, and candidates retry.
    pub retry_period: Duration,
}

impl LeaderElectionConfig {
    /// Defaults: 15 s lease, 2 s retry.
    pub fn new(namespace: &str, name: &str, identity: &str) -> Self {
        Self {
            namespace: namespace.to_string(),
            name: name.to_string(),
            identity: identity.to_string(),
            lease_duration: Duration::from_secs(15),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// What a candidate should do with the lease it sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseDecision {
    /// Nobody holds it (or the holder let it expire): take it, bumping the transition count.
    Acquire,
    /// We hold it: renew.
    Renew,
    /// Someone else holds a fresh lease: wait.
    Follow {
        /// The holder.
        holder: String,
    },
}

/// Decides from the current lease spec (if any), our identity and the time.
pub fn decide(spec: Option<&LeaseSpec>, identity: &str, now: Timestamp) -> LeaseDecision {
    let Some(spec) = spec else { return LeaseDecision::Acquire };
    let holder = spec.holder_identity.clone().unwrap_or_default();
    if holder == identity {
        return LeaseDecision::Renew;
    }
    if holder.is_empty() {
        return LeaseDecision::Acquire;
    }
    let duration = spec.lease_duration_seconds.unwrap_or(15).max(1);
    let renewed = spec.renew_time.as_ref().map(|t| t.0).or(spec.acquire_time.as_ref().map(|t| t.0));
    let expired =
        renewed.is_none_or(|renewed| now.duration_since(renewed).as_secs_f64() > f64::from(duration));
    if expired { LeaseDecision::Acquire } else { LeaseDecision::Follow { holder } }
}

/// One attempt: reads the lease and acquires or renews it when allowed. Ok(true) when we hold it
/// afterwards.
pub async fn try_acquire_or_renew(
    client: &Client,
    config: &LeaderElectionConfig,
) -> Result<bool, kube::Error> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), &config.namespace);
    let now = Timestamp::now();
    let current = leases.get_opt(&config.name).await?;
    let decision = decide(current.as_ref().and_then(|l| l.spec.as_ref()), &config.identity, now);
    let seconds = config.lease_duration.as_secs().max(1) as i32;
    match (decision, current) {
        (LeaseDecision::Follow { .. }, _) => Ok(false),
        (_, None) => {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(config.name.clone()),
                    namespace: Some(config.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(config.identity.clone()),
                    lease_duration_seconds: Some(seconds),
                    acquire_time: Some(MicroTime(now)),
                    renew_time: Some(MicroTime(now)),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            match leases.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(error) => Err(error),
            }
        }
        (decision, Some(mut lease)) => {
            let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
            if decision == LeaseDecision::Acquire {
                spec.holder_identity = Some(config.identity.clone());
                spec.acquire_time = Some(MicroTime(now));
                spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
            }
            spec.lease_duration_seconds = Some(seconds);
            spec.renew_time = Some(MicroTime(now));
            match leases.replace(&config.name, &PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(error) => Err(error),
            }
        }
    }
}

/// Keeps trying to lead and reports leadership on `leading`. A leader that cannot renew for a
/// whole lease duration steps down (reports false) before anyone else may take over.
pub async fn run(client: Client, config: LeaderElectionConfig, leading: watch::Sender<bool>) {
    let mut last_renewed: Option<tokio::time::Instant> = None;
    loop {
        match try_acquire_or_renew(&client, &config).await {
            Ok(true) => {
                last_renewed = Some(tokio::time::Instant::now());
                if !*leading.borrow() {
                    tracing::info!(identity = %config.identity, lease = %config.name, "became the leader");
                }
                leading.send_replace(true);
            }
            Ok(false) => {
                if *leading.borrow() {
                    tracing::warn!(identity = %config.identity, "lost the lease to another candidate");
                }
                last_renewed = None;
                leading.send_replace(false);
            }
            Err(error) => {
                tracing::warn!(%error, "leader election request failed");
                let stale =
                    last_renewed.is_none_or(|at| at.elapsed() >= config.lease_duration - config.retry_period);
                if stale && *leading.borrow() {
                    tracing::warn!(identity = %config.identity, "could not renew the lease in time; stepping down");
                    leading.send_replace(false);
                }
            }
        }
        tokio::time::sleep(config.retry_period).await;
    }
}

/// Gives the lease up (on shutdown), so a successor need not wait for it to expire.
pub async fn release(client: &Client, config: &LeaderElectionConfig) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), &config.namespace);
    let Ok(Some(mut lease)) = leases.get_opt(&config.name).await else { return };
    let Some(spec) = lease.spec.as_mut() else { return };
    if spec.holder_identity.as_deref() != Some(config.identity.as_str()) {
        return;
    }
    spec.holder_identity = None;
    spec.renew_time = None;
    spec.acquire_time = None;
    if let Err(error) = leases.replace(&config.name, &PostParams::default(), &lease).await {
        tracing::debug!(%error, "could not release the lease");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(holder: Option<&str>, renewed: &str) -> LeaseSpec {
        LeaseSpec {
            holder_identity: holder.map(str::to_string),
            lease_duration_seconds: Some(15),
            renew_time: Some(MicroTime(renewed.parse().unwrap())),
            ..Default::default()
        }
    }

    #[test]
    fn candidates_follow_a_fresh_lease_and_take_an_expired_one() {
        let now: Timestamp = "2026-01-01T00:00:20Z".parse().unwrap();
        let cases = [
            (None, LeaseDecision::Acquire),
            (Some(lease(Some("me"), "2026-01-01T00:00:19Z")), LeaseDecision::Renew),
            (Some(lease(Some("me"), "2026-01-01T00:00:00Z")), LeaseDecision::Renew),
            (
                Some(lease(Some("other"), "2026-01-01T00:00:10Z")),
                LeaseDecision::Follow { holder: "other".into() },
            ),
            (Some(lease(Some("other"), "2026-01-01T00:00:04Z")), LeaseDecision::Acquire),
            (Some(lease(None, "2026-01-01T00:00:19Z")), LeaseDecision::Acquire),
        ];
        for (spec, expected) in cases {
            assert_eq!(decide(spec.as_ref(), "me", now), expected, "{spec:?}");
        }
    }
}
