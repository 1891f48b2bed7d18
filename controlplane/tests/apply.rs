//! Server-side apply and managed fields as a Kubernetes user sees them: what `kubectl apply
//! --server-side` leaves in the object and in `metadata.managedFields`, the 409 conflicts, forced
//! takeovers and the ownership moves caused by ordinary writes. The expected managed fields are
//! the ones kube-apiserver writes for the same sequence of requests.

use kruise_controlplane::semantics::{
    apply::{
        ApplyError, Conflict, DeducedListTypes, ListTypes, apply, apply_subresource, conflict_cause_message,
        conflict_message, record_subresource_update, record_update,
    },
    merge_keys::{KindPatchMeta, ListStrategy, kind_patch_meta},
};
use serde_json::{Value, json};

const T1: &str = "2024-05-01T10:00:00Z";
const T2: &str = "2024-05-01T11:00:00Z";
const T3: &str = "2024-05-01T12:00:00Z";

fn deployment_meta() -> &'static KindPatchMeta {
    match kind_patch_meta("apps", "Deployment") {
        Some(meta) => meta,
        None => panic!("no Deployment metadata"),
    }
}

fn pod_meta() -> &'static KindPatchMeta {
    match kind_patch_meta("", "Pod") {
        Some(meta) => meta,
        None => panic!("no Pod metadata"),
    }
}

fn ok(result: Result<Value, ApplyError>) -> Value {
    match result {
        Ok(value) => value,
        Err(ApplyError::Conflicts(conflicts)) => panic!("unexpected conflicts {conflicts:?}"),
        Err(ApplyError::Invalid(message)) => panic!("unexpected error {message}"),
    }
}

fn conflicts(result: Result<Value, ApplyError>) -> Vec<Conflict> {
    match result {
        Err(ApplyError::Conflicts(conflicts)) => conflicts,
        Err(ApplyError::Invalid(message)) => panic!("expected conflicts, got {message}"),
        Ok(value) => panic!("expected conflicts, got {value}"),
    }
}

fn invalid(result: Result<Value, ApplyError>) -> String {
    match result {
        Err(ApplyError::Invalid(message)) => message,
        Err(ApplyError::Conflicts(conflicts)) => panic!("expected an error, got conflicts {conflicts:?}"),
        Ok(value) => panic!("expected an error, got {value}"),
    }
}

/// The stored object: what the API server would persist (it assigns the uid on create).
fn stored(mut object: Value) -> Value {
    if object.pointer("/metadata/uid").is_none() {
        object["metadata"]["uid"] = json!("6b1f0c1e-0000-4000-8000-000000000001");
    }
    object
}

fn entry<'a>(object: &'a Value, manager: &str, operation: &str) -> &'a Value {
    let entries = object.pointer("/metadata/managedFields").and_then(Value::as_array);
    match entries.into_iter().flatten().find(|entry| {
        entry["manager"].as_str() == Some(manager) && entry["operation"].as_str() == Some(operation)
    }) {
        Some(entry) => entry,
        None => panic!("no {operation} entry for {manager} in {object}"),
    }
}

fn managers(object: &Value) -> Vec<(String, String)> {
    object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|entry| {
            (
                entry["manager"].as_str().unwrap_or("").to_string(),
                entry["operation"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn web_config() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "tier": "front"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]}
            }
        }
    })
}

/// The same configuration without the `tier` label, the port and (optionally) the replicas.
fn web_config_trimmed(with_replicas: bool) -> Value {
    let mut config = web_config();
    config["metadata"]["labels"] = json!({"app": "web"});
    config["spec"]["template"]["spec"]["containers"] = json!([{"name": "nginx", "image": "nginx:1.25"}]);
    if !with_replicas && let Some(spec) = config["spec"].as_object_mut() {
        spec.remove("replicas");
    }
    config
}

fn replicas_config(replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": replicas}
    })
}

