//! One handle over both tiers, so that a scenario is written once and runs on the embedded
//! control plane and on a real kube-apiserver.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use serde::Serialize;

use crate::{HarnessError, real::RealControlPlane};

/// Which API server a [`Cluster`] runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The in-process API server of `kruise-controlplane`.
    Embedded,
    /// etcd, kube-apiserver, kube-controller-manager and kube-scheduler as local processes.
    Real,
}

impl Tier {
    /// Both tiers, embedded first.
    pub const ALL: [Tier; 2] = [Tier::Embedded, Tier::Real];

    /// `embedded` or `real`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Embedded => "embedded",
            Tier::Real => "real",
        }
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A running control plane of either tier.
pub struct Cluster {
    backend: Backend,
    kubeconfig: PathBuf,
    url: String,
    ca_pem: Option<String>,
    token: Option<String>,
    client: kube::Client,
}

enum Backend {
    Embedded { server: Box<ApiServer>, _dir: tempfile::TempDir },
    Real(Box<RealControlPlane>),
}

/// The result of applying one CRD.
#[derive(Clone, Debug, Serialize)]
pub struct AppliedCrd {
    /// The CRD's name (`<plural>.<group>`).
    pub name: String,
    /// The HTTP status of the server-side apply.
    pub status: u16,
    /// The texts of the `Warning` headers of the response.
    pub warnings: Vec<String>,
}

impl Cluster {
    /// Starts a cluster of the given tier.
    pub async fn start(tier: Tier) -> Result<Self, HarnessError> {
        match tier {
            Tier::Embedded => Self::embedded().await,
            Tier::Real => Self::real().await,
        }
    }

    /// The embedded API server, in process, over plain HTTP on loopback.
    pub async fn embedded() -> Result<Self, HarnessError> {
        let dir = tempfile::Builder::new()
            .prefix("kruise-it-embedded-")
            .tempdir()
            .map_err(HarnessError::io("creating the temporary directory"))?;
        let kubeconfig = dir.path().join("kubeconfig");
        let server = ApiServer::start(ApiServerConfig {
            kubeconfig_path: Some(kubeconfig.clone()),
            ..Default::default()
        })
        .await?;
        let client = crate::real::client_from_kubeconfig(&kubeconfig).await?;
        Ok(Self {
            url: server.url.clone(),
            ca_pem: server.ca_pem.clone(),
            token: None,
            kubeconfig,
            client,
            backend: Backend::Embedded { server: Box::new(server), _dir: dir },
        })
    }

    /// A real control plane ([`RealControlPlane::start`]).
    pub async fn real() -> Result<Self, HarnessError> {
        let real = RealControlPlane::start().await?;
        Ok(Self {
            kubeconfig: real.kubeconfig_path().to_path_buf(),
            url: real.url().to_string(),
            ca_pem: Some(real.ca_pem().to_string()),
            token: Some(real.token().to_string()),
            client: real.client(),
            backend: Backend::Real(Box::new(real)),
        })
    }

    /// The tier this cluster runs on.
    pub fn tier(&self) -> crate::Tier {
        match self.backend {
            Backend::Embedded { .. } => Tier::Embedded,
            Backend::Real(_) => Tier::Real,
        }
    }

    /// A kube-rs client with full rights.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A kubeconfig for kubectl and other clients.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The API server's base URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The CA to trust when the API server serves HTTPS.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The bearer token requests need, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The real control plane under this cluster, on the real tier.
    pub fn real_control_plane(&self) -> Option<&RealControlPlane> {
        match &self.backend {
            Backend::Real(real) => Some(real),
            Backend::Embedded { .. } => None,
        }
    }

