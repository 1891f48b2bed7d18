//! What a command does in a simulated container, by the test conventions: a tiny `sh` that
//! knows the commands tests give containers (`sleep N`, `exit N`, `true`, `false`, `echo`,
//! `sh -c "sleep 10; exit 1"`, `tail -f /dev/null`, `read` ...) and says how long the command
//! runs, what it exits with and what it prints. Nothing is executed: the kubelet and the
//! runtime wait the time and report the result, for a container's main process, its exec
//! probes and lifecycle hooks, CRI `ExecSync` and `kubectl exec` alike.

use std::{collections::BTreeMap, time::Duration};

use super::conventions::parse_duration;

/// What runs the command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The container's own process (command and args): a program the simulation does not
    /// know is taken for a server of the image and runs until stopped.
    Main,
    /// An exec in a running container (probe, hook, `ExecSync`, `kubectl exec`): a bare
    /// command word the simulation does not know is "not found" (127), as in busybox; a path
    /// (`/bin/drain`, `./probe.sh`) is a program of the image and succeeds.
    Exec,
}

/// What the command can see.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// Environment (`$NAME` expands from it; `env` prints it).
    pub env: BTreeMap<String, String>,
    /// Whether standard input is open (`read` and `cat` block on it; without it they see EOF).
    pub stdin: bool,
}

/// What a command does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// How long it runs; `None` when it never ends on its own.
    pub runs_for: Option<Duration>,
    /// Exit code once it ends.
    pub exit_code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Commands that finish at once with status 0 whatever their arguments (busybox applets and
/// shell builtins whose effect the simulation does not model).
const QUIET: &[&str] = &[
    "[", "awk", "basename", "cd", "chmod", "chown", "cp", "curl", "cut", "date", "df", "dirname", "du",
    "export", "find", "grep", "head", "hostname", "id", "kill", "killall", "ln", "ls", "mkdir", "mv", "nc",
    "nslookup", "ping", "ps", "pwd", "rm", "sed", "set", "sort", "stat", "sync", "tee", "test", "touch",
    "tr", "trap", "uname", "uniq", "unset", "wait", "wc", "wget", "whoami", "xargs",
];

/// Shells: `sh -c SCRIPT` runs the script; `sh FILE` runs a script of the image.
const SHELLS: &[&str] = &["sh", "bash", "ash", "dash", "zsh"];

/// Programs the simulated shell knows besides [`QUIET`] and [`SHELLS`].
const KNOWN: &[&str] = &[
    "sleep",
    "exit",
    "true",
    ":",
    "false",
    "echo",
    "printf",
    "env",
    "printenv",
    "read",
    "cat",
    "tail",
    "nginx",
    "httpd",
    "redis-server",
];

/// What `argv` does when run the way `mode` says.
pub fn run(argv: &[String], mode: Mode, context: &Context) -> Outcome {
    let mut state = State::new(mode, context);
    match argv.first() {
        // exec of a program the image does not have: the runtime cannot start it.
        Some(program)
            if mode == Mode::Exec
                && !program.contains('/')
                && !KNOWN.contains(&program.as_str())
                && !QUIET.contains(&program.as_str())
                && !SHELLS.contains(&program.as_str()) =>
        {
            state.stderr = format!(
                "OCI runtime exec failed: exec failed: unable to start container process: exec: {program:?}: \
                 executable file not found in $PATH: unknown\n"
            );
            state.status = 126;
        }
        _ => state.command(argv),
    }
    state.finish()
}

/// A shell script (`sh -c` argument) as its sequence of simple commands.
#[derive(Debug, PartialEq, Eq)]
enum Link {
    /// `;`, newline, `&` or `|`: the next command runs whatever the status.
    Then,
    /// `&&`: runs when the status is 0.
    And,
    /// `||`: runs when the status is not 0.
    Or,
}

/// Splits a script into commands and the links between them, honouring quotes and escapes.
fn parse_script(script: &str) -> Vec<(Vec<String>, Link)> {
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = script.chars().peekable();
    let end_word = |words: &mut Vec<String>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for next in chars.by_ref() {
                    if next == '\'' {
                        break;
                    }
                    word.push(next);
                }
            }
            '"' => {
                in_word = true;
                while let Some(next) = chars.next() {
                    match next {
                        '"' => break,
                        '\\' => {
                            if let Some(escaped) = chars.next() {
                                word.push(escaped);
                            }
                        }
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(escaped) = chars.next() {
                    word.push(escaped);
                }
            }
            '#' if !in_word => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        break;
                    }
                }
                end_word(&mut words, &mut word, &mut in_word);
                commands.push((std::mem::take(&mut words), Link::Then));
            }
            ';' | '\n' => {
                end_word(&mut words, &mut word, &mut in_word);
                commands.push((std::mem::take(&mut words), Link::Then));
            }
            // `>&2`, `2>&1`: part of a redirection, not an operator.
            '&' if in_word && word.ends_with('>') => word.push('&'),
            '&' | '|' => {
                end_word(&mut words, &mut word, &mut in_word);
                let link = match (c, chars.peek()) {
                    ('&', Some('&')) => Link::And,
                    ('|', Some('|')) => Link::Or,
                    _ => Link::Then,
                };
                if link != Link::Then {
                    chars.next();
                }
                commands.push((std::mem::take(&mut words), link));
            }
            c if c.is_whitespace() => end_word(&mut words, &mut word, &mut in_word),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut words, &mut word, &mut in_word);
    commands.push((words, Link::Then));
    commands.retain(|(words, _)| !words.is_empty());
    commands
}

