//! The image puller's decisions as pure functions (upstream `imagepuller_worker.go`,
//! `imagepuller_controller.go`, `utils.go`): which tags need a pull worker, how long and how
//! often a pull is tried, what the NodeImage status says, when to look again, and how status
//! writes are rate limited. Everything here is tested with tables; the I/O lives in
//! [`super::puller`] and [`super::controller`].

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use kruise_crds::{
    apps::v1beta1::{
        ImagePullPhase, ImageSpec, ImageStatus, ImageTagSpec, ImageTagStatus, NodeImageSpec, NodeImageStatus,
    },
    validation::{ImageReference, parse_image_reference},
};

/// Default time one pull attempt may take (upstream `defaultImagePullingTimeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Default retries after the first attempt (upstream `defaultImagePullingBackoffLimit`).
pub const DEFAULT_BACKOFF_LIMIT: u32 = 3;
/// First wait between attempts; doubled after each failure.
pub const FIRST_RETRY_DELAY: Duration = Duration::from_secs(1);
/// Longest wait between attempts.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

/// How one tag is pulled, from its pull policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullSettings {
    /// Each attempt's timeout.
    pub timeout: Duration,
    /// Retries after the first attempt (so `backoff_limit + 1` attempts at most).
    pub backoff_limit: u32,
    /// How long all attempts together may take, from the start of the pull.
    pub active_deadline: Option<Duration>,
}

impl PullSettings {
    /// The settings of `tag`: timeout 600 s and 3 retries unless given (a negative backoff
    /// limit means the default, as upstream), the active deadline when given.
    pub fn of(tag: &ImageTagSpec) -> Self {
        let policy = tag.pull_policy.as_ref();
        let timeout = policy
            .and_then(|p| p.timeout_seconds)
            .and_then(|s| u64::try_from(s).ok())
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
        let backoff_limit = policy
            .and_then(|p| p.backoff_limit)
            .and_then(|limit| u32::try_from(limit).ok())
            .unwrap_or(DEFAULT_BACKOFF_LIMIT);
        let active_deadline = policy
            .and_then(|p| p.active_deadline_seconds)
            .map(|s| Duration::from_secs(u64::try_from(s).unwrap_or(0)));
        Self { timeout, backoff_limit, active_deadline }
    }

    /// The timeout of the next attempt given the time since the pull started, or `None` when
    /// the active deadline has passed (no attempt may start).
    pub fn attempt_timeout(&self, elapsed: Duration) -> Option<Duration> {
        match self.active_deadline {
            Some(deadline) if elapsed >= deadline => None,
            Some(deadline) => Some(self.timeout.min(deadline - elapsed)),
            None => Some(self.timeout),
        }
    }
}

/// The wait after failed attempt number `attempt` (from 0): 1 s, 2 s, 4 s, ... at most 30 s.
pub fn retry_delay(attempt: u32) -> Duration {
    FIRST_RETRY_DELAY.saturating_mul(2u32.saturating_pow(attempt.min(16))).min(MAX_RETRY_DELAY)
}

/// The reference a tag is pulled as (`name:tag`, or `name@digest` when the tag is a digest),
/// parsed; `Err` is the message reported in the tag's status when it does not parse.
pub fn pull_reference(name: &str, tag: &str) -> Result<(String, ImageReference), String> {
    let full = if tag.contains(':') { format!("{name}@{tag}") } else { format!("{name}:{tag}") };
    if name.is_empty() || tag.is_empty() {
        return Err(format!("invalid image reference {full:?}: the image name and tag must not be empty"));
    }
    match parse_image_reference(&full) {
        Ok(reference) => Ok((full, reference)),
        Err(error) => Err(format!("invalid image reference {full:?}: {error}")),
    }
}

/// What a sync of one image's tags decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TagPlan {
    /// Tags that need a pull worker (none finished at this version), with their spec.
    pub active: BTreeMap<String, ImageTagSpec>,
    /// Statuses of tags already finished at their spec version, taken over from the API.
    pub finished: Vec<ImageTagStatus>,
    /// Every tag in the spec.
    pub all: BTreeSet<String>,
}

