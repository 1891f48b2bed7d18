//! Requests the API refuses, and reading the audit, against the embedded control plane with the
//! Kruise CRDs and the SQLite store (no nodes or manager: nothing here needs a rollout to
//! progress): every bad input is a 4xx problem+json naming the field, recorded as `rejected`,
//! with the CloneSet untouched; 401 and 403 are recorded too; audit queries filter and paginate;
//! health, readiness, metrics, the OpenAPI document and Swagger UI are served.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod common;

use std::collections::{BTreeMap, HashSet};

use common::{ADMIN, AUDITOR, CI, Env, StoreChoice, TEAM_AUDITOR};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_audit_and_service_endpoints() {
    let env = Env::start(StoreChoice::Sqlite, false).await;
    env.create_cloneset("web", 2, "nginx:1.25").await;
    bad_rollout_requests(&env).await;
    unauthenticated_and_forbidden(&env).await;
    audit_queries(&env).await;
    service_endpoints(&env).await;
    env.shutdown().await;
}

fn valid() -> Value {
    json!({"workload": {"kind": "CloneSet", "name": "web"}, "images": {"nginx": "nginx:1.26"}})
}

fn with(path: &[&str], value: Value) -> Value {
    let mut body = valid();
    let mut slot = &mut body;
    for key in path {
        if slot.get(*key).is_none() {
            slot[*key] = json!({});
        }
        slot = &mut slot[*key];
    }
    *slot = value;
    body
}