struct State<'a> {
    mode: Mode,
    context: &'a Context,
    elapsed: Duration,
    forever: bool,
    status: i32,
    exited: bool,
    stdout: String,
    stderr: String,
}

impl<'a> State<'a> {
    fn new(mode: Mode, context: &'a Context) -> Self {
        Self {
            mode,
            context,
            elapsed: Duration::ZERO,
            forever: false,
            status: 0,
            exited: false,
            stdout: String::new(),
            stderr: String::new(),
        }
    }

    fn finish(self) -> Outcome {
        Outcome {
            runs_for: (!self.forever).then_some(self.elapsed),
            exit_code: self.status,
            stdout: self.stdout,
            stderr: self.stderr,
        }
    }

    fn stopped(&self) -> bool {
        self.exited || self.forever
    }

    fn expand(&self, word: &str) -> String {
        if !word.contains('$') {
            return word.to_string();
        }
        let mut out = String::new();
        let mut chars = word.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '$' {
                out.push(c);
                continue;
            }
            let name: String = match chars.peek() {
                Some('?') => {
                    chars.next();
                    out.push_str(&self.status.to_string());
                    continue;
                }
                Some('{') => {
                    chars.next();
                    let mut name = String::new();
                    for next in chars.by_ref() {
                        if next == '}' {
                            break;
                        }
                        name.push(next);
                    }
                    name
                }
                _ => {
                    let mut name = String::new();
                    while let Some(next) =
                        chars.peek().copied().filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                    {
                        name.push(next);
                        chars.next();
                    }
                    if name.is_empty() {
                        out.push('$');
                        continue;
                    }
                    name
                }
            };
            out.push_str(self.context.env.get(&name).map(String::as_str).unwrap_or_default());
        }
        out
    }

    fn script(&mut self, script: &str) {
        let mut link = Link::Then;
        for (words, next) in parse_script(script) {
            let runs = match link {
                Link::Then => true,
                Link::And => self.status == 0,
                Link::Or => self.status != 0,
            };
            if runs {
                let words: Vec<String> = words.iter().map(|w| self.expand(w)).collect();
                self.command(&words);
            }
            if self.stopped() {
                return;
            }
            link = next;
        }
    }

    /// One simple command, with its output redirections (`>&2`, `>/dev/null`, `2>file`).
    fn command(&mut self, argv: &[String]) {
        let (words, redirect) = redirections(argv);
        let (out_before, err_before) = (self.stdout.len(), self.stderr.len());
        self.simple(&words);
        let printed = self.stdout.split_off(out_before);
        let errors = self.stderr.split_off(err_before);
        match redirect.stdout {
            Target::Keep => self.stdout.push_str(&printed),
            Target::Other => self.stderr.push_str(&printed),
            Target::Discard => {}
        }
        match redirect.stderr {
            Target::Keep => self.stderr.push_str(&errors),
            Target::Other => self.stdout.push_str(&errors),
            Target::Discard => {}
        }
    }

    fn simple(&mut self, argv: &[String]) {
        let Some(program) = argv.first() else { return };
        let name = program.rsplit('/').next().unwrap_or(program).to_string();
        let args = &argv[1..];
        match name.as_str() {
            shell if SHELLS.contains(&shell) => match args {
                [flag, script, ..] if flag.starts_with('-') && flag.contains('c') => self.script(script),
                [] => self.wait_for_input(0),
                // `sh ./probe.sh`: a script of the image, taken to succeed at once.
                _ => self.status = 0,
            },
            "sleep" => match args.first().map(String::as_str) {
                Some("infinity" | "inf") => self.forever = true,
                Some(time) => match sleep_time(time) {
                    Some(time) => {
                        self.elapsed += time;
                        self.status = 0;
                    }
                    None => {
                        self.stderr.push_str(&format!("sleep: invalid number '{time}'\n"));
                        self.status = 1;
                    }
                },
                None => {
                    self.stderr.push_str("sleep: missing operand\n");
                    self.status = 1;
                }
            },
            "exit" => {
                self.status = match args.first() {
                    Some(code) => code.trim().parse::<i32>().map(|c| c.rem_euclid(256)).unwrap_or(2),
                    None => self.status,
                };
                self.exited = true;
            }
            "true" | ":" => self.status = 0,
            "false" => self.status = 1,
            "echo" => {
                let (newline, words) = match args.first().map(String::as_str) {
                    Some("-n") => (false, &args[1..]),
                    _ => (true, args),
                };
                self.stdout.push_str(&words.join(" "));
                if newline {
                    self.stdout.push('\n');
                }
                self.status = 0;
            }
            "printf" => {
                let format = args.first().cloned().unwrap_or_default();
                self.stdout.push_str(&format.replace("\\n", "\n").replace("\\t", "\t"));
                self.status = 0;
            }
            "env" | "printenv" => match args.first() {
                Some(var) if name == "printenv" => match self.context.env.get(var) {
                    Some(value) => {
                        self.stdout.push_str(&format!("{value}\n"));
                        self.status = 0;
                    }
                    None => self.status = 1,
                },
                _ => {
                    for (key, value) in &self.context.env {
                        self.stdout.push_str(&format!("{key}={value}\n"));
                    }
                    self.status = 0;
                }
            },
            "read" => self.wait_for_input(1),
            "cat" if args.is_empty() || args.iter().all(|a| a == "-") => self.wait_for_input(0),
            "tail" if args.iter().any(|a| a == "-f" || a == "-F") => self.forever = true,
            "cat" | "tail" => self.status = 0,
            "nginx" | "httpd" | "redis-server" if self.mode == Mode::Main => {
                if args.iter().any(|a| a == "-s" || a == "-t" || a == "-v" || a == "-V") {
                    self.status = 0;
                } else {
                    self.forever = true;
                }
            }
            quiet if QUIET.contains(&quiet) => self.status = 0,
            _ if self.mode == Mode::Main => self.forever = true,
            _ if program.contains('/') => self.status = 0,
            _ => {
                self.stderr.push_str(&format!("sh: {program}: not found\n"));
                self.status = 127;
            }
        }
    }

    /// `read` / `cat`: blocks while standard input is open, else sees end of file.
    fn wait_for_input(&mut self, status_at_eof: i32) {
        if self.context.stdin {
            self.forever = true;
        } else {
            self.status = status_at_eof;
        }
    }
}