    /// A plain HTTP client that trusts the cluster's CA and sends its token: for what kube-rs
    /// does not expose, such as response headers.
    pub fn http(&self) -> Result<reqwest::Client, HarnessError> {
        let mut builder = reqwest::Client::builder().timeout(Duration::from_secs(30));
        if let Some(ca) = &self.ca_pem {
            builder = builder.add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes())?);
        }
        if let Some(token) = &self.token {
            let mut headers = reqwest::header::HeaderMap::new();
            let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))?;
            headers.insert(reqwest::header::AUTHORIZATION, value);
            builder = builder.default_headers(headers);
        }
        Ok(builder.build()?)
    }

    /// Applies every Kruise CRD (`kruise_crds::crd::all_crds()`, the documents `kruise crds`
    /// prints) with server-side apply and `fieldValidation=Warn`, collecting each response's
    /// `Warning` headers, then waits until every CRD is `Established`.
    ///
    /// The CRDs of kinds with more than one version use conversion strategy `Webhook` with a
    /// `service` reference to the manager's webhook service, which nothing here provides: the
    /// manager, when it starts, patches each CRD's conversion `clientConfig` with its CA bundle
    /// and the address it serves on. Until then, requests at the storage version work and requests
    /// that need a conversion fail.
    pub async fn install_crds(&self) -> Result<Vec<AppliedCrd>, HarnessError> {
        let http = self.http()?;
        let crds = kruise_crds::crd::all_crds()?;
        let mut applied = Vec::with_capacity(crds.len());
        for crd in &crds {
            applied.push(self.apply_crd(&http, crd).await?);
        }
        let api: kube::Api<CustomResourceDefinition> = kube::Api::all(self.client());
        let deadline = Instant::now() + Duration::from_secs(60);
        for crd in &applied {
            loop {
                let current = api.get(&crd.name).await?;
                let established =
                    current.status.as_ref().and_then(|status| status.conditions.as_ref()).is_some_and(
                        |conditions| {
                            conditions.iter().any(|c| c.type_ == "Established" && c.status == "True")
                        },
                    );
                if established {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(HarnessError::Timeout {
                        what: format!("CRD {} to be Established", crd.name),
                        waited: Duration::from_secs(60),
                        last: format!("{:?}", current.status),
                    });
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        Ok(applied)
    }

    async fn apply_crd(
        &self,
        http: &reqwest::Client,
        crd: &CustomResourceDefinition,
    ) -> Result<AppliedCrd, HarnessError> {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let body = serde_yaml::to_string(crd)?;
        let url = format!(
            "{}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}?fieldManager=kruise-integration&force=true&fieldValidation=Warn",
            self.url
        );
        let response = http
            .patch(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/apply-patch+yaml")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body)
            .send()
            .await?;
        let status = response.status().as_u16();
        let warnings = warning_texts(response.headers());
        let text = response.text().await?;
        if !(200..300).contains(&status) {
            return Err(HarnessError::Rejected { what: format!("applying CRD {name}"), status, body: text });
        }
        Ok(AppliedCrd { name, status, warnings })
    }

    /// Keeps the real tier's directory (logs of every process) when the cluster goes away.
    pub fn keep_artifacts(&self) {
        if let Backend::Real(real) = &self.backend {
            real.keep_artifacts();
        }
    }

    /// Stops the cluster: the embedded server's tasks end, the real processes are killed.
    pub async fn shutdown(self) {
        match self.backend {
            Backend::Embedded { server, _dir } => server.shutdown().await,
            Backend::Real(real) => drop(real),
        }
    }
}

/// The texts of `Warning: 299 - "text"` headers (RFC 7234 form, as kube-apiserver sends them).
pub fn warning_texts(headers: &reqwest::header::HeaderMap) -> Vec<String> {
    headers
        .get_all(reqwest::header::WARNING)
        .iter()
        .map(|value| {
            let raw = String::from_utf8_lossy(value.as_bytes()).to_string();
            match (raw.find('"'), raw.rfind('"')) {
                (Some(start), Some(end)) if end > start => raw[start + 1..end].replace("\\\"", "\""),
                _ => raw,
            }
        })
        .collect()
}
