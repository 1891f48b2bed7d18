//! The three patch types a PATCH request may carry (server-side apply lives in `apply`):
//!
//! * RFC 6902 JSON patch (`application/json-patch+json`), with the behaviour of the
//!   evanphx/json-patch v4 library kube-apiserver uses: negative array indices count from the end,
//!   `replace` of a missing object member adds it, a missing `value` means `null`, and the error
//!   texts match.
//! * RFC 7386 merge patch (`application/merge-patch+json`), including the library's treatment of
//!   `null` inside newly added subtrees.
//! * Strategic merge patch (`application/strategic-merge-patch+json`) of built-in kinds, a port of
//!   apimachinery's `strategicpatch` applier: lists with a merge key are merged element-wise, lists
//!   of primitives with the merge strategy as sets, other lists replaced; `null` deletes; and the
//!   directives `$patch`, `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
//!   `$setElementOrder/<field>` behave as in kube-apiserver, element order included.
//!
//! Each error knows the HTTP status kube-apiserver answers with ([`PatchError::http_status`]).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::merge_keys::{KindPatchMeta, ListStrategy};

/// kube-apiserver refuses JSON patches with more operations than this.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The message kube-apiserver puts in a 422 answer built from a bare status code (it does not
/// include the patch library's own text).
pub const GENERIC_UNPROCESSABLE_MESSAGE: &str =
    "the server rejected our request due to an error in our request";

/// Why a patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch document itself is malformed (400 BadRequest with this message).
    #[error("{0}")]
    Invalid(String),
    /// A JSON patch `test` operation did not hold (422).
    #[error("{0}")]
    TestFailed(String),
    /// A JSON patch operation names a path the document does not have (422).
    #[error("{0}")]
    PathNotFound(String),
    /// A well-formed patch that cannot be applied to this object (422).
    #[error("{0}")]
    Unprocessable(String),
    /// A JSON patch with more than [`MAX_JSON_PATCH_OPERATIONS`] operations (413).
    #[error("{0}")]
    TooManyOperations(String),
    /// A strategic merge patch failure kube-apiserver does not classify, which it reports as an
    /// internal error (500) carrying this message.
    #[error("{0}")]
    Failed(String),
}

impl PatchError {
    /// The HTTP status code kube-apiserver answers with for this error.
    pub fn http_status(&self) -> u16 {
        match self {
            PatchError::Invalid(_) => 400,
            PatchError::TestFailed(_) | PatchError::PathNotFound(_) | PatchError::Unprocessable(_) => 422,
            PatchError::TooManyOperations(_) => 413,
            PatchError::Failed(_) => 500,
        }
    }

    /// The `reason` of the Status kube-apiserver answers with.
    pub fn status_reason(&self) -> &'static str {
        match self {
            PatchError::Invalid(_) => "BadRequest",
            PatchError::TestFailed(_) | PatchError::PathNotFound(_) | PatchError::Unprocessable(_) => {
                "Invalid"
            }
            PatchError::TooManyOperations(_) => "RequestEntityTooLarge",
            PatchError::Failed(_) => "InternalError",
        }
    }

    /// The `message` of the Status kube-apiserver answers with (its 422 answers for patch
    /// failures carry a generic text, its 500 answers wrap the detail).
    pub fn status_message(&self) -> String {
        match self {
            PatchError::Invalid(message) | PatchError::TooManyOperations(message) => message.clone(),
            PatchError::TestFailed(_) | PatchError::PathNotFound(_) | PatchError::Unprocessable(_) => {
                GENERIC_UNPROCESSABLE_MESSAGE.to_string()
            }
            PatchError::Failed(message) => format!("Internal error occurred: {message}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// RFC 6902 JSON patch
// ---------------------------------------------------------------------------------------------

/// RFC 6902 JSON patch (application/json-patch+json).
pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, PatchError> {
    let Value::Array(operations) = patch else {
        return Err(PatchError::Invalid(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
            go_json_kind(patch)
        )));
    };
    for operation in operations {
        match operation {
            // `null` entries decode to empty operations, which then fail as an unknown kind.
            Value::Object(_) | Value::Null => {}
            other => {
                return Err(PatchError::Invalid(format!(
                    "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
                    go_json_kind(other)
                )));
            }
        }
    }
    if operations.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::TooManyOperations(format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            operations.len()
        )));
    }
    let mut document = target.clone();
    for operation in operations {
        let empty = Map::new();
        let fields = match operation {
            Value::Object(fields) => fields,
            _ => &empty,
        };
        apply_operation(&mut document, fields)?;
    }
    Ok(document)
}

fn go_json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

const MISSING: &str = "missing value";
const INVALID_INDEX: &str = "invalid index referenced";

fn missing(message: String) -> PatchError {
    PatchError::PathNotFound(format!("{message}: {MISSING}"))
}

/// Reads a string member of an operation (`path`, `from`); `Err` carries the decode problem.
fn operation_string(fields: &Map<String, Value>, name: &str) -> Result<String, String> {
    match fields.get(name) {
        None | Some(Value::Null) => Err(if name == "path" {
            format!("operation missing path field: {MISSING}")
        } else {
            format!("operation, missing from field: {MISSING}")
        }),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(other) => {
            Err(format!("json: cannot unmarshal {} into Go value of type string", go_json_kind(other)))
        }
    }
}

