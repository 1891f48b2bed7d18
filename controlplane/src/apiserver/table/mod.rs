//! `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`: the server-side printing kubectl
//! `get` relies on. Custom resources use their CRD's printer columns; a few built-in kinds get
//! the columns users know from kube-apiserver (pods, nodes, namespaces, workloads).

use serde_json::{Value, json};

use super::objects;
use crate::{
    registry::ResourceDef,
    semantics::jsonpath::{Column, render_table},
};

/// Whether an Accept header asks for a Table.
pub fn wants_table(accept: &str) -> bool {
    accept.split(',').any(|part| part.contains("as=Table"))
}

/// Whether an Accept header asks for PartialObjectMetadata (or its list).
pub fn wants_metadata(accept: &str) -> bool {
    accept.split(',').any(|part| part.contains("as=PartialObjectMetadata"))
}

/// The Table of `objects` at `version` of `def`.
pub fn table(
    def: &ResourceDef,
    version: &str,
    objects: &[Value],
    include_object: &str,
    list_rv: &str,
) -> Value {
    let refs: Vec<&Value> = objects.iter().collect();
    if let Some(columns) = builtin_columns(def) {
        let mut table = render_table(&[], &refs, include_object, list_rv);
        let definitions: Vec<Value> = std::iter::once(json!({"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0}))
            .chain(columns.iter().map(|(name, type_, priority)| {
                json!({"name": name, "type": type_, "format": "", "description": name, "priority": priority})
            }))
            .collect();
        table["columnDefinitions"] = json!(definitions);
        if let Some(rows) = table.get_mut("rows").and_then(Value::as_array_mut) {
            for (row, object) in rows.iter_mut().zip(objects) {
                let mut cells = vec![json!(objects::name(object).unwrap_or_default())];
                cells.extend(builtin_cells(def, object));
                row["cells"] = json!(cells);
            }
        }
        return table;
    }
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

fn builtin_columns(def: &ResourceDef) -> Option<Vec<(&'static str, &'static str, i32)>> {
    Some(match (def.group.as_str(), def.kind.as_str()) {
        ("", "Pod") => vec![
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            ("Age", "string", 0),
            ("IP", "string", 1),
            ("Node", "string", 1),
        ],
        ("", "Node") => vec![
            ("Status", "string", 0),
            ("Roles", "string", 0),
            ("Age", "string", 0),
            ("Version", "string", 0),
        ],
        ("", "Namespace") => vec![("Status", "string", 0), ("Age", "string", 0)],
        ("apps", "Deployment" | "StatefulSet" | "ReplicaSet") => {
            vec![("Ready", "string", 0), ("Age", "string", 0)]
        }
        ("batch", "Job") => vec![("Status", "string", 0), ("Completions", "string", 0), ("Age", "string", 0)],
        (_, "CustomResourceDefinition") => vec![("Created At", "date", 0)],
        _ if !def.is_custom() => vec![("Age", "string", 0)],
        _ => return None,
    })
}

fn age(object: &Value) -> String {
    let Some(created) = objects::meta_str(object, "creationTimestamp") else { return "<unknown>".into() };
    let Ok(created) = created.parse::<k8s_openapi::jiff::Timestamp>() else { return "<unknown>".into() };
    let seconds = k8s_openapi::jiff::Timestamp::now().duration_since(created).as_secs().max(0);
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

fn builtin_cells(def: &ResourceDef, object: &Value) -> Vec<Value> {
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "Pod") => {
            let statuses = object
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let total = object.pointer("/spec/containers").and_then(Value::as_array).map_or(0, Vec::len);
            let ready =
                statuses.iter().filter(|s| s.get("ready").and_then(Value::as_bool) == Some(true)).count();
            let restarts: i64 =
                statuses.iter().filter_map(|s| s.get("restartCount").and_then(Value::as_i64)).sum();
            let mut status =
                object.pointer("/status/phase").and_then(Value::as_str).unwrap_or("Pending").to_string();
            if let Some(reason) = object.pointer("/status/reason").and_then(Value::as_str) {
                status = reason.to_string();
            }
            for container in &statuses {
                if let Some(reason) = container.pointer("/state/waiting/reason").and_then(Value::as_str) {
                    status = reason.to_string();
                }
            }
            if objects::is_deleting(object) {
                status = "Terminating".into();
            }
            vec![
                json!(format!("{ready}/{total}")),
                json!(status),
                json!(restarts.to_string()),
                json!(age(object)),
                json!(object.pointer("/status/podIP").and_then(Value::as_str).unwrap_or("<none>")),
                json!(object.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("<none>")),
            ]
        }
        ("", "Node") => {
            let ready = object
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
                .and_then(|c| c["status"].as_str())
                == Some("True");
            let roles: Vec<String> = objects::labels(object)
                .keys()
                .filter_map(|key| key.strip_prefix("node-role.kubernetes.io/").map(str::to_string))
                .collect();
            vec![
                json!(if ready { "Ready" } else { "NotReady" }),
                json!(if roles.is_empty() { "<none>".to_string() } else { roles.join(",") }),
                json!(age(object)),
                json!(
                    object.pointer("/status/nodeInfo/kubeletVersion").and_then(Value::as_str).unwrap_or("")
                ),
            ]
        }
        ("", "Namespace") => vec![
            json!(object.pointer("/status/phase").and_then(Value::as_str).unwrap_or("Active")),
            json!(age(object)),
        ],
        ("apps", _) => {
            let ready = object.pointer("/status/readyReplicas").and_then(Value::as_i64).unwrap_or(0);
            let desired = object.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0);
            vec![json!(format!("{ready}/{desired}")), json!(age(object))]
        }
        ("batch", "Job") => {
            let succeeded = object.pointer("/status/succeeded").and_then(Value::as_i64).unwrap_or(0);
            let completions = object.pointer("/spec/completions").and_then(Value::as_i64).unwrap_or(1);
            let complete = object
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|c| c.iter().any(|c| c["type"] == "Complete" && c["status"] == "True"));
            vec![
                json!(if complete { "Complete" } else { "Running" }),
                json!(format!("{succeeded}/{completions}")),
                json!(age(object)),
            ]
        }
        (_, "CustomResourceDefinition") => {
            vec![json!(objects::meta_str(object, "creationTimestamp").unwrap_or_default())]
        }
        _ => vec![json!(age(object))],
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
