//! client-go's event correlator (`tools/record/events_cache.go`), which upstream's manager
//! records every Event through: it keeps a controller from writing one Event per pod action.
//!
//! Each occurrence goes through three steps, as in client-go:
//! 1. **Aggregation**: occurrences about one object with the same type and reason but more than
//!    [`AGGREGATE_MAX_EVENTS`] different messages within [`AGGREGATE_INTERVAL`] are folded into
//!    one Event whose message reads `(combined from similar events): <latest message>`.
//! 2. **Counting**: an occurrence identical to one already written (same object, type, reason,
//!    message) increments that Event's `count` and `lastTimestamp` (a patch) instead of writing
//!    a new Event.
//! 3. **Spam filter**: per source and object, a token bucket of [`SPAM_BURST`] writes refilled
//!    at one per [`SPAM_REFILL`]; occurrences beyond it are dropped.
//!
//! The correlator is pure: the caller passes the time and performs the write it returns.

use std::{
    collections::{BTreeSet, HashMap, hash_map::Entry},
    time::Duration,
};

use k8s_openapi::{
    api::core::v1::{Event, EventSource, ObjectReference},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
    jiff::Timestamp,
};
use serde_json::{Value, json};

/// Distinct messages of one reason about one object before they are combined.
pub const AGGREGATE_MAX_EVENTS: usize = 10;
/// How long a group of similar occurrences stays open.
pub const AGGREGATE_INTERVAL: Duration = Duration::from_secs(600);
/// Writes a source may make about one object in a burst.
pub const SPAM_BURST: f64 = 25.0;
/// One more write per this long after the burst.
pub const SPAM_REFILL: Duration = Duration::from_secs(300);
/// Entries each cache keeps (client-go's LRU size); the least recently used go first.
pub const CACHE_ENTRIES: usize = 4096;
/// The message prefix of a combined Event.
pub const COMBINED_PREFIX: &str = "(combined from similar events): ";

/// One thing that happened, to be recorded about `regarding`.
#[derive(Clone, Debug, PartialEq)]
pub struct Occurrence {
    /// The object it is about.
    pub regarding: ObjectReference,
    /// `Normal` or `Warning`.
    pub type_: String,
    /// Why, in one CamelCase word.
    pub reason: String,
    /// What, in words.
    pub message: String,
}

/// What to write for an occurrence.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// A new Event.
    Create(Event),
    /// An Event already written happened again: this strategic merge patch (count,
    /// lastTimestamp, message) updates it; if it is gone, create `event` instead.
    Patch {
        /// The Event as it should read now.
        event: Event,
        /// The patch body.
        patch: Value,
    },
    /// Dropped by the spam filter.
    Skip,
}

/// A map that forgets its least recently used entries beyond a capacity.
struct Lru<V> {
    entries: HashMap<String, (u64, V)>,
    clock: u64,
    capacity: usize,
}

impl<V> Lru<V> {
    fn new(capacity: usize) -> Self {
        Self { entries: HashMap::new(), clock: 0, capacity }
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(key).map(|(used, value)| {
            *used = clock;
            value
        })
    }

    /// The entry for `key`, made by `make` when absent or when `stale` says the present one is.
    fn fresh_entry(&mut self, key: &str, stale: impl Fn(&V) -> bool, make: impl FnOnce() -> V) -> &mut V {
        if !self.entries.contains_key(key) && self.entries.len() >= self.capacity {
            self.evict();
        }
        self.clock += 1;
        let clock = self.clock;
        let slot = match self.entries.entry(key.to_string()) {
            Entry::Occupied(occupied) => {
                let slot = occupied.into_mut();
                if stale(&slot.1) {
                    slot.1 = make();
                }
                slot
            }
            Entry::Vacant(vacant) => vacant.insert((clock, make())),
        };
        slot.0 = clock;
        &mut slot.1
    }

