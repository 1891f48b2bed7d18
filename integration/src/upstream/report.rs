//! Ginkgo's JSON report (`--ginkgo.json-report`) read into one outcome per spec.

use std::path::Path;

use serde::Deserialize;

use super::groups;
use crate::HarnessError;

/// One suite in the report (the file holds a list of them).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SuiteReport {
    #[serde(default)]
    spec_reports: Vec<SpecReport>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SpecReport {
    /// `null` for suite-level nodes.
    #[serde(default)]
    container_hierarchy_texts: Option<Vec<String>>,
    #[serde(default)]
    leaf_node_type: String,
    #[serde(default)]
    leaf_node_location: CodeLocation,
    #[serde(default)]
    leaf_node_text: String,
    #[serde(default)]
    state: String,
    /// Nanoseconds.
    #[serde(default)]
    run_time: i64,
    #[serde(default)]
    failure: Option<Failure>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CodeLocation {
    #[serde(default)]
    file_name: String,
    #[serde(default)]
    line_number: u32,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Failure {
    #[serde(default)]
    message: String,
    #[serde(default)]
    location: CodeLocation,
}

/// How a spec ended, as Ginkgo says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    /// It ran and passed.
    Passed,
    /// It ran and failed (also panicked, timed out, interrupted, aborted).
    Failed,
    /// It did not run (skipped by a filter or `Skip()`, or pending).
    Skipped,
}

/// One spec's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecOutcome {
    /// The spec's identity: [`spec_key`].
    pub key: String,
    /// The group its file belongs to (None for a file no group lists).
    pub group: Option<&'static str>,
    /// How it ended.
    pub state: State,
    /// Ginkgo's own word for it (`passed`, `failed`, `timedout`, ...).
    pub ginkgo_state: String,
    /// The first line of its failure message, with where it failed.
    pub first_error: Option<String>,
    /// How long it ran.
    pub seconds: f64,
}

/// A spec's identity, stable across runs of one upstream version: its file under `test/e2e/`,
/// then its container texts and its own text, joined by ` / `
/// (`apps/v1beta1/cloneset.go: CloneSet / CloneSet Scaling / scales in normal cases`).
pub fn spec_key(file: &str, containers: &[String], text: &str) -> String {
    let file = file.rsplit_once("test/e2e/").map_or(file, |(_, rest)| rest);
    let mut parts: Vec<&str> = containers.iter().map(String::as_str).collect();
    parts.push(text);
    // A tab or newline in a text would break the expectation file's columns.
    format!("{file}: {}", parts.join(" / ")).replace(['\t', '\n'], " ")
}

/// The specs of a report (`It` nodes only: suite set-up nodes are not specs).
pub fn parse(json: &str) -> Result<Vec<SpecOutcome>, serde_json::Error> {
    let suites: Vec<SuiteReport> = serde_json::from_str(json)?;
    Ok(suites
        .into_iter()
        .flat_map(|suite| suite.spec_reports)
        .filter(|spec| spec.leaf_node_type == "It")
        .map(|spec| {
            let file = &spec.leaf_node_location.file_name;
            let state = match spec.state.as_str() {
                "passed" => State::Passed,
                "skipped" | "pending" => State::Skipped,
                _ => State::Failed,
            };
            let first_error = spec.failure.filter(|_| state == State::Failed).map(|failure| {
                let at = failure.location.file_name.rsplit('/').next().unwrap_or_default();
                format!("{} [{at}:{}]", one_line(&failure.message, 240), failure.location.line_number)
            });
            SpecOutcome {
                key: spec_key(
                    file,
                    spec.container_hierarchy_texts.as_deref().unwrap_or_default(),
                    &spec.leaf_node_text,
                ),
                group: groups::of_file(file).map(|group| group.name),
                state,
                ginkgo_state: spec.state,
                first_error,
                seconds: spec.run_time as f64 / 1e9,
            }
        })
        .collect())
}

/// A failure message on one line (Gomega spreads "Expected / <type>: value / to equal / ..." over
/// several), cut to `limit` characters.
fn one_line(message: &str, limit: usize) -> String {
    let joined = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= limit {
        joined
    } else {
        format!("{}...", joined.chars().take(limit).collect::<String>())
    }
}

/// [`parse`] of a report file.
pub fn read(path: &Path) -> Result<Vec<SpecOutcome>, HarnessError> {
    let text =
        std::fs::read_to_string(path).map_err(HarnessError::io(format!("reading {}", path.display())))?;
    parse(&text).map_err(|error| {
        HarnessError::Nodes(format!("{}: not a Ginkgo JSON report: {error}", path.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"[{"SuitePath":"/x","SuiteDescription":"Kruise e2e suite","SpecReports":[
      {"ContainerHierarchyTexts":null,"LeafNodeType":"SynchronizedBeforeSuite","LeafNodeLocation":{"FileName":"github.com/openkruise/kruise/test/e2e/e2e.go","LineNumber":10},"LeafNodeText":"","State":"passed","RunTime":5},
      {"ContainerHierarchyTexts":["CloneSet","CloneSet Scaling"],"LeafNodeType":"It","LeafNodeLocation":{"FileName":"github.com/openkruise/kruise/test/e2e/apps/v1beta1/cloneset.go","LineNumber":360},"LeafNodeText":"scales in normal cases","State":"passed","RunTime":12500000000,"Failure":{}},
      {"ContainerHierarchyTexts":["DaemonSet","Basic"],"LeafNodeType":"It","LeafNodeLocation":{"FileName":"github.com/openkruise/kruise/test/e2e/apps/v1alpha1/daemonset.go","LineNumber":50},"LeafNodeText":"should run","State":"timedout","RunTime":1000000000,
       "Failure":{"Message":"\n  Timed out after 60.001s.\nExpected\n    <int>: 0\nto equal 3","Location":{"FileName":"github.com/openkruise/kruise/test/e2e/apps/v1alpha1/daemonset.go","LineNumber":77}}},
      {"ContainerHierarchyTexts":["SidecarSet"],"LeafNodeType":"It","LeafNodeLocation":{"FileName":"github.com/openkruise/kruise/test/e2e/apps/v1beta1/sidecarset.go","LineNumber":9},"LeafNodeText":"injects","State":"skipped","RunTime":0}
    ]}]"#;

    #[test]
    fn specs_are_read_with_their_key_group_state_and_first_error() {
        let specs = parse(REPORT).unwrap();
        assert_eq!(specs.len(), 3, "the suite node is not a spec");
        assert_eq!(
            specs[0].key,
            "apps/v1beta1/cloneset.go: CloneSet / CloneSet Scaling / scales in normal cases"
        );
        assert_eq!(specs[0].group, Some("cloneset-v1beta1"));
        assert_eq!(specs[0].state, State::Passed);
        assert_eq!(specs[0].first_error, None);
        assert!((specs[0].seconds - 12.5).abs() < 1e-9);
        assert_eq!(specs[1].state, State::Failed);
        assert_eq!(specs[1].ginkgo_state, "timedout");
        assert_eq!(
            specs[1].first_error.as_deref(),
            Some("Timed out after 60.001s. Expected <int>: 0 to equal 3 [daemonset.go:77]")
        );
        assert_eq!(specs[2].state, State::Skipped);
        assert_eq!(specs[2].group, Some("sidecarset-v1beta1"));
    }

    #[test]
    fn keys_have_no_column_separators() {
        let key = spec_key("a/test/e2e/x.go", &["A\tB".into()], "line\nbreak");
        assert_eq!(key, "x.go: A B / line break");
    }
}
