//! Name validations of apimachinery, with its exact messages.

use std::sync::LazyLock;

use regex::Regex;

#[allow(clippy::unwrap_used)] // constant patterns
static DNS1035: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-z]([-a-z0-9]*[a-z0-9])?$").unwrap());
#[allow(clippy::unwrap_used)]
static DNS1123_LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").unwrap());
#[allow(clippy::unwrap_used)]
static DNS1123_SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$").unwrap()
});

fn regex_error(message: &str, format: &str, examples: &[&str]) -> String {
    // apimachinery joins "'a', " and "'b', " with " or ", hence the double space.
    let examples = examples.iter().map(|e| format!("'{e}', ")).collect::<Vec<_>>().join(" or ");
    format!("{message} (e.g. {examples}regex used for validation is '{format}')")
}

/// Problems of `value` as a DNS-1035 label (CRD plurals, version names, kinds lowercased).
pub(super) fn dns1035_label(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    if !DNS1035.is_match(value) {
        problems.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an \
             alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    problems
}

/// Problems of `value` as a DNS-1123 label (namespaces).
pub(super) fn dns1123_label(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    if !DNS1123_LABEL.is_match(value) {
        problems.push(regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and \
             must start and end with an alphanumeric character",
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "123-abc"],
        ));
    }
    problems
}

/// Problems of `value` as a DNS-1123 subdomain (CRD names, API groups).
pub(super) fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 253 {
        problems.push("must be no more than 253 characters".to_string());
    }
    if !DNS1123_SUBDOMAIN.is_match(value) {
        problems.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or \
             '.', and must start and end with an alphanumeric character",
            r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["example.com"],
        ));
    }
    problems
}

/// Problems of a name used as a URL path segment (embedded resources' names).
pub(super) fn path_segment_name(name: &str, prefix: bool) -> Vec<String> {
    let mut problems = Vec::new();
    if !prefix && (name == "." || name == "..") {
        problems.push(format!("may not be '{name}'"));
    }
    for illegal in ["/", "%"] {
        if name.contains(illegal) {
            problems.push(format!("may not contain '{illegal}'"));
        }
    }
    problems
}
