//! A real Kubernetes control plane as local processes: etcd, kube-apiserver,
//! kube-controller-manager and kube-scheduler on free loopback ports, in a temporary directory,
//! with flags and certificates like controller-runtime's envtest (plus the controller manager
//! and the scheduler, so garbage collection, namespace deletion and scheduling work).
//!
//! Every process runs in its own process group and is killed (the whole group) when the
//! [`RealControlPlane`] is dropped, also while a test panics. A small `sh` reaper holds the read
//! end of a pipe whose write end only this process holds: if the test process dies without
//! running destructors (killed, Ctrl-C), the pipe closes and the reaper kills the groups.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use base64::Engine;
use k8s_openapi::api::core::v1::ServiceAccount;

use crate::{HarnessError, certs, supervisor::Supervisor};

/// Kubernetes version `integration/k8s/build.sh` pins.
pub const KUBE_VERSION: &str = "1.34.4";
/// etcd version `integration/k8s/build.sh` pins.
pub const ETCD_VERSION: &str = "v3.6.14";
/// The binaries the harness starts.
pub const REQUIRED_BINARIES: [&str; 4] =
    ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];
/// Environment variable naming the directory of the binaries (overrides the cache).
pub const BIN_ENV: &str = "KRUISE_K8S_BIN";

/// A running etcd + kube-apiserver + kube-controller-manager + kube-scheduler.
pub struct RealControlPlane {
    url: String,
    ca_pem: String,
    token: String,
    kubeconfig: PathBuf,
    client: kube::Client,
    // Last: dropping it kills the processes and removes (or keeps) the directory.
    supervisor: Supervisor,
}

impl std::fmt::Debug for RealControlPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealControlPlane").field("url", &self.url).field("dir", &self.dir()).finish()
    }
}

impl RealControlPlane {
    /// The directory holding the binaries: `$KRUISE_K8S_BIN`, else the cache `build.sh` fills
    /// (`$KRUISE_IT_CACHE` or `~/.cache/kruise-it`, then `bin-k8s<version>-etcd<version>`).
    pub fn binary_dir() -> Result<PathBuf, HarnessError> {
        if let Some(dir) = std::env::var_os(BIN_ENV) {
            return Ok(PathBuf::from(dir));
        }
        let cache = match std::env::var_os("KRUISE_IT_CACHE") {
            Some(cache) => PathBuf::from(cache),
            None => PathBuf::from(std::env::var_os("HOME").ok_or(HarnessError::NoBinaryDir)?)
                .join(".cache/kruise-it"),
        };
        Ok(cache.join(format!("bin-k8s{KUBE_VERSION}-etcd{ETCD_VERSION}")))
    }

    /// Whether every required binary is present in [`Self::binary_dir`].
    pub fn available() -> bool {
        Self::binary_dir().is_ok_and(|dir| missing_binaries(&dir).is_empty())
    }

    /// Starts a control plane from the binaries in [`Self::binary_dir`] and waits until it is ready.
    pub async fn start() -> Result<Self, HarnessError> {
        Self::start_from(&Self::binary_dir()?).await
    }

    /// Starts a control plane from the binaries in `bin` and waits until kube-apiserver's
    /// `/readyz` passes, both managers' `/healthz` pass and the controller manager has created
    /// the `default` service account.
    pub async fn start_from(bin: &Path) -> Result<Self, HarnessError> {
        let missing = missing_binaries(bin);
        if !missing.is_empty() {
            return Err(HarnessError::BinariesMissing { dir: bin.to_path_buf(), missing });
        }
        let mut attempt = 1;
        loop {
            let mut supervisor = Supervisor::new("kruise-it-real-", "real control plane")?;
            match Self::boot(bin, &mut supervisor).await {
                Ok((url, ca_pem, token, kubeconfig, client)) => {
                    return Ok(Self { url, ca_pem, token, kubeconfig, client, supervisor });
                }
                // The ports are picked free and released before the components bind them; a
                // process starting meanwhile (the other tier, another test) can take one.
                Err(error) if attempt < BOOT_ATTEMPTS && lost_a_port(&error.to_string()) => {
                    eprintln!(
                        "real control plane: a port was taken before it was bound ({error}); starting again"
                    );
                    drop(supervisor);
                    attempt += 1;
                }
                Err(error) => {
                    supervisor.keep_artifacts();
                    return Err(error);
                }
            }
        }
    }

