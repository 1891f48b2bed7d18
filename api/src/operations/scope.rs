//! Which rollouts a request path names, and who may touch them.
//!
//! Namespaced workloads' rollouts live under `/v1/namespaces/{ns}/rollouts`; a SidecarSet is
//! cluster-scoped, so its rollouts live under `/v1/sidecarsets/{name}/rollouts` and are stored
//! with an empty namespace. A SidecarSet's sidecars run in pods of every namespace it selects,
//! so the scope rule for it is that only a token whose namespaces are `"*"` (and whose actions
//! include `rollout`) may start, read or steer its rollouts: a token limited to some namespaces
//! must not change pods outside them, and which namespaces a SidecarSet reaches can change with
//! its selectors and with namespace labels at any time.

use std::sync::Arc;

use super::{Draft, Operations, RequestContext, check_namespace};
use crate::{
    auth::{Action, Principal},
    error::ApiError,
    model::WorkloadKind,
    store::RolloutRow,
};

/// The rollouts a request path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RolloutScope<'a> {
    /// A namespace's (`/v1/namespaces/{namespace}/rollouts`): CloneSets, StatefulSets and
    /// DaemonSets.
    Namespace(&'a str),
    /// One SidecarSet's (`/v1/sidecarsets/{name}/rollouts`).
    SidecarSet(&'a str),
}

impl RolloutScope<'_> {
    /// The namespace the audit records (none for a cluster-scoped SidecarSet, so that only
    /// tokens reading every namespace see those records).
    pub fn audit_namespace(&self) -> Option<&str> {
        match self {
            Self::Namespace(namespace) => Some(namespace),
            Self::SidecarSet(_) => None,
        }
    }

    /// The namespace the store keeps rollouts under (empty for a SidecarSet).
    pub fn store_namespace(&self) -> &str {
        match self {
            Self::Namespace(namespace) => namespace,
            Self::SidecarSet(_) => "",
        }
    }

    /// The collection's path below `/v1/`, as the audit names it.
    pub fn collection(&self) -> String {
        match self {
            Self::Namespace(namespace) => format!("namespaces/{namespace}/rollouts"),
            Self::SidecarSet(name) => format!("sidecarsets/{name}/rollouts"),
        }
    }

    /// The request field that names the target when it is not found or cannot be driven.
    pub fn name_field(&self) -> &'static str {
        match self {
            Self::Namespace(_) => "workload.name",
            Self::SidecarSet(_) => crate::workload::sidecarset::NAME_FIELD,
        }
    }

    /// Whether a stored rollout belongs to this scope.
    pub fn holds(&self, row: &RolloutRow) -> bool {
        let cluster_scoped =
            WorkloadKind::parse(&row.workload_kind).is_some_and(WorkloadKind::is_cluster_scoped);
        match self {
            Self::Namespace(namespace) => {
                !cluster_scoped && !namespace.is_empty() && row.namespace == *namespace
            }
            Self::SidecarSet(name) => {
                cluster_scoped && row.namespace.is_empty() && row.workload_name == *name
            }
        }
    }

    /// The answer when rollout `id` is not in this scope.
    pub fn not_found(&self, id: &str) -> ApiError {
        match self {
            Self::Namespace(namespace) => {
                ApiError::NotFound(format!("rollout {id:?} not found in namespace {namespace:?}"))
            }
            Self::SidecarSet(name) => {
                ApiError::NotFound(format!("rollout {id:?} not found for SidecarSet {name:?}"))
            }
        }
    }

    /// Checks the path's namespace or name (a DNS-1123 label, or a SidecarSet name).
    pub fn check(&self) -> Result<(), ApiError> {
        match self {
            Self::Namespace(namespace) => check_namespace(namespace),
            Self::SidecarSet(name) => {
                let problems = kruise_crds::validation::meta::dns1123_subdomain_problems(name);
                if problems.is_empty() {
                    Ok(())
                } else {
                    Err(ApiError::field(
                        crate::workload::sidecarset::NAME_FIELD,
                        format!("{name:?} is not a valid SidecarSet name: {}", problems.join("; ")),
                    ))
                }
            }
        }
    }
}

impl Operations {
    /// The principal, when its scope covers rollouts in `scope` (see the module's rule for
    /// SidecarSets); a 401 or 403 is recorded and returned otherwise.
    pub(super) async fn authorize_rollouts(
        &self,
        ctx: &RequestContext,
        draft: &Draft,
        scope: &RolloutScope<'_>,
    ) -> Result<Arc<Principal>, ApiError> {
        match scope {
            RolloutScope::Namespace(namespace) => {
                self.authorize(ctx, draft, Action::Rollout, Some(namespace)).await
            }
            RolloutScope::SidecarSet(name) => {
                let principal = self.authenticated(ctx, draft).await?;
                if principal.may_cluster_wide(Action::Rollout) {
                    return Ok(principal);
                }
                let error = ApiError::Forbidden(format!(
                    "token {:?} may not perform \"rollout\" on SidecarSet {name:?}: a SidecarSet's sidecars run \
                     in pods of any namespace, so its rollouts need a token for every namespace (\"*\")",
                    principal.name
                ));
                self.refuse(ctx, draft, error).await
            }
        }
    }
}
