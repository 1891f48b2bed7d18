//! One pod on a simulated node, driven like the kubelet's pod worker: create the sandbox, run
//! init containers in order, pull images and start containers, follow probes and the test
//! conventions, restart containers per `restartPolicy`, restart only the changed container when
//! its image changes, apply `pods/resize`, and on deletion run preStop hooks within the grace
//! period before removing the pod. Status goes to the API after every step.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{
    api::core::v1::{
        Container, HostIP, LifecycleHandler, Pod, PodCondition, PodIP, ResourceRequirements, Secret,
    },
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::Timestamp,
};
use kube::{
    Api,
    api::{DeleteParams, PostParams, Preconditions},
};
use serde_json::Value;
use tokio::{
    sync::{broadcast, watch},
    time::Instant,
};

use super::{
    admission::Rejection,
    conventions::{self, Behaviour},
    env, files,
    kubelet::{FIELD_MANAGER, Kubelet},
    pod_status::{self, ContainerRecord, RunState, Termination},
    pull_secrets, resize,
    runtime::{self, ContainerState, Image, PullError, RuntimeEvent, Sandbox},
};

/// A command as Go's `%v` prints a string slice (`[sh -c exit 1]`), as in kubelet messages.
fn go_list(words: &[String]) -> String {
    format!("[{}]", words.join(" "))
}

/// A container incarnation that is running in the runtime.
struct Live {
    runtime_id: String,
    spec: Container,
    behaviour: Behaviour,
    exit_at: Option<(Instant, i32)>,
    ready_at: Option<Instant>,
    started_at_probe: Option<Instant>,
    next_readiness: Option<Instant>,
    next_liveness: Option<Instant>,
    liveness_failures: i32,
    /// Set when the runtime could not start the process (`StartError`, exit code 128).
    start_error: Option<String>,
}

/// One container slot of the pod (init, app or ephemeral).
struct Slot {
    init: bool,
    /// An ephemeral container (`init` is false): it never restarts, has no readiness and does
    /// not count in the pod's phase or conditions.
    ephemeral: bool,
    record: ContainerRecord,
    live: Option<Live>,
    retry_at: Option<Instant>,
    show_backoff_at: Option<Instant>,
    failures: u32,
    done: bool,
}

/// The outcome of getting a container's image.
enum ImageOutcome {
    Ready(Image),
    Failed { reason: &'static str, message: String },
    Interrupted,
}

pub(crate) struct PodWorker {
    kubelet: Arc<Kubelet>,
    pod_rx: watch::Receiver<Option<Arc<Pod>>>,
    written: Option<Arc<Pod>>,
    sandbox: Option<Sandbox>,
    start_time: Option<Timestamp>,
    slots: Vec<Slot>,
    resize_pending: Option<PodCondition>,
    resize_in_progress: Option<PodCondition>,
    events: broadcast::Receiver<RuntimeEvent>,
    terminal: bool,
    adopted: bool,
    suspended: bool,
    /// Set when the kubelet refused the pod at admission: it never runs and reports `Failed`.
    rejection: Option<Rejection>,
}

fn backoff(base: Duration, attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt.min(8));
    (base * factor).min(base * 10)
}

/// When a container finished, from the runtime's exit time in Unix nanoseconds (0 or out of
/// range: not recorded, so `now`).
fn finished_time(runtime_nanos: i64, now: Timestamp) -> Timestamp {
    if runtime_nanos <= 0 {
        return now;
    }
    Timestamp::from_nanosecond(i128::from(runtime_nanos)).unwrap_or(now)
}

