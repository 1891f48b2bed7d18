//! The real control plane's life cycle: it starts and serves, dropping it kills every process
//! and removes its directory, and dropping it during a panic kills the processes but keeps the
//! directory with each process's log. Skipped with a message when the binaries are absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Namespace;
use kruise_integration::RealControlPlane;

fn running(pid: u32) -> bool {
    // A reaped process has no /proc entry; a zombie would show state Z.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}

fn skip() -> bool {
    if RealControlPlane::available() {
        return false;
    }
    eprintln!(
        "skipped: no real control-plane binaries in {:?} (run `bash integration/k8s/build.sh` or set KRUISE_K8S_BIN)",
        RealControlPlane::binary_dir().ok()
    );
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starts_serves_and_cleans_up_when_dropped() {
    if skip() {
        return;
    }
    let started = std::time::Instant::now();
    let plane = RealControlPlane::start().await.unwrap();
    eprintln!("real control plane ready in {:.1}s", started.elapsed().as_secs_f64());
    let names: Vec<String> = plane.processes().into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]);
    assert!(plane.url().starts_with("https://127.0.0.1:"));
    assert!(plane.ca_pem().contains("BEGIN CERTIFICATE"));
    let kubeconfig = std::fs::read_to_string(plane.kubeconfig_path()).unwrap();
    assert!(kubeconfig.contains(plane.url()) && kubeconfig.contains(plane.token()), "{kubeconfig}");

    let namespaces: kube::Api<Namespace> = kube::Api::all(plane.client());
    let names: Vec<String> = namespaces
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|ns| ns.metadata.name)
        .collect();
    assert!(names.contains(&"kube-system".to_string()), "{names:?}");
    let version = plane.client().apiserver_version().await.unwrap();
    assert_eq!(version.git_version, format!("v{}", kruise_integration::real::KUBE_VERSION));

    let pids: Vec<u32> = plane.processes().into_iter().map(|(_, pid)| pid).collect();
    let dir = plane.dir().to_path_buf();
    assert!(pids.iter().all(|pid| running(*pid)));
    drop(plane);
    assert!(pids.iter().all(|pid| !running(*pid)), "processes outlived the control plane");
    assert!(!dir.exists(), "{} was not removed", dir.display());
}

#[test]
fn a_panic_kills_the_processes_and_keeps_the_logs() {
    if skip() {
        return;
    }
    let (sender, receiver) = std::sync::mpsc::channel::<(PathBuf, Vec<u32>)>();
    let outcome = std::thread::spawn(move || {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(async move {
            let plane = RealControlPlane::start().await.unwrap();
            let pids = plane.processes().into_iter().map(|(_, pid)| pid).collect();
            sender.send((plane.dir().to_path_buf(), pids)).unwrap();
            panic!("a scenario failed while the control plane was up");
        })
    })
    .join();
    assert!(outcome.is_err(), "the thread panicked");
    let (dir, pids) = receiver.recv().unwrap();
    assert!(pids.iter().all(|pid| !running(*pid)), "processes outlived the panic");
    for log in ["etcd.log", "kube-apiserver.log", "kube-controller-manager.log", "kube-scheduler.log"] {
        let path: &Path = &dir.join(log);
        assert!(path.metadata().is_ok_and(|meta| meta.len() > 0), "{} is missing or empty", path.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
