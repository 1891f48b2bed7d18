//! Every Kruise object in the upstream samples and user-guide examples
//! (`../shared/reference/openkruise/{samples,doc-examples}`) parses, defaults and validates, and
//! survives serialize -> deserialize unchanged. Documents upstream would reject as well are listed
//! in [`EXPECTED_REJECTIONS`] with the reason. Skipped when `../shared` is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::path::{Path, PathBuf};

use kruise_crds::document::{DecodeError, Decoded, decode};
use serde::Deserialize;

fn shared_openkruise() -> Option<PathBuf> {
    let dir = std::env::var_os("KRUISE_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
        .join("reference/openkruise");
    dir.is_dir().then_some(dir)
}

/// `(file name, document index, why upstream rejects it too)`. Most are user-guide snippets that
/// show one part of a spec and leave the rest out (no name, no selector, `...` placeholders).
const EXPECTED_REJECTIONS: &[(&str, usize, &str)] = &[
    (
        "best-practices__ci-pipeline-image-predownload__02.yaml",
        0,
        "not a Kruise kind (a kustomize generator or a doc heading)",
    ),
    (
        "best-practices__log-container-sidecarset__05.yaml",
        0,
        "SidecarSet fragment without selector or containers",
    ),
    (
        "best-practices__resource-policy-sidecarset__01.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    ("cli-tool__kustomize-plugin__04.yaml", 0, "placeholder `...` stands where a value belongs"),
    ("cli-tool__kustomize-plugin__05.yaml", 0, "not a Kruise kind (a kustomize generator or a doc heading)"),
    ("cli-tool__kustomize-plugin__06.yaml", 0, "placeholder `...` stands where a value belongs"),
    ("cli-tool__kustomize-plugin__07.yaml", 0, "not a Kruise kind (a kustomize generator or a doc heading)"),
    ("cli-tool__kustomize-plugin__08.yaml", 0, "placeholder `...` stands where a value belongs"),
    ("core-concepts__inplace-update__01.yaml", 0, "placeholder `...` stands where a value belongs"),
    ("core-concepts__inplace-update__02.yaml", 0, "placeholder `...` stands where a value belongs"),
    (
        "core-concepts__inplace-update__03.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedcronjob__01.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedcronjob__02.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__03.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__04.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__05.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__06.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__07.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__08.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__09.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__10.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__12.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__13.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__14.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__15.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__16.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__17.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__18.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__21.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advanceddaemonset__22.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__04.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__05.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__06.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__08.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__10.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__11.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__12.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__13.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__14.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__15.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__advancedstatefulset__16.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__07.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__08.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__09.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__10.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__12.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__13.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__14.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__15.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__16.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__17.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__18.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__19.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__20.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__21.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__22.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__23.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__24.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__25.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__26.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__27.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__28.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__29.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__30.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__31.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__37.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__38.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__39.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__40.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__41.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__42.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__44.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__cloneset__45.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__imagepulljob__01.yaml",
        0,
        "sets both selector.names and a label selector, which upstream forbids",
    ),
    (
        "user-manuals__imagepulljob__02.yaml",
        0,
        "sets both selector.names and a label selector, which upstream forbids",
    ),
    (
        "user-manuals__imagepulljob__09.yaml",
        0,
        "sets both selector.names and a label selector, which upstream forbids",
    ),
    (
        "user-manuals__imagepulljob__10.yaml",
        0,
        "sets both selector.names and a label selector, which upstream forbids",
    ),
    (
        "user-manuals__persistentpodstate__01.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__podprobemarker__02.yaml",
        0,
        "neither podConditionType nor markerPolicy, which upstream requires",
    ),
    (
        "user-manuals__podprobemarker__03.yaml",
        0,
        "neither podConditionType nor markerPolicy, which upstream requires",
    ),
    ("user-manuals__podunavailablebudget__06.yaml", 0, "placeholder `...` stands where a value belongs"),
    ("user-manuals__podunavailablebudget__07.yaml", 0, "placeholder `...` stands where a value belongs"),
    ("user-manuals__resourcedistribution__02.yaml", 0, "placeholder `...` stands where a value belongs"),
    ("user-manuals__sidecarset__08.yaml", 0, "alternatives written as `a | b` in one value"),
    ("user-manuals__sidecarset__09.yaml", 0, "alternatives written as `a | b` in one value"),
    (
        "user-manuals__sidecarset__14.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    ("user-manuals__sidecarset__20.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__21.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__24.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__25.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__26.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__27.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__28.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__29.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__30.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__31.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__32.yaml", 0, "SidecarSet fragment without selector or containers"),
    ("user-manuals__sidecarset__33.yaml", 0, "SidecarSet fragment without selector or containers"),
    (
        "user-manuals__sidecarset__34.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__sidecarset__35.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__sidecarset__36.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    (
        "user-manuals__sidecarset__37.yaml",
        0,
        "documentation fragment: no metadata.name (and usually no selector/template)",
    ),
    ("user-manuals__sidecarset__40.yaml", 0, "placeholder `...` stands where a value belongs"),
    ("user-manuals__sidecarset__41.yaml", 0, "placeholder `...` stands where a value belongs"),
    ("user-manuals__uniteddeployment__04.yaml", 0, "UnitedDeployment fragment without selector or template"),
    ("user-manuals__uniteddeployment__05.yaml", 0, "UnitedDeployment fragment without selector or template"),
    ("user-manuals__workloadspread__01.yaml", 0, "alternatives written as `a | b` in one value"),
    ("user-manuals__workloadspread__10.yaml", 0, "placeholder `...` stands where a value belongs"),
    (
        "user-manuals__workloadspread__12.yaml",
        0,
        "targets TFJob, which needs the WorkloadSpread custom-workload whitelist",
    ),
    ("apps_v1alpha1_advancedcronjob.yaml", 0, "unknown field, which upstream strict decoding rejects too"),
    (
        "apps_v1alpha1_containerrecreaterequest.yaml",
        0,
        "unknown field, which upstream strict decoding rejects too",
    ),
    ("apps_v1alpha1_ephemeraljob.yaml", 0, "unknown field, which upstream strict decoding rejects too"),
    ("apps_v1alpha1_sidecarset.yaml", 0, "unknown field, which upstream strict decoding rejects too"),
    ("apps_v1beta1_statefulset.yaml", 0, "unknown field, which upstream strict decoding rejects too"),
];

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
            out.push(path);
        }
    }
}

