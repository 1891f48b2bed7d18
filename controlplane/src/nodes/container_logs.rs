//! Container logs as the kubelet's `/containerLogs` serves them: which incarnation (the current
//! one or, with `previous`, the one before), the kubelet's errors when there is none, and the
//! options `timestamps`, `tailLines`, `limitBytes` and `sinceSeconds`. Pure functions over the
//! runtime's records; the HTTP side is in [`super::kubelet_server`].

use k8s_openapi::jiff::{Timestamp, ToSpan};

use super::runtime::{Container, ContainerState, LogLine};

/// The options of a log request (the kubelet's query parameters).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// Keep streaming until the container exits.
    pub follow: bool,
    /// The previous incarnation.
    pub previous: bool,
    /// Prefix each line with its RFC 3339 time.
    pub timestamps: bool,
    /// Only the last N lines.
    pub tail_lines: Option<usize>,
    /// At most this many bytes.
    pub limit_bytes: Option<usize>,
    /// Only lines of the last N seconds.
    pub since_seconds: Option<i64>,
    /// Only lines written from this time on.
    pub since_time: Option<Timestamp>,
}

impl LogOptions {
    /// The options from query pairs; an option that does not parse is an error naming it.
    pub fn from_query(pairs: &[(String, String)]) -> Result<Self, String> {
        let mut options = Self::default();
        for (key, value) in pairs {
            let flag = || matches!(value.as_str(), "true" | "1");
            let number =
                |name: &str| value.parse::<i64>().map_err(|_| format!("invalid value {value:?} for {name}"));
            match key.as_str() {
                "follow" => options.follow = flag(),
                "previous" => options.previous = flag(),
                "timestamps" => options.timestamps = flag(),
                "tailLines" => options.tail_lines = Some(number("tailLines")?.max(0) as usize),
                "limitBytes" => options.limit_bytes = Some(number("limitBytes")?.max(0) as usize),
                "sinceSeconds" => options.since_seconds = Some(number("sinceSeconds")?),
                "sinceTime" => {
                    options.since_time =
                        Some(value.parse().map_err(|_| format!("invalid value {value:?} for sinceTime"))?)
                }
                _ => {}
            }
        }
        Ok(options)
    }
}

/// Picks the incarnation whose log is asked for from `incarnations` (newest first, as
/// [`super::runtime::NodeRuntime::incarnations`] lists them), or the kubelet's error text.
pub fn pick<'a>(
    incarnations: &'a [Container],
    container: &str,
    pod: &str,
    previous: bool,
) -> Result<&'a Container, String> {
    let current = incarnations.first();
    if previous {
        // The container before the current one; an exited one about to be restarted already is
        // the previous one (the kubelet reads it from `lastState`).
        return match current {
            Some(current) if current.state == ContainerState::Running => incarnations.get(1),
            Some(current) if current.restart_pending => Some(current),
            Some(_) => incarnations.get(1),
            None => None,
        }
        .ok_or_else(|| format!("previous terminated container {container:?} in pod {pod:?} not found"));
    }
    current.ok_or_else(|| {
        format!("container {container:?} in pod {pod:?} is waiting to start: ContainerCreating")
    })
}

/// Renders log lines (`first` true for the first chunk of a request, where `tailLines`
/// applies), honouring the time filters and timestamps.
pub fn render(lines: &[LogLine], options: &LogOptions, first: bool, now: Timestamp) -> String {
    let since =
        options.since_time.or_else(|| options.since_seconds.and_then(|s| now.checked_sub(s.seconds()).ok()));
    let kept: Vec<&LogLine> = lines.iter().filter(|l| since.is_none_or(|since| l.time >= since)).collect();
    let kept = match options.tail_lines {
        Some(tail) if first => &kept[kept.len().saturating_sub(tail)..],
        _ => &kept[..],
    };
    let mut out = String::new();
    for line in kept {
        if options.timestamps {
            out.push_str(&format!("{:.9} ", line.time));
        }
        out.push_str(&line.text);
        out.push('\n');
    }
    out
}