    async fn boot(
        bin: &Path,
        supervisor: &mut Supervisor,
    ) -> Result<(String, String, String, PathBuf, kube::Client), HarnessError> {
        let dir = supervisor.path().to_path_buf();
        let certs = certs::generate()?;
        let file = |name: &str, contents: &str| -> Result<String, HarnessError> {
            let path = dir.join(name);
            std::fs::write(&path, contents)
                .map_err(HarnessError::io(format!("writing {}", path.display())))?;
            Ok(path.display().to_string())
        };
        let ca_crt = file("ca.crt", &certs.ca_cert)?;
        let ca_key = file("ca.key", &certs.ca_key)?;
        let serving_crt = file("serving.crt", &certs.serving_cert)?;
        let serving_key = file("serving.key", &certs.serving_key)?;
        let sa_key = file("sa.key", &certs.sa_key)?;
        let sa_pub = file("sa.pub", &certs.sa_public)?;
        let token = uuid::Uuid::new_v4().simple().to_string();
        let tokens = file("tokens.csv", &format!("{token},admin,admin-uid,\"system:masters\"\n"))?;

        let [etcd_port, peer_port, api_port, kcm_port, scheduler_port] = free_ports()?;
        let url = format!("https://127.0.0.1:{api_port}");
        let kubeconfig_path = dir.join("kubeconfig");
        let kubeconfig_text = kubeconfig(&url, &certs.ca_cert, &token);
        std::fs::write(&kubeconfig_path, kubeconfig_text)
            .map_err(HarnessError::io("writing the kubeconfig"))?;
        let kubeconfig = kubeconfig_path.display().to_string();
        let http = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(certs.ca_cert.as_bytes())?)
            .timeout(Duration::from_secs(5))
            .build()?;

        // etcd
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        supervisor.spawn(
            "etcd",
            &bin.join("etcd"),
            &[
                "--name=default".to_string(),
                format!("--data-dir={}", dir.join("etcd").display()),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls={peer_url}"),
                format!("--initial-advertise-peer-urls={peer_url}"),
                format!("--initial-cluster=default={peer_url}"),
                "--unsafe-no-fsync=true".to_string(),
            ],
        )?;
        let health = &format!("{etcd_url}/health");
        let http = &http;
        supervisor
            .wait_for("etcd /health", Duration::from_secs(30), move || async move {
                let body = get_text(http, health, None).await?;
                if body.contains("\"health\":\"true\"") { Ok(()) } else { Err(body) }
            })
            .await?;

        // kube-apiserver
        supervisor.spawn(
            "kube-apiserver",
            &bin.join("kube-apiserver"),
            &[
                format!("--etcd-servers={etcd_url}"),
                "--bind-address=127.0.0.1".to_string(),
                "--advertise-address=127.0.0.1".to_string(),
                format!("--secure-port={api_port}"),
                format!("--tls-cert-file={serving_crt}"),
                format!("--tls-private-key-file={serving_key}"),
                format!("--client-ca-file={ca_crt}"),
                format!("--token-auth-file={tokens}"),
                format!("--service-account-issuer={url}"),
                format!("--service-account-key-file={sa_pub}"),
                format!("--service-account-signing-key-file={sa_key}"),
                "--service-cluster-ip-range=10.0.0.0/24".to_string(),
                "--authorization-mode=RBAC".to_string(),
                "--allow-privileged=true".to_string(),
                // The default admission plugins, ServiceAccount included (kube-controller-manager
                // makes the accounts), as on any cluster and as the embedded server admits pods.
                // Simulated kubelets serve logs and exec on loopback, advertised as their
                // InternalDNS address (their InternalIP is not a real host).
                "--kubelet-preferred-address-types=InternalDNS,Hostname,InternalIP,ExternalDNS,ExternalIP"
                    .to_string(),
            ],
        )?;
        let readyz = &format!("{url}/readyz");
        let bearer = token.as_str();
        supervisor
            .wait_for("kube-apiserver /readyz", Duration::from_secs(90), move || async move {
                let body = get_text(http, readyz, Some(bearer)).await?;
                if body.trim() == "ok" { Ok(()) } else { Err(body) }
            })
            .await?;

        // kube-controller-manager and kube-scheduler, both on the admin token.
        let delegated = [
            format!("--kubeconfig={kubeconfig}"),
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
            "--bind-address=127.0.0.1".to_string(),
            format!("--tls-cert-file={serving_crt}"),
            format!("--tls-private-key-file={serving_key}"),
            "--leader-elect=false".to_string(),
        ];
        let mut kcm_args = delegated.to_vec();
        kcm_args.extend([
            format!("--secure-port={kcm_port}"),
            "--controllers=*".to_string(),
            "--use-service-account-credentials=false".to_string(),
            format!("--service-account-private-key-file={sa_key}"),
            format!("--root-ca-file={ca_crt}"),
            format!("--cluster-signing-cert-file={ca_crt}"),
            format!("--cluster-signing-key-file={ca_key}"),
            // Simulated nodes renew their lease every second in scenarios; a short grace period
            // lets node-loss scenarios finish in seconds instead of a minute.
            "--node-monitor-period=1s".to_string(),
            "--node-monitor-grace-period=6s".to_string(),
        ]);
        supervisor.spawn("kube-controller-manager", &bin.join("kube-controller-manager"), &kcm_args)?;
        let mut scheduler_args = delegated.to_vec();
        scheduler_args.push(format!("--secure-port={scheduler_port}"));
        supervisor.spawn("kube-scheduler", &bin.join("kube-scheduler"), &scheduler_args)?;
        for (name, port) in [("kube-controller-manager", kcm_port), ("kube-scheduler", scheduler_port)] {
            let healthz = &format!("https://127.0.0.1:{port}/healthz");
            supervisor
                .wait_for(&format!("{name} /healthz"), Duration::from_secs(60), move || async move {
                    let body = get_text(http, healthz, None).await?;
                    if body.trim() == "ok" { Ok(()) } else { Err(body) }
                })
                .await?;
        }

