//! `kruise up` as a process: the cluster an upstream e2e group runs against, on free loopback
//! ports in a temporary directory, killed with its process group when dropped.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use crate::{HarnessError, supervisor::Supervisor};

/// How `kruise up` is started.
#[derive(Clone, Debug)]
pub struct UpOptions {
    /// Simulated nodes.
    pub nodes: u32,
    /// The manager's `--feature-gates`.
    pub feature_gates: String,
}

impl Default for UpOptions {
    /// Three nodes (upstream's kind cluster has three workers) and upstream e2e's gates.
    fn default() -> Self {
        Self { nodes: 3, feature_gates: "AllAlpha=true,AllBeta=true".into() }
    }
}

/// The StorageClasses upstream's e2e set-up makes (`tools/hack/csi-driver-host-path`): name and
/// `allowVolumeExpansion`.
pub const EXPANSION_CLASSES: [(&str, bool); 2] =
    [("allow-volume-expansion", true), ("disallow-volume-expansion", false)];

/// A running `kruise up`.
pub struct KruiseUp {
    kubeconfig: PathBuf,
    endpoints: serde_json::Value,
    // Last: dropping it kills the process and removes (or keeps) the directory.
    supervisor: Supervisor,
}

/// The key of the WorkloadSpread whitelist in `kruise-configuration`.
const WS_WHITELIST_KEY: &str = "WorkloadSpread_Watch_Custom_Workload_WhiteList";
/// Upstream's `test/kruise-e2e-config.yaml` whitelist, as written there.
const WS_WHITELIST: &str = r#"{
  "workloads": [
    {
      "Group": "kubeflow.org",
      "Version": "v1",
      "Kind": "TFJob",
      "ReplicasPath": "spec.tfReplicaSpecs.MASTER.replicas"
    },
    {
      "Group": "apps.kruise.io",
      "Version": "v1alpha1",
      "Kind": "DaemonSet"
    }
  ]
}
"#;

impl KruiseUp {
    /// Starts `binary up` and waits (up to 3 minutes) until it has written its endpoints, which
    /// it does once nodes, manager, daemons and the service API are up.
    pub async fn start(binary: &Path, options: &UpOptions) -> Result<Self, HarnessError> {
        let mut supervisor = Supervisor::new("kruise-up-", "kruise up")?;
        let data = supervisor.path().join("data");
        let any_port = "127.0.0.1:0".to_string();
        let args = vec![
            "up".to_string(),
            "--data-dir".into(),
            data.display().to_string(),
            "--nodes".into(),
            options.nodes.to_string(),
            "--apiserver-addr".into(),
            any_port.clone(),
            "--rest-addr".into(),
            any_port.clone(),
            "--grpc-addr".into(),
            any_port,
            "--feature-gates".into(),
            options.feature_gates.clone(),
        ];
        let log = std::env::var("KRUISE_UP_LOG").unwrap_or_else(|_| "info".into());
        supervisor.spawn_with_env("kruise-up", binary, &args, &[("RUST_LOG".into(), log)])?;
        let endpoints_file = data.join("endpoints.json");
        let probe_file = endpoints_file.clone();
        let waited = supervisor
            .wait_for("kruise up to write endpoints.json", Duration::from_secs(180), move || {
                let file = probe_file.clone();
                async move {
                    let text = std::fs::read_to_string(&file).map_err(|error| error.to_string())?;
                    serde_json::from_str::<serde_json::Value>(&text)
                        .map(|_| ())
                        .map_err(|error| error.to_string())
                }
            })
            .await;
        if let Err(error) = waited {
            supervisor.keep_artifacts();
            return Err(error);
        }
        let text = std::fs::read_to_string(&endpoints_file)
            .map_err(HarnessError::io(format!("reading {}", endpoints_file.display())))?;
        let endpoints = serde_json::from_str(&text).unwrap_or_default();
        let up = Self { kubeconfig: data.join("kubeconfig"), endpoints, supervisor };
        if let Err(error) = up.install_expansion_classes().await {
            up.keep_artifacts();
            return Err(error);
        }
        if let Err(error) = up.install_e2e_config().await {
            up.keep_artifacts();
            return Err(error);
        }
        Ok(up)
    }

