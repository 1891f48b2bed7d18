//! What the client subcommands (`rollout`, `prepull`, `recreate`, `cronjob`, `broadcastjob`,
//! `audit`) share: where the service API is and which token to send, the REST calls, problem
//! documents turned into `error: <title>: <detail>` messages, and the two output formats (human
//! text, or the server's JSON unchanged so scripts can pipe it into `jq`).

use std::{fmt, path::PathBuf, time::Duration};

use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::Value;

/// Where the service API is and how to authenticate (every client subcommand takes these).
#[derive(Args, Clone, Debug)]
pub struct ConnectArgs {
    /// Base URL of the REST service API (`kruise up` writes it to DATA_DIR/endpoints.json, key
    /// `rest`).
    #[arg(
        long,
        value_name = "URL",
        env = "KRUISE_API_URL",
        default_value = "http://127.0.0.1:8080",
        global = true
    )]
    pub server: String,
    /// Bearer token (`kruise up` writes its admin token to DATA_DIR/api-token).
    #[arg(long, value_name = "TOKEN", env = "KRUISE_API_TOKEN", hide_env_values = true, global = true)]
    pub token: Option<String>,
    /// File holding the bearer token (first line); when given, it wins over --token and
    /// KRUISE_API_TOKEN.
    #[arg(long, value_name = "FILE", env = "KRUISE_API_TOKEN_FILE", global = true)]
    pub token_file: Option<PathBuf>,
    /// Output format: human-readable text, or the server's JSON as returned.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Human, global = true)]
    pub output: Output,
}

/// Output format of the client subcommands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Text for people.
    Human,
    /// The server's JSON, unchanged (one document per line when following events).
    Json,
}

/// A refusal from the server, from its RFC 9457 problem document: displays as
/// `<title>: <detail>` then one `  <field>: <message>` line per field error, so that `main`
/// prints `error: <title>: <detail>`.
#[derive(Debug)]
pub struct ProblemError {
    /// The problem's title (or the status' reason when the body is no problem document).
    pub title: String,
    /// The problem's detail.
    pub detail: String,
    /// `(field, message)` of each field error (422).
    pub errors: Vec<(String, String)>,
}

impl ProblemError {
    /// From an answer's status and body (a problem document, or anything else).
    pub fn from_body(status: reqwest::StatusCode, body: &str) -> Self {
        let document: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let text = |key: &str| document.get(key).and_then(Value::as_str).map(str::to_string);
        let errors = document
            .get("errors")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|item| {
                        let field = item.get("field").and_then(Value::as_str).unwrap_or("?");
                        let message = item.get("message").and_then(Value::as_str).unwrap_or("");
                        (field.to_string(), message.to_string())
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            title: text("title").unwrap_or_else(|| status.canonical_reason().unwrap_or("Error").to_string()),
            detail: text("detail").unwrap_or_else(|| {
                let trimmed = body.trim();
                if trimmed.is_empty() { format!("HTTP {}", status.as_u16()) } else { trimmed.to_string() }
            }),
            errors,
        }
    }
}

