//! Request counters: how many resource requests the server answered, by client (the program
//! part of the `User-Agent`), verb, resource, subresource and status code. Benchmarks and tests
//! read them to count a component's API writes (see [`super::ApiServer::requests`]); the cost is
//! one short mutex-guarded map update per request.

use std::{collections::HashMap, sync::Arc};

use parking_lot::Mutex;

use super::request::{ResourceRequest, Verb};

/// What one counter counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestKey {
    /// The client: its `User-Agent` up to the first `/` (empty when it sent none).
    pub client: String,
    /// The verb.
    pub verb: Verb,
    /// API group ("" for core).
    pub group: String,
    /// Plural resource name.
    pub resource: String,
    /// Subresource (`status`, `binding`, ...), if any.
    pub subresource: Option<String>,
    /// HTTP status code of the answer (a watch counts once, when it is answered).
    pub code: u16,
}

impl RequestKey {
    /// True when the request was a write (create, update, patch, delete, deletecollection),
    /// whether or not it succeeded.
    pub fn is_write(&self) -> bool {
        self.verb.is_write()
    }
}

/// Counts of the resource requests a server answered since it started.
#[derive(Clone, Debug, Default)]
pub struct RequestCounts {
    counts: Arc<Mutex<HashMap<RequestKey, u64>>>,
}

impl RequestCounts {
    /// Counts one answered request.
    pub fn record(&self, user_agent: &str, request: &ResourceRequest, code: u16) {
        let key = RequestKey {
            client: user_agent.split('/').next().unwrap_or_default().trim().to_string(),
            verb: request.verb,
            group: request.group.clone(),
            resource: request.resource.clone(),
            subresource: request.subresource.clone(),
            code,
        };
        *self.counts.lock().entry(key).or_insert(0) += 1;
    }

    /// Every counter now (subtract two snapshots to count what happened in between).
    pub fn snapshot(&self) -> HashMap<RequestKey, u64> {
        self.counts.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(verb: Verb, resource: &str, subresource: Option<&str>) -> ResourceRequest {
        ResourceRequest {
            group: String::new(),
            version: "v1".into(),
            resource: resource.into(),
            namespace: Some("default".into()),
            name: Some("p".into()),
            subresource: subresource.map(str::to_string),
            verb,
        }
    }

    #[test]
    fn counts_by_client_verb_resource_and_code() {
        let counts = RequestCounts::default();
        counts.record("kubelet/v1.34 (linux)", &request(Verb::Patch, "pods", Some("status")), 200);
        counts.record("kubelet/v1.34 (linux)", &request(Verb::Patch, "pods", Some("status")), 200);
        counts.record("kubelet", &request(Verb::Patch, "pods", Some("status")), 409);
        counts.record("", &request(Verb::Get, "pods", None), 200);
        let snapshot = counts.snapshot();
        let key = |client: &str, verb, code| RequestKey {
            client: client.into(),
            verb,
            group: String::new(),
            resource: "pods".into(),
            subresource: if verb == Verb::Get { None } else { Some("status".into()) },
            code,
        };
        assert_eq!(snapshot[&key("kubelet", Verb::Patch, 200)], 2);
        assert_eq!(snapshot[&key("kubelet", Verb::Patch, 409)], 1);
        assert_eq!(snapshot[&key("", Verb::Get, 200)], 1);
        assert_eq!(snapshot.len(), 3);
        let writes: u64 = snapshot.iter().filter(|(k, _)| k.is_write()).map(|(_, n)| n).sum();
        assert_eq!(writes, 3);
    }
}
