//! When an AdvancedCronJob runs: its schedule read in its time zone, the next run after a
//! time, and the run it missed (upstream's `getNextSchedule`).
//!
//! Upstream computes run times with robfig/cron v3 (`cron.ParseStandard`, `SpecSchedule.Next`)
//! on Go's `time` package. Its answers around daylight-saving changes are part of the
//! behaviour users see (a run in the hour that a spring-forward skips does not happen that day;
//! a run in the hour a fall-back repeats happens twice), so [`Schedule::next`] follows the
//! same field-by-field search, with Go's rules for local times that do not exist or exist
//! twice ([`go_date`]). Everything here is pure: the current time is always an argument, taken
//! from a [`Clock`] by the controller and from a fake one by tests.

use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
use kruise_crds::{
    apps::v1beta1::AdvancedCronJobSpec,
    validation::{CronError, CronFields, CronSpec, cron_time_zone, parse_cron_schedule},
};

/// Most missed runs counted before giving up (upstream's `starts > 100`): a clock far off, or a
/// cron job created long ago without a starting deadline, would otherwise make the controller
/// enumerate years of runs.
pub const MAX_MISSED_STARTS: usize = 100;

/// How far ahead [`Schedule::next`] looks before concluding a schedule never fires (robfig's
/// five years: `0 0 30 2 *` asks for February 30th).
const YEAR_LIMIT: i32 = 5;

/// Where the current time comes from; tests substitute a fixed one.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The system's clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// Why a schedule cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The schedule does not parse (the webhook refuses it; it can still be stored when the
    /// webhook is off).
    #[error("unparsable schedule {schedule:?}: {source}")]
    Unparsable {
        /// The schedule as written.
        schedule: String,
        /// What is wrong with it.
        source: CronError,
    },
    /// More than [`MAX_MISSED_STARTS`] runs were missed.
    #[error(
        "too many missed start times (> {MAX_MISSED_STARTS}). Set or decrease .spec.startingDeadlineSeconds or check clock skew"
    )]
    TooManyMissed,
}

/// A parsed schedule with the zone its fields are read in.
#[derive(Clone, Debug)]
pub struct Schedule {
    spec: CronSpec,
    zone: TimeZone,
}

impl Schedule {
    /// The schedule of a cron job, as upstream's `formatSchedule` then `cron.ParseStandard`
    /// read it: a schedule mentioning `TZ` (a `TZ=` or `CRON_TZ=` prefix) is taken as written;
    /// otherwise a `timeZone` that names a known zone applies (an unknown one is ignored, as
    /// upstream logs and ignores it). Without a zone the schedule is read in UTC, the local
    /// zone of upstream's manager image.
    pub fn of(spec: &AdvancedCronJobSpec) -> Result<Self, ScheduleError> {
        let unparsable = |source| ScheduleError::Unparsable { schedule: spec.schedule.clone(), source };
        let parsed = parse_cron_schedule(&spec.schedule).map_err(unparsable)?;
        let named = if spec.schedule.contains("TZ") {
            parsed.time_zone.clone()
        } else {
            spec.time_zone.clone().filter(|zone| cron_time_zone(zone).is_ok())
        };
        let zone = match named.as_deref() {
            None | Some("") | Some("Local") => TimeZone::UTC,
            Some(name) => cron_time_zone(name).map_err(unparsable)?,
        };
        Ok(Self { spec: parsed.spec, zone })
    }

    /// The first run strictly after `after` (whole seconds), or `None` when the schedule does
    /// not fire within five years.
    pub fn next(&self, after: Timestamp) -> Option<Timestamp> {
        let second = floor_second(after);
        match &self.spec {
            CronSpec::Every(delay) => {
                Timestamp::from_second(second.checked_add(i64::try_from(*delay).ok()?)?).ok()
            }
            CronSpec::Fields(fields) => next_matching(fields, &self.zone, second),
        }
    }
}

