//! The three PATCH body types, checked against what kube-apiserver (its patch libraries, run on the
//! same inputs) produces: the patched objects, and the error texts clients get back.

use kruise_controlplane::semantics::{
    merge_keys::kind_patch_meta,
    patch::{PatchError, json_patch, merge_patch, strategic_merge_patch},
};
use serde_json::{Value, json};

struct Case {
    name: &'static str,
    /// "Pod" or "Deployment" for strategic merge patches, "json" or "merge" otherwise.
    kind: &'static str,
    original: &'static str,
    patch: &'static str,
    /// The patched object, or `{"error": "<message>"}`.
    expected: &'static str,
}

fn parse(text: &str) -> Value {
    match serde_json::from_str(text) {
        Ok(value) => value,
        Err(err) => panic!("bad test JSON {text}: {err}"),
    }
}

fn run(cases: &[Case]) {
    for case in cases {
        let original = parse(case.original);
        let patch = parse(case.patch);
        let result = match case.kind {
            "json" => json_patch(&original, &patch),
            "merge" => merge_patch(&original, &patch),
            "Pod" | "Deployment" => {
                let group = if case.kind == "Pod" { "" } else { "apps" };
                let Some(meta) = kind_patch_meta(group, case.kind) else {
                    panic!("no metadata for {}", case.kind)
                };
                strategic_merge_patch(&original, &patch, meta)
            }
            other => panic!("unknown case kind {other}"),
        };
        let actual = match result {
            Ok(value) => value,
            Err(err) => json!({ "error": err.to_string() }),
        };
        assert_eq!(actual, parse(case.expected), "{}: patch {}", case.name, case.patch);
    }
}

#[test]
fn strategic_merge_patches() {
    run(STRATEGIC);
}

#[test]
fn json_patches() {
    run(JSON);
}

#[test]
fn merge_patches() {
    run(MERGE);
}

#[test]
fn errors_carry_the_status_kube_apiserver_answers_with() {
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}});
    let meta = match kind_patch_meta("", "Pod") {
        Some(meta) => meta,
        None => panic!("no Pod metadata"),
    };
    let cases: Vec<(Result<Value, PatchError>, u16, &str)> = vec![
        (json_patch(&pod, &json!({"op": "add"})), 400, "BadRequest"),
        (json_patch(&pod, &json!([{"op": "test", "path": "/metadata/name", "value": "q"}])), 422, "Invalid"),
        (json_patch(&pod, &json!([{"op": "remove", "path": "/spec/nodeName"}])), 422, "Invalid"),
        (merge_patch(&pod, &json!(3)), 400, "BadRequest"),
        (strategic_merge_patch(&pod, &json!({"metadata": {"$retainKeys": "x"}}), meta), 400, "BadRequest"),
        (
            strategic_merge_patch(
                &json!({"spec": {"containers": []}}),
                &json!({"spec": {"containers": [["x"]]}}),
                meta,
            ),
            422,
            "Invalid",
        ),
        (
            strategic_merge_patch(&pod, &json!({"spec": {"containers": [{"image": "x"}]}}), meta),
            500,
            "InternalError",
        ),
    ];
    for (result, status, reason) in cases {
        match result {
            Ok(value) => panic!("expected a {status} error, got {value}"),
            Err(err) => {
                assert_eq!(err.http_status(), status, "{err}");
                assert_eq!(err.status_reason(), reason, "{err}");
            }
        }
    }
    let too_many: Vec<Value> = (0..10_001).map(|_| json!({"op": "test", "path": "/metadata"})).collect();
    match json_patch(&pod, &Value::Array(too_many)) {
        Err(err) => {
            assert_eq!(err.http_status(), 413);
            assert_eq!(err.to_string(), "The allowed maximum operations in a JSON patch is 10000, got 10001");
        }
        Ok(_) => panic!("10001 operations should be refused"),
    }
    let failed = json_patch(&pod, &json!([{"op": "test", "path": "/metadata/name", "value": "q"}]));
    if let Err(err) = failed {
        assert_eq!(err.status_message(), "the server rejected our request due to an error in our request");
    }
}

