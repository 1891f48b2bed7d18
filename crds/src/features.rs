//! Kruise feature gates: the same names, defaults and stages as upstream's
//! `pkg/features/kruise_features.go`, set with `--feature-gates=Name=bool,...` on `kruise manager`
//! and `kruise daemon` (also `AllAlpha=bool` and `AllBeta=bool`), and the derived settings of
//! upstream's `SetDefaultFeatureGates` (a gate that needs another one off is forced off). A value
//! rather than a process-wide global, so tests can set gates per case.

use std::{collections::BTreeMap, fmt, str::FromStr};

/// How mature a gate is (decides what `AllAlpha` / `AllBeta` switch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Off by default unless noted; switched by `AllAlpha`.
    Alpha,
    /// Switched by `AllBeta`.
    Beta,
}

macro_rules! gates {
    ($($gate:ident => $default:expr, $stage:ident;)*) => {
        /// A Kruise feature gate (the flag name is the variant name).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Gate { $(
            #[doc = concat!("`", stringify!($gate), "`")]
            $gate,
        )* }

        impl Gate {
            /// Every gate, in upstream's order.
            pub const ALL: &'static [Gate] = &[$(Gate::$gate),*];

            /// The name used in `--feature-gates`.
            pub fn name(self) -> &'static str {
                match self { $(Gate::$gate => stringify!($gate)),* }
            }

            /// Upstream's default.
            pub fn default_enabled(self) -> bool {
                match self { $(Gate::$gate => $default),* }
            }

            /// Upstream's stage.
            pub fn stage(self) -> Stage {
                match self { $(Gate::$gate => Stage::$stage),* }
            }
        }
    };
}

gates! {
    PodWebhook => true, Beta;
    KruiseDaemon => true, Beta;
    DaemonWatchingPod => true, Beta;
    CloneSetShortHash => false, Alpha;
    KruisePodReadinessGate => false, Alpha;
    PreDownloadImageForInPlaceUpdate => false, Alpha;
    CloneSetPartitionRollback => false, Alpha;
    ResourcesDeletionProtection => false, Beta;
    WorkloadSpread => true, Beta;
    PodUnavailableBudgetDeleteGate => true, Beta;
    PodUnavailableBudgetUpdateGate => false, Alpha;
    TemplateNoDefaults => false, Alpha;
    InPlaceUpdateEnvFromMetadata => true, Beta;
    StatefulSetAutoDeletePVC => true, Beta;
    SidecarSetPatchPodMetadataDefaultsAllowed => false, Alpha;
    SidecarTerminator => false, Alpha;
    PodProbeMarkerGate => true, Beta;
    PreDownloadImageForDaemonSetUpdate => false, Alpha;
    CloneSetEventHandlerOptimization => false, Alpha;
    PreparingUpdateAsUpdate => false, Alpha;
    ImagePullJobGate => false, Alpha;
    ResourceDistributionGate => false, Beta;
    DeletionProtectionForCRDCascadingGate => false, Alpha;
    EnhancedLivenessProbe => false, Alpha;
    RecreatePodWhenChangeVCTInCloneSetGate => false, Alpha;
    StatefulSetStartOrdinal => false, Alpha;
    PodIndexLabel => true, Beta;
    EnableExternalCerts => false, Alpha;
    StatefulSetAutoResizePVCGate => false, Alpha;
    ForceDeleteTimeoutExpectationGate => false, Alpha;
    InPlaceWorkloadVerticalScaling => false, Alpha;
    EnablePodProbeMarkerOnServerless => false, Alpha;
    EnableSortSidecarContainerByName => false, Alpha;
    InPlacePodVerticalScaling => false, Alpha;
    DefaultHostNetworkHostPortsInPodTemplates => false, Alpha;
    DaemonSetPruneIneligibleNodes => false, Alpha;
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Gate {
    type Err = FeatureGateError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Gate::ALL
            .iter()
            .copied()
            .find(|gate| gate.name() == name)
            .ok_or_else(|| FeatureGateError::Unknown(name.to_string()))
    }
}

/// A `--feature-gates` value that cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FeatureGateError {
    /// No gate has this name.
    #[error("unrecognized feature gate: {0}")]
    Unknown(String),
    /// An entry is not `Name=value`.
    #[error("missing bool value for {0}")]
    MissingValue(String),
    /// The value is not a bool.
    #[error("invalid value of {gate}={value}, err: must be true or false")]
    NotBool {
        /// The gate.
        gate: String,
        /// What was given.
        value: String,
    },
}

