//! The defaults kube-apiserver gives built-in workloads and pod specs when it decodes a request
//! (`SetObjectDefaults_*` of `pkg/apis/{core,apps,batch}/v1`, with the feature gates of 1.34):
//! every pod spec, in a pod or in a template, gets `SetDefaults_PodSpec` and the container,
//! probe, volume and environment defaults; only pods get `SetDefaults_Pod` (requests from limits,
//! `enableServiceLinks`, host ports of host-network pods). The core pod spec defaults shared with
//! the Kruise webhooks come from `kruise_machinery::pod_defaults`; what kube-apiserver adds to them
//! is here.
//!
//! Go's encoder also writes the non-pointer structs of the types even when empty, so containers
//! carry `resources: {}`; that is applied here too, so stored objects read back as kube-apiserver's
//! do.

use k8s_openapi::{
    api::{
        apps::v1::{
            DaemonSet, DaemonSetUpdateStrategy, Deployment, DeploymentStrategy, ReplicaSet,
            RollingUpdateDaemonSet, RollingUpdateDeployment, RollingUpdateStatefulSetStrategy, StatefulSet,
            StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetUpdateStrategy,
        },
        batch::v1::{CronJob, Job, JobSpec},
        core::v1::{
            Container, EnvVar, PersistentVolumeClaim, PersistentVolumeClaimStatus, PodSpec, PodTemplateSpec,
            Probe, ResourceRequirements, Volume,
        },
    },
    apimachinery::pkg::util::intstr::IntOrString,
};
use kruise_machinery::pod_defaults::{default_core_pod_spec, image_tag};

/// The defaults of a pod spec wherever it appears (pods and templates alike).
pub fn pod_spec(spec: &mut PodSpec) {
    service_account_alias(spec);
    default_core_pod_spec(spec);
    for container in spec.containers.iter_mut().chain(spec.init_containers.iter_mut().flatten()) {
        container_extras(
            &mut container.resources,
            container.env.as_mut(),
            [&mut container.liveness_probe, &mut container.readiness_probe, &mut container.startup_probe],
        );
    }
    for ephemeral in spec.ephemeral_containers.iter_mut().flatten() {
        // SetDefaults_EphemeralContainer is SetDefaults_Container of the common part.
        if ephemeral.image_pull_policy.is_none() {
            let latest = image_tag(ephemeral.image.as_deref().unwrap_or_default()) == "latest";
            ephemeral.image_pull_policy = Some(if latest { "Always" } else { "IfNotPresent" }.into());
        }
        ephemeral.termination_message_path.get_or_insert_with(|| "/dev/termination-log".into());
        ephemeral.termination_message_policy.get_or_insert_with(|| "File".into());
        container_extras(
            &mut ephemeral.resources,
            ephemeral.env.as_mut(),
            [&mut ephemeral.liveness_probe, &mut ephemeral.readiness_probe, &mut ephemeral.startup_probe],
        );
    }
    for volume in spec.volumes.iter_mut().flatten() {
        volume_plugin_defaults(volume);
    }
}

/// The defaults of a pod object: its spec's, then `SetDefaults_Pod`.
pub fn pod(spec: &mut PodSpec) {
    for container in spec.containers.iter_mut().chain(spec.init_containers.iter_mut().flatten()) {
        requests_from_limits(container);
    }
    spec.enable_service_links.get_or_insert(true);
    if spec.host_network == Some(true) {
        for container in spec.containers.iter_mut().chain(spec.init_containers.iter_mut().flatten()) {
            for port in container.ports.iter_mut().flatten() {
                if port.host_port.unwrap_or(0) == 0 {
                    port.host_port = Some(port.container_port);
                }
            }
        }
    }
    pod_spec(spec);
}

/// The defaults of a pod template (`spec` only: templates do not get `SetDefaults_Pod`).
pub fn pod_template(template: &mut PodTemplateSpec) {
    // Go writes the template's (non-pointer) metadata even when empty.
    template.metadata.get_or_insert_with(Default::default);
    pod_spec(template.spec.get_or_insert_with(Default::default));
}