    /// Forgets the least recently used eighth at once, so eviction stays rare.
    fn evict(&mut self) {
        let mut ages: Vec<u64> = self.entries.values().map(|(used, _)| *used).collect();
        if ages.is_empty() {
            return;
        }
        ages.sort_unstable();
        let cutoff = ages[(self.capacity / 8).max(1).min(ages.len() - 1)];
        self.entries.retain(|_, (used, _)| *used >= cutoff);
    }

    fn insert(&mut self, key: String, value: V) {
        let _ = self.fresh_entry(&key, |_| true, || value);
    }
}

struct AggregateRecord {
    messages: BTreeSet<String>,
    last: Timestamp,
}

/// The Event last written for a key.
#[derive(Clone)]
struct Logged {
    count: i32,
    first: Timestamp,
    name: String,
}

struct Bucket {
    tokens: f64,
    at: Timestamp,
}

/// The correlator of one recorder (one source component).
pub struct Correlator {
    component: String,
    aggregates: Lru<AggregateRecord>,
    logged: Lru<Logged>,
    buckets: Lru<Bucket>,
}

fn object_key(reference: &ObjectReference) -> String {
    let part = |value: &Option<String>| value.clone().unwrap_or_default();
    [
        part(&reference.kind),
        part(&reference.namespace),
        part(&reference.name),
        part(&reference.uid),
        part(&reference.api_version),
    ]
    .join("\u{0}")
}

fn since(later: Timestamp, earlier: Timestamp) -> Duration {
    later.duration_since(earlier).try_into().unwrap_or(Duration::ZERO)
}

/// client-go's Event name: the object's name and the time in nanoseconds, in hex.
pub fn event_name(object: &str, now: Timestamp) -> String {
    format!("{object}.{:x}", now.as_nanosecond())
}

impl Correlator {
    /// A correlator for Events from `component` (`source.component`).
    pub fn new(component: &str) -> Self {
        Self {
            component: component.to_string(),
            aggregates: Lru::new(CACHE_ENTRIES),
            logged: Lru::new(CACHE_ENTRIES),
            buckets: Lru::new(CACHE_ENTRIES),
        }
    }

    fn event(&self, occurrence: &Occurrence, message: String, now: Timestamp) -> Event {
        let namespace =
            occurrence.regarding.namespace.clone().filter(|n| !n.is_empty()).unwrap_or("default".into());
        Event {
            metadata: ObjectMeta {
                name: Some(event_name(occurrence.regarding.name.as_deref().unwrap_or_default(), now)),
                namespace: Some(namespace),
                ..Default::default()
            },
            involved_object: occurrence.regarding.clone(),
            reason: Some(occurrence.reason.clone()),
            message: Some(message),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: Some(1),
            type_: Some(occurrence.type_.clone()),
            source: Some(EventSource { component: Some(self.component.clone()), host: None }),
            ..Default::default()
        }
    }