async fn bad_rollout_requests(env: &Env) {
    let before = env.sets.get("web").await.unwrap();
    let path = "/v1/namespaces/default/rollouts";
    let long_key = "k".repeat(300);
    // (case, body, extra headers, status, fields)
    type Case<'a> = (&'a str, Option<String>, Vec<(&'a str, &'a str)>, u16, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "missing-workload",
            Some(json!({"images": {"nginx": "nginx:2"}}).to_string()),
            vec![],
            422,
            vec!["workload"],
        ),
        (
            "missing-name",
            Some(json!({"workload": {"kind": "CloneSet"}, "images": {"nginx": "nginx:2"}}).to_string()),
            vec![],
            422,
            vec!["workload.name"],
        ),
        (
            "unknown-workload",
            Some(with(&["workload", "name"], json!("nope")).to_string()),
            vec![],
            422,
            vec!["workload.name"],
        ),
        (
            "unknown-container",
            Some(with(&["images"], json!({"sidecar": "busybox:1"})).to_string()),
            vec![],
            422,
            vec!["images.sidecar"],
        ),
        (
            "invalid-image",
            Some(with(&["images"], json!({"nginx": "NGINX:::bad"})).to_string()),
            vec![],
            422,
            vec!["images.nginx"],
        ),
        (
            "partition-out-of-range",
            Some(with(&["strategy", "partition"], json!(5)).to_string()),
            vec![],
            422,
            vec!["strategy.partition"],
        ),
        (
            "partition-percent",
            Some(with(&["strategy", "partition"], json!("150%")).to_string()),
            vec![],
            422,
            vec!["strategy.partition"],
        ),
        (
            "partition-type",
            Some(with(&["strategy", "partition"], json!(true)).to_string()),
            vec![],
            422,
            vec!["strategy.partition"],
        ),
        (
            "negative-surge",
            Some(with(&["strategy", "maxSurge"], json!(-1)).to_string()),
            vec![],
            422,
            vec!["strategy.maxSurge"],
        ),
        (
            "bad-policy",
            Some(with(&["strategy", "podUpdatePolicy"], json!("Sometimes")).to_string()),
            vec![],
            422,
            vec!["strategy.podUpdatePolicy"],
        ),
        (
            "unknown-field",
            Some(with(&["strategy", "partiton"], json!(1)).to_string()),
            vec![],
            422,
            vec!["strategy.partiton"],
        ),
        (
            "statefulset-not-found",
            Some(with(&["workload", "kind"], json!("StatefulSet")).to_string()),
            vec![],
            422,
            vec!["workload.name"],
        ),
        (
            "deployment",
            Some(with(&["workload", "kind"], json!("Deployment")).to_string()),
            vec![],
            422,
            vec!["workload.kind"],
        ),
        (
            "bad-quantity",
            Some(with(&["resources"], json!({"nginx": {"requests": {"cpu": "lots"}}})).to_string()),
            vec![],
            422,
            vec!["resources.nginx.requests.cpu"],
        ),
        (
            "nothing-to-change",
            Some(json!({"workload": {"kind": "CloneSet", "name": "web"}}).to_string()),
            vec![],
            422,
            vec!["images"],
        ),
        (
            "bad-key",
            Some(valid().to_string()),
            vec![("Idempotency-Key", long_key.as_str())],
            422,
            vec!["Idempotency-Key"],
        ),
        ("empty-body", None, vec![], 422, vec!["body"]),
        ("not-json", Some("{nope".into()), vec![], 400, vec![]),
    ];
    for (case, body, headers, status, fields) in &cases {
        let mut request =
            env.http.post(format!("{}{path}", env.base)).bearer_auth(ADMIN).header("X-Request-Id", *case);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.clone());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), *status, "{case}");
        assert_eq!(response.headers()["content-type"], "application/problem+json", "{case}");
        assert_eq!(response.headers()["x-request-id"], *case);
        let problem: Value = response.json().await.unwrap();
        assert_eq!(problem["status"], *status, "{case}: {problem}");
        assert!(problem["type"].as_str().unwrap().starts_with("urn:kruise-rs:problem:"), "{case}: {problem}");
        assert!(problem["title"].is_string() && problem["detail"].is_string(), "{case}: {problem}");
        assert_eq!(problem["correlationId"], *case);
        assert_eq!(problem["instance"], path);
        let named: Vec<&str> = problem["errors"]
            .as_array()
            .map(|e| e.iter().map(|e| e["field"].as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(&named, fields, "{case}: {problem}");
    }

    let after = env.sets.get("web").await.unwrap();
    assert_eq!(
        after.metadata.resource_version, before.metadata.resource_version,
        "a refused request changed the CloneSet"
    );
    let rollouts = env.get(path).await;
    assert!(rollouts.body["items"].as_array().unwrap().is_empty(), "{}", rollouts.body);

    let records: BTreeMap<String, Value> = env
        .audit("action=rollout.create&limit=500")
        .await
        .into_iter()
        .map(|r| (r["correlationId"].as_str().unwrap().to_string(), r))
        .collect();
    for (case, _, _, status, _) in &cases {
        let record = records.get(*case).unwrap_or_else(|| panic!("no audit record for {case}"));
        assert_eq!(record["outcome"], "rejected", "{case}: {record}");
        assert_eq!(record["httpStatus"], *status, "{case}: {record}");
        assert_eq!(record["actor"], "admin");
        assert!(record["message"].is_string(), "{case}: {record}");
    }
    assert_eq!(records["unknown-container"]["target"], "CloneSet/web");

    // Actions on a rollout that does not exist.
    let missing = env.post(&format!("{path}/no-such-id/pause"), None).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    assert_eq!(missing.content_type(), "application/problem+json");
    assert_eq!(env.get(&format!("{path}/no-such-id")).await.status, StatusCode::NOT_FOUND);
    let recorded = env.audit("action=rollout.pause&outcome=rejected").await;
    assert_eq!(recorded.len(), 1, "{recorded:#?}");
    assert_eq!(recorded[0]["httpStatus"], 404);

    // Bad listing parameters name the parameter.
    for (query, field) in [("limit=0", "limit"), ("state=Done", "state"), ("cursor=abc", "cursor")] {
        let reply = env.get(&format!("{path}?{query}")).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{query}: {}", reply.body);
        assert_eq!(reply.fields(), [field], "{query}");
    }
}

