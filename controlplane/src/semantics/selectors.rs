//! Label and field selector strings, as clients send them in `?labelSelector=` and
//! `?fieldSelector=`.
//!
//! The label selector grammar, its lexer quirks (`in`/`notin` are keywords only where an operator
//! is expected, `x in ()` means "the empty value", values are sorted and deduplicated) and its
//! error messages follow apimachinery's `labels.Parse`, so that a client that gets a 400 from us
//! reads the same message kube-apiserver would send. Field selectors follow `fields.ParseSelector`:
//! terms separated by unescaped commas, only `=`, `==` and `!=`, and `\` escapes in values.

use std::{collections::BTreeMap, fmt};

use serde_json::Value;

/// Why a selector string was rejected; the message is the one kube-apiserver returns in the
/// `BadRequest` status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// A malformed label selector (`unable to parse requirement: ...`, `found ',', expected: ...`).
    #[error("{0}")]
    Label(String),
    /// A malformed field selector (`invalid selector: ...`, `invalid field selector: ...`).
    #[error("{0}")]
    Field(String),
}

/// The operator of one label requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LabelOperator {
    /// `key=value`
    Equals,
    /// `key==value`
    DoubleEquals,
    /// `key!=value` (also matches objects without the label)
    NotEquals,
    /// `key in (a,b)`
    In,
    /// `key notin (a,b)` (also matches objects without the label)
    NotIn,
    /// `key`
    Exists,
    /// `!key`
    DoesNotExist,
    /// `key>3` (integer comparison)
    GreaterThan,
    /// `key<3` (integer comparison)
    LessThan,
}

/// One term of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelRequirement {
    key: String,
    operator: LabelOperator,
    /// Sorted and deduplicated, as apimachinery stores them.
    values: Vec<String>,
}

impl LabelRequirement {
    /// The label key this term tests.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator of this term.
    pub fn operator(&self) -> LabelOperator {
        self.operator
    }

    /// The values of this term (sorted, without duplicates; empty for `Exists`/`DoesNotExist`).
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Whether `labels` satisfy this term, with the Kubernetes rules (`!=` and `notin` match a
    /// missing label; `>`/`<` need the label to be an integer).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let current = labels.get(&self.key);
        let has_value = |value: &String| self.values.iter().any(|candidate| candidate == value);
        match self.operator {
            LabelOperator::Equals | LabelOperator::DoubleEquals | LabelOperator::In => {
                current.is_some_and(has_value)
            }
            LabelOperator::NotEquals | LabelOperator::NotIn => !current.is_some_and(has_value),
            LabelOperator::Exists => current.is_some(),
            LabelOperator::DoesNotExist => current.is_none(),
            LabelOperator::GreaterThan | LabelOperator::LessThan => {
                let Some(Ok(actual)) = current.map(|value| value.parse::<i64>()) else {
                    return false;
                };
                let [bound] = self.values.as_slice() else {
                    return false;
                };
                let Ok(bound) = bound.parse::<i64>() else {
                    return false;
                };
                if self.operator == LabelOperator::GreaterThan { actual > bound } else { actual < bound }
            }
        }
    }
}

impl fmt::Display for LabelRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == LabelOperator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let (operator, parenthesised) = match self.operator {
            LabelOperator::Exists | LabelOperator::DoesNotExist => return Ok(()),
            LabelOperator::Equals => ("=", false),
            LabelOperator::DoubleEquals => ("==", false),
            LabelOperator::NotEquals => ("!=", false),
            LabelOperator::In => (" in ", true),
            LabelOperator::NotIn => (" notin ", true),
            LabelOperator::GreaterThan => (">", false),
            LabelOperator::LessThan => ("<", false),
        };
        f.write_str(operator)?;
        if parenthesised {
            f.write_str("(")?;
        }
        f.write_str(&self.values.join(","))?;
        if parenthesised {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A parsed label selector (`a=b,c!=d,e in (x,y),f notin (z),g,!h`, also `==`); empty string =
/// everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// Sorted by key, as apimachinery keeps them.
    requirements: Vec<LabelRequirement>,
}

