//! The HTTP surface: routes every request to discovery, OpenAPI, health or a resource verb,
//! decodes bodies (JSON, YAML or protobuf, as the Content-Type says), negotiates the response
//! (serializer and form: object, Table, PartialObjectMetadata) and writes `Warning` headers.

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
    negotiation::{self, Codec, Conversion, Endpoint, OpenApiForm, Output},
    objects, openapi, openapi_protobuf, options, protobuf,
    request::{self, ResourceRequest, Target, Verb},
    respond, subresources, table,
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
        "/openapi/v2" => {
            return openapi_response(&accept, 2, || Some(openapi::v2(&state.api.registry)));
        }
        "/openapi/v3" | "/openapi/v3/" => {
            return openapi_response(&accept, 3, || Some(openapi::v3_index(&state.api.registry)));
        }
        _ => {}
    }
    if let Some(rest) = path.strip_prefix("/openapi/v3/") {
        let registry = &state.api.registry;
        return openapi_response(&accept, 3, || {
            openapi::v3_group_version(registry, rest.trim_end_matches('/'))
        });
    }
    let watch = query.get("watch").is_some_and(|w| w == "true" || w == "1");
    let target = match request::parse(&method, &path, watch) {
        Ok(target) => target,
        Err(_) => return respond::error(&ApiError::no_such_path(), &accept),
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
                .unwrap_or_else(|error| respond::error(&error, &accept));
            state.requests.record(&header(&headers, "user-agent"), &request, response.status().as_u16());
            return response;
        }
    };
    match result {
        Ok(document) => json_response(StatusCode::OK, &document, &[]),
        Err(error) => respond::error(&error, &accept),
    }
}

