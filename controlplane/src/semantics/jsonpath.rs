//! The JSONPath dialect of Kubernetes (client-go's `util/jsonpath`): what `additionalPrinterColumns`
//! evaluate on the server and what `kubectl get -o jsonpath=...` evaluates on the client, plus the
//! rendering of `meta.k8s.io/v1 Table` responses that kube-apiserver produces for
//! `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`.
//!
//! The dialect is not RFC 9535: keys may escape dots (`.metadata.labels.app\.kubernetes\.io/name`),
//! `['a.b']` is split at the dot exactly as client-go does, filters compare one value with `==`,
//! `!=`, `<`, `<=`, `>`, `>=` or test existence, and a filter applied to something that is not a list
//! is an error (which a printer column shows as an empty cell). Values are printed the way Go prints
//! them (`fmt.Print` for scalars, `encoding/json` for objects and lists), so that a column reads the
//! same here as against a real cluster.

use std::{borrow::Cow, sync::LazyLock, time::SystemTime};

use regex::Regex;
use serde_json::{Map, Value, json};
use thiserror::Error;

/// Why a JSONPath could not be parsed or evaluated.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum JsonPathError {
    /// The text is not a valid template (unterminated array, unknown character, ...).
    #[error("{0}")]
    Syntax(String),
    /// The path is valid but cannot be applied to this object (index out of bounds, filter on a
    /// non-list, comparison of incompatible types, ...).
    #[error("{0}")]
    Eval(String),
}

fn syntax<T>(message: impl Into<String>) -> Result<T, JsonPathError> {
    Err(JsonPathError::Syntax(message.into()))
}

fn eval_error<T>(message: impl Into<String>) -> Result<T, JsonPathError> {
    Err(JsonPathError::Eval(message.into()))
}

/// One bound of an array slice (`[start:end:step]`), as client-go keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct SliceParam {
    value: i64,
    known: bool,
    derived: bool,
}

/// The parsed form of a template, one variant per client-go node kind.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Text(String),
    List(Vec<Node>),
    Field(String),
    Array([SliceParam; 3]),
    Filter { left: Vec<Node>, right: Vec<Node>, operator: String },
    Int(i64),
    Float(f64),
    Bool(bool),
    Wildcard,
    Recursive,
    Union(Vec<Vec<Node>>),
    Identifier(String),
}

/// A parsed JSONPath template.
///
/// A bare path such as `.status.replicas` (the form of printer columns and scale paths) is treated
/// as `{.status.replicas}`, exactly as kube-apiserver wraps printer-column paths; text containing
/// `{` is parsed as a full `kubectl -o jsonpath` template with literal text around the actions.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath {
    source: String,
    nodes: Vec<Node>,
    allow_missing_keys: bool,
}

impl JsonPath {
    /// Parses a printer-column path or a `kubectl -o jsonpath` template. Missing keys select
    /// nothing (kube-apiserver's printer columns and kubectl's default
    /// `--allow-missing-template-keys=true`).
    pub fn parse(text: &str) -> Result<JsonPath, JsonPathError> {
        let template = if text.contains('{') { text.to_string() } else { format!("{{{text}}}") };
        let nodes = Parser::new(&template).parse()?;
        Ok(JsonPath { source: text.to_string(), nodes, allow_missing_keys: true })
    }

    /// Makes a missing key an evaluation error instead of an empty selection (kubectl's
    /// `--allow-missing-template-keys=false`).
    pub fn with_allow_missing_keys(mut self, allow: bool) -> JsonPath {
        self.allow_missing_keys = allow;
        self
    }

