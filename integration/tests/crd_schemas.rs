//! The 18 Kruise CRDs pass the embedded API server's CRD validation (structural schemas,
//! defaults of the right type, list types), checked without a server. The `crds` scenario
//! installs them on both tiers; this test names the offending field at once when a CRD
//! change breaks one. It lives here because the control plane depends on no Kruise crate.
#![allow(clippy::expect_used)] // tests fail loudly on unexpected data

use kruise_controlplane::semantics::schema::validate_crd;

#[test]
fn every_kruise_crd_is_valid() {
    for kind in kruise_crds::catalog::all_kinds() {
        let crd = kruise_crds::crd::crd_for(&kind).expect("kruise CRD");
        let problems: Vec<String> =
            validate_crd(&crd).iter().map(|e| format!("{}|{e}", e.kind.reason())).collect();
        assert_eq!(problems, Vec::<String>::new(), "{}", kind.kind);
    }
}
