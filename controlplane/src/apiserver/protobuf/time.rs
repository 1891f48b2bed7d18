//! `metav1.Time` and `metav1.MicroTime` between their JSON text (RFC 3339, seconds or
//! microseconds, UTC) and their wire form (Unix seconds and nanoseconds).

use k8s_openapi::jiff::Timestamp;

/// Seconds of Go's zero `time.Time` (0001-01-01T00:00:00Z), which Go writes as an empty message
/// and as JSON `null`.
const GO_ZERO_SECONDS: i64 = -62_135_596_800;

/// Parses an RFC 3339 time to Unix seconds and nanoseconds: `Time` keeps whole seconds (as Go
/// does on the wire), `MicroTime` microseconds.
pub fn parse(text: &str, micro: bool) -> Option<(i64, u32)> {
    let timestamp: Timestamp = text.parse().ok()?;
    let nanos = if micro { timestamp.subsec_nanosecond() / 1000 * 1000 } else { 0 };
    Some((timestamp.as_second(), u32::try_from(nanos).ok()?))
}

/// None for Go's zero time (written as nothing).
pub fn non_zero(seconds: i64, nanos: u32) -> Option<(i64, u32)> {
    (seconds != GO_ZERO_SECONDS || nanos != 0).then_some((seconds, nanos))
}

/// Formats Unix seconds (and nanoseconds, for `MicroTime`) as Go's JSON does; None for the
/// zero time or one out of range.
pub fn format(seconds: i64, nanos: i64, micro: bool) -> Option<String> {
    if seconds == GO_ZERO_SECONDS && (nanos == 0 || !micro) {
        return None;
    }
    let nanos = if micro { nanos.clamp(0, 999_999_999) / 1000 * 1000 } else { 0 };
    let timestamp = Timestamp::new(seconds, i32::try_from(nanos).ok()?).ok()?;
    let pattern = if micro { "%Y-%m-%dT%H:%M:%S%.6fZ" } else { "%Y-%m-%dT%H:%M:%SZ" };
    Some(timestamp.strftime(pattern).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_as_go_writes_them() {
        assert_eq!(parse("2024-05-06T07:08:09Z", false), Some((1_714_979_289, 0)));
        assert_eq!(parse("2024-05-06T09:08:09+02:00", false), Some((1_714_979_289, 0)));
        assert_eq!(parse("2024-05-06T07:08:09.123456789Z", false), Some((1_714_979_289, 0)));
        assert_eq!(parse("2024-05-06T07:08:09.123456789Z", true), Some((1_714_979_289, 123_456_000)));
        assert_eq!(parse("yesterday", false), None);
        assert_eq!(format(1_714_979_289, 0, false).as_deref(), Some("2024-05-06T07:08:09Z"));
        assert_eq!(format(1_714_979_289, 123_456_789, true).as_deref(), Some("2024-05-06T07:08:09.123456Z"));
        assert_eq!(format(1_714_979_289, 0, true).as_deref(), Some("2024-05-06T07:08:09.000000Z"));
        assert_eq!(non_zero(GO_ZERO_SECONDS, 0), None);
        assert_eq!(parse("0001-01-01T00:00:00Z", false), Some((GO_ZERO_SECONDS, 0)));
        assert_eq!(format(GO_ZERO_SECONDS, 0, false), None);
    }
}