impl fmt::Display for ProblemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.title, self.detail)?;
        for (field, message) in &self.errors {
            write!(f, "\n  {field}: {message}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ProblemError {}

/// A REST client of the service API with its token.
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: String,
    /// The output format chosen on the command line.
    pub output: Output,
}

impl Client {
    /// Resolves the server and token from flags, environment or token file.
    pub fn new(args: &ConnectArgs) -> anyhow::Result<Self> {
        let token = match (&args.token, &args.token_file) {
            (_, Some(path)) => std::fs::read_to_string(path)
                .with_context(|| format!("reading the token file {}", path.display()))?
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string(),
            (Some(token), None) => token.trim().to_string(),
            (None, None) => anyhow::bail!(
                "no token: pass --token or --token-file, or set KRUISE_API_TOKEN \
                 (`kruise up` writes one to DATA_DIR/api-token)"
            ),
        };
        if token.is_empty() {
            anyhow::bail!("the token is empty");
        }
        let base = args.server.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            anyhow::bail!("--server must be an http:// or https:// URL, not {base:?}");
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("kruise-cli/", env!("CARGO_PKG_VERSION")))
            .build()
            .context("creating the HTTP client")?;
        Ok(Self { http, base, token, output: args.output })
    }

    /// The URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends a request and returns the body of a 2xx answer; any other answer becomes a
    /// [`ProblemError`].
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
        headers: &[(&str, String)],
    ) -> anyhow::Result<String> {
        let mut request = self
            .http
            .request(method.clone(), self.url(path))
            .bearer_auth(&self.token)
            .timeout(Duration::from_secs(120))
            .query(query);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        tracing::debug!(%method, path, "calling the service API");
        let response = request.send().await.with_context(|| format!("cannot reach {}", self.base))?;
        let status = response.status();
        let text = response.text().await.context("reading the answer")?;
        tracing::debug!(status = status.as_u16(), "the service API answered");
        if status.is_success() { Ok(text) } else { Err(ProblemError::from_body(status, &text).into()) }
    }

    /// GET, returning the body.
    pub async fn get(&self, path: &str, query: &[(&str, String)]) -> anyhow::Result<String> {
        self.call(reqwest::Method::GET, path, query, None, &[]).await
    }

    /// POST a JSON body, returning the answer's body.
    pub async fn post(&self, path: &str, body: &Value, headers: &[(&str, String)]) -> anyhow::Result<String> {
        self.call(reqwest::Method::POST, path, &[], Some(body), headers).await
    }

    /// Starts a GET of a server-sent event stream; a refusal becomes a [`ProblemError`].
    pub async fn events(&self, path: &str) -> anyhow::Result<reqwest::Response> {
        let response = self
            .http
            .get(self.url(path))
            .bearer_auth(&self.token)
            .header("accept", "text/event-stream")
            .send()
            .await
            .with_context(|| format!("cannot reach {}", self.base))?;
        let status = response.status();
        if status.is_success() {
            Ok(response)
        } else {
            let text = response.text().await.unwrap_or_default();
            Err(ProblemError::from_body(status, &text).into())
        }
    }

    /// Prints the server's JSON (`-o json`) or, parsed as `T`, the human form.
    pub fn print<T: serde::de::DeserializeOwned>(
        &self,
        body: &str,
        human: impl FnOnce(&T) -> String,
    ) -> anyhow::Result<T> {
        let value: T = serde_json::from_str(body).context("the server's answer is not what was expected")?;
        match self.output {
            Output::Json => println!("{}", body.trim_end()),
            Output::Human => println!("{}", human(&value).trim_end()),
        }
        Ok(value)
    }
}

/// A `KIND/NAME` workload reference (`CloneSet/web`, `statefulset/db`).
pub fn parse_workload(text: &str) -> Result<Value, String> {
    let (kind, name) = text.split_once('/').ok_or_else(|| format!("expected KIND/NAME, got {text:?}"))?;
    let kind = match kind.to_ascii_lowercase().as_str() {
        "cloneset" | "clonesets" => "CloneSet",
        "statefulset" | "statefulsets" | "advancedstatefulset" => "StatefulSet",
        "daemonset" | "daemonsets" | "advanceddaemonset" => "DaemonSet",
        _ => return Err(format!("unknown workload kind {kind:?} (CloneSet, StatefulSet or DaemonSet)")),
    };
    workload_value(kind, name, text)
}

/// A `KIND/NAME` rollout target: a workload, or a cluster-scoped SidecarSet
/// (`SidecarSet/logs`).
pub fn parse_rollout_target(text: &str) -> Result<Value, String> {
    match text.split_once('/') {
        Some((kind, name)) if matches!(kind.to_ascii_lowercase().as_str(), "sidecarset" | "sidecarsets") => {
            workload_value("SidecarSet", name, text)
        }
        _ => parse_workload(text).map_err(|error| {
            if error.starts_with("unknown workload kind") {
                error.replace("or DaemonSet)", "DaemonSet or SidecarSet)")
            } else {
                error
            }
        }),
    }
}

fn workload_value(kind: &str, name: &str, text: &str) -> Result<Value, String> {
    if name.is_empty() {
        return Err(format!("no name in {text:?}"));
    }
    Ok(serde_json::json!({"kind": kind, "name": name}))
}