fn apply_operation(document: &mut Value, fields: &Map<String, Value>) -> Result<(), PatchError> {
    let kind = match fields.get("op") {
        Some(Value::String(kind)) => kind.as_str(),
        _ => "unknown",
    };
    // A missing `value` behaves as JSON null.
    let value = fields.get("value").cloned().unwrap_or(Value::Null);
    let has_value = fields.get("value").is_some_and(|value| !value.is_null());
    match kind {
        "add" => {
            let path = operation_string(fields, "path")
                .map_err(|_| missing("add operation failed to decode path".to_string()))?;
            let (container, key) = find_container(document, &path).ok_or_else(|| {
                missing(format!("add operation does not apply: doc is missing path: \"{path}\""))
            })?;
            container_add(container, &key, value)
                .map_err(|err| err.wrap(&format!("error in add for path: '{path}'")))
        }
        "remove" => {
            let path = operation_string(fields, "path")
                .map_err(|_| missing("remove operation failed to decode path".to_string()))?;
            let (container, key) = find_container(document, &path).ok_or_else(|| {
                missing(format!("remove operation does not apply: doc is missing path: \"{path}\""))
            })?;
            container_remove(container, &key)
                .map(|_| ())
                .map_err(|err| err.wrap(&format!("error in remove for path: '{path}'")))
        }
        "replace" => {
            let path = operation_string(fields, "path").map_err(|err| {
                PatchError::PathNotFound(format!("replace operation failed to decode path: {err}"))
            })?;
            if path.is_empty() {
                // Only a document can replace the whole document; anything else is ignored, as
                // the library does.
                if value.is_object() || value.is_array() {
                    *document = value;
                }
                return Ok(());
            }
            let (container, key) = find_container(document, &path).ok_or_else(|| {
                missing(format!("replace operation does not apply: doc is missing path: {path}"))
            })?;
            if let Value::Array(items) = container
                && resolve_index(&key, items.len(), false).is_err()
            {
                return Err(missing(format!("replace operation does not apply: doc is missing key: {path}")));
            }
            container_set(container, &key, value)
                .map_err(|err| err.wrap(&format!("error in remove for path: '{path}'")))
        }
        "move" => {
            let from = operation_string(fields, "from").map_err(|err| {
                PatchError::PathNotFound(format!("move operation failed to decode from: {err}"))
            })?;
            let (container, key) = find_container(document, &from).ok_or_else(|| {
                missing(format!("move operation does not apply: doc is missing from path: {from}"))
            })?;
            let moved = container_remove(container, &key)
                .map_err(|err| err.wrap(&format!("error in move for path: '{key}'")))?;
            let path = operation_string(fields, "path").map_err(|err| {
                PatchError::PathNotFound(format!("move operation failed to decode path: {err}"))
            })?;
            let (container, key) = find_container(document, &path).ok_or_else(|| {
                missing(format!("move operation does not apply: doc is missing destination path: {path}"))
            })?;
            container_add(container, &key, moved)
                .map_err(|err| err.wrap(&format!("error in move for path: '{path}'")))
        }
        "test" => {
            let path = operation_string(fields, "path").map_err(|err| {
                PatchError::PathNotFound(format!("test operation failed to decode path: {err}"))
            })?;
            let failed = || PatchError::TestFailed(format!("testing value {path} failed: test failed"));
            if path.is_empty() {
                return if *document == value { Ok(()) } else { Err(failed()) };
            }
            let (container, key) = find_container(document, &path)
                .ok_or_else(|| missing(format!("test operation does not apply: is missing path: {path}")))?;
            let current = container_get(container, &key)
                .map_err(|err| err.wrap(&format!("error in test for path: '{path}'")))?;
            match current {
                None | Some(Value::Null) if !has_value => Ok(()),
                None | Some(Value::Null) => Err(failed()),
                Some(_) if !fields.contains_key("value") => Err(failed()),
                Some(current) if *current == value => Ok(()),
                Some(_) => Err(failed()),
            }
        }
        "copy" => {
            let from = operation_string(fields, "from").map_err(|err| {
                PatchError::PathNotFound(format!("copy operation failed to decode from: {err}"))
            })?;
            let (container, key) = find_container(document, &from).ok_or_else(|| {
                missing(format!("copy operation does not apply: doc is missing from path: {from}"))
            })?;
            let copied = container_get(container, &key)
                .map_err(|err| err.wrap(&format!("error in copy for from: '{from}'")))?
                .cloned()
                .unwrap_or(Value::Null);
            let path = operation_string(fields, "path")
                .map_err(|_| missing("copy operation failed to decode path".to_string()))?;
            let (container, key) = find_container(document, &path).ok_or_else(|| {
                missing(format!("copy operation does not apply: doc is missing destination path: {path}"))
            })?;
            container_add(container, &key, copied)
                .map_err(|err| err.wrap("error while adding value during copy"))
        }
        other => Err(PatchError::Unprocessable(format!("Unexpected kind: {other}"))),
    }
}

