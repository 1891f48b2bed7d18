//! Every scenario, run on the embedded API server and on a real kube-apiserver (skipped with a
//! message when the real binaries are absent), with the differential report printed at the end.
//! A target with its own `main` (`harness = false`), so that the report comes once, after all
//! scenarios; see `kruise_integration::suite` for its arguments.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod crds;
mod kubectl;

use std::process::ExitCode;

use kruise_integration::suite::{Scenario, run_suite};

fn main() -> ExitCode {
    run_suite(&[
        Scenario {
            name: "kruise_crds_are_accepted",
            run: |scene| Box::pin(crds::kruise_crds_are_accepted(scene)),
        },
        Scenario {
            name: "kubectl_drives_the_api_server",
            run: |scene| Box::pin(kubectl::kubectl_drives_the_api_server(scene)),
        },
    ])
}
