//! Upstream kruise-manager (v1.9.0, built by `integration/upstream/build.sh`) as a process
//! against any cluster, run out of cluster the way its Helm chart's pieces allow: its two
//! webhook configurations made beforehand from the module's own manifests (names prefixed
//! `kruise-`, the chart's namespace and object selectors), namespaces `kruise-system` and
//! `kruise-daemon-config`, and its `WEBHOOK_HOST` / `WEBHOOK_PORT` / `WEBHOOK_CERT_DIR` /
//! `POD_NAMESPACE` environment, so that it registers its webhooks by URL on loopback.

use std::{
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    time::Duration,
};

use k8s_openapi::api::{
    admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
    core::v1::Namespace,
};
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::{HarnessError, supervisor::Supervisor};

/// The namespace upstream runs in (Lease, webhook certificate Secret).
pub const NAMESPACE: &str = "kruise-system";
/// The namespace of its daemon configuration.
pub const DAEMON_CONFIG_NAMESPACE: &str = "kruise-daemon-config";

/// How upstream's manager is started.
#[derive(Clone, Debug)]
pub struct UpstreamSpec {
    /// `--feature-gates`.
    pub feature_gates: String,
    /// `--rest-config-qps` / `--rest-config-burst` (upstream's defaults are 30 / 50).
    pub client_limits: Option<(u32, u32)>,
    /// `--enable-leader-election`.
    pub leader_elect: bool,
    /// `--v` (klog verbosity).
    pub verbosity: u8,
}

impl Default for UpstreamSpec {
    fn default() -> Self {
        Self { feature_gates: String::new(), client_limits: None, leader_elect: false, verbosity: 2 }
    }
}

/// A running upstream kruise-manager.
pub struct UpstreamManager {
    health_addr: SocketAddr,
    metrics_addr: SocketAddr,
    // Last: dropping it kills the process.
    supervisor: Supervisor,
}

impl UpstreamManager {
    /// Prepares the cluster (namespaces, webhook configurations) and starts `kruise-manager`
    /// from `upstream_dir` with `kubeconfig`, then waits (up to 2 minutes) until its `/readyz`
    /// answers 200: caches synced, webhook certificates written and its configurations patched.
    pub async fn start(
        client: &Client,
        kubeconfig: &Path,
        upstream_dir: &Path,
        spec: &UpstreamSpec,
    ) -> Result<Self, HarnessError> {
        prepare_cluster(client, upstream_dir).await?;
        let mut supervisor = Supervisor::new("kruise-upstream-manager-", "upstream kruise-manager")?;
        let health_addr = free_loopback_addr()?;
        let metrics_addr = free_loopback_addr()?;
        let webhook_port = free_loopback_addr()?.port();
        let certs = supervisor.path().join("certs");
        let mut args = vec![
            format!("--metrics-addr={metrics_addr}"),
            format!("--health-probe-addr={health_addr}"),
            format!("--enable-leader-election={}", spec.leader_elect),
            "--enable-pprof=false".into(),
            format!("--v={}", spec.verbosity),
        ];
        if !spec.feature_gates.is_empty() {
            args.push(format!("--feature-gates={}", spec.feature_gates));
        }
        if let Some((qps, burst)) = spec.client_limits {
            args.push(format!("--rest-config-qps={qps}"));
            args.push(format!("--rest-config-burst={burst}"));
        }
        let env = [
            ("KUBECONFIG", kubeconfig.display().to_string()),
            ("POD_NAMESPACE", NAMESPACE.to_string()),
            ("WEBHOOK_HOST", "127.0.0.1".to_string()),
            ("WEBHOOK_PORT", webhook_port.to_string()),
            ("WEBHOOK_CERT_DIR", certs.display().to_string()),
        ]
        .map(|(key, value)| (key.to_string(), value));
        supervisor.spawn_with_env("kruise-manager", &upstream_dir.join("kruise-manager"), &args, &env)?;
        let http = reqwest::Client::new();
        let url = format!("http://{health_addr}/readyz");
        let waited = supervisor
            .wait_for("upstream kruise-manager /readyz", Duration::from_secs(120), || {
                let (http, url) = (http.clone(), url.clone());
                async move {
                    let response = http.get(&url).send().await.map_err(|error| error.to_string())?;
                    if response.status().is_success() {
                        Ok(())
                    } else {
                        Err(format!(
                            "HTTP {}: {}",
                            response.status(),
                            response.text().await.unwrap_or_default()
                        ))
                    }
                }
            })
            .await;
        if let Err(error) = waited {
            supervisor.keep_artifacts();
            return Err(error);
        }
        Ok(Self { health_addr, metrics_addr, supervisor })
    }

    /// Its process id (for CPU and memory readings).
    pub fn pid(&self) -> Option<u32> {
        self.supervisor.processes.first().map(|process| process.child.id())
    }

    /// Its Prometheus endpoint.
    pub fn metrics_url(&self) -> String {
        format!("http://{}/metrics", self.metrics_addr)
    }

    /// Its health endpoint.
    pub fn health_addr(&self) -> SocketAddr {
        self.health_addr
    }

    /// Its log.
    pub fn log(&self) -> PathBuf {
        self.supervisor.log_path("kruise-manager")
    }

    /// An error when it has exited.
    pub fn check_alive(&mut self) -> Result<(), HarnessError> {
        self.supervisor.check_alive()
    }

