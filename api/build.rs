//! Generates the gRPC messages, servers and clients of `kruise.api.v1` from `proto/` with
//! tonic-prost-build (which runs `protoc`: `$PROTOC`, else the one on `PATH`), and the encoded
//! file descriptor set the reflection service serves.

use std::{env, path::PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    let protos = [
        "proto/kruise/api/v1/common.proto",
        "proto/kruise/api/v1/rollouts.proto",
        "proto/kruise/api/v1/image_pulls.proto",
        "proto/kruise/api/v1/recreates.proto",
        "proto/kruise/api/v1/jobs.proto",
        "proto/kruise/api/v1/audit.proto",
    ];
    // `sqlx::migrate!` embeds the migrations: rebuild when they change.
    println!("cargo:rerun-if-changed=migrations");
    for proto in &protos {
        println!("cargo:rerun-if-changed={proto}");
    }
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .btree_map(".")
        .file_descriptor_set_path(out_dir.join("kruise_api_v1_descriptor.bin"))
        .compile_protos(&protos, &["proto"])?;
    Ok(())
}
