//! Files in simulated containers, for what tests do with them through `kubectl exec` and
//! probes: a readiness probe `test -f /data/ready` that passes once a test `touch`es the file,
//! an HTTP probe of a web server image that fails once its page is moved away, data written to
//! a volume claim and read back by the pod that replaces it. Nothing reaches the host's disk.
//!
//! A container sees its own files (the image's, fresh for each incarnation, as a new container
//! starts from its image) and the volumes mounted into it. A volume's files live on a
//! simulated disk: a claim's disk outlives its pods (a StatefulSet pod recreated on another
//! node finds its data, as with network-attached storage), an `emptyDir` lives with its pod.
//! The disks are shared by every simulated node of this process.

use std::{
    collections::{BTreeMap, HashMap},
    sync::LazyLock,
};

use k8s_openapi::api::core::v1::{Container, Pod};
use parking_lot::Mutex;

/// One file system entry.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    File(String),
    Dir,
}

type Tree = BTreeMap<String, Entry>;

/// The simulated disks, by disk name.
static DISKS: LazyLock<Mutex<HashMap<String, Tree>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Directories every container has.
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/dev",
    "/etc",
    "/home",
    "/mnt",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/usr/bin",
    "/usr/local",
    "/usr/share",
    "/var",
    "/var/log",
];

/// Where a volume is mounted and which disk backs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// Mount path in the container (normalized, no trailing `/`).
    pub path: String,
    /// Disk name: `pvc/<namespace>/<claim>`, `emptydir/<pod uid>/<volume>`, ...
    pub disk: String,
}

/// The document root of a web server image and the pages it ships; `None` for other images.
pub fn web_root(image: &str) -> Option<(&'static str, &'static [(&'static str, &'static str)])> {
    let name = image_name(image);
    if name.contains("nginx") {
        Some((
            "/usr/share/nginx/html",
            &[
                (
                    "index.html",
                    "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head></html>\n",
                ),
                ("50x.html", "<!DOCTYPE html>\n<html><head><title>Error</title></head></html>\n"),
            ],
        ))
    } else if name.contains("httpd") || name.contains("apache") {
        Some((
            "/usr/local/apache2/htdocs",
            &[("index.html", "<html><body><h1>It works!</h1></body></html>\n")],
        ))
    } else {
        None
    }
}

/// The repository part of an image reference (`registry.k8s.io/e2e-test-images/nginx:1.14-4`
/// -> `nginx`).
fn image_name(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    last.split(':').next().unwrap_or(last)
}

/// The disks a container's volume mounts use, from its pod's volumes. Volumes the kubelet
/// fills itself (ConfigMap, Secret, projected, downward API) get a disk of the pod.
pub fn mounts_of(pod: &Pod, container: &Container, node: &str) -> Vec<Mount> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let volumes = pod.spec.as_ref().and_then(|s| s.volumes.clone()).unwrap_or_default();
    container
        .volume_mounts
        .iter()
        .flatten()
        .filter_map(|mount| {
            let volume = volumes.iter().find(|v| v.name == mount.name)?;
            let disk = if let Some(claim) = &volume.persistent_volume_claim {
                format!("pvc/{namespace}/{}", claim.claim_name)
            } else if let Some(host) = &volume.host_path {
                format!("host/{node}{}", normalize(&host.path))
            } else {
                format!("pod/{uid}/{}", volume.name)
            };
            let sub_path = mount.sub_path.as_deref().filter(|s| !s.is_empty());
            let disk = match sub_path {
                Some(sub) => format!("{disk}/{}", sub.trim_matches('/')),
                None => disk,
            };
            Some(Mount { path: normalize(&mount.mount_path), disk })
        })
        .collect()
}

/// Forgets the disks of a pod (its `emptyDir` and kubelet-filled volumes) once it is gone.
pub fn forget_pod(uid: &str) {
    let prefix = format!("pod/{uid}/");
    DISKS.lock().retain(|disk, _| !disk.starts_with(&prefix));
}

/// Forgets one disk (tests that reuse a claim's name start from an empty disk).
pub fn forget_disk(disk: &str) {
    DISKS.lock().remove(disk);
}

/// An absolute path without `.`/empty components or a trailing `/` (`/` stays `/`).
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(at) => &path[..at],
    }
}

/// A container's view of files.
#[derive(Clone, Debug, Default)]
pub struct ContainerFiles {
    root: Tree,
    mounts: Vec<Mount>,
}