    /// The text this path was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// All values the path selects (empty when nothing matches, or when evaluation fails, which
    /// is how a printer column treats errors). Literal text of a template is not part of the
    /// object and therefore not returned.
    pub fn select<'a>(&self, object: &'a Value) -> Vec<&'a Value> {
        match self.find_results(object) {
            Ok(groups) => groups
                .into_iter()
                .flatten()
                .filter_map(|item| match item {
                    Cow::Borrowed(value) => Some(value),
                    Cow::Owned(_) => None,
                })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The results of every action of the template, one group per top-level node (client-go's
    /// `FindResults`), literals included. Errors are reported instead of swallowed.
    pub fn find_results<'a>(&self, object: &'a Value) -> Result<Vec<Vec<Cow<'a, Value>>>, JsonPathError> {
        self.find_in_nodes(&self.nodes, Cow::Borrowed(object))
    }

    /// Renders the template against `object` as `kubectl get -o jsonpath=...` prints it: literal
    /// text as written, each action's values separated by spaces, scalars printed like Go's
    /// `fmt.Print`, objects and lists as compact JSON.
    pub fn render(&self, object: &Value) -> Result<String, JsonPathError> {
        let mut out = String::new();
        for group in self.find_results(object)? {
            out.push_str(&print_results(&group));
        }
        Ok(out)
    }

    fn find_in_nodes<'a>(
        &self,
        nodes: &[Node],
        data: Cow<'a, Value>,
    ) -> Result<Vec<Vec<Cow<'a, Value>>>, JsonPathError> {
        let mut full = Vec::new();
        let mut index = 0;
        while index < nodes.len() {
            let node = &nodes[index];
            if is_end(node) {
                return eval_error("not in range, nothing to end");
            }
            if let Some(inner) = range_head(node) {
                let end = matching_end(nodes, index)?;
                let items = self.eval_list(vec![data.clone()], inner)?;
                for item in items {
                    full.extend(self.find_in_nodes(&nodes[index + 1..end], item)?);
                }
                index = end + 1;
                continue;
            }
            full.push(self.walk(vec![data.clone()], node)?);
            index += 1;
        }
        Ok(full)
    }

    fn walk<'a>(
        &self,
        input: Vec<Cow<'a, Value>>,
        node: &Node,
    ) -> Result<Vec<Cow<'a, Value>>, JsonPathError> {
        match node {
            Node::List(nodes) => self.eval_list(input, nodes),
            Node::Text(text) => Ok(vec![Cow::Owned(Value::String(text.clone()))]),
            Node::Field(name) => self.eval_field(input, name),
            Node::Array(params) => eval_array(input, *params),
            Node::Filter { left, right, operator } => self.eval_filter(input, left, right, operator),
            Node::Int(value) => Ok(input.iter().map(|_| Cow::Owned(Value::from(*value))).collect()),
            Node::Float(value) => Ok(input.iter().map(|_| Cow::Owned(float_value(*value))).collect()),
            Node::Bool(value) => Ok(input.iter().map(|_| Cow::Owned(Value::Bool(*value))).collect()),
            Node::Wildcard => Ok(eval_wildcard(input)),
            Node::Recursive => Ok(eval_recursive(input)),
            Node::Union(lists) => {
                let mut result = Vec::new();
                for list in lists {
                    result.extend(self.eval_list(input.clone(), list)?);
                }
                Ok(result)
            }
            Node::Identifier(name) => match name.as_str() {
                "range" => Ok(input),
                "end" => eval_error("not in range, nothing to end"),
                other => eval_error(format!("unrecognized identifier {other}")),
            },
        }
    }

    fn eval_list<'a>(
        &self,
        input: Vec<Cow<'a, Value>>,
        nodes: &[Node],
    ) -> Result<Vec<Cow<'a, Value>>, JsonPathError> {
        let mut current = input;
        for node in nodes {
            current = self.walk(current, node)?;
        }
        Ok(current)
    }

    fn eval_field<'a>(
        &self,
        input: Vec<Cow<'a, Value>>,
        name: &str,
    ) -> Result<Vec<Cow<'a, Value>>, JsonPathError> {
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let mut results = Vec::new();
        for item in input {
            match item {
                Cow::Borrowed(Value::Object(map)) => {
                    if let Some(found) = map.get(name) {
                        results.push(Cow::Borrowed(found));
                    }
                }
                Cow::Owned(Value::Object(mut map)) => {
                    if let Some(found) = map.remove(name) {
                        results.push(Cow::Owned(found));
                    }
                }
                _ => {}
            }
        }
        if results.is_empty() && !self.allow_missing_keys {
            return eval_error(format!("{name} is not found"));
        }
        Ok(results)
    }

    fn eval_filter<'a>(
        &self,
        input: Vec<Cow<'a, Value>>,
        left: &[Node],
        right: &[Node],
        operator: &str,
    ) -> Result<Vec<Cow<'a, Value>>, JsonPathError> {
        let mut results = Vec::new();
        for item in input {
            let elements: Vec<Cow<'a, Value>> = match item {
                Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
                Cow::Owned(Value::Array(items)) => items.into_iter().map(Cow::Owned).collect(),
                other => {
                    return eval_error(format!(
                        "{} is not array or slice and cannot be filtered",
                        go_print(&other)
                    ));
                }
            };
            for element in elements {
                let lefts = self.eval_list(vec![element.clone()], left);
                if operator == "exists" {
                    if lefts.map(|found| !found.is_empty()).unwrap_or(false) {
                        results.push(element);
                    }
                    continue;
                }
                let lefts = lefts?;
                let left_value = match lefts.as_slice() {
                    [] => continue,
                    [one] => one.clone(),
                    _ => return eval_error("can only compare one element at a time"),
                };
                let rights = self.eval_list(vec![element.clone()], right)?;
                let right_value = match rights.as_slice() {
                    [] => continue,
                    [one] => one.clone(),
                    _ => return eval_error("can only compare one element at a time"),
                };
                if compare(&left_value, &right_value, operator)? {
                    results.push(element);
                }
            }
        }
        Ok(results)
    }
}

fn is_end(node: &Node) -> bool {
    matches!(node, Node::List(inner) if matches!(inner.as_slice(), [Node::Identifier(name)] if name == "end"))
}

/// The path after a leading `range` identifier (`{range .items[*]}`), if `node` starts a range.
fn range_head(node: &Node) -> Option<&[Node]> {
    match node {
        Node::List(inner) => match inner.split_first() {
            Some((Node::Identifier(name), rest)) if name == "range" => Some(rest),
            _ => None,
        },
        _ => None,
    }
}