/// A failure inside a container operation, before the operation adds its context.
struct ContainerError {
    message: String,
    missing: bool,
}

impl ContainerError {
    fn wrap(self, context: &str) -> PatchError {
        let message = format!("{context}: {}", self.message);
        if self.missing { PatchError::PathNotFound(message) } else { PatchError::Unprocessable(message) }
    }
}

fn decode_pointer_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Parses an array index the way Go's `strconv.Atoi` does (an optional sign, decimal digits).
fn atoi(text: &str) -> Result<i64, ContainerError> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let parsed = if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        None
    } else {
        text.parse::<i64>().ok()
    };
    parsed.ok_or_else(|| ContainerError {
        message: format!("strconv.Atoi: parsing {}: invalid syntax", go_quote(text)),
        missing: false,
    })
}

/// Resolves an index into a list of `len` elements (`inserting` allows `len` itself); negative
/// indices count from the end.
fn resolve_index(key: &str, len: usize, inserting: bool) -> Result<usize, ContainerError> {
    let index = atoi(key)?;
    let limit = i64::try_from(len).unwrap_or(i64::MAX) + i64::from(inserting);
    let invalid = || ContainerError {
        message: format!("Unable to access invalid index: {index}: {INVALID_INDEX}"),
        missing: false,
    };
    if index >= limit || index < -limit {
        return Err(invalid());
    }
    let resolved = if index < 0 { index + limit } else { index };
    usize::try_from(resolved).map_err(|_| invalid())
}

/// Walks all but the last token of `path`, returning the container that holds the last one.
fn find_container<'a>(document: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let tokens: Vec<&str> = path.split('/').collect();
    if tokens.len() < 2 {
        return None;
    }
    let last = decode_pointer_token(tokens[tokens.len() - 1]);
    let mut current = document;
    for token in &tokens[1..tokens.len() - 1] {
        let token = decode_pointer_token(token);
        let next = match current {
            Value::Object(map) => map.get_mut(&token)?,
            Value::Array(items) => {
                let index = resolve_index(&token, items.len(), false).ok()?;
                items.get_mut(index)?
            }
            _ => return None,
        };
        if !(next.is_object() || next.is_array()) {
            return None;
        }
        current = next;
    }
    if current.is_object() || current.is_array() { Some((current, last)) } else { None }
}

fn container_get<'a>(container: &'a Value, key: &str) -> Result<Option<&'a Value>, ContainerError> {
    match container {
        Value::Object(map) => Ok(map.get(key)),
        Value::Array(items) => {
            let index = resolve_index(key, items.len(), false)?;
            Ok(items.get(index))
        }
        _ => Ok(None),
    }
}