/// The v1 `serviceAccount` is the deprecated name of `serviceAccountName`: it fills in a missing
/// `serviceAccountName` (the new field wins when both are set), and kube-apiserver writes it back
/// as a copy of `serviceAccountName` (its v1 conversion).
fn service_account_alias(spec: &mut PodSpec) {
    let name = spec.service_account_name.as_deref().filter(|name| !name.is_empty());
    let alias = spec.service_account.as_deref().filter(|alias| !alias.is_empty());
    let effective = name.or(alias).map(str::to_string);
    spec.service_account_name = effective.clone();
    spec.service_account = effective;
}

/// `resources: {}`, gRPC probes' `service: ""`, `fileKeyRef.optional: false`.
fn container_extras(
    resources: &mut Option<ResourceRequirements>,
    env: Option<&mut Vec<EnvVar>>,
    probes: [&mut Option<Probe>; 3],
) {
    resources.get_or_insert_with(Default::default);
    for var in env.into_iter().flatten() {
        if let Some(file) = var.value_from.as_mut().and_then(|from| from.file_key_ref.as_mut()) {
            file.optional.get_or_insert(false);
        }
    }
    for probe in probes.into_iter().flatten() {
        if let Some(grpc) = probe.grpc.as_mut() {
            grpc.service.get_or_insert_with(String::new);
        }
    }
}

/// Requests default to limits for every resource that has a limit and no request.
fn requests_from_limits(container: &mut Container) {
    let Some(resources) = container.resources.as_mut() else { return };
    let Some(limits) = resources.limits.clone() else { return };
    let requests = resources.requests.get_or_insert_with(Default::default);
    for (name, value) in limits {
        requests.entry(name).or_insert(value);
    }
}

/// The declarative defaults of the volume plugins that have some.
fn volume_plugin_defaults(volume: &mut Volume) {
    if let Some(iscsi) = volume.iscsi.as_mut() {
        iscsi.iscsi_interface.get_or_insert_with(|| "default".into());
    }
    if let Some(rbd) = volume.rbd.as_mut() {
        rbd.pool.get_or_insert_with(|| "rbd".into());
        rbd.user.get_or_insert_with(|| "admin".into());
        rbd.keyring.get_or_insert_with(|| "/etc/ceph/keyring".into());
    }
    if let Some(disk) = volume.azure_disk.as_mut() {
        disk.caching_mode.get_or_insert_with(|| "ReadWrite".into());
        disk.fs_type.get_or_insert_with(|| "ext4".into());
        disk.read_only.get_or_insert(false);
        disk.kind.get_or_insert_with(|| "Shared".into());
    }
    if let Some(scale_io) = volume.scale_io.as_mut() {
        scale_io.storage_mode.get_or_insert_with(|| "ThinProvisioned".into());
        scale_io.fs_type.get_or_insert_with(|| "xfs".into());
    }
    if let Some(template) = volume.ephemeral.as_mut().and_then(|e| e.volume_claim_template.as_mut()) {
        template.spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
    }
}

/// A claim (or claim template): `volumeMode: Filesystem`, `status.phase: Pending`, and the
/// `resources: {}` Go writes.
pub fn persistent_volume_claim(claim: &mut PersistentVolumeClaim) {
    let spec = claim.spec.get_or_insert_with(Default::default);
    spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
    spec.resources.get_or_insert_with(Default::default);
    let status = claim.status.get_or_insert_with(PersistentVolumeClaimStatus::default);
    status.phase.get_or_insert_with(|| "Pending".into());
}

/// `SetDefaults_Deployment` and its template's defaults.
pub fn deployment(deployment: &mut Deployment) {
    let spec = deployment.spec.get_or_insert_with(Default::default);
    spec.replicas.get_or_insert(1);
    let strategy = spec.strategy.get_or_insert_with(DeploymentStrategy::default);
    if *strategy.type_.get_or_insert_with(|| "RollingUpdate".into()) == "RollingUpdate" {
        let rolling = strategy.rolling_update.get_or_insert_with(RollingUpdateDeployment::default);
        rolling.max_unavailable.get_or_insert_with(|| IntOrString::String("25%".into()));
        rolling.max_surge.get_or_insert_with(|| IntOrString::String("25%".into()));
    }
    spec.revision_history_limit.get_or_insert(10);
    spec.progress_deadline_seconds.get_or_insert(600);
    pod_template(&mut spec.template);
}

