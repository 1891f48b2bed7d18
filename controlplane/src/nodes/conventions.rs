//! The test conventions of simulated containers: environment variables in a container's spec
//! that tell the simulated kubelet how the "process" behaves (exit after a while, never become
//! ready, take long to pull or to stop), and the node annotation that makes a node NotReady.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::api::core::v1::Container;

use super::shell;

/// `KRUISE_SIM_EXIT_AFTER=<duration>`: the container exits this long after it started.
pub const ENV_EXIT_AFTER: &str = "KRUISE_SIM_EXIT_AFTER";
/// `KRUISE_SIM_EXIT_CODE=<n>`: the exit code when it exits (default 0).
pub const ENV_EXIT_CODE: &str = "KRUISE_SIM_EXIT_CODE";
/// `KRUISE_SIM_READY=false`: the container never becomes ready.
pub const ENV_READY: &str = "KRUISE_SIM_READY";
/// `KRUISE_SIM_PULL_SECONDS=<seconds>`: the first pull of this container's image takes this long.
pub const ENV_PULL_SECONDS: &str = "KRUISE_SIM_PULL_SECONDS";
/// `KRUISE_SIM_TERM_SECONDS=<seconds>`: the process needs this long to exit after SIGTERM
/// (capped by the grace period; default 0).
pub const ENV_TERM_SECONDS: &str = "KRUISE_SIM_TERM_SECONDS";
/// `KRUISE_SIM_EXEC_EXIT=<n>`: every exec (and exec probe) in the container exits with n.
pub const ENV_EXEC_EXIT: &str = "KRUISE_SIM_EXEC_EXIT";
/// Node annotation: `"false"` makes the node's kubelet report `Ready=False` (as when its
/// container runtime is down) and stop syncing pods, until removed or set to `"true"`.
pub const ANNOTATION_NODE_READY: &str = "sim.kruise.io/ready";

/// Marker in an image reference that sets its first pull time on every node:
/// `registry.example/app:v1-slow-pull-2s` takes 2 s to pull the first time (the duration runs to
/// the next `-`, `/`, `:` or `@`, or to the end). Unlike [`ENV_PULL_SECONDS`], which only the
/// kubelet reads from a pod, this applies to every pull, CRI `PullImage` from the node daemon
/// included, so image pre-pull tests can make pulls slow enough to observe.
pub const SLOW_PULL_MARKER: &str = "slow-pull-";

/// The first pull time an image reference asks for with [`SLOW_PULL_MARKER`], if any.
pub fn reference_pull_time(reference: &str) -> Option<Duration> {
    let start = reference.find(SLOW_PULL_MARKER)? + SLOW_PULL_MARKER.len();
    let rest = &reference[start..];
    let end = rest.find(['-', '/', ':', '@']).unwrap_or(rest.len());
    parse_duration(&rest[..end])
}

/// How a simulated container behaves, from its environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Behaviour {
    /// Exit this long after starting, with this code.
    pub exit: Option<(Duration, i32)>,
    /// False when it never becomes ready.
    pub can_be_ready: bool,
    /// First pull time of its image, when set.
    pub pull_time: Option<Duration>,
    /// Time to exit after SIGTERM.
    pub term_time: Duration,
}

/// Parses `90`, `1.5`, `250ms`, `2s`, `3m`, `1h` (plain numbers are seconds).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(index) => text.split_at(index),
        None => (text, "s"),
    };
    let value: f64 = number.trim().parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return None,
    };
    Some(Duration::from_secs_f64(seconds))
}

/// The literal environment of a container (values only; references are resolved by the kubelet).
pub fn literal_env(container: &Container) -> BTreeMap<String, String> {
    container
        .env
        .iter()
        .flatten()
        .filter_map(|var| var.value.as_ref().map(|value| (var.name.clone(), value.clone())))
        .collect()
}