    /// Keeps its directory (log, certificates) when dropped.
    pub fn keep_artifacts(&self) {
        self.supervisor.keep_artifacts();
    }

    /// Stops it (SIGTERM, then SIGKILL after 10 s) and waits until it is gone.
    pub async fn stop(mut self) {
        if let Some(process) = self.supervisor.processes.first() {
            let _ =
                std::process::Command::new("kill").args(["-TERM", &process.child.id().to_string()]).status();
        }
        let _ = self.supervisor.wait_exit("kruise-manager", Duration::from_secs(10)).await;
    }
}

/// Namespaces and the two webhook configurations upstream's chart makes before its manager starts.
pub async fn prepare_cluster(client: &Client, upstream_dir: &Path) -> Result<(), HarnessError> {
    for name in [NAMESPACE, DAEMON_CONFIG_NAMESPACE] {
        ensure_namespace(client, name).await?;
    }
    let manifests = read(&upstream_dir.join("webhook-manifests.yaml"))?;
    let patches = read(&upstream_dir.join("webhook-patches.yaml")).unwrap_or_default();
    for mut document in webhook_configurations(&manifests, &patches)? {
        let kind = document["kind"].as_str().unwrap_or_default().to_string();
        let name = document["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let params = PatchParams::apply("kruise-upstream-harness").force();
        document["metadata"]["managedFields"] = Value::Null;
        match kind.as_str() {
            "MutatingWebhookConfiguration" => {
                let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
                api.patch(&name, &params, &Patch::Apply(&document)).await?;
            }
            "ValidatingWebhookConfiguration" => {
                let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
                api.patch(&name, &params, &Patch::Apply(&document)).await?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, HarnessError> {
    std::fs::read_to_string(path).map_err(HarnessError::io(format!("reading {}", path.display())))
}

/// The chart's webhook configurations from controller-gen's manifests (pure): names prefixed
/// `kruise-`, services `kruise-webhook-service` in `kruise-system`, and the chart's selector
/// patches merged into the webhook of the same name.
pub fn webhook_configurations(manifests: &str, patches: &str) -> Result<Vec<Value>, HarnessError> {
    let patches = yaml_documents(patches)?;
    let mut out = Vec::new();
    for mut document in yaml_documents(manifests)? {
        let kind = document["kind"].as_str().unwrap_or_default().to_string();
        if !kind.ends_with("WebhookConfiguration") {
            continue;
        }
        let base_name = document["metadata"]["name"].as_str().unwrap_or_default().to_string();
        document["metadata"]["name"] = json!(format!("kruise-{base_name}"));
        let patch =
            patches.iter().find(|p| p["kind"] == json!(kind) && p["metadata"]["name"] == json!(base_name));
        if let Some(webhooks) = document["webhooks"].as_array_mut() {
            for webhook in webhooks {
                if let Some(service) = webhook.pointer_mut("/clientConfig/service") {
                    service["name"] = json!("kruise-webhook-service");
                    service["namespace"] = json!(NAMESPACE);
                }
                let own = webhook["name"].clone();
                let extra = patch
                    .and_then(|p| p["webhooks"].as_array())
                    .and_then(|list| list.iter().find(|w| w["name"] == own));
                if let (Some(extra), Some(target)) =
                    (extra.and_then(Value::as_object), webhook.as_object_mut())
                {
                    for (key, value) in extra {
                        target.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        out.push(document);
    }
    Ok(out)
}

fn yaml_documents(text: &str) -> Result<Vec<Value>, HarnessError> {
    let mut out = Vec::new();
    for document in serde_yaml::Deserializer::from_str(text) {
        let value: Value = serde::Deserialize::deserialize(document)?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

async fn ensure_namespace(client: &Client, name: &str) -> Result<(), HarnessError> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if namespaces.get_opt(name).await?.is_some() {
        return Ok(());
    }
    let namespace = Namespace {
        metadata: kube::api::ObjectMeta { name: Some(name.to_string()), ..Default::default() },
        ..Default::default()
    };
    match namespaces.create(&PostParams::default(), &namespace).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(response)) if response.code == 409 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// A loopback address with a port free right now (bound, read, released).
fn free_loopback_addr() -> Result<SocketAddr, HarnessError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(HarnessError::io("picking a free port"))?;
    listener.local_addr().map_err(HarnessError::io("reading the free port"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_get_the_charts_names_services_and_selectors() {
        let manifests = r#"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: mpod.kb.io
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-pod}
- name: mcloneset.kb.io
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-cloneset}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks: []
"#;
        let patches = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: mpod.kb.io
  namespaceSelector:
    matchExpressions: [{key: control-plane, operator: DoesNotExist}]
"#;
        let out = webhook_configurations(manifests, patches).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0]["metadata"]["name"], "kruise-mutating-webhook-configuration");
        assert_eq!(out[1]["metadata"]["name"], "kruise-validating-webhook-configuration");
        let pod = &out[0]["webhooks"][0];
        assert_eq!(pod["clientConfig"]["service"]["name"], "kruise-webhook-service");
        assert_eq!(pod["clientConfig"]["service"]["namespace"], "kruise-system");
        assert_eq!(pod["namespaceSelector"]["matchExpressions"][0]["key"], "control-plane");
        assert!(out[0]["webhooks"][1].get("namespaceSelector").is_none());
    }
}