fn matching_end(nodes: &[Node], start: usize) -> Result<usize, JsonPathError> {
    let mut depth = 0usize;
    for (index, node) in nodes.iter().enumerate().skip(start + 1) {
        if range_head(node).is_some() {
            depth += 1;
        } else if is_end(node) {
            if depth == 0 {
                return Ok(index);
            }
            depth -= 1;
        }
    }
    eval_error("range without a matching end")
}

fn float_value(value: f64) -> Value {
    serde_json::Number::from_f64(value).map(Value::Number).unwrap_or(Value::Null)
}

fn eval_array<'a>(
    input: Vec<Cow<'a, Value>>,
    params: [SliceParam; 3],
) -> Result<Vec<Cow<'a, Value>>, JsonPathError> {
    let mut result = Vec::new();
    for item in input {
        let items: Vec<Cow<'a, Value>> = match item {
            Cow::Borrowed(Value::Null) | Cow::Owned(Value::Null) => continue,
            Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
            Cow::Owned(Value::Array(items)) => items.into_iter().map(Cow::Owned).collect(),
            other => return eval_error(format!("{} is not array or slice", go_type_name(&other))),
        };
        let length = items.len() as i64;
        let mut p = params;
        if !p[0].known {
            p[0].value = 0;
        }
        if p[0].value < 0 {
            p[0].value += length;
        }
        if !p[1].known {
            p[1].value = length;
        }
        if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
            p[1].value += length;
        }
        if p[1].value == p[0].value {
            return Ok(result);
        }
        if p[0].value >= length || p[0].value < 0 {
            return eval_error(format!("array index out of bounds: index {}, length {length}", p[0].value));
        }
        if p[1].value > length || p[1].value < 0 {
            return eval_error(format!(
                "array index out of bounds: index {}, length {length}",
                p[1].value - 1
            ));
        }
        if p[0].value > p[1].value {
            return eval_error(format!(
                "starting index {} is greater than ending index {}",
                p[0].value, p[1].value
            ));
        }
        let step = if p[2].known {
            if p[2].value <= 0 {
                return eval_error("step must be > 0");
            }
            p[2].value as usize
        } else {
            1
        };
        let (start, end) = (p[0].value as usize, p[1].value as usize);
        result.extend(items.into_iter().skip(start).take(end - start).step_by(step));
    }
    Ok(result)
}

/// The children client-go iterates for `*` and `..`: map values, list items, and (a Go quirk) the
/// bytes of a string.
fn children<'a>(item: &Cow<'a, Value>) -> Vec<Cow<'a, Value>> {
    match item {
        Cow::Borrowed(Value::Object(map)) => map.values().map(Cow::Borrowed).collect(),
        Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
        Cow::Owned(Value::Object(map)) => map.values().cloned().map(Cow::Owned).collect(),
        Cow::Owned(Value::Array(items)) => items.iter().cloned().map(Cow::Owned).collect(),
        Cow::Borrowed(Value::String(text)) | Cow::Owned(Value::String(text)) => {
            text.bytes().map(|byte| Cow::Owned(Value::from(byte))).collect()
        }
        _ => Vec::new(),
    }
}

fn eval_wildcard(input: Vec<Cow<'_, Value>>) -> Vec<Cow<'_, Value>> {
    input.iter().flat_map(children).collect()
}

fn eval_recursive(input: Vec<Cow<'_, Value>>) -> Vec<Cow<'_, Value>> {
    let mut result = Vec::new();
    for item in input {
        let kids = children(&item);
        if !kids.is_empty() {
            result.push(item);
            result.extend(eval_recursive(kids));
        }
    }
    result
}

/// Go's comparison kinds for `text/template` comparisons.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scalar<'v> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'v str),
}

fn scalar(value: &Value) -> Result<Scalar<'_>, JsonPathError> {
    match value {
        Value::Bool(b) => Ok(Scalar::Bool(*b)),
        Value::String(s) => Ok(Scalar::Str(s)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(Scalar::Int(i))
            } else if let Some(u) = n.as_u64() {
                Ok(Scalar::Uint(u))
            } else {
                Ok(Scalar::Float(n.as_f64().unwrap_or(f64::NAN)))
            }
        }
        _ => eval_error("invalid type for comparison"),
    }
}

fn scalar_equal(a: Scalar<'_>, b: Scalar<'_>) -> Result<bool, JsonPathError> {
    Ok(match (a, b) {
        (Scalar::Bool(x), Scalar::Bool(y)) => x == y,
        (Scalar::Int(x), Scalar::Int(y)) => x == y,
        (Scalar::Uint(x), Scalar::Uint(y)) => x == y,
        (Scalar::Float(x), Scalar::Float(y)) => x == y,
        (Scalar::Str(x), Scalar::Str(y)) => x == y,
        (Scalar::Int(x), Scalar::Uint(y)) | (Scalar::Uint(y), Scalar::Int(x)) => x >= 0 && x as u64 == y,
        _ => return eval_error("incompatible types for comparison"),
    })
}