/// Splits an image's tags into those that need pulling and those finished at their spec
/// version (upstream `realWorkerPool.Sync`): a tag is finished when the NodeImage status has it
/// at the same version with a completion time.
pub fn plan_tags(spec: &ImageSpec, status: Option<&ImageStatus>) -> TagPlan {
    let mut plan = TagPlan::default();
    for tag in &spec.tags {
        plan.all.insert(tag.tag.clone());
        let finished = status
            .and_then(|s| s.tags.iter().find(|t| t.tag == tag.tag && t.version == tag.version))
            .filter(|t| t.completion_time.is_some());
        match finished {
            Some(status) => plan.finished.push(status.clone()),
            None => {
                plan.active.insert(tag.tag.clone(), tag.clone());
            }
        }
    }
    plan
}

/// Whether a running worker (pulling `running_version` of `tag`) must stop: its tag is no
/// longer active, or the spec asks for another version.
pub fn worker_must_stop(plan: &TagPlan, tag: &str, running_version: i64) -> bool {
    plan.active.get(tag).is_none_or(|spec| spec.version != running_version)
}

/// The status the daemon reports for `spec`, given the tag statuses it knows per image (upstream
/// `Controller.sync`): desired counts the tags in the spec, the phase counters count the
/// statuses, tags are sorted by name and images without any status are left out.
pub fn node_status(
    spec: &NodeImageSpec,
    statuses: &BTreeMap<String, Vec<ImageTagStatus>>,
) -> NodeImageStatus {
    let mut status = NodeImageStatus::default();
    for (name, image) in &spec.images {
        status.desired += i32::try_from(image.tags.len()).unwrap_or(i32::MAX);
        let Some(tags) = statuses.get(name) else { continue };
        let mut tags: Vec<ImageTagStatus> =
            image.tags.iter().filter_map(|spec| tags.iter().find(|t| t.tag == spec.tag).cloned()).collect();
        if tags.is_empty() {
            continue;
        }
        tags.sort_by(|a, b| a.tag.cmp(&b.tag));
        for tag in &tags {
            match tag.phase {
                ImagePullPhase::Succeeded => status.succeeded += 1,
                ImagePullPhase::Failed => status.failed += 1,
                ImagePullPhase::Pulling => status.pulling += 1,
                ImagePullPhase::Waiting => status.waiting += 1,
                ImagePullPhase::Unknown(_) => {}
            }
        }
        status.image_statuses.insert(name.clone(), ImageStatus { tags });
    }
    status
}

/// Whether some tag is still being pulled or waits for a status at its spec version (upstream
/// `isImageInPulling`): then the daemon looks again within seconds instead of minutes.
pub fn in_progress(spec: &NodeImageSpec, status: &NodeImageStatus) -> bool {
    if status.succeeded + status.failed < status.desired {
        return true;
    }
    spec.images.iter().any(|(name, image)| {
        let statuses = status.image_statuses.get(name);
        image.tags.iter().any(|tag| {
            statuses
                .and_then(|s| s.tags.iter().find(|t| t.tag == tag.tag))
                .is_some_and(|t| t.version != tag.version)
        })
    })
}

/// When to sync again: 3-5 s while pulls are in progress or a status write was rate limited,
/// else 20-30 min (upstream's requeue intervals; `jitter` in 0..1 spreads the daemons out).
pub fn resync_after(busy: bool, jitter: f64) -> Duration {
    let jitter = jitter.clamp(0.0, 1.0);
    if busy {
        Duration::from_secs(3) + Duration::from_secs_f64(2.0 * jitter)
    } else {
        Duration::from_secs(20 * 60) + Duration::from_secs_f64(600.0 * jitter)
    }
}

/// A token bucket limiting NodeImage status writes (upstream: 0.5 per second, burst 5), so a
/// node whose pulls flap cannot flood the API server.
#[derive(Clone, Debug)]
pub struct RateLimiter {
    rate_per_second: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl RateLimiter {
    /// A full bucket.
    pub fn new(rate_per_second: f64, burst: u32, now: Instant) -> Self {
        let burst = f64::from(burst.max(1));
        Self { rate_per_second, burst, tokens: burst, last: now }
    }

    /// Takes a token if one is available at `now`.
    pub fn allow(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate_per_second).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};
    use kruise_crds::apps::v1beta1::ImageTagPullPolicy;
    use pretty_assertions::assert_eq;