fn rv(pod: &Pod) -> u64 {
    pod.metadata.resource_version.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn field_path(init: bool, name: &str) -> String {
    format!("spec.{}{{{name}}}", if init { "initContainers" } else { "containers" })
}

/// The field path of a slot's container, as the kubelet's events name it.
fn slot_path(slot: &Slot) -> String {
    if slot.ephemeral {
        format!("spec.ephemeralContainers{{{}}}", slot.record.name)
    } else {
        field_path(slot.init, &slot.record.name)
    }
}

impl Slot {
    /// A regular (app) container.
    fn is_app(&self) -> bool {
        !self.init && !self.ephemeral
    }
}

/// A pod's ephemeral containers as the containers the kubelet runs (the common part).
fn ephemeral_containers(spec: &k8s_openapi::api::core::v1::PodSpec) -> Vec<Container> {
    spec.ephemeral_containers
        .iter()
        .flatten()
        .filter_map(|ephemeral| {
            let mut common = serde_json::to_value(ephemeral).ok()?;
            common.as_object_mut()?.remove("targetContainerName");
            serde_json::from_value(common).ok()
        })
        .collect()
}

fn is_sidecar(container: &Container) -> bool {
    container.restart_policy.as_deref() == Some("Always")
}

fn probe_delay(probe: Option<&k8s_openapi::api::core::v1::Probe>) -> Duration {
    Duration::from_secs(probe.and_then(|p| p.initial_delay_seconds).unwrap_or(0).max(0) as u64)
}

fn probe_period(probe: &k8s_openapi::api::core::v1::Probe) -> Duration {
    Duration::from_secs(probe.period_seconds.unwrap_or(10).max(1) as u64)
}

/// Whether the kubelet runs a probe every period and follows its answer: exec and HTTP probes
/// (an HTTP probe fails once the page is gone); TCP and gRPC probes pass once started.
fn periodic(probe: &k8s_openapi::api::core::v1::Probe) -> bool {
    probe.exec.as_ref().is_some_and(|e| e.command.is_some()) || probe.http_get.is_some()
}

fn resources_differ(
    applied: Option<&ResourceRequirements>,
    wanted: Option<&ResourceRequirements>,
) -> Vec<String> {
    let empty = ResourceRequirements::default();
    let (a, w) = (applied.unwrap_or(&empty), wanted.unwrap_or(&empty));
    let mut changed = Vec::new();
    for (old, new) in [(&a.requests, &w.requests), (&a.limits, &w.limits)] {
        let (old, new) = (old.clone().unwrap_or_default(), new.clone().unwrap_or_default());
        for name in old.keys().chain(new.keys()) {
            let equal = match (old.get(name), new.get(name)) {
                (Some(x), Some(y)) => {
                    kruise_machinery::quantity::Quantity::compare(&x.0, &y.0)
                        == Some(std::cmp::Ordering::Equal)
                }
                (None, None) => true,
                _ => false,
            };
            if !equal && !changed.contains(name) {
                changed.push(name.clone());
            }
        }
    }
    changed
}

impl PodWorker {
    /// A worker for one pod; `rejection` when the kubelet refused it at admission.
    pub(crate) fn new(
        kubelet: Arc<Kubelet>,
        pod_rx: watch::Receiver<Option<Arc<Pod>>>,
        rejection: Option<Rejection>,
    ) -> Self {
        let events = kubelet.runtime.subscribe();
        Self {
            kubelet,
            pod_rx,
            written: None,
            sandbox: None,
            start_time: None,
            slots: Vec::new(),
            resize_pending: None,
            resize_in_progress: None,
            events,
            terminal: rejection.is_some(),
            adopted: false,
            suspended: false,
            rejection,
        }
    }

    fn watched(&self) -> Option<Arc<Pod>> {
        self.pod_rx.borrow().clone()
    }

    /// The newest copy of the pod: the watched one or the one our last write returned.
    fn newest(&self) -> Option<Arc<Pod>> {
        let watched = self.watched()?;
        match &self.written {
            Some(written) if rv(written) > rv(&watched) && written.metadata.uid == watched.metadata.uid => {
                Some(written.clone())
            }
            _ => Some(watched),
        }
    }

    pub(crate) async fn run(mut self) {
        loop {
            let Some(pod) = self.watched() else {
                self.cleanup();
                return;
            };
            if !self.kubelet.is_ready() {
                self.suspend().await;
                let mut ready = self.kubelet.ready.clone();
                tokio::select! {
                    _ = ready.wait_for(|ready| *ready) => {}
                    changed = self.pod_rx.changed() => if changed.is_err() { return },
                }
                continue;
            }
            if self.suspended {
                self.resume();
            }
            if let Some(rejection) = self.rejection.as_ref().filter(|_| !self.adopted) {
                self.kubelet.event(&pod, None, true, &rejection.reason, rejection.message.clone());
            }
            if !self.adopted {
                self.adopt(&pod);
            }
            if pod.metadata.deletion_timestamp.is_some() {
                self.terminate().await;
                return;
            }
            if !self.terminal && terminal_phase(&pod).is_some() {
                // Set Failed (or Succeeded) by someone else: the kubelet tears the pod down and
                // keeps that phase.
                if !self.stop_all().await {
                    return;
                }
            }
            self.sync(&pod).await;
            self.publish().await;
            if !self.wait().await {
                return;
            }
        }
    }

    /// The node went NotReady (its runtime is "down"): no container can be trusted to serve, so
    /// the pod is reported with every container unready, once, and then left alone.
    async fn suspend(&mut self) {
        if self.suspended {
            return;
        }
        self.suspended = true;
        for slot in &mut self.slots {
            slot.record.ready = false;
        }
        self.publish().await;
    }

    /// The node is Ready again: readiness is established anew (probes run again).
    fn resume(&mut self) {
        self.suspended = false;
        let now = Instant::now();
        for slot in &mut self.slots {
            if let Some(live) = slot.live.as_mut() {
                if live.next_readiness.is_some() {
                    live.next_readiness = Some(now);
                } else if (!slot.init && !slot.ephemeral) || (slot.init && is_sidecar(&live.spec)) {
                    live.ready_at = Some(now);
                }
            }
        }
    }

    /// Waits for something to do; false when the kubelet stopped.
    async fn wait(&mut self) -> bool {
        let next = self.next_deadline();
        let mut ready = self.kubelet.ready.clone();
        tokio::select! {
            changed = self.pod_rx.changed() => changed.is_ok(),
            event = self.events.recv() => {
                match event {
                    Ok(RuntimeEvent::ContainerStopped { id }) => self.on_stopped(&id),
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => self.check_runtime(),
                    Err(broadcast::error::RecvError::Closed) => return false,
                }
                true
            }
            _ = ready.changed() => true,
            _ = async {
                match next {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => true,
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        let mut times: Vec<Instant> = Vec::new();
        for slot in &self.slots {
            times.extend(slot.retry_at);
            times.extend(slot.show_backoff_at);
            if let Some(live) = &slot.live {
                times.extend(live.exit_at.map(|(at, _)| at));
                times.extend(live.ready_at);
                times.extend(live.started_at_probe);
                times.extend(live.next_readiness);
                times.extend(live.next_liveness);
            }
        }
        times.into_iter().min()
    }

    fn pod_label(pod: &Pod) -> String {
        format!(
            "{}_{}({})",
            pod.metadata.name.as_deref().unwrap_or_default(),
            pod.metadata.namespace.as_deref().unwrap_or_default(),
            pod.metadata.uid.as_deref().unwrap_or_default()
        )
    }

    fn slot_index(&mut self, init: bool, container: &Container) -> usize {
        if let Some(index) =
            self.slots.iter().position(|s| s.init == init && !s.ephemeral && s.record.name == container.name)
        {
            return index;
        }
        let waiting = if init || self.slots.iter().all(|s| !s.init || s.done || s.record.is_running()) {
            "ContainerCreating"
        } else {
            "PodInitializing"
        };
        self.slots.push(Slot {
            init,
            ephemeral: false,
            record: ContainerRecord::waiting(
                &container.name,
                &container.image.clone().unwrap_or_default(),
                waiting,
            ),
            live: None,
            retry_at: None,
            show_backoff_at: None,
            failures: 0,
            done: false,
        });
        self.slots.len() - 1
    }

    /// The slot of an ephemeral container, made (waiting in `ContainerCreating`) when new.
    fn ephemeral_slot_index(&mut self, container: &Container) -> usize {
        if let Some(index) = self.slots.iter().position(|s| s.ephemeral && s.record.name == container.name) {
            return index;
        }
        self.slots.push(Slot {
            init: false,
            ephemeral: true,
            record: ContainerRecord::waiting(
                &container.name,
                &container.image.clone().unwrap_or_default(),
                "ContainerCreating",
            ),
            live: None,
            retry_at: None,
            show_backoff_at: None,
            failures: 0,
            done: false,
        });
        self.slots.len() - 1
    }

    /// After a kubelet restart: takes over the containers the pod's status says are running, so
    /// that nothing restarts.
    fn adopt(&mut self, pod: &Pod) {
        self.adopted = true;
        let Some(status) = &pod.status else { return };
        let (Some(uid), Some(ip)) = (pod.metadata.uid.clone(), status.pod_ip.clone()) else { return };
        if self.kubelet.runtime.sandboxes().iter().any(|s| s.pod_uid == uid) {
            return;
        }
        let has_containers = status.container_statuses.iter().flatten().any(|c| c.container_id.is_some());
        if !has_containers {
            return;
        }
        if let Ok(parsed) = ip.parse() {
            self.kubelet.claim_ip(parsed);
        }
        let sandbox = Sandbox {
            id: format!("{:0>64}", uid.replace('-', "")),
            pod_name: pod.metadata.name.clone().unwrap_or_default(),
            pod_namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            pod_uid: uid.clone(),
            ip,
            ready: true,
            created_at: status.start_time.as_ref().map(|t| t.0.as_nanosecond() as i64).unwrap_or(0),
            labels: pod.metadata.labels.clone().unwrap_or_default(),
        };
        self.kubelet.runtime.restore_sandbox(sandbox.clone());
        self.start_time = status.start_time.as_ref().map(|t| t.0);
        let spec = pod.spec.clone().unwrap_or_default();
        let lists = [
            (
                true,
                false,
                spec.init_containers.clone().unwrap_or_default(),
                status.init_container_statuses.clone().unwrap_or_default(),
            ),
            (false, false, spec.containers.clone(), status.container_statuses.clone().unwrap_or_default()),
            (
                false,
                true,
                ephemeral_containers(&spec),
                status.ephemeral_container_statuses.clone().unwrap_or_default(),
            ),
        ];
        for (init, ephemeral, containers, statuses) in lists {
            for container in containers {
                let Some(api_status) = statuses.iter().find(|s| s.name == container.name) else { continue };
                let index = if ephemeral {
                    self.ephemeral_slot_index(&container)
                } else {
                    self.slot_index(init, &container)
                };
                let slot = &mut self.slots[index];
                slot.record.restart_count = api_status.restart_count;
                slot.record.image = api_status.image.clone();
                slot.record.image_id = Some(api_status.image_id.clone()).filter(|i| !i.is_empty());
                slot.record.container_id = api_status.container_id.clone();
                slot.record.ready = api_status.ready;
                slot.record.started = api_status.started.unwrap_or(false);
                slot.record.resources = api_status.resources.clone();
                slot.record.allocated = api_status.resources.clone();
                let state = api_status.state.clone().unwrap_or_default();
                if let Some(running) = state.running {
                    let started_at = running.started_at.map(|t| t.0).unwrap_or_else(Timestamp::now);
                    let runtime_id = api_status
                        .container_id
                        .as_deref()
                        .and_then(|id| id.split("://").nth(1))
                        .unwrap_or_default()
                        .to_string();
                    let image = self.kubelet.runtime.restore_image(&api_status.image);
                    let literal = conventions::literal_env(&container);
                    self.kubelet.runtime.restore_container(runtime::Container {
                        id: runtime_id.clone(),
                        sandbox_id: sandbox.id.clone(),
                        name: container.name.clone(),
                        image: image.reference.clone(),
                        image_id: image.id.clone(),
                        attempt: api_status.restart_count.max(0) as u32,
                        state: ContainerState::Running,
                        created_at: started_at.as_nanosecond() as i64,
                        started_at: started_at.as_nanosecond() as i64,
                        finished_at: 0,
                        exit_code: 0,
                        reason: String::new(),
                        labels: container_labels(pod, &container.name),
                        annotations: BTreeMap::new(),
                        env: literal.clone(),
                        logs: Vec::new(),
                        restart_pending: false,
                        files: files::ContainerFiles::new(
                            &image.reference,
                            files::mounts_of(pod, &container, &self.kubelet.config.name),
                        ),
                    });
                    let behaviour = conventions::behaviour(&literal);
                    let elapsed = Duration::from_secs_f64(
                        Timestamp::now().duration_since(started_at).as_secs_f64().max(0.0),
                    );
                    let now = Instant::now();
                    slot.record.state = RunState::Running { started_at };
                    slot.live = Some(Live {
                        runtime_id,
                        spec: container.clone(),
                        exit_at: behaviour
                            .exit
                            .map(|(after, code)| (now + after.saturating_sub(elapsed), code)),
                        behaviour,
                        ready_at: None,
                        started_at_probe: None,
                        next_readiness: container
                            .readiness_probe
                            .as_ref()
                            .filter(|p| periodic(p))
                            .map(|_| now),
                        next_liveness: container.liveness_probe.as_ref().filter(|p| periodic(p)).map(|_| now),
                        liveness_failures: 0,
                        start_error: None,
                    });
                } else if let Some(terminated) = state.terminated {
                    slot.record.state = RunState::Terminated(Termination {
                        exit_code: terminated.exit_code,
                        reason: terminated.reason.unwrap_or_default(),
                        started_at: terminated.started_at.map(|t| t.0),
                        finished_at: terminated.finished_at.map(|t| t.0).unwrap_or_else(Timestamp::now),
                        container_id: terminated.container_id,
                    });
                    slot.done = true;
                }
            }
        }
        self.sandbox = Some(sandbox);
        tracing::debug!(pod = %Self::pod_label(pod), "adopted running containers after a kubelet restart");
    }

    async fn sync(&mut self, pod: &Arc<Pod>) {
        if self.terminal {
            return;
        }
        let spec = pod.spec.clone().unwrap_or_default();
        if self.sandbox.is_none() {
            let ip = self.kubelet.allocate_ip().to_string();
            let sandbox = self.kubelet.runtime.ensure_sandbox(
                pod.metadata.namespace.as_deref().unwrap_or_default(),
                pod.metadata.name.as_deref().unwrap_or_default(),
                pod.metadata.uid.as_deref().unwrap_or_default(),
                &ip,
                &pod.metadata.labels.clone().unwrap_or_default(),
            );
            self.sandbox = Some(sandbox);
            self.start_time = Some(Timestamp::now());
            // Report the pod as started (ContainerCreating) before pulling anything.
            for container in spec.init_containers.iter().flatten() {
                self.slot_index(true, container);
            }
            for container in &spec.containers {
                self.slot_index(false, container);
            }
            self.publish().await;
        }
        self.process_timers(pod);
        self.allocate_resize(pod);

        // As the kubelet: ephemeral containers start before init containers are looked at (so
        // a pod stuck in initialization can be debugged), once each: they never restart.
        for container in ephemeral_containers(&spec) {
            let index = self.ephemeral_slot_index(&container);
            self.ensure_running(pod, index, &container).await;
        }

        for container in spec.init_containers.iter().flatten() {
            let index = self.slot_index(true, container);
            if is_sidecar(container) {
                self.ensure_running(pod, index, container).await;
                let slot = &self.slots[index];
                if !(slot.record.is_running() && slot.record.started) {
                    return;
                }
                continue;
            }
            let slot = &self.slots[index];
            if slot.record.succeeded() {
                continue;
            }
            if slot.done || slot.live.is_some() {
                return;
            }
            self.ensure_running(pod, index, container).await;
            return;
        }
        for container in &spec.containers {
            let index = self.slot_index(false, container);
            let changed_image =
                self.slots[index].live.as_ref().is_some_and(|live| live.spec.image != container.image);
            if changed_image {
                self.restart_for_change(pod, index, container, "definition changed").await;
            } else {
                self.ensure_running(pod, index, container).await;
            }
        }
        self.actuate_resize(pod).await;
        let init: Vec<ContainerRecord> =
            self.slots.iter().filter(|s| s.init).map(|s| s.record.clone()).collect();
        let apps: Vec<ContainerRecord> =
            self.slots.iter().filter(|s| s.is_app()).map(|s| s.record.clone()).collect();
        let phase = pod_status::phase(&spec, &init, &apps);
        if matches!(phase, "Succeeded" | "Failed") {
            self.terminal = true;
            self.stop_sidecars();
        }
    }

    fn stop_sidecars(&mut self) {
        for slot in self.slots.iter_mut().filter(|s| s.init) {
            if let Some(live) = slot.live.take() {
                self.kubelet.runtime.exit_container(&live.runtime_id, 0, "Completed");
                slot.record.state = RunState::Terminated(Termination {
                    exit_code: 0,
                    reason: "Completed".into(),
                    started_at: None,
                    finished_at: Timestamp::now(),
                    container_id: slot.record.container_id.clone(),
                });
                slot.record.ready = false;
                slot.done = true;
            }
        }
    }

    async fn ensure_running(&mut self, pod: &Arc<Pod>, index: usize, container: &Container) {
        let slot = &self.slots[index];
        if slot.live.is_some() || slot.done {
            return;
        }
        if slot.retry_at.is_some_and(|at| at > Instant::now()) {
            return;
        }
        self.start(pod, index, container).await;
    }

    async fn start(&mut self, pod: &Arc<Pod>, index: usize, container: &Container) {
        let init = self.slots[index].init;
        let ephemeral = self.slots[index].ephemeral;
        let path = Some(slot_path(&self.slots[index]));
        self.slots[index].retry_at = None;
        self.slots[index].show_backoff_at = None;
        let image = match self.image_for(pod, container, path.clone()).await {
            ImageOutcome::Ready(image) => image,
            ImageOutcome::Interrupted => return,
            ImageOutcome::Failed { reason, message } => {
                let slot = &mut self.slots[index];
                slot.failures += 1;
                slot.record.state = RunState::Waiting { reason: reason.into(), message: Some(message) };
                let wait = backoff(self.kubelet.config.timing.pull_backoff, slot.failures - 1);
                slot.retry_at = Some(Instant::now() + wait);
                slot.show_backoff_at = Some(Instant::now() + (wait / 2).min(Duration::from_millis(300)));
                return;
            }
        };
        let sandbox = match &self.sandbox {
            Some(sandbox) => sandbox.clone(),
            None => return,
        };
        let host_ip = self.kubelet.host_ip();
        let environment =
            match env::resolve(&self.kubelet.client, pod, container, &host_ip, &sandbox.ip).await {
                Ok(environment) => environment,
                Err(error) => {
                    self.kubelet.event(pod, path, true, "Failed", format!("Error: {error}"));
                    let slot = &mut self.slots[index];
                    slot.record.state = RunState::Waiting {
                        reason: "CreateContainerConfigError".into(),
                        message: Some(error.to_string()),
                    };
                    slot.retry_at = Some(Instant::now() + Duration::from_secs(1));
                    return;
                }
            };
        tokio::time::sleep(self.kubelet.config.timing.start).await;
        if self.watched().is_none_or(|p| p.metadata.deletion_timestamp.is_some()) {
            return;
        }
        let slot = &mut self.slots[index];
        let mut annotations = BTreeMap::new();
        annotations.insert(
            "io.kubernetes.container.restartCount".to_string(),
            slot.record.restart_count.to_string(),
        );
        annotations.insert(
            "io.kubernetes.pod.terminationGracePeriod".to_string(),
            pod.spec.as_ref().and_then(|s| s.termination_grace_period_seconds).unwrap_or(30).to_string(),
        );
        // As the kubelet: its container hash (hex), which kruise-daemon reports as `plainHash`
        // in `apps.kruise.io/runtime-containers-meta`, and the preStop hook and ports, from
        // which a container is stopped without its pod spec.
        annotations.insert(
            "io.kubernetes.container.hash".to_string(),
            format!("{:x}", kruise_machinery::kubelet_hash::kubelet_container_hash(container)),
        );
        if let Some(pre_stop) = container.lifecycle.as_ref().and_then(|l| l.pre_stop.as_ref())
            && let Ok(handler) = serde_json::to_string(pre_stop)
        {
            annotations.insert("io.kubernetes.container.preStopHandler".to_string(), handler);
        }
        if let Some(ports) = container.ports.as_ref().filter(|p| !p.is_empty())
            && let Ok(ports) = serde_json::to_string(ports)
        {
            annotations.insert("io.kubernetes.container.ports".to_string(), ports);
        }
        let started = self.kubelet.runtime.start_container(
            &sandbox.id,
            &container.name,
            &image,
            slot.record.restart_count.max(0) as u32,
            container_labels(pod, &container.name),
            annotations,
            environment.clone(),
        );
        self.kubelet
            .runtime
            .set_mounts(&started.id, files::mounts_of(pod, container, &self.kubelet.config.name));
        self.kubelet.event(
            pod,
            path.clone(),
            false,
            "Created",
            format!("Created container: {}", container.name),
        );
        self.kubelet.event(pod, path, false, "Started", format!("Started container {}", container.name));
        let process_started = Instant::now();
        let started_at = Timestamp::now();
        // An ephemeral container's process sees the container's files (`ls /missing` fails
        // as on a node) and a debug image's unknown program cannot start.
        let outcome = if ephemeral {
            let mut files = files::ContainerFiles::new(
                &image.reference,
                files::mounts_of(pod, container, &self.kubelet.config.name),
            );
            conventions::ephemeral_outcome(container, &environment, &mut files)
        } else {
            conventions::process_outcome(container, &environment)
        };
        if let Some(outcome) = &outcome {
            self.kubelet.runtime.append_log(&started.id, false, &outcome.stdout);
            self.kubelet.runtime.append_log(&started.id, true, &outcome.stderr);
        }
        let start_error = outcome
            .as_ref()
            .filter(|o| {
                ephemeral
                    && o.exit_code == conventions::START_ERROR_CODE
                    && o.runs_for == Some(Duration::ZERO)
            })
            .map(|o| o.stderr.trim().to_string());
        // As the kubelet: the postStart hook runs before the container counts as running, and
        // the pod worker waits for it.
        let post_start = container.lifecycle.as_ref().and_then(|l| l.post_start.as_ref());
        let hook_failure = match post_start {
            Some(hook) => match self.run_post_start(pod, &started.id, container, hook).await {
                Some(outcome) => outcome.err(),
                None => return,
            },
            None => None,
        };
        let now = Instant::now();
        // Readiness after a hook is seen on the kubelet's next pass over the pod.
        let hook_report =
            if post_start.is_some() { self.kubelet.config.timing.post_start_report } else { Duration::ZERO };
        let behaviour = conventions::behaviour(&environment);
        let sidecar = is_sidecar(container);
        let exit = if ephemeral {
            behaviour
                .exit
                .or_else(|| outcome.as_ref().and_then(|o| o.runs_for.map(|after| (after, o.exit_code))))
        } else {
            behaviour.exit.or_else(|| conventions::process_exit(container, &environment))
        };
        let exit_at = match exit {
            Some((after, code)) => Some((process_started + after, code)),
            None if init && !sidecar => Some((now + self.kubelet.config.timing.start, 0)),
            None => None,
        };
        let readiness = container.readiness_probe.as_ref();
        let startup_delay = container.startup_probe.as_ref().map(|p| probe_delay(Some(p)));
        let started_at_probe = startup_delay.map(|delay| now + delay);
        let probe_start = now + hook_report + startup_delay.unwrap_or_default();
        let ready_at = match readiness {
            _ if (init && !sidecar) || ephemeral => None,
            Some(probe) if !periodic(probe) => {
                Some(probe_start + probe_delay(Some(probe)).max(self.kubelet.config.timing.readiness))
            }
            Some(_) => None,
            None => Some(probe_start),
        };
        let next_readiness = readiness
            .filter(|p| periodic(p))
            .map(|p| probe_start + probe_delay(Some(p)).max(self.kubelet.config.timing.readiness));
        let next_liveness = container
            .liveness_probe
            .as_ref()
            .filter(|p| periodic(p))
            .map(|p| probe_start + probe_delay(Some(p)) + probe_period(p));
        let slot = &mut self.slots[index];
        slot.record.state = RunState::Running { started_at };
        slot.record.container_id = Some(format!("containerd://{}", started.id));
        slot.record.image = container.image.clone().unwrap_or_default();
        slot.record.image_id = Some(runtime::repo_digest(&image.reference, &image.id));
        slot.record.started = startup_delay.is_none() && (sidecar || !init);
        slot.record.ready = false;
        // A restart runs with what the container was allocated: an infeasible resize in the
        // spec is not applied by restarting.
        let resources = slot.record.allocated.clone().or_else(|| container.resources.clone());
        slot.record.resources = resources.clone();
        slot.record.allocated = resources;
        slot.failures = 0;
        slot.live = Some(Live {
            runtime_id: started.id,
            spec: container.clone(),
            behaviour,
            exit_at,
            ready_at,
            started_at_probe,
            next_readiness,
            next_liveness,
            liveness_failures: 0,
            start_error,
        });
        if let Some(message) = hook_failure {
            self.fail_post_start(pod, index, message);
        }
        self.process_timers(pod);
    }

    /// Runs a container's postStart hook as the kubelet does (`exec` through the runtime,
    /// `sleep`; an `httpGet` or `tcpSocket` hook succeeds at once): `Ok` once it finished,
    /// `Err` with the kubelet's message when it failed, `None` when the pod was deleted
    /// meanwhile.
    async fn run_post_start(
        &mut self,
        pod: &Pod,
        container_id: &str,
        container: &Container,
        hook: &LifecycleHandler,
    ) -> Option<Result<(), String>> {
        let (runs_for, result) = if let Some(sleep) = &hook.sleep {
            (Duration::from_secs(sleep.seconds.max(0) as u64), Ok(()))
        } else if let Some(command) = hook.exec.as_ref().and_then(|e| e.command.clone()) {
            let (runs_for, result) =
                self.kubelet.runtime.exec_plan(container_id, &command, false).unwrap_or((
                    Some(Duration::ZERO),
                    runtime::ExecResult {
                        exit_code: 126,
                        stdout: String::new(),
                        stderr: "container not found".into(),
                    },
                ));
            let outcome = if result.exit_code == 0 {
                Ok(())
            } else {
                Err(format!(
                    "Exec lifecycle hook ({}) for Container {:?} in Pod {:?} failed - error: command '{}' exited with {}: {}, message: {:?}",
                    go_list(&command),
                    container.name,
                    Self::pod_label(pod),
                    command.join(" "),
                    result.exit_code,
                    result.stderr,
                    format!("{}{}", result.stdout, result.stderr),
                ))
            };
            (runs_for.unwrap_or(conventions::FOREVER), outcome)
        } else {
            (Duration::ZERO, Ok(()))
        };
        let mut pod_rx = self.pod_rx.clone();
        tokio::select! {
            _ = tokio::time::sleep(runs_for) => Some(result),
            _ = pod_rx.wait_for(|p| p.as_ref().is_none_or(|p| p.metadata.deletion_timestamp.is_some())) => None,
        }
    }

    /// A failed postStart hook: the kubelet reports it and kills the container, which then
    /// restarts per the restart policy (`PostStartHookError` until it does).
    fn fail_post_start(&mut self, pod: &Pod, index: usize, message: String) {
        let name = self.slots[index].record.name.clone();
        let path = Some(slot_path(&self.slots[index]));
        tracing::debug!(pod = %Self::pod_label(pod), container = %name, %message, "postStart hook failed");
        self.kubelet.event(pod, path.clone(), true, "FailedPostStartHook", "PostStartHook failed".into());
        self.kubelet.event(pod, path, false, "Killing", "FailedPostStartHook".into());
        let Some((id, term_time)) =
            self.slots[index].live.as_ref().map(|l| (l.runtime_id.clone(), l.behaviour.term_time))
        else {
            return;
        };
        let code = if term_time.is_zero() { 0 } else { 137 };
        self.kubelet.runtime.exit_container(&id, code, if code == 0 { "Completed" } else { "Error" });
        let policy =
            pod.spec.as_ref().and_then(|s| s.restart_policy.clone()).unwrap_or_else(|| "Always".into());
        self.on_exit(index, code, &policy, &Self::pod_label(pod));
        let slot = &mut self.slots[index];
        if let RunState::Waiting { reason, .. } = &slot.record.state
            && reason == "ContainerCreating"
        {
            slot.record.state =
                RunState::Waiting { reason: "PostStartHookError".into(), message: Some(message) };
        }
    }

    /// Pulls (or finds) a container's image per its pull policy, with the pod's pull secrets.
    async fn image_for(
        &mut self,
        pod: &Arc<Pod>,
        container: &Container,
        path: Option<String>,
    ) -> ImageOutcome {
        let reference = container.image.clone().unwrap_or_default();
        let policy = container.image_pull_policy.clone().unwrap_or_else(|| "IfNotPresent".into());
        let runtime = self.kubelet.runtime.clone();
        let present = runtime.has_image(&reference);
        if present
            && policy != "Always"
            && let Some(image) = runtime.image(&reference)
        {
            self.kubelet.event(
                pod,
                path,
                false,
                "Pulled",
                format!("Container image \"{reference}\" already present on machine"),
            );
            return ImageOutcome::Ready(image);
        }
        if policy == "Never" && !present {
            let message = format!("Container image \"{reference}\" is not present with pull policy of Never");
            self.kubelet.event(pod, path, true, "ErrImageNeverPull", message.clone());
            return ImageOutcome::Failed { reason: "ErrImageNeverPull", message };
        }
        let literal = conventions::literal_env(container);
        if let Some(time) = conventions::behaviour(&literal).pull_time {
            runtime.set_pull_time(&reference, time);
        }
        let auth = self.credentials(pod, &reference).await;
        self.kubelet.event(pod, path.clone(), false, "Pulling", format!("Pulling image \"{reference}\""));
        let started = std::time::Instant::now();
        let kubelet = self.kubelet.clone();
        let pull = async {
            let _serial = kubelet.pull_lock.lock().await;
            runtime
                .pull(&reference, auth.as_ref().map(|(u, p)| (u.as_str(), p.as_str())), policy == "Always")
                .await
        };
        let mut pod_rx = self.pod_rx.clone();
        let deleted = async move {
            let _ =
                pod_rx.wait_for(|p| p.as_ref().is_none_or(|p| p.metadata.deletion_timestamp.is_some())).await;
        };
        let result = tokio::select! {
            result = pull => result,
            _ = deleted => return ImageOutcome::Interrupted,
        };
        match result {
            Ok(image) => {
                let took = started.elapsed();
                self.kubelet.event(
                    pod,
                    path,
                    false,
                    "Pulled",
                    format!(
                        "Successfully pulled image \"{reference}\" in {took:?} ({took:?} including waiting). Image size: {} bytes.",
                        image.size
                    ),
                );
                ImageOutcome::Ready(image)
            }
            Err(error) => {
                let message = match &error {
                    PullError::InvalidReference(_) => error.to_string(),
                    _ => format!("Failed to pull image \"{reference}\": {error}"),
                };
                self.kubelet.event(pod, path.clone(), true, "Failed", message.clone());
                self.kubelet.event(pod, path, true, "Failed", "Error: ErrImagePull".into());
                let reason = if matches!(error, PullError::InvalidReference(_)) {
                    "InvalidImageName"
                } else {
                    "ErrImagePull"
                };
                ImageOutcome::Failed { reason, message }
            }
        }
    }

    async fn credentials(&self, pod: &Pod, reference: &str) -> Option<(String, String)> {
        let names: Vec<String> = pod
            .spec
            .as_ref()
            .and_then(|s| s.image_pull_secrets.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.name)
            .collect();
        if names.is_empty() {
            return None;
        }
        let registry = runtime::registry_host(reference);
        let secrets: Api<Secret> = Api::namespaced(
            self.kubelet.client.clone(),
            pod.metadata.namespace.as_deref().unwrap_or("default"),
        );
        for name in names {
            if let Ok(Some(secret)) = secrets.get_opt(&name).await
                && let Some(credentials) = pull_secrets::credentials_from_secret(&secret, &registry)
            {
                return Some(credentials);
            }
        }
        None
    }

    /// Exits, readiness and probes that came due.
    fn process_timers(&mut self, pod: &Pod) {
        let now = Instant::now();
        let restart_policy =
            pod.spec.as_ref().and_then(|s| s.restart_policy.clone()).unwrap_or_else(|| "Always".into());
        let label = Self::pod_label(pod);
        let mut exits = Vec::new();
        let mut kills = Vec::new();
        for (index, slot) in self.slots.iter_mut().enumerate() {
            if slot.show_backoff_at.is_some_and(|at| at <= now) {
                slot.show_backoff_at = None;
                if let RunState::Waiting { reason, .. } = &slot.record.state
                    && reason == "ErrImagePull"
                {
                    slot.record.state = RunState::Waiting {
                        reason: "ImagePullBackOff".into(),
                        message: Some(format!("Back-off pulling image \"{}\"", slot.record.image)),
                    };
                }
            }
            let Some(live) = slot.live.as_mut() else { continue };
            if live.started_at_probe.is_some_and(|at| at <= now) {
                live.started_at_probe = None;
                slot.record.started = true;
            }
            if live.ready_at.is_some_and(|at| at <= now) && slot.record.started {
                live.ready_at = None;
                slot.record.ready = live.behaviour.can_be_ready;
            }
            if let Some(at) = live.next_readiness.filter(|at| *at <= now && slot.record.started) {
                let probe = live.spec.readiness_probe.clone().unwrap_or_default();
                let passed = self.kubelet.runtime.probe(&live.runtime_id, &probe);
                slot.record.ready = passed && live.behaviour.can_be_ready;
                live.next_readiness = Some(at.max(now - Duration::from_millis(1)) + probe_period(&probe));
            }
            if let Some(at) = live.next_liveness.filter(|at| *at <= now) {
                let probe = live.spec.liveness_probe.clone().unwrap_or_default();
                let passed = self.kubelet.runtime.probe(&live.runtime_id, &probe);
                live.liveness_failures = if passed { 0 } else { live.liveness_failures + 1 };
                live.next_liveness = Some(at.max(now - Duration::from_millis(1)) + probe_period(&probe));
                if live.liveness_failures >= probe.failure_threshold.unwrap_or(3).max(1) {
                    kills.push(index);
                }
            }
            if let Some((at, code)) = live.exit_at
                && at <= now
            {
                exits.push((index, code));
            }
        }
        for (index, code) in exits {
            if let Some(live) = &self.slots[index].live {
                let reason = match &live.start_error {
                    Some(_) => "StartError",
                    None if code == 0 => "Completed",
                    None => "Error",
                };
                self.kubelet.runtime.exit_container(&live.runtime_id, code, reason);
            }
            self.on_exit(index, code, &restart_policy, &label);
        }
        for index in kills {
            let name = self.slots[index].record.name.clone();
            let path = Some(slot_path(&self.slots[index]));
            self.kubelet.event(pod, path.clone(), true, "Unhealthy", "Liveness probe failed".into());
            self.kubelet.event(
                pod,
                path,
                false,
                "Killing",
                format!("Container {name} failed liveness probe, will be restarted"),
            );
            if let Some(live) = &self.slots[index].live {
                self.kubelet.runtime.exit_container(&live.runtime_id, 137, "Error");
            }
            self.on_exit(index, 137, "Always", &label);
        }
    }

    /// A container exited with `code`: restart it per the policy, or keep it terminated.
    fn on_exit(&mut self, index: usize, code: i32, restart_policy: &str, pod_label: &str) {
        let base = self.kubelet.config.timing.restart_backoff;
        let slot = &mut self.slots[index];
        let Some(live) = slot.live.take() else { return };
        let started_at = match &slot.record.state {
            RunState::Running { started_at } => Some(*started_at),
            _ => None,
        };
        // The runtime's exit time, as a kubelet reports it: the worker may notice an exit late
        // (it is busy running another container's postStart hook, say).
        let exited_at = self.kubelet.runtime.container(&live.runtime_id).map(|c| c.finished_at).unwrap_or(0);
        let termination = Termination {
            exit_code: code,
            reason: match &live.start_error {
                Some(_) => "StartError",
                None if code == 0 => "Completed",
                None => "Error",
            }
            .into(),
            started_at,
            finished_at: finished_time(exited_at, Timestamp::now()),
            container_id: slot.record.container_id.clone(),
        };
        slot.record.ready = false;
        let sidecar = is_sidecar(&live.spec);
        let restart = match (slot.init, sidecar) {
            _ if slot.ephemeral => false,
            (true, false) => code != 0 && restart_policy != "Never",
            (true, true) => true,
            (false, _) => match restart_policy {
                "Always" => true,
                "OnFailure" => code != 0,
                _ => false,
            },
        };
        if slot.init && !sidecar && code == 0 {
            slot.record.state = RunState::Terminated(termination);
            slot.record.ready = true;
            slot.record.started = false;
            slot.done = true;
            return;
        }
        if !restart {
            slot.record.state = RunState::Terminated(termination);
            slot.record.started = false;
            slot.done = true;
            return;
        }
        self.kubelet.runtime.mark_restart_pending(&live.runtime_id);
        slot.record.last_termination = Some(termination);
        slot.record.restart_count += 1;
        slot.record.started = false;
        let wait = if slot.record.restart_count <= 1 {
            Duration::ZERO
        } else {
            backoff(base, slot.record.restart_count as u32 - 2)
        };
        slot.record.state = if wait.is_zero() {
            RunState::Waiting { reason: "ContainerCreating".into(), message: None }
        } else {
            RunState::Waiting {
                reason: "CrashLoopBackOff".into(),
                message: Some(format!(
                    "back-off {wait:?} restarting failed container={} pod={pod_label}",
                    slot.record.name
                )),
            }
        };
        slot.retry_at = Some(Instant::now() + wait);
    }

    /// A container was stopped through the CRI: the kubelet notices and applies the policy.
    fn on_stopped(&mut self, id: &str) {
        let Some(index) = self.slots.iter().position(|s| s.live.as_ref().is_some_and(|l| l.runtime_id == id))
        else {
            return;
        };
        let Some(pod) = self.watched() else { return };
        let code = self.kubelet.runtime.container(id).map(|c| c.exit_code).unwrap_or(137);
        let policy =
            pod.spec.as_ref().and_then(|s| s.restart_policy.clone()).unwrap_or_else(|| "Always".into());
        self.on_exit(index, code, &policy, &Self::pod_label(&pod));
    }

    /// After missed runtime events: any live container the runtime no longer runs has exited.
    fn check_runtime(&mut self) {
        let stopped: Vec<String> = self
            .slots
            .iter()
            .filter_map(|s| s.live.as_ref())
            .filter(|live| {
                self.kubelet
                    .runtime
                    .container(&live.runtime_id)
                    .is_none_or(|c| c.state != ContainerState::Running)
            })
            .map(|live| live.runtime_id.clone())
            .collect();
        for id in stopped {
            self.on_stopped(&id);
        }
    }

    /// How long a container takes to stop: its preStop hook, then its exit after SIGTERM.
    fn stop_time(container: &Container, behaviour: &Behaviour) -> Duration {
        conventions::pre_stop_duration(container) + behaviour.term_time
    }

    /// Restarts one running container because its spec changed (image, or a resize that needs
    /// a restart): stop it gracefully, then start the new definition.
    async fn restart_for_change(&mut self, pod: &Arc<Pod>, index: usize, container: &Container, why: &str) {
        let Some(live) = self.slots[index].live.take() else { return };
        let name = container.name.clone();
        let path = Some(slot_path(&self.slots[index]));
        self.kubelet.event(pod, path, false, "Killing", format!("Container {name} {why}, will be restarted"));
        let grace = Duration::from_secs(
            pod.spec.as_ref().and_then(|s| s.termination_grace_period_seconds).unwrap_or(30).max(0) as u64,
        );
        let needed = Self::stop_time(&live.spec, &live.behaviour);
        tokio::time::sleep(needed.min(grace)).await;
        let code = if needed <= grace { 0 } else { 137 };
        self.kubelet.runtime.exit_container(
            &live.runtime_id,
            code,
            if code == 0 { "Completed" } else { "Error" },
        );
        self.kubelet.runtime.mark_restart_pending(&live.runtime_id);
        let slot = &mut self.slots[index];
        let started_at = match &slot.record.state {
            RunState::Running { started_at } => Some(*started_at),
            _ => None,
        };
        slot.record.last_termination = Some(Termination {
            exit_code: code,
            reason: if code == 0 { "Completed" } else { "Error" }.into(),
            started_at,
            finished_at: Timestamp::now(),
            container_id: slot.record.container_id.clone(),
        });
        slot.record.restart_count += 1;
        slot.record.ready = false;
        slot.record.started = false;
        slot.record.state = RunState::Waiting { reason: "ContainerCreating".into(), message: None };
        slot.retry_at = None;
        self.publish().await;
        self.start(pod, index, container).await;
    }

    /// The kubelet's allocation step of `pods/resize`: when the spec's resources differ from
    /// what the running containers were allocated, the new resources are allocated if the pod
    /// then fits the node; otherwise the allocation stays and the pod reports
    /// `PodResizePending` (`Infeasible`, with the kubelet's message).
    fn allocate_resize(&mut self, pod: &Pod) {
        let spec = pod.spec.clone().unwrap_or_default();
        let mut changed = Vec::new();
        for container in &spec.containers {
            let Some(index) = self.slots.iter().position(|s| s.is_app() && s.record.name == container.name)
            else {
                continue;
            };
            let record = &self.slots[index].record;
            // Containers never started are allocated what the spec says when they start.
            if record.container_id.is_none() {
                continue;
            }
            if !resources_differ(record.allocated.as_ref(), container.resources.as_ref()).is_empty() {
                changed.push((index, container.resources.clone()));
            }
        }
        if changed.is_empty() {
            self.resize_pending = None;
            return;
        }
        let capacity = &self.kubelet.config.capacity;
        match resize::check_fit(&spec, &capacity.cpu, &capacity.memory) {
            Ok(()) => {
                for (index, resources) in changed {
                    self.slots[index].record.allocated = resources;
                }
                self.resize_pending = None;
            }
            Err(message) => {
                let unchanged = self.resize_pending.as_ref().is_some_and(|c| {
                    c.message.as_deref() == Some(message.as_str())
                        && c.observed_generation == pod.metadata.generation
                });
                if !unchanged {
                    tracing::debug!(pod = %Self::pod_label(pod), %message, "infeasible resize");
                    self.resize_pending = Some(resize::condition(
                        resize::PENDING,
                        self.resize_pending.as_ref(),
                        Some(resize::INFEASIBLE),
                        Some(message),
                        pod.metadata.generation,
                        Timestamp::now(),
                    ));
                }
            }
        }
    }

    /// Applies allocated resources that the running containers do not run with yet: in place,
    /// or by restarting the container where its `resizePolicy` says `RestartContainer`.
    async fn actuate_resize(&mut self, pod: &Arc<Pod>) {
        let spec = pod.spec.clone().unwrap_or_default();
        let mut pending = Vec::new();
        for container in &spec.containers {
            let Some(index) = self.slots.iter().position(|s| s.is_app() && s.record.name == container.name)
            else {
                continue;
            };
            let slot = &self.slots[index];
            if slot.live.is_none() {
                continue;
            }
            let changed = resources_differ(slot.record.resources.as_ref(), slot.record.allocated.as_ref());
            if !changed.is_empty() {
                pending.push((index, container.clone(), changed));
            }
        }
        if pending.is_empty() {
            self.resize_in_progress = None;
            return;
        }
        self.resize_in_progress = Some(resize::condition(
            resize::IN_PROGRESS,
            None,
            None,
            None,
            pod.metadata.generation,
            Timestamp::now(),
        ));
        self.publish().await;
        tokio::time::sleep(self.kubelet.config.timing.start).await;
        for (index, container, changed) in pending {
            let restart = container.resize_policy.iter().flatten().any(|policy| {
                policy.restart_policy == "RestartContainer" && changed.contains(&policy.resource_name)
            });
            if restart {
                self.restart_for_change(pod, index, &container, "resources changed").await;
            } else {
                let slot = &mut self.slots[index];
                slot.record.resources = slot.record.allocated.clone();
                if let Some(live) = slot.live.as_mut() {
                    live.spec.resources = slot.record.allocated.clone();
                }
            }
        }
        self.resize_in_progress = None;
    }

    /// The kubelet's pod teardown: every running container gets its Killing event, runs its
    /// preStop hook and stops within the grace period (shortened when the pod is deleted
    /// meanwhile); then they are all reported terminated. False when the kubelet stopped.
    async fn stop_all(&mut self) -> bool {
        let Some(pod) = self.watched() else { return true };
        let grace_of = |pod: &Pod| {
            Duration::from_secs(
                pod.metadata
                    .deletion_grace_period_seconds
                    .or_else(|| pod.spec.as_ref().and_then(|s| s.termination_grace_period_seconds))
                    .unwrap_or(30)
                    .max(0) as u64,
            )
        };
        let began = Instant::now();
        let mut deadline = began + grace_of(&pod);
        let mut stop_times = Vec::new();
        for slot in &self.slots {
            if let Some(live) = &slot.live {
                let name = &slot.record.name;
                self.kubelet.event(
                    &pod,
                    Some(slot_path(slot)),
                    false,
                    "Killing",
                    format!("Stopping container {name}"),
                );
                stop_times.push(Self::stop_time(&live.spec, &live.behaviour));
            }
        }
        let all_stopped = began + stop_times.iter().max().copied().unwrap_or_default();
        loop {
            let until = deadline.min(all_stopped);
            tokio::select! {
                _ = tokio::time::sleep_until(until) => break,
                changed = self.pod_rx.changed() => {
                    if changed.is_err() {
                        return false;
                    }
                    match self.watched() {
                        None => break,
                        Some(pod) => deadline = deadline.min(Instant::now() + grace_of(&pod)),
                    }
                }
            }
        }
        let elapsed = began.elapsed();
        let now = Timestamp::now();
        for slot in self.slots.iter_mut() {
            if let Some(live) = slot.live.take() {
                let needed = Self::stop_time(&live.spec, &live.behaviour);
                let code = if needed <= elapsed + Duration::from_millis(5) { 0 } else { 137 };
                let reason = if code == 0 { "Completed" } else { "Error" };
                self.kubelet.runtime.exit_container(&live.runtime_id, code, reason);
                let started_at = match &slot.record.state {
                    RunState::Running { started_at } => Some(*started_at),
                    _ => None,
                };
                slot.record.state = RunState::Terminated(Termination {
                    exit_code: code,
                    reason: reason.into(),
                    started_at,
                    finished_at: now,
                    container_id: slot.record.container_id.clone(),
                });
                slot.record.ready = false;
                slot.record.started = false;
                slot.done = true;
            } else if matches!(slot.record.state, RunState::Waiting { .. }) {
                slot.record.state = RunState::Terminated(Termination {
                    exit_code: 137,
                    reason: "ContainerStatusUnknown".into(),
                    started_at: None,
                    finished_at: now,
                    container_id: None,
                });
                slot.done = true;
            }
        }
        self.terminal = true;
        true
    }

    /// Deletion: stop every container within the grace period (preStop first), report the
    /// final status, then remove the pod from the API.
    async fn terminate(&mut self) {
        let Some(pod) = self.watched() else { return };
        if !self.stop_all().await {
            return;
        }
        if self.watched().is_some() {
            self.publish_terminating().await;
            tokio::time::sleep(self.kubelet.config.timing.removal).await;
            let pods: Api<Pod> = Api::namespaced(
                self.kubelet.client.clone(),
                pod.metadata.namespace.as_deref().unwrap_or("default"),
            );
            let params = DeleteParams {
                grace_period_seconds: Some(0),
                preconditions: Some(Preconditions { uid: pod.metadata.uid.clone(), resource_version: None }),
                ..DeleteParams::default()
            };
            if let Err(error) = pods.delete(pod.metadata.name.as_deref().unwrap_or_default(), &params).await {
                tracing::debug!(pod = %Self::pod_label(&pod), %error, "could not remove a terminated pod");
            }
        }
        self.cleanup();
    }

    fn cleanup(&mut self) {
        if let Some(sandbox) = self.sandbox.take() {
            self.kubelet.release_ip(&sandbox.ip);
            self.kubelet.runtime.remove_pod(&sandbox.pod_uid);
        } else if let Some(uid) = self.watched().and_then(|p| p.metadata.uid.clone()) {
            self.kubelet.runtime.remove_pod(&uid);
        }
    }

    async fn publish_terminating(&mut self) {
        self.publish().await;
    }

    /// The pod status for the current records.
    fn desired_status(&self, pod: &Pod) -> Value {
        let spec = pod.spec.clone().unwrap_or_default();
        let init: Vec<ContainerRecord> =
            self.slots.iter().filter(|s| s.init).map(|s| s.record.clone()).collect();
        let apps: Vec<ContainerRecord> =
            self.slots.iter().filter(|s| s.is_app()).map(|s| s.record.clone()).collect();
        let mut phase = pod_status::phase(&spec, &init, &apps);
        if pod.metadata.deletion_timestamp.is_some() && self.terminal {
            // A deleted pod ends in a terminal phase, as if its restart policy were Never.
            let mut never = spec.clone();
            never.restart_policy = Some("Never".into());
            phase = pod_status::phase(&never, &init, &apps);
        }
        // A pod the API shows in a terminal phase never leaves it (the kubelet forces the
        // API's phase back), whoever wrote it there.
        if let Some(api_phase) = terminal_phase(pod)
            && phase != api_phase
        {
            phase = api_phase;
        }
        if self.rejection.is_some() {
            phase = "Failed";
        }
        let existing = pod.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
        let mut ours = pod_status::conditions(
            &spec,
            self.sandbox.is_some() && !self.terminal,
            &init,
            &apps,
            phase,
            &existing,
            Timestamp::now(),
        );
        for resize in self.resize_pending.iter().chain(&self.resize_in_progress) {
            let mut resize = resize.clone();
            if let Some(previous) =
                existing.iter().find(|c| c.type_ == resize.type_ && c.reason == resize.reason)
            {
                resize.last_transition_time = previous.last_transition_time.clone();
            }
            ours.push(resize);
        }
        let owned = |kind: &str| {
            pod_status::KUBELET_CONDITIONS.contains(&kind)
                || matches!(kind, "PodResizePending" | "PodResizeInProgress")
        };
        let mut conditions: Vec<PodCondition> = Vec::new();
        for condition in &existing {
            if let Some(mine) = ours.iter().find(|c| c.type_ == condition.type_) {
                conditions.push(mine.clone());
            } else if !owned(&condition.type_) {
                conditions.push(condition.clone());
            }
        }
        for mine in ours {
            if !conditions.iter().any(|c| c.type_ == mine.type_) {
                conditions.push(mine);
            }
        }
        let mut status = serde_json::to_value(pod.status.clone().unwrap_or_default()).unwrap_or(Value::Null);
        if !status.is_object() {
            status = serde_json::json!({});
        }
        let set = |status: &mut Value, key: &str, value: Value| {
            if let Some(map) = status.as_object_mut() {
                if value.is_null() {
                    map.remove(key);
                } else {
                    map.insert(key.to_string(), value);
                }
            }
        };
        let to = |value: Result<Value, serde_json::Error>| value.unwrap_or(Value::Null);
        set(&mut status, "phase", Value::String(phase.into()));
        if let Some(rejection) = &self.rejection {
            set(&mut status, "reason", Value::String(rejection.reason.clone()));
            set(&mut status, "message", Value::String(rejection.message.clone()));
        }
        // The deprecated `status.resize` (set by kubelets before 1.33, still read by clients
        // written for them, upstream Kruise's e2e suite among them): the pending reason.
        let legacy_resize = self.resize_pending.as_ref().and_then(|c| c.reason.clone());
        set(&mut status, "resize", legacy_resize.map(Value::String).unwrap_or(Value::Null));
        set(&mut status, "conditions", to(serde_json::to_value(&conditions)));
        let host_ip = self.kubelet.host_ip();
        set(&mut status, "hostIP", Value::String(host_ip.clone()));
        set(&mut status, "hostIPs", to(serde_json::to_value(vec![HostIP { ip: host_ip }])));
        if let Some(sandbox) = &self.sandbox {
            set(&mut status, "podIP", Value::String(sandbox.ip.clone()));
            set(&mut status, "podIPs", to(serde_json::to_value(vec![PodIP { ip: sandbox.ip.clone() }])));
        }
        if let Some(start) = self.start_time {
            set(&mut status, "startTime", to(serde_json::to_value(Time(start))));
        }
        let statuses = |init: bool, names: Vec<String>| {
            names
                .iter()
                .filter_map(|name| {
                    self.slots.iter().find(|s| s.init == init && !s.ephemeral && &s.record.name == name)
                })
                .map(|slot| pod_status::container_status(&slot.record))
                .collect::<Vec<_>>()
        };
        let app_names = spec.containers.iter().map(|c| c.name.clone()).collect();
        set(&mut status, "containerStatuses", to(serde_json::to_value(statuses(false, app_names))));
        let init_names: Vec<String> = spec.init_containers.iter().flatten().map(|c| c.name.clone()).collect();
        if !init_names.is_empty() {
            set(&mut status, "initContainerStatuses", to(serde_json::to_value(statuses(true, init_names))));
        }
        let ephemeral: Vec<_> = ephemeral_containers(&spec)
            .iter()
            .filter_map(|c| self.slots.iter().find(|s| s.ephemeral && s.record.name == c.name))
            .map(|slot| pod_status::ephemeral_container_status(&slot.record))
            .collect();
        if !ephemeral.is_empty() {
            set(&mut status, "ephemeralContainerStatuses", to(serde_json::to_value(ephemeral)));
        }
        if let Some(generation) = pod.metadata.generation {
            set(&mut status, "observedGeneration", Value::from(generation));
        }
        status
    }

    /// Writes the pod status when it differs from what the API has.
    async fn publish(&mut self) {
        for _ in 0..5 {
            let Some(base) = self.newest() else { return };
            let desired = self.desired_status(&base);
            let current =
                serde_json::to_value(base.status.clone().unwrap_or_default()).unwrap_or(Value::Null);
            if desired == current {
                return;
            }
            let mut pod = (*base).clone();
            pod.status = match serde_json::from_value(desired) {
                Ok(status) => Some(status),
                Err(error) => {
                    tracing::warn!(%error, "could not build a pod status");
                    return;
                }
            };
            let namespace = pod.metadata.namespace.clone().unwrap_or_else(|| "default".into());
            let name = pod.metadata.name.clone().unwrap_or_default();
            let pods: Api<Pod> = Api::namespaced(self.kubelet.client.clone(), &namespace);
            let params = PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
            match pods.replace_status(&name, &params, &pod).await {
                Ok(written) => {
                    self.written = Some(Arc::new(written));
                    return;
                }
                Err(kube::Error::Api(status)) if status.code == 409 => match pods.get_opt(&name).await {
                    Ok(Some(fresh)) if fresh.metadata.uid == pod.metadata.uid => {
                        self.written = Some(Arc::new(fresh));
                    }
                    _ => return,
                },
                Err(error) => {
                    tracing::debug!(pod = %name, %error, "could not write pod status");
                    return;
                }
            }
        }
    }
}

/// The pod's phase in the API when it is terminal (`Succeeded` or `Failed`).
fn terminal_phase(pod: &Pod) -> Option<&'static str> {
    match pod.status.as_ref()?.phase.as_deref()? {
        "Succeeded" => Some("Succeeded"),
        "Failed" => Some("Failed"),
        _ => None,
    }
}

/// The labels the kubelet puts on a pod's containers in the runtime (the node daemon finds a
/// pod's containers by them).
pub fn container_labels(pod: &Pod, container: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("io.kubernetes.pod.name".to_string(), pod.metadata.name.clone().unwrap_or_default()),
        ("io.kubernetes.pod.namespace".to_string(), pod.metadata.namespace.clone().unwrap_or_default()),
        ("io.kubernetes.pod.uid".to_string(), pod.metadata.uid.clone().unwrap_or_default()),
        ("io.kubernetes.container.name".to_string(), container.to_string()),
    ])
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let base = Duration::from_millis(100);
        assert_eq!(backoff(base, 0), Duration::from_millis(100));
        assert_eq!(backoff(base, 2), Duration::from_millis(400));
        assert_eq!(backoff(base, 20), Duration::from_secs(1));
    }

    #[test]
    fn termination_time_is_the_runtime_exit_time() {
        let now = Timestamp::from_second(1_700_000_100).unwrap();
        let exited = Timestamp::from_second(1_700_000_000).unwrap();
        let cases = [
            ("recorded by the runtime", exited.as_nanosecond() as i64, exited),
            ("not recorded", 0, now),
            ("negative", -5, now),
        ];
        for (name, nanos, expected) in cases {
            assert_eq!(finished_time(nanos, now), expected, "{name}");
        }
    }

    #[test]
    fn resource_changes_are_found_by_name() {
        let resources = |cpu: &str, memory: &str| ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity(cpu.into())),
                ("memory".to_string(), Quantity(memory.into())),
            ])),
            ..Default::default()
        };
        assert!(
            resources_differ(Some(&resources("1", "1Gi")), Some(&resources("1000m", "1024Mi"))).is_empty()
        );
        assert_eq!(resources_differ(Some(&resources("1", "1Gi")), Some(&resources("2", "1Gi"))), ["cpu"]);
        assert_eq!(resources_differ(None, Some(&resources("1", "1Gi"))), ["cpu", "memory"]);
    }
}