fn scalar_less(a: Scalar<'_>, b: Scalar<'_>) -> Result<bool, JsonPathError> {
    Ok(match (a, b) {
        (Scalar::Bool(_), Scalar::Bool(_)) => return eval_error("invalid type for comparison"),
        (Scalar::Int(x), Scalar::Int(y)) => x < y,
        (Scalar::Uint(x), Scalar::Uint(y)) => x < y,
        (Scalar::Float(x), Scalar::Float(y)) => x < y,
        (Scalar::Str(x), Scalar::Str(y)) => x < y,
        (Scalar::Int(x), Scalar::Uint(y)) => x < 0 || (x as u64) < y,
        (Scalar::Uint(x), Scalar::Int(y)) => y >= 0 && x < y as u64,
        _ => return eval_error("incompatible types for comparison"),
    })
}

fn compare(left: &Value, right: &Value, operator: &str) -> Result<bool, JsonPathError> {
    let (a, b) = (scalar(left)?, scalar(right)?);
    match operator {
        "==" => scalar_equal(a, b),
        "!=" => scalar_equal(a, b).map(|equal| !equal),
        "<" => scalar_less(a, b),
        "<=" => Ok(scalar_less(a, b)? || scalar_equal(a, b)?),
        ">" => Ok(!(scalar_less(a, b)? || scalar_equal(a, b)?)),
        ">=" => scalar_less(a, b).map(|less| !less),
        other => eval_error(format!("unrecognized filter operator {other}")),
    }
}

fn print_results(results: &[Cow<'_, Value>]) -> String {
    results.iter().map(|value| go_print(value)).collect::<Vec<_>>().join(" ")
}

/// Prints one value the way client-go's `PrintResults` does: objects and lists as compact JSON,
/// everything else with Go's `fmt.Print` (`null` for a JSON null).
fn go_print(value: &Value) -> String {
    match value {
        Value::Object(_) | Value::Array(_) => gofmt::json(value),
        Value::Null => "null".to_string(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => gofmt::number(n),
    }
}

fn go_type_name(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "map[string]interface {}",
        Value::Array(_) => "[]interface {}",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::Null => "interface {}",
    }
}

// ---------------------------------------------------------------------------------------------
// Parser (client-go's grammar)
// ---------------------------------------------------------------------------------------------

#[allow(clippy::unwrap_used)] // constant pattern
static DICT_KEY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^'([^']*)'$").unwrap());
#[allow(clippy::unwrap_used)] // constant pattern
static SLICE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$").unwrap());
#[allow(clippy::unwrap_used)] // constant pattern
static FILTER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^([^!<>=]+)([!<>=]+)(.+?)$").unwrap());

struct Parser<'s> {
    input: &'s str,
    pos: usize,
    start: usize,
    width: usize,
}

