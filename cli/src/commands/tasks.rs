//! What `kruise prepull` and `kruise recreate` share: the id argument and waiting for a task
//! (image pull or recreate) to end by polling it, since those have no event stream.

use std::{process::ExitCode, time::Duration};

use anyhow::Context;
use clap::Args;
use kruise_api::store::TaskState;

use super::client::Client;

/// The id of a task.
#[derive(Args)]
pub struct IdArg {
    /// The id.
    pub id: String,
}

/// Polls `path` every second until the task's `state` is terminal (a line per change on
/// stderr); returns the last body and state.
pub async fn wait(client: &Client, path: &str) -> anyhow::Result<(String, TaskState)> {
    let mut last = None;
    loop {
        let body = client.get(path, &[]).await?;
        let value: serde_json::Value = serde_json::from_str(&body).context("the answer is not JSON")?;
        let state = value
            .get("state")
            .and_then(serde_json::Value::as_str)
            .and_then(TaskState::parse)
            .context("the answer has no state")?;
        if last != Some(state) {
            eprintln!("{}", state.as_str());
            last = Some(state);
        }
        if state.is_terminal() {
            return Ok((body, state));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// 0 on Succeeded, 1 otherwise.
pub fn exit_code(state: TaskState) -> ExitCode {
    if state == TaskState::Succeeded { ExitCode::SUCCESS } else { ExitCode::from(1) }
}