    /// What upstream's CI installs before its e2e run (`make install-csi`: a CSI host-path
    /// driver and two StorageClasses of it, one allowing volume expansion and one not), with the
    /// simulated nodes' provisioner in the driver's place. The VolumeExpansion specs look for
    /// these two classes by name.
    async fn install_expansion_classes(&self) -> Result<(), HarnessError> {
        use k8s_openapi::api::storage::v1::StorageClass;
        use kube::api::{Api, PostParams};
        let client = crate::real::client_from_kubeconfig(&self.kubeconfig).await?;
        let classes: Api<StorageClass> = Api::all(client);
        for (name, allow) in EXPANSION_CLASSES {
            let class = StorageClass {
                metadata: kube::api::ObjectMeta { name: Some(name.into()), ..Default::default() },
                provisioner: kruise_controlplane::controllers::volume_binder::SIMULATED_PROVISIONER.into(),
                reclaim_policy: Some("Delete".into()),
                volume_binding_mode: Some("Immediate".into()),
                allow_volume_expansion: Some(allow),
                ..Default::default()
            };
            match classes.create(&PostParams::default(), &class).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 409 => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(())
    }

    /// The rest of what upstream's CI installs (`ENABLE_E2E_CONFIG=true make install-kruise` and
    /// `tools/hack/run-kruise-e2e-test.sh`): `kruise-system/kruise-configuration` with the
    /// WorkloadSpread custom-workload whitelist of `test/kruise-e2e-config.yaml` (Kubeflow's
    /// TFJob and Advanced DaemonSet), and a `tfjobs.kubeflow.org` CRD (upstream applies
    /// Kubeflow's; this one keeps every field, which is all the specs need: they create TFJobs
    /// and their pods themselves).
    async fn install_e2e_config(&self) -> Result<(), HarnessError> {
        use k8s_openapi::{
            api::core::v1::{ConfigMap, Namespace},
            apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        };
        use kube::api::{Api, Patch, PatchParams, PostParams};
        let client = crate::real::client_from_kubeconfig(&self.kubeconfig).await?;
        let namespace: Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "kruise-system"}}))
                .map_err(|error| HarnessError::Kube(kube::Error::SerdeError(error)))?;
        match Api::<Namespace>::all(client.clone()).create(&PostParams::default(), &namespace).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => return Err(error.into()),
        }
        let config = serde_json::json!({"data": {WS_WHITELIST_KEY: WS_WHITELIST}});
        let configs: Api<ConfigMap> = Api::namespaced(client.clone(), "kruise-system");
        match configs.get_opt("kruise-configuration").await? {
            Some(_) => {
                configs
                    .patch("kruise-configuration", &PatchParams::default(), &Patch::Merge(&config))
                    .await?;
            }
            None => {
                let mut object = config;
                object["metadata"] =
                    serde_json::json!({"name": "kruise-configuration", "namespace": "kruise-system"});
                let object: ConfigMap = serde_json::from_value(object)
                    .map_err(|error| HarnessError::Kube(kube::Error::SerdeError(error)))?;
                configs.create(&PostParams::default(), &object).await?;
            }
        }
        let crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "tfjobs.kubeflow.org"},
            "spec": {
                "group": "kubeflow.org",
                "names": {"kind": "TFJob", "listKind": "TFJobList", "plural": "tfjobs", "singular": "tfjob"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
            }
        }))
        .map_err(|error| HarnessError::Kube(kube::Error::SerdeError(error)))?;
        match Api::<CustomResourceDefinition>::all(client).create(&PostParams::default(), &crd).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// The kubeconfig of its API server.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// What `endpoints.json` says (API server, manager, daemons, service API).
    pub fn endpoints(&self) -> &serde_json::Value {
        &self.endpoints
    }

    /// The temporary directory (data, `kruise-up.log`).
    pub fn dir(&self) -> &Path {
        self.supervisor.path()
    }

    /// Its log.
    pub fn log(&self) -> PathBuf {
        self.supervisor.log_path("kruise-up")
    }

    /// An error when the process has exited.
    pub fn check_alive(&mut self) -> Result<(), HarnessError> {
        self.supervisor.check_alive()
    }

    /// Keeps the directory (logs, data) when dropped.
    pub fn keep_artifacts(&self) {
        self.supervisor.keep_artifacts();
    }
}