fn is_terminator(c: Option<char>) -> bool {
    matches!(c, None | Some(' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'))
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

/// Parses an action body (`.a[0]`) as client-go's `parseAction` does: wrapped in braces, keeping
/// the nodes of the single action.
fn parse_action(text: &str) -> Result<Vec<Node>, JsonPathError> {
    let wrapped = format!("{{{text}}}");
    let mut nodes = Parser::new(&wrapped).parse()?;
    match nodes.first_mut() {
        Some(Node::List(inner)) => Ok(std::mem::take(inner)),
        _ => Ok(Vec::new()),
    }
}

impl<'s> Parser<'s> {
    fn new(input: &'s str) -> Self {
        Parser { input, pos: 0, start: 0, width: 0 }
    }

    fn next(&mut self) -> Option<char> {
        match self.input.get(self.pos..).and_then(|rest| rest.chars().next()) {
            Some(c) => {
                self.width = c.len_utf8();
                self.pos += self.width;
                Some(c)
            }
            None => {
                self.width = 0;
                None
            }
        }
    }

    fn backup(&mut self) {
        self.pos -= self.width;
    }

    fn peek(&mut self) -> Option<char> {
        let c = self.next();
        self.backup();
        c
    }

    fn rest(&self) -> &'s str {
        self.input.get(self.pos..).unwrap_or("")
    }

    fn consume_text(&mut self) -> &'s str {
        let text = self.input.get(self.start..self.pos).unwrap_or("");
        self.start = self.pos;
        text
    }

    fn byte_before_last(&self) -> Option<u8> {
        self.pos.checked_sub(2).and_then(|i| self.input.as_bytes().get(i).copied())
    }

    fn parse(mut self) -> Result<Vec<Node>, JsonPathError> {
        let mut root = Vec::new();
        loop {
            if self.rest().starts_with('{') {
                if self.pos > self.start {
                    root.push(Node::Text(self.consume_text().to_string()));
                }
                self.pos += 1;
                self.consume_text();
                let mut action = Vec::new();
                self.parse_inside_action(&mut action)?;
                root.push(Node::List(action));
                continue;
            }
            if self.next().is_none() {
                break;
            }
        }
        if self.pos > self.start {
            root.push(Node::Text(self.consume_text().to_string()));
        }
        Ok(root)
    }

    fn parse_inside_action(&mut self, current: &mut Vec<Node>) -> Result<(), JsonPathError> {
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                self.consume_text();
                return Ok(());
            }
            if rest.starts_with("[?(") {
                self.parse_filter(current)?;
                continue;
            }
            if rest.starts_with("..") {
                self.parse_recursive(current)?;
                continue;
            }
            match self.next() {
                None | Some('\r' | '\n') => return syntax("unclosed action"),
                Some(' ' | '@' | '$') => {
                    self.consume_text();
                }
                Some('[') => self.parse_array(current)?,
                Some(quote @ ('"' | '\'')) => self.parse_quote(current, quote)?,
                Some('.') => self.parse_field(current)?,
                Some(c) if c == '+' || c == '-' || c.is_numeric() => {
                    self.backup();
                    self.parse_number(current)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup();
                    self.parse_identifier(current)?;
                }
                Some(c) => {
                    return syntax(format!("unrecognized character in action: U+{:04X} '{c}'", c as u32));
                }
            }
        }
    }

    fn parse_identifier(&mut self, current: &mut Vec<Node>) -> Result<(), JsonPathError> {
        loop {
            let c = self.next();
            if is_terminator(c) {
                self.backup();
                break;
            }
        }
        let value = self.consume_text();
        current.push(match value {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            other => Node::Identifier(other.to_string()),
        });
        Ok(())
    }

    fn parse_recursive(&mut self, current: &mut Vec<Node>) -> Result<(), JsonPathError> {
        if matches!(current.last(), Some(Node::Recursive)) {
            return syntax("invalid multiple recursive descent");
        }
        self.pos += 2;
        self.consume_text();
        current.push(Node::Recursive);
        if self.peek().is_some_and(is_alphanumeric) {
            self.parse_field(current)?;
        }
        Ok(())
    }

    fn parse_number(&mut self, current: &mut Vec<Node>) -> Result<(), JsonPathError> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || c.is_numeric() => {}
                _ => {
                    self.backup();
                    break;
                }
            }
        }
        let value = self.consume_text();
        if let Ok(int) = value.parse::<i64>() {
            current.push(Node::Int(int));
        } else if let Ok(float) = value.parse::<f64>() {
            current.push(Node::Float(float));
        } else {
            return syntax(format!("cannot parse number {value}"));
        }
        Ok(())
    }

    fn parse_array(&mut self, current: &mut Vec<Node>) -> Result<(), JsonPathError> {
        loop {
            match self.next() {
                None | Some('\n') => return syntax("unterminated array"),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let text = self.consume_text();
        let mut inner = text.get(1..text.len().saturating_sub(1)).unwrap_or("");
        if inner == "*" {
            inner = ":";
        }
        let parts: Vec<&str> = inner.split(',').collect();
        if parts.len() > 1 {
            let mut union = Vec::new();
            for part in parts {
                union.push(parse_action(&format!("[{}]", part.trim_matches(' ')))?);
            }
            current.push(Node::Union(union));
            return Ok(());
        }
        if let Some(key) = DICT_KEY.captures(inner).and_then(|c| c.get(1)) {
            current.extend(parse_action(&format!(".{}", key.as_str()))?);
            return Ok(());
        }
        let Some(captures) = SLICE.captures(inner) else {
            return syntax(format!("invalid array index {inner}"));
        };
        let mut params = [SliceParam::default(); 3];
        for i in 0..3 {
            let raw = captures.get(i + 1).map(|m| m.as_str()).unwrap_or("");
            if !raw.is_empty() {
                let digits = if i > 0 { &raw[1..] } else { raw };
                if i > 0 && digits.is_empty() {
                    params[i].known = false;
                } else {
                    params[i].known = true;
                    params[i].value = match digits.parse::<i64>() {
                        Ok(value) => value,
                        Err(_) => return syntax(format!("array index {digits} is not a number")),
                    };
                }
            } else if i == 1 {
                params[i] = SliceParam { value: params[0].value + 1, known: true, derived: true };
            }
        }
        current.push(Node::Array(params));
        Ok(())
    }

    fn parse_filter(&mut self, current: &mut Vec<Node>) -> Result<(), JsonPathError> {
        self.pos += 3;
        self.consume_text();
        let (mut begin, mut end, mut pair) = (false, false, '"');
        loop {
            match self.next() {
                None | Some('\n') => return syntax("unterminated filter"),
                Some(quote @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = quote;
                        continue;
                    }
                    if self.byte_before_last() != Some(b'\\') && quote == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                Some(_) => {}
            }
        }
        if self.next() != Some(']') {
            return syntax("unclosed array expect ]");
        }
        let text = self.consume_text();
        let text = text.get(..text.len().saturating_sub(2)).unwrap_or("");
        match FILTER.captures(text) {
            Some(captures) => {
                let part = |i: usize| captures.get(i).map(|m| m.as_str()).unwrap_or("");
                current.push(Node::Filter {
                    left: parse_action(part(1))?,
                    right: parse_action(part(3))?,
                    operator: part(2).to_string(),
                });
            }
            None => current.push(Node::Filter {
                left: parse_action(text)?,
                right: Vec::new(),
                operator: "exists".to_string(),
            }),
        }
        Ok(())
    }

    fn parse_quote(&mut self, current: &mut Vec<Node>, end: char) -> Result<(), JsonPathError> {
        loop {
            match self.next() {
                None | Some('\n') => return syntax("unterminated quoted string"),
                Some(c) if c == end && self.byte_before_last() != Some(b'\\') => break,
                Some(_) => {}
            }
        }
        let value = self.consume_text();
        match unquote(value) {
            Some(text) => current.push(Node::Text(text)),
            None => return syntax(format!("unquote string {value} error invalid syntax")),
        }
        Ok(())
    }

    fn parse_field(&mut self, current: &mut Vec<Node>) -> Result<(), JsonPathError> {
        self.consume_text();
        loop {
            let c = self.next();
            if c == Some('\\') {
                self.next();
            } else if is_terminator(c) {
                self.backup();
                break;
            }
        }
        let value = self.consume_text();
        if value == "*" {
            current.push(Node::Wildcard);
        } else {
            current.push(Node::Field(value.replace('\\', "")));
        }
        Ok(())
    }
}

/// Removes the quotes of a quoted literal and resolves Go escape sequences (`\n`, `\"`, `\u00e9`,
/// ...); `None` when the literal is malformed.
fn unquote(quoted: &str) -> Option<String> {
    let mut chars = quoted.chars();
    let quote = chars.next()?;
    if quoted.len() < 2 || !quoted.ends_with(quote) || !matches!(quote, '"' | '\'') {
        return None;
    }
    let body = &quoted[1..quoted.len() - 1];
    let mut out = String::new();
    let mut iter = body.chars().peekable();
    while let Some(c) = iter.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = iter.next()?;
        let resolved = match escaped {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\\' => '\\',
            '\'' | '"' if escaped == quote => escaped,
            'x' | 'u' | 'U' => {
                let len = match escaped {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..len).filter_map(|_| iter.next()).collect();
                if hex.len() != len {
                    return None;
                }
                char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
            }
            '0'..='7' => {
                let mut digits = escaped.to_string();
                for _ in 0..2 {
                    digits.push(iter.next()?);
                }
                char::from_u32(u32::from_str_radix(&digits, 8).ok()?)?
            }
            _ => return None,
        };
        out.push(resolved);
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------------

/// One printer column, as in a CRD version or a built-in table definition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Column {
    /// Header text (`Ready`, `Age`, ...); kubectl upper-cases it.
    pub name: String,
    /// OpenAPI type of the cell: `integer`, `number`, `boolean`, `string` or `date`.
    pub type_: String,
    /// Optional format hint (`name`, `date-time`, `int32`, ...), passed through to clients.
    pub format: String,
    /// Column description; empty means the apiserver's default text naming the JSONPath.
    pub description: String,
    /// 0 for columns always shown, higher for `-o wide` only.
    pub priority: i32,
    /// JSONPath of the cell value (`.status.replicas`).
    pub json_path: String,
}

impl From<&k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition>
    for Column
{
    /// A CRD version's printer column, with absent optional fields empty (as kube reads them).
    fn from(
        column: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition,
    ) -> Self {
        Column {
            name: column.name.clone(),
            type_: column.type_.clone(),
            format: column.format.clone().unwrap_or_default(),
            description: column.description.clone().unwrap_or_default(),
            priority: column.priority.unwrap_or(0),
            json_path: column.json_path.clone(),
        }
    }
}

/// The description kube-apiserver gives the `Name` column (ObjectMeta's `name` documentation).
pub const NAME_COLUMN_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating \
resources, although some resources may allow a client to request the generation of an appropriate name \
automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be \
updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// Options of [`render_table_with`]: what [`render_table`] fixes to "now" and "with headers".
#[derive(Clone, Debug)]
pub struct TableOptions<'o> {
    /// `includeObject` of the request: `Metadata` (also for ""), `Object` or `None`.
    pub include_object: &'o str,
    /// `metadata.resourceVersion` of the table (the list's, or the single object's).
    pub resource_version: &'o str,
    /// `continue` token of a paginated list, if any.
    pub continue_token: &'o str,
    /// `remainingItemCount` of a paginated list, if known.
    pub remaining_item_count: Option<i64>,
    /// The instant `date` columns measure ages against.
    pub now: SystemTime,
    /// `TableOptions.noHeaders`: omit `columnDefinitions` (kubectl asks for this when watching).
    pub no_headers: bool,
}