#[test]
fn create_via_apply_records_the_applied_fields() {
    let object = ok(apply(None, &web_config(), "kubectl", false, deployment_meta(), T1));
    let mut expected_object = web_config();
    expected_object["metadata"]["managedFields"] = json!([{
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {"f:app": {}, "f:tier": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {
                        ".": {},
                        "f:image": {},
                        "f:name": {},
                        "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}
                    }}}
                }
            }
        }
    }]);
    assert_eq!(object, expected_object);
}

#[test]
fn reapplying_without_a_field_removes_it() {
    let live = stored(ok(apply(None, &web_config(), "kubectl", false, deployment_meta(), T1)));
    let object = ok(apply(Some(&live), &web_config_trimmed(true), "kubectl", false, deployment_meta(), T2));
    assert_eq!(object["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(
        object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "nginx", "image": "nginx:1.25"}])
    );
    assert_eq!(object["metadata"]["uid"], live["metadata"]["uid"], "identity fields stay");
    let kubectl = entry(&object, "kubectl", "Apply");
    assert_eq!(kubectl["time"], json!(T2));
    assert_eq!(
        kubectl["fieldsV1"],
        json!({
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}}}
                }
            }
        })
    );
}

#[test]
fn reapplying_the_same_configuration_changes_nothing() {
    let live = stored(ok(apply(None, &web_config(), "kubectl", false, deployment_meta(), T1)));
    let again = ok(apply(Some(&live), &web_config(), "kubectl", false, deployment_meta(), T2));
    assert_eq!(again, live, "a no-op apply keeps the object and the time of the last change");
}

#[test]
fn a_second_manager_setting_an_owned_field_conflicts() {
    let live = stored(ok(apply(None, &web_config_trimmed(true), "kubectl", false, deployment_meta(), T1)));
    let result = apply(Some(&live), &replicas_config(5), "hpa", false, deployment_meta(), T2);
    let found = conflicts(result);
    assert_eq!(found, vec![Conflict { manager: "kubectl".into(), field: ".spec.replicas".into() }]);
    assert_eq!(
        conflict_message(Some(&live), &found),
        "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas"
    );
    assert_eq!(conflict_cause_message(Some(&live), &found[0]), "conflict with \"kubectl\"");

    // Applying the value the owner holds is no conflict: both own it.
    let shared = ok(apply(Some(&live), &replicas_config(2), "hpa", false, deployment_meta(), T2));
    assert_eq!(entry(&shared, "hpa", "Apply")["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert!(entry(&shared, "kubectl", "Apply")["fieldsV1"]["f:spec"].get("f:replicas").is_some());
}

#[test]
fn force_takes_ownership() {
    let live = stored(ok(apply(None, &web_config_trimmed(true), "kubectl", false, deployment_meta(), T1)));
    let object = ok(apply(Some(&live), &replicas_config(5), "hpa", true, deployment_meta(), T2));
    assert_eq!(object["spec"]["replicas"], json!(5));
    assert_eq!(managers(&object), vec![("kubectl".into(), "Apply".into()), ("hpa".into(), "Apply".into())]);
    assert_eq!(entry(&object, "hpa", "Apply")["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert!(entry(&object, "kubectl", "Apply")["fieldsV1"]["f:spec"].get("f:replicas").is_none());

    // The former owner no longer claims replicas: dropping it from its config keeps the value.
    let object = stored(object);
    let reapplied =
        ok(apply(Some(&object), &web_config_trimmed(false), "kubectl", false, deployment_meta(), T3));
    assert_eq!(reapplied["spec"]["replicas"], json!(5));
}

#[test]
fn a_client_side_update_moves_ownership() {
    let live = stored(ok(apply(None, &web_config_trimmed(false), "kubectl", false, deployment_meta(), T1)));
    let mut edited = live.clone();
    edited["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.26");
    let object = stored(record_update(Some(&live), &edited, "kubectl-edit", deployment_meta(), T2));
    assert_eq!(object["spec"]["template"]["spec"]["containers"][0]["image"], json!("nginx:1.26"));
    let editor = entry(&object, "kubectl-edit", "Update");
    assert_eq!(editor["apiVersion"], json!("apps/v1"));
    assert_eq!(editor["time"], json!(T2));
    assert_eq!(
        editor["fieldsV1"],
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {"f:image": {}}}}}}})
    );
    assert_eq!(
        entry(&object, "kubectl", "Apply")["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"],
        json!({"k:{\"name\":\"nginx\"}": {".": {}, "f:name": {}}})
    );

    // Applying the old image now conflicts with the editor.
    let found =
        conflicts(apply(Some(&object), &web_config_trimmed(false), "kubectl", false, deployment_meta(), T3));
    assert_eq!(
        found,
        vec![Conflict {
            manager: "kubectl-edit".into(),
            field: ".spec.template.spec.containers[name=\"nginx\"].image".into()
        }]
    );
    assert_eq!(
        conflict_message(Some(&object), &found),
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using apps/v1: \
         .spec.template.spec.containers[name=\"nginx\"].image"
    );
}

