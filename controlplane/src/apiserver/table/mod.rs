//! `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`: the server-side printing kubectl
//! `get` relies on. Built-in kinds get the columns and cells of kube-apiserver's printers (the
//! `-o wide` columns carry priority 1), kinds without a printer the default `Name`/`Created At`
//! table, and custom resources their CRD's printer columns.

mod cluster;
mod core;
pub mod format;
mod networking;
mod workloads;

use serde_json::{Map, Value, json};

use super::objects;
use crate::{
    registry::ResourceDef,
    semantics::jsonpath::{Column, NAME_COLUMN_DESCRIPTION, render_table},
};

/// One column of a built-in kind's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    /// Header text (kubectl upper-cases it).
    pub name: &'static str,
    /// OpenAPI type of the cells (`string`, `integer`, `boolean`, `date`).
    pub type_: &'static str,
    /// `name` for the column holding the object's name, otherwise empty.
    pub format: &'static str,
    /// 0 for the columns `kubectl get` shows, 1 for those only `-o wide` adds.
    pub priority: i32,
    /// What the column shows.
    pub description: &'static str,
}

/// A column shown by default.
const fn col(name: &'static str, type_: &'static str, description: &'static str) -> ColumnDef {
    ColumnDef { name, type_, format: "", priority: 0, description }
}

/// A column only `-o wide` shows.
const fn wide(name: &'static str, type_: &'static str, description: &'static str) -> ColumnDef {
    ColumnDef { name, type_, format: "", priority: 1, description }
}

/// The column with the object's name.
const NAME: ColumnDef = ColumnDef {
    name: "Name",
    type_: "string",
    format: "name",
    priority: 0,
    description: NAME_COLUMN_DESCRIPTION,
};
/// The age column most printers end with.
const AGE: ColumnDef = col("Age", "string", "Time since the object was created.");

/// How a built-in kind is printed: its columns, and the cells (and row conditions) of one
/// object at a given time (Unix seconds).
#[derive(Clone, Copy)]
pub struct Printer {
    /// Every column, in order (the name column included, wherever the printer puts it).
    pub columns: &'static [ColumnDef],
    /// The cells of an object's row, one per column.
    pub cells: fn(&Value, i64) -> Vec<Value>,
    /// The row's `conditions` (pods report completion), when it has any.
    pub conditions: Option<fn(&Value) -> Option<Value>>,
}

impl Printer {
    const fn new(columns: &'static [ColumnDef], cells: fn(&Value, i64) -> Vec<Value>) -> Self {
        Self { columns, cells, conditions: None }
    }
}

/// The default table of kinds without a printer (kube-apiserver's default table convertor).
const DEFAULT_COLUMNS: &[ColumnDef] =
    &[NAME, col("Created At", "date", "Time when the object was created (RFC 3339, UTC).")];