/// Whether `value` is an `includeObject` value kube-apiserver accepts; any other value must be
/// answered with `400 BadRequest: unrecognized includeObject value: "..."`.
pub fn is_valid_include_object(value: &str) -> bool {
    matches!(value, "" | "Metadata" | "Object" | "None")
}

/// Renders a `meta.k8s.io/v1 Table` of `objects` (the JSON kube-apiserver returns for
/// `Accept: ...;as=Table`): columnDefinitions = `Name` (type string, format name) + columns; each
/// row's `cells` = [name, values...] where a value is rendered per column type exactly like
/// kube-apiserver's CRD table convertor: only the first match counts; `integer`, `number` and
/// `boolean` become JSON scalars (`null` when the value has another type), `string` is the value
/// printed as text (JSON for objects and lists), `date` is the age of an RFC 3339 timestamp as
/// kube-apiserver renders it (`5m`, `2d3h`, `<invalid>`, `<unknown>`); a path that matches nothing
/// or fails yields `null`. `object` is the object as PartialObjectMetadata when `include_object` is
/// "Metadata" (or ""), the full object for "Object", `null` for "None"; plus
/// `metadata.resourceVersion` = `list_rv`.
pub fn render_table(columns: &[Column], objects: &[&Value], include_object: &str, list_rv: &str) -> Value {
    render_table_with(
        columns,
        objects,
        &TableOptions {
            include_object,
            resource_version: list_rv,
            continue_token: "",
            remaining_item_count: None,
            now: SystemTime::now(),
            no_headers: false,
        },
    )
}

