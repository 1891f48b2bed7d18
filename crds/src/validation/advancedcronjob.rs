//! AdvancedCronJob validation (upstream `pkg/webhook/advancedcronjob/validating`), with the
//! cron schedule parser ([`parse_cron_schedule`]) and time zone lookup ([`cron_time_zone`]) the
//! controller reuses to compute run times.

use k8s_openapi::api::batch::v1::{JobSpec, JobTemplateSpec};

use super::{
    broadcastjob::{validate_broadcastjob_spec, validate_job_name_is_label, validate_job_pod_template},
    imagelistpulljob::validate_imagelistpulljob_spec,
    meta::{validate_non_negative, validate_object_meta},
};
use crate::{
    apps::{
        v1alpha1,
        v1beta1::{
            self, BroadcastJobTemplateSpec, CompletionPolicyType, ConcurrencyPolicy,
            ImageListPullJobTemplateSpec,
        },
    },
    field::{ErrorList, FieldError, FieldPath, quoted},
};

/// Longest `activeDeadlineSeconds` an ImageListPullJob template may ask for (one day).
pub const ADVANCED_CRON_JOB_MAX_ACTIVE_DEADLINE_SECONDS: i64 = 24 * 3600;

/// Validates a v1beta1 AdvancedCronJob; with `old`, also the rules of an update (only the
/// schedule, time zone, concurrency policy, history limits, starting deadline, `paused` and an
/// existing ImageListPullJob template may change).
pub fn validate_advancedcronjob_v1beta1(
    job: &v1beta1::AdvancedCronJob,
    old: Option<&v1beta1::AdvancedCronJob>,
) -> ErrorList {
    let spec = &job.spec;
    let view = SpecView {
        schedule: &spec.schedule,
        time_zone: spec.time_zone.as_deref(),
        starting_deadline_seconds: spec.starting_deadline_seconds,
        concurrency_policy: &spec.concurrency_policy,
        successful_jobs_history_limit: spec.successful_jobs_history_limit,
        failed_jobs_history_limit: spec.failed_jobs_history_limit,
        job_template: spec.template.job_template.as_ref(),
        broadcast_job_template: spec.template.broadcast_job_template.as_ref(),
        image_list_pull_job_template: spec.template.image_list_pull_job_template.as_ref(),
    };
    let mut errors = validate_object_meta(&job.metadata, true);
    errors.extend(validate_job_name_is_label(&job.metadata));
    errors.extend(validate_spec(&view, &FieldPath::root("spec")));
    if let Some(old) = old {
        let old_template = &old.spec.template;
        let changed = old_template.job_template != spec.template.job_template
            || old_template.broadcast_job_template != spec.template.broadcast_job_template
            || (old_template.image_list_pull_job_template.is_none()
                && spec.template.image_list_pull_job_template.is_some());
        if changed {
            errors.push(immutable_spec_error());
        }
    }
    errors
}

/// Validates a v1alpha1 AdvancedCronJob (no ImageListPullJob template); with `old`, also the
/// rules of an update (the Job and BroadcastJob templates are immutable).
pub fn validate_advancedcronjob_v1alpha1(
    job: &v1alpha1::AdvancedCronJob,
    old: Option<&v1alpha1::AdvancedCronJob>,
) -> ErrorList {
    let spec = &job.spec;
    let view = SpecView {
        schedule: &spec.schedule,
        time_zone: spec.time_zone.as_deref(),
        starting_deadline_seconds: spec.starting_deadline_seconds,
        concurrency_policy: &spec.concurrency_policy,
        successful_jobs_history_limit: spec.successful_jobs_history_limit,
        failed_jobs_history_limit: spec.failed_jobs_history_limit,
        job_template: spec.template.job_template.as_ref(),
        broadcast_job_template: spec.template.broadcast_job_template.as_ref(),
        image_list_pull_job_template: None,
    };
    let mut errors = validate_object_meta(&job.metadata, true);
    errors.extend(validate_job_name_is_label(&job.metadata));
    errors.extend(validate_spec(&view, &FieldPath::root("spec")));
    if let Some(old) = old
        && old.spec.template != spec.template
    {
        errors.push(immutable_spec_error());
    }
    errors
}

fn immutable_spec_error() -> FieldError {
    FieldError::forbidden(
        &FieldPath::root("spec"),
        "updates to advancedcronjob spec for fields other than 'schedule', 'timeZone', 'concurrencyPolicy', \
         'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', 'paused' and \
         'imageListPullJobTemplate' are forbidden",
    )
}