#[test]
fn strategic_merge_patch_leaves_no_directives_behind() {
    let meta = match kind_patch_meta("apps", "Deployment") {
        Some(meta) => meta,
        None => panic!("no Deployment metadata"),
    };
    let original = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "1"}]}}}});
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
        "containers": [{"name": "b", "image": "2", "$setElementOrder/env": [{"name": "X"}], "env": [{"name": "X", "value": null}]}]
    }}}});
    let patched = match strategic_merge_patch(&original, &patch, meta) {
        Ok(value) => value,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(
        patched,
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "b", "image": "2", "env": [{"name": "X"}]},
            {"name": "a", "image": "1"}
        ]}}}})
    );
}

const STRATEGIC: &[Case] = &[
    Case {
        name: "a new element ordered by $setElementOrder lands where kube-apiserver puts it",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"b","image":"i2"},{"name":"a","image":"i2"},{"name":"c","image":"i1"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"b","image":"i1"},{"name":"c","$patch":"delete"},{"name":"d"}],"$setElementOrder/containers":[{"name":"b"},{"name":"d"}]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"b","image":"i1"},{"name":"a","image":"i2"},{"name":"d"}]}}"#,
    },
    Case {
        name: "a value both added and deleted ends up deleted",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["f3","f1","f4"]}}"#,
        patch: r#"{"metadata":{"finalizers":["f2"],"$deleteFromPrimitiveList/finalizers":["f2","f3"]}}"#,
        expected: r#"{"metadata":{"finalizers":["f1","f4"]}}"#,
    },
    Case {
        name: "new finalizers go before the existing ones",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a","b"]}}"#,
        patch: r#"{"metadata":{"finalizers":["c"]}}"#,
        expected: r#"{"metadata":{"finalizers":["c","a","b"]}}"#,
    },
    Case {
        name: "finalizers merge as a set",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a","b"]}}"#,
        patch: r#"{"metadata":{"finalizers":["b","c"]}}"#,
        expected: r#"{"metadata":{"finalizers":["a","b","c"]}}"#,
    },
    Case {
        name: "$deleteFromPrimitiveList removes values",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a","b","c"]}}"#,
        patch: r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}}"#,
        expected: r#"{"metadata":{"finalizers":["a","c"]}}"#,
    },
    Case {
        name: "$setElementOrder reorders a primitive list",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a","b","c"]}}"#,
        patch: r#"{"metadata":{"$setElementOrder/finalizers":["c","a","b"]}}"#,
        expected: r#"{"metadata":{"finalizers":["c","a","b"]}}"#,
    },
    Case {
        name: "null deletes a map entry",
        kind: "Pod",
        original: r#"{"metadata":{"labels":{"a":"1","b":"2"}}}"#,
        patch: r#"{"metadata":{"labels":{"a":null,"c":"3"}}}"#,
        expected: r#"{"metadata":{"labels":{"b":"2","c":"3"}}}"#,
    },
    Case {
        name: "containers merge by name",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"2"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"b","image":"3"}]}}"#,
        expected: r#"{"spec":{"containers":[{"image":"1","name":"a"},{"image":"3","name":"b"}]}}"#,
    },
    Case {
        name: "an unknown container is added first",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"2"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"c","image":"3"}]}}"#,
        expected: r#"{"spec":{"containers":[{"image":"3","name":"c"},{"image":"1","name":"a"},{"image":"2","name":"b"}]}}"#,
    },
    Case {
        name: "$patch delete removes a list element",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"2"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}"#,
        expected: r#"{"spec":{"containers":[{"image":"2","name":"b"}]}}"#,
    },
    Case {
        name: "$patch replace replaces the whole list",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"2"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"c","image":"3"},{"$patch":"replace"}]}}"#,
        expected: r#"{"spec":{"containers":[{"image":"3","name":"c"}]}}"#,
    },
    Case {
        name: "$setElementOrder orders merged containers",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"2"}]}}"#,
        patch: r#"{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"name":"a","image":"9"}]}}"#,
        expected: r#"{"spec":{"containers":[{"image":"2","name":"b"},{"image":"9","name":"a"}]}}"#,
    },
    Case {
        name: "$setElementOrder places a new container",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"2"}]}}"#,
        patch: r#"{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"b"},{"name":"a"}],"containers":[{"name":"c","image":"9"}]}}"#,
        expected: r#"{"spec":{"containers":[{"image":"9","name":"c"},{"image":"2","name":"b"},{"image":"1","name":"a"}]}}"#,
    },
    Case {
        name: "env merges by name inside a container",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1","env":[{"name":"X","value":"1"}]}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"2"}]}]}}"#,
        expected: r#"{"spec":{"containers":[{"env":[{"name":"Y","value":"2"},{"name":"X","value":"1"}],"image":"1","name":"a"}]}}"#,
    },
    Case {
        name: "args are replaced",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1","args":["x","y"]}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","args":["z"]}]}}"#,
        expected: r#"{"spec":{"containers":[{"args":["z"],"image":"1","name":"a"}]}}"#,
    },
    Case {
        name: "tolerations are replaced",
        kind: "Pod",
        original: r#"{"spec":{"tolerations":[{"key":"a"}]}}"#,
        patch: r#"{"spec":{"tolerations":[{"key":"b"}]}}"#,
        expected: r#"{"spec":{"tolerations":[{"key":"b"}]}}"#,
    },
    Case {
        name: "$retainKeys keeps only the listed volume source",
        kind: "Pod",
        original: r#"{"spec":{"volumes":[{"name":"v","emptyDir":{}}]}}"#,
        patch: r#"{"spec":{"volumes":[{"name":"v","hostPath":{"path":"/x"},"$retainKeys":["hostPath","name"]}]}}"#,
        expected: r#"{"spec":{"volumes":[{"hostPath":{"path":"/x"},"name":"v"}]}}"#,
    },
    Case {
        name: "$retainKeys rejects patch fields it does not list",
        kind: "Pod",
        original: r#"{"spec":{"volumes":[{"name":"v","emptyDir":{}}]}}"#,
        patch: r#"{"spec":{"volumes":[{"name":"v","hostPath":{"path":"/x"},"$retainKeys":["name"]}]}}"#,
        expected: r#"{"error":"invalid patch format of retainKeys"}"#,
    },
    Case {
        name: "$patch replace at the top replaces the object",
        kind: "Pod",
        original: r#"{"spec":{"a":1}}"#,
        patch: r#"{"$patch":"replace","spec":{"b":2}}"#,
        expected: r#"{"spec":{"b":2}}"#,
    },
    Case {
        name: "$patch delete empties a map",
        kind: "Pod",
        original: r#"{"spec":{"a":1}}"#,
        patch: r#"{"spec":{"$patch":"delete"}}"#,
        expected: r#"{"spec":{}}"#,
    },
    Case {
        name: "$patch merge is not a map directive",
        kind: "Pod",
        original: r#"{"spec":{"a":1}}"#,
        patch: r#"{"spec":{"$patch":"merge"}}"#,
        expected: r#"{"error":"unknown patch type: merge in map: map[$patch:merge]"}"#,
    },
    Case {
        name: "a keyed element without its merge key",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"}]}}"#,
        patch: r#"{"spec":{"containers":[{"image":"x"}]}}"#,
        expected: r#"{"error":"map: map[image:x] does not contain declared merge key: name"}"#,
    },
    Case {
        name: "$patch merge inside a list",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","$patch":"merge"}]}}"#,
        expected: r#"{"error":"merging lists cannot yet be specified in the patch"}"#,
    },
    Case {
        name: "lists of lists are refused",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"}]}}"#,
        patch: r#"{"spec":{"containers":[["x"]]}}"#,
        expected: r#"{"error":"list element types are not identical: [[map[name:a]] [[x]]]"}"#,
    },
    Case {
        name: "a type change replaces the value",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"}]}}"#,
        patch: r#"{"spec":{"containers":"x"}}"#,
        expected: r#"{"spec":{"containers":"x"}}"#,
    },
    Case {
        name: "$deleteFromPrimitiveList needs a list",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a"]}}"#,
        patch: r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}}"#,
        expected: r#"{"metadata":{"finalizers":["a"]}}"#,
    },
    Case {
        name: "$deleteFromPrimitiveList needs a field name",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a"]}}"#,
        patch: r#"{"metadata":{"$deleteFromPrimitiveList":["a"]}}"#,
        expected: r#"{"error":"invalid patch format of primitive list"}"#,
    },
    Case {
        name: "$setElementOrder needs a field name",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a"]}}"#,
        patch: r#"{"metadata":{"$setElementOrder":["a"]}}"#,
        expected: r#"{"error":"invalid patch format of setElementOrder list"}"#,
    },
    Case {
        name: "$retainKeys needs a list",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a"]}}"#,
        patch: r#"{"metadata":{"$retainKeys":"x"}}"#,
        expected: r#"{"error":"invalid patch format of retainKeys"}"#,
    },
    Case {
        name: "$retainKeys clears unlisted keys",
        kind: "Pod",
        original: r#"{"metadata":{"name":"p","labels":{"a":"1"}}}"#,
        patch: r#"{"metadata":{"$retainKeys":["labels"],"labels":{"b":"2"}}}"#,
        expected: r#"{"metadata":{"labels":{"a":"1","b":"2"}}}"#,
    },
    Case {
        name: "$retainKeys must list the patched fields",
        kind: "Pod",
        original: r#"{"metadata":{"name":"p","labels":{"a":"1"}}}"#,
        patch: r#"{"metadata":{"$retainKeys":["name"],"labels":{"b":"2"}}}"#,
        expected: r#"{"error":"invalid patch format of retainKeys"}"#,
    },
    Case {
        name: "ports merge by containerPort",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":81}]}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":82,"protocol":"UDP"},{"containerPort":80,"name":"x"}]}]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":82,"protocol":"UDP"},{"containerPort":80,"name":"x"},{"containerPort":81}]}]}}"#,
    },
    Case {
        name: "nulls inside a new element are dropped",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"b","image":null,"env":[{"name":"x","value":null}]}]}}"#,
        expected: r#"{"spec":{"containers":[{"env":[{"name":"x"}],"name":"b"},{"image":"1","name":"a"}]}}"#,
    },
    Case {
        name: "$setElementOrder with a deletion",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}}"#,
        patch: r#"{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"a"}],"containers":[{"name":"b","$patch":"delete"}]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"c"},{"name":"a"}]}}"#,
    },
    Case {
        name: "$setElementOrder must contain the patched elements",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"}]}}"#,
        patch: r#"{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"name":"z"}]}}"#,
        expected: r#"{"error":"The order in patch list:\n[map[name:z]]\n doesn't match $setElementOrder list:\n[map[name:a]]\n"}"#,
    },
    Case {
        name: "deployment strategy with $retainKeys",
        kind: "Deployment",
        original: r#"{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}"#,
        patch: r#"{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}"#,
        expected: r#"{"spec":{"strategy":{"type":"Recreate"}}}"#,
    },
    Case {
        name: "deployment pod template containers merge by name",
        kind: "Deployment",
        original: r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"1"}]}}}}"#,
        patch: r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"2"}]}}}}"#,
        expected: r#"{"spec":{"template":{"spec":{"containers":[{"image":"2","name":"a"}]}}}}"#,
    },
    Case {
        name: "ownerReferences merge by uid",
        kind: "Pod",
        original: r#"{"metadata":{"ownerReferences":[{"uid":"1","name":"a"},{"uid":"2","name":"b"}]}}"#,
        patch: r#"{"metadata":{"ownerReferences":[{"uid":"2","name":"c"}]}}"#,
        expected: r#"{"metadata":{"ownerReferences":[{"name":"a","uid":"1"},{"name":"c","uid":"2"}]}}"#,
    },
    Case {
        name: "empty lists stay empty",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":[]}}"#,
        patch: r#"{"metadata":{"finalizers":[]}}"#,
        expected: r#"{"metadata":{"finalizers":[]}}"#,
    },
    Case {
        name: "$setElementOrder of an empty list",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":[]}}"#,
        patch: r#"{"metadata":{"$setElementOrder/finalizers":[]}}"#,
        expected: r#"{"error":"no elements in any of the given slices"}"#,
    },
    Case {
        name: "a null patch changes nothing",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1"}]}}"#,
        patch: r#"null"#,
        expected: r#"{"spec":{"containers":[{"image":"1","name":"a"}]}}"#,
    },
    Case {
        name: "nodeSelector entries merge",
        kind: "Pod",
        original: r#"{"spec":{"nodeSelector":{"a":"1"}}}"#,
        patch: r#"{"spec":{"nodeSelector":{"b":"2"}}}"#,
        expected: r#"{"spec":{"nodeSelector":{"a":"1","b":"2"}}}"#,
    },
    Case {
        name: "status conditions merge by type",
        kind: "Pod",
        original: r#"{"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Init","status":"True"}]}}"#,
        patch: r#"{"status":{"conditions":[{"type":"Ready","status":"True"}]}}"#,
        expected: r#"{"status":{"conditions":[{"status":"True","type":"Ready"},{"status":"True","type":"Init"}]}}"#,
    },
    Case {
        name: "$setElementOrder after deleting the only element",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"1"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","$patch":"delete"},{"name":"b"}],"$setElementOrder/containers":[{"name":"b"}]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"b"}]}}"#,
    },
    Case {
        name: "set merge with a parallel deletion list",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["x","y"]}}"#,
        patch: r#"{"metadata":{"finalizers":["y","z"],"$deleteFromPrimitiveList/finalizers":["x"]}}"#,
        expected: r#"{"metadata":{"finalizers":["y","z"]}}"#,
    },
    Case {
        name: "set merge keeps the patch order",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["x","y"]}}"#,
        patch: r#"{"metadata":{"finalizers":["z","y","x"]}}"#,
        expected: r#"{"metadata":{"finalizers":["z","y","x"]}}"#,
    },
    Case {
        name: "$setElementOrder with deletions of primitives",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a","b","c","d"]}}"#,
        patch: r#"{"metadata":{"$setElementOrder/finalizers":["d","b"],"$deleteFromPrimitiveList/finalizers":["a","c"]}}"#,
        expected: r#"{"metadata":{"finalizers":["d","b"]}}"#,
    },
    Case {
        name: "$setElementOrder with additions and deletions of primitives",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a","b","c","d"]}}"#,
        patch: r#"{"metadata":{"$setElementOrder/finalizers":["e","d","b"],"finalizers":["e"],"$deleteFromPrimitiveList/finalizers":["a"]}}"#,
        expected: r#"{"metadata":{"finalizers":["e","c","d","b"]}}"#,
    },
    Case {
        name: "nested $setElementOrder inside a container",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","env":[{"name":"1"},{"name":"2"},{"name":"3"}]}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","$setElementOrder/env":[{"name":"3"},{"name":"1"},{"name":"2"}]}],"$setElementOrder/containers":[{"name":"a"}]}}"#,
        expected: r#"{"spec":{"containers":[{"env":[{"name":"3"},{"name":"1"},{"name":"2"}],"name":"a"}]}}"#,
    },
    Case {
        name: "ports are appended after ordering",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80}]}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":81},{"containerPort":79}]}]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":81},{"containerPort":79},{"containerPort":80}]}]}}"#,
    },
    Case {
        name: "mixed merge of containers keeps relative orders",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"d","image":"x"},{"name":"e"},{"name":"b","image":"y"}]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"a"},{"name":"c"},{"image":"x","name":"d"},{"name":"e"},{"image":"y","name":"b"}]}}"#,
    },
    Case {
        name: "delete and re-add an element in one patch",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","$patch":"delete"},{"name":"a","image":"z"}]}}"#,
        expected: r#"{"spec":{"containers":[{"image":"z","name":"a"},{"name":"b"}]}}"#,
    },
    Case {
        name: "an empty list replaces a merged list",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}"#,
        patch: r#"{"spec":{"containers":[]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}"#,
    },
    Case {
        name: "elements merge into an empty list",
        kind: "Pod",
        original: r#"{"spec":{"containers":[]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"q"}]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"q"}]}}"#,
    },
    Case {
        name: "mixed element types are refused",
        kind: "Pod",
        original: r#"{"metadata":{"finalizers":["a",1]}}"#,
        patch: r#"{"metadata":{"finalizers":["b"]}}"#,
        expected: r#"{"error":"list element types are not identical: [[a 1] [b]]"}"#,
    },
    Case {
        name: "null removes a container field",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"i","command":["x"]}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","command":null,"image":"j"}]}}"#,
        expected: r#"{"spec":{"containers":[{"image":"j","name":"a"}]}}"#,
    },
    Case {
        name: "$retainKeys inside a container",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a","image":"i"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","$retainKeys":["name"]}]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"a"}]}}"#,
    },
    Case {
        name: "hostAliases merge by ip",
        kind: "Pod",
        original: r#"{"spec":{"hostAliases":[{"ip":"1","hostnames":["a"]}]}}"#,
        patch: r#"{"spec":{"hostAliases":[{"ip":"1","hostnames":["b"]}]}}"#,
        expected: r#"{"spec":{"hostAliases":[{"hostnames":["b"],"ip":"1"}]}}"#,
    },
    Case {
        name: "imagePullSecrets merge and schedulingGates replace",
        kind: "Pod",
        original: r#"{"spec":{"imagePullSecrets":[{"name":"a"}],"schedulingGates":[{"name":"g"}]}}"#,
        patch: r#"{"spec":{"imagePullSecrets":[{"name":"b"}],"schedulingGates":[{"$patch":"replace"}]}}"#,
        expected: r#"{"spec":{"imagePullSecrets":[{"name":"b"},{"name":"a"}],"schedulingGates":[]}}"#,
    },
    Case {
        name: "$patch replace inside a map",
        kind: "Pod",
        original: r#"{"metadata":{"labels":{"a":"1"}}}"#,
        patch: r#"{"metadata":{"labels":{"$patch":"replace","b":"2"}}}"#,
        expected: r#"{"metadata":{"labels":{"b":"2"}}}"#,
    },
    Case {
        name: "$patch delete inside a map",
        kind: "Pod",
        original: r#"{"metadata":{"labels":{"a":"1"}}}"#,
        patch: r#"{"metadata":{"labels":{"$patch":"delete"}}}"#,
        expected: r#"{"metadata":{"labels":{}}}"#,
    },
    Case {
        name: "a new map that is only a directive is dropped",
        kind: "Pod",
        original: r#"{"metadata":{"labels":{"a":"1"}}}"#,
        patch: r#"{"metadata":{"newmap":{"$patch":"delete"}}}"#,
        expected: r#"{"metadata":{"labels":{"a":"1"}}}"#,
    },
    Case {
        name: "a scalar replaces a map",
        kind: "Pod",
        original: r#"{"metadata":{"labels":{"a":"1"}}}"#,
        patch: r#"{"metadata":{"labels":"str"}}"#,
        expected: r#"{"metadata":{"labels":"str"}}"#,
    },
    Case {
        name: "$patch delete of a missing port",
        kind: "Pod",
        original: r#"{"spec":{"containers":[{"name":"a"}]}}"#,
        patch: r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":1,"$patch":"delete"}]}]}}"#,
        expected: r#"{"spec":{"containers":[{"name":"a","ports":[]}]}}"#,
    },
    Case {
        name: "volume source switch with $retainKeys and $setElementOrder",
        kind: "Deployment",
        original: r#"{"spec":{"template":{"spec":{"volumes":[{"name":"v","configMap":{"name":"c"}}]}}}}"#,
        patch: r#"{"spec":{"template":{"spec":{"volumes":[{"name":"v","secret":{"secretName":"s"},"$retainKeys":["name","secret"]}],"$setElementOrder/volumes":[{"name":"v"}]}}}}"#,
        expected: r#"{"spec":{"template":{"spec":{"volumes":[{"name":"v","secret":{"secretName":"s"}}]}}}}"#,
    },
];