impl LabelSelector {
    /// Parses a selector string with apimachinery's grammar and validation (label keys must be
    /// qualified names, values valid label values).
    pub fn parse(text: &str) -> Result<LabelSelector, SelectorError> {
        let tokens = lex(text);
        let mut parser = Parser { tokens, position: 0 };
        let mut requirements = parser.parse().map_err(SelectorError::Label)?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// The selector that matches every object.
    pub fn everything() -> LabelSelector {
        LabelSelector::default()
    }

    /// Whether the selector has no terms (and so matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The terms of the selector, sorted by key.
    pub fn requirements(&self) -> &[LabelRequirement] {
        &self.requirements
    }

    /// Whether `labels` satisfy every term.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|requirement| requirement.matches(labels))
    }

    /// Convenience: matches the `metadata.labels` of an object (no labels = empty map).
    pub fn matches_object(&self, object: &Value) -> bool {
        self.matches(&object_labels(object))
    }

    /// The value a label must have for the selector to match, when a term pins it (`key=value`,
    /// `key==value` or `key in (value)`); lets callers narrow a list before matching.
    pub fn requires_exact_match(&self, key: &str) -> Option<&str> {
        self.requirements.iter().find_map(|requirement| {
            match (requirement.operator, requirement.values.as_slice()) {
                (LabelOperator::Equals | LabelOperator::DoubleEquals | LabelOperator::In, [value])
                    if requirement.key == key =>
                {
                    Some(value.as_str())
                }
                _ => None,
            }
        })
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, requirement) in self.requirements.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write!(f, "{requirement}")?;
        }
        Ok(())
    }
}