/// A count or a percentage (`3`, `20%`) as the API takes it.
pub fn parse_int_or_percent(text: &str) -> Result<Value, String> {
    if let Some(number) = text.strip_suffix('%') {
        number.parse::<u32>().map_err(|_| format!("not a percentage: {text:?}"))?;
        return Ok(Value::String(text.to_string()));
    }
    text.parse::<i32>()
        .map(Value::from)
        .map_err(|_| format!("expected a count or a percentage, got {text:?}"))
}

/// A `KEY=VALUE` pair.
pub fn parse_pair(text: &str) -> Result<(String, String), String> {
    let (key, value) = text.split_once('=').ok_or_else(|| format!("expected KEY=VALUE, got {text:?}"))?;
    if key.is_empty() {
        return Err(format!("no key in {text:?}"));
    }
    Ok((key.to_string(), value.to_string()))
}

/// Percent-encodes one path segment (ids and namespaces are plain, but never trust input).
pub fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// One server-sent event: its `event:` name and `data:` lines joined.
#[derive(Debug, Default, PartialEq)]
pub struct SseEvent {
    /// The event name (`message` when unnamed).
    pub event: String,
    /// The data.
    pub data: String,
}

/// Splits a server-sent event stream into events as bytes arrive.
#[derive(Default)]
pub struct SseParser {
    buffer: String,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    /// Feeds bytes, returning the events they complete.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buffer.push_str(&String::from_utf8_lossy(chunk));
        let mut events = Vec::new();
        while let Some(end) = self.buffer.find('\n') {
            let line: String = self.buffer.drain(..=end).collect();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() || self.event.is_some() {
                    events.push(SseEvent {
                        event: self.event.take().unwrap_or_else(|| "message".into()),
                        data: std::mem::take(&mut self.data).join("\n"),
                    });
                }
            } else if line.starts_with(':') {
                // A keep-alive comment.
            } else {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "event" => self.event = Some(value.to_string()),
                    "data" => self.data.push(value.to_string()),
                    _ => {}
                }
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_split_across_chunks() {
        let mut parser = SseParser::default();
        assert!(parser.feed(b": keep-alive\n\nevent: roll").is_empty());
        let events = parser.feed(b"out\ndata: {\"a\":1}\n\nevent: error\r\ndata: x\r\n\r\n");
        assert_eq!(
            events,
            [
                SseEvent { event: "rollout".into(), data: "{\"a\":1}".into() },
                SseEvent { event: "error".into(), data: "x".into() }
            ]
        );
    }

    #[test]
    fn problems_display_title_detail_and_fields() {
        let body = r#"{"type":"urn:x","title":"Invalid request","status":422,"detail":"1 field","errors":[{"field":"images.web","message":"no such container"}]}"#;
        let problem = ProblemError::from_body(reqwest::StatusCode::UNPROCESSABLE_ENTITY, body);
        assert_eq!(problem.to_string(), "Invalid request: 1 field\n  images.web: no such container");
        let bare = ProblemError::from_body(reqwest::StatusCode::NOT_FOUND, "");
        assert_eq!(bare.to_string(), "Not Found: HTTP 404");
    }

    #[test]
    fn arguments_parse() {
        assert_eq!(
            parse_workload("cloneset/web"),
            Ok(serde_json::json!({"kind": "CloneSet", "name": "web"}))
        );
        assert!(parse_workload("Deployment/web").is_err());
        assert!(parse_workload("SidecarSet/logs").is_err(), "not a workload with pods of its own");
        assert_eq!(
            parse_rollout_target("sidecarset/logs"),
            Ok(serde_json::json!({"kind": "SidecarSet", "name": "logs"}))
        );
        assert_eq!(parse_rollout_target("CloneSet/web"), parse_workload("CloneSet/web"));
        assert!(parse_rollout_target("Deployment/web").unwrap_err().contains("SidecarSet"));
        assert!(parse_rollout_target("SidecarSet/").is_err());
        assert!(parse_workload("web").is_err());
        assert_eq!(parse_int_or_percent("20%"), Ok(Value::from("20%")));
        assert_eq!(parse_int_or_percent("3"), Ok(Value::from(3)));
        assert!(parse_int_or_percent("x%").is_err());
        assert_eq!(parse_pair("web=nginx:1"), Ok(("web".into(), "nginx:1".into())));
        assert_eq!(segment("a b/c"), "a%20b%2Fc");
    }
}