    use super::*;

    fn tag(name: &str, version: i64) -> ImageTagSpec {
        ImageTagSpec { tag: name.into(), version, ..Default::default() }
    }

    fn status(name: &str, version: i64, phase: ImagePullPhase, done: bool) -> ImageTagStatus {
        ImageTagStatus {
            tag: name.into(),
            version,
            phase,
            completion_time: done.then_some(Time(Timestamp::UNIX_EPOCH)),
            ..Default::default()
        }
    }

    #[test]
    fn pull_settings_default_like_upstream() {
        let policy = |timeout, backoff, deadline| ImageTagSpec {
            pull_policy: Some(ImageTagPullPolicy {
                timeout_seconds: timeout,
                backoff_limit: backoff,
                active_deadline_seconds: deadline,
                ttl_seconds_after_finished: None,
            }),
            ..Default::default()
        };
        let cases = [
            (ImageTagSpec::default(), Duration::from_secs(600), 3, None),
            (policy(Some(30), Some(0), None), Duration::from_secs(30), 0, None),
            (policy(None, Some(-1), Some(90)), Duration::from_secs(600), 3, Some(Duration::from_secs(90))),
            (policy(Some(5), Some(7), Some(0)), Duration::from_secs(5), 7, Some(Duration::ZERO)),
        ];
        for (spec, timeout, backoff_limit, active_deadline) in cases {
            assert_eq!(PullSettings::of(&spec), PullSettings { timeout, backoff_limit, active_deadline });
        }
    }

    #[test]
    fn attempts_are_cut_to_the_active_deadline() {
        let settings = PullSettings {
            timeout: Duration::from_secs(10),
            backoff_limit: 3,
            active_deadline: Some(Duration::from_secs(25)),
        };
        assert_eq!(settings.attempt_timeout(Duration::ZERO), Some(Duration::from_secs(10)));
        assert_eq!(settings.attempt_timeout(Duration::from_secs(20)), Some(Duration::from_secs(5)));
        assert_eq!(settings.attempt_timeout(Duration::from_secs(25)), None);
        let open = PullSettings { active_deadline: None, ..settings };
        assert_eq!(open.attempt_timeout(Duration::from_secs(3600)), Some(Duration::from_secs(10)));
    }

