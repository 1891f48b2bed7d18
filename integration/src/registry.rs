//! A local OCI registry for tests that pull real images: Debian's `docker-registry` (the CNCF
//! distribution registry) on a free loopback port, storing in a temporary directory, with no
//! auth and plain HTTP. Images are built here, offline: one gzip layer with the given files, an
//! OCI image config and manifest, uploaded through the registry's v2 API.

use std::{
    io::Write,
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::HarnessError;

const REGISTRY_BINARY: &str = "/usr/bin/docker-registry";

/// A running registry; dropping it stops the process and removes its storage.
pub struct LocalRegistry {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

/// An image pushed to a [`LocalRegistry`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushedImage {
    /// `127.0.0.1:PORT/repository:tag`.
    pub reference: String,
    /// The manifest digest (`sha256:...`).
    pub digest: String,
}

fn sha256_digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    format!("sha256:{}", hash.iter().map(|byte| format!("{byte:02x}")).collect::<String>())
}

/// A gzip-compressed tar with `files` (path, content), and the digest of the uncompressed tar
/// (the image config's `diff_ids`).
pub fn gzip_layer(files: &[(&str, &[u8])]) -> Result<(Vec<u8>, String), HarnessError> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, content) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o755);
        header.set_mtime(0);
        header.set_cksum();
        builder.append_data(&mut header, path, *content).map_err(HarnessError::io("building a layer"))?;
    }
    let tar = builder.into_inner().map_err(HarnessError::io("finishing a layer"))?;
    let diff_id = sha256_digest(&tar);
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(&tar).map_err(HarnessError::io("compressing a layer"))?;
    let compressed = gzip.finish().map_err(HarnessError::io("compressing a layer"))?;
    Ok((compressed, diff_id))
}

impl LocalRegistry {
    /// Whether the registry program is installed (`apt-get install docker-registry`).
    pub fn available() -> bool {
        Path::new(REGISTRY_BINARY).exists()
    }

    /// Starts the registry and waits until `/v2/` answers.
    pub async fn start() -> Result<Self, HarnessError> {
        if !Self::available() {
            return Err(HarnessError::ProgramMissing {
                program: REGISTRY_BINARY.into(),
                hint: "apt-get install docker-registry".into(),
            });
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(HarnessError::io("picking a port for the registry"))?
            .port();
        let dir = tempfile::Builder::new()
            .prefix("kruise-registry-")
            .tempdir()
            .map_err(HarnessError::io("creating the registry directory"))?;
        let config = dir.path().join("config.yml");
        let storage = dir.path().join("data");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
                storage.display()
            ),
        )
        .map_err(HarnessError::io("writing the registry config"))?;
        let log = std::fs::File::create(dir.path().join("registry.log"))
            .map_err(HarnessError::io("creating the registry log"))?;
        let child = Command::new(REGISTRY_BINARY)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(HarnessError::io("opening the registry log"))?)
            .stderr(log)
            .spawn()
            .map_err(|source| HarnessError::Spawn { name: "docker-registry".into(), source })?;
        let mut registry = Self { child, port, dir };
        registry.wait_ready().await?;
        Ok(registry)
    }

    async fn wait_ready(&mut self) -> Result<(), HarnessError> {
        let http = reqwest::Client::new();
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(HarnessError::Exited {
                    name: "docker-registry".into(),
                    status: status.to_string(),
                    log: self.log_path(),
                    tail: std::fs::read_to_string(self.log_path()).unwrap_or_default(),
                });
            }
            let last = match http.get(format!("{}/v2/", self.url())).send().await {
                Ok(response) if response.status().is_success() => return Ok(()),
                Ok(response) => response.status().to_string(),
                Err(error) => error.to_string(),
            };
            if started.elapsed() > Duration::from_secs(20) {
                return Err(HarnessError::Timeout {
                    what: "the registry's /v2/".into(),
                    waited: started.elapsed(),
                    last,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `127.0.0.1:PORT`, the host part of image references.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn url(&self) -> String {
        format!("http://{}", self.host())
    }

    /// The registry's log file.
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("registry.log")
    }

    /// Builds an image of one layer holding `files` and pushes it as `repository:tag`.
    pub async fn push_image(
        &self,
        repository: &str,
        tag: &str,
        files: &[(&str, &[u8])],
    ) -> Result<PushedImage, HarnessError> {
        let (layer, diff_id) = gzip_layer(files)?;
        let config = serde_json::to_vec(&json!({
            "architecture": "amd64",
            "os": "linux",
            "config": {"Entrypoint": ["/hello"]},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        }))
        .map_err(|error| HarnessError::Nodes(error.to_string()))?;
        let layer_digest = self.push_blob(repository, &layer).await?;
        let config_digest = self.push_blob(repository, &config).await?;
        let manifest = serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": layer.len()}],
        }))
        .map_err(|error| HarnessError::Nodes(error.to_string()))?;
        let response = reqwest::Client::new()
            .put(format!("{}/v2/{repository}/manifests/{tag}", self.url()))
            .header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
            .body(manifest.clone())
            .send()
            .await?;
        self.expect_success("putting the manifest", response).await?;
        Ok(PushedImage {
            reference: format!("{}/{repository}:{tag}", self.host()),
            digest: sha256_digest(&manifest),
        })
    }

    async fn push_blob(&self, repository: &str, bytes: &[u8]) -> Result<String, HarnessError> {
        let http = reqwest::Client::new();
        let digest = sha256_digest(bytes);
        let started = http.post(format!("{}/v2/{repository}/blobs/uploads/", self.url())).send().await?;
        let location = started
            .headers()
            .get("Location")
            .and_then(|value| value.to_str().ok())
            .map(str::to_string)
            .ok_or_else(|| HarnessError::Rejected {
                what: "starting a blob upload".into(),
                status: started.status().as_u16(),
                body: "no Location header".into(),
            })?;
        let upload =
            if location.starts_with("http") { location } else { format!("{}{location}", self.url()) };
        let separator = if upload.contains('?') { '&' } else { '?' };
        let response = http
            .put(format!("{upload}{separator}digest={digest}"))
            .header("Content-Type", "application/octet-stream")
            .body(bytes.to_vec())
            .send()
            .await?;
        self.expect_success("uploading a blob", response).await?;
        Ok(digest)
    }

    async fn expect_success(&self, what: &str, response: reqwest::Response) -> Result<(), HarnessError> {
        if response.status().is_success() {
            return Ok(());
        }
        Err(HarnessError::Rejected {
            what: what.into(),
            status: response.status().as_u16(),
            body: response.text().await.unwrap_or_default(),
        })
    }
}

impl Drop for LocalRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
            eprintln!("docker-registry log:\n{log}");
        }
    }
}