    /// What to write for `occurrence` at `now`.
    pub fn correlate(&mut self, occurrence: &Occurrence, now: Timestamp) -> Write {
        let object = object_key(&occurrence.regarding);
        let group = [object.as_str(), &occurrence.type_, &occurrence.reason].join("\u{0}");
        let exact = [group.as_str(), &occurrence.message].join("\u{0}");

        // 1. Aggregation: too many different messages for one reason become one Event.
        let record = self.aggregates.fresh_entry(
            &group,
            |record| since(now, record.last) > AGGREGATE_INTERVAL,
            || AggregateRecord { messages: BTreeSet::new(), last: now },
        );
        record.messages.insert(occurrence.message.clone());
        record.last = now;
        let combined = record.messages.len() >= AGGREGATE_MAX_EVENTS;
        if combined {
            // Do not grow the set beyond the threshold.
            if let Some(any) = record.messages.iter().next().cloned() {
                record.messages.remove(&any);
            }
        }
        let (key, message) = if combined {
            (group, format!("{COMBINED_PREFIX}{}", occurrence.message))
        } else {
            (exact, occurrence.message.clone())
        };

        // 2. Counting: a repeat patches the Event written before.
        let mut event = self.event(occurrence, message, now);
        let previous = self.logged.get_mut(&key).cloned();
        let write = match previous {
            Some(previous) => {
                event.metadata.name = Some(previous.name.clone());
                event.first_timestamp = Some(Time(previous.first));
                event.count = Some(previous.count + 1);
                let patch = json!({
                    "count": previous.count + 1,
                    "lastTimestamp": Time(now),
                    "message": event.message,
                });
                Write::Patch { event: event.clone(), patch }
            }
            None => Write::Create(event.clone()),
        };
        self.logged.insert(
            key,
            Logged {
                count: event.count.unwrap_or(1),
                first: event.first_timestamp.as_ref().map_or(now, |t| t.0),
                name: event.metadata.name.clone().unwrap_or_default(),
            },
        );

        // 3. Spam filter: a token bucket per source and object (and type).
        let spam = [object.as_str(), &occurrence.type_].join("\u{0}");
        let bucket = self.buckets.fresh_entry(&spam, |_| false, || Bucket { tokens: SPAM_BURST, at: now });
        let refill = since(now, bucket.at).as_secs_f64() / SPAM_REFILL.as_secs_f64();
        bucket.tokens = (bucket.tokens + refill).min(SPAM_BURST);
        bucket.at = now;
        if bucket.tokens < 1.0 {
            return Write::Skip;
        }
        bucket.tokens -= 1.0;
        write
    }

    /// Records what the server stored, so the next repeat patches that Event.
    pub fn stored(&mut self, occurrence: &Occurrence, event: &Event) {
        let object = object_key(&occurrence.regarding);
        let message = event.message.clone().unwrap_or_default();
        let group = [object.as_str(), &occurrence.type_, &occurrence.reason].join("\u{0}");
        let key = if message.starts_with(COMBINED_PREFIX) {
            group
        } else {
            [group.as_str(), &message].join("\u{0}")
        };
        if let (Some(name), Some(first)) = (event.metadata.name.clone(), event.first_timestamp.as_ref()) {
            self.logged.insert(key, Logged { count: event.count.unwrap_or(1), first: first.0, name });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).expect("valid time")
    }