const JSON: &[Case] = &[
    Case {
        name: "add an object member",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/a/c","value":2}]"#,
        expected: r#"{"a":{"b":1,"c":2},"l":[1,2,3]}"#,
    },
    Case {
        name: "append to a list with -",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/l/-","value":4}]"#,
        expected: r#"{"a":{"b":1},"l":[1,2,3,4]}"#,
    },
    Case {
        name: "insert into a list",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/l/1","value":9}]"#,
        expected: r#"{"a":{"b":1},"l":[1,9,2,3]}"#,
    },
    Case {
        name: "insert at the end of a list",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/l/3","value":9}]"#,
        expected: r#"{"a":{"b":1},"l":[1,2,3,9]}"#,
    },
    Case {
        name: "insert past the end of a list",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/l/4","value":9}]"#,
        expected: r#"{"error":"error in add for path: '/l/4': Unable to access invalid index: 4: invalid index referenced"}"#,
    },
    Case {
        name: "insert at a negative index",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/l/-1","value":9}]"#,
        expected: r#"{"a":{"b":1},"l":[1,2,3,9]}"#,
    },
    Case {
        name: "insert at a non-numeric index",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/l/x","value":9}]"#,
        expected: r#"{"error":"error in add for path: '/l/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax"}"#,
    },
    Case {
        name: "add under a missing parent",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/x/y","value":9}]"#,
        expected: r#"{"error":"add operation does not apply: doc is missing path: \"/x/y\": missing value"}"#,
    },
    Case {
        name: "add at the document root",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"","value":9}]"#,
        expected: r#"{"error":"add operation does not apply: doc is missing path: \"\": missing value"}"#,
    },
    Case {
        name: "add without a value adds null",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/a/b"}]"#,
        expected: r#"{"a":{"b":null},"l":[1,2,3]}"#,
    },
    Case {
        name: "remove a member",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"remove","path":"/a/b"}]"#,
        expected: r#"{"a":{},"l":[1,2,3]}"#,
    },
    Case {
        name: "remove a missing member",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"remove","path":"/a/zz"}]"#,
        expected: r#"{"error":"error in remove for path: '/a/zz': Unable to remove nonexistent key: zz: missing value"}"#,
    },
    Case {
        name: "remove at a negative index",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"remove","path":"/l/-1"}]"#,
        expected: r#"{"a":{"b":1},"l":[1,2]}"#,
    },
    Case {
        name: "remove past the end",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"remove","path":"/l/5"}]"#,
        expected: r#"{"error":"error in remove for path: '/l/5': Unable to access invalid index: 5: invalid index referenced"}"#,
    },
    Case {
        name: "remove at a non-numeric index",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"remove","path":"/l/a"}]"#,
        expected: r#"{"error":"error in remove for path: '/l/a': strconv.Atoi: parsing \"a\": invalid syntax"}"#,
    },
    Case {
        name: "replace a member",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"replace","path":"/a/b","value":5}]"#,
        expected: r#"{"a":{"b":5},"l":[1,2,3]}"#,
    },
    Case {
        name: "replace of a missing member adds it",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"replace","path":"/a/new","value":5}]"#,
        expected: r#"{"a":{"b":1,"new":5},"l":[1,2,3]}"#,
    },
    Case {
        name: "replace past the end of a list",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"replace","path":"/l/7","value":5}]"#,
        expected: r#"{"error":"replace operation does not apply: doc is missing key: /l/7: missing value"}"#,
    },
    Case {
        name: "replace the whole document",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"replace","path":"","value":{"z":1}}]"#,
        expected: r#"{"z":1}"#,
    },
    Case {
        name: "replace the document with a scalar is ignored",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"replace","path":"","value":3}]"#,
        expected: r#"{"a":{"b":1},"l":[1,2,3]}"#,
    },
    Case {
        name: "move a member",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"move","from":"/a/b","path":"/c"}]"#,
        expected: r#"{"a":{},"c":1,"l":[1,2,3]}"#,
    },
    Case {
        name: "move from a missing member",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"move","from":"/a/x","path":"/c"}]"#,
        expected: r#"{"error":"error in move for path: 'x': Unable to remove nonexistent key: x: missing value"}"#,
    },
    Case {
        name: "move a list element to the end",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"move","from":"/l/0","path":"/l/-"}]"#,
        expected: r#"{"a":{"b":1},"l":[2,3,1]}"#,
    },
    Case {
        name: "copy a member",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"copy","from":"/a","path":"/b"}]"#,
        expected: r#"{"a":{"b":1},"b":{"b":1},"l":[1,2,3]}"#,
    },
    Case {
        name: "copy a missing member copies null",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"copy","from":"/a/x","path":"/b"}]"#,
        expected: r#"{"a":{"b":1},"b":null,"l":[1,2,3]}"#,
    },
    Case {
        name: "test a matching value",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"test","path":"/a/b","value":1}]"#,
        expected: r#"{"a":{"b":1},"l":[1,2,3]}"#,
    },
    Case {
        name: "test a different value",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"test","path":"/a/b","value":2}]"#,
        expected: r#"{"error":"testing value /a/b failed: test failed"}"#,
    },
    Case {
        name: "test a missing member against null",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"test","path":"/a/x","value":null}]"#,
        expected: r#"{"a":{"b":1},"l":[1,2,3]}"#,
    },
    Case {
        name: "test a missing member against a value",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"test","path":"/a/x","value":1}]"#,
        expected: r#"{"error":"testing value /a/x failed: test failed"}"#,
    },
    Case {
        name: "test without a value",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"test","path":"/a/b"}]"#,
        expected: r#"{"error":"testing value /a/b failed: test failed"}"#,
    },
    Case {
        name: "test past the end of a list",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"test","path":"/l/9","value":1}]"#,
        expected: r#"{"error":"error in test for path: '/l/9': Unable to access invalid index: 9: invalid index referenced"}"#,
    },
    Case {
        name: "test under a missing parent",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"test","path":"/x/y","value":1}]"#,
        expected: r#"{"error":"test operation does not apply: is missing path: /x/y: missing value"}"#,
    },
    Case {
        name: "unknown operation",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"bogus","path":"/a"}]"#,
        expected: r#"{"error":"Unexpected kind: bogus"}"#,
    },
    Case {
        name: "operation without op",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"path":"/a"}]"#,
        expected: r#"{"error":"Unexpected kind: unknown"}"#,
    },
    Case {
        name: "add without a path",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","value":1}]"#,
        expected: r#"{"error":"add operation failed to decode path: missing value"}"#,
    },
    Case {
        name: "replace without a path",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"replace","value":1}]"#,
        expected: r#"{"error":"replace operation failed to decode path: operation missing path field: missing value"}"#,
    },
    Case {
        name: "move without from",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"move","path":"/x"}]"#,
        expected: r#"{"error":"move operation failed to decode from: operation, missing from field: missing value"}"#,
    },
    Case {
        name: "a patch that is not a list",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"{"op":"add"}"#,
        expected: r#"{"error":"json: cannot unmarshal object into Go value of type jsonpatch.Patch"}"#,
    },
    Case {
        name: "an operation that is not an object",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"["x"]"#,
        expected: r#"{"error":"json: cannot unmarshal string into Go value of type jsonpatch.Operation"}"#,
    },
    Case {
        name: "a null operation",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[null]"#,
        expected: r#"{"error":"Unexpected kind: unknown"}"#,
    },
    Case {
        name: "escaped pointer tokens",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/a~1b","value":1},{"op":"add","path":"/a/c~0d","value":2}]"#,
        expected: r#"{"a":{"b":1,"c~d":2},"a/b":1,"l":[1,2,3]}"#,
    },
    Case {
        name: "a path without a leading slash",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"a/q","value":1}]"#,
        expected: r#"{"a":{"b":1},"l":[1,2,3],"q":1}"#,
    },
    Case {
        name: "add under a scalar",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/a/b/c","value":1}]"#,
        expected: r#"{"error":"add operation does not apply: doc is missing path: \"/a/b/c\": missing value"}"#,
    },
    Case {
        name: "replace inside a list element",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[{"x":1}]}"#,
        patch: r#"[{"op":"replace","path":"/l/0/x","value":2}]"#,
        expected: r#"{"a":{"b":1},"l":[{"x":2}]}"#,
    },
    Case {
        name: "leading zeros in an index",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/l/01","value":9}]"#,
        expected: r#"{"a":{"b":1},"l":[1,9,2,3]}"#,
    },
    Case {
        name: "a plus sign in an index",
        kind: "json",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"[{"op":"add","path":"/l/+1","value":9}]"#,
        expected: r#"{"a":{"b":1},"l":[1,9,2,3]}"#,
    },
];