        let client = client_from_kubeconfig(&kubeconfig_path).await?;
        // The controller manager's controllers run once it has created the default service account.
        let accounts: &kube::Api<ServiceAccount> = &kube::Api::namespaced(client.clone(), "default");
        supervisor
            .wait_for(
                "the default service account (kube-controller-manager)",
                Duration::from_secs(60),
                move || async move {
                    match accounts.get_opt("default").await {
                        Ok(Some(_)) => Ok(()),
                        Ok(None) => Err("not created yet".to_string()),
                        Err(error) => Err(error.to_string()),
                    }
                },
            )
            .await?;
        Ok((url, certs.ca_cert, token, kubeconfig_path, client))
    }

    /// The kubeconfig (server URL, CA, the admin's bearer token).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// A kube-rs client authenticated as the admin (`system:masters`).
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The CA that signed kube-apiserver's serving certificate (PEM).
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// kube-apiserver's URL (`https://127.0.0.1:<port>`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The admin's bearer token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The temporary directory: certificates, kubeconfig, etcd data and one `<process>.log` each.
    pub fn dir(&self) -> &Path {
        self.supervisor.path()
    }

    /// The name and process id (also its process-group id) of every process, in start order.
    pub fn processes(&self) -> Vec<(String, u32)> {
        self.supervisor.processes.iter().map(|process| (process.name.clone(), process.child.id())).collect()
    }

    /// Keeps the temporary directory (and its logs) when this control plane is dropped, and
    /// prints its path then. Done automatically when dropped during a panic.
    pub fn keep_artifacts(&self) {
        self.supervisor.keep_artifacts();
    }
}

/// A kubeconfig for `url`, trusting `ca_pem`, with a bearer token.
fn kubeconfig(url: &str, ca_pem: &str, token: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: real\n  cluster:\n    server: {url}\n    certificate-authority-data: {ca}\ncontexts:\n- name: real\n  context:\n    cluster: real\n    user: admin\n    namespace: default\ncurrent-context: real\nusers:\n- name: admin\n  user:\n    token: {token}\n"
    )
}

/// A kube-rs client for the cluster a kubeconfig file names.
pub(crate) async fn client_from_kubeconfig(path: &Path) -> Result<kube::Client, HarnessError> {
    let kubeconfig = kube::config::Kubeconfig::read_from(path)?;
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default()).await?;
    Ok(kube::Client::try_from(config)?)
}

fn missing_binaries(dir: &Path) -> Vec<String> {
    REQUIRED_BINARIES.iter().filter(|name| !dir.join(name).is_file()).map(|name| name.to_string()).collect()
}

/// How many times the control plane is started when a component lost its port to another
/// process.
const BOOT_ATTEMPTS: usize = 3;

/// Whether a start-up failure is a component that could not bind its port (pure).
fn lost_a_port(message: &str) -> bool {
    message.contains("address already in use")
}

/// Distinct free loopback ports (bound together, then released).
fn free_ports<const N: usize>() -> Result<[u16; N], HarnessError> {
    let mut listeners = Vec::with_capacity(N);
    let mut ports = [0u16; N];
    for port in &mut ports {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").map_err(HarnessError::io("picking a free port"))?;
        *port = listener.local_addr().map_err(HarnessError::io("picking a free port"))?.port();
        listeners.push(listener);
    }
    Ok(ports)
}

async fn get_text(http: &reqwest::Client, url: &str, token: Option<&str>) -> Result<String, String> {
    let mut request = http.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|error| format!("{error:#}"))?;
    let status = response.status();
    let body = response.text().await.map_err(|error| error.to_string())?;
    if status.is_success() { Ok(body) } else { Err(format!("HTTP {status}: {body}")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_lost_port_starts_the_control_plane_again() {
        let cases = [
            (
                "kube-scheduler exited with exit status: 1: failed to listen on 127.0.0.1:33883: listen tcp \
                 127.0.0.1:33883: bind: address already in use",
                true,
            ),
            ("etcd exited: listen tcp 127.0.0.1:2379: bind: address already in use", true),
            ("kube-apiserver /readyz did not pass within 60s", false),
            ("binaries missing", false),
        ];
        for (message, expected) in cases {
            assert_eq!(lost_a_port(message), expected, "{message}");
        }
    }
}
