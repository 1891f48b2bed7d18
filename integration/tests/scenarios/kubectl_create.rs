//! kubectl's generators (`create namespace|configmap|secret generic|deployment|job`), which
//! send their objects in protobuf, and `kubectl apply` of a kind the server does not serve
//! (kubectl reads the OpenAPI v2 document in protobuf first: the answer must let it go on to its
//! "no matches for kind" error).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use kruise_integration::{Scene, Skip};

use crate::kubectl::Kubectl;

pub async fn kubectl_generators_create_built_in_kinds(scene: Scene) -> Result<(), Skip> {
    let kubectl = Kubectl::for_scene(&scene)?;
    let creates: &[(&str, &[&str])] = &[
        ("namespace", &["create", "namespace", "gen"]),
        ("configmap", &["create", "configmap", "c", "-n", "gen", "--from-literal=a=b"]),
        ("secret", &["create", "secret", "generic", "s", "-n", "gen", "--from-literal=a=b"]),
        ("deployment", &["create", "deployment", "d", "-n", "gen", "--image=nginx"]),
        ("job", &["create", "job", "j", "-n", "gen", "--image=busybox"]),
    ];
    for (what, args) in creates {
        let out = kubectl.run(args);
        scene.observe(format!("create/{what}"), out.trim());
    }
    let reads: &[(&str, &[&str])] = &[
        ("namespace.phase", &["get", "namespace", "gen", "-o", "jsonpath={.status.phase}"]),
        ("configmap.data", &["get", "configmap", "c", "-n", "gen", "-o", "jsonpath={.data}"]),
        ("secret.data", &["get", "secret", "s", "-n", "gen", "-o", "jsonpath={.type} {.data}"]),
        (
            "deployment.spec",
            &[
                "get",
                "deployment",
                "d",
                "-n",
                "gen",
                "-o",
                "jsonpath={.spec.replicas} {.spec.selector.matchLabels} {.spec.template.spec.containers[0].image} {.spec.strategy.rollingUpdate.maxSurge}",
            ],
        ),
        (
            "job.spec",
            &[
                "get",
                "job",
                "j",
                "-n",
                "gen",
                "-o",
                "jsonpath={.spec.template.spec.containers[0].image} {.spec.template.spec.restartPolicy} {.spec.backoffLimit}",
            ],
        ),
    ];
    for (what, args) in reads {
        let out = kubectl.run(args);
        scene.observe(format!("read/{what}"), out.trim());
    }

    let output = kubectl
        .output(&["apply", "-f", "-"], "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n");
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(!output.status.success(), "applying an unserved kind fails");
    assert!(stderr.contains("no matches for kind \"Gadget\" in version \"example.com/v1\""), "{stderr}");
    scene.observe("apply/unserved-kind", stderr.trim());

    kubectl.run(&["delete", "namespace", "gen", "--wait=false"]);
    Ok(())
}
