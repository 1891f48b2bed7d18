//! The differential report: per scenario and tier, how the run ended and the named
//! observations it recorded; the observations of a scenario must be equal on both tiers.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write as _,
    time::Duration,
};

use serde_json::Value;

use crate::Tier;

/// How a scenario ended on one tier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran to the end.
    Passed,
    /// It panicked or its cluster did not start; the message says why.
    Failed(String),
    /// It did not run; the reason says why.
    Skipped(String),
}

/// One scenario's run on one tier.
#[derive(Clone, Debug)]
pub struct TierRun {
    /// How it ended.
    pub outcome: Outcome,
    /// What it observed, by name.
    pub observations: BTreeMap<String, Value>,
    /// Notes it left (parts skipped and the like).
    pub notes: Vec<String>,
    /// How long it took, cluster start included.
    pub duration: Duration,
}

/// An observation whose value differs between the tiers (`None`: not recorded on that tier).
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The scenario.
    pub scenario: String,
    /// The observation's name.
    pub observation: String,
    /// Its value on the embedded tier.
    pub embedded: Option<Value>,
    /// Its value on the real tier.
    pub real: Option<Value>,
}

/// Runs of every scenario on every tier.
#[derive(Clone, Debug, Default)]
pub struct DifferentialReport {
    runs: BTreeMap<String, BTreeMap<Tier, TierRun>>,
}

impl DifferentialReport {
    /// An empty report.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records how `scenario` went on `tier` (a second record for the same pair replaces the first).
    pub fn record(&mut self, scenario: &str, tier: Tier, run: TierRun) {
        self.runs.entry(scenario.to_string()).or_default().insert(tier, run);
    }

    /// The run of `scenario` on `tier`, if recorded.
    pub fn run(&self, scenario: &str, tier: Tier) -> Option<&TierRun> {
        self.runs.get(scenario).and_then(|runs| runs.get(&tier))
    }

    /// Every observation that differs between the tiers, for the scenarios that passed on both.
    pub fn differences(&self) -> Vec<Difference> {
        let mut differences = Vec::new();
        for (scenario, runs) in &self.runs {
            let (Some(embedded), Some(real)) = (runs.get(&Tier::Embedded), runs.get(&Tier::Real)) else {
                continue;
            };
            if embedded.outcome != Outcome::Passed || real.outcome != Outcome::Passed {
                continue;
            }
            let names: BTreeSet<&String> =
                embedded.observations.keys().chain(real.observations.keys()).collect();
            for name in names {
                let left = embedded.observations.get(name);
                let right = real.observations.get(name);
                if left != right {
                    differences.push(Difference {
                        scenario: scenario.clone(),
                        observation: name.clone(),
                        embedded: left.cloned(),
                        real: right.cloned(),
                    });
                }
            }
        }
        differences
    }

    /// The runs that failed, as (scenario, tier, message).
    pub fn failures(&self) -> Vec<(String, Tier, String)> {
        let mut failures = Vec::new();
        for (scenario, runs) in &self.runs {
            for (tier, run) in runs {
                if let Outcome::Failed(message) = &run.outcome {
                    failures.push((scenario.clone(), *tier, message.clone()));
                }
            }
        }
        failures
    }

    /// True when nothing failed and the tiers agree on every observation.
    pub fn is_clean(&self) -> bool {
        self.failures().is_empty() && self.differences().is_empty()
    }

    /// The whole report as JSON: per scenario and tier, the outcome, duration, notes and every
    /// observation, then the differences.
    pub fn to_json(&self) -> Value {
        let runs: serde_json::Map<String, Value> = self
            .runs
            .iter()
            .map(|(scenario, runs)| {
                let tiers: serde_json::Map<String, Value> = runs
                    .iter()
                    .map(|(tier, run)| {
                        let (outcome, message) = match &run.outcome {
                            Outcome::Passed => ("passed", None),
                            Outcome::Failed(message) => ("failed", Some(message)),
                            Outcome::Skipped(reason) => ("skipped", Some(reason)),
                        };
                        let value = serde_json::json!({
                            "outcome": outcome,
                            "message": message,
                            "seconds": run.duration.as_secs_f64(),
                            "notes": run.notes,
                            "observations": run.observations,
                        });
                        (tier.name().to_string(), value)
                    })
                    .collect();
                (scenario.clone(), Value::Object(tiers))
            })
            .collect();
        let differences: Vec<Value> = self
            .differences()
            .into_iter()
            .map(|d| {
                serde_json::json!({
                    "scenario": d.scenario, "observation": d.observation, "embedded": d.embedded, "real": d.real,
                })
            })
            .collect();
        serde_json::json!({"runs": runs, "differences": differences})
    }

