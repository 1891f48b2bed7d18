//! The HTTP surface: routes every request to discovery, OpenAPI, health or a resource verb,
//! decodes bodies (JSON or YAML), negotiates the response form (object, Table,
//! PartialObjectMetadata) and writes `Warning` headers.

use std::{collections::HashMap, sync::Arc};

use axum::{
    body::{Body, Bytes},
    extract::State,
    http::{HeaderMap, Method, StatusCode, Uri},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

use super::{
    api::{Api, Deleted, PatchType, Written},
    counters::RequestCounts,
    discovery,
    errors::ApiError,
    objects, openapi, options,
    request::{self, ResourceRequest, Target, Verb},
    subresources, table,
    watch::{self, EventFormat},
};
use crate::registry::ResourceDef;

/// Shared state of the HTTP handlers.
#[derive(Clone)]
pub struct HttpState {
    /// The API operations.
    pub api: Api,
    /// `host:port` clients reach the server at (for `/api` discovery).
    pub address: String,
    /// Whether the server is ready (built-in controllers started).
    pub ready: Arc<std::sync::atomic::AtomicBool>,
    /// Counts of the resource requests answered.
    pub requests: RequestCounts,
}

/// Every request lands here.
pub async fn handle(
    State(state): State<HttpState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let query: HashMap<String, String> = uri
        .query()
        .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let accept = header(&headers, "accept");
    match path.as_str() {
        "/healthz" | "/livez" | "/readyz" => return health(&state, &path, &query),
        "/version" => return json_response(StatusCode::OK, &version(), &[]),
        "/openapi/v2" => return json_response(StatusCode::OK, &openapi::v2(&state.api.registry), &[]),
        "/openapi/v3" | "/openapi/v3/" => {
            return json_response(StatusCode::OK, &openapi::v3_index(&state.api.registry), &[]);
        }
        _ => {}
    }
    if let Some(rest) = path.strip_prefix("/openapi/v3/") {
        return match openapi::v3_group_version(&state.api.registry, rest.trim_end_matches('/')) {
            Some(document) => json_response(StatusCode::OK, &document, &[]),
            None => ApiError::no_such_path().into_response(),
        };
    }
    let watch = query.get("watch").is_some_and(|w| w == "true" || w == "1");
    let target = match request::parse(&method, &path, watch) {
        Ok(target) => target,
        Err(_) => return ApiError::no_such_path().into_response(),
    };
    let registry = &state.api.registry;
    let result = match target {
        Target::CoreVersions if discovery::wants_aggregated(&accept) => {
            return aggregated_response(discovery::aggregated(registry, true));
        }
        Target::Groups if discovery::wants_aggregated(&accept) => {
            return aggregated_response(discovery::aggregated(registry, false));
        }
        Target::CoreVersions => Ok(discovery::core_versions(&state.address)),
        Target::Groups => Ok(discovery::group_list(registry)),
        Target::Group(group) => discovery::group(registry, &group).ok_or_else(ApiError::no_such_path),
        Target::GroupVersion { group, version } => {
            discovery::resource_list(registry, &group, &version).ok_or_else(ApiError::no_such_path)
        }
        Target::Resource(request) => {
            let response = resource(&state, request.clone(), &query, &headers, &accept, body)
                .await
                .unwrap_or_else(IntoResponse::into_response);
            state.requests.record(&header(&headers, "user-agent"), &request, response.status().as_u16());
            return response;
        }
    };
    match result {
        Ok(document) => json_response(StatusCode::OK, &document, &[]),
        Err(error) => error.into_response(),
    }
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
}

fn health(state: &HttpState, path: &str, query: &HashMap<String, String>) -> Response {
    let ready = state.ready.load(std::sync::atomic::Ordering::SeqCst);
    let ok = path != "/readyz" || ready;
    let body = if query.contains_key("verbose") {
        let check =
            if ok { "[+]ping ok\n[+]etcd ok\n" } else { "[+]ping ok\n[-]informer-sync failed: not ready\n" };
        format!("{check}{} check {}\n", path.trim_start_matches('/'), if ok { "passed" } else { "failed" })
    } else if ok {
        "ok".to_string()
    } else {
        "not ready".to_string()
    };
    let status = if ok { StatusCode::OK } else { StatusCode::INTERNAL_SERVER_ERROR };
    (status, [(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

/// What `/version` reports: a Kubernetes 1.34 server.
fn version() -> Value {
    json!({
        "major": "1",
        "minor": "34",
        "gitVersion": "v1.34.0-kruise-rs",
        "gitCommit": "kruise-rs",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "rust",
        "compiler": "rustc",
        "platform": "linux/amd64",
    })
}

fn aggregated_response(document: Value) -> Response {
    let body = serde_json::to_vec(&document).unwrap_or_default();
    (StatusCode::OK, [(http::header::CONTENT_TYPE, discovery::AGGREGATED_CONTENT_TYPE)], body).into_response()
}

/// A JSON response with `Warning` headers.
pub fn json_response(status: StatusCode, body: &Value, warnings: &[String]) -> Response {
    let mut response = (
        status,
        [(http::header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(body).unwrap_or_default(),
    )
        .into_response();
    for warning in warnings {
        let escaped = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = http::HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            response.headers_mut().append(http::header::WARNING, value);
        }
    }
    response
}

/// Decodes a request body as JSON or YAML, as the Content-Type says.
pub fn decode_body(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    let content_type = header(headers, "content-type");
    let is_yaml = content_type.contains("yaml");
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the body of the request was empty"));
    }
    if is_yaml {
        let yaml: serde_yaml::Value = serde_yaml::from_slice(body)
            .map_err(|error| ApiError::bad_request(format!("error decoding YAML: {error}")))?;
        serde_json::to_value(yaml)
            .map_err(|error| ApiError::bad_request(format!("error decoding YAML: {error}")))
    } else {
        serde_json::from_slice(body).map_err(|error| {
            ApiError::bad_request(format!("couldn't get version/kind; json parse error: {error}"))
        })
    }
}

async fn resource(
    state: &HttpState,
    request: ResourceRequest,
    query: &HashMap<String, String>,
    headers: &HeaderMap,
    accept: &str,
    body: Bytes,
) -> Result<Response, ApiError> {
    let api = &state.api;
    let def = api
        .registry
        .find(&request.group, &request.version, &request.resource)
        .ok_or_else(ApiError::no_such_path)?;
    if let Some(subresource) = &request.subresource
        && !def.has_subresource(subresource)
    {
        return Err(ApiError::no_such_path());
    }
    if !def.namespaced && request.namespace.is_some() {
        return Err(ApiError::no_such_path());
    }
    let namespace = request.namespace.as_deref();
    let version = request.version.as_str();
    let user_agent = header(headers, "user-agent");
    match (request.verb, request.subresource.as_deref()) {
        (Verb::Watch, _) => {
            let mut list_options = options::list_options(query)?;
            if let Some(name) = &request.name {
                list_options.field_selector = merge_name_selector(&list_options.field_selector, name);
            }
            let format = if table::wants_table(accept) {
                EventFormat::Table
            } else if table::wants_metadata(accept) {
                EventFormat::Metadata
            } else {
                EventFormat::Object
            };
            let receiver = watch::start(
                api.clone(),
                def.clone(),
                version.to_string(),
                namespace.map(str::to_string),
                None,
                list_options,
                format,
            )?;
            let stream = tokio_stream::wrappers::ReceiverStream::new(receiver);
            let content_type = if format == EventFormat::Table {
                "application/json;as=Table;v=v1;g=meta.k8s.io"
            } else {
                "application/json"
            };
            Ok((StatusCode::OK, [(http::header::CONTENT_TYPE, content_type)], Body::from_stream(stream))
                .into_response())
        }
        (Verb::List, None) => {
            let list_options = options::list_options(query)?;
            let (items, rv, next) = api.list(&def, version, namespace, &list_options).await?;
            Ok(list_response(&def, version, items, rv, next, accept, query))
        }
        (Verb::Get, None) => {
            let name = request.name.as_deref().unwrap_or_default();
            let object = api.get(&def, version, namespace, name).await?;
            Ok(object_response(&def, version, object, accept, query))
        }
        (Verb::Get, Some("status")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let object = api.get(&def, version, namespace, name).await?;
            Ok(json_response(StatusCode::OK, &object, &[]))
        }
        (Verb::Get, Some("scale")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let scale = subresources::get_scale(api, &def, version, namespace, name).await?;
            Ok(json_response(StatusCode::OK, &scale, &[]))
        }
        (Verb::Create, None) => {
            let write = options::write_options(query, &user_agent)?;
            let body = decode_body(headers, &body)?;
            let written = api.create(&def, version, namespace, body, &write).await?;
            Ok(written_response(written))
        }
        (Verb::Create, Some("binding")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let body = decode_body(headers, &body)?;
            let write = options::write_options(query, &user_agent)?;
            subresources::bind(api, &def, namespace, name, &body, &write).await?;
            Ok(json_response(StatusCode::CREATED, &success_status(), &[]))
        }
        (Verb::Create, Some("eviction")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let body = decode_body(headers, &body).unwrap_or(json!({}));
            subresources::evict(api, &def, namespace, name, &body).await?;
            Ok(json_response(StatusCode::CREATED, &success_status(), &[]))
        }
        (Verb::Update, sub @ (None | Some("status") | Some("finalize") | Some("resize"))) => {
            let name = request.name.as_deref().unwrap_or_default();
            let write = options::write_options(query, &user_agent)?;
            let body = decode_body(headers, &body)?;
            let written = api.update(&def, version, namespace, name, sub, body, &write).await?;
            Ok(written_response(written))
        }
        (Verb::Patch, sub @ (None | Some("status") | Some("resize"))) => {
            let name = request.name.as_deref().unwrap_or_default();
            let write = options::write_options(query, &user_agent)?;
            let patch_type = patch_type(headers)?;
            let body = decode_body(headers, &body)?;
            let written = api.patch(&def, version, namespace, name, sub, patch_type, body, &write).await?;
            Ok(written_response(written))
        }
        (Verb::Update | Verb::Patch, Some("scale")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let write = options::write_options(query, &user_agent)?;
            let body = decode_body(headers, &body)?;
            let patch_type = if request.verb == Verb::Patch { Some(patch_type(headers)?) } else { None };
            let scale =
                subresources::set_scale(api, &def, version, namespace, name, patch_type, body, &write)
                    .await?;
            Ok(json_response(StatusCode::OK, &scale, &[]))
        }
        (Verb::Delete, None) => {
            let name = request.name.as_deref().unwrap_or_default();
            let body = if body.is_empty() { None } else { decode_body(headers, &body).ok() };
            let delete = options::delete_options(query, body.as_ref())?;
            match api.delete(&def, version, namespace, name, &delete).await? {
                Deleted::Pending(object) => Ok(json_response(StatusCode::OK, &object, &[])),
                Deleted::Gone(object) => {
                    let status = json!({
                        "kind": "Status",
                        "apiVersion": "v1",
                        "metadata": {},
                        "status": "Success",
                        "details": {
                            "name": name,
                            "group": def.group,
                            "kind": def.resource,
                            "uid": objects::uid(&object).unwrap_or_default(),
                        },
                    });
                    Ok(json_response(StatusCode::OK, &status, &[]))
                }
            }
        }
        (Verb::DeleteCollection, None) => {
            let list_options = options::list_options(query)?;
            let body = if body.is_empty() { None } else { decode_body(headers, &body).ok() };
            let delete = options::delete_options(query, body.as_ref())?;
            let deleted = api.delete_collection(&def, version, namespace, &list_options, &delete).await?;
            Ok(list_response(&def, version, deleted, api.store.current_rv(), None, "", query))
        }
        _ => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource".to_string(),
        )),
    }
}

fn merge_name_selector(selector: &str, name: &str) -> String {
    let term = format!("metadata.name={name}");
    if selector.is_empty() { term } else { format!("{selector},{term}") }
}

fn patch_type(headers: &HeaderMap) -> Result<PatchType, ApiError> {
    let content_type = header(headers, "content-type");
    let media = content_type.split(';').next().unwrap_or_default().trim();
    match media {
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(PatchType::Apply),
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, \
             application/strategic-merge-patch+json (got {other:?})"
        ))),
    }
}