#[test]
fn containers_merge_by_name() {
    let live = stored(ok(apply(None, &web_config_trimmed(true), "kubectl", false, deployment_meta(), T1)));
    let sidecar = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "proxy", "image": "envoy", "ports": [{"containerPort": 15001}]}
        ]}}}
    });
    let object = stored(ok(apply(Some(&live), &sidecar, "sidecar-injector", false, deployment_meta(), T2)));
    assert_eq!(
        object["spec"]["template"]["spec"]["containers"],
        json!([
            {"name": "nginx", "image": "nginx:1.25"},
            {"name": "proxy", "image": "envoy", "ports": [{"containerPort": 15001}]}
        ])
    );
    assert_eq!(
        entry(&object, "sidecar-injector", "Apply")["fieldsV1"],
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"proxy\"}": {
            ".": {},
            "f:image": {},
            "f:name": {},
            "f:ports": {"k:{\"containerPort\":15001,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}
        }}}}}})
    );

    // The first applier dropping its container leaves the sidecar alone.
    let mut without_nginx = web_config_trimmed(true);
    without_nginx["spec"]["template"]["spec"]["containers"] = json!([]);
    let object = ok(apply(Some(&object), &without_nginx, "kubectl", false, deployment_meta(), T3));
    assert_eq!(
        object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "proxy", "image": "envoy", "ports": [{"containerPort": 15001}]}])
    );
}

#[test]
fn fields_shared_with_another_manager_survive_removal() {
    let labels = |labels: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": labels}});
    let meta = match kind_patch_meta("", "ConfigMap") {
        Some(meta) => meta,
        None => panic!("no ConfigMap metadata"),
    };
    let live = stored(ok(apply(None, &labels(json!({"a": "1", "b": "2"})), "one", false, meta, T1)));
    let live = stored(ok(apply(Some(&live), &labels(json!({"a": "1"})), "two", false, meta, T2)));
    let object = ok(apply(Some(&live), &labels(json!({})), "one", false, meta, T3));
    assert_eq!(object["metadata"]["labels"], json!({"a": "1"}), "b goes, a is still applied by two");
}