/// The labels of an object (`metadata.labels`; values that are not strings are ignored).
pub fn object_labels(object: &Value) -> BTreeMap<String, String> {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(text: &str) -> Option<Token> {
    Some(match text {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(byte: u8) -> bool {
    matches!(byte, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits a label selector into tokens the way apimachinery's lexer does: identifiers run until
/// whitespace or an operator character, and operator characters are combined greedily while
/// they still spell an operator.
fn lex(text: &str) -> Vec<(Token, String)> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut position = 0;
    loop {
        while position < bytes.len() && is_whitespace(bytes[position]) {
            position += 1;
        }
        if position >= bytes.len() {
            tokens.push((Token::EndOfString, String::new()));
            return tokens;
        }
        if is_special(bytes[position]) {
            let start = position;
            let mut last: Option<(Token, usize)> = None;
            while position < bytes.len() && is_special(bytes[position]) {
                match keyword(&text[start..=position]) {
                    Some(token) => last = Some((token, position + 1)),
                    None if last.is_some() => break,
                    None => {}
                }
                position += 1;
            }
            match last {
                Some((token, end)) => {
                    tokens.push((token, text[start..end].to_string()));
                    position = end;
                }
                // Every single operator character is a token, so this cannot happen; stop cleanly.
                None => {
                    tokens.push((Token::EndOfString, String::new()));
                    return tokens;
                }
            }
        } else {
            let start = position;
            while position < bytes.len() && !is_special(bytes[position]) && !is_whitespace(bytes[position]) {
                position += 1;
            }
            let word = &text[start..position];
            let token = match keyword(word) {
                Some(token) => token,
                None => Token::Identifier,
            };
            tokens.push((token, word.to_string()));
        }
    }
}

/// Whether `in`/`notin` are read as operators (after a key) or as plain values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    tokens: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    fn at(&self, position: usize, context: Context) -> (Token, String) {
        let (token, literal) = match self.tokens.get(position) {
            Some((token, literal)) => (*token, literal.clone()),
            None => (Token::EndOfString, String::new()),
        };
        match (context, token) {
            (Context::Values, Token::In | Token::NotIn) => (Token::Identifier, literal),
            _ => (token, literal),
        }
    }

    fn lookahead(&self, context: Context) -> (Token, String) {
        self.at(self.position, context)
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        let item = self.at(self.position, context);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<LabelRequirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (token, literal) = self.lookahead(Context::Values);
            match token {
                Token::Identifier | Token::DoesNotExist => {
                    let requirement = self
                        .parse_requirement()
                        .map_err(|err| format!("unable to parse requirement: {err}"))?;
                    requirements.push(requirement);
                    let (token, literal) = self.consume(Context::Values);
                    match token {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (next, next_literal) = self.lookahead(Context::Values);
                            if next != Token::Identifier && next != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{next_literal}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{literal}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => return Err(format!("found '{literal}', expected: !, identifier, or 'end of string'")),
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<LabelRequirement, String> {
        let (key, inferred) = self.parse_key_and_infer_operator()?;
        if let Some(operator) = inferred {
            return new_requirement(key, operator, Vec::new());
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            LabelOperator::In | LabelOperator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(key, operator, values)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<LabelOperator>), String> {
        let mut operator = None;
        let (mut token, mut literal) = self.consume(Context::Values);
        if token == Token::DoesNotExist {
            operator = Some(LabelOperator::DoesNotExist);
            (token, literal) = self.consume(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        // The parser validates keys without a field path, which Kubernetes prints as "<nil>".
        let problems = qualified_name_problems(&literal);
        if !problems.is_empty() {
            return Err(format!("<nil>: Invalid value: {}: {}", go_quote(&literal), problems.join("; ")));
        }
        let (next, _) = self.lookahead(Context::Values);
        if (next == Token::EndOfString || next == Token::Comma) && operator.is_none() {
            operator = Some(LabelOperator::Exists);
        }
        Ok((literal, operator))
    }

    fn parse_operator(&mut self) -> Result<LabelOperator, String> {
        let (token, literal) = self.consume(Context::KeyAndOperator);
        Ok(match token {
            Token::In => LabelOperator::In,
            Token::Equals => LabelOperator::Equals,
            Token::DoubleEquals => LabelOperator::DoubleEquals,
            Token::GreaterThan => LabelOperator::GreaterThan,
            Token::LessThan => LabelOperator::LessThan,
            Token::NotIn => LabelOperator::NotIn,
            Token::NotEquals => LabelOperator::NotEquals,
            _ => return Err(format!("found '{literal}', expected: in, notin, =, ==, !=, gt, lt")),
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (token, literal) = self.consume(Context::Values);
        if token != Token::OpenPar {
            return Err(format!("found '{literal}' expected: '('"));
        }
        let (token, literal) = self.lookahead(Context::Values);
        match token {
            Token::Identifier | Token::Comma => {
                let values = self.parse_identifiers_list()?;
                let (token, _) = self.consume(Context::Values);
                if token != Token::ClosedPar {
                    return Err(format!("found '{literal}', expected: ')'"));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{literal}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        loop {
            let (token, literal) = self.consume(Context::Values);
            match token {
                Token::Identifier => {
                    values.push(literal);
                    let (next, next_literal) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{next_literal}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    // A comma with nothing before or after it stands for the empty value.
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    let (next, _) = self.lookahead(Context::Values);
                    if next == Token::ClosedPar {
                        values.push(String::new());
                        return Ok(values);
                    }
                    if next == Token::Comma {
                        self.consume(Context::Values);
                        values.push(String::new());
                    }
                }
                _ => return Err(format!("found '{literal}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (token, _) = self.lookahead(Context::Values);
        if token == Token::EndOfString || token == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (token, literal) = self.consume(Context::Values);
        if token == Token::Identifier {
            return Ok(vec![literal]);
        }
        Err(format!("found '{literal}', expected: identifier"))
    }
}

/// Builds a requirement the way `labels.NewRequirement` does: values sorted and deduplicated,
/// then validated (all problems reported together).
fn new_requirement(
    key: String,
    operator: LabelOperator,
    mut values: Vec<String>,
) -> Result<LabelRequirement, String> {
    values.sort();
    values.dedup();
    let mut errors = Vec::new();
    let key_problems = qualified_name_problems(&key);
    if !key_problems.is_empty() {
        errors.push(format!("key: Invalid value: {}: {}", go_quote(&key), key_problems.join("; ")));
    }
    match operator {
        LabelOperator::GreaterThan | LabelOperator::LessThan => {
            if values.len() != 1 {
                errors.push(format!(
                    "values: Invalid value: {}: for 'Gt', 'Lt' operators, exactly one value is required",
                    json_strings(&values)
                ));
            }
            for (index, value) in values.iter().enumerate() {
                if value.parse::<i64>().is_err() {
                    errors.push(format!(
                        "values[{index}]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer",
                        go_quote(value)
                    ));
                }
            }
        }
        LabelOperator::In | LabelOperator::NotIn if values.is_empty() => errors.push(format!(
            "values: Invalid value: {}: for 'in', 'notin' operators, values set can't be empty",
            json_strings(&values)
        )),
        _ => {}
    }
    for (index, value) in values.iter().enumerate() {
        let problems = label_value_problems(value);
        if !problems.is_empty() {
            errors.push(format!(
                "values[{index}][{key}]: Invalid value: {}: {}",
                go_quote(value),
                problems.join("; ")
            ));
        }
    }
    errors.dedup();
    match errors.len() {
        0 => Ok(LabelRequirement { key, operator, values }),
        1 => Err(errors.remove(0)),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

fn json_strings(values: &[String]) -> String {
    serde_json::to_string(values).unwrap_or_default()
}

const QUALIFIED_NAME_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start \
                                      and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
                                      '123-abc', regex used for validation is \
                                      '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn is_qualified_name_part(name: &str) -> bool {
    let bytes = name.as_bytes();
    let alphanumeric = |byte: &u8| byte.is_ascii_alphanumeric();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            alphanumeric(first)
                && alphanumeric(last)
                && bytes.iter().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

fn is_dns1123_subdomain(value: &str) -> bool {
    !value.is_empty()
        && value.split('.').all(|label| {
            let bytes = label.as_bytes();
            let end_ok =
                |byte: Option<&u8>| byte.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
            end_ok(bytes.first())
                && end_ok(bytes.last())
                && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        })
}

/// The problems apimachinery's `IsQualifiedName` reports for a label key.
fn qualified_name_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                problems.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    problems.push("prefix part must be no more than 253 characters".to_string());
                }
                if !is_dns1123_subdomain(prefix) {
                    problems.push(
                        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
                         characters, '-' or '.', and must start and end with an alphanumeric character (e.g. \
                         'example.com', regex used for validation is \
                         '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                            .to_string(),
                    );
                }
            }
            *name
        }
        _ => {
            problems.push(format!(
                "a qualified name {QUALIFIED_NAME_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. \
                 'example.com/MyName')"
            ));
            return problems;
        }
    };
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        problems.push("name part must be no more than 63 characters".to_string());
    }
    if !is_qualified_name_part(name) {
        problems.push(format!("name part {QUALIFIED_NAME_MESSAGE}"));
    }
    problems
}

/// The problems apimachinery's `IsValidLabelValue` reports.
fn label_value_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        problems.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and \
             must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', \
             regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
                .to_string(),
        );
    }
    problems
}

/// Quotes a string the way Go's `%q` does, so error messages read like kube-apiserver's.
fn go_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One term of a field selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    field: String,
    value: String,
    negated: bool,
}

impl FieldRequirement {
    /// The dotted field path (`spec.nodeName`).
    pub fn field(&self) -> &str {
        &self.field
    }

    /// The (unescaped) value compared against.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether this is a `!=` term.
    pub fn is_negated(&self) -> bool {
        self.negated
    }
}

/// A parsed field selector (`metadata.name=x,spec.nodeName!=y,status.phase==Running`): only `=`,
/// `==`, `!=`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// In the order apimachinery evaluates them (the terms sorted as strings).
    terms: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parses a field selector; values may escape `\`, `,` and `=` with a backslash.
    pub fn parse(text: &str) -> Result<FieldSelector, SelectorError> {
        let mut parts = split_terms(text);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((field, operator, raw_value)) = split_term(part) else {
                return Err(SelectorError::Field(format!(
                    "invalid selector: '{text}'; can't understand '{part}'"
                )));
            };
            let value = unescape_field_value(raw_value).map_err(SelectorError::Field)?;
            terms.push(FieldRequirement { field: field.to_string(), value, negated: operator == "!=" });
        }
        Ok(FieldSelector { terms })
    }

    /// The selector that matches every object.
    pub fn everything() -> FieldSelector {
        FieldSelector::default()
    }

    /// Whether the selector has no terms (and so matches everything).
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The terms of the selector.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.terms
    }

    /// The field paths used (so the caller can reject fields a resource does not support, as
    /// kube-apiserver does with "field label not supported").
    pub fn fields(&self) -> Vec<String> {
        let mut fields: Vec<String> = Vec::new();
        for term in &self.terms {
            if !fields.contains(&term.field) {
                fields.push(term.field.clone());
            }
        }
        fields
    }

    /// The value a field must have for the selector to match, when a `=`/`==` term pins it (the
    /// kubelet's `spec.nodeName=<node>` watch, for instance).
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms.iter().find(|term| !term.negated && term.field == field).map(|term| term.value.as_str())
    }

    /// Evaluates against a precomputed field set (what kube-apiserver's per-resource
    /// `GetAttrs` functions produce); a missing field reads as "".
    pub fn matches_fields(&self, fields: &BTreeMap<String, String>) -> bool {
        self.terms.iter().all(|term| {
            let actual = fields.get(&term.field).map(String::as_str).unwrap_or("");
            (actual == term.value) != term.negated
        })
    }

    /// Evaluates against an object, reading the dotted path from the JSON (missing = ""), with the
    /// Kubernetes conventions: `metadata.namespace` of a cluster-scoped object is "",
    /// booleans/numbers compared as their text.
    pub fn matches_object(&self, object: &Value) -> bool {
        self.terms.iter().all(|term| {
            let actual = field_text(object, &term.field);
            (actual == term.value) != term.negated
        })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, term) in self.terms.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            let operator = if term.negated { "!=" } else { "=" };
            write!(f, "{}{operator}{}", term.field, escape_field_value(&term.value))?;
        }
        Ok(())
    }
}

/// The text of the field at a dotted path of an object, as a field selector compares it: strings
/// as they are, booleans and numbers as their JSON text, anything missing (or not a scalar) as "".
pub fn field_text(object: &Value, path: &str) -> String {
    let mut current = object;
    for segment in path.split('.') {
        match current.get(segment) {
            Some(next) => current = next,
            None => return String::new(),
        }
    }
    match current {
        Value::String(text) => text.clone(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        _ => String::new(),
    }
}

/// Splits at commas that are not escaped with a backslash.
fn split_terms(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (index, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            terms.push(&text[start..index]);
            start = index + 1;
        }
    }
    terms.push(&text[start..]);
    terms
}

/// Finds the first operator of a term (trying `!=`, then `==`, then `=` at each position).
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (index, _) in term.char_indices() {
        let rest = &term[index..];
        for operator in ["!=", "==", "="] {
            if let Some(value) = rest.strip_prefix(operator) {
                return Some((&term[..index], operator, value));
            }
        }
    }
    None
}

fn unescape_field_value(value: &str) -> Result<String, String> {
    if !value.contains(['\\', ',', '=']) {
        return Ok(value.to_string());
    }
    let mut out = String::with_capacity(value.len());
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            match c {
                '\\' | ',' | '=' => out.push(c),
                other => {
                    return Err(format!("invalid field selector: invalid escape sequence: \\{other}"));
                }
            }
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            // Go prints the rune as its code point here.
            ',' | '=' => {
                return Err(format!("invalid field selector: unescaped character in value: {}", c as u32));
            }
            other => out.push(other),
        }
    }
    if escaped {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

fn escape_field_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn parse(text: &str) -> LabelSelector {
        match LabelSelector::parse(text) {
            Ok(selector) => selector,
            Err(err) => panic!("{text:?} should parse: {err}"),
        }
    }

    fn label_error(text: &str) -> String {
        match LabelSelector::parse(text) {
            Ok(selector) => panic!("{text:?} should not parse, got {selector}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn label_selectors_match_like_kubernetes() {
        let web = labels(&[("app", "web"), ("tier", "frontend"), ("replicas", "3")]);
        let empty = labels(&[]);
        let cases: &[(&str, &BTreeMap<String, String>, bool)] = &[
            ("", &web, true),
            ("   ", &empty, true),
            ("app=web", &web, true),
            ("app==web", &web, true),
            ("app=db", &web, false),
            ("app!=db", &web, true),
            ("app!=db", &empty, true),
            ("app", &web, true),
            ("app", &empty, false),
            ("!app", &empty, true),
            ("!app", &web, false),
            ("tier in (frontend,backend)", &web, true),
            ("tier in (backend)", &web, false),
            ("tier notin (backend)", &web, true),
            ("tier notin (backend)", &empty, true),
            ("tier notin (frontend)", &web, false),
            ("app=web,tier=frontend", &web, true),
            ("app=web,tier=backend", &web, false),
            ("app=web, !canary", &web, true),
            ("replicas>2", &web, true),
            ("replicas<2", &web, false),
            ("app>2", &web, false),
            ("app=", &empty, false),
            ("app=", &labels(&[("app", "")]), true),
            ("app in ()", &labels(&[("app", "")]), true),
            ("in in (in)", &labels(&[("in", "in")]), true),
            ("example.com/role=db", &labels(&[("example.com/role", "db")]), true),
        ];
        for (text, labels, expected) in cases {
            assert_eq!(parse(text).matches(labels), *expected, "{text:?} against {labels:?}");
        }
    }

    #[test]
    fn label_selectors_render_sorted_like_kubernetes() {
        let cases = [
            ("b=2,a=1", "a=1,b=2"),
            ("x in (c,a,b,a)", "x in (a,b,c)"),
            ("  app  ==  web ", "app==web"),
            ("!canary,tier notin (z,y)", "!canary,tier notin (y,z)"),
            ("x in (,a)", "x in (,a)"),
            ("a in (,)", "a in ()"),
            ("a notin ()", "a notin ()"),
            ("a!=", "a!="),
            ("a==", "a=="),
            ("app", "app"),
        ];
        for (text, rendered) in cases {
            assert_eq!(parse(text).to_string(), rendered, "{text:?}");
        }
    }

    #[test]
    fn malformed_label_selectors_report_kubernetes_messages() {
        let cases = [
            ("a in b", "unable to parse requirement: found 'b' expected: '('"),
            ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
            (",", "found ',', expected: !, identifier, or 'end of string'"),
            ("a=b,", "found '', expected: identifier after ','"),
            ("a=b c", "found 'c', expected: ',' or 'end of string'"),
            ("!", "unable to parse requirement: found '', expected: identifier"),
            ("a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"),
            ("a=(", "unable to parse requirement: found '(', expected: identifier"),
            ("a!", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"),
            (
                "Ab/c=d",
                "unable to parse requirement: <nil>: Invalid value: \"Ab/c\": prefix part a lowercase RFC 1123 \
                 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end \
                 with an alphanumeric character (e.g. 'example.com', regex used for validation is \
                 '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
            (
                "-bad=x",
                "unable to parse requirement: <nil>: Invalid value: \"-bad\": name part must consist of \
                 alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character \
                 (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
                 '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
            (
                "app=-bad",
                "unable to parse requirement: values[0][app]: Invalid value: \"-bad\": a valid label must be an \
                 empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end \
                 with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for \
                 validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
            (
                "x>a",
                "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the \
                 value must be an integer",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(label_error(text), message, "{text:?}");
        }
        assert!(
            label_error(&format!("app={}", "v".repeat(64))).contains("must be no more than 63 characters")
        );
        assert!(label_error("a/b/c").contains("a qualified name must consist of"));
        let several = label_error("x in (a,-b,-c)");
        assert!(
            several.starts_with("unable to parse requirement: [values[0][x]: Invalid value: \"-b\": "),
            "{several}"
        );
        assert!(several.contains(", values[1][x]: Invalid value: \"-c\": "), "{several}");
    }

    #[test]
    fn label_selector_helpers() {
        let object = json!({"metadata": {"labels": {"app": "web", "odd": 3}}});
        assert!(parse("app=web").matches_object(&object));
        assert!(parse("!odd").matches_object(&object));
        assert!(parse("!app").matches_object(&json!({"metadata": {}})));
        assert!(LabelSelector::everything().matches_object(&json!({})));
        assert!(LabelSelector::everything().is_empty());
        assert_eq!(parse("app=web,x in (y)").requires_exact_match("x"), Some("y"));
        assert_eq!(parse("app!=web").requires_exact_match("app"), None);
        assert_eq!(parse("a=1,b").requirements().len(), 2);
        assert_eq!(parse("a=1").requirements()[0].operator(), LabelOperator::Equals);
    }

    #[test]
    fn field_selectors_match_objects() {
        let pod = json!({
            "metadata": {"name": "web-0", "namespace": "default"},
            "spec": {"nodeName": "node-1", "hostNetwork": true, "priority": 5},
            "status": {"phase": "Running"}
        });
        let node = json!({"metadata": {"name": "node-1"}});
        let cases: &[(&str, &Value, bool)] = &[
            ("", &pod, true),
            ("metadata.name=web-0", &pod, true),
            ("metadata.name==web-0", &pod, true),
            ("metadata.name!=web-0", &pod, false),
            ("spec.nodeName=node-1,status.phase=Running", &pod, true),
            ("spec.nodeName=node-1,status.phase=Pending", &pod, false),
            ("spec.nodeName=", &pod, false),
            ("spec.nodeName=", &node, true),
            ("spec.nodeName!=", &pod, true),
            ("spec.hostNetwork=true", &pod, true),
            ("spec.priority=5", &pod, true),
            ("metadata.namespace=", &node, true),
            ("metadata.namespace!=default", &node, true),
            ("metadata.namespace=default", &pod, true),
        ];
        for (text, object, expected) in cases {
            let selector = match FieldSelector::parse(text) {
                Ok(selector) => selector,
                Err(err) => panic!("{text:?}: {err}"),
            };
            assert_eq!(selector.matches_object(object), *expected, "{text:?}");
        }
    }

    #[test]
    fn field_selector_parsing() {
        let selector = match FieldSelector::parse("status.phase=Running,metadata.name=a\\,b") {
            Ok(selector) => selector,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(selector.fields(), vec!["metadata.name".to_string(), "status.phase".to_string()]);
        assert_eq!(selector.requires_exact_match("metadata.name"), Some("a,b"));
        assert_eq!(selector.to_string(), "metadata.name=a\\,b,status.phase=Running");
        let fields: BTreeMap<String, String> = [
            ("metadata.name".to_string(), "a,b".to_string()),
            ("status.phase".to_string(), "Running".to_string()),
        ]
        .into_iter()
        .collect();
        assert!(selector.matches_fields(&fields));
        assert!(FieldSelector::everything().is_empty());

        let errors = [
            ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
            ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
            ("a=b\\x", "invalid field selector: invalid escape sequence: \\x"),
            ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
            ("a==b=c", "invalid field selector: unescaped character in value: 61"),
        ];
        for (text, message) in errors {
            match FieldSelector::parse(text) {
                Ok(selector) => panic!("{text:?} should not parse: {selector}"),
                Err(err) => assert_eq!(err.to_string(), message, "{text:?}"),
            }
        }
    }
}