/// Where a command's output stream goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Target {
    /// Where it goes anyway.
    #[default]
    Keep,
    /// To the other stream (`>&2`, `2>&1`).
    Other,
    /// Nowhere the caller sees (`>/dev/null`, `2>file`).
    Discard,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Redirect {
    stdout: Target,
    stderr: Target,
}

/// Splits the redirections off a command's words.
fn redirections(argv: &[String]) -> (Vec<String>, Redirect) {
    let mut words = Vec::new();
    let mut redirect = Redirect::default();
    let mut iter = argv.iter().peekable();
    while let Some(word) = iter.next() {
        let (stream, rest) = if let Some(rest) = word.strip_prefix("2>") {
            (&mut redirect.stderr, rest)
        } else if let Some(rest) = word.strip_prefix("1>").or_else(|| word.strip_prefix('>')) {
            (&mut redirect.stdout, rest)
        } else {
            words.push(word.clone());
            continue;
        };
        let rest = rest.trim_start_matches('>');
        *stream = match rest {
            "&2" | "&1" => Target::Other,
            "" => {
                iter.next();
                Target::Discard
            }
            _ => Target::Discard,
        };
    }
    (words, redirect)
}

/// `sleep` operands: a number with an optional `s`, `m`, `h` or `d` suffix.
fn sleep_time(text: &str) -> Option<Duration> {
    match text.strip_suffix('d') {
        Some(days) => days
            .parse::<f64>()
            .ok()
            .filter(|d| d.is_finite() && *d >= 0.0)
            .map(|d| Duration::from_secs_f64((d * 86_400.0).min(u32::MAX as f64))),
        None => parse_duration(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn secs(seconds: u64) -> Option<Duration> {
        Some(Duration::from_secs(seconds))
    }

    #[test]
    fn the_commands_tests_give_containers() {
        let context = Context::default();
        let cases: &[(&[&str], Mode, Option<Duration>, i32)] = &[
            (&["sleep", "5"], Mode::Main, secs(5), 0),
            (&["sleep", "999d"], Mode::Main, secs(999 * 86_400), 0),
            (&["sleep", "infinity"], Mode::Main, None, 0),
            (&["/bin/sh", "-c", "sleep 10000000"], Mode::Main, secs(10_000_000), 0),
            (&["/bin/sh", "-c", "exit 1"], Mode::Main, secs(0), 1),
            (&["/bin/sh", "-c", "exit 0"], Mode::Main, secs(0), 0),
            (&["sh", "-c", "sleep 10; exit 1"], Mode::Main, secs(10), 1),
            (&["sh", "-c", "sleep 2 && exit 3"], Mode::Main, secs(2), 3),
            (&["sh", "-c", "false || exit 4"], Mode::Main, secs(0), 4),
            (&["sh", "-c", "true && false"], Mode::Main, secs(0), 1),
            (&["sh", "-c", "echo 'Hello from AdvancedCronJob' && sleep 5"], Mode::Main, secs(5), 0),
            (&["true"], Mode::Main, secs(0), 0),
            (&["false"], Mode::Main, secs(0), 1),
            (&["/bin/false"], Mode::Main, secs(0), 1),
            (&["tail", "-f", "/dev/null"], Mode::Main, None, 0),
            (&["/bin/bash", "-c", "read -p wait"], Mode::Main, secs(0), 1),
            (&["nginx", "-g", "daemon off;"], Mode::Main, None, 0),
            (&["/home/game/idle.sh"], Mode::Main, None, 0),
            (&["redis-server"], Mode::Main, None, 0),
            (&["sleep", "1"], Mode::Exec, secs(1), 0),
            (&["sh", "-c", "exit 3"], Mode::Exec, secs(0), 3),
            (&["sh", "-c", "nginx -s quit; sleep 5"], Mode::Exec, secs(5), 0),
            (&["/bin/sh", "-c", "ls /"], Mode::Exec, secs(0), 0),
            (&["/bin/sh", "-c", "ps -ef"], Mode::Exec, secs(0), 0),
            (&["/bin/sh", "-c", "failed /"], Mode::Exec, secs(0), 127),
            (&["sdkfjk"], Mode::Exec, secs(0), 126),
            (&["/bin/drain"], Mode::Exec, secs(0), 0),
            (&["/bin/sh", "/migrate.sh"], Mode::Exec, secs(0), 0),
            (&["sh", "-c", "exit 300"], Mode::Exec, secs(0), 44),
            (&["sh", "-c", "sleep 1 # then stop\nexit 2"], Mode::Exec, secs(1), 2),
        ];
        for (words, mode, runs_for, code) in cases {
            let outcome = run(&argv(words), *mode, &context);
            assert_eq!((outcome.runs_for, outcome.exit_code), (*runs_for, *code), "{words:?} as {mode:?}");
        }
    }

    #[test]
    fn output_and_input() {
        let context =
            Context { env: BTreeMap::from([("NAME".to_string(), "web".to_string())]), stdin: false };
        let echo = run(&argv(&["sh", "-c", "echo \"hi $NAME\"; echo -n ${NAME}!"]), Mode::Exec, &context);
        assert_eq!(echo.stdout, "hi web\nweb!");
        let status = run(&argv(&["sh", "-c", "false; echo $?"]), Mode::Exec, &context);
        assert_eq!(status.stdout, "1\n");
        let env = run(&argv(&["env"]), Mode::Exec, &context);
        assert_eq!(env.stdout, "NAME=web\n");
        let missing = run(&argv(&["sh", "-c", "failed -ef"]), Mode::Exec, &context);
        assert_eq!((missing.exit_code, missing.stderr.as_str()), (127, "sh: failed: not found\n"));
        let direct = run(&argv(&["failed", "-ef"]), Mode::Exec, &context);
        assert_eq!(direct.exit_code, 126);
        assert!(
            direct.stderr.contains("exec: \"failed\": executable file not found in $PATH"),
            "{}",
            direct.stderr
        );
        assert_eq!(run(&argv(&["cat"]), Mode::Exec, &context).runs_for, secs(0), "EOF at once");
        let interactive = Context { stdin: true, ..context };
        assert_eq!(run(&argv(&["/bin/bash", "-c", "read -p wait"]), Mode::Main, &interactive).runs_for, None);
        assert_eq!(run(&argv(&["sleep", "soon"]), Mode::Exec, &interactive).exit_code, 1);
    }

    #[test]
    fn output_redirections() {
        let context = Context::default();
        let cases: &[(&str, &str, &str)] = &[
            ("echo hi; echo err >&2", "hi\n", "err\n"),
            ("echo quiet > /dev/null; echo loud", "loud\n", ""),
            ("echo x >/dev/null 2>&1", "", ""),
            ("failed 2>/dev/null || echo recovered", "recovered\n", ""),
            ("failed 2>&1", "sh: failed: not found\n", ""),
            ("echo a 1>&2", "", "a\n"),
        ];
        for (script, stdout, stderr) in cases {
            let outcome = run(&argv(&["sh", "-c", script]), Mode::Exec, &context);
            assert_eq!((outcome.stdout.as_str(), outcome.stderr.as_str()), (*stdout, *stderr), "{script}");
        }
    }

    #[test]
    fn scripts_split_on_operators_outside_quotes() {
        let parsed = parse_script("echo 'a; b' && sleep 1 || exit 2; x\\ y");
        let words: Vec<Vec<String>> = parsed.iter().map(|(w, _)| w.clone()).collect();
        assert_eq!(
            words,
            vec![argv(&["echo", "a; b"]), argv(&["sleep", "1"]), argv(&["exit", "2"]), argv(&["x y"])]
        );
        let links: Vec<&Link> = parsed.iter().map(|(_, l)| l).collect();
        assert_eq!(links, vec![&Link::And, &Link::Or, &Link::Then, &Link::Then]);
    }
}