#[test]
fn writes_record_what_they_change() {
    let created = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}
    });
    let object = stored(record_update(None, &created, "kubectl-create", pod_meta(), T1));
    assert_eq!(
        entry(&object, "kubectl-create", "Update")["fieldsV1"],
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            // The typed container always has `resources`, so the creator owns it too.
            "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}}}
        })
    );

    // A status write by another manager only claims what it set.
    let mut running = object.clone();
    running["status"] = json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]});
    let object = stored(record_update(Some(&object), &running, "kubelet", pod_meta(), T2));
    assert_eq!(
        entry(&object, "kubelet", "Update")["fieldsV1"],
        json!({"f:status": {
            "f:conditions": {".": {}, "k:{\"type\":\"Ready\"}": {
                ".": {},
                "f:lastProbeTime": {},
                "f:lastTransitionTime": {},
                "f:status": {},
                "f:type": {}
            }},
            "f:phase": {}
        }})
    );
    assert_eq!(
        managers(&object),
        vec![("kubectl-create".into(), "Update".into()), ("kubelet".into(), "Update".into())]
    );

    // An unchanged write leaves the managed fields alone.
    assert_eq!(record_update(Some(&object), &object, "someone", pod_meta(), T3), object);

    // Removing the labels takes them away from their owner; the remover owns nothing new.
    let mut unlabelled = object.clone();
    unlabelled["metadata"]["labels"] = json!({});
    let object = record_update(Some(&object), &unlabelled, "kubectl-label", pod_meta(), T3);
    assert!(entry(&object, "kubectl-create", "Update")["fieldsV1"].get("f:metadata").is_none());
    assert_eq!(
        managers(&object),
        vec![("kubectl-create".into(), "Update".into()), ("kubelet".into(), "Update".into())]
    );
}

#[test]
fn resetting_managed_fields_stops_tracking_until_the_next_apply() {
    let meta = match kind_patch_meta("", "ConfigMap") {
        Some(meta) => meta,
        None => panic!("no ConfigMap metadata"),
    };
    let created =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
    let live = stored(record_update(None, &created, "creator", meta, T1));
    let mut reset = live.clone();
    reset["metadata"]["managedFields"] = json!([]);
    reset["data"]["a"] = json!("2");
    let untracked = stored(record_update(Some(&live), &reset, "editor", meta, T2));
    assert!(untracked.pointer("/metadata/managedFields").is_none());

    // The first apply gives the existing fields to "before-first-apply".
    let config =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "3"}});
    let found = conflicts(apply(Some(&untracked), &config, "ap", false, meta, T3));
    assert_eq!(found, vec![Conflict { manager: "before-first-apply".into(), field: ".data.a".into() }]);
    let config =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"b": "3"}});
    let object = ok(apply(Some(&untracked), &config, "ap", false, meta, T3));
    assert_eq!(
        managers(&object),
        vec![("ap".into(), "Apply".into()), ("before-first-apply".into(), "Update".into())]
    );
    assert_eq!(
        entry(&object, "before-first-apply", "Update")["fieldsV1"],
        json!({"f:data": {".": {}, "f:a": {}}})
    );
}

#[test]
fn invalid_configurations_are_refused() {
    let meta = deployment_meta();
    let live = stored(ok(apply(None, &web_config(), "kubectl", false, meta, T1)));
    let mut duplicated = web_config();
    duplicated["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]);
    assert_eq!(
        invalid(apply(Some(&live), &duplicated, "kubectl", false, meta, T2)),
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): \
         .spec.template.spec.containers: duplicate entries for key [name=\"a\"]"
    );
    let mut with_managed_fields = web_config();
    with_managed_fields["metadata"]["managedFields"] = json!([{"manager": "x"}]);
    assert_eq!(
        invalid(apply(Some(&live), &with_managed_fields, "kubectl", false, meta, T2)),
        "metadata.managedFields must be nil"
    );
    let mut other_version = web_config();
    other_version["apiVersion"] = json!("apps/v1beta2");
    assert_eq!(
        invalid(apply(Some(&live), &other_version, "kubectl", false, meta, T2)),
        "invalid object type: apps/v1beta2, Kind=Deployment"
    );
    assert_eq!(
        invalid(apply(None, &json!({"metadata": {"name": "x"}}), "kubectl", false, meta, T2)),
        "invalid object type: /, Kind="
    );
}

#[test]
fn many_updaters_are_folded_into_ancient_changes() {
    let meta = match kind_patch_meta("", "ConfigMap") {
        Some(meta) => meta,
        None => panic!("no ConfigMap metadata"),
    };
    let created =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k0": "v"}});
    let mut object = stored(record_update(None, &created, "m0", meta, "2024-05-01T10:00:00Z"));
    for index in 1..14 {
        let mut next = object.clone();
        next["data"][format!("k{index}")] = json!("v");
        object = record_update(
            Some(&object),
            &next,
            &format!("m{index}"),
            meta,
            &format!("2024-05-01T10:{index:02}:00Z"),
        );
    }
    let names: Vec<String> = managers(&object).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names.len(), 10);
    assert_eq!(names[0], "ancient-changes");
    assert_eq!(names[9], "m13");
}