fn container_add(container: &mut Value, key: &str, value: Value) -> Result<(), ContainerError> {
    match container {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            if key == "-" {
                items.push(value);
                return Ok(());
            }
            let index = resolve_index(key, items.len(), true).map_err(|err| {
                if err.message.starts_with("strconv") {
                    ContainerError {
                        message: format!("value was not a proper array index: '{key}': {}", err.message),
                        missing: false,
                    }
                } else {
                    err
                }
            })?;
            items.insert(index, value);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn container_set(container: &mut Value, key: &str, value: Value) -> Result<(), ContainerError> {
    match container {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            let index = resolve_index(key, items.len(), false)?;
            if let Some(slot) = items.get_mut(index) {
                *slot = value;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn container_remove(container: &mut Value, key: &str) -> Result<Value, ContainerError> {
    match container {
        Value::Object(map) => map.remove(key).ok_or_else(|| ContainerError {
            message: format!("Unable to remove nonexistent key: {key}: {MISSING}"),
            missing: true,
        }),
        Value::Array(items) => {
            let index = resolve_index(key, items.len(), false)?;
            Ok(items.remove(index))
        }
        _ => Ok(Value::Null),
    }
}

// ---------------------------------------------------------------------------------------------
// RFC 7386 merge patch
// ---------------------------------------------------------------------------------------------

/// RFC 7386 merge patch (application/merge-patch+json).
pub fn merge_patch(target: &Value, patch: &Value) -> Result<Value, PatchError> {
    match patch {
        Value::Object(patch) => match target {
            Value::Object(target) => {
                let mut document = target.clone();
                merge_documents(&mut document, patch);
                Ok(Value::Object(document))
            }
            // Not a document to merge into: the patch (without its nulls) becomes the result.
            _ => {
                let mut result = Value::Object(patch.clone());
                prune_nulls(&mut result);
                Ok(result)
            }
        },
        Value::Array(_) => Err(PatchError::Unprocessable(
            "json: cannot unmarshal array into Go value of type map[string]interface {}".to_string(),
        )),
        _ => Err(PatchError::Invalid("Invalid JSON Patch".to_string())),
    }
}

fn merge_documents(document: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (key, value) in patch {
        if value.is_null() {
            document.remove(key);
            continue;
        }
        match document.get_mut(key) {
            Some(current) if !current.is_null() => merge_values(current, value),
            _ => {
                let mut value = value.clone();
                prune_nulls(&mut value);
                document.insert(key.clone(), value);
            }
        }
    }
}

fn merge_values(current: &mut Value, patch: &Value) {
    match (current.is_object(), patch) {
        (true, Value::Object(patch_map)) => {
            if let Value::Object(current_map) = current {
                merge_documents(current_map, patch_map);
            }
        }
        // Replacing a non-object: the patch value, without the nulls of its objects.
        (false, _) => {
            let mut value = patch.clone();
            prune_nulls(&mut value);
            *current = value;
        }
        // Replacing an object with a non-object: the patch value as it is.
        (true, _) => *current = patch.clone(),
    }
}

/// Removes null members of objects (recursively); nulls that are list elements stay.
fn prune_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, member| !member.is_null());
            map.values_mut().for_each(prune_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(prune_nulls),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Strategic merge patch
// ---------------------------------------------------------------------------------------------

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";

fn bad_retain_keys() -> PatchError {
    PatchError::Invalid("invalid patch format of retainKeys".to_string())
}

fn bad_primitive_list() -> PatchError {
    PatchError::Invalid("invalid patch format of primitive list".to_string())
}

fn bad_set_element_order() -> PatchError {
    PatchError::Invalid("invalid patch format of setElementOrder list".to_string())
}

/// Strategic merge patch (application/strategic-merge-patch+json) of a built-in kind: lists with a
/// merge key are merged element-wise by that key, primitive lists with merge strategy are merged
/// as sets, other lists are replaced; `null` deletes; directives `$patch: replace|delete|merge`,
/// `$retainKeys`, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>` as kube-apiserver
/// implements them.
pub fn strategic_merge_patch(
    target: &Value,
    patch: &Value,
    kind: &KindPatchMeta,
) -> Result<Value, PatchError> {
    let original = match target {
        Value::Object(map) => map.clone(),
        _ => return Err(PatchError::Invalid("invalid JSON document".to_string())),
    };
    let patch = match patch {
        Value::Object(map) => map.clone(),
        // `null` decodes to no patch at all.
        Value::Null => return Ok(target.clone()),
        _ => return Err(PatchError::Invalid("invalid JSON document".to_string())),
    };
    let merger = Smp { meta: kind };
    let mut result = Value::Object(merger.merge_map(original, patch, "")?);
    sanitize(&mut result);
    Ok(result)
}

/// Drops what a typed decode of the result would drop: leftover directive keys and nulls.
fn sanitize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, member| {
                !(member.is_null()
                    || key == DIRECTIVE
                    || key == RETAIN_KEYS
                    || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
                    || key.starts_with(SET_ELEMENT_ORDER))
            });
            map.values_mut().for_each(sanitize);
        }
        Value::Array(items) => items.iter_mut().for_each(sanitize),
        _ => {}
    }
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// The Go type name apimachinery's errors print for a decoded JSON value.
fn go_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(number) if number.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

fn bad_arg_type(expected: &str, actual: &Value) -> PatchError {
    PatchError::Failed(format!("expected a {expected}, but received a {}", go_type_name(actual)))
}

fn no_merge_key(map: &Map<String, Value>, key: &str) -> PatchError {
    PatchError::Failed(format!("map: {} does not contain declared merge key: {key}", go_map_text(map)))
}

/// Renders a map roughly as Go's `%v` does (`map[k:v ...]`).
fn go_map_text(map: &Map<String, Value>) -> String {
    let entries: Vec<String> =
        map.iter().map(|(key, value)| format!("{key}:{}", go_value_text(value))).collect();
    format!("map[{}]", entries.join(" "))
}

fn go_value_text(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_string(),
        Value::String(text) => text.clone(),
        Value::Array(items) => format!("[{}]", items.iter().map(go_value_text).collect::<Vec<_>>().join(" ")),
        Value::Object(map) => go_map_text(map),
        other => other.to_string(),
    }
}

/// The element kind of one or more lists, as apimachinery checks it before merging.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ElementKind {
    Map,
    Other,
}

fn slice_element_kind(lists: &[&[Value]]) -> Result<ElementKind, PatchError> {
    let mut seen: Option<&'static str> = None;
    for list in lists {
        for item in list.iter() {
            let name = go_type_name(item);
            match seen {
                None if item.is_array() => {
                    return Err(PatchError::Unprocessable("lists of lists are not supported".to_string()));
                }
                None => seen = Some(name),
                Some(previous) if previous == name => {}
                Some(_) => {
                    let rendered: Vec<String> =
                        lists.iter().map(|list| go_value_text(&Value::Array(list.to_vec()))).collect();
                    return Err(PatchError::Failed(format!(
                        "list element types are not identical: [{}]",
                        rendered.join(" ")
                    )));
                }
            }
        }
    }
    match seen {
        None => Err(PatchError::Failed("no elements in any of the given slices".to_string())),
        Some("map[string]interface {}") => Ok(ElementKind::Map),
        Some(_) => Ok(ElementKind::Other),
    }
}