const MERGE: &[Case] = &[
    Case {
        name: "merge patch deletes and prunes nulls",
        kind: "merge",
        original: r#"{"a":{"b":1},"l":[1,2,3]}"#,
        patch: r#"{"a":{"b":null,"c":{"d":null,"e":1}},"l":[null,{"x":null}]}"#,
        expected: r#"{"a":{"c":{"e":1}},"l":[null,{}]}"#,
    },
    Case {
        name: "merge patch replaces a scalar with an object",
        kind: "merge",
        original: r#"{"a":1}"#,
        patch: r#"{"a":{"b":null,"c":1}}"#,
        expected: r#"{"a":{"c":1}}"#,
    },
    Case {
        name: "merge patch replaces an object with a list",
        kind: "merge",
        original: r#"{"a":{"x":1}}"#,
        patch: r#"{"a":[{"b":null}]}"#,
        expected: r#"{"a":[{"b":null}]}"#,
    },
    Case {
        name: "merge patch of null is invalid",
        kind: "merge",
        original: r#"{"a":{"x":1}}"#,
        patch: r#"null"#,
        expected: r#"{"error":"Invalid JSON Patch"}"#,
    },
    Case {
        name: "merge patch of a scalar is invalid",
        kind: "merge",
        original: r#"{"a":{"x":1}}"#,
        patch: r#"5"#,
        expected: r#"{"error":"Invalid JSON Patch"}"#,
    },
    Case {
        name: "merge patch deletes members",
        kind: "merge",
        original: r#"{"a":{"x":1}}"#,
        patch: r#"{"a":null,"b":null}"#,
        expected: r#"{}"#,
    },
    Case {
        name: "merge patch into a null member",
        kind: "merge",
        original: r#"{"a":null}"#,
        patch: r#"{"a":{"b":null,"c":2}}"#,
        expected: r#"{"a":{"c":2}}"#,
    },
];