/// The effective gates of one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    enabled: BTreeMap<Gate, bool>,
}

impl Default for FeatureGates {
    /// Upstream's defaults, with the derived settings applied.
    fn default() -> Self {
        Self::from_overrides(&BTreeMap::new(), None, None)
    }
}

impl FeatureGates {
    /// Parses a `--feature-gates` value (`A=true,B=false`, `AllAlpha=true`, `AllBeta=false`;
    /// empty means the defaults). Explicit gates win over `AllAlpha`/`AllBeta`, as in
    /// Kubernetes' feature gate library.
    pub fn parse(value: &str) -> Result<Self, FeatureGateError> {
        let mut overrides = BTreeMap::new();
        let (mut all_alpha, mut all_beta) = (None, None);
        for entry in value.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
            let (name, raw) = entry
                .split_once('=')
                .map(|(name, raw)| (name.trim(), raw.trim()))
                .ok_or_else(|| FeatureGateError::MissingValue(entry.to_string()))?;
            let on = parse_bool(raw).ok_or_else(|| FeatureGateError::NotBool {
                gate: name.to_string(),
                value: raw.to_string(),
            })?;
            match name {
                "AllAlpha" => all_alpha = Some(on),
                "AllBeta" => all_beta = Some(on),
                _ => {
                    overrides.insert(name.parse::<Gate>()?, on);
                }
            }
        }
        Ok(Self::from_overrides(&overrides, all_alpha, all_beta))
    }

    /// The defaults with `overrides` applied (then the derived settings).
    pub fn with(overrides: &[(Gate, bool)]) -> Self {
        Self::from_overrides(&overrides.iter().copied().collect(), None, None)
    }

    fn from_overrides(
        overrides: &BTreeMap<Gate, bool>,
        all_alpha: Option<bool>,
        all_beta: Option<bool>,
    ) -> Self {
        let enabled = Gate::ALL
            .iter()
            .map(|&gate| {
                let by_stage = match gate.stage() {
                    Stage::Alpha => all_alpha,
                    Stage::Beta => all_beta,
                };
                let on = overrides.get(&gate).copied().or(by_stage).unwrap_or(gate.default_enabled());
                (gate, on)
            })
            .collect();
        let mut gates = Self { enabled };
        gates.apply_derived();
        gates
    }

    /// Upstream's `SetDefaultFeatureGates`: what a switched-off foundation takes with it, and
    /// what pre-download needs.
    fn apply_derived(&mut self) {
        if !self.enabled(Gate::PodWebhook) {
            for gate in [
                Gate::KruisePodReadinessGate,
                Gate::PodUnavailableBudgetDeleteGate,
                Gate::PodUnavailableBudgetUpdateGate,
                Gate::WorkloadSpread,
                Gate::SidecarSetPatchPodMetadataDefaultsAllowed,
                Gate::EnhancedLivenessProbe,
                Gate::EnablePodProbeMarkerOnServerless,
            ] {
                self.enabled.insert(gate, false);
            }
        }
        if !self.enabled(Gate::KruiseDaemon) {
            for gate in [
                Gate::PreDownloadImageForInPlaceUpdate,
                Gate::DaemonWatchingPod,
                Gate::InPlaceUpdateEnvFromMetadata,
                Gate::PreDownloadImageForDaemonSetUpdate,
                Gate::PodProbeMarkerGate,
                Gate::SidecarTerminator,
                Gate::ImagePullJobGate,
                Gate::EnhancedLivenessProbe,
            ] {
                self.enabled.insert(gate, false);
            }
        }
        if self.enabled(Gate::PreDownloadImageForInPlaceUpdate)
            || self.enabled(Gate::PreDownloadImageForDaemonSetUpdate)
        {
            self.enabled.insert(Gate::ImagePullJobGate, true);
        }
        if !self.enabled(Gate::ResourcesDeletionProtection) {
            self.enabled.insert(Gate::DeletionProtectionForCRDCascadingGate, false);
        }
    }

    /// Whether `gate` is on.
    pub fn enabled(&self, gate: Gate) -> bool {
        self.enabled.get(&gate).copied().unwrap_or(gate.default_enabled())
    }

    /// The gates that differ from upstream's defaults, as a `--feature-gates` value (for logs
    /// and for passing the same settings to another process).
    pub fn to_flag(&self) -> String {
        self.enabled
            .iter()
            .filter(|(gate, on)| gate.default_enabled() != **on)
            .map(|(gate, on)| format!("{gate}={on}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn parse_bool(raw: &str) -> Option<bool> {
    // Go's strconv.ParseBool, which Kubernetes' feature gates use.
    match raw {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    #[test]
    fn defaults_match_upstream() {
        let gates = FeatureGates::default();
        assert_eq!(Gate::ALL.len(), 36);
        for (gate, on) in [
            (Gate::PodWebhook, true),
            (Gate::KruiseDaemon, true),
            (Gate::PreDownloadImageForInPlaceUpdate, false),
            (Gate::ImagePullJobGate, false),
            (Gate::InPlaceUpdateEnvFromMetadata, true),
            (Gate::PodProbeMarkerGate, true),
            (Gate::ResourceDistributionGate, false),
        ] {
            assert_eq!(gates.enabled(gate), on, "{gate}");
        }
        assert_eq!(gates.to_flag(), "");
    }

    #[test]
    #[allow(clippy::type_complexity)] // a table: input, then the gates it must set or the error
    fn parse_table() {
        let cases: Vec<(&str, Result<Vec<(Gate, bool)>, FeatureGateError>)> = vec![
            ("", Ok(vec![(Gate::PodWebhook, true)])),
            ("CloneSetPartitionRollback=true", Ok(vec![(Gate::CloneSetPartitionRollback, true)])),
            (
                " PodWebhook = false , TemplateNoDefaults=T ",
                Ok(vec![(Gate::PodWebhook, false), (Gate::TemplateNoDefaults, true)]),
            ),
            // Pre-download needs ImagePullJob.
            ("PreDownloadImageForInPlaceUpdate=true", Ok(vec![(Gate::ImagePullJobGate, true)])),
            // No daemon: pre-download and the ImagePullJob controller are forced off.
            (
                "KruiseDaemon=false,PreDownloadImageForInPlaceUpdate=true,ImagePullJobGate=true",
                Ok(vec![(Gate::PreDownloadImageForInPlaceUpdate, false), (Gate::ImagePullJobGate, false)]),
            ),
            // No pod webhook: the readiness gate and PUB deletion protection go with it.
            (
                "PodWebhook=false,KruisePodReadinessGate=true",
                Ok(vec![
                    (Gate::KruisePodReadinessGate, false),
                    (Gate::PodUnavailableBudgetDeleteGate, false),
                ]),
            ),
            (
                "ResourcesDeletionProtection=false,DeletionProtectionForCRDCascadingGate=true",
                Ok(vec![(Gate::DeletionProtectionForCRDCascadingGate, false)]),
            ),
            // AllAlpha switches alpha gates; an explicit gate wins.
            (
                "AllAlpha=true,CloneSetShortHash=false",
                Ok(vec![
                    (Gate::CloneSetPartitionRollback, true),
                    (Gate::CloneSetShortHash, false),
                    (Gate::ResourceDistributionGate, false),
                ]),
            ),
            (
                "AllBeta=false",
                Ok(vec![
                    (Gate::PodWebhook, false),
                    (Gate::WorkloadSpread, false),
                    (Gate::CloneSetShortHash, false),
                ]),
            ),
            ("NoSuchGate=true", Err(FeatureGateError::Unknown("NoSuchGate".into()))),
            ("PodWebhook", Err(FeatureGateError::MissingValue("PodWebhook".into()))),
            (
                "PodWebhook=yes",
                Err(FeatureGateError::NotBool { gate: "PodWebhook".into(), value: "yes".into() }),
            ),
        ];
        for (value, want) in cases {
            match (FeatureGates::parse(value), want) {
                (Ok(gates), Ok(expected)) => {
                    for (gate, on) in expected {
                        assert_eq!(gates.enabled(gate), on, "{value:?}: {gate}");
                    }
                }
                (Err(error), Err(expected)) => assert_eq!(error, expected, "{value:?}"),
                (got, want) => panic!("{value:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn the_flag_round_trips() {
        let gates = FeatureGates::parse("AllAlpha=true,PodWebhook=false").unwrap();
        assert_eq!(FeatureGates::parse(&gates.to_flag()).unwrap(), gates);
        assert!(FeatureGates::parse("PodWebhook=false").unwrap().to_flag().contains("PodWebhook=false"));
    }
}