/// `SetDefaults_DaemonSet` and its template's defaults.
pub fn daemon_set(daemon_set: &mut DaemonSet) {
    let spec = daemon_set.spec.get_or_insert_with(Default::default);
    let strategy = spec.update_strategy.get_or_insert_with(DaemonSetUpdateStrategy::default);
    if *strategy.type_.get_or_insert_with(|| "RollingUpdate".into()) == "RollingUpdate" {
        let rolling = strategy.rolling_update.get_or_insert_with(RollingUpdateDaemonSet::default);
        rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
        rolling.max_surge.get_or_insert(IntOrString::Int(0));
    }
    spec.revision_history_limit.get_or_insert(10);
    pod_template(&mut spec.template);
}

/// `SetDefaults_StatefulSet` (with `StatefulSetAutoDeletePVC` on, `MaxUnavailableStatefulSet`
/// off), its template's and its claim templates' defaults.
pub fn stateful_set(stateful_set: &mut StatefulSet) {
    let spec = stateful_set.spec.get_or_insert_with(Default::default);
    spec.pod_management_policy.get_or_insert_with(|| "OrderedReady".into());
    let strategy = spec.update_strategy.get_or_insert_with(StatefulSetUpdateStrategy::default);
    if strategy.type_.is_none() {
        strategy.type_ = Some("RollingUpdate".into());
        strategy.rolling_update.get_or_insert_with(RollingUpdateStatefulSetStrategy::default);
    }
    if strategy.type_.as_deref() == Some("RollingUpdate")
        && let Some(rolling) = strategy.rolling_update.as_mut()
    {
        rolling.partition.get_or_insert(0);
    }
    let retention = spec
        .persistent_volume_claim_retention_policy
        .get_or_insert_with(StatefulSetPersistentVolumeClaimRetentionPolicy::default);
    retention.when_deleted.get_or_insert_with(|| "Retain".into());
    retention.when_scaled.get_or_insert_with(|| "Retain".into());
    spec.replicas.get_or_insert(1);
    spec.revision_history_limit.get_or_insert(10);
    pod_template(&mut spec.template);
    for claim in spec.volume_claim_templates.iter_mut().flatten() {
        persistent_volume_claim(claim);
    }
}

/// `SetDefaults_ReplicaSet` and its template's defaults.
pub fn replica_set(replica_set: &mut ReplicaSet) {
    let spec = replica_set.spec.get_or_insert_with(Default::default);
    spec.replicas.get_or_insert(1);
    if let Some(template) = spec.template.as_mut() {
        pod_template(template);
    }
}

/// `SetDefaults_Job` (labels from the template when the job has none) and its template's
/// defaults.
pub fn job(job: &mut Job) {
    let template_labels = job.spec.as_ref().and_then(|spec| spec.template.metadata.as_ref()?.labels.clone());
    if let Some(labels) =
        template_labels.filter(|_| job.metadata.labels.as_ref().is_none_or(|l| l.is_empty()))
    {
        job.metadata.labels = Some(labels);
    }
    job_spec(job.spec.get_or_insert_with(Default::default));
}

fn job_spec(spec: &mut JobSpec) {
    if spec.completions.is_none() && spec.parallelism.is_none() {
        spec.completions = Some(1);
    }
    spec.parallelism.get_or_insert(1);
    if spec.backoff_limit.is_none() {
        spec.backoff_limit = Some(if spec.backoff_limit_per_index.is_some() { i32::MAX } else { 6 });
    }
    spec.completion_mode.get_or_insert_with(|| "NonIndexed".into());
    spec.suspend.get_or_insert(false);
    if spec.pod_replacement_policy.is_none() {
        let policy = if spec.pod_failure_policy.is_some() { "Failed" } else { "TerminatingOrFailed" };
        spec.pod_replacement_policy = Some(policy.into());
    }
    spec.manual_selector.get_or_insert(false);
    for rule in spec.pod_failure_policy.iter_mut().flat_map(|policy| policy.rules.iter_mut()) {
        for pattern in rule.on_pod_conditions.iter_mut().flatten() {
            if pattern.status.is_empty() {
                pattern.status = "True".into();
            }
        }
    }
    pod_template(&mut spec.template);
}