/// The behaviour a container's environment asks for.
pub fn behaviour(env: &BTreeMap<String, String>) -> Behaviour {
    let exit_code = env.get(ENV_EXIT_CODE).and_then(|code| code.trim().parse().ok()).unwrap_or(0);
    Behaviour {
        exit: env.get(ENV_EXIT_AFTER).and_then(|d| parse_duration(d)).map(|after| (after, exit_code)),
        can_be_ready: env.get(ENV_READY).is_none_or(|ready| !ready.trim().eq_ignore_ascii_case("false")),
        pull_time: env.get(ENV_PULL_SECONDS).and_then(|d| parse_duration(d)),
        term_time: env.get(ENV_TERM_SECONDS).and_then(|d| parse_duration(d)).unwrap_or_default(),
    }
}

/// How long a preStop hook runs: a `sleep` action's seconds, or an exec hook of the form
/// `sleep N` (also through `sh -c`); other hooks finish at once.
pub fn pre_stop_duration(container: &Container) -> Duration {
    let Some(pre_stop) = container.lifecycle.as_ref().and_then(|l| l.pre_stop.as_ref()) else {
        return Duration::ZERO;
    };
    if let Some(sleep) = &pre_stop.sleep {
        return Duration::from_secs(sleep.seconds.max(0) as u64);
    }
    let command = pre_stop.exec.as_ref().and_then(|e| e.command.clone()).unwrap_or_default();
    exec_duration(&command)
}

/// What "never ends" is cut to where a duration is needed (a year): an exec or hook that
/// blocks forever is bounded by a timeout or grace period long before.
pub const FOREVER: Duration = Duration::from_secs(365 * 24 * 3600);

/// How long an exec runs in a simulated container, by the simulated shell
/// ([`super::shell`]): `sleep N` (also inside `sh -c "..."`) takes N, `tail -f` runs
/// [`FOREVER`]; anything else returns at once.
pub fn exec_duration(command: &[String]) -> Duration {
    shell::run(command, shell::Mode::Exec, &shell::Context::default()).runs_for.unwrap_or(FOREVER)
}

/// The program a container runs: its `command` with `args`, or its `args` alone (an image
/// without an entrypoint, as busybox); empty when it runs the image's own default.
pub fn process_argv(container: &Container) -> Vec<String> {
    let command = container.command.clone().unwrap_or_default();
    let args = container.args.clone().unwrap_or_default();
    command.into_iter().chain(args).collect()
}

/// When and how a container's own process exits by itself, from its command (`sh -c "sleep
/// 10; exit 1"` exits with 1 after 10 s, `true` at once with 0; a server or the image's
/// default command never does): `None` when it runs until stopped.
pub fn process_exit(container: &Container, env: &BTreeMap<String, String>) -> Option<(Duration, i32)> {
    let outcome = process_outcome(container, env)?;
    outcome.runs_for.map(|after| (after, outcome.exit_code))
}

/// The default command of images whose default is a shell (`busybox`, `alpine`: `sh`), which
/// a container without a command runs; empty for the other images, whose default is taken for
/// a server that runs until stopped.
pub fn image_default_argv(image: &str) -> Vec<String> {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    match last.split(':').next().unwrap_or(last) {
        "busybox" | "alpine" => vec!["sh".to_string()],
        _ => Vec::new(),
    }
}

/// What a container's own process does by the simulated shell (how long it runs, its exit
/// code, what it prints); `None` when it runs an image's own server. A container without a
/// command runs its image's default: busybox's `sh` without standard input exits at once
/// (and restarts, per the restart policy, as on a real node).
pub fn process_outcome(container: &Container, env: &BTreeMap<String, String>) -> Option<shell::Outcome> {
    let mut argv = process_argv(container);
    if argv.is_empty() {
        argv = image_default_argv(container.image.as_deref().unwrap_or_default());
    }
    if argv.is_empty() {
        return None;
    }
    let context =
        shell::Context { env: env.clone(), stdin: container.stdin.unwrap_or(false), ..Default::default() };
    Some(shell::run(&argv, shell::Mode::Main, &context))
}

