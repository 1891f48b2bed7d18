//! Schema `pattern`s compiled with Go RE2 semantics (ASCII-only `\d`, `\w`, `\s`) and Go's
//! regexp error messages, cached across validations.

use std::{collections::HashMap, sync::LazyLock};

use parking_lot::Mutex;
use regex::Regex;

/// Compiled `pattern`s, shared across validations (schemas are validated over and over).
static PATTERNS: LazyLock<Mutex<HashMap<String, Result<Regex, String>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Compiles a schema `pattern` with Go RE2 semantics: `\d`, `\w`, `\s` (and their negations
/// outside classes) are ASCII-only in Go, so they are rewritten to explicit ASCII classes.
pub(super) fn compiled_pattern(pattern: &str) -> Result<Regex, String> {
    let mut cache = PATTERNS.lock();
    if let Some(found) = cache.get(pattern) {
        return found.clone();
    }
    let compiled = Regex::new(&go_regex(pattern)).map_err(|e| go_regex_error(pattern, &e.to_string()));
    if cache.len() > 4096 {
        cache.clear();
    }
    cache.insert(pattern.to_string(), compiled.clone());
    compiled
}

/// A regex compile error phrased like Go's `regexp` package (`error parsing regexp: missing
/// closing ): `(abc``).
fn go_regex_error(pattern: &str, rust_error: &str) -> String {
    let code = [
        ("unclosed group", "missing closing )"),
        ("unopened group", "unexpected )"),
        ("unclosed character class", "missing closing ]"),
        ("repetition operator missing expression", "missing argument to repetition operator"),
        ("incomplete escape sequence", "trailing backslash at end of expression"),
        ("unrecognized escape sequence", "invalid escape sequence"),
        ("invalid character class range", "invalid character class range"),
        ("look-around", "invalid or unsupported Perl syntax"),
        ("backreferences are not supported", "invalid escape sequence"),
        ("repetition quantifier expects a valid decimal", "invalid repeat count"),
        ("invalid repetition count range", "invalid repeat count"),
        ("exceeds size limit", "expression too large"),
    ]
    .iter()
    .find(|(needle, _)| rust_error.contains(needle))
    .map(|(_, code)| *code)
    .unwrap_or("invalid or unsupported Perl syntax");
    format!("error parsing regexp: {code}: `{pattern}`")
}

fn go_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let replacement = match (next, in_class) {
                    ('d', true) => Some("0-9"),
                    ('d', false) => Some("[0-9]"),
                    ('D', false) => Some("[^0-9]"),
                    ('w', true) => Some("0-9A-Za-z_"),
                    ('w', false) => Some("[0-9A-Za-z_]"),
                    ('W', false) => Some("[^0-9A-Za-z_]"),
                    ('s', true) => Some("\\t\\n\\f\\r "),
                    ('s', false) => Some("[\\t\\n\\f\\r ]"),
                    ('S', false) => Some("[^\\t\\n\\f\\r ]"),
                    _ => None,
                };
                match replacement {
                    Some(text) => out.push_str(text),
                    None => {
                        out.push('\\');
                        out.push(next);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A leading `]` (or `^]`) is a literal member of the class.
                let rest = chars.as_str();
                if let Some(tail) = rest.strip_prefix("^]") {
                    out.push_str("^\\]");
                    chars = tail.chars();
                } else if let Some(tail) = rest.strip_prefix(']') {
                    out.push_str("\\]");
                    chars = tail.chars();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}