    fn occurrence(object: &str, reason: &str, message: &str) -> Occurrence {
        Occurrence {
            regarding: ObjectReference {
                kind: Some("CloneSet".into()),
                namespace: Some("ns".into()),
                name: Some(object.into()),
                uid: Some(format!("uid-{object}")),
                api_version: Some("apps.kruise.io/v1alpha1".into()),
                ..Default::default()
            },
            type_: "Normal".into(),
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// A short account of a write: `create <message>`, `patch <count> <message>` or `skip`.
    fn summary(write: &Write) -> String {
        match write {
            Write::Create(event) => format!("create {}", event.message.as_deref().unwrap_or_default()),
            Write::Patch { event, patch } => {
                assert_eq!(patch["count"], json!(event.count));
                format!(
                    "patch {} {}",
                    event.count.unwrap_or_default(),
                    event.message.as_deref().unwrap_or_default()
                )
            }
            Write::Skip => "skip".into(),
        }
    }

    #[test]
    fn a_new_event_is_created_with_the_source_and_one_count() {
        let mut correlator = Correlator::new("cloneset-controller");
        let Write::Create(event) =
            correlator.correlate(&occurrence("web", "SuccessfulCreate", "pod a"), at(0))
        else {
            panic!("a first occurrence is created")
        };
        assert_eq!(event.source.and_then(|s| s.component).as_deref(), Some("cloneset-controller"));
        assert_eq!((event.count, event.reason.as_deref()), (Some(1), Some("SuccessfulCreate")));
        assert_eq!(event.metadata.namespace.as_deref(), Some("ns"));
        assert!(event.metadata.name.as_deref().is_some_and(|name| name.starts_with("web.")));
        assert_eq!(event.first_timestamp, event.last_timestamp);
    }

    #[test]
    fn repeats_count_into_one_event() {
        let mut correlator = Correlator::new("c");
        let first = correlator.correlate(&occurrence("web", "Reason", "same"), at(0));
        let Write::Create(created) = &first else { panic!("created first") };
        let second = correlator.correlate(&occurrence("web", "Reason", "same"), at(5));
        let third = correlator.correlate(&occurrence("web", "Reason", "same"), at(9));
        assert_eq!([summary(&second), summary(&third)], ["patch 2 same", "patch 3 same"]);
        let Write::Patch { event, patch } = third else { panic!("patched") };
        assert_eq!(event.metadata.name, created.metadata.name, "the same Event");
        assert_eq!(event.first_timestamp, created.first_timestamp);
        assert_eq!(patch["lastTimestamp"], json!(Time(at(9))));
    }

    #[test]
    fn the_tenth_different_message_of_a_reason_combines_them() {
        let mut correlator = Correlator::new("c");
        let writes: Vec<String> = (0..12)
            .map(|i| {
                summary(
                    &correlator.correlate(&occurrence("web", "SuccessfulCreate", &format!("pod {i}")), at(i)),
                )
            })
            .collect();
        let expected: Vec<String> = (0..9)
            .map(|i| format!("create pod {i}"))
            .chain([
                format!("create {COMBINED_PREFIX}pod 9"),
                format!("patch 2 {COMBINED_PREFIX}pod 10"),
                format!("patch 3 {COMBINED_PREFIX}pod 11"),
            ])
            .collect();
        assert_eq!(writes, expected);
        // Another reason, another object: counted apart.
        assert_eq!(
            summary(&correlator.correlate(&occurrence("web", "SuccessfulDelete", "pod 0"), at(20))),
            "create pod 0"
        );
        assert_eq!(
            summary(&correlator.correlate(&occurrence("api", "SuccessfulCreate", "pod 0"), at(20))),
            "create pod 0"
        );
        // Ten minutes of quiet reopen the group.
        assert_eq!(
            summary(&correlator.correlate(&occurrence("web", "SuccessfulCreate", "pod 12"), at(11 + 601))),
            "create pod 12"
        );
    }

    #[test]
    fn an_object_gets_a_burst_of_25_writes_then_one_per_five_minutes() {
        let mut correlator = Correlator::new("c");
        // Same message each time: only patches, but each patch is a write the filter counts.
        let writes: Vec<bool> = (0..30)
            .map(|i| correlator.correlate(&occurrence("web", "Reason", "same"), at(i)) != Write::Skip)
            .collect();
        assert_eq!(writes.iter().filter(|written| **written).count(), 25);
        assert!(writes[..25].iter().all(|written| *written) && !writes[25]);
        assert_eq!(correlator.correlate(&occurrence("web", "Reason", "same"), at(29 + 150)), Write::Skip);
        assert_ne!(correlator.correlate(&occurrence("web", "Reason", "same"), at(29 + 301)), Write::Skip);
        // Other objects have their own bucket.
        assert_ne!(correlator.correlate(&occurrence("api", "Reason", "same"), at(40)), Write::Skip);
    }

    #[test]
    fn the_stored_event_is_what_the_next_repeat_patches() {
        let mut correlator = Correlator::new("c");
        let seen = occurrence("web", "Reason", "same");
        let Write::Create(mut event) = correlator.correlate(&seen, at(0)) else { panic!("created") };
        event.metadata.name = Some("server-side-name".into());
        correlator.stored(&seen, &event);
        let Write::Patch { event, .. } = correlator.correlate(&seen, at(1)) else { panic!("patched") };
        assert_eq!(event.metadata.name.as_deref(), Some("server-side-name"));
    }

    #[test]
    fn the_cache_forgets_its_least_recently_used_entries() {
        let mut lru = Lru::new(16);
        for i in 0..17 {
            lru.insert(format!("k{i}"), i);
        }
        assert!(lru.entries.len() <= 16);
        assert!(lru.get_mut("k16").is_some(), "the newest stays");
        assert!(lru.get_mut("k0").is_none(), "the oldest goes");
    }
}