/// An OpenAPI document in the form the `Accept` header picks: JSON, or for v2 its protobuf
/// form (kubectl's client-side validation reads it); 406 (empty, as kube-apiserver's OpenAPI
/// handler answers) for anything else.
fn openapi_response(accept: &str, version: u8, document: impl FnOnce() -> Option<Value>) -> Response {
    let form = negotiation::openapi_form(accept, version);
    if form.is_none() || (form == Some(OpenApiForm::Protobuf) && version != 2) {
        return (StatusCode::NOT_ACCEPTABLE, [(http::header::VARY, "Accept")]).into_response();
    }
    match document() {
        Some(document) if form == Some(OpenApiForm::Protobuf) => (
            StatusCode::OK,
            [(http::header::CONTENT_TYPE, openapi_protobuf::MEDIA_TYPE), (http::header::VARY, "Accept")],
            openapi_protobuf::v2_document(&document),
        )
            .into_response(),
        Some(document) => json_response(StatusCode::OK, &document, &[]),
        None => ApiError::no_such_path().into_response(),
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

/// Decodes a request body as JSON, YAML or protobuf, as the Content-Type says (415 for any
/// other media type).
pub fn decode_body(headers: &HeaderMap, body: &[u8], endpoint: Endpoint) -> Result<Value, ApiError> {
    let codec = negotiation::input(&header(headers, "content-type"), endpoint)?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the body of the request was empty"));
    }
    if codec == Codec::Protobuf {
        return protobuf::decode(body).map_err(|error| match error {
            protobuf::CodecError::UnknownKind { .. } | protobuf::CodecError::NoMagic => {
                ApiError::bad_request(format!("the object provided is unrecognized: {error}"))
            }
            _ => ApiError::bad_request(format!("error decoding protobuf: {error}")),
        });
    }
    if codec == Codec::Yaml {
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
    let endpoint = if def.is_custom() { Endpoint::Custom } else { Endpoint::Builtin };
    if endpoint == Endpoint::Builtin {
        let collection = request.name.is_none() && matches!(request.verb, Verb::List | Verb::Watch);
        negotiation::builtin_route(
            request.verb == Verb::Patch,
            collection,
            &header(headers, "content-type"),
            accept,
        )?;
    }
    // As kube-apiserver: the response form is settled before anything is read or written.
    let output = negotiation::output(accept, endpoint)?;
    // Only the object itself, Tables and metadata are converted; subresources answer objects.
    // (Protobuf metadata of a custom resource converts; the object itself is JSON.)
    let codec = if endpoint == Endpoint::Custom && output.codec == Codec::Protobuf {
        Codec::Json
    } else {
        output.codec
    };
    let plain = Output { codec, conversion: Conversion::None };
    match (request.verb, request.subresource.as_deref()) {
        (Verb::Watch, _) => {
            let mut list_options = options::list_options(query)?;
            if let Some(name) = &request.name {
                list_options.field_selector = merge_name_selector(&list_options.field_selector, name);
            }
            let stream = negotiation::stream(accept, endpoint)?;
            let format = match stream.conversion {
                Conversion::Table => EventFormat::Table,
                Conversion::PartialObjectMetadata | Conversion::PartialObjectMetadataList => {
                    EventFormat::Metadata
                }
                Conversion::None => EventFormat::Object,
            };
            let receiver = watch::start(
                api.clone(),
                def.clone(),
                version.to_string(),
                namespace.map(str::to_string),
                None,
                list_options,
                format,
                stream.codec,
            )?;
            let content_type = if format == EventFormat::Table {
                respond::TABLE_CONTENT_TYPE
            } else {
                stream.codec.stream_media_type()
            };
            let stream = tokio_stream::wrappers::ReceiverStream::new(receiver);
            Ok((StatusCode::OK, [(http::header::CONTENT_TYPE, content_type)], Body::from_stream(stream))
                .into_response())
        }
        (Verb::List, None) => {
            if output.conversion == Conversion::PartialObjectMetadata {
                return Err(ApiError::not_acceptable(format!(
                    "you requested PartialObjectMetadata, but the requested object is a list (*{}List)",
                    go_type(&def)
                )));
            }
            let list_options = options::list_options(query)?;
            let (items, rv, next) = api.list(&def, version, namespace, &list_options).await?;
            Ok(list_response(&def, version, items, rv, next, output, query))
        }
        (Verb::Get, None) => {
            if output.conversion == Conversion::PartialObjectMetadataList {
                return Err(ApiError::not_acceptable(format!(
                    "you requested PartialObjectMetadataList, but the requested object is not a list (*{})",
                    go_type(&def)
                )));
            }
            let name = request.name.as_deref().unwrap_or_default();
            let object = api.get(&def, version, namespace, name).await?;
            Ok(object_response(&def, version, object, output, query))
        }
        (Verb::Get, Some("status" | "ephemeralcontainers")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let object = api.get(&def, version, namespace, name).await?;
            Ok(respond::object(StatusCode::OK, &object, plain, &[]))
        }
        (Verb::Get, Some("scale")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let scale = subresources::get_scale(api, &def, version, namespace, name).await?;
            Ok(respond::object(StatusCode::OK, &scale, plain, &[]))
        }
        (Verb::Create, None) => {
            let write = options::write_options(query, &user_agent)?;
            let body = decode_body(headers, &body, endpoint)?;
            let written = api.create(&def, version, namespace, body, &write).await?;
            Ok(written_response(written, plain))
        }
        (Verb::Create, Some("binding")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let body = decode_body(headers, &body, endpoint)?;
            let write = options::write_options(query, &user_agent)?;
            subresources::bind(api, &def, namespace, name, &body, &write).await?;
            Ok(respond::object(StatusCode::CREATED, &success_status(), plain, &[]))
        }
        (Verb::Create, Some("eviction")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let body = match decode_body(headers, &body, endpoint) {
                Err(error) if error.code == 415 => return Err(error),
                decoded => decoded.unwrap_or(json!({})),
            };
            // As kube-apiserver, validating admission sees the eviction (a CREATE of
            // `pods/eviction`) before the pod is looked at; the deletion it makes is not
            // admitted again.
            api.admit_subresource_create(&def, namespace, name, "eviction", &body).await?;
            subresources::evict(api, &def, namespace, name, &body).await?;
            Ok(respond::object(StatusCode::CREATED, &success_status(), plain, &[]))
        }
        (
            Verb::Update,
            sub @ (None | Some("status") | Some("finalize") | Some("resize") | Some("ephemeralcontainers")),
        ) => {
            let name = request.name.as_deref().unwrap_or_default();
            let write = options::write_options(query, &user_agent)?;
            let body = decode_body(headers, &body, endpoint)?;
            let written = api.update(&def, version, namespace, name, sub, body, &write).await?;
            Ok(written_response(written, plain))
        }
        (Verb::Patch, sub @ (None | Some("status") | Some("resize") | Some("ephemeralcontainers"))) => {
            let name = request.name.as_deref().unwrap_or_default();
            let write = options::write_options(query, &user_agent)?;
            let patch_type = patch_type(headers, def.is_custom())?;
            let body = decode_patch(&body, patch_type)?;
            let written = api.patch(&def, version, namespace, name, sub, patch_type, body, &write).await?;
            Ok(written_response(written, plain))
        }
        (Verb::Update | Verb::Patch, Some("scale")) => {
            let name = request.name.as_deref().unwrap_or_default();
            let write = options::write_options(query, &user_agent)?;
            let patch_type =
                if request.verb == Verb::Patch { Some(patch_type(headers, def.is_custom())?) } else { None };
            let body = match patch_type {
                Some(patch_type) => decode_patch(&body, patch_type)?,
                None => decode_body(headers, &body, endpoint)?,
            };
            let scale =
                subresources::set_scale(api, &def, version, namespace, name, patch_type, body, &write)
                    .await?;
            Ok(respond::object(StatusCode::OK, &scale, plain, &[]))
        }
        (Verb::Delete, None) => {
            let name = request.name.as_deref().unwrap_or_default();
            let body = delete_body(headers, &body)?;
            let delete = options::delete_options(query, body.as_ref())?;
            match api.delete(&def, version, namespace, name, &delete).await? {
                Deleted::Pending(object) => Ok(respond::object(StatusCode::OK, &object, plain, &[])),
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
                    Ok(respond::object(StatusCode::OK, &status, plain, &[]))
                }
            }
        }
        (Verb::DeleteCollection, None) => {
            let list_options = options::list_options(query)?;
            let body = delete_body(headers, &body)?;
            let delete = options::delete_options(query, body.as_ref())?;
            let deleted = api.delete_collection(&def, version, namespace, &list_options, &delete).await?;
            Ok(list_response(&def, version, deleted, api.store.current_rv(), None, plain, query))
        }
        _ => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource".to_string(),
        )),
    }
}

