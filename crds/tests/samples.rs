//! Every Kruise object in the upstream samples and user-guide examples
//! (`../shared/reference/openkruise/{samples,doc-examples}`) parses, defaults and validates, and
//! survives serialize -> deserialize unchanged. Documents upstream would reject as well are listed
//! in [`EXPECTED_REJECTIONS`] with the reason. Skipped when `../shared` is absent.

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

/// `(file name, document index, why upstream rejects it too)`.
const EXPECTED_REJECTIONS: &[(&str, usize, &str)] = &[];

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
                (true, Some((_, _, why))) => failures.push(format!("{name}:{index} was expected to fail ({why}) but is valid")),
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
