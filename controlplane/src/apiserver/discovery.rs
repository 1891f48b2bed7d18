//! Discovery documents: the legacy `/api`, `/apis`, group and group-version documents, and the
//! aggregated `apidiscovery.k8s.io/v2` lists kubectl 1.33 asks for first.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::registry::{Registry, ResourceDef, version_priority};

/// The verbs every resource serves, as discovery lists them.
fn verbs() -> Value {
    json!(["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"])
}

fn subresource_verbs(subresource: &str) -> Value {
    match subresource {
        "binding" | "eviction" => json!(["create"]),
        "finalize" => json!(["update"]),
        _ => json!(["get", "patch", "update"]),
    }
}

fn subresource_kind(def: &ResourceDef, subresource: &str) -> (String, String, String) {
    match subresource {
        "scale" => ("autoscaling".into(), "v1".into(), "Scale".into()),
        "binding" => (String::new(), "v1".into(), "Binding".into()),
        "eviction" => ("policy".into(), "v1".into(), "Eviction".into()),
        _ => (def.group.clone(), String::new(), def.kind.clone()),
    }
}

/// Groups served, each with its versions (preferred first), from the registry.
fn groups(registry: &Registry) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for def in registry.all() {
        let versions = groups.entry(def.group.clone()).or_default();
        for version in &def.versions {
            if !versions.contains(version) {
                versions.push(version.clone());
            }
        }
    }
    for versions in groups.values_mut() {
        versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
    }
    groups
}

/// `/api`.
pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_document(name: &str, versions: &[String]) -> Value {
    let entries: Vec<Value> =
        versions.iter().map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v})).collect();
    json!({
        "name": name,
        "versions": entries,
        "preferredVersion": entries.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/apis`.
pub fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = groups(registry)
        .iter()
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, versions)| group_document(name, versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`, or None for an unknown group.
pub fn group(registry: &Registry, name: &str) -> Option<Value> {
    let groups = groups(registry);
    let versions = groups.get(name).filter(|_| !name.is_empty())?;
    let mut document = group_document(name, versions);
    document["kind"] = json!("APIGroup");
    document["apiVersion"] = json!("v1");
    Some(document)
}

/// `/api/v1` or `/apis/{group}/{version}`, or None when nothing is served there.
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let defs: Vec<_> = registry.all().into_iter().filter(|d| d.group == group && d.serves(version)).collect();
    if defs.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for def in &defs {
        let mut entry = json!({
            "name": def.resource,
            "singularName": def.singular,
            "namespaced": def.namespaced,
            "kind": def.kind,
            "verbs": verbs(),
        });
        if !def.short_names.is_empty() {
            entry["shortNames"] = json!(def.short_names);
        }
        if !def.categories.is_empty() {
            entry["categories"] = json!(def.categories);
        }
        resources.push(entry);
        for subresource in &def.subresources {
            let (sub_group, sub_version, sub_kind) = subresource_kind(def, subresource);
            let mut sub = json!({
                "name": format!("{}/{subresource}", def.resource),
                "singularName": "",
                "namespaced": def.namespaced,
                "kind": sub_kind,
                "verbs": subresource_verbs(subresource),
            });
            if !sub_version.is_empty() {
                sub["group"] = json!(sub_group);
                sub["version"] = json!(sub_version);
            }
            resources.push(sub);
        }
    }
    let group_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
    )
}

/// The aggregated discovery list for `/api` (`core` = true) or `/apis`.
pub fn aggregated(registry: &Registry, core: bool) -> Value {
    let all = registry.all();
    let mut items = Vec::new();
    for (group, versions) in groups(registry) {
        if group.is_empty() != core {
            continue;
        }
        let version_entries: Vec<Value> = versions
            .iter()
            .map(|version| {
                let resources: Vec<Value> = all
                    .iter()
                    .filter(|def| def.group == group && def.serves(version))
                    .map(|def| {
                        let subresources: Vec<Value> = def
                            .subresources
                            .iter()
                            .map(|subresource| {
                                let (g, v, k) = subresource_kind(def, subresource);
                                let version = if v.is_empty() { version.clone() } else { v };
                                json!({
                                    "subresource": subresource,
                                    "responseKind": {"group": g, "version": version, "kind": k},
                                    "verbs": subresource_verbs(subresource),
                                })
                            })
                            .collect();
                        let mut entry = json!({
                            "resource": def.resource,
                            "responseKind": {"group": def.group, "version": version, "kind": def.kind},
                            "scope": if def.namespaced { "Namespaced" } else { "Cluster" },
                            "singularResource": def.singular,
                            "verbs": verbs(),
                        });
                        if !def.short_names.is_empty() {
                            entry["shortNames"] = json!(def.short_names);
                        }
                        if !def.categories.is_empty() {
                            entry["categories"] = json!(def.categories);
                        }
                        if !subresources.is_empty() {
                            entry["subresources"] = json!(subresources);
                        }
                        entry
                    })
                    .collect();
                json!({"version": version, "resources": resources, "freshness": "Current"})
            })
            .collect();
        items.push(
            json!({"metadata": {"name": group, "creationTimestamp": null}, "versions": version_entries}),
        );
    }
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// The media type of aggregated discovery responses.
pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether the Accept header asks for aggregated discovery.
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|part| {
        part.contains("as=APIGroupDiscoveryList") && part.contains("v=v2") && !part.contains("v=v2beta1")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_lists_builtin_groups_and_resources() {
        let registry = Registry::with_builtins();
        let groups = group_list(&registry);
        let names: Vec<&str> =
            groups["groups"].as_array().unwrap().iter().filter_map(|g| g["name"].as_str()).collect();
        assert!(names.contains(&"apps") && names.contains(&"apiextensions.k8s.io"));
        let core = resource_list(&registry, "", "v1").unwrap();
        let pods = core["resources"].as_array().unwrap().iter().find(|r| r["name"] == "pods").unwrap();
        assert_eq!(pods["shortNames"], json!(["po"]));
        assert!(
            core["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["name"] == "pods/eviction" && r["kind"] == "Eviction")
        );
        assert!(resource_list(&registry, "apps", "v2").is_none());
    }

    #[test]
    fn aggregated_discovery_splits_core_from_groups() {
        let registry = Registry::with_builtins();
        let core = aggregated(&registry, true);
        assert_eq!(core["items"].as_array().unwrap().len(), 1);
        assert_eq!(core["items"][0]["metadata"]["name"], "");
        let groups = aggregated(&registry, false);
        assert!(groups["items"].as_array().unwrap().iter().all(|item| item["metadata"]["name"] != ""));
        assert!(wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(!wants_aggregated("application/json"));
    }
}