#[test]
fn every_upstream_kruise_object_parses_defaults_validates_and_round_trips() {
    let Some(shared) = shared_openkruise() else {
        eprintln!("skipped: ../shared/reference/openkruise is absent (set KRUISE_SHARED_DIR to point at it)");
        return;
    };
    let mut files = Vec::new();
    yaml_files(&shared.join("samples"), &mut files);
    yaml_files(&shared.join("doc-examples"), &mut files);
    files.sort();

    let (mut kruise, mut valid, mut rejected_as_expected, mut other, mut unparsable) = (0, 0, 0, 0, 0);
    let mut failures = Vec::new();
    for file in &files {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let text = std::fs::read_to_string(file).expect("read");
        for (index, document) in serde_yaml::Deserializer::from_str(&text).enumerate() {
            let Ok(yaml) = serde_yaml::Value::deserialize(document) else {
                // Extracted doc snippets that are not YAML on their own (templating, ellipses).
                unparsable += 1;
                break;
            };
            let Ok(json) = serde_json::to_value(&yaml) else { continue };
            if json.is_null() {
                continue;
            }
            let expected = EXPECTED_REJECTIONS.iter().find(|(f, i, _)| *f == name && *i == index);
            let outcome = match decode(&json) {
                Ok(Decoded::Other { .. }) => {
                    other += 1;
                    continue;
                }
                Err(DecodeError::NotAnObject | DecodeError::MissingTypeField(_)) => {
                    other += 1;
                    continue;
                }
                Ok(Decoded::Kruise(mut object)) => {
                    kruise += 1;
                    object.apply_defaults();
                    let errors = object.validate();
                    // serialize -> deserialize -> serialize is a fixed point.
                    let first = object.to_value().expect("serialize");
                    let again = match decode(&first) {
                        Ok(Decoded::Kruise(again)) => again.to_value().expect("serialize again"),
                        other => panic!("{name}:{index} does not decode after serializing: {other:?}"),
                    };
                    assert_eq!(first, again, "{name}:{index} changed on a round trip");
                    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
                }
                Err(error) => {
                    kruise += 1;
                    match error {
                        DecodeError::Fields(errors) => errors.iter().map(|e| e.to_string()).collect(),
                        other => vec![other.to_string()],
                    }
                }
            };
            match (outcome.is_empty(), expected) {
                (true, None) => valid += 1,
                (false, Some(_)) => rejected_as_expected += 1,
                (true, Some((_, _, why))) => {
                    failures.push(format!("{name}:{index} was expected to fail ({why}) but is valid"))
                }
                (false, None) => failures.push(format!("{name}:{index} {}", outcome.join("; "))),
            }
        }
    }
    eprintln!(
        "{} files: {kruise} Kruise objects ({valid} valid, {rejected_as_expected} rejected as upstream would), \
         {other} other documents, {unparsable} snippets that are not standalone YAML",
        files.len()
    );
    assert!(failures.is_empty(), "{} unexpected result(s):\n{}", failures.len(), failures.join("\n"));
}