#[test]
fn subresource_writes_are_recorded_separately() {
    let live = stored(ok(apply(None, &web_config(), "kubectl", false, deployment_meta(), T1)));
    let mut with_status = live.clone();
    with_status["status"] = json!({"replicas": 2});
    let object =
        stored(record_subresource_update(&live, &with_status, "controller", "status", deployment_meta(), T2));
    let status_entry = entry(&object, "controller", "Update");
    assert_eq!(status_entry["subresource"], json!("status"));
    assert_eq!(status_entry["fieldsV1"], json!({"f:status": {"f:replicas": {}}}));

    let status_config = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "status": {"replicas": 3}
    });
    let found = conflicts(apply_subresource(
        &object,
        &status_config,
        "other",
        "status",
        false,
        deployment_meta(),
        T3,
    ));
    assert_eq!(
        conflict_cause_message(Some(&object), &found[0]),
        "conflict with \"controller\" with subresource \"status\" using apps/v1"
    );
    let object =
        ok(apply_subresource(&object, &status_config, "other", "status", true, deployment_meta(), T3));
    assert_eq!(entry(&object, "other", "Apply")["subresource"], json!("status"));
}

/// A custom resource whose schema declares `spec.items` a list keyed by `id`.
struct WidgetLists;

impl ListTypes for WidgetLists {
    fn list_strategy(&self, path: &str) -> ListStrategy {
        match path {
            "spec.items" => ListStrategy::MergeByKey("id"),
            "spec.tags" => ListStrategy::MergeSet,
            _ => ListStrategy::Replace,
        }
    }
}

#[test]
fn custom_resources_use_their_schema_list_types() {
    let widget = |items: Value, tags: Value| {
        json!({
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "finalizers": ["example.com/cleanup"]},
            "spec": {"items": items, "tags": tags, "args": ["a"]}
        })
    };
    let live = stored(ok(apply(
        None,
        &widget(json!([{"id": 1, "size": 2}]), json!(["x"])),
        "one",
        false,
        &WidgetLists,
        T1,
    )));
    let second = json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"items": [{"id": 2, "size": 3}], "tags": ["y"]}
    });
    let object = ok(apply(Some(&live), &second, "two", false, &WidgetLists, T2));
    assert_eq!(object["spec"]["items"], json!([{"id": 1, "size": 2}, {"id": 2, "size": 3}]));
    assert_eq!(object["spec"]["tags"], json!(["x", "y"]));
    assert_eq!(
        entry(&object, "one", "Apply")["fieldsV1"],
        json!({
            "f:metadata": {"f:finalizers": {"v:\"example.com/cleanup\"": {}}},
            "f:spec": {"f:args": {}, "f:items": {"k:{\"id\":1}": {".": {}, "f:id": {}, "f:size": {}}}, "f:tags": {"v:\"x\"": {}}}
        })
    );

    // Without a schema every list is atomic and every object a map of its keys.
    let untyped =
        ok(apply(None, &widget(json!([{"id": 1}]), json!([])), "one", false, &DeducedListTypes, T1));
    assert_eq!(
        entry(&untyped, "one", "Apply")["fieldsV1"]["f:spec"],
        json!({".": {}, "f:args": {}, "f:items": {}, "f:tags": {}})
    );
}