/// The parts of a spec both versions have.
struct SpecView<'a> {
    schedule: &'a str,
    time_zone: Option<&'a str>,
    starting_deadline_seconds: Option<i64>,
    concurrency_policy: &'a ConcurrencyPolicy,
    successful_jobs_history_limit: Option<i32>,
    failed_jobs_history_limit: Option<i32>,
    job_template: Option<&'a JobTemplateSpec>,
    broadcast_job_template: Option<&'a BroadcastJobTemplateSpec>,
    image_list_pull_job_template: Option<&'a ImageListPullJobTemplateSpec>,
}

fn validate_spec(spec: &SpecView<'_>, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let schedule_path = path.child("schedule");
    if spec.schedule.is_empty() {
        errors.push(FieldError::invalid(
            &schedule_path,
            quoted(spec.schedule),
            "schedule can not be empty, please provide a valid cron schedule",
        ));
    } else if let Err(error) = parse_cron_schedule(spec.schedule) {
        errors.push(FieldError::invalid(&schedule_path, quoted(spec.schedule), error.to_string()));
    }
    if spec.schedule.contains("TZ") && spec.time_zone.is_some() {
        errors.push(FieldError::invalid(
            &schedule_path,
            quoted(spec.schedule),
            "cannot use both the timeZone field and TZ or CRON_TZ in the schedule",
        ));
    }
    if let Some(zone) = spec.time_zone {
        errors.extend(validate_time_zone(zone, &path.child("timeZone")));
    }
    for (name, value) in [
        ("startingDeadlineSeconds", spec.starting_deadline_seconds),
        ("successfulJobsHistoryLimit", spec.successful_jobs_history_limit.map(i64::from)),
        ("failedJobsHistoryLimit", spec.failed_jobs_history_limit.map(i64::from)),
    ] {
        if let Some(value) = value {
            errors.extend(validate_non_negative(value, &path.child(name)));
        }
    }
    let policy = spec.concurrency_policy;
    if !policy.is_unset() && !policy.is_known() {
        errors.push(FieldError::not_supported(
            &path.child("concurrencyPolicy"),
            policy.as_str(),
            ConcurrencyPolicy::KNOWN,
        ));
    }

    let template_path = path.child("template");
    let mut count = 0;
    if let Some(job) = spec.job_template {
        count += 1;
        let default_spec = JobSpec::default();
        let job_spec = job.spec.as_ref().unwrap_or(&default_spec);
        let job_path = template_path.child("jobTemplate").child("spec").child("template");
        errors.extend(validate_job_pod_template(&job_spec.template, &job_path));
    }
    if let Some(broadcast) = spec.broadcast_job_template {
        count += 1;
        let broadcast_path = template_path.child("broadcastJobTemplate").child("spec");
        errors.extend(validate_broadcastjob_spec(&broadcast.spec, &broadcast_path));
    }
    if let Some(image_list) = spec.image_list_pull_job_template {
        count += 1;
        if !matches!(policy, ConcurrencyPolicy::Replace | ConcurrencyPolicy::Forbid) {
            errors.push(FieldError::invalid(
                &path.child("concurrencyPolicy"),
                quoted(policy.as_str()),
                "concurrencyPolicy must be Replace or Forbid with an imageListPullJobTemplate",
            ));
        }
        errors.extend(validate_image_list_template(
            image_list,
            &template_path.child("imageListPullJobTemplate").child("spec"),
        ));
    }
    match count {
        0 => errors.push(FieldError::forbidden(
            &template_path,
            "spec must have one template: jobTemplate, broadcastJobTemplate or imageListPullJobTemplate",
        )),
        1 => {}
        _ => errors.push(FieldError::forbidden(
            &template_path,
            "spec can have only one template: jobTemplate, broadcastJobTemplate or imageListPullJobTemplate",
        )),
    }
    errors
}

