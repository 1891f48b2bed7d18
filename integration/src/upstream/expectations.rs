//! The expectation file (`integration/upstream/expectations.tsv`): one line per upstream e2e
//! spec, `status<TAB>spec<TAB>reason`, where the status says whether the spec must pass against
//! kruise-rs, and the reason says why when it need not.

use std::collections::BTreeMap;

use super::report::{SpecOutcome, State};

/// What a spec is expected to do here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Expected {
    /// It must pass against `kruise up`.
    Pass,
    /// It needs a real node (a real container runtime, network or kernel), which simulated
    /// nodes are not.
    NeedsRealNode,
    /// The kind or feature it exercises is not built yet.
    NotImplemented,
    /// It fails against kruise-rs for a cause of ours, which the reason names: a bug to fix,
    /// kept visible here rather than hidden behind another status.
    Fails,
    /// It has not yet been run to a result against kruise-rs (its group did not finish inside
    /// the runner's timeout on this machine); the reason says where it stopped.
    Unverified,
}

impl Expected {
    /// The word used in the file.
    pub fn word(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::NeedsRealNode => "needs-real-node",
            Self::NotImplemented => "not-implemented",
            Self::Fails => "fails",
            Self::Unverified => "unverified",
        }
    }

    fn parse(word: &str) -> Option<Self> {
        [Self::Pass, Self::NeedsRealNode, Self::NotImplemented, Self::Fails, Self::Unverified]
            .into_iter()
            .find(|e| e.word() == word)
    }
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// What the spec must do.
    pub expected: Expected,
    /// Why, when it need not pass (empty for `pass`).
    pub reason: String,
}

/// The whole file, by spec key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Expectations {
    /// Spec key to expectation.
    pub specs: BTreeMap<String, Expectation>,
}

/// A line the file could not take.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("line {line}: {problem}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

impl Expectations {
    /// Reads the file's text. Blank lines and lines starting with `#` are comments.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut specs = BTreeMap::new();
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let mut columns = line.splitn(3, '\t');
            let (word, key, reason) = (columns.next().unwrap_or(""), columns.next(), columns.next());
            let expected = Expected::parse(word)
                .ok_or_else(|| ParseError { line: number, problem: format!("unknown status {word:?}") })?;
            let key = key
                .filter(|key| !key.is_empty())
                .ok_or_else(|| ParseError { line: number, problem: "no spec".into() })?;
            let reason = reason.unwrap_or("").trim().to_string();
            if expected != Expected::Pass && reason.is_empty() {
                return Err(ParseError {
                    line: number,
                    problem: format!("{} needs a reason", expected.word()),
                });
            }
            if specs.insert(key.to_string(), Expectation { expected, reason }).is_some() {
                return Err(ParseError { line: number, problem: format!("spec listed twice: {key}") });
            }
        }
        Ok(Self { specs })
    }

    /// The file's text (sorted by spec), with `header` as its leading comment.
    pub fn render(&self, header: &str) -> String {
        let mut out = String::new();
        for line in header.lines() {
            out.push_str(&format!("# {line}\n").replace("# \n", "#\n"));
        }
        for (key, expectation) in &self.specs {
            out.push_str(&format!("{}\t{key}\t{}\n", expectation.expected.word(), expectation.reason));
        }
        out
    }
}

/// The file's leading comment (its `# ` lines before the first spec), without the `# `, as
/// [`Expectations::render`] takes it back.
pub fn header_of(text: &str) -> String {
    text.lines()
        .take_while(|line| line.starts_with('#') || line.trim().is_empty())
        .filter_map(|line| line.strip_prefix('#'))
        .map(|comment| comment.strip_prefix(' ').unwrap_or(comment))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a run teaches the file: each `unverified` spec that ran to a result becomes `pass` when
/// it passed, or `fails` with its first error when it failed (the cause still to be named, so
/// the reason says so). Specs with any other status are left as they are: a `pass` that failed
/// is a regression the run reports, and a `needs-real-node` or `not-implemented` spec keeps its
/// reason. A spec the run interrupted (the group's timeout) is not a result and stays
/// `unverified`. Returns the new file and how many specs changed.
pub fn record<'a>(
    expectations: &Expectations,
    outcomes: impl IntoIterator<Item = &'a SpecOutcome>,
) -> (Expectations, usize) {
    let mut recorded = expectations.clone();
    let mut changed = 0;
    for outcome in outcomes {
        let Some(entry) = recorded.specs.get_mut(&outcome.key) else { continue };
        if entry.expected != Expected::Unverified {
            continue;
        }
        let learned = match outcome.state {
            // Not a result: the run itself was cut (the group's timeout) while the spec ran.
            State::Failed if outcome.ginkgo_state == "interrupted" => continue,
            State::Passed => Expectation { expected: Expected::Pass, reason: String::new() },
            State::Failed => Expectation {
                expected: Expected::Fails,
                reason: format!(
                    "cause not yet named; first error: {}",
                    outcome.first_error.as_deref().unwrap_or(&outcome.ginkgo_state)
                ),
            },
            State::Skipped => continue,
        };
        *entry = learned;
        changed += 1;
    }
    (recorded, changed)
}