/// Removes elements and members that are themselves directives (maps carrying `$patch`); returns
/// `None` when the value itself is one.
fn remove_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) => {
            if map.contains_key(DIRECTIVE) {
                return None;
            }
            let cleaned =
                map.into_iter().filter_map(|(key, member)| Some((key, remove_directives(member)?))).collect();
            Some(Value::Object(cleaned))
        }
        Value::Array(items) => Some(Value::Array(items.into_iter().filter_map(remove_directives).collect())),
        other => Some(other),
    }
}

/// Drops null members from a value that is being added wholesale.
fn discard_null_values(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, member| !member.is_null());
            map.values_mut().for_each(discard_null_values);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_null_values),
        _ => {}
    }
}

/// The merge key value of a list element (for maps), or the element itself (for primitives).
fn lookup_value<'a>(item: &'a Value, merge_key: &str, kind: ElementKind) -> Option<&'a Value> {
    match kind {
        ElementKind::Map => item.as_object().and_then(|map| map.get(merge_key)),
        ElementKind::Other => Some(item),
    }
}

fn index_of(list: &[Value], item: &Value, merge_key: &str, kind: ElementKind) -> Option<usize> {
    let wanted = lookup_value(item, merge_key, kind);
    list.iter().position(|candidate| lookup_value(candidate, merge_key, kind) == wanted)
}

struct Smp<'a> {
    meta: &'a KindPatchMeta,
}

