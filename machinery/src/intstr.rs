//! Int-or-percent values (`partition: 3`, `maxUnavailable: "20%"`): parsing and scaling against
//! a replica count with the rounding each field uses upstream.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Why an int-or-string value could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IntOrPercentError {
    /// A string that does not end in `%`.
    #[error("invalid type: string is not a percentage")]
    NotAPercentage,
    /// A percentage whose number does not parse.
    #[error("invalid percentage {0:?}")]
    BadNumber(String),
}

/// An int-or-string resolved to either a count or a percentage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IntOrPercent {
    /// An absolute count.
    Int(i32),
    /// A percentage of some total (may be fractional, as upstream parses it as a float).
    Percent(f64),
}

/// Parses an int-or-string that must be a count or a `N%` percentage.
pub fn parse_int_or_percent(value: &IntOrString) -> Result<IntOrPercent, IntOrPercentError> {
    match value {
        IntOrString::Int(count) => Ok(IntOrPercent::Int(*count)),
        IntOrString::String(text) => {
            let number = text.strip_suffix('%').ok_or(IntOrPercentError::NotAPercentage)?;
            number
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .map(IntOrPercent::Percent)
                .ok_or_else(|| IntOrPercentError::BadNumber(text.clone()))
        }
    }
}

/// Scales an int-or-percent against `total`: counts are returned as they are, percentages are
/// rounded up or down (upstream `GetScaledValueFromIntOrPercent`).
pub fn scaled_value(value: &IntOrString, total: i32, round_up: bool) -> Result<i32, IntOrPercentError> {
    Ok(match parse_int_or_percent(value)? {
        IntOrPercent::Int(count) => count,
        IntOrPercent::Percent(percent) => {
            let exact = percent * f64::from(total) / 100.0;
            let rounded = if round_up { exact.ceil() } else { exact.floor() };
            clamp_to_i32(rounded)
        }
    })
}

fn clamp_to_i32(value: f64) -> i32 {
    if value >= f64::from(i32::MAX) {
        i32::MAX
    } else if value <= f64::from(i32::MIN) {
        i32::MIN
    } else {
        // In range and integral after ceil/floor, so the cast is exact.
        value as i32
    }
}

/// The number of pods a partition keeps at the old revision (upstream
/// `CalculatePartitionReplicas`): percentages round up so that any non-zero percentage keeps at
/// least one old pod, but a percentage below 100% always lets at least one pod update when there
/// is more than one replica; the result is clamped to `[0, replicas]`. No partition means 0.
pub fn partition_replicas(
    partition: Option<&IntOrString>,
    replicas: Option<i32>,
) -> Result<i32, IntOrPercentError> {
    let Some(partition) = partition else {
        return Ok(0);
    };
    let replicas = replicas.unwrap_or(1);
    let mut kept = scaled_value(partition, replicas, true)?;
    let below_hundred_percent = matches!(partition, IntOrString::String(text) if text != "100%");
    if replicas > 1 && kept == replicas && below_hundred_percent {
        kept = replicas - 1;
    }
    Ok(kept.clamp(0, replicas.max(0)))
}

/// Renders an int-or-string as written (`3` or `"20%"`), for messages.
pub fn display(value: &IntOrString) -> String {
    match value {
        IntOrString::Int(count) => count.to_string(),
        IntOrString::String(text) => format!("{text:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> IntOrString {
        IntOrString::String(text.to_string())
    }

    #[test]
    fn scaled_values_round_as_asked() {
        let cases = [
            (s("20%"), 5, true, Ok(1)),
            (s("20%"), 6, true, Ok(2)),
            (s("20%"), 6, false, Ok(1)),
            (s("12.5%"), 8, false, Ok(1)),
            (IntOrString::Int(3), 100, true, Ok(3)),
            (s("3"), 10, true, Err(IntOrPercentError::NotAPercentage)),
            (s("x%"), 10, true, Err(IntOrPercentError::BadNumber("x%".into()))),
        ];
        for (value, total, up, expected) in cases {
            assert_eq!(scaled_value(&value, total, up), expected, "{value:?} of {total} up={up}");
        }
    }

    #[test]
    fn partition_rounding_follows_upstream() {
        let cases: [(Option<IntOrString>, Option<i32>, i32); 10] = [
            (None, Some(5), 0),
            (Some(IntOrString::Int(3)), Some(5), 3),
            (Some(IntOrString::Int(8)), Some(5), 5),
            (Some(IntOrString::Int(-1)), Some(5), 0),
            (Some(s("0%")), Some(5), 0),
            (Some(s("50%")), Some(5), 3),
            (Some(s("99%")), Some(5), 4),
            (Some(s("100%")), Some(5), 5),
            (Some(s("90%")), Some(1), 1),
            (Some(s("30%")), None, 1),
        ];
        for (partition, replicas, expected) in cases {
            assert_eq!(
                partition_replicas(partition.as_ref(), replicas),
                Ok(expected),
                "partition {partition:?} replicas {replicas:?}"
            );
        }
    }
}
