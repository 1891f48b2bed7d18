//! One module per subcommand.

pub mod api;
pub mod apiserver;
pub mod audit;
pub mod broadcastjob;
pub mod client;
pub mod crds;
pub mod cronjob;
pub mod daemon;
pub mod manager;
pub mod nodes;
pub mod prepull;
pub mod recreate;
pub mod rollout;
pub mod tasks;
pub mod up;
pub mod validate;

/// Parses `500ms`, `30s`, `2m`, `1h` or a plain number of seconds (flags taking durations).
pub(crate) fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(index) => text.split_at(index),
        None => (text, "s"),
    };
    let value: f64 = number.trim().parse().map_err(|_| format!("not a duration: {text:?}"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("not a duration: {text:?}"));
    }
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("unknown unit in {text:?} (use ms, s, m or h)")),
    };
    Ok(std::time::Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(super::parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(super::parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(super::parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(super::parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(super::parse_duration("soon").is_err());
        assert!(super::parse_duration("3d").is_err());
    }
}