/// A PATCH body: JSON, or YAML for server-side apply (its Content-Type names the patch type,
/// never a serializer).
fn decode_patch(body: &[u8], patch_type: PatchType) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the body of the request was empty"));
    }
    if patch_type == PatchType::Apply {
        let yaml: serde_yaml::Value = serde_yaml::from_slice(body)
            .map_err(|error| ApiError::bad_request(format!("error decoding YAML: {error}")))?;
        return serde_json::to_value(yaml)
            .map_err(|error| ApiError::bad_request(format!("error decoding YAML: {error}")));
    }
    serde_json::from_slice(body).map_err(|error| {
        ApiError::bad_request(format!("couldn't get version/kind; json parse error: {error}"))
    })
}

/// The DeleteOptions of a delete request, if it has a body: an unknown media type is refused
/// (415); a body that does not decode is ignored, as before protobuf was read.
fn delete_body(headers: &HeaderMap, body: &[u8]) -> Result<Option<Value>, ApiError> {
    if body.is_empty() {
        return Ok(None);
    }
    // DeleteOptions are a built-in kind for every resource.
    match decode_body(headers, body, Endpoint::Builtin) {
        Ok(options) => Ok(Some(options)),
        Err(error) if error.code == 415 => Err(error),
        Err(_) => Ok(None),
    }
}