fn success_status() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

fn written_response(written: Written) -> Response {
    let status = if written.created { StatusCode::CREATED } else { StatusCode::OK };
    json_response(status, &written.object, &written.warnings)
}

fn include_object(query: &HashMap<String, String>) -> String {
    query.get("includeObject").cloned().unwrap_or_else(|| "Metadata".to_string())
}

fn object_response(
    def: &ResourceDef,
    version: &str,
    object: Value,
    accept: &str,
    query: &HashMap<String, String>,
) -> Response {
    if table::wants_table(accept) {
        let rv = objects::meta_str(&object, "resourceVersion").unwrap_or_default().to_string();
        let rendered = table::table(def, version, std::slice::from_ref(&object), &include_object(query), &rv);
        return table_response(&rendered);
    }
    if table::wants_metadata(accept) {
        return json_response(StatusCode::OK, &table::partial_metadata(&object), &[]);
    }
    json_response(StatusCode::OK, &object, &[])
}

fn table_response(table: &Value) -> Response {
    let body = serde_json::to_vec(table).unwrap_or_default();
    (StatusCode::OK, [(http::header::CONTENT_TYPE, "application/json;as=Table;v=v1;g=meta.k8s.io")], body)
        .into_response()
}

fn list_response(
    def: &ResourceDef,
    version: &str,
    items: Vec<Value>,
    rv: u64,
    next: Option<String>,
    accept: &str,
    query: &HashMap<String, String>,
) -> Response {
    let rv_text = rv.to_string();
    if table::wants_table(accept) {
        let mut rendered = table::table(def, version, &items, &include_object(query), &rv_text);
        if let Some(next) = &next {
            rendered["metadata"]["continue"] = json!(next);
        }
        return table_response(&rendered);
    }
    let mut metadata = json!({"resourceVersion": rv_text});
    if let Some(next) = next {
        metadata["continue"] = json!(next);
    }
    if table::wants_metadata(accept) {
        let items: Vec<Value> = items.iter().map(table::partial_metadata).collect();
        let list = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "items": items});
        return json_response(StatusCode::OK, &list, &[]);
    }
    let list = json!({
        "kind": def.list_kind(),
        "apiVersion": def.api_version(version),
        "metadata": metadata,
        "items": items,
    });
    json_response(StatusCode::OK, &list, &[])
}