/// [`render_table`] with every knob explicit (pagination metadata, a fixed clock for ages, no
/// headers).
pub fn render_table_with(columns: &[Column], objects: &[&Value], options: &TableOptions<'_>) -> Value {
    let paths: Vec<Option<JsonPath>> = columns.iter().map(|c| JsonPath::parse(&c.json_path).ok()).collect();
    let now = unix_seconds(options.now);
    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
            let mut cells = vec![Value::String(name.to_string())];
            for (column, path) in columns.iter().zip(&paths) {
                cells.push(match path {
                    Some(path) => cell(column, path, object, now),
                    None => Value::Null,
                });
            }
            let mut row = Map::new();
            row.insert("cells".into(), Value::Array(cells));
            row.insert("object".into(), row_object(object, options.include_object));
            Value::Object(row)
        })
        .collect();

    let mut metadata = Map::new();
    if !options.resource_version.is_empty() {
        metadata.insert("resourceVersion".into(), Value::String(options.resource_version.to_string()));
    }
    if !options.continue_token.is_empty() {
        metadata.insert("continue".into(), Value::String(options.continue_token.to_string()));
    }
    if let Some(count) = options.remaining_item_count {
        metadata.insert("remainingItemCount".into(), Value::from(count));
    }
    let definitions = if options.no_headers {
        Value::Null
    } else {
        let mut list = vec![json!({
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": NAME_COLUMN_DESCRIPTION,
            "priority": 0,
        })];
        list.extend(columns.iter().map(|column| {
            let description = if column.description.is_empty() {
                format!("Custom resource definition column (in JSONPath format): {}", column.json_path)
            } else {
                column.description.clone()
            };
            json!({
                "name": column.name,
                "type": column.type_,
                "format": column.format,
                "description": description,
                "priority": column.priority,
            })
        }));
        Value::Array(list)
    };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": Value::Object(metadata),
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

fn row_object(object: &Value, include_object: &str) -> Value {
    match include_object {
        "Object" => object.clone(),
        "None" => Value::Null,
        _ => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
    }
}

fn cell(column: &Column, path: &JsonPath, object: &Value, now: i64) -> Value {
    let first = match path.find_results(object) {
        Ok(groups) => groups.into_iter().next().and_then(|group| group.into_iter().next()),
        Err(_) => None,
    };
    let Some(value) = first else {
        return Value::Null;
    };
    let value = value.as_ref();
    match column.type_.as_str() {
        // A JSON null printed through reflection is Go's "<no value>".
        "string" if value.is_null() => Value::String("<no value>".into()),
        "string" => Value::String(go_print(value)),
        "integer" => match value {
            Value::Number(n) => match n.as_i64() {
                Some(i) => Value::from(i),
                None => Value::from(n.as_f64().map(|f| f as i64).unwrap_or(0)),
            },
            _ => Value::Null,
        },
        "number" => match value {
            Value::Number(n) => n.as_f64().map(float_value).unwrap_or(Value::Null),
            _ => Value::Null,
        },
        "boolean" => match value {
            Value::Bool(b) => Value::Bool(*b),
            _ => Value::Null,
        },
        "date" => match value {
            Value::String(text) => Value::String(match text.as_str() {
                "" | "null" => "<unknown>".to_string(),
                _ => match parse_rfc3339(text) {
                    Some(at) => human_duration(now - at),
                    None => "<invalid>".to_string(),
                },
            }),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

fn unix_seconds(at: SystemTime) -> i64 {
    match at.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Whether `year-month-day` is a real calendar date.
pub(crate) fn valid_date(year: i64, month: u32, day: u32) -> bool {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// Parses an RFC 3339 timestamp (`2024-01-02T03:04:05Z`, `...05.123+02:00`) into Unix seconds,
/// as Go's `time.Parse(time.RFC3339, ...)` accepts it.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if part.bytes().all(|c| c.is_ascii_digit()) { part.parse().ok() } else { None }
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)? as u32, digits(8..10)? as u32);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !valid_date(year, month, day) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return None;
        }
        rest = &fraction[len..];
    }
    let offset = match rest {
        "Z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let hours: i64 = rest.get(1..3)?.parse().ok()?;
            let minutes: i64 = rest.get(4..6)?.parse().ok()?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            sign * (hours * 3600 + minutes * 60)
        }
    };
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// An age as kube-apiserver and kubectl print it (`apimachinery/pkg/util/duration.HumanDuration`):
/// `45s`, `3m20s`, `2d3h`, `4y12d`, `<invalid>` for the future.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 { format!("{}d", hours / 24) } else { format!("{}d{h}h", hours / 24) };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// Go's text renderings of JSON values, shared by JSONPath printing and by field-error messages
/// (which must read exactly like kube-apiserver's).
pub mod gofmt {
    use serde_json::{Number, Value};