/// The runs around `now` of a cron job last scheduled at `last` (its creation when it never
/// ran).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Runs {
    /// The latest run time in `(earliest, now]` that has not been started, if any.
    pub missed: Option<Timestamp>,
    /// The next run after `now`, if the schedule fires again.
    pub next: Option<Timestamp>,
}

/// Upstream's `getNextSchedule`: the latest missed run since `last` (no earlier than
/// `startingDeadlineSeconds` before `now`) and the next run after `now`; more than
/// [`MAX_MISSED_STARTS`] missed runs is an error.
pub fn runs(
    schedule: &Schedule,
    last: Timestamp,
    starting_deadline_seconds: Option<i64>,
    now: Timestamp,
) -> Result<Runs, ScheduleError> {
    let mut earliest = last;
    if let Some(deadline) = starting_deadline_seconds {
        let window_start = add_seconds(now, deadline.saturating_neg());
        if window_start > earliest {
            earliest = window_start;
        }
    }
    if earliest > now {
        return Ok(Runs { missed: None, next: schedule.next(now) });
    }
    let mut missed = None;
    let mut starts = 0;
    let mut candidate = schedule.next(earliest);
    while let Some(run) = candidate.filter(|run| *run <= now) {
        missed = Some(run);
        starts += 1;
        if starts > MAX_MISSED_STARTS {
            return Err(ScheduleError::TooManyMissed);
        }
        candidate = schedule.next(run);
    }
    Ok(Runs { missed, next: schedule.next(now) })
}

/// `time` moved by `seconds` (saturating at the ends of the supported range).
pub fn add_seconds(time: Timestamp, seconds: i64) -> Timestamp {
    let target = i128::from(floor_second(time)).saturating_add(i128::from(seconds));
    let clamped =
        target.clamp(i128::from(Timestamp::MIN.as_second()), i128::from(Timestamp::MAX.as_second()));
    let whole = i64::try_from(clamped).unwrap_or_default();
    let nanos = time.as_nanosecond().rem_euclid(1_000_000_000);
    let with_nanos = i128::from(whole) * 1_000_000_000 + nanos;
    Timestamp::from_nanosecond(with_nanos).or_else(|_| Timestamp::from_second(whole)).unwrap_or(time)
}

/// Whole seconds since the Unix epoch, rounded down (Go's `Truncate(time.Second)`).
fn floor_second(time: Timestamp) -> i64 {
    i64::try_from(time.as_nanosecond().div_euclid(1_000_000_000)).unwrap_or_default()
}

/// A local reading of an instant in the schedule's zone.
#[derive(Clone, Copy, Debug)]
struct Local {
    /// Seconds since the Unix epoch.
    unix: i64,
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    weekday: i64,
}

fn local(unix: i64, zone: &TimeZone) -> Option<Local> {
    let zoned = Timestamp::from_second(unix).ok()?.to_zoned(zone.clone());
    Some(Local {
        unix,
        year: zoned.year().into(),
        month: zoned.month().into(),
        day: zoned.day().into(),
        hour: zoned.hour().into(),
        minute: zoned.minute().into(),
        second: zoned.second().into(),
        weekday: zoned.weekday().to_sunday_zero_offset().into(),
    })
}

fn bit(bits: u64, value: i64) -> bool {
    (0..64).contains(&value) && bits & (1 << value) != 0
}