/// `SetDefaults_CronJob` and the job template's pod template defaults (the job template itself
/// gets none of the Job's: those come when the job is made from it).
pub fn cron_job(cron_job: &mut CronJob) {
    let spec = cron_job.spec.get_or_insert_with(Default::default);
    spec.concurrency_policy.get_or_insert_with(|| "Allow".into());
    spec.suspend.get_or_insert(false);
    spec.successful_jobs_history_limit.get_or_insert(3);
    spec.failed_jobs_history_limit.get_or_insert(1);
    // Go writes the job template's (non-pointer) metadata even when empty.
    spec.job_template.metadata.get_or_insert_with(Default::default);
    pod_template(&mut spec.job_template.spec.get_or_insert_with(Default::default).template);
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn typed<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn pods_get_what_kube_apiserver_adds_to_the_shared_pod_spec_defaults() {
        let mut spec: PodSpec = typed(json!({
            "hostNetwork": true,
            "containers": [{
                "name": "web", "image": "nginx:1.25",
                "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 9081}],
                "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}},
                "readinessProbe": {"grpc": {"port": 9000}},
                "env": [{"name": "F", "valueFrom": {"fileKeyRef": {"path": "p", "key": "k", "volumeName": "v"}}}],
            }],
            "initContainers": [{"name": "init", "image": "busybox", "ports": [{"containerPort": 7}]}],
            "ephemeralContainers": [{"name": "debug", "image": "busybox:1.36"}],
            "volumes": [{"name": "rbd", "rbd": {"monitors": ["m"], "image": "i"}}, {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
        }));
        pod(&mut spec);
        let value = serde_json::to_value(&spec).unwrap();
        let web = &value["containers"][0];
        assert_eq!(
            web["ports"],
            json!([
                {"containerPort": 80, "hostPort": 80, "protocol": "TCP"},
                {"containerPort": 81, "hostPort": 9081, "protocol": "TCP"},
            ])
        );
        assert_eq!(
            web["resources"],
            json!({"limits": {"cpu": "1"}, "requests": {"cpu": "1", "memory": "1Gi"}})
        );
        assert_eq!(web["readinessProbe"]["grpc"], json!({"port": 9000, "service": ""}));
        assert_eq!(web["env"][0]["valueFrom"]["fileKeyRef"]["optional"], false);
        assert_eq!(value["initContainers"][0]["ports"][0]["hostPort"], 7);
        assert_eq!(value["initContainers"][0]["resources"], json!({}));
        assert_eq!(value["initContainers"][0]["imagePullPolicy"], "Always");
        let debug = &value["ephemeralContainers"][0];
        assert_eq!(
            (&debug["imagePullPolicy"], &debug["terminationMessagePath"], &debug["terminationMessagePolicy"]),
            (&json!("IfNotPresent"), &json!("/dev/termination-log"), &json!("File"))
        );
        assert_eq!(value["volumes"][0]["rbd"]["pool"], "rbd");
        assert_eq!(value["volumes"][0]["rbd"]["keyring"], "/etc/ceph/keyring");
        assert_eq!(
            value["volumes"][1]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"],
            "Filesystem"
        );
        assert_eq!(value["enableServiceLinks"], true);
    }

    #[test]
    fn service_account_is_the_deprecated_spelling_of_service_account_name() {
        let cases = [
            (json!({}), None),
            (json!({"serviceAccount": "old"}), Some("old")),
            (json!({"serviceAccountName": "new"}), Some("new")),
            (json!({"serviceAccountName": "new", "serviceAccount": "old"}), Some("new")),
            (json!({"serviceAccountName": "", "serviceAccount": "old"}), Some("old")),
        ];
        for (given, expected) in cases {
            let mut spec: PodSpec = typed(json!({"containers": []}));
            let mut value = serde_json::to_value(&spec).unwrap();
            for (key, field) in given.as_object().unwrap() {
                value[key] = field.clone();
            }
            spec = typed(value);
            pod_spec(&mut spec);
            assert_eq!(spec.service_account_name.as_deref(), expected, "{given}");
            assert_eq!(spec.service_account.as_deref(), expected, "{given}");
        }
    }

    #[test]
    fn templates_get_pod_spec_defaults_but_not_the_pod_ones() {
        let mut template: PodTemplateSpec = typed(json!({
            "spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "a:1", "ports": [{"containerPort": 80}], "resources": {"limits": {"cpu": "1"}}}]},
        }));
        pod_template(&mut template);
        let value = serde_json::to_value(&template).unwrap();
        let container = &value["spec"]["containers"][0];
        assert_eq!(container["ports"][0], json!({"containerPort": 80, "protocol": "TCP"}), "no host port");
        assert_eq!(container["resources"], json!({"limits": {"cpu": "1"}}), "no requests from limits");
        assert!(value["spec"].get("enableServiceLinks").is_none());
        assert_eq!(value["spec"]["dnsPolicy"], "ClusterFirst");
    }

    #[test]
    fn workloads_get_their_strategy_and_history_defaults() {
        let template = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "a:1"}]}});
        let mut deployment: Deployment =
            typed(json!({"spec": {"strategy": {"type": "RollingUpdate"}, "template": template}}));
        super::deployment(&mut deployment);
        let spec = serde_json::to_value(deployment.spec.unwrap()).unwrap();
        assert_eq!(spec["strategy"]["rollingUpdate"], json!({"maxSurge": "25%", "maxUnavailable": "25%"}));
        assert_eq!((&spec["replicas"], &spec["revisionHistoryLimit"]), (&json!(1), &json!(10)));

        let mut recreate: Deployment =
            typed(json!({"spec": {"strategy": {"type": "Recreate"}, "template": template}}));
        super::deployment(&mut recreate);
        assert!(recreate.spec.unwrap().strategy.unwrap().rolling_update.is_none());

        let mut set: StatefulSet = typed(json!({
            "spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {}}, "template": template,
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]},
        }));
        stateful_set(&mut set);
        let spec = serde_json::to_value(set.spec.unwrap()).unwrap();
        assert_eq!(spec["updateStrategy"]["rollingUpdate"], json!({"partition": 0}));
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        assert_eq!(spec["volumeClaimTemplates"][0]["status"], json!({"phase": "Pending"}));
        assert_eq!(spec["volumeClaimTemplates"][0]["spec"]["volumeMode"], "Filesystem");
        assert_eq!(spec["podManagementPolicy"], "OrderedReady");

        let mut replica_set: ReplicaSet = typed(json!({"spec": {"selector": {}, "template": template}}));
        super::replica_set(&mut replica_set);
        let spec = serde_json::to_value(replica_set.spec.unwrap()).unwrap();
        assert_eq!(spec["replicas"], 1);
        assert!(spec.get("revisionHistoryLimit").is_none(), "ReplicaSets have no history limit");
    }

    #[test]
    fn jobs_default_completions_only_when_neither_count_is_set() {
        let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "a:1"}]}});
        let cases = [
            (json!({}), (Some(1), Some(1))),
            (json!({"parallelism": 3}), (None, Some(3))),
            (json!({"completions": 4}), (Some(4), Some(1))),
        ];
        for (counts, (completions, parallelism)) in cases {
            let mut spec = counts.clone();
            spec["template"] = template.clone();
            let mut job: Job = typed(json!({"metadata": {"name": "j"}, "spec": spec}));
            super::job(&mut job);
            let spec = job.spec.as_ref().unwrap();
            assert_eq!((spec.completions, spec.parallelism), (completions, parallelism), "{counts}");
            assert_eq!(spec.pod_replacement_policy.as_deref(), Some("TerminatingOrFailed"));
            assert_eq!(
                (spec.backoff_limit, spec.manual_selector, spec.suspend),
                (Some(6), Some(false), Some(false))
            );
            assert_eq!(job.metadata.labels.as_ref().unwrap()["app"], "x", "labels from the template");
        }
        let mut cron: CronJob = typed(
            json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}),
        );
        cron_job(&mut cron);
        let spec = serde_json::to_value(cron.spec.unwrap()).unwrap();
        assert_eq!(spec["concurrencyPolicy"], "Allow");
        assert_eq!(
            (&spec["successfulJobsHistoryLimit"], &spec["failedJobsHistoryLimit"]),
            (&json!(3), &json!(1))
        );
        assert!(spec["jobTemplate"]["spec"].get("completions").is_none(), "no job defaults in the template");
        assert_eq!(spec["jobTemplate"]["metadata"], json!({}));
        assert_eq!(spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["resources"], json!({}));
    }
}