impl Smp<'_> {
    fn merge_map(
        &self,
        mut original: Map<String, Value>,
        mut patch: Map<String, Value>,
        path: &str,
    ) -> Result<Map<String, Value>, PatchError> {
        if let Some(directive) = patch.get(DIRECTIVE) {
            return match directive.as_str() {
                Some("replace") => {
                    patch.remove(DIRECTIVE);
                    Ok(patch)
                }
                Some("delete") => Ok(Map::new()),
                _ => Err(PatchError::Failed(format!(
                    "unknown patch type: {} in map: {}",
                    go_value_text(directive),
                    go_map_text(&patch)
                ))),
            };
        }

        self.apply_retain_keys(&mut original, &mut patch)?;
        self.merge_ordered_lists(&mut original, &mut patch, path)?;

        // kube-apiserver walks the patch in Go's random map order; applying the deletion lists
        // last is what it does most of the time, and what a patch that both adds and deletes a
        // value means.
        let mut entries: Vec<(String, Value)> = patch.into_iter().collect();
        entries.sort_by_key(|(key, _)| key.starts_with(DELETE_FROM_PRIMITIVE_LIST));
        for (key, patch_value) in entries {
            let (key, is_delete_list) = match key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
                Some(rest) => match rest.strip_prefix('/') {
                    Some(field) => (field.to_string(), true),
                    None => return Err(bad_primitive_list()),
                },
                None => (key, false),
            };
            if patch_value.is_null() {
                original.remove(&key);
                continue;
            }
            let same_type = original.get(&key).is_some_and(|current| same_go_type(current, &patch_value));
            if !same_type {
                if !is_delete_list {
                    let mut value = patch_value;
                    discard_null_values(&mut value);
                    match remove_directives(value) {
                        Some(value) => {
                            original.insert(key, value);
                        }
                        None => {
                            original.remove(&key);
                        }
                    }
                }
                continue;
            }
            let field_path = child_path(path, &key);
            let Some(current) = original.remove(&key) else { continue };
            let merged = match (current, patch_value) {
                (Value::Object(current), Value::Object(patch_map)) => {
                    Value::Object(self.merge_map(current, patch_map, &field_path)?)
                }
                (Value::Array(current), Value::Array(patch_list)) => {
                    let strategy = self.meta.list_strategy(&field_path);
                    Value::Array(self.merge_slice_handler(
                        current,
                        patch_list,
                        &field_path,
                        strategy,
                        is_delete_list,
                    )?)
                }
                (_, scalar) => match remove_directives(scalar) {
                    Some(value) => value,
                    None => continue,
                },
            };
            original.insert(key, merged);
        }
        Ok(original)
    }

    fn apply_retain_keys(
        &self,
        original: &mut Map<String, Value>,
        patch: &mut Map<String, Value>,
    ) -> Result<(), PatchError> {
        let Some(retain) = patch.remove(RETAIN_KEYS) else { return Ok(()) };
        let Value::Array(retain) = retain else { return Err(bad_retain_keys()) };
        let retained: BTreeSet<&str> = retain.iter().filter_map(Value::as_str).collect();
        for (key, value) in patch.iter() {
            if value.is_null()
                || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
                || key.starts_with(SET_ELEMENT_ORDER)
            {
                continue;
            }
            if !retained.contains(key.as_str()) {
                return Err(bad_retain_keys());
            }
        }
        original.retain(|key, _| retained.contains(key.as_str()));
        Ok(())
    }

    /// Handles every `$setElementOrder/<field>` of the patch together with the list it orders.
    fn merge_ordered_lists(
        &self,
        original: &mut Map<String, Value>,
        patch: &mut Map<String, Value>,
        path: &str,
    ) -> Result<(), PatchError> {
        let order_keys: Vec<String> =
            patch.keys().filter(|key| key.starts_with(SET_ELEMENT_ORDER)).cloned().collect();
        for order_key in order_keys {
            let Some(order) = patch.remove(&order_key) else { continue };
            let Value::Array(order) = order else {
                return Err(bad_arg_type("[]interface {}", &order));
            };
            let field = match order_key.split_once('/') {
                Some((SET_ELEMENT_ORDER, field)) => field.to_string(),
                _ => return Err(bad_set_element_order()),
            };
            let original_list = match original.get(&field) {
                None => None,
                Some(Value::Array(items)) => Some(items.clone()),
                Some(other) => return Err(bad_arg_type("[]interface {}", other)),
            };
            let patch_list = match patch.get(&field) {
                None => None,
                Some(Value::Array(items)) => Some(items.clone()),
                Some(other) => return Err(bad_arg_type("[]interface {}", other)),
            };
            let field_path = child_path(path, &field);
            let strategy = self.meta.list_strategy(&field_path);
            let merge_key = match strategy {
                ListStrategy::MergeByKey(key) => key,
                _ => "",
            };
            validate_against_order(patch_list.as_deref().unwrap_or(&[]), &order, merge_key)?;

            let merged = match (&original_list, &patch_list) {
                (Some(original_items), None) => original_items.clone(),
                (None, Some(patch_items)) => match remove_directives(Value::Array(patch_items.clone())) {
                    Some(Value::Array(items)) => items,
                    _ => continue,
                },
                (Some(original_items), Some(patch_items)) => self.merge_slice_handler(
                    original_items.clone(),
                    patch_items.clone(),
                    &field_path,
                    strategy,
                    false,
                )?,
                (None, None) => continue,
            };
            let (patch_items, server_only) = partition(&merged, &order, merge_key)?;
            let kind = slice_element_kind(&[
                original_list.as_deref().unwrap_or(&[]),
                patch_list.as_deref().unwrap_or(&[]),
            ])?;
            let server_order = match (&original_list, &patch_list) {
                (Some(original_items), Some(patch_items))
                    if kind == ElementKind::Map && !merge_key.is_empty() =>
                {
                    server_order_after_merge(original_items, patch_items, merge_key)
                }
                _ => original_list.clone().unwrap_or_default(),
            };
            let both =
                normalize_element_order(patch_items, server_only, &order, &server_order, merge_key, kind)?;
            original.insert(field.clone(), Value::Array(both));
            patch.remove(&field);
        }
        Ok(())
    }

    fn merge_slice_handler(
        &self,
        original: Vec<Value>,
        patch: Vec<Value>,
        path: &str,
        strategy: ListStrategy,
        is_delete_list: bool,
    ) -> Result<Vec<Value>, PatchError> {
        let merge_key = match strategy {
            ListStrategy::MergeByKey(key) => Some(key),
            ListStrategy::MergeSet => Some(""),
            ListStrategy::Replace => None,
        };
        match (merge_key, is_delete_list) {
            (Some(key), _) => self.merge_slice(original, patch, path, key, is_delete_list),
            (None, true) => self.merge_slice(original, patch, path, "", true),
            (None, false) => Ok(patch),
        }
    }

    fn merge_slice(
        &self,
        original: Vec<Value>,
        patch: Vec<Value>,
        path: &str,
        merge_key: &str,
        is_delete_list: bool,
    ) -> Result<Vec<Value>, PatchError> {
        if original.is_empty() && patch.is_empty() {
            return Ok(original);
        }
        let kind = slice_element_kind(&[&original, &patch])?;
        let (original, patch, merged) = if kind != ElementKind::Map {
            if is_delete_list {
                return Ok(original.into_iter().filter(|item| !patch.contains(item)).collect());
            }
            let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
            for item in original.iter().chain(patch.iter()) {
                if !merged.contains(item) {
                    merged.push(item.clone());
                }
            }
            (original, patch, merged)
        } else {
            if merge_key.is_empty() {
                return Err(PatchError::Failed(
                    "cannot merge lists without merge key for struct".to_string(),
                ));
            }
            let (original, patch) = merge_special_elements(original, patch, merge_key)?;
            let merged = self.merge_keyed_elements(original.clone(), &patch, merge_key, path)?;
            (original, patch, merged)
        };
        let (patch_items, server_only) = partition(&merged, &patch, merge_key)?;
        normalize_element_order(patch_items, server_only, &patch, &original, merge_key, kind)
    }

    fn merge_keyed_elements(
        &self,
        mut original: Vec<Value>,
        patch: &[Value],
        merge_key: &str,
        path: &str,
    ) -> Result<Vec<Value>, PatchError> {
        let element_path = format!("{path}[]");
        for item in patch {
            let Value::Object(patch_map) = item else {
                return Err(bad_arg_type("map[string]interface {}", item));
            };
            let Some(key_value) = patch_map.get(merge_key) else {
                return Err(no_merge_key(patch_map, merge_key));
            };
            match find_by_key(&original, merge_key, key_value)? {
                Some(index) => {
                    let current = match original.get(index) {
                        Some(Value::Object(current)) => current.clone(),
                        _ => Map::new(),
                    };
                    let merged = self.merge_map(current, patch_map.clone(), &element_path)?;
                    if let Some(slot) = original.get_mut(index) {
                        *slot = Value::Object(merged);
                    }
                }
                None => original.push(item.clone()),
            }
        }
        Ok(original)
    }
}