    /// The report as text: a table of scenarios by tier, then every difference and failure.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "=== differential report: embedded API server vs real kube-apiserver ===");
        let width = self.runs.keys().map(String::len).max().unwrap_or(8).max(8);
        let _ = writeln!(out, "{:<width$}  {:<24}  {:<24}  observations", "scenario", "embedded", "real");
        for (scenario, runs) in &self.runs {
            let cell = |tier: Tier| match runs.get(&tier) {
                None => "not run".to_string(),
                Some(run) => {
                    let verdict = match &run.outcome {
                        Outcome::Passed => "passed",
                        Outcome::Failed(_) => "FAILED",
                        Outcome::Skipped(_) => "skipped",
                    };
                    format!("{verdict} ({:.1}s)", run.duration.as_secs_f64())
                }
            };
            let compared = match (runs.get(&Tier::Embedded), runs.get(&Tier::Real)) {
                (Some(a), Some(b)) if a.outcome == Outcome::Passed && b.outcome == Outcome::Passed => {
                    let names: BTreeSet<&String> =
                        a.observations.keys().chain(b.observations.keys()).collect();
                    format!("{} compared", names.len())
                }
                _ => "not compared".to_string(),
            };
            let _ = writeln!(
                out,
                "{scenario:<width$}  {:<24}  {:<24}  {compared}",
                cell(Tier::Embedded),
                cell(Tier::Real)
            );
        }
        for (scenario, runs) in &self.runs {
            for (tier, run) in runs {
                if let Outcome::Skipped(reason) = &run.outcome {
                    let _ = writeln!(out, "skipped: {scenario} on {tier}: {reason}");
                }
                for note in &run.notes {
                    let _ = writeln!(out, "note: {scenario} on {tier}: {note}");
                }
            }
        }
        let differences = self.differences();
        if differences.is_empty() {
            let _ = writeln!(out, "differences between tiers: none");
        } else {
            let _ = writeln!(out, "differences between tiers: {}", differences.len());
            for difference in &differences {
                let show = |value: &Option<Value>| match value {
                    None => "(not recorded)".to_string(),
                    Some(value) => value.to_string(),
                };
                let _ = writeln!(
                    out,
                    "DIFFERENCE {} / {}:\n    embedded: {}\n    real:     {}",
                    difference.scenario,
                    difference.observation,
                    show(&difference.embedded),
                    show(&difference.real)
                );
            }
        }
        for (scenario, tier, message) in self.failures() {
            let _ = writeln!(out, "FAILED {scenario} on {tier}: {message}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn passed(observations: &[(&str, Value)]) -> TierRun {
        TierRun {
            outcome: Outcome::Passed,
            observations: observations.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            notes: Vec::new(),
            duration: Duration::from_millis(1500),
        }
    }

    #[test]
    fn equal_observations_are_clean() {
        let mut report = DifferentialReport::new();
        report.record("s", Tier::Embedded, passed(&[("a", json!(1))]));
        report.record("s", Tier::Real, passed(&[("a", json!(1))]));
        assert!(report.is_clean());
        assert!(report.render().contains("differences between tiers: none"));
    }

    #[test]
    fn a_changed_or_missing_observation_is_a_difference() {
        let mut report = DifferentialReport::new();
        report.record("s", Tier::Embedded, passed(&[("a", json!(1)), ("b", json!("x"))]));
        report.record("s", Tier::Real, passed(&[("a", json!(2))]));
        let differences = report.differences();
        assert_eq!(differences.len(), 2);
        assert_eq!(differences[0].observation, "a");
        assert_eq!(differences[1].real, None);
        assert!(!report.is_clean());
        assert!(report.render().contains("DIFFERENCE s / a:"));
    }

    #[test]
    fn skipped_tiers_are_not_compared_and_failures_are_not_clean() {
        let mut report = DifferentialReport::new();
        report.record("s", Tier::Embedded, passed(&[("a", json!(1))]));
        report.record(
            "s",
            Tier::Real,
            TierRun {
                outcome: Outcome::Skipped("no binaries".into()),
                observations: BTreeMap::new(),
                notes: Vec::new(),
                duration: Duration::ZERO,
            },
        );
        assert!(report.is_clean());
        assert!(report.render().contains("skipped: s on real: no binaries"));
        report.record(
            "t",
            Tier::Embedded,
            TierRun {
                outcome: Outcome::Failed("boom".into()),
                observations: BTreeMap::new(),
                notes: Vec::new(),
                duration: Duration::ZERO,
            },
        );
        assert!(!report.is_clean());
        assert!(report.render().contains("FAILED t on embedded: boom"));
    }
}