/// Cuts `text` to the bytes still allowed by `limitBytes` (`remaining` counts down).
pub fn limit(text: String, remaining: &mut Option<usize>) -> String {
    match remaining {
        None => text,
        Some(left) => {
            let mut bytes = text.into_bytes();
            bytes.truncate(*left);
            *left -= bytes.len();
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn line(seconds: i64, text: &str) -> LogLine {
        LogLine { time: Timestamp::from_second(seconds).unwrap(), stderr: false, text: text.into() }
    }

    fn incarnation(id: &str, state: ContainerState) -> Container {
        Container {
            id: id.into(),
            sandbox_id: "s".into(),
            name: "main".into(),
            image: "busybox".into(),
            image_id: "sha256:x".into(),
            attempt: 0,
            state,
            created_at: 0,
            started_at: 0,
            finished_at: 0,
            exit_code: 0,
            reason: String::new(),
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            env: BTreeMap::new(),
            logs: Vec::new(),
            restart_pending: false,
            files: Default::default(),
        }
    }

    #[test]
    fn current_and_previous_incarnations() {
        let running = incarnation("new", ContainerState::Running);
        let exited = incarnation("old", ContainerState::Exited);
        let both = [running.clone(), exited.clone()];
        assert_eq!(pick(&both, "main", "p", false).unwrap().id, "new");
        assert_eq!(pick(&both, "main", "p", true).unwrap().id, "old");
        let only_exited = [exited];
        assert_eq!(pick(&only_exited, "main", "p", false).unwrap().id, "old");
        assert_eq!(
            pick(&only_exited, "main", "p", true).unwrap_err(),
            "previous terminated container \"main\" in pod \"p\" not found"
        );
        assert_eq!(
            pick(&[], "main", "p", false).unwrap_err(),
            "container \"main\" in pod \"p\" is waiting to start: ContainerCreating"
        );
        assert!(pick(&[running], "main", "p", true).is_err());
        let restarting = Container { restart_pending: true, ..incarnation("old", ContainerState::Exited) };
        assert_eq!(pick(std::slice::from_ref(&restarting), "main", "p", true).unwrap().id, "old");
    }

    #[test]
    fn tail_since_timestamps_and_limits() {
        let lines = [line(100, "a"), line(200, "b"), line(300, "c")];
        let now = Timestamp::from_second(310).unwrap();
        assert_eq!(render(&lines, &LogOptions::default(), true, now), "a\nb\nc\n");
        let tail = LogOptions { tail_lines: Some(2), ..Default::default() };
        assert_eq!(render(&lines, &tail, true, now), "b\nc\n");
        assert_eq!(render(&lines, &tail, false, now), "a\nb\nc\n", "tail applies to the first chunk only");
        let since = LogOptions { since_seconds: Some(150), ..Default::default() };
        assert_eq!(render(&lines, &since, true, now), "b\nc\n");
        let stamped = LogOptions { timestamps: true, tail_lines: Some(1), ..Default::default() };
        assert_eq!(render(&lines, &stamped, true, now), "1970-01-01T00:05:00.000000000Z c\n");
        let mut left = Some(3);
        assert_eq!(limit("abcd".into(), &mut left), "abc");
        assert_eq!(limit("ef".into(), &mut left), "");
        assert_eq!(limit("ef".into(), &mut None), "ef");
    }

    #[test]
    fn options_from_the_query() {
        let pairs = |list: &[(&str, &str)]| {
            list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>()
        };
        let options =
            LogOptions::from_query(&pairs(&[("follow", "true"), ("previous", "true"), ("tailLines", "5")]))
                .unwrap();
        assert_eq!((options.follow, options.previous, options.tail_lines), (true, true, Some(5)));
        assert_eq!(
            LogOptions::from_query(&pairs(&[("limitBytes", "lots")])).unwrap_err(),
            "invalid value \"lots\" for limitBytes"
        );
    }
}