/// An ImageListPullJob template: a valid ImageListPullJob spec that completes (Always), within
/// a day, and is not deleted by TTL (the cron job keeps its own history).
fn validate_image_list_template(template: &ImageListPullJobTemplateSpec, path: &FieldPath) -> ErrorList {
    let spec = &template.spec;
    let mut errors = validate_imagelistpulljob_spec(spec, path);
    let completion_path = path.child("completionPolicy");
    let completion = &spec.template.completion_policy;
    if completion.type_ == CompletionPolicyType::Never {
        errors.push(FieldError::invalid(
            &completion_path.child("type"),
            quoted(completion.type_.as_str()),
            "the completion policy of an imageListPullJobTemplate must be Always",
        ));
    }
    if let Some(deadline) =
        completion.active_deadline_seconds.filter(|d| *d > ADVANCED_CRON_JOB_MAX_ACTIVE_DEADLINE_SECONDS)
    {
        errors.push(FieldError::invalid(
            &completion_path.child("activeDeadlineSeconds"),
            deadline,
            format!("must be at most {ADVANCED_CRON_JOB_MAX_ACTIVE_DEADLINE_SECONDS}"),
        ));
    }
    if let Some(ttl) = completion.ttl_seconds_after_finished {
        errors.push(FieldError::invalid(
            &completion_path.child("ttlSecondsAfterFinished"),
            ttl,
            "ttlSecondsAfterFinished is not supported in an advancedcronjob template",
        ));
    }
    errors
}

/// The `timeZone` field: absent, or an explicit IANA time zone name (not empty, not `Local`).
fn validate_time_zone(zone: &str, path: &FieldPath) -> ErrorList {
    if zone.is_empty() {
        return vec![FieldError::invalid(
            path,
            quoted(zone),
            "timeZone must be unset or a non-empty time zone name",
        )];
    }
    if zone.eq_ignore_ascii_case("Local") {
        return vec![FieldError::invalid(
            path,
            quoted(zone),
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        )];
    }
    match cron_time_zone(zone) {
        Ok(_) => Vec::new(),
        Err(error) => vec![FieldError::invalid(path, quoted(zone), error.to_string())],
    }
}

/// Looks up an IANA time zone by its exact name (`Asia/Shanghai`, `UTC`, `US/Eastern`) in the
/// bundled tz database, so the answer does not depend on the host's zoneinfo files. Names are
/// case-sensitive, as they are for the Go runtime upstream validates with.
pub fn cron_time_zone(name: &str) -> Result<jiff::tz::TimeZone, CronError> {
    let unknown = || CronError::UnknownTimeZone(name.to_string());
    let zone = jiff::tz::TimeZone::get(name).map_err(|_| unknown())?;
    if zone.iana_name() != Some(name) {
        return Err(unknown());
    }
    Ok(zone)
}

/// A parsed cron schedule: an optional `TZ=`/`CRON_TZ=` time zone prefix and either the five
/// standard fields or an `@every` interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronSchedule {
    /// The zone named by a `TZ=` or `CRON_TZ=` prefix; `Some("")` means UTC.
    pub time_zone: Option<String>,
    /// When the schedule fires.
    pub spec: CronSpec,
}

/// When a cron schedule fires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CronSpec {
    /// At every time matching all five fields.
    Fields(CronFields),
    /// Every so many seconds (`@every 1h30m`), at least one.
    Every(u64),
}

/// The five standard cron fields as bit sets: bit `n` set means value `n` matches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CronFields {
    /// Minutes, bits 0-59.
    pub minutes: u64,
    /// Hours, bits 0-23.
    pub hours: u64,
    /// Days of the month, bits 1-31.
    pub days_of_month: u64,
    /// Months, bits 1-12.
    pub months: u64,
    /// Days of the week, bits 0-6 (Sunday is 0).
    pub days_of_week: u64,
    /// The day-of-month field was `*` or `?` (possibly with step 1).
    pub day_of_month_any: bool,
    /// The day-of-week field was `*` or `?` (possibly with step 1).
    pub day_of_week_any: bool,
}

impl CronFields {
    /// Whether a day matches. As in classic cron, when both day fields are restricted a day
    /// matching either one fires; when one of them is `*`, both must match.
    pub fn day_matches(&self, day_of_month: u32, day_of_week: u32) -> bool {
        let dom = bit_set(self.days_of_month, day_of_month);
        let dow = bit_set(self.days_of_week, day_of_week);
        if self.day_of_month_any || self.day_of_week_any { dom && dow } else { dom || dow }
    }
}

fn bit_set(bits: u64, value: u32) -> bool {
    value < 64 && bits & (1 << value) != 0
}