/// robfig/cron's `SpecSchedule.Next` for a standard (seconds = 0) schedule: starting at the
/// second after `after`, find the first month, day, hour, minute and second that match, each
/// time resetting the smaller fields on the first change and starting over when a field wraps.
/// Hours and minutes advance in absolute time, so an hour a spring-forward skips is never
/// seen and an hour a fall-back repeats is seen twice.
fn next_matching(fields: &CronFields, zone: &TimeZone, after: i64) -> Option<Timestamp> {
    const HOUR: i64 = 3600;
    const MINUTE: i64 = 60;
    let mut t = local(after.checked_add(1)?, zone)?;
    let year_limit = t.year + i64::from(YEAR_LIMIT);
    let mut added = false;
    'wrap: loop {
        if t.year > year_limit {
            return None;
        }
        while !bit(fields.months, t.month) {
            if !added {
                added = true;
                t = local(go_date(zone, t.year, t.month, 1, 0, 0, 0)?, zone)?;
            }
            t = local(go_date(zone, t.year, t.month + 1, t.day, t.hour, t.minute, t.second)?, zone)?;
            if t.month == 1 {
                continue 'wrap;
            }
        }
        while !fields.day_matches(day_u32(t.day), day_u32(t.weekday)) {
            if !added {
                added = true;
                t = local(go_date(zone, t.year, t.month, t.day, 0, 0, 0)?, zone)?;
            }
            t = local(go_date(zone, t.year, t.month, t.day + 1, t.hour, t.minute, t.second)?, zone)?;
            // Midnight may not exist (a zone that springs forward at 00:00): land back on the
            // day's first hour as robfig does.
            if t.hour != 0 {
                let shift = if t.hour > 12 { (24 - t.hour) * HOUR } else { -t.hour * HOUR };
                t = local(t.unix + shift, zone)?;
            }
            if t.day == 1 {
                continue 'wrap;
            }
        }
        while !bit(fields.hours, t.hour) {
            if !added {
                added = true;
                t = local(go_date(zone, t.year, t.month, t.day, t.hour, 0, 0)?, zone)?;
            }
            t = local(t.unix + HOUR, zone)?;
            if t.hour == 0 {
                continue 'wrap;
            }
        }
        while !bit(fields.minutes, t.minute) {
            if !added {
                added = true;
                t = local(t.unix.div_euclid(MINUTE) * MINUTE, zone)?;
            }
            t = local(t.unix + MINUTE, zone)?;
            if t.minute == 0 {
                continue 'wrap;
            }
        }
        // Standard schedules fire at second 0 only.
        while t.second != 0 {
            added = true;
            t = local(t.unix + 1, zone)?;
            if t.second == 0 {
                continue 'wrap;
            }
        }
        return Timestamp::from_second(t.unix).ok();
    }
}