impl ContainerFiles {
    /// The files a container of `image` starts with, with `mounts`.
    pub fn new(image: &str, mut mounts: Vec<Mount>) -> Self {
        let mut root = Tree::new();
        for dir in SYSTEM_DIRS {
            root.insert((*dir).to_string(), Entry::Dir);
        }
        if let Some((doc_root, pages)) = web_root(image) {
            let mut dir = String::new();
            for part in doc_root.split('/').filter(|p| !p.is_empty()) {
                dir = format!("{dir}/{part}");
                root.insert(dir.clone(), Entry::Dir);
            }
            for (page, content) in pages {
                root.insert(format!("{doc_root}/{page}"), Entry::File((*content).to_string()));
            }
        }
        // Mount points (and the directories above them) show in the container's own tree.
        for mount in &mounts {
            let mut dir = String::new();
            for part in mount.path.split('/').filter(|p| !p.is_empty()) {
                dir = format!("{dir}/{part}");
                root.insert(dir.clone(), Entry::Dir);
            }
        }
        mounts.sort_by_key(|m| std::cmp::Reverse(m.path.len()));
        Self { root, mounts }
    }

    /// Runs `f` on the tree that holds `path` and the path within it.
    fn on<R>(&mut self, path: &str, f: impl FnOnce(&mut Tree, &str) -> R) -> R {
        let path = normalize(path);
        for mount in &self.mounts {
            let inside = if path == mount.path {
                Some("/".to_string())
            } else {
                path.strip_prefix(&format!("{}/", mount.path.trim_end_matches('/')))
                    .map(|rest| format!("/{rest}"))
            };
            if let Some(inside) = inside {
                let mut disks = DISKS.lock();
                let tree = disks.entry(mount.disk.clone()).or_default();
                return f(tree, &inside);
            }
        }
        f(&mut self.root, &path)
    }

    fn is_dir_in(tree: &Tree, path: &str) -> bool {
        if path == "/" || tree.get(path) == Some(&Entry::Dir) {
            return true;
        }
        let prefix = format!("{path}/");
        tree.range(prefix.clone()..).next().is_some_and(|(key, _)| key.starts_with(&prefix))
    }

    /// A regular file's content.
    pub fn read(&mut self, path: &str) -> Option<String> {
        self.on(path, |tree, path| match tree.get(path) {
            Some(Entry::File(content)) => Some(content.clone()),
            _ => None,
        })
    }

    /// Whether `path` is a regular file.
    pub fn is_file(&mut self, path: &str) -> bool {
        self.read(path).is_some()
    }

    /// Whether `path` is a directory (mount points, system directories and any directory a
    /// file lies under count).
    pub fn is_dir(&mut self, path: &str) -> bool {
        let normalized = normalize(path);
        if self.mounts.iter().any(|m| m.path == normalized) {
            return true;
        }
        self.on(path, |tree, path| Self::is_dir_in(tree, path))
    }

    /// Whether anything is at `path`.
    pub fn exists(&mut self, path: &str) -> bool {
        self.is_file(path) || self.is_dir(path)
    }

    /// Writes (or appends to) a regular file; `Err` with the reason when it cannot.
    pub fn write(&mut self, path: &str, content: &str, append: bool) -> Result<(), String> {
        let normalized = normalize(path);
        if self.is_dir(&normalized) {
            return Err(format!("can't create '{path}': Is a directory"));
        }
        if !self.is_dir(parent(&normalized)) {
            return Err(format!("can't create '{path}': No such file or directory"));
        }
        self.on(&normalized, |tree, path| {
            let entry = tree.entry(path.to_string()).or_insert_with(|| Entry::File(String::new()));
            if let Entry::File(existing) = entry {
                if !append {
                    existing.clear();
                }
                existing.push_str(content);
            }
        });
        Ok(())
    }

    /// Creates a directory (and its parents).
    pub fn make_dir(&mut self, path: &str) {
        let normalized = normalize(path);
        let mut dir = String::new();
        for part in normalized.split('/').filter(|p| !p.is_empty()) {
            dir = format!("{dir}/{part}");
            let current = dir.clone();
            self.on(&current, |tree, path| {
                if path != "/" {
                    tree.entry(path.to_string()).or_insert(Entry::Dir);
                }
            });
        }
    }

    /// Removes a file or a directory with what it holds; false when nothing was there.
    pub fn remove(&mut self, path: &str) -> bool {
        self.on(path, |tree, path| {
            let prefix = format!("{path}/");
            let before = tree.len();
            tree.retain(|key, _| key != path && !key.starts_with(&prefix));
            tree.len() != before
        })
    }