/// Why a cron schedule or time zone is not valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CronError {
    /// Nothing to parse.
    #[error("empty cron schedule")]
    Empty,
    /// A `TZ=` prefix without a schedule after it.
    #[error("missing schedule after the time zone prefix")]
    MissingSpecAfterTimeZone,
    /// A time zone name not in the tz database.
    #[error("unknown time zone {0:?}")]
    UnknownTimeZone(String),
    /// An `@` descriptor that is not one of the known ones.
    #[error("unrecognized descriptor: {0}")]
    UnknownDescriptor(String),
    /// An `@every` duration that does not parse.
    #[error("invalid duration in {0:?}")]
    BadDuration(String),
    /// Not five fields.
    #[error("expected exactly 5 fields, found {found}: {spec:?}")]
    FieldCount {
        /// How many fields there were.
        found: usize,
        /// The schedule.
        spec: String,
    },
    /// A field that does not parse.
    #[error("{field} field {expr:?}: {problem}")]
    Field {
        /// Which field (minute, hour, day of month, month, day of week).
        field: &'static str,
        /// The offending expression.
        expr: String,
        /// What is wrong with it.
        problem: String,
    },
}

struct FieldBounds {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MONTH_NAMES: &[(&str, u32)] = &[
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("may", 5),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
];
const DAY_NAMES: &[(&str, u32)] =
    &[("sun", 0), ("mon", 1), ("tue", 2), ("wed", 3), ("thu", 4), ("fri", 5), ("sat", 6)];

const FIELDS: [FieldBounds; 5] = [
    FieldBounds { name: "minute", min: 0, max: 59, names: &[] },
    FieldBounds { name: "hour", min: 0, max: 23, names: &[] },
    FieldBounds { name: "day of month", min: 1, max: 31, names: &[] },
    FieldBounds { name: "month", min: 1, max: 12, names: MONTH_NAMES },
    FieldBounds { name: "day of week", min: 0, max: 6, names: DAY_NAMES },
];

/// Parses a standard cron schedule, as upstream's `cron.ParseStandard` reads it: five fields
/// (minute, hour, day of month, month, day of week) of `*`/`?`, numbers, names (`jan`, `mon`,
/// case-insensitive), ranges `a-b`, steps `/n` and comma lists; or a descriptor (`@yearly`,
/// `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, `@every <duration>`);
/// optionally after a `TZ=<zone> ` or `CRON_TZ=<zone> ` prefix.
pub fn parse_cron_schedule(schedule: &str) -> Result<CronSchedule, CronError> {
    if schedule.is_empty() {
        return Err(CronError::Empty);
    }
    let mut rest = schedule;
    let mut time_zone = None;
    if let Some(after) = schedule.strip_prefix("TZ=").or_else(|| schedule.strip_prefix("CRON_TZ=")) {
        let (zone, remainder) = after.split_once(' ').ok_or(CronError::MissingSpecAfterTimeZone)?;
        if !zone.is_empty() && zone != "Local" {
            cron_time_zone(zone)?;
        }
        time_zone = Some(zone.to_string());
        rest = remainder.trim();
    }
    let spec =
        if rest.starts_with('@') { parse_descriptor(rest)? } else { CronSpec::Fields(parse_fields(rest)?) };
    Ok(CronSchedule { time_zone, spec })
}

fn parse_fields(spec: &str) -> Result<CronFields, CronError> {
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != FIELDS.len() {
        return Err(CronError::FieldCount { found: fields.len(), spec: spec.to_string() });
    }
    let mut parsed = [(0u64, false); 5];
    for ((slot, expr), bounds) in parsed.iter_mut().zip(&fields).zip(&FIELDS) {
        *slot = parse_field(expr, bounds)?;
    }
    let [minutes, hours, dom, months, dow] = parsed;
    Ok(CronFields {
        minutes: minutes.0,
        hours: hours.0,
        days_of_month: dom.0,
        months: months.0,
        days_of_week: dow.0,
        day_of_month_any: dom.1,
        day_of_week_any: dow.1,
    })
}

/// One field: a comma list of ranges. Returns the bits and whether it was an unrestricted `*`.
fn parse_field(expr: &str, bounds: &FieldBounds) -> Result<(u64, bool), CronError> {
    let mut bits = 0;
    let mut any = false;
    for part in expr.split(',') {
        let (part_bits, part_any) = parse_range(part, bounds)?;
        bits |= part_bits;
        any |= part_any;
    }
    Ok((bits, any))
}

fn parse_range(expr: &str, bounds: &FieldBounds) -> Result<(u64, bool), CronError> {
    let error = |problem: String| CronError::Field { field: bounds.name, expr: expr.to_string(), problem };
    let mut slash = expr.split('/');
    let range = slash.next().unwrap_or_default();
    let step_text = slash.next();
    if slash.next().is_some() {
        return Err(error("too many slashes".into()));
    }
    let mut dash = range.split('-');
    let low = dash.next().unwrap_or_default();
    let high = dash.next();
    let single = high.is_none();
    let (start, mut end, mut any) = if low == "*" || low == "?" {
        // Like upstream, anything after a `*-` is ignored.
        (bounds.min, bounds.max, true)
    } else {
        if dash.next().is_some() {
            return Err(error("too many hyphens".into()));
        }
        let start = parse_value(low, bounds.names).map_err(error)?;
        let end = match high {
            Some(high) => parse_value(high, bounds.names).map_err(error)?,
            None => start,
        };
        (start, end, false)
    };
    let step = match step_text {
        None => 1,
        Some(text) => {
            let step = parse_value(text, &[]).map_err(error)?;
            if single {
                end = bounds.max;
            }
            if step > 1 {
                any = false;
            }
            step
        }
    };
    if start < bounds.min {
        return Err(error(format!("beginning of range ({start}) below minimum ({})", bounds.min)));
    }
    if end > bounds.max {
        return Err(error(format!("end of range ({end}) above maximum ({})", bounds.max)));
    }
    if start > end {
        return Err(error(format!("beginning of range ({start}) beyond end of range ({end})")));
    }
    if step == 0 {
        return Err(error("step of range should be a positive number".into()));
    }
    let bits = (start..=end).step_by(step as usize).fold(0u64, |bits, value| bits | (1 << value));
    Ok((bits, any))
}

/// A number, or a name from `names` (case-insensitive).
fn parse_value(text: &str, names: &[(&str, u32)]) -> Result<u32, String> {
    let lower = text.to_ascii_lowercase();
    if let Some((_, value)) = names.iter().find(|(name, _)| *name == lower) {
        return Ok(*value);
    }
    let digits = text.strip_prefix('+').unwrap_or(text);
    if let Some(negative) =
        digits.strip_prefix('-').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!("negative number (-{negative}) not allowed"));
    }
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("failed to parse number from {text:?}"));
    }
    // Values beyond any field's range are reported by the range check, not as overflow.
    Ok(digits.parse::<u32>().unwrap_or(u32::MAX))
}

