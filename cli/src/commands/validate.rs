//! `kruise validate`: offline checks of Kruise manifests, one line per problem.

use std::{
    io::Read,
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::Context;
use clap::Args;
use kruise_crds::document::{DecodeError, Decoded, decode, default_and_validate};
use serde::Deserialize;

/// Arguments of `kruise validate`.
#[derive(Args)]
#[command(after_help = "Each problem is printed as `FILE:DOC kind/name field: message`, DOC counting the \
                        YAML documents of the file from 0. Exit status: 0 when every Kruise object is valid, \
                        1 when any problem was found, 2 when the files could not be read.")]
pub struct ValidateArgs {
    /// Manifest file, directory (searched for .yaml, .yml and .json files) or `-` for stdin.
    #[arg(short = 'f', long = "filename", required = true, value_name = "FILE|DIR|-")]
    files: Vec<String>,
}

#[derive(Default)]
struct Tally {
    objects: usize,
    skipped: usize,
    problems: usize,
}

/// Checks every document of every input.
pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let mut tally = Tally::default();
    for input in &args.files {
        if input == "-" {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).context("reading stdin")?;
            check_text("-", &text, &mut tally);
            continue;
        }
        for file in expand(Path::new(input))? {
            let text =
                std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            check_text(&file.display().to_string(), &text, &mut tally);
        }
    }
    eprintln!(
        "checked {} Kruise object(s), skipped {} other document(s), found {} problem(s)",
        tally.objects, tally.skipped, tally.problems
    );
    Ok(if tally.problems == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn expand(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))? {
            let entry_path = entry?.path();
            if entry_path.is_dir() {
                pending.push(entry_path);
            } else if matches!(entry_path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json"))
            {
                files.push(entry_path);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn check_text(file: &str, text: &str, tally: &mut Tally) {
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let value = match serde_yaml::Value::deserialize(document) {
            Ok(value) => value,
            Err(error) => {
                println!("{file}:{index} invalid YAML: {error}");
                tally.problems += 1;
                return;
            }
        };
        if value.is_null() {
            continue;
        }
        let json = match serde_json::to_value(&value) {
            Ok(json) => json,
            Err(error) => {
                println!("{file}:{index} cannot be represented as JSON: {error}");
                tally.problems += 1;
                continue;
            }
        };
        let label = describe(&json);
        match decode(&json) {
            Ok(Decoded::Other { api_version, kind }) => {
                eprintln!("{file}:{index} {api_version} {kind}: skipped (not a Kruise kind)");
                tally.skipped += 1;
            }
            Ok(Decoded::Kruise(mut object)) => {
                tally.objects += 1;
                for error in default_and_validate(&mut object) {
                    println!("{file}:{index} {label} {error}");
                    tally.problems += 1;
                }
            }
            Err(DecodeError::Fields(errors)) => {
                tally.objects += 1;
                for error in errors {
                    println!("{file}:{index} {label} {error}");
                    tally.problems += 1;
                }
            }
            Err(error) => {
                println!("{file}:{index} {label} {error}");
                tally.problems += 1;
            }
        }
    }
}

fn describe(document: &serde_json::Value) -> String {
    let kind = document.get("kind").and_then(|k| k.as_str()).unwrap_or("<no kind>");
    let name = document
        .pointer("/metadata/name")
        .and_then(|n| n.as_str())
        .or_else(|| document.pointer("/metadata/generateName").and_then(|n| n.as_str()))
        .unwrap_or("<no name>");
    format!("{kind}/{name}")
}