/// How one spec's outcome compares with its expectation.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// As expected (passed and `pass`, or did not pass and is not expected to).
    AsExpected,
    /// Expected to pass, and did not: a regression, which fails the run.
    Regression,
    /// Passed although not expected to: the file should say `pass` now.
    UnexpectedPass,
    /// Expected to pass, but did not run (skipped): reported, not a failure.
    NotRun,
    /// The file does not list the spec: every spec must be listed.
    Unlisted,
}

/// Compares one outcome with the file.
pub fn judge(expectations: &Expectations, outcome: &SpecOutcome) -> Verdict {
    let Some(expectation) = expectations.specs.get(&outcome.key) else { return Verdict::Unlisted };
    match (expectation.expected, outcome.state) {
        (Expected::Pass, State::Passed) => Verdict::AsExpected,
        (Expected::Pass, State::Failed) => Verdict::Regression,
        (Expected::Pass, State::Skipped) => Verdict::NotRun,
        (_, State::Passed) => Verdict::UnexpectedPass,
        (_, State::Failed | State::Skipped) => Verdict::AsExpected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(key: &str, state: State) -> SpecOutcome {
        SpecOutcome {
            key: key.into(),
            group: None,
            state,
            ginkgo_state: String::new(),
            first_error: None,
            seconds: 0.0,
        }
    }

    #[test]
    fn the_file_round_trips_and_refuses_bad_lines() {
        let text = "# header\n\npass\ta.go: A / one\t\nneeds-real-node\ta.go: A / two\tcurls the pod IP\n";
        let parsed = Expectations::parse(text).unwrap();
        assert_eq!(parsed.specs.len(), 2);
        assert_eq!(parsed.specs["a.go: A / two"].reason, "curls the pod IP");
        assert_eq!(Expectations::parse(&parsed.render("header")).unwrap(), parsed);
        assert_eq!(Expectations::parse("maybe\tx\t").unwrap_err().line, 1);
        assert!(Expectations::parse("not-implemented\tx\t").unwrap_err().problem.contains("needs a reason"));
        assert!(Expectations::parse("pass\tx\t\npass\tx\t").unwrap_err().problem.contains("twice"));
        assert!(Expectations::parse("pass\t\t").is_err());
        let others =
            Expectations::parse("fails\tf\tthe CRR message keys\nunverified\tu\tgroup timed out\n").unwrap();
        assert_eq!(others.specs["f"].expected, Expected::Fails);
        assert_eq!(others.specs["u"].expected, Expected::Unverified);
        assert!(Expectations::parse("fails\tf\t").unwrap_err().problem.contains("needs a reason"));
        assert!(Expectations::parse("unverified\tu\t").unwrap_err().problem.contains("needs a reason"));
    }

    #[test]
    fn a_run_turns_unverified_specs_into_results_and_leaves_the_rest() {
        let text = "# first line\n#\n# second\nunverified\tu1\tnot run\nunverified\tu2\tnot run\n\
                    unverified\tu3\tnot run\nunverified\tu4\tnot run\npass\tp\t\nneeds-real-node\tn\tcurls\n";
        let file = Expectations::parse(text).unwrap();
        assert_eq!(header_of(text), "first line\n\nsecond");
        let mut failed = outcome("u2", State::Failed);
        failed.first_error = Some("Timed out [cloneset.go:80]".into());
        let mut interrupted = outcome("u4", State::Failed);
        interrupted.ginkgo_state = "interrupted".into();
        let outcomes = [
            outcome("u1", State::Passed),
            failed,
            interrupted,
            outcome("u3", State::Skipped),
            outcome("p", State::Failed),
            outcome("n", State::Passed),
            outcome("unlisted", State::Passed),
        ];
        let (recorded, changed) = record(&file, &outcomes);
        assert_eq!(changed, 2);
        assert_eq!(recorded.specs["u1"], Expectation { expected: Expected::Pass, reason: String::new() });
        assert_eq!(recorded.specs["u2"].expected, Expected::Fails);
        assert!(recorded.specs["u2"].reason.ends_with("Timed out [cloneset.go:80]"));
        assert_eq!(recorded.specs["u3"].expected, Expected::Unverified);
        assert_eq!(recorded.specs["u4"].expected, Expected::Unverified, "cut by the timeout");
        assert_eq!(recorded.specs["p"].expected, Expected::Pass, "a regression is reported, not recorded");
        assert_eq!(recorded.specs["n"].expected, Expected::NeedsRealNode);
        assert!(!recorded.specs.contains_key("unlisted"));
        let rendered = recorded.render(&header_of(text));
        assert!(rendered.starts_with("# first line\n#\n# second\n"));
        assert_eq!(Expectations::parse(&rendered).unwrap(), recorded);
    }

    #[test]
    fn outcomes_are_judged_against_the_file() {
        let file = Expectations::parse("pass\tp\t\nneeds-real-node\tn\treason\n").unwrap();
        let cases = [
            ("p", State::Passed, Verdict::AsExpected),
            ("p", State::Failed, Verdict::Regression),
            ("p", State::Skipped, Verdict::NotRun),
            ("n", State::Passed, Verdict::UnexpectedPass),
            ("n", State::Failed, Verdict::AsExpected),
            ("n", State::Skipped, Verdict::AsExpected),
            ("x", State::Passed, Verdict::Unlisted),
        ];
        for (key, state, verdict) in cases {
            assert_eq!(judge(&file, &outcome(key, state)), verdict, "{key} {state:?}");
        }
    }
}