async fn unauthenticated_and_forbidden(env: &Env) {
    let path = "/v1/namespaces/default/rollouts";
    let body = valid();
    let none = env.call(Method::POST, path, None, Some(&body), &[]).await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED, "{}", none.body);
    assert_eq!(none.content_type(), "application/problem+json");
    assert!(none.headers["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    let wrong = env.call(Method::POST, path, Some("not-a-token"), Some(&body), &[]).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    let list = env.call(Method::GET, path, None, None, &[]).await;
    assert_eq!(list.status, StatusCode::UNAUTHORIZED);
    let basic = env.call(Method::GET, "/v1/audit", None, None, &[("Authorization", "Basic YTpi")]).await;
    assert_eq!(basic.status, StatusCode::UNAUTHORIZED);

    let other_namespace =
        env.call(Method::POST, "/v1/namespaces/prod/rollouts", Some(CI), Some(&body), &[]).await;
    assert_eq!(other_namespace.status, StatusCode::FORBIDDEN, "{}", other_namespace.body);
    assert_eq!(other_namespace.body["type"], "urn:kruise-rs:problem:forbidden");
    let audit = env.call(Method::GET, "/v1/audit", Some(CI), None, &[]).await;
    assert_eq!(audit.status, StatusCode::FORBIDDEN, "ci has no audit-read: {}", audit.body);
    let auditor_rollout = env.call(Method::POST, path, Some(AUDITOR), Some(&body), &[]).await;
    assert_eq!(auditor_rollout.status, StatusCode::FORBIDDEN);
    let team_other =
        env.call(Method::GET, "/v1/audit?namespace=default", Some(TEAM_AUDITOR), None, &[]).await;
    assert_eq!(team_other.status, StatusCode::FORBIDDEN);
    let team_own = env.call(Method::GET, "/v1/audit", Some(TEAM_AUDITOR), None, &[]).await;
    assert_eq!(team_own.status, StatusCode::OK, "{}", team_own.body);
    assert!(
        team_own.body["items"].as_array().unwrap().iter().all(|r| r["namespace"] == "team"),
        "a namespace-scoped auditor sees only its namespace: {}",
        team_own.body
    );

    let anonymous = env.audit("actor=anonymous&outcome=unauthenticated").await;
    assert_eq!(anonymous.len(), 4, "{anonymous:#?}");
    assert!(anonymous.iter().all(|r| r["httpStatus"] == 401));
    let denied = env.audit("outcome=denied").await;
    let denied: Vec<(String, String)> = denied
        .iter()
        .map(|r| (r["actor"].as_str().unwrap().to_string(), r["action"].as_str().unwrap().to_string()))
        .collect();
    for expected in [
        ("ci", "rollout.create"),
        ("ci", "audit.list"),
        ("auditor", "rollout.create"),
        ("team-auditor", "audit.list"),
    ] {
        assert!(denied.contains(&(expected.0.into(), expected.1.into())), "{expected:?} not in {denied:?}");
    }
    let everything = env.audit("limit=500").await;
    let text = serde_json::to_string(&everything).unwrap();
    for token in [ADMIN, CI, AUDITOR, TEAM_AUDITOR, "not-a-token", "YTpi"] {
        assert!(!text.contains(token), "a token leaked into the audit");
    }
}

async fn audit_queries(env: &Env) {
    let all = env.audit("limit=500").await;
    assert!(all.len() >= 25, "{}", all.len());
    let times: Vec<&str> = all.iter().map(|r| r["time"].as_str().unwrap()).collect();
    let parsed: Vec<chrono::DateTime<chrono::Utc>> = times.iter().map(|t| t.parse().unwrap()).collect();
    assert!(parsed.windows(2).all(|w| w[0] >= w[1]), "newest first");

    // Walking the cursor gives every record once, in the same order.
    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let query = match &cursor {
            Some(cursor) => format!("limit=4&cursor={cursor}"),
            None => "limit=4".into(),
        };
        let reply = env.get(&format!("/v1/audit?{query}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let items = reply.body["items"].as_array().unwrap();
        assert!(items.len() <= 4);
        walked.extend(items.iter().map(|r| r["id"].as_str().unwrap().to_string()));
        match reply.body["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let ids: Vec<String> = all.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(walked, ids);
    assert_eq!(walked.iter().collect::<HashSet<_>>().len(), walked.len(), "no duplicates");

    // Filters.
    for (query, check) in [
        ("actor=ci", Box::new(|r: &Value| r["actor"] == "ci") as Box<dyn Fn(&Value) -> bool>),
        ("action=rollout", Box::new(|r: &Value| r["action"].as_str().unwrap().starts_with("rollout."))),
        ("action=audit.list", Box::new(|r: &Value| r["action"] == "audit.list")),
        ("target=CloneSet/web", Box::new(|r: &Value| r["target"] == "CloneSet/web")),
        ("outcome=rejected", Box::new(|r: &Value| r["outcome"] == "rejected")),
        ("namespace=prod", Box::new(|r: &Value| r["namespace"] == "prod")),
    ] {
        let items = env.audit(&format!("{query}&limit=500")).await;
        let expected = all.iter().filter(|r| check(r)).count();
        assert!(expected > 0, "{query}: the fixture has no matching record");
        assert_eq!(items.len(), expected, "{query}");
        assert!(items.iter().all(&check), "{query}");
    }
    let middle = &all[all.len() / 2];
    let since = middle["time"].as_str().unwrap();
    let encoded = since.replace('+', "%2B").replace(':', "%3A");
    let newer = env.audit(&format!("since={encoded}&limit=500")).await;
    let expected =
        parsed.iter().filter(|t| **t >= since.parse::<chrono::DateTime<chrono::Utc>>().unwrap()).count();
    assert_eq!(newer.len(), expected);
    let older = env.audit(&format!("until={encoded}&limit=500")).await;
    assert_eq!(older.len(), all.len() - expected);

    // Bad parameters name the parameter.
    let rollouts_cursor = {
        // A cursor of another listing is refused.
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("v1:r:5")
    };
    for (query, field) in [
        ("limit=0".to_string(), "limit"),
        ("limit=ten".to_string(), "limit"),
        ("since=yesterday".to_string(), "since"),
        ("until=2024-13-01".to_string(), "until"),
        ("outcome=maybe".to_string(), "outcome"),
        (format!("cursor={rollouts_cursor}"), "cursor"),
    ] {
        let reply = env.get(&format!("/v1/audit?{query}")).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{query}: {}", reply.body);
        assert_eq!(reply.fields(), [field], "{query}");
    }
}

async fn service_endpoints(env: &Env) {
    let health = env.call(Method::GET, "/healthz", None, None, &[]).await;
    assert_eq!(health.status, StatusCode::OK);
    let ready = env.call(Method::GET, "/readyz", None, None, &[]).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    assert_eq!(ready.body["checks"], json!({"kubernetes": "ok", "store": "ok"}));
    let metrics = env.call(Method::GET, "/metrics", None, None, &[]).await;
    assert_eq!(metrics.status, StatusCode::OK);
    let text = metrics.body.as_str().unwrap();
    assert!(text.contains("kruise_api_requests_total{method=\"POST\",route=\"/v1/namespaces/{namespace}/rollouts\",status=\"422\"}"), "{text}");
    assert!(text.contains("kruise_api_audit_records_total{outcome=\"rejected\"}"), "{text}");

    let doc = env.call(Method::GET, "/openapi.json", None, None, &[]).await;
    assert_eq!(doc.status, StatusCode::OK);
    assert!(doc.body["paths"]["/v1/namespaces/{namespace}/rollouts"]["post"].is_object());
    let ui = env.http.get(format!("{}/docs/", env.base)).send().await.unwrap();
    assert_eq!(ui.status(), StatusCode::OK);
    assert!(ui.text().await.unwrap().contains("swagger-ui"));
    let bundle = env.http.get(format!("{}/docs/swagger-ui-bundle.js", env.base)).send().await.unwrap();
    assert_eq!(bundle.status(), StatusCode::OK, "Swagger UI assets are served from the binary");
    assert!(bundle.bytes().await.unwrap().len() > 100_000);

    let unknown = env.call(Method::GET, "/v2/nothing", Some(ADMIN), None, &[]).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.content_type(), "application/problem+json");
    let wrong_method = env.call(Method::DELETE, "/v1/audit", Some(ADMIN), None, &[]).await;
    assert_eq!(wrong_method.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(wrong_method.content_type(), "application/problem+json");
}
