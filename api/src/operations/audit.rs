//! Reading the audit history. A token with `audit-read` sees the records of its namespaces
//! (records without a namespace only with `"*"`); asking for another namespace is a 403.

use chrono::{DateTime, Utc};

use super::{Operations, RequestContext, parse_limit};
use crate::{
    auth::{Action, Scope},
    error::{ApiError, FieldError},
    model::{AuditList, AuditListParams, AuditRecord},
    store::{
        AuditQuery, AuditRow, Outcome,
        cursor::{self, Listing},
    },
};

impl Operations {
    /// `GET /v1/audit`: one page of records, newest first.
    pub async fn list_audit(
        &self,
        ctx: &RequestContext,
        params: &AuditListParams,
    ) -> Result<AuditList, ApiError> {
        let draft = self.draft(ctx, "audit.list", params.namespace.as_deref(), "audit".into());
        let principal = self.authorize(ctx, &draft, Action::AuditRead, params.namespace.as_deref()).await?;

        let mut errors = Vec::new();
        let limit = parse_limit(params.limit.as_deref()).map_err(|e| errors.push(e)).unwrap_or(50);
        let mut time = |field: &str, value: Option<&String>| -> Option<DateTime<Utc>> {
            let text = value?;
            match DateTime::parse_from_rfc3339(text) {
                Ok(time) => Some(time.with_timezone(&Utc)),
                Err(error) => {
                    errors.push(FieldError::new(field, format!("{text:?} is not an RFC 3339 time: {error}")));
                    None
                }
            }
        };
        let since = time("since", params.since.as_ref());
        let until = time("until", params.until.as_ref());
        let outcome = match params.outcome.as_deref() {
            None => None,
            Some(text) => match Outcome::parse(text) {
                Some(outcome) => Some(outcome),
                None => {
                    errors.push(FieldError::new(
                        "outcome",
                        format!("{text:?}: expected one of pending, accepted, rejected, denied, unauthenticated, failed"),
                    ));
                    None
                }
            },
        };
        let before_seq = match params.cursor.as_deref() {
            None => None,
            Some(text) => match cursor::decode(Listing::Audit, text) {
                Some(seq) => Some(seq),
                None => {
                    errors.push(FieldError::new(
                        "cursor",
                        "not a cursor of this listing (use nextCursor as given)",
                    ));
                    None
                }
            },
        };
        if !errors.is_empty() {
            return Err(ApiError::Validation(errors));
        }
        let allowed_namespaces = match &principal.namespaces {
            Scope::All => None,
            Scope::Only(namespaces) => Some(namespaces.clone()),
        };
        let query = AuditQuery {
            allowed_namespaces,
            namespace: params.namespace.clone(),
            actor: params.actor.clone(),
            action: params.action.clone(),
            target: params.target.clone(),
            outcome,
            since,
            until,
            limit,
            before_seq,
        };
        let page = self.store().query_audit(&query).await?;
        Ok(AuditList {
            items: page.items.into_iter().map(audit_record).collect(),
            next_cursor: page.next_before.map(|seq| cursor::encode(Listing::Audit, seq)),
        })
    }
}

fn audit_record(row: AuditRow) -> AuditRecord {
    AuditRecord {
        id: row.id,
        time: row.time,
        actor: row.actor,
        action: row.action,
        namespace: row.namespace,
        target: row.target,
        rollout_id: row.rollout_id,
        task_id: row.task_id,
        request: row.request.0,
        outcome: Outcome::parse(&row.outcome).unwrap_or(Outcome::Failed),
        http_status: u16::try_from(row.http_status).unwrap_or(0),
        grpc_status: row.grpc_status,
        correlation_id: row.correlation_id,
        message: row.message,
        finished_at: row.finished_at,
    }
}
