//! What kubectl prints for the user, without kubectl's own diagnostics.
//!
//! kubectl logs through klog to stderr, and some of those lines are about races inside the client
//! rather than about the server. The one seen in CI: for `kubectl exec` over WebSocket,
//! kube-apiserver sends an empty "ready" message on the lowest output channel right after the
//! upgrade, and kubectl 1.33 sometimes reads it before it has registered its streams, so it
//! prints `E1203 12:20:54.543156 3377 websocket.go:297] Unknown stream id 1, discarding message`.
//! The exit code and the message the user acts on are unchanged, but the line carries a
//! timestamp and a process id, so a comparison between tiers must leave it out.

/// `stderr` without klog header lines (`E1203 12:20:54.543156    3377 websocket.go:297] ...`);
/// every other line is kept as it was, in order.
pub fn without_client_logs(stderr: &str) -> String {
    stderr.split_inclusive('\n').filter(|line| !is_klog_line(line)).collect()
}

/// A klog line starts with a severity letter, `MMDD hh:mm:ss.micros`, the pid and `file:line]`.
fn is_klog_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix(['I', 'W', 'E', 'F']) else { return false };
    let mut fields = rest.split_whitespace();
    let (Some(date), Some(time), Some(pid), Some(source)) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return false;
    };
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let time_ok = time.len() >= 8
        && time.split(['.', ':']).all(digits)
        && time.bytes().filter(|&b| b == b':').count() == 2;
    let source_ok = source
        .strip_suffix(']')
        .and_then(|location| location.rsplit_once(':'))
        .is_some_and(|(file, number)| !file.is_empty() && digits(number));
    date.len() == 4 && digits(date) && time_ok && digits(pid) && source_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn klog_lines_are_dropped_and_the_rest_is_kept() {
        let cases = [
            (
                "E1203 12:20:54.543156    3377 websocket.go:297] Unknown stream id 1, discarding message\ncommand terminated with exit code 3\n",
                "command terminated with exit code 3\n",
            ),
            ("command terminated with exit code 3", "command terminated with exit code 3"),
            (
                "W0101 00:00:00.000001 1 warnings.go:70] deprecated\nError from server (BadRequest): container nope is not valid for pod duo\n",
                "Error from server (BadRequest): container nope is not valid for pod duo\n",
            ),
            // Lines that merely look alike stay.
            (
                "Error from server (NotFound): pods \"x\" not found\n",
                "Error from server (NotFound): pods \"x\" not found\n",
            ),
            ("E1203 this is what the command printed\n", "E1203 this is what the command printed\n"),
            ("I0101 12:00 1 main.go:1] no seconds\n", "I0101 12:00 1 main.go:1] no seconds\n"),
            ("", ""),
        ];
        for (stderr, expected) in cases {
            assert_eq!(without_client_logs(stderr), expected, "{stderr:?}");
        }
    }
}
