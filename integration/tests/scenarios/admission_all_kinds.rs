//! Admission of every Kruise kind through kubectl, on both tiers: for each of the 18 kinds an
//! invalid manifest is checked offline with `kruise validate`, then applied with kubectl; the API
//! must refuse it naming every field path `kruise validate` printed, and store nothing. This is
//! the promise that nothing `kruise validate` rejects is ever stored, whichever kind it is.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    io::Write,
    process::{Command, Stdio},
};

use kruise_integration::{Scene, Skip, manager::ManagerSpec};

use crate::{cloneset_kit::Kit, kubectl::Kubectl};

/// `kruise up`'s gates that admission depends on: ResourceDistribution is refused outright
/// while its gate is off (as upstream), which would hide its field checks.
const GATES: &str = "ResourceDistributionGate=true";

/// One invalid object of each kind, each failing a rule the CRD schema does not check (so the
/// refusal must come from the webhooks, as `kruise validate` predicts).
const INVALID_OBJECTS: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: bad-cloneset}
spec:
  replicas: 1
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: b}}
    spec: {containers: [{name: main, image: nginx}]}
---
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: bad-statefulset}
spec:
  replicas: 1
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: b}}
    spec: {containers: [{name: main, image: nginx}]}
---
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: bad-daemonset}
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: b}}
    spec: {containers: [{name: main, image: nginx}]}
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: bad-sidecarset}
spec:
  selector: {matchLabels: {app: a}}
  containers:
  - {name: sidecar, image: busybox}
  - {name: sidecar, image: busybox}
---
apiVersion: apps.kruise.io/v1alpha1
kind: BroadcastJob
metadata: {name: bad-broadcastjob}
spec:
  template:
    spec:
      restartPolicy: Always
      containers: [{name: main, image: busybox}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata: {name: bad-advancedcronjob}
spec:
  schedule: "not a schedule"
  template:
    jobTemplate:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: main, image: busybox}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: EphemeralJob
metadata: {name: bad-ephemeraljob}
spec:
  selector: {matchLabels: {app: a}}
  template:
    ephemeralContainers: []
---
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: bad-imagepulljob}
spec:
  image: "nginx:1.25"
  parallelism: -1
---
apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata: {name: bad-imagelistpulljob}
spec:
  images: ["nginx:1.25", "nginx:1.25"]
---
apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata: {name: bad-nodeimage}
spec:
  images:
    nginx:
      tags:
      - {tag: "1.25", pullPolicy: {backoffLimit: -1}}
---
apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata: {name: bad-crr}
spec:
  podName: web-0
  containers: []
---
apiVersion: apps.kruise.io/v1alpha1
kind: ResourceDistribution
metadata: {name: bad-resourcedistribution}
spec:
  resource: {apiVersion: v1, kind: Secret, metadata: {name: ""}}
  targets: {allNamespaces: true}
---
apiVersion: apps.kruise.io/v1alpha1
kind: UnitedDeployment
metadata: {name: bad-uniteddeployment}
spec:
  replicas: 2
  selector: {matchLabels: {app: a}}
  template:
    cloneSetTemplate:
      metadata: {labels: {app: a}}
      spec:
        selector: {matchLabels: {app: a}}
        template:
          metadata: {labels: {app: a}}
          spec: {containers: [{name: main, image: nginx}]}
  topology:
    subsets:
    - {name: zone-a}
    - {name: zone-a}
---
apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: bad-workloadspread}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  subsets:
  - {name: zone-a, maxReplicas: 1}
  - {name: zone-a}
---
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: bad-pub}
spec:
  selector: {matchLabels: {app: a}}
  maxUnavailable: 1
  minAvailable: 1
---
apiVersion: apps.kruise.io/v1alpha1
kind: PersistentPodState
metadata: {name: bad-pps}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1beta1, kind: StatefulSet, name: web}
---
apiVersion: apps.kruise.io/v1alpha1
kind: PodProbeMarker
metadata: {name: bad-podprobemarker}
spec:
  selector: {matchLabels: {app: a}}
  probes:
  - {name: healthy, containerName: main, probe: {exec: {command: ["true"]}}}
  - {name: healthy, containerName: main, probe: {exec: {command: ["true"]}}}
---
apiVersion: apps.kruise.io/v1alpha1
kind: NodePodProbe
metadata: {name: bad-nodepodprobe}
spec:
  podProbes:
  - name: web-0
    namespace: default
    uid: ""
    IP: 10.244.0.9
    probes: [{name: healthy, containerName: main, probe: {exec: {command: ["true"]}}}]
"#;

/// The field paths `kruise validate` reports for `manifest` (lines `FILE:DOC Kind/name field: message`).
fn validate_offline(kruise: &std::path::Path, manifest: &str) -> Vec<String> {
    let mut child = Command::new(kruise)
        .args(["validate", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(manifest.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "kruise validate finds the manifest invalid:\n{manifest}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ' ');
            let (_document, _object, problem) = (parts.next()?, parts.next()?, parts.next()?);
            problem.split_once(": ").map(|(field, _)| field.to_string())
        })
        .collect()
}

pub async fn every_kind_refuses_what_kruise_validate_refuses(scene: Scene) -> Result<(), Skip> {
    let kubectl = Kubectl::for_scene(&scene)?;
    let Some(kruise) = kruise_integration::nodes::kruise_binary() else {
        return Err(Skip("no kruise binary next to the test executable (cargo build -p kruise)".into()));
    };
    let _kit = Kit::start_with(&scene, Some(ManagerSpec::in_process().with_feature_gates(GATES))).await;
    let mut kinds = 0;
    for manifest in INVALID_OBJECTS.split("\n---\n") {
        let kind = manifest.lines().find_map(|line| line.strip_prefix("kind: ")).unwrap();
        let fields = validate_offline(&kruise, manifest);
        assert!(!fields.is_empty(), "{kind}: kruise validate names the fields");
        let output = kubectl.output(&["apply", "-n", "default", "-f", "-"], manifest);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{kind} was refused, kubectl said:\n{stderr}");
        for field in &fields {
            assert!(stderr.contains(&format!("{field}:")), "{kind}: the refusal names {field}:\n{stderr}");
        }
        let stored = kubectl.output(&["get", "-n", "default", "-f", "-"], manifest);
        let lookup = String::from_utf8_lossy(&stored.stderr);
        assert!(!stored.status.success() && lookup.contains("NotFound"), "{kind}: nothing stored:\n{lookup}");
        kinds += 1;
    }
    assert_eq!(kinds, 18, "every Kruise kind is covered");
    Ok(())
}