    /// A float as Go's `fmt.Print` / `%v` writes it (`strconv.FormatFloat(f, 'g', -1, 64)`):
    /// shortest round-trip digits, exponent form (`1e+06`, `1.5e-07`) when the decimal exponent
    /// is below -4 or at least 6.
    pub fn float(value: f64) -> String {
        if value.is_nan() {
            return "NaN".into();
        }
        if value.is_infinite() {
            return if value > 0.0 { "+Inf".into() } else { "-Inf".into() };
        }
        if value == 0.0 {
            return if value.is_sign_negative() { "-0".into() } else { "0".into() };
        }
        // Rust's `{:e}` yields the shortest round-trip digits, e.g. "-1.2345e6".
        let sci = format!("{value:e}");
        let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if mantissa.starts_with('-') { "-" } else { "" };
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        if !(-4..6).contains(&exponent) {
            let mantissa =
                if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits.clone() };
            let exp_sign = if exponent < 0 { '-' } else { '+' };
            format!("{sign}{mantissa}e{exp_sign}{:02}", exponent.abs())
        } else if exponent < 0 {
            let zeros = "0".repeat((-exponent - 1) as usize);
            format!("{sign}0.{zeros}{digits}")
        } else {
            let int_len = (exponent + 1) as usize;
            if digits.len() <= int_len {
                format!("{sign}{digits}{}", "0".repeat(int_len - digits.len()))
            } else {
                format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
            }
        }
    }

    /// A JSON number as Go's `fmt.Print` writes the `int64` or `float64` it decodes to.
    pub fn number(n: &Number) -> String {
        if let Some(i) = n.as_i64() {
            i.to_string()
        } else if let Some(u) = n.as_u64() {
            // Beyond int64: Go decodes it as a float64.
            float(u as f64)
        } else {
            float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// A float as Go's `encoding/json` writes it (`3`, `0.5`, `1e+21`, `1e-7`).
    pub fn json_float(value: f64) -> String {
        let abs = value.abs();
        if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
            let sci = format!("{value:e}");
            let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
            let exponent: i32 = exponent.parse().unwrap_or(0);
            let sign = if exponent < 0 { '-' } else { '+' };
            format!("{mantissa}e{sign}{}", exponent.abs())
        } else {
            let text = format!("{value}");
            text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
        }
    }

    /// A string as Go's `strconv.Quote` / `%q` writes it.
    pub fn quote(text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 2);
        out.push('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{7}' => out.push_str("\\a"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{b}' => out.push_str("\\v"),
                c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
                c if c.is_control() => {
                    if (c as u32) < 0x10000 {
                        out.push_str(&format!("\\u{:04x}", c as u32));
                    } else {
                        out.push_str(&format!("\\U{:08x}", c as u32));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// A value as Go's `encoding/json.Marshal` writes it: compact, keys sorted, `<`, `>`, `&`,
    /// U+2028 and U+2029 escaped, floats in Go's notation.
    pub fn json(value: &Value) -> String {
        let mut out = String::new();
        write_json(value, &mut out);
        out
    }

    fn write_json(value: &Value, out: &mut String) {
        match value {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => {
                if n.is_f64() {
                    out.push_str(&json_float(n.as_f64().unwrap_or(0.0)));
                } else {
                    out.push_str(&n.to_string());
                }
            }
            Value::String(s) => write_json_string(s, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json(item, out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_string(key, out);
                    out.push(':');
                    if let Some(item) = map.get(key) {
                        write_json(item, out);
                    }
                }
                out.push('}');
            }
        }
    }

    fn write_json_string(text: &str, out: &mut String) {
        out.push('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
    }

    /// A value as it appears in a Kubernetes field error (`Invalid value: <this>`): strings
    /// quoted, numbers and booleans bare, everything else as JSON.
    pub fn field_value(value: &Value) -> String {
        match value {
            Value::String(s) => quote(s),
            Value::Number(n) => number(n),
            Value::Bool(b) => b.to_string(),
            other => json(other),
        }
    }
}