/// Whether two decoded values have the same Go type (maps, slices, strings, bools, int64 and
/// float64 all differ).
fn same_go_type(a: &Value, b: &Value) -> bool {
    go_type_name(a) == go_type_name(b)
}

fn find_by_key(list: &[Value], merge_key: &str, value: &Value) -> Result<Option<usize>, PatchError> {
    for (index, item) in list.iter().enumerate() {
        let Value::Object(map) = item else {
            return Err(PatchError::Failed(format!("value for key {index} is not a map")));
        };
        if map.get(merge_key) == Some(value) {
            return Ok(Some(index));
        }
    }
    Ok(None)
}

/// Applies the `$patch` elements of a keyed list patch: `delete` removes the matching elements
/// from the original, `replace` makes the rest of the patch the whole list.
fn merge_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Value::Object(map) = &item else {
            return Err(bad_arg_type("map[string]interface {}", &item));
        };
        let Some(directive) = map.get(DIRECTIVE) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let Some(key_value) = map.get(merge_key) else {
                    return Err(no_merge_key(map, merge_key));
                };
                while let Some(index) = find_by_key(&original, merge_key, key_value)? {
                    original.remove(index);
                }
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(PatchError::Failed(
                    "merging lists cannot yet be specified in the patch".to_string(),
                ));
            }
            _ => {
                return Err(PatchError::Failed(format!(
                    "unknown patch type: {} in map: {}",
                    go_value_text(directive),
                    go_map_text(map)
                )));
            }
        }
    }
    if replace { Ok((plain, Vec::new())) } else { Ok((original, plain)) }
}

/// The server order kube-apiserver ends up using for a keyed list ordered by `$setElementOrder`.
/// It orders by the live list as it stands in memory after the merge, which (Go slices sharing
/// their storage) is the live list with deleted elements shifted out, its now unused tail slots
/// keeping their old elements, and new elements written over that tail while room remains.
fn server_order_after_merge(original: &[Value], patch: &[Value], merge_key: &str) -> Vec<Value> {
    let capacity = original.len();
    let mut slots = original.to_vec();
    let mut len = capacity;
    let mut replace = false;
    let key_of = |item: &Value| item.as_object().and_then(|map| map.get(merge_key)).cloned();
    for item in patch {
        match item.get(DIRECTIVE).and_then(Value::as_str) {
            Some("delete") => {
                let Some(wanted) = key_of(item) else { continue };
                while let Some(index) =
                    slots[..len].iter().position(|slot| key_of(slot).as_ref() == Some(&wanted))
                {
                    // Shift the rest left; the vacated last slot keeps the element it held.
                    for position in index..len - 1 {
                        slots[position] = slots[position + 1].clone();
                    }
                    len -= 1;
                }
            }
            Some("replace") => replace = true,
            _ => {}
        }
    }
    if replace {
        return slots;
    }
    for item in patch.iter().filter(|item| item.get(DIRECTIVE).is_none()) {
        let Some(wanted) = key_of(item) else { continue };
        if slots[..len].iter().any(|slot| key_of(slot).as_ref() == Some(&wanted)) {
            continue;
        }
        if len == capacity {
            // Appending beyond the live list moves it elsewhere: nothing more shows.
            break;
        }
        slots[len] = item.clone();
        len += 1;
    }
    slots
}