    /// What lies under a directory, as full paths, sorted (for `find` and `ls`).
    pub fn list(&mut self, path: &str) -> Vec<String> {
        let base = normalize(path);
        self.on(&base.clone(), |tree, inside| {
            let prefix = if inside == "/" { "/".to_string() } else { format!("{inside}/") };
            tree.keys()
                .filter(|key| key.starts_with(&prefix) && key.as_str() != inside)
                .map(|key| {
                    let rest = &key[prefix.len()..];
                    if base == "/" { format!("/{rest}") } else { format!("{base}/{rest}") }
                })
                .collect()
        })
    }

    /// Whether a web server of this image answers `path` (an HTTP probe's path) with 200:
    /// the page exists under its document root (`/` serves `index.html`). Images that are not
    /// known web servers answer every path.
    pub fn serves(&mut self, image: &str, path: &str) -> bool {
        let Some((doc_root, _)) = web_root(image) else { return true };
        let path = path.split('?').next().unwrap_or(path);
        let normalized = normalize(path);
        let file = if normalized == "/" {
            format!("{doc_root}/index.html")
        } else {
            format!("{doc_root}{normalized}")
        };
        if self.is_dir(&file) {
            return self.is_file(&format!("{file}/index.html"));
        }
        self.is_file(&file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(name: &str) -> String {
        format!("pvc/files-test/{name}-{:?}", std::thread::current().id())
    }

    #[test]
    fn paths_normalize() {
        let cases =
            [("/data/", "/data"), ("data//x", "/data/x"), ("/a/./b/../c", "/a/c"), ("/", "/"), ("", "/")];
        for (path, expected) in cases {
            assert_eq!(normalize(path), expected, "{path}");
        }
    }

    #[test]
    fn web_servers_serve_their_pages_until_moved() {
        let mut files = ContainerFiles::new("registry.k8s.io/e2e-test-images/nginx:1.14-4", Vec::new());
        let image = "registry.k8s.io/e2e-test-images/nginx:1.14-4";
        assert!(files.serves(image, "/index.html"));
        assert!(files.serves(image, "/"));
        assert!(!files.serves(image, "/missing.html"));
        let page = files.read("/usr/share/nginx/html/index.html").unwrap_or_default();
        assert!(files.remove("/usr/share/nginx/html/index.html"));
        assert!(!files.serves(image, "/index.html"));
        files.write("/tmp/index.html", &page, false).unwrap_or_default();
        assert!(files.is_file("/tmp/index.html"));
        assert!(files.serves("busybox", "/anything"), "unknown images answer every path");
        assert_eq!(image_name("httpd:2.4.38-alpine"), "httpd");
        assert_eq!(image_name("docker.io/library/nginx@sha256:ab"), "nginx");
    }

    #[test]
    fn files_on_a_claim_outlive_the_container() {
        let claim = disk("datadir");
        let mount = || vec![Mount { path: "/data".into(), disk: claim.clone() }];
        let mut first = ContainerFiles::new("nginx", mount());
        assert!(first.is_dir("/data"));
        assert!(!first.is_file("/data/hostname"));
        first.write("/data/hostname", "ss-0\n", false).unwrap_or_default();
        first.write("/tmp/scratch", "x", false).unwrap_or_default();
        let mut second = ContainerFiles::new("nginx", mount());
        assert_eq!(second.read("/data/hostname").as_deref(), Some("ss-0\n"));
        assert!(!second.is_file("/tmp/scratch"), "a new container starts from its image");
        assert_eq!(second.list("/data"), vec!["/data/hostname".to_string()]);
        forget_disk(&claim);
    }

    #[test]
    fn writes_need_a_directory_to_write_into() {
        let mut files = ContainerFiles::new("busybox", Vec::new());
        let cases = [("/tmp/a", true), ("/nowhere/a", false), ("/tmp", false), ("/", false)];
        for (path, ok) in cases {
            assert_eq!(files.write(path, "x", false).is_ok(), ok, "{path}");
        }
        files.make_dir("/srv/app/conf");
        assert!(files.is_dir("/srv/app"));
        assert!(files.write("/srv/app/conf/x", "1", false).is_ok());
        files.write("/srv/app/conf/x", "2", true).unwrap_or_default();
        assert_eq!(files.read("/srv/app/conf/x").as_deref(), Some("12"));
        assert!(files.remove("/srv/app"));
        assert!(!files.exists("/srv/app/conf/x"));
        assert!(!files.remove("/srv/app"));
    }
}