    #[test]
    fn retries_double_up_to_thirty_seconds() {
        let delays: Vec<u64> = (0..8).map(|n| retry_delay(n).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30, 30]);
    }

    #[test]
    fn references_join_name_and_tag_or_digest() {
        let digest = "sha256:0000000000000000000000000000000000000000000000000000000000000abc";
        let (full, parsed) = pull_reference("nginx", "1.25").unwrap();
        assert_eq!(full, "nginx:1.25");
        assert_eq!(parsed.normalized(), "docker.io/library/nginx:1.25");
        let (full, parsed) = pull_reference("quay.io/org/app", digest).unwrap();
        assert_eq!(full, format!("quay.io/org/app@{digest}"));
        assert_eq!(parsed.digest.as_deref(), Some(digest));
        let cases = [
            (
                "Bad_Image!!",
                "v1",
                "invalid image reference \"Bad_Image!!:v1\": repository name (library/Bad_Image!!) must be lowercase",
            ),
            ("nginx", "", "invalid image reference \"nginx:\": the image name and tag must not be empty"),
            ("app", "v 1", "invalid image reference \"app:v 1\": invalid reference format"),
        ];
        for (name, tag, message) in cases {
            assert_eq!(pull_reference(name, tag).unwrap_err(), message, "{name}:{tag}");
        }
    }

    #[test]
    fn plans_restart_only_unfinished_or_new_versions() {
        let spec = ImageSpec {
            tags: vec![tag("a", 1), tag("b", 2), tag("c", 1), tag("d", 0)],
            ..Default::default()
        };
        let api = ImageStatus {
            tags: vec![
                status("a", 1, ImagePullPhase::Succeeded, true),
                status("b", 1, ImagePullPhase::Failed, true),
                status("c", 1, ImagePullPhase::Pulling, false),
            ],
        };
        let plan = plan_tags(&spec, Some(&api));
        assert_eq!(plan.active.keys().collect::<Vec<_>>(), ["b", "c", "d"]);
        assert_eq!(plan.finished, [status("a", 1, ImagePullPhase::Succeeded, true)]);
        assert_eq!(plan.all.len(), 4);
        assert!(!worker_must_stop(&plan, "b", 2));
        assert!(worker_must_stop(&plan, "b", 1), "an older version stops");
        assert!(worker_must_stop(&plan, "a", 1), "a finished tag needs no worker");
        assert!(worker_must_stop(&plan, "gone", 0), "a tag no longer in the spec stops");
        assert_eq!(plan_tags(&spec, None).active.len(), 4);
    }

    #[test]
    fn status_counts_phases_of_tags_in_the_spec() {
        let spec = NodeImageSpec {
            images: [
                (
                    "nginx".to_string(),
                    ImageSpec { tags: vec![tag("2", 0), tag("1", 0)], ..Default::default() },
                ),
                ("busybox".to_string(), ImageSpec { tags: vec![tag("1", 0)], ..Default::default() }),
                ("redis".to_string(), ImageSpec { tags: vec![tag("7", 0)], ..Default::default() }),
            ]
            .into(),
        };
        let known: BTreeMap<String, Vec<ImageTagStatus>> = [
            (
                "nginx".to_string(),
                vec![
                    status("2", 0, ImagePullPhase::Pulling, false),
                    status("1", 0, ImagePullPhase::Succeeded, true),
                    status("old", 0, ImagePullPhase::Succeeded, true),
                ],
            ),
            ("busybox".to_string(), vec![status("1", 0, ImagePullPhase::Failed, true)]),
            ("gone".to_string(), vec![status("1", 0, ImagePullPhase::Waiting, false)]),
        ]
        .into();
        let result = node_status(&spec, &known);
        assert_eq!(
            (result.desired, result.succeeded, result.failed, result.pulling, result.waiting),
            (4, 1, 1, 1, 0)
        );
        assert_eq!(result.image_statuses.keys().collect::<Vec<_>>(), ["busybox", "nginx"]);
        let nginx: Vec<&str> = result.image_statuses["nginx"].tags.iter().map(|t| t.tag.as_str()).collect();
        assert_eq!(nginx, ["1", "2"], "sorted, and only tags in the spec");
        assert!(in_progress(&spec, &result));
    }

    #[test]
    fn progress_needs_every_tag_finished_at_its_version() {
        let spec = NodeImageSpec {
            images: [("nginx".to_string(), ImageSpec { tags: vec![tag("1", 2)], ..Default::default() })]
                .into(),
        };
        let with = |version| {
            node_status(
                &spec,
                &[("nginx".to_string(), vec![status("1", version, ImagePullPhase::Succeeded, true)])].into(),
            )
        };
        assert!(!in_progress(&spec, &with(2)));
        assert!(in_progress(&spec, &with(1)), "a status at an older version is not the answer");
        assert!(in_progress(&spec, &node_status(&spec, &BTreeMap::new())));
        assert!(!in_progress(&NodeImageSpec::default(), &NodeImageStatus::default()));
    }

    #[test]
    fn resync_is_fast_while_busy() {
        assert_eq!(resync_after(true, 0.0), Duration::from_secs(3));
        assert_eq!(resync_after(true, 1.0), Duration::from_secs(5));
        assert_eq!(resync_after(false, 0.5), Duration::from_secs(1500));
    }

    #[test]
    fn the_rate_limiter_allows_a_burst_then_the_rate() {
        let start = Instant::now();
        let mut limiter = RateLimiter::new(0.5, 5, start);
        let burst = (0..7).filter(|_| limiter.allow(start)).count();
        assert_eq!(burst, 5);
        assert!(!limiter.allow(start + Duration::from_secs(1)));
        assert!(limiter.allow(start + Duration::from_secs(2)), "one token every 2 s");
        assert!(!limiter.allow(start + Duration::from_secs(2)));
    }
}
