//! What a command does in a simulated container, by the test conventions: a tiny `sh` that
//! knows the commands tests give containers (`sleep N`, `exit N`, `true`, `false`, `echo`,
//! `sh -c "sleep 10; exit 1"`, `tail -f /dev/null`, `read` ...) and says how long the command
//! runs, what it exits with and what it prints. Nothing is executed: the kubelet and the
//! runtime wait the time and report the result, for a container's main process, its exec
//! probes and lifecycle hooks, CRI `ExecSync` and `kubectl exec` alike.
//!
//! Given the container's files ([`super::files`]), the file commands act on them: `touch`,
//! `dd of=`, `echo > file`, `mv`, `cp`, `rm`, `mkdir`, `cat`, `ls`, `find`, `test -f` / `[ -d ]`;
//! with `|` pipes, `$(...)` substitution and `if ...; then ...; else ...; fi`. Without files
//! (a container's own process) they succeed without effect.

use std::{collections::BTreeMap, time::Duration};

use super::{conventions::parse_duration, files::ContainerFiles};

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
    /// What `hostname` prints (the pod's name).
    pub hostname: String,
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
    "dd", "tr", "trap", "uname", "uniq", "unset", "wait", "wc", "wget", "whoami", "xargs",
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

/// Whether the simulated shell knows `program` (a busybox applet, shell builtin or shell it
/// models); a path (`/bin/drain`) is looked at by its last segment.
pub fn knows(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    KNOWN.contains(&name) || QUIET.contains(&name) || SHELLS.contains(&name)
}

/// What `argv` does when run the way `mode` says, with no files to act on.
pub fn run(argv: &[String], mode: Mode, context: &Context) -> Outcome {
    run_on(argv, mode, context, None)
}

/// What `argv` does in a container with `files`.
pub fn run_with_files(argv: &[String], mode: Mode, context: &Context, files: &mut ContainerFiles) -> Outcome {
    run_on(argv, mode, context, Some(files))
}