fn parse_descriptor(descriptor: &str) -> Result<CronSpec, CronError> {
    const DAYS_OF_MONTH: u64 = ((1 << 32) - 1) & !1;
    const MONTHS: u64 = ((1 << 13) - 1) & !1;
    const DAYS_OF_WEEK: u64 = (1 << 7) - 1;
    const HOURS: u64 = (1 << 24) - 1;
    let every_day = CronFields {
        minutes: 1,
        hours: 1,
        days_of_month: DAYS_OF_MONTH,
        months: MONTHS,
        days_of_week: DAYS_OF_WEEK,
        day_of_month_any: true,
        day_of_week_any: true,
    };
    let fields = match descriptor {
        "@yearly" | "@annually" => {
            CronFields { days_of_month: 1 << 1, months: 1 << 1, day_of_month_any: false, ..every_day }
        }
        "@monthly" => CronFields { days_of_month: 1 << 1, day_of_month_any: false, ..every_day },
        "@weekly" => CronFields { days_of_week: 1, day_of_week_any: false, ..every_day },
        "@daily" | "@midnight" => every_day,
        "@hourly" => CronFields { hours: HOURS, ..every_day },
        other => {
            let Some(duration) = other.strip_prefix("@every ") else {
                return Err(CronError::UnknownDescriptor(other.to_string()));
            };
            let nanos =
                parse_go_duration(duration).ok_or_else(|| CronError::BadDuration(other.to_string()))?;
            let seconds = u64::try_from(nanos / 1_000_000_000).unwrap_or(0).max(1);
            return Ok(CronSpec::Every(seconds));
        }
    };
    Ok(CronSpec::Fields(fields))
}