/// The exit code a container gets when the runtime cannot start its process (containerd's
/// `StartError`).
pub const START_ERROR_CODE: i32 = 128;

/// What an ephemeral container's process does: as [`process_outcome`], but on the container's
/// own `files` (a debug command such as `ls /missing` fails as on a node), and on an image whose
/// contents are known (a shell image: busybox, alpine) a bare program the simulated shell does
/// not know cannot be started: it exits at once with [`START_ERROR_CODE`] and the runtime's
/// message (a real node reports `StartError`). `None` when it runs an image's own server.
pub fn ephemeral_outcome(
    container: &Container,
    env: &BTreeMap<String, String>,
    files: &mut super::files::ContainerFiles,
) -> Option<shell::Outcome> {
    let mut argv = process_argv(container);
    let image = container.image.as_deref().unwrap_or_default();
    if argv.is_empty() {
        argv = image_default_argv(image);
    }
    let program = argv.first()?;
    if !image_default_argv(image).is_empty() && !program.contains('/') && !shell::knows(program) {
        return Some(shell::Outcome {
            runs_for: Some(Duration::ZERO),
            exit_code: START_ERROR_CODE,
            stdout: String::new(),
            stderr: format!(
                "failed to create containerd task: failed to create shim task: OCI runtime create failed: \
                 runc create failed: unable to start container process: exec: {program:?}: executable file \
                 not found in $PATH: unknown"
            ),
        });
    }
    let context =
        shell::Context { env: env.clone(), stdin: container.stdin.unwrap_or(false), ..Default::default() };
    Some(shell::run_with_files(&argv, shell::Mode::Main, &context, files))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{EnvVar, ExecAction, Lifecycle, LifecycleHandler, SleepAction};

    use super::*;

    #[test]
    fn durations_parse_with_and_without_units() {
        let cases = [
            ("90", Some(Duration::from_secs(90))),
            ("1.5", Some(Duration::from_millis(1500))),
            ("250ms", Some(Duration::from_millis(250))),
            ("2s", Some(Duration::from_secs(2))),
            ("3m", Some(Duration::from_secs(180))),
            ("1h", Some(Duration::from_secs(3600))),
            ("-1", None),
            ("soon", None),
            ("5d", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_duration(text), expected, "{text}");
        }
    }

    #[test]
    fn slow_pull_marker_in_the_reference() {
        let cases = [
            ("registry.example/app:v1-slow-pull-2s", Some(Duration::from_secs(2))),
            ("registry.example/app:slow-pull-1.5", Some(Duration::from_millis(1500))),
            ("registry.example/slow-pull-250ms/app:v1", Some(Duration::from_millis(250))),
            ("registry.example/app:slow-pull-3s-extra", Some(Duration::from_secs(3))),
            ("registry.example/app:slow-pull-soon", None),
            ("nginx:1.25", None),
        ];
        for (reference, expected) in cases {
            assert_eq!(reference_pull_time(reference), expected, "{reference}");
        }
    }

    #[test]
    fn behaviour_comes_from_the_environment() {
        let env =
            |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(behaviour(&env(&[])), Behaviour { can_be_ready: true, ..Behaviour::default() });
        let job = behaviour(&env(&[(ENV_EXIT_AFTER, "2s"), (ENV_EXIT_CODE, "3")]));
        assert_eq!(job.exit, Some((Duration::from_secs(2), 3)));
        assert!(!behaviour(&env(&[(ENV_READY, "False")])).can_be_ready);
        assert_eq!(behaviour(&env(&[(ENV_PULL_SECONDS, "4")])).pull_time, Some(Duration::from_secs(4)));
        assert_eq!(behaviour(&env(&[(ENV_TERM_SECONDS, "10")])).term_time, Duration::from_secs(10));
        assert_eq!(behaviour(&env(&[(ENV_EXIT_CODE, "1")])).exit, None, "a code alone does not exit");
    }

    #[test]
    fn shell_images_run_their_shell_by_default() {
        let with = |image: &str, command: &[&str]| Container {
            name: "c".into(),
            image: Some(image.into()),
            command: (!command.is_empty()).then(|| command.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        };
        let env = BTreeMap::new();
        let cases = [
            ("busybox:1.36", &[][..], Some((Duration::ZERO, 0))),
            ("registry.k8s.io/e2e-test-images/busybox:1.36.1-1", &[][..], Some((Duration::ZERO, 0))),
            ("alpine", &[][..], Some((Duration::ZERO, 0))),
            ("busybox:1.36", &["sleep", "3600"][..], Some((Duration::from_secs(3600), 0))),
            ("nginx:1.25", &[][..], None),
            ("redis:7", &[][..], None),
        ];
        for (image, command, expected) in cases {
            assert_eq!(process_exit(&with(image, command), &env), expected, "{image} {command:?}");
        }
        let interactive = Container { stdin: Some(true), ..with("busybox", &[]) };
        assert_eq!(process_exit(&interactive, &env), None, "sh with stdin open waits for it");
    }

    #[test]
    fn processes_exit_by_their_command() {
        let with = |command: &[&str], args: &[&str], stdin: bool| Container {
            name: "c".into(),
            command: (!command.is_empty()).then(|| command.iter().map(|s| s.to_string()).collect()),
            args: (!args.is_empty()).then(|| args.iter().map(|s| s.to_string()).collect()),
            stdin: Some(stdin),
            ..Default::default()
        };
        let env = BTreeMap::new();
        type Case<'a> = (&'a [&'a str], &'a [&'a str], bool, Option<(Duration, i32)>);
        let cases: &[Case] = &[
            (&[], &[], false, None),
            (&["/bin/sh", "-c"], &["sleep 2; exit 1"], false, Some((Duration::from_secs(2), 1))),
            (&[], &["sh", "-c", "exit 0"], false, Some((Duration::ZERO, 0))),
            (&["/bin/sh", "-c", "sleep 10000000"], &[], false, Some((Duration::from_secs(10_000_000), 0))),
            (&["/bin/bash", "-c", "read -p wait"], &[], true, None),
            (&["/bin/bash", "-c", "read -p wait"], &[], false, Some((Duration::ZERO, 1))),
            (&["tail", "-f", "/dev/null"], &[], false, None),
            (&["false"], &[], false, Some((Duration::ZERO, 1))),
        ];
        for (command, args, stdin, expected) in cases {
            assert_eq!(process_exit(&with(command, args, *stdin), &env), *expected, "{command:?} {args:?}");
        }
        assert_eq!(exec_duration(&["tail".into(), "-f".into(), "/dev/null".into()]), FOREVER);
    }

    #[test]
    fn pre_stop_hooks_take_their_sleep() {
        let with = |handler: LifecycleHandler| Container {
            name: "c".into(),
            lifecycle: Some(Lifecycle { pre_stop: Some(handler), ..Default::default() }),
            env: Some(vec![EnvVar { name: "A".into(), value: Some("1".into()), ..Default::default() }]),
            ..Default::default()
        };
        let sleep = with(LifecycleHandler { sleep: Some(SleepAction { seconds: 7 }), ..Default::default() });
        assert_eq!(pre_stop_duration(&sleep), Duration::from_secs(7));
        let exec = |command: &[&str]| {
            with(LifecycleHandler {
                exec: Some(ExecAction { command: Some(command.iter().map(|s| s.to_string()).collect()) }),
                ..Default::default()
            })
        };
        assert_eq!(pre_stop_duration(&exec(&["sleep", "3"])), Duration::from_secs(3));
        assert_eq!(pre_stop_duration(&exec(&["sh", "-c", "nginx -s quit; sleep 5"])), Duration::from_secs(5));
        assert_eq!(pre_stop_duration(&exec(&["/bin/drain"])), Duration::ZERO);
        assert_eq!(pre_stop_duration(&Container::default()), Duration::ZERO);
        assert_eq!(literal_env(&sleep).get("A").map(String::as_str), Some("1"));
    }
}
