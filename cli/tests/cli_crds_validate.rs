//! The `kruise crds` and `kruise validate` commands as a user runs them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::process::Command;

fn kruise() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kruise"))
}

#[test]
fn validate_reports_each_mistake_with_its_field_path_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mistakes.yaml");
    std::fs::write(
        &file,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: not-ours}
---
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata:
  name: web
spec:
  replicas: -1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.25
  updateStrategy:
    rollingUpdate:
      partition: "ten"
      maxSurge: "lots"
"#,
    )
    .unwrap();
    let output = kruise().args(["validate", "-f"]).arg(&file).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    let prefix = format!("{}:1 CloneSet/web ", file.display());
    assert!(lines[0].starts_with(&format!("{prefix}spec.replicas: Invalid value: -1")), "{}", lines[0]);
    assert!(
        lines[1].starts_with(&format!("{prefix}spec.updateStrategy.rollingUpdate.partition: ")),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with(&format!("{prefix}spec.updateStrategy.rollingUpdate.maxSurge: ")),
        "{}",
        lines[2]
    );
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("Deployment: skipped (not a Kruise kind)"), "{stderr}");
}

#[test]
fn validate_accepts_a_valid_manifest_and_reads_stdin() {
    let manifest = r#"apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: ok}
spec:
  selector: {matchLabels: {app: ok}}
  template:
    metadata: {labels: {app: ok}}
    spec: {containers: [{name: c, image: nginx}]}
"#;
    let mut child = kruise()
        .args(["validate", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(manifest.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn malformed_yaml_is_a_clear_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.yaml");
    std::fs::write(&file, "kind: CloneSet\nmetadata: [unclosed\n").unwrap();
    let output = kruise().args(["validate", "-f"]).arg(&file).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("invalid YAML"), "{stdout}");
}

#[test]
fn crds_prints_eighteen_documents_or_writes_one_file_each() {
    let output = kruise().arg("crds").output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.matches("kind: CustomResourceDefinition").count(), 18);
    let dir = tempfile::tempdir().unwrap();
    let status = kruise().args(["crds", "--output-dir"]).arg(dir.path()).status().unwrap();
    assert!(status.success());
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 18);
    assert!(files.contains(&"clonesets.apps.kruise.io.yaml".to_string()));
}
