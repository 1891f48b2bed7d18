//! The checked-in OpenAPI document (`openapi/kruise-api.json`) is what the code generates. When
//! this fails, regenerate it with
//!
//! ```sh
//! UPDATE_OPENAPI=1 cargo test -p kruise-api --test openapi_drift
//! # or: cargo run -p kruise -- api openapi > openapi/kruise-api.json
//! ```
//!
//! and commit the result with the change that caused it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::path::PathBuf;

#[test]
fn checked_in_openapi_document_matches_the_code() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../openapi/kruise-api.json");
    let generated = format!("{}\n", kruise_api::rest::openapi_json());
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    if checked_in != generated {
        let first_difference = checked_in
            .lines()
            .zip(generated.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .map(|(n, (a, b))| format!("line {}:\n  checked in: {a}\n  generated:  {b}", n + 1))
            .unwrap_or_else(|| "one document is a prefix of the other".into());
        panic!(
            "openapi/kruise-api.json is out of date with the code ({first_difference}).\n\
             Regenerate it: UPDATE_OPENAPI=1 cargo test -p kruise-api --test openapi_drift\n\
             (or: cargo run -p kruise -- api openapi > openapi/kruise-api.json)"
        );
    }
    let document: serde_json::Value = serde_json::from_str(&generated).unwrap();
    assert_eq!(document["openapi"], "3.1.0");
    for path in [
        "/v1/namespaces/{namespace}/rollouts",
        "/v1/namespaces/{namespace}/rollouts/{id}",
        "/v1/namespaces/{namespace}/rollouts/{id}/pause",
        "/v1/namespaces/{namespace}/rollouts/{id}/resume",
        "/v1/namespaces/{namespace}/rollouts/{id}/promote",
        "/v1/namespaces/{namespace}/rollouts/{id}/abort",
        "/v1/namespaces/{namespace}/rollouts/{id}/events",
        "/v1/sidecarsets/{name}/rollouts",
        "/v1/sidecarsets/{name}/rollouts/{id}",
        "/v1/sidecarsets/{name}/rollouts/{id}/pause",
        "/v1/sidecarsets/{name}/rollouts/{id}/resume",
        "/v1/sidecarsets/{name}/rollouts/{id}/promote",
        "/v1/sidecarsets/{name}/rollouts/{id}/abort",
        "/v1/sidecarsets/{name}/rollouts/{id}/events",
        "/v1/namespaces/{namespace}/image-pulls",
        "/v1/namespaces/{namespace}/image-pulls/{id}",
        "/v1/namespaces/{namespace}/recreates",
        "/v1/namespaces/{namespace}/recreates/{id}",
        "/v1/namespaces/{namespace}/advancedcronjobs/{name}/runs",
        "/v1/namespaces/{namespace}/broadcastjobs/{name}/nodes",
        "/v1/audit",
        "/healthz",
        "/readyz",
        "/metrics",
    ] {
        assert!(document["paths"][path].is_object(), "{path} is not documented");
    }
}