/// Checks that the elements of a patch list appear in the same relative order in its
/// `$setElementOrder` list.
fn validate_against_order(patch: &[Value], order: &[Value], merge_key: &str) -> Result<(), PatchError> {
    if order.is_empty() || patch.is_empty() {
        return Ok(());
    }
    let mut non_delete = Vec::with_capacity(patch.len());
    if merge_key.is_empty() {
        non_delete.extend(patch.iter());
    } else {
        for item in patch {
            let Value::Object(map) = item else {
                return Err(bad_arg_type("map[string]interface {}", item));
            };
            if map.get(DIRECTIVE).and_then(Value::as_str) != Some("delete") {
                non_delete.push(item);
            }
        }
    }
    let (mut patch_index, mut order_index) = (0, 0);
    while patch_index < non_delete.len() && order_index < order.len() {
        let item = non_delete[patch_index];
        if item.as_object().is_some_and(|map| map.contains_key(DIRECTIVE)) {
            patch_index += 1;
            continue;
        }
        let equal = if merge_key.is_empty() {
            *item == order[order_index]
        } else {
            let left = item.as_object().ok_or_else(|| bad_arg_type("map[string]interface {}", item))?;
            let right = order[order_index]
                .as_object()
                .ok_or_else(|| bad_arg_type("map[string]interface {}", &order[order_index]))?;
            let left_key = left.get(merge_key).ok_or_else(|| no_merge_key(left, merge_key))?;
            let right_key = right.get(merge_key).ok_or_else(|| no_merge_key(right, merge_key))?;
            left_key == right_key
        };
        if equal {
            patch_index += 1;
        }
        order_index += 1;
    }
    if patch_index < non_delete.len() && order_index >= order.len() {
        return Err(PatchError::Failed(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER} list:\n{}\n",
            go_value_text(&Value::Array(patch.to_vec())),
            go_value_text(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

/// Splits merged elements into those present in `by` (by merge key, or by value for primitives)
/// and the rest, keeping their order.
fn partition(
    merged: &[Value],
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut present = Vec::with_capacity(merged.len());
    let mut rest = Vec::with_capacity(merged.len());
    for item in merged {
        let found = if merge_key.is_empty() {
            by.contains(item)
        } else {
            let Value::Object(map) = item else {
                return Err(bad_arg_type("map[string]interface {}", item));
            };
            let Some(key_value) = map.get(merge_key) else {
                return Err(no_merge_key(map, merge_key));
            };
            find_by_key(by, merge_key, key_value)?.is_some()
        };
        if found { present.push(item.clone()) } else { rest.push(item.clone()) }
    }
    Ok((present, rest))
}

/// Orders the patch's elements by `patch_order` and the server-only ones by `server_order`, then
/// interleaves them keeping both relative orders, preferring the server position where known.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: ElementKind,
) -> Result<Vec<Value>, PatchError> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, kind)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, kind)?;
    Ok(merge_sorted(server_only, patch, server_order, merge_key, kind))
}

fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: ElementKind,
) -> Result<Vec<Value>, PatchError> {
    let mut to_delete = Vec::new();
    let mut to_sort = to_sort;
    if kind == ElementKind::Map {
        for item in to_sort.iter().chain(order.iter()) {
            let Value::Object(map) = item else {
                return Err(bad_arg_type("map[string]interface {}", item));
            };
            if !map.contains_key(merge_key) {
                return Err(no_merge_key(map, merge_key));
            }
        }
        let (keep, delete): (Vec<Value>, Vec<Value>) = to_sort
            .into_iter()
            .partition(|item| item.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"));
        to_sort = keep;
        to_delete = delete;
    }
    let mut keyed: Vec<(usize, Value)> = to_sort
        .into_iter()
        .map(|item| (index_of(order, &item, merge_key, kind).unwrap_or(usize::MAX), item))
        .collect();
    keyed.sort_by_key(|(index, _)| *index);
    let mut sorted: Vec<Value> = keyed.into_iter().map(|(_, item)| item).collect();
    sorted.extend(to_delete);
    Ok(sorted)
}

/// Inserts the server-only elements (`left`) among the patch elements (`right`): a server-only
/// element goes first only when both are known to the server order and it comes earlier there.
fn merge_sorted(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    kind: ElementKind,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                match (index_of(server_order, l, merge_key, kind), index_of(server_order, r, merge_key, kind))
                {
                    (Some(li), Some(ri)) => li < ri,
                    _ => false,
                }
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        if let Some(item) = next {
            out.push(item);
        }
    }
    out
}

fn go_quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn server_order_follows_the_shared_storage_of_the_live_list() {
        let names = |list: &[Value]| -> Vec<String> {
            list.iter().map(|item| item["name"].as_str().unwrap_or("").to_string()).collect()
        };
        let live = [json!({"name": "b"}), json!({"name": "a"}), json!({"name": "c"})];
        let cases = [
            // Deleting the last element frees its slot for the new one.
            (vec![json!({"name": "c", "$patch": "delete"}), json!({"name": "d"})], vec!["b", "a", "d"]),
            // Deleting the first shifts the rest; the tail keeps its old element.
            (vec![json!({"name": "b", "$patch": "delete"})], vec!["a", "c", "c"]),
            // No room: new elements do not show.
            (vec![json!({"name": "d"})], vec!["b", "a", "c"]),
            (
                vec![json!({"name": "a", "$patch": "delete"}), json!({"$patch": "replace"})],
                vec!["b", "c", "c"],
            ),
        ];
        for (patch, expected) in cases {
            assert_eq!(names(&server_order_after_merge(&live, &patch, "name")), expected, "{patch:?}");
        }
    }

    #[test]
    fn json_pointer_indices() {
        let cases = [
            ("0", 3, false, Ok(0)),
            ("-1", 3, false, Ok(2)),
            ("3", 3, true, Ok(3)),
            ("-4", 3, true, Ok(0)),
            ("3", 3, false, Err("Unable to access invalid index: 3: invalid index referenced")),
            ("-4", 3, false, Err("Unable to access invalid index: -4: invalid index referenced")),
            ("x", 3, false, Err("strconv.Atoi: parsing \"x\": invalid syntax")),
            ("+1", 3, false, Ok(1)),
        ];
        for (key, len, inserting, expected) in cases {
            let actual = resolve_index(key, len, inserting).map_err(|err| err.message);
            assert_eq!(actual, expected.map_err(str::to_string), "{key}");
        }
    }
}