fn default_cells(object: &Value, _now: i64) -> Vec<Value> {
    let created = format::timestamp(object, "/metadata/creationTimestamp")
        .and_then(|at| k8s_openapi::jiff::Timestamp::from_second(at).ok())
        .map(|at| at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    vec![json!(objects::name(object).unwrap_or_default()), json!(created)]
}

/// The printer of a built-in kind (None for custom resources, which use their CRD's columns).
pub fn printer(def: &ResourceDef) -> Option<Printer> {
    if def.is_custom() {
        return None;
    }
    Some(
        core::printer(&def.group, &def.kind)
            .or_else(|| workloads::printer(&def.group, &def.kind))
            .or_else(|| cluster::printer(&def.group, &def.kind))
            .or_else(|| networking::printer(&def.group, &def.kind))
            .unwrap_or(Printer::new(DEFAULT_COLUMNS, default_cells)),
    )
}

/// The Table of `objects` at `version` of `def`.
pub fn table(
    def: &ResourceDef,
    version: &str,
    objects: &[Value],
    include_object: &str,
    list_rv: &str,
) -> Value {
    if let Some(printer) = printer(def) {
        return render(&printer, objects, include_object, list_rv, format::now_seconds());
    }
    let refs: Vec<&Value> = objects.iter().collect();
    let mut columns: Vec<Column> = Vec::new();
    if let Some(version_def) = def.crd_version(version) {
        for column in version_def.additional_printer_columns.iter().flatten() {
            columns.push(Column {
                name: column.name.clone(),
                type_: column.type_.clone(),
                format: column.format.clone().unwrap_or_default(),
                description: column.description.clone().unwrap_or_default(),
                priority: column.priority.unwrap_or(0),
                json_path: column.json_path.clone(),
            });
        }
    }
    if columns.is_empty() {
        columns.push(Column {
            name: "Age".into(),
            type_: "date".into(),
            format: String::new(),
            description: "Time since creation".into(),
            priority: 0,
            json_path: ".metadata.creationTimestamp".into(),
        });
    }
    render_table(&columns, &refs, include_object, list_rv)
}

/// A Table of built-in objects through their printer, with ages relative to `now`.
pub fn render(printer: &Printer, objects: &[Value], include_object: &str, list_rv: &str, now: i64) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            let mut row = Map::new();
            row.insert("cells".into(), Value::Array((printer.cells)(object, now)));
            if let Some(conditions) = printer.conditions.and_then(|conditions| conditions(object)) {
                row.insert("conditions".into(), conditions);
            }
            row.insert("object".into(), row_object(object, include_object));
            Value::Object(row)
        })
        .collect();
    let definitions: Vec<Value> = printer
        .columns
        .iter()
        .map(|column| {
            json!({
                "name": column.name,
                "type": column.type_,
                "format": column.format,
                "description": column.description,
                "priority": column.priority,
            })
        })
        .collect();
    let mut metadata = Map::new();
    if !list_rv.is_empty() {
        metadata.insert("resourceVersion".into(), json!(list_rv));
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

/// What a row carries of its object (`includeObject`): nothing, its metadata, or all of it.
fn row_object(object: &Value, include_object: &str) -> Value {
    match include_object {
        "Object" => object.clone(),
        "None" => Value::Null,
        _ => partial_metadata(object),
    }
}

/// The `meta.k8s.io/v1 PartialObjectMetadata` of an object.
pub fn partial_metadata(object: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": object.get("metadata").cloned().unwrap_or(json!({})),
    })
}

/// The header names of a built-in kind's table (`-o wide` adds the priority-1 ones).
pub fn headers(def: &ResourceDef, wide_output: bool) -> Vec<&'static str> {
    printer(def)
        .map(|printer| {
            printer.columns.iter().filter(|c| wide_output || c.priority == 0).map(|c| c.name).collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn every_builtin_has_a_printer_whose_cells_match_its_columns() {
        let registry = Registry::with_builtins();
        let object = json!({"metadata": {"name": "x", "namespace": "ns", "creationTimestamp": "2024-01-01T00:00:00Z"}});
        for def in registry.all() {
            let printer = printer(&def).unwrap();
            assert_eq!(
                (printer.cells)(&object, 1_704_067_200).len(),
                printer.columns.len(),
                "{}/{}",
                def.group,
                def.resource
            );
        }
    }

    #[test]
    fn kinds_without_a_printer_get_the_default_table() {
        let registry = Registry::with_builtins();
        let roles = registry.find_kind("rbac.authorization.k8s.io", "ClusterRole").unwrap();
        assert_eq!(headers(&roles, true), ["Name", "Created At"]);
        let object = json!({"metadata": {"name": "admin", "creationTimestamp": "2024-01-01T00:00:00+02:00"}});
        let table = render(&printer(&roles).unwrap(), &[object], "None", "7", 0);
        assert_eq!(table["rows"][0]["cells"], json!(["admin", "2023-12-31T22:00:00Z"]));
        assert_eq!(table["rows"][0]["object"], Value::Null);
        assert_eq!(table["metadata"]["resourceVersion"], "7");
    }
}