fn run_on(argv: &[String], mode: Mode, context: &Context, files: Option<&mut ContainerFiles>) -> Outcome {
    let mut state = State::new(mode, context, files);
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
    /// `;`, newline or `&`: the next command runs whatever the status.
    Then,
    /// `|`: the next command runs with this one's output as its input.
    Pipe,
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
                    ('|', _) => Link::Pipe,
                    _ => Link::Then,
                };
                if matches!(link, Link::And | Link::Or) {
                    chars.next();
                }
                commands.push((std::mem::take(&mut words), link));
            }
            // `$(...)`: one word up to the matching parenthesis, whatever it holds.
            '$' if chars.peek() == Some(&'(') => {
                in_word = true;
                word.push('$');
                let mut depth = 0;
                for next in chars.by_ref() {
                    word.push(next);
                    match next {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
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
    files: Option<&'a mut ContainerFiles>,
    /// Output of the previous command of a pipe, read by this one.
    input: Option<String>,
    elapsed: Duration,
    forever: bool,
    status: i32,
    exited: bool,
    stdout: String,
    stderr: String,
}

/// An `if` being run: whether its surroundings run, whether a branch was taken, and whether
/// the commands now met run.
struct IfFrame {
    outer: bool,
    taken: bool,
    running: bool,
}

impl<'a> State<'a> {
    fn new(mode: Mode, context: &'a Context, files: Option<&'a mut ContainerFiles>) -> Self {
        Self {
            mode,
            context,
            files,
            input: None,
            elapsed: Duration::ZERO,
            forever: false,
            status: 0,
            exited: false,
            stdout: String::new(),
            stderr: String::new(),
        }
    }

    /// `$(script)`: its output without trailing newlines; its time and status count.
    fn substitute(&mut self, script: &str) -> String {
        let mut sub = State::new(self.mode, self.context, self.files.as_deref_mut());
        sub.script(script);
        self.elapsed += sub.elapsed;
        self.forever |= sub.forever;
        self.status = sub.status;
        self.stderr.push_str(&sub.stderr);
        sub.stdout.trim_end_matches('\n').to_string()
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

    fn expand(&mut self, word: &str) -> String {
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
                Some('(') => {
                    chars.next();
                    let mut depth = 1;
                    let mut inner = String::new();
                    for next in chars.by_ref() {
                        match next {
                            '(' => depth += 1,
                            ')' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        inner.push(next);
                    }
                    let output = self.substitute(&inner);
                    out.push_str(&output);
                    continue;
                }
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
        let mut frames: Vec<IfFrame> = Vec::new();
        for (words, next) in parse_script(script) {
            let active = frames.last().is_none_or(|f| f.running);
            let keyword = words
                .first()
                .map(String::as_str)
                .filter(|w| matches!(*w, "if" | "then" | "elif" | "else" | "fi"));
            match (keyword, frames.last_mut()) {
                (Some("if"), _) => frames.push(IfFrame { outer: active, taken: false, running: active }),
                (Some("then"), Some(frame)) => {
                    frame.running = frame.outer && !frame.taken && self.status == 0;
                    frame.taken |= frame.running;
                }
                (Some("elif"), Some(frame)) => frame.running = frame.outer && !frame.taken,
                (Some("else"), Some(frame)) => {
                    frame.running = frame.outer && !frame.taken;
                    frame.taken = true;
                }
                (Some("fi"), Some(frame)) => {
                    if frame.outer && !frame.taken {
                        self.status = 0;
                    }
                    frames.pop();
                }
                _ => {}
            }
            let words = if keyword.is_some() { &words[1..] } else { &words[..] };
            let running = frames.last().is_none_or(|f| f.running);
            let runs = running
                && !words.is_empty()
                && match link {
                    Link::Then | Link::Pipe => true,
                    Link::And => self.status == 0,
                    Link::Or => self.status != 0,
                };
            if runs {
                let mut expanded = Vec::with_capacity(words.len());
                for word in words {
                    expanded.push(self.expand(word));
                }
                let printed_before = self.stdout.len();
                self.command(&expanded);
                self.input = (next == Link::Pipe).then(|| self.stdout.split_off(printed_before));
            } else if words.is_empty() {
                // A keyword alone (`fi`, `else`) keeps the link before it.
                if self.stopped() {
                    return;
                }
                continue;
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
        match &redirect.stdout {
            Target::Keep => self.stdout.push_str(&printed),
            Target::Other => self.stderr.push_str(&printed),
            Target::Discard => {}
            Target::File { path, append } => self.write_file(path, &printed, *append),
        }
        match &redirect.stderr {
            Target::Keep => self.stderr.push_str(&errors),
            Target::Other => self.stdout.push_str(&errors),
            Target::Discard => {}
            Target::File { path, append } => self.write_file(path, &errors, *append),
        }
    }

    /// A redirection into a file (`> /tmp/x`, `>> log`).
    fn write_file(&mut self, path: &str, content: &str, append: bool) {
        let Some(files) = self.files.as_deref_mut() else { return };
        if let Err(reason) = files.write(path, content, append) {
            self.stderr.push_str(&format!("sh: {reason}\n"));
            self.status = 1;
        }
    }

    /// The file commands, when the container's files are known; `false` when `name` is not
    /// one of them (or there are no files).
    fn file_command(&mut self, name: &str, args: &[String]) -> bool {
        let Some(files) = self.files.as_deref_mut() else { return false };
        let (flags, operands): (Vec<&String>, Vec<&String>) =
            args.iter().partition(|a| a.starts_with('-') && a.len() > 1);
        let has_flag = |c: char| flags.iter().any(|f| !f.starts_with("--") && f.contains(c));
        let mut out = String::new();
        let mut err = String::new();
        let mut status = 0;
        match name {
            "touch" => {
                for path in &operands {
                    if !files.exists(path)
                        && let Err(reason) = files.write(path, "", true)
                    {
                        err.push_str(&format!("touch: {}\n", reason.replace("can't create ", "")));
                        status = 1;
                    }
                }
            }
            "mkdir" => {
                for path in &operands {
                    if files.exists(path) && !has_flag('p') {
                        err.push_str(&format!("mkdir: can't create directory '{path}': File exists\n"));
                        status = 1;
                    } else {
                        files.make_dir(path);
                    }
                }
            }
            "rm" => {
                for path in &operands {
                    let is_dir = files.is_dir(path);
                    if is_dir && !has_flag('r') && !has_flag('R') {
                        err.push_str(&format!("rm: '{path}' is a directory\n"));
                        status = 1;
                    } else if !files.remove(path) && !has_flag('f') {
                        err.push_str(&format!("rm: can't remove '{path}': No such file or directory\n"));
                        status = 1;
                    }
                }
            }
            "mv" | "cp" => match operands.as_slice() {
                [source, target] => match files.read(source) {
                    Some(content) => {
                        let target = if files.is_dir(target) {
                            let base = source.trim_end_matches('/').rsplit('/').next().unwrap_or(source);
                            format!("{}/{base}", target.trim_end_matches('/'))
                        } else {
                            target.to_string()
                        };
                        match files.write(&target, &content, false) {
                            Ok(()) => {
                                if name == "mv" {
                                    files.remove(source);
                                }
                                if has_flag('v') {
                                    out.push_str(&format!("'{source}' -> '{target}'\n"));
                                }
                            }
                            Err(reason) => {
                                err.push_str(&format!("{name}: {reason}\n"));
                                status = 1;
                            }
                        }
                    }
                    None if files.is_dir(source) => {
                        err.push_str(&format!("{name}: '{source}' is a directory (not copied)\n"));
                        status = 1;
                    }
                    None => {
                        let verb = if name == "mv" { "rename" } else { "stat" };
                        err.push_str(&format!(
                            "{name}: can't {verb} '{source}': No such file or directory\n"
                        ));
                        status = 1;
                    }
                },
                _ => {
                    err.push_str(&format!("BusyBox: {name}: missing operand\n"));
                    status = 1;
                }
            },
            "cat" if !operands.is_empty() && operands.iter().all(|a| a.as_str() != "-") => {
                for path in &operands {
                    match files.read(path) {
                        Some(content) => out.push_str(&content),
                        None => {
                            let why = if files.is_dir(path) {
                                "Is a directory"
                            } else {
                                "No such file or directory"
                            };
                            err.push_str(&format!("cat: read error: '{path}': {why}\n"));
                            status = 1;
                        }
                    }
                }
            }
            "ls" => {
                let operands: Vec<String> = if operands.is_empty() {
                    vec!["/".to_string()]
                } else {
                    operands.iter().map(|o| o.to_string()).collect()
                };
                for path in &operands {
                    if files.is_dir(path) {
                        let base = super::files::normalize(path);
                        let prefix = if base == "/" { "/".to_string() } else { format!("{base}/") };
                        for entry in files.list(path) {
                            if let Some(child) = entry.strip_prefix(&prefix).filter(|c| !c.contains('/')) {
                                out.push_str(&format!("{child}\n"));
                            }
                        }
                    } else if files.is_file(path) {
                        out.push_str(&format!("{path}\n"));
                    } else {
                        err.push_str(&format!("ls: {path}: No such file or directory\n"));
                        status = 1;
                    }
                }
            }
            "find" => {
                for path in operands.iter().filter(|o| !o.starts_with('(')) {
                    if files.exists(path) {
                        out.push_str(&format!("{path}\n"));
                        for entry in files.list(path) {
                            out.push_str(&format!("{entry}\n"));
                        }
                    } else {
                        err.push_str(&format!("find: {path}: No such file or directory\n"));
                        status = 1;
                    }
                }
            }
            "dd" => {
                let operand = |key: &str| {
                    args.iter().find_map(|a| a.strip_prefix(&format!("{key}=")).map(str::to_string))
                };
                let block = operand("bs").and_then(|b| b.parse::<usize>().ok()).unwrap_or(512).min(1 << 20);
                let count = operand("count").and_then(|c| c.parse::<usize>().ok());
                let data = match operand("if").as_deref() {
                    Some("/dev/zero") => Some("\0".repeat(block * count.unwrap_or(1))),
                    Some(path) => files.read(path),
                    None => Some(self.input.take().unwrap_or_default()),
                };
                match data {
                    Some(data) => {
                        let records = data.len().div_ceil(block.max(1));
                        match operand("of") {
                            Some(path) => {
                                if let Err(reason) = files.write(&path, &data, false) {
                                    err.push_str(&format!("dd: {reason}\n"));
                                    status = 1;
                                }
                            }
                            None => out.push_str(&data),
                        }
                        if status == 0 {
                            err.push_str(&format!(
                                "{records}+0 records in\n{records}+0 records out\n{} bytes copied\n",
                                data.len()
                            ));
                        }
                    }
                    None => {
                        err.push_str("dd: can't open input: No such file or directory\n");
                        status = 1;
                    }
                }
            }
            "tee" => {
                let data = self.input.take().unwrap_or_default();
                for path in &operands {
                    if let Err(reason) = files.write(path, &data, has_flag('a')) {
                        err.push_str(&format!("tee: {reason}\n"));
                        status = 1;
                    }
                }
                out.push_str(&data);
            }
            "test" | "[" => {
                let mut words: Vec<&str> = args.iter().map(String::as_str).collect();
                if name == "[" && words.last() == Some(&"]") {
                    words.pop();
                }
                let (negate, words) = match words.split_first() {
                    Some((&"!", rest)) => (true, rest.to_vec()),
                    _ => (false, words),
                };
                let truth = match words.as_slice() {
                    [] => false,
                    [word] => !word.is_empty(),
                    ["-f", path] => files.is_file(path),
                    ["-d", path] => files.is_dir(path),
                    ["-e" | "-a", path] => files.exists(path),
                    ["-s", path] => files.read(path).is_some_and(|c| !c.is_empty()),
                    ["-r" | "-w" | "-x", path] => files.exists(path),
                    ["-z", text] => text.is_empty(),
                    ["-n", text] => !text.is_empty(),
                    [a, "=" | "==", b] => a == b,
                    [a, "!=", b] => a != b,
                    [a, op @ ("-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"), b] => {
                        match (a.trim().parse::<i64>(), b.trim().parse::<i64>()) {
                            (Ok(a), Ok(b)) => match *op {
                                "-eq" => a == b,
                                "-ne" => a != b,
                                "-lt" => a < b,
                                "-le" => a <= b,
                                "-gt" => a > b,
                                _ => a >= b,
                            },
                            _ => {
                                err.push_str(&format!("sh: {name}: bad number\n"));
                                false
                            }
                        }
                    }
                    _ => true,
                };
                status = i32::from(truth == negate);
            }
            _ => return false,
        }
        self.stdout.push_str(&out);
        self.stderr.push_str(&err);
        self.status = status;
        true
    }

    fn simple(&mut self, argv: &[String]) {
        let Some(program) = argv.first() else { return };
        let name = program.rsplit('/').next().unwrap_or(program).to_string();
        let args = &argv[1..];
        if self.file_command(&name, args) {
            return;
        }
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
            "hostname" if !self.context.hostname.is_empty() => {
                self.stdout.push_str(&format!("{}\n", self.context.hostname));
                self.status = 0;
            }
            "read" | "cat" if self.input.is_some() => {
                let input = self.input.take().unwrap_or_default();
                if name == "cat" {
                    self.stdout.push_str(&input);
                    self.status = 0;
                } else {
                    self.status = i32::from(input.is_empty());
                }
            }
            "grep" if self.input.is_some() => {
                let input = self.input.take().unwrap_or_default();
                let pattern = args.iter().find(|a| !a.starts_with('-')).cloned().unwrap_or_default();
                let matched: Vec<&str> = input.lines().filter(|l| l.contains(pattern.as_str())).collect();
                for line in &matched {
                    self.stdout.push_str(&format!("{line}\n"));
                }
                self.status = i32::from(matched.is_empty());
            }
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum Target {
    /// Where it goes anyway.
    #[default]
    Keep,
    /// To the other stream (`>&2`, `2>&1`).
    Other,
    /// Nowhere (`>/dev/null`).
    Discard,
    /// Into a file (`> /tmp/x`; `>>` appends).
    File { path: String, append: bool },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
        let append = rest.starts_with('>');
        let rest = rest.trim_start_matches('>');
        let path = match rest {
            "&2" | "&1" => {
                *stream = Target::Other;
                continue;
            }
            "" => iter.next().cloned().unwrap_or_default(),
            path => path.to_string(),
        };
        *stream = match path.as_str() {
            "/dev/null" | "" => Target::Discard,
            "/dev/stderr" => Target::Other,
            _ => Target::File { path, append },
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
            Context { env: BTreeMap::from([("NAME".to_string(), "web".to_string())]), ..Default::default() };
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

    #[test]
    fn file_commands_act_on_the_container_files() {
        use crate::nodes::files::Mount;
        let disk = format!("pvc/shell-test/datadir-{:?}", std::thread::current().id());
        let mounts = || vec![Mount { path: "/data".into(), disk: disk.clone() }];
        let mut files = ContainerFiles::new("registry.k8s.io/e2e-test-images/nginx:1.14-4", mounts());
        let context = Context { hostname: "ss-0".into(), ..Context::default() };
        let sh = |files: &mut ContainerFiles, script: &str| {
            run_with_files(&argv(&["/bin/sh", "-c", script]), Mode::Exec, &context, files)
        };
        // (script, exit code, stdout)
        let cases: &[(&str, i32, &str)] = &[
            ("test -f /data/statefulset-continue", 1, ""),
            ("dd if=/dev/zero of=/data/statefulset-continue bs=1 count=1 conv=fsync", 0, ""),
            ("test -f /data/statefulset-continue", 0, ""),
            ("[ -d /data ] && [ ! -f /data ]", 0, ""),
            ("printf $(hostname)", 0, "ss-0"),
            ("echo $(hostname) | dd of=/data/hostname conv=fsync", 0, ""),
            ("cat /data/hostname", 0, "ss-0\n"),
            ("if [ \"$(cat /data/hostname)\" = \"$(hostname)\" ]; then exit 0; else exit 1; fi", 0, ""),
            ("if [ \"$(cat /data/missing)\" = \"$(hostname)\" ]; then exit 0; else exit 1; fi", 1, ""),
            (
                "mv -v /usr/share/nginx/html/index.html /tmp/ || true",
                0,
                "'/usr/share/nginx/html/index.html' -> '/tmp/index.html'\n",
            ),
            ("test -f /usr/share/nginx/html/index.html", 1, ""),
            ("mv -v /usr/share/nginx/html/index.html /tmp/ || true", 0, ""),
            ("mv /usr/share/nginx/html/index.html /tmp/", 1, ""),
            (
                "mv -v /tmp/index.html /usr/share/nginx/html/ || true",
                0,
                "'/tmp/index.html' -> '/usr/share/nginx/html/index.html'\n",
            ),
            ("touch /data/1 && ls /data", 0, "1\nhostname\nstatefulset-continue\n"),
            ("find /data", 0, "/data\n/data/1\n/data/hostname\n/data/statefulset-continue\n"),
            ("echo ok > /tmp/ready; cat /tmp/ready", 0, "ok\n"),
            ("echo more >> /tmp/ready; cat /tmp/ready | grep more", 0, "more\n"),
            ("rm /tmp/ready && cat /tmp/ready", 1, ""),
            ("touch /nowhere/x", 1, ""),
            ("ls sdfewasf", 1, ""),
            (
                "ls /",
                0,
                "bin\ndata\ndev\netc\nhome\nmnt\nopt\nproc\nroot\nrun\nsbin\nsrv\nsys\ntmp\nusr\nvar\n",
            ),
        ];
        for (script, code, stdout) in cases {
            let outcome = sh(&mut files, script);
            assert_eq!(
                (outcome.exit_code, outcome.stdout.as_str()),
                (*code, *stdout),
                "{script}: {}",
                outcome.stderr
            );
        }
        // The claim's files outlive the container; its own files do not.
        let mut next = ContainerFiles::new("registry.k8s.io/e2e-test-images/nginx:1.14-4", mounts());
        assert_eq!(sh(&mut next, "cat /data/hostname").stdout, "ss-0\n");
        assert_eq!(sh(&mut next, "test -f /tmp/index.html").exit_code, 1);
        crate::nodes::files::forget_disk(&disk);
    }
}