fn day_u32(value: i64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Go's `time.Date` in `zone`, in seconds since the Unix epoch: the month and day may overflow
/// (month 13 is January of the next year, April 31st is May 1st). A local time that does not
/// exist or exists twice gets Go's offset: the offset in force at the local time read as UTC,
/// corrected once by the offset in force at the instant that gives.
fn go_date(
    zone: &TimeZone,
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
) -> Option<i64> {
    let months = month.checked_sub(1)?;
    let year = year.checked_add(months.div_euclid(12))?;
    let month = months.rem_euclid(12) + 1;
    let days = days_from_civil(year, month, 1).checked_add(day.checked_sub(1)?)?;
    let wall = days.checked_mul(86_400)?.checked_add(hour * 3600 + minute * 60 + second)?;
    let offset_at = |unix: i64| -> Option<i64> {
        Some(i64::from(zone.to_offset(Timestamp::from_second(unix).ok()?).seconds()))
    };
    let guess = offset_at(wall)?;
    let offset = offset_at(wall - guess)?;
    Some(wall - offset)
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn schedule(schedule: &str, time_zone: Option<&str>) -> Schedule {
        let spec = AdvancedCronJobSpec {
            schedule: schedule.into(),
            time_zone: time_zone.map(Into::into),
            ..Default::default()
        };
        Schedule::of(&spec).unwrap_or_else(|e| panic!("{schedule}: {e}"))
    }

    fn next(s: &Schedule, after: &str) -> String {
        s.next(at(after)).map(|t| t.to_string()).unwrap_or_else(|| "never".into())
    }

    /// Upstream's `TestScheduleWithTimeZone`, case for case.
    #[test]
    fn test_schedule_with_time_zone() {
        let cases = [
            ("0 10 * * ?", None, "2022-09-05T09:01:00Z", "2022-09-05T10:00:00Z"),
            ("0 10 * * ?", None, "2022-09-05T11:01:00Z", "2022-09-06T10:00:00Z"),
            ("0 10 * * ?", Some("Asia/Shanghai"), "2022-09-05T09:01:00Z", "2022-09-06T02:00:00Z"),
            ("0 10 * * ?", Some("Asia/Shanghai"), "2022-09-06T01:01:00Z", "2022-09-06T02:00:00Z"),
            ("TZ=Asia/Shanghai 0 10 * * ?", None, "2022-09-06T01:01:00Z", "2022-09-06T02:00:00Z"),
        ];
        for (i, (spec, zone, previous, expected)) in cases.into_iter().enumerate() {
            assert_eq!(next(&schedule(spec, zone), previous), expected, "case {i}");
        }
    }

    #[test]
    fn next_run_table() {
        let cases: &[(&str, &str, Option<&str>, &str, &str)] = &[
            ("every minute, mid-minute", "*/1 * * * *", None, "2026-12-06T07:30:15Z", "2026-12-06T07:31:00Z"),
            (
                "every minute, on the minute",
                "*/1 * * * *",
                None,
                "2026-12-06T07:30:00Z",
                "2026-12-06T07:31:00Z",
            ),
            (
                "sub-second instants round down",
                "*/1 * * * *",
                None,
                "2026-12-06T07:30:59.9Z",
                "2026-12-06T07:31:00Z",
            ),
            ("every 5 minutes", "*/5 * * * *", None, "2025-10-10T09:00:00Z", "2025-10-10T09:05:00Z"),
            ("@hourly", "@hourly", None, "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"),
            ("@daily", "@daily", None, "2026-01-01T00:00:01Z", "2026-01-02T00:00:00Z"),
            ("@weekly is Sunday midnight", "@weekly", None, "2026-12-06T07:00:00Z", "2026-12-13T00:00:00Z"),
            ("@monthly", "@monthly", None, "2026-01-31T12:00:00Z", "2026-02-01T00:00:00Z"),
            ("@yearly", "@yearly", None, "2026-06-01T00:00:00Z", "2027-01-01T00:00:00Z"),
            (
                "@every 90s from the second",
                "@every 90s",
                None,
                "2026-01-01T00:00:00.5Z",
                "2026-01-01T00:01:30Z",
            ),
            (
                "named days and months",
                "0 9 * jan-mar mon",
                None,
                "2026-03-31T10:00:00Z",
                "2027-01-04T09:00:00Z",
            ),
            (
                "day of month or of week when both set",
                "0 0 13 * fri",
                None,
                "2026-02-01T00:00:00Z",
                "2026-02-06T00:00:00Z",
            ),
            (
                "February 29th waits for a leap year",
                "0 0 29 2 *",
                None,
                "2026-03-01T00:00:00Z",
                "2028-02-29T00:00:00Z",
            ),
            ("February 30th never fires", "0 0 30 2 *", None, "2026-01-01T00:00:00Z", "never"),
            // 09:00 in Tokyo is 00:00Z; the instant asked about is excluded.
            (
                "CRON_TZ prefix",
                "CRON_TZ=Asia/Tokyo 0 9 * * *",
                None,
                "2026-01-01T00:00:00Z",
                "2026-01-02T00:00:00Z",
            ),
            (
                "TZ= with no zone is UTC",
                "TZ= 0 9 * * *",
                None,
                "2026-01-01T00:00:00Z",
                "2026-01-01T09:00:00Z",
            ),
            (
                "an unknown timeZone is ignored",
                "0 9 * * *",
                Some("Mars/Olympus"),
                "2026-01-01T00:00:00Z",
                "2026-01-01T09:00:00Z",
            ),
            (
                "a TZ prefix wins over timeZone",
                "TZ=UTC 0 9 * * *",
                Some("Asia/Tokyo"),
                "2026-01-01T00:00:00Z",
                "2026-01-01T09:00:00Z",
            ),
        ];
        for (name, spec, zone, after, expected) in cases {
            assert_eq!(next(&schedule(spec, *zone), after), *expected, "{name}");
        }
    }

    /// Daylight-saving changes in America/New_York (2026: spring forward on March 8th at
    /// 02:00 EST, fall back on November 1st at 02:00 EDT), as robfig/cron computes them.
    #[test]
    fn daylight_saving_changes() {
        let ny = Some("America/New_York");
        let cases: &[(&str, &str, Option<&str>, &str, &str)] = &[
            // 02:30 does not exist on March 8th: that day has no run.
            ("skipped hour has no run", "30 2 * * *", ny, "2026-03-07T17:00:00Z", "2026-03-09T06:30:00Z"),
            // 01:30 EST on March 7th, then 01:30 EST on the 8th (before the change).
            ("before spring-forward", "30 1 * * *", ny, "2026-03-07T12:00:00Z", "2026-03-08T06:30:00Z"),
            // 03:30 on March 8th is EDT: 07:30Z, 23 hours after 03:30 EST on the 7th.
            ("after spring-forward", "30 3 * * *", ny, "2026-03-07T09:00:00Z", "2026-03-08T07:30:00Z"),
            // Hourly runs go 01:00 EST (06:00Z) -> 03:00 EDT (07:00Z): one hour apart.
            ("hourly across spring-forward", "0 * * * *", ny, "2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z"),
            // 01:30 happens twice on November 1st: EDT (05:30Z) then EST (06:30Z).
            ("fall-back first 01:30", "30 1 * * *", ny, "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z"),
            ("fall-back second 01:30", "30 1 * * *", ny, "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"),
            ("after the repeated hour", "30 1 * * *", ny, "2026-11-01T06:30:00Z", "2026-11-02T06:30:00Z"),
            // 02:30 exists once on November 1st (EST).
            ("fall-back day 02:30", "30 2 * * *", ny, "2026-11-01T04:00:00Z", "2026-11-01T07:30:00Z"),
            // Hourly runs 01:00 EDT, 01:00 EST, 02:00 EST: one hour apart.
            ("hourly across fall-back", "0 * * * *", ny, "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z"),
            ("hourly after the repeat", "0 * * * *", ny, "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"),
            // Sao Paulo sprang forward at midnight on 2018-11-04: that day has no midnight run.
            (
                "midnight that does not exist",
                "0 0 * * *",
                Some("America/Sao_Paulo"),
                "2018-11-03T15:00:00Z",
                "2018-11-05T02:00:00Z",
            ),
        ];
        for (name, spec, zone, after, expected) in cases {
            assert_eq!(next(&schedule(spec, *zone), after), *expected, "{name}");
        }
    }

    #[test]
    fn go_date_normalizes_and_resolves_gaps_as_go_does() {
        let ny = cron_time_zone("America/New_York").unwrap();
        let berlin = cron_time_zone("Europe/Berlin").unwrap();
        let date = |zone: &TimeZone, y, mo, d, h, mi| {
            Timestamp::from_second(go_date(zone, y, mo, d, h, mi, 0).unwrap()).unwrap().to_string()
        };
        assert_eq!(date(&TimeZone::UTC, 2026, 13, 1, 0, 0), "2027-01-01T00:00:00Z", "month 13");
        assert_eq!(date(&TimeZone::UTC, 2026, 4, 31, 0, 0), "2026-05-01T00:00:00Z", "April 31st");
        assert_eq!(date(&TimeZone::UTC, 2026, 1, 0, 0, 0), "2025-12-31T00:00:00Z", "day 0");
        // Go: 02:30 in New York's gap is 01:30 EST; in Berlin's gap it is 03:30 CEST.
        assert_eq!(date(&ny, 2026, 3, 8, 2, 30), "2026-03-08T06:30:00Z");
        assert_eq!(date(&berlin, 2026, 3, 29, 2, 30), "2026-03-29T01:30:00Z");
        // Go: a repeated local time in New York is the first (EDT), in Berlin the second (CET).
        assert_eq!(date(&ny, 2026, 11, 1, 1, 30), "2026-11-01T05:30:00Z");
        assert_eq!(date(&berlin, 2026, 10, 25, 2, 30), "2026-10-25T01:30:00Z");
    }

    #[test]
    fn missed_runs_table() {
        let every_minute = schedule("*/1 * * * *", None);
        let hourly = schedule("@hourly", None);
        type Case<'a> = (
            &'a str,
            &'a Schedule,
            &'a str,
            Option<i64>,
            &'a str,
            Result<(Option<&'a str>, Option<&'a str>), ScheduleError>,
        );
        let cases: Vec<Case> = vec![
            (
                "nothing missed yet",
                &every_minute,
                "2026-12-06T07:30:10Z",
                None,
                "2026-12-06T07:30:50Z",
                Ok((None, Some("2026-12-06T07:31:00Z"))),
            ),
            (
                "a run due now",
                &every_minute,
                "2026-12-06T07:30:10Z",
                None,
                "2026-12-06T07:31:00Z",
                Ok((Some("2026-12-06T07:31:00Z"), Some("2026-12-06T07:32:00Z"))),
            ),
            (
                "the latest of several missed runs",
                &every_minute,
                "2026-12-06T07:30:00Z",
                None,
                "2026-12-06T07:35:30Z",
                Ok((Some("2026-12-06T07:35:00Z"), Some("2026-12-06T07:36:00Z"))),
            ),
            (
                "100 missed runs are still counted",
                &every_minute,
                "2026-12-06T06:00:00Z",
                None,
                "2026-12-06T07:40:00Z",
                Ok((Some("2026-12-06T07:40:00Z"), Some("2026-12-06T07:41:00Z"))),
            ),
            (
                "101 missed runs are too many",
                &every_minute,
                "2026-12-06T06:00:00Z",
                None,
                "2026-12-06T07:41:00Z",
                Err(ScheduleError::TooManyMissed),
            ),
            (
                "a starting deadline bounds the count",
                &every_minute,
                "2026-01-01T00:00:00Z",
                Some(200),
                "2026-12-06T07:41:30Z",
                Ok((Some("2026-12-06T07:41:00Z"), Some("2026-12-06T07:42:00Z"))),
            ),
            (
                "a deadline window with no run in it",
                &hourly,
                "2026-12-06T05:00:00Z",
                Some(60),
                "2026-12-06T07:30:00Z",
                Ok((None, Some("2026-12-06T08:00:00Z"))),
            ),
            (
                "last run in the future (clock skew)",
                &hourly,
                "2026-12-06T09:00:00Z",
                None,
                "2026-12-06T07:30:00Z",
                Ok((None, Some("2026-12-06T08:00:00Z"))),
            ),
        ];
        for (name, sched, last, deadline, now, expected) in cases {
            let got = runs(sched, at(last), deadline, at(now)).map(|r| (r.missed, r.next));
            let expected = expected.map(|(missed, next)| (missed.map(at), next.map(at)));
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn unparsable_schedules_are_errors() {
        for bad in ["", "* * *", "61 * * * *", "@fortnightly", "TZ=Nowhere/Land * * * * *"] {
            let spec = AdvancedCronJobSpec { schedule: bad.into(), ..Default::default() };
            assert!(matches!(Schedule::of(&spec), Err(ScheduleError::Unparsable { .. })), "{bad:?}");
        }
    }

    #[test]
    fn add_seconds_keeps_fractions_and_saturates() {
        assert_eq!(add_seconds(at("2026-01-01T00:00:00.25Z"), -60).to_string(), "2025-12-31T23:59:00.25Z");
        assert!(add_seconds(at("2026-01-01T00:00:00Z"), i64::MIN) < at("0000-01-01T00:00:00Z"), "saturates");
    }
}