/// Parses a Go `time.Duration` string (`1h30m`, `1.5h`, `300ms`, `-2s`, `0`) into nanoseconds.
fn parse_go_duration(text: &str) -> Option<i128> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_len = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        let number = &rest[..number_len];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return None;
        }
        let value: f64 = number.parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale: f64 = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += value * scale;
    }
    // Go durations are int64 nanoseconds.
    if total > 9.223_372_036_854_775e18 {
        return None;
    }
    let nanos = total as i128;
    Some(if negative { -nanos } else { nanos })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(schedule: &str) -> CronFields {
        match parse_cron_schedule(schedule).unwrap_or_else(|e| panic!("{schedule}: {e}")).spec {
            CronSpec::Fields(fields) => fields,
            CronSpec::Every(_) => panic!("{schedule} is not a field schedule"),
        }
    }

    fn bits(values: &[u32]) -> u64 {
        values.iter().fold(0, |bits, v| bits | (1 << v))
    }

    #[test]
    fn fields_accept_lists_ranges_steps_and_names() {
        let parsed = fields("*/15 9-17 1,15 jan-MAR mon-fri");
        assert_eq!(parsed.minutes, bits(&[0, 15, 30, 45]));
        assert_eq!(parsed.hours, bits(&(9..=17).collect::<Vec<_>>()));
        assert_eq!(parsed.days_of_month, bits(&[1, 15]));
        assert_eq!(parsed.months, bits(&[1, 2, 3]));
        assert_eq!(parsed.days_of_week, bits(&[1, 2, 3, 4, 5]));
        assert!(!parsed.day_of_month_any && !parsed.day_of_week_any);
        assert!(parsed.day_matches(15, 0), "either day field matches when both are restricted");

        let stepped = fields("5/20 0 ? * *");
        assert_eq!(stepped.minutes, bits(&[5, 25, 45]));
        assert!(stepped.day_of_month_any && stepped.day_of_week_any);
        assert!(!fields("0 0 */2 * *").day_of_month_any, "a step above 1 restricts the field");
        assert_eq!(fields("0 0 1 * sun").days_of_week, 1);
    }

    #[test]
    fn descriptors_and_time_zone_prefixes() {
        assert_eq!(fields("@daily"), fields("0 0 * * *"));
        assert_eq!(fields("@midnight"), fields("0 0 * * *"));
        assert_eq!(fields("@hourly"), fields("0 * * * *"));
        assert_eq!(fields("@weekly"), fields("0 0 * * 0"));
        assert_eq!(fields("@monthly"), fields("0 0 1 * *"));
        assert_eq!(fields("@yearly"), fields("0 0 1 1 *"));
        assert_eq!(fields("@annually"), fields("@yearly"));
        let every = parse_cron_schedule("@every 1h30m").expect("parses");
        assert_eq!(every.spec, CronSpec::Every(5400));
        assert_eq!(parse_cron_schedule("@every 10ms").expect("parses").spec, CronSpec::Every(1));
        let zoned = parse_cron_schedule("CRON_TZ=Asia/Shanghai 0 8 * * *").expect("parses");
        assert_eq!(zoned.time_zone.as_deref(), Some("Asia/Shanghai"));
        assert_eq!(parse_cron_schedule("TZ=UTC @daily").expect("parses").time_zone.as_deref(), Some("UTC"));
    }

    #[test]
    fn bad_schedules_are_errors_not_panics() {
        for bad in [
            "",
            "* * * *",
            "* * * * * *",
            "60 * * * *",
            "* 24 * * *",
            "* * 0 * *",
            "* * * 13 *",
            "* * * * 7",
            "5-1 * * * *",
            "*/0 * * * *",
            "1/2/3 * * * *",
            "1-2-3 * * * *",
            "-1 * * * *",
            "a * * * *",
            "1,,2 * * * *",
            "* * * foo *",
            "@often",
            "@every",
            "@every 5",
            "@every 1x",
            "TZ=Asia/Shanghai",
            "TZ=Mars/Base 0 * * * *",
            "99999999999 * * * *",
        ] {
            assert!(parse_cron_schedule(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn time_zones_are_exact_iana_names() {
        for good in ["UTC", "Asia/Shanghai", "America/New_York", "US/Eastern", "Etc/GMT+5"] {
            assert!(cron_time_zone(good).is_ok(), "{good}");
        }
        for bad in ["", "Local", "asia/shanghai", "Mars/Base", "../etc/passwd", "/etc/localtime"] {
            assert!(cron_time_zone(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_go_duration("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_go_duration("-2s"), Some(-2_000_000_000));
        assert_eq!(parse_go_duration("0"), Some(0));
        for bad in ["", "s", "1", ".s", "1..2s", "3y"] {
            assert_eq!(parse_go_duration(bad), None, "{bad}");
        }
    }
}