/// The Go type kube-apiserver names in its conversion errors: the internal type of a built-in
/// kind (`core.ConfigMap`, `apps.Deployment`), `unstructured.Unstructured` for custom resources.
fn go_type(def: &ResourceDef) -> String {
    if def.is_custom() {
        return "unstructured.Unstructured".to_string();
    }
    let package = match def.group.split('.').next().unwrap_or_default() {
        "" | "events" => "core",
        group => group,
    };
    format!("{package}.{}", def.kind)
}

fn merge_name_selector(selector: &str, name: &str) -> String {
    let term = format!("metadata.name={name}");
    if selector.is_empty() { term } else { format!("{selector},{term}") }
}

/// The patch type of a PATCH, from its Content-Type (as kube-apiserver: the media type before
/// any `;`, compared exactly); 415 listing the types the resource takes (custom resources
/// take no strategic merge patch).
fn patch_type(headers: &HeaderMap, custom: bool) -> Result<PatchType, ApiError> {
    let content_type = header(headers, "content-type");
    let media = match content_type.find(';') {
        Some(index) if index > 0 => &content_type[..index],
        _ => content_type.as_str(),
    };
    match media {
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/strategic-merge-patch+json" if !custom => Ok(PatchType::Strategic),
        "application/apply-patch+yaml" => Ok(PatchType::Apply),
        _ => {
            let accepted = if custom {
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
            } else {
                "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
            };
            Err(ApiError::unsupported_media_type(format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            )))
        }
    }
}

fn success_status() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

fn written_response(written: Written, output: Output) -> Response {
    let status = if written.created { StatusCode::CREATED } else { StatusCode::OK };
    respond::object(status, &written.object, output, &written.warnings)
}

fn include_object(query: &HashMap<String, String>) -> String {
    query.get("includeObject").cloned().unwrap_or_else(|| "Metadata".to_string())
}

fn object_response(
    def: &ResourceDef,
    version: &str,
    object: Value,
    output: Output,
    query: &HashMap<String, String>,
) -> Response {
    match output.conversion {
        Conversion::Table => {
            let rv = objects::meta_str(&object, "resourceVersion").unwrap_or_default().to_string();
            let rendered =
                table::table(def, version, std::slice::from_ref(&object), &include_object(query), &rv);
            respond::object(StatusCode::OK, &rendered, output, &[])
        }
        Conversion::PartialObjectMetadata | Conversion::PartialObjectMetadataList => {
            respond::object(StatusCode::OK, &table::partial_metadata(&object), output, &[])
        }
        Conversion::None => respond::object(StatusCode::OK, &object, output, &[]),
    }
}

fn list_response(
    def: &ResourceDef,
    version: &str,
    items: Vec<Value>,
    rv: u64,
    next: Option<String>,
    output: Output,
    query: &HashMap<String, String>,
) -> Response {
    let rv_text = rv.to_string();
    if output.conversion == Conversion::Table {
        let mut rendered = table::table(def, version, &items, &include_object(query), &rv_text);
        if let Some(next) = &next {
            rendered["metadata"]["continue"] = json!(next);
        }
        return respond::object(StatusCode::OK, &rendered, output, &[]);
    }
    let mut metadata = json!({"resourceVersion": rv_text});
    if let Some(next) = next {
        metadata["continue"] = json!(next);
    }
    if matches!(output.conversion, Conversion::PartialObjectMetadata | Conversion::PartialObjectMetadataList)
    {
        let items: Vec<Value> = items.iter().map(table::partial_metadata).collect();
        let list = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "items": items});
        return respond::object(StatusCode::OK, &list, output, &[]);
    }
    let list = json!({
        "kind": def.list_kind(),
        "apiVersion": def.api_version(version),
        "metadata": metadata,
        "items": items,
    });
    respond::object(StatusCode::OK, &list, output, &[])
}
