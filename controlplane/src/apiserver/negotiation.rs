//! Content negotiation as kube-apiserver does it (`apiserver/pkg/endpoints/handlers/negotiation`):
//! which serializer answers a request (`Accept`), which one reads its body (`Content-Type`),
//! and when the answer is 406 or 415.
//!
//! Every resource offers JSON, YAML and protobuf, in that order, and JSON and protobuf as watch
//! streams. Custom resources are JSON and YAML only unless converted (protobuf is accepted
//! there only for `PartialObjectMetadata`); a Table is JSON or YAML.

use super::{errors::ApiError, protobuf};

/// A serializer of the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// `application/json`.
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

/// The serializers in the order kube-apiserver offers them.
pub const OFFERED: [Codec; 3] = [Codec::Json, Codec::Yaml, Codec::Protobuf];

impl Codec {
    /// The media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Codec::Json => "application/json",
            Codec::Yaml => "application/yaml",
            Codec::Protobuf => protobuf::MEDIA_TYPE,
        }
    }

    fn subtype(self) -> &'static str {
        self.media_type().trim_start_matches("application/")
    }

    /// Whether it can frame a watch.
    pub fn streams(self) -> bool {
        self != Codec::Yaml
    }

    /// The media type of a watch stream in this serializer.
    pub fn stream_media_type(self) -> &'static str {
        match self {
            Codec::Protobuf => protobuf::STREAM_MEDIA_TYPE,
            _ => "application/json",
        }
    }
}

/// The form an object is converted to before it is written (`as=` in `Accept`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conversion {
    /// The object itself.
    None,
    /// `meta.k8s.io` Table (`kubectl get`).
    Table,
    /// `meta.k8s.io` PartialObjectMetadata: metadata-only clients, one object.
    PartialObjectMetadata,
    /// `meta.k8s.io` PartialObjectMetadataList: metadata-only clients, a list.
    PartialObjectMetadataList,
}

/// The outcome of output negotiation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Output {
    /// The serializer.
    pub codec: Codec,
    /// The conversion.
    pub conversion: Conversion,
}

impl Output {
    /// JSON, the object itself.
    pub const JSON: Output = Output { codec: Codec::Json, conversion: Conversion::None };
}

/// What the endpoint serving the request allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A built-in resource.
    Builtin,
    /// A custom resource (a CRD's).
    Custom,
    /// An error or a non-resource answer (kube-apiserver's default restrictions: no
    /// conversion).
    Plain,
}

/// One clause of an `Accept` header.
#[derive(Clone, Debug, PartialEq)]
struct Clause {
    kind: String,
    subtype: String,
    q: f64,
    params: Vec<(String, String)>,
}

/// Parses `Accept` as Go's `goautoneg.ParseAccept` does, clauses sorted by q and specificity
/// (an insertion sort, as Go's for short lists, so that ties keep their order).
fn parse_accept(header: &str) -> Vec<Clause> {
    let mut clauses: Vec<Clause> = Vec::new();
    for part in header.split(',') {
        let part = part.trim_matches(' ');
        let (media, rest) = part.split_once(';').unwrap_or((part, ""));
        let (kind, subtype) = match media.split_once('/') {
            Some((kind, subtype)) if !subtype.contains('/') => {
                (kind.trim_matches(' '), subtype.trim_matches(' '))
            }
            Some(_) => continue,
            None if media.trim_matches(' ') == "*" => ("*", "*"),
            None => continue,
        };
        let mut clause =
            Clause { kind: kind.to_string(), subtype: subtype.to_string(), q: 1.0, params: Vec::new() };
        for param in rest.split(';').filter(|p| !p.is_empty()) {
            let mut pieces = param.split('=');
            let (Some(key), Some(value), None) = (pieces.next(), pieces.next(), pieces.next()) else {
                continue;
            };
            let key = key.trim_matches(' ');
            if key == "q" {
                clause.q = value.parse::<f32>().map(f64::from).unwrap_or(0.0);
            } else {
                clause.params.push((key.to_string(), value.trim_matches(' ').to_string()));
            }
        }
        clauses.push(clause);
    }
    let less = |a: &Clause, b: &Clause| {
        a.q > b.q || (a.kind != "*" && b.kind == "*") || (a.subtype != "*" && b.subtype == "*")
    };
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && less(&clauses[j], &clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
    clauses
}

/// The options of a clause for one serializer, or None when the endpoint refuses them.
fn clause_options(clause: &Clause, codec: Codec, endpoint: Endpoint) -> Option<Conversion> {
    let (mut kind, mut group, mut version) = (None, None, None);
    for (key, value) in &clause.params {
        match key.as_str() {
            "as" => kind = Some(value.as_str()),
            "g" => group = Some(value.as_str()),
            "v" => version = Some(value.as_str()),
            "stream" if !value.is_empty() && (!codec.streams() || value != "watch") => return None,
            "sv" if !value.is_empty() && (endpoint == Endpoint::Plain || value != "v1") => return None,
            _ => {}
        }
    }
    let text = matches!(codec, Codec::Json | Codec::Yaml);
    if kind.is_none() && group.is_none() && version.is_none() {
        return match endpoint {
            Endpoint::Custom if !text => None,
            _ => Some(Conversion::None),
        };
    }
    if endpoint == Endpoint::Plain
        || group != Some("meta.k8s.io")
        || !matches!(version, Some("v1") | Some("v1beta1"))
    {
        return None;
    }
    match kind {
        Some("Table") if text => Some(Conversion::Table),
        Some("PartialObjectMetadata") => Some(Conversion::PartialObjectMetadata),
        Some("PartialObjectMetadataList") => Some(Conversion::PartialObjectMetadataList),
        _ => None,
    }
}

fn negotiate(accept: &str, endpoint: Endpoint) -> Option<Output> {
    if accept.is_empty() {
        return Some(Output::JSON);
    }
    for clause in parse_accept(accept) {
        for codec in OFFERED {
            let matches = (clause.kind == "application"
                && (clause.subtype == codec.subtype() || clause.subtype == "*"))
                || (clause.kind == "*" && clause.subtype == "*");
            if matches && let Some(conversion) = clause_options(&clause, codec, endpoint) {
                return Some(Output { codec, conversion });
            }
        }
    }
    None
}

fn media_list(stream: bool) -> String {
    OFFERED
        .iter()
        .filter(|codec| !stream || codec.streams())
        .map(|codec| {
            if stream {
                format!("{};stream=watch", codec.media_type())
            } else {
                codec.media_type().to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// 406 listing what the server produces.
fn not_acceptable(stream: bool) -> ApiError {
    ApiError::not_acceptable(format!("only the following media types are accepted: {}", media_list(stream)))
}

/// The serializer and conversion of a response (get, list, create...): 406 when the header
/// allows nothing the endpoint produces.
pub fn output(accept: &str, endpoint: Endpoint) -> Result<Output, ApiError> {
    negotiate(accept, endpoint).ok_or_else(|| not_acceptable(false))
}

/// The serializer of a watch stream: the first acceptable clause must be one that streams.
pub fn stream(accept: &str, endpoint: Endpoint) -> Result<Output, ApiError> {
    match negotiate(accept, endpoint) {
        Some(output) if output.codec.streams() => Ok(output),
        _ => Err(not_acceptable(true)),
    }
}

/// The serializer of an error (a `Status`): JSON when nothing else is acceptable.
pub fn for_error(accept: &str) -> Codec {
    negotiate(accept, Endpoint::Plain).map_or(Codec::Json, |output| output.codec)
}

/// The serializer that reads a request body, from its `Content-Type` (JSON when there is
/// none): 415 for anything else. Custom resources are read from JSON and YAML only
/// (kube-apiserver 1.34.4 fails on a protobuf body there: its CRD handler panics).
pub fn input(content_type: &str, endpoint: Endpoint) -> Result<Codec, ApiError> {
    if content_type.is_empty() {
        return Ok(Codec::Json);
    }
    let media = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let custom = endpoint == Endpoint::Custom;
    OFFERED
        .into_iter()
        .filter(|codec| !(custom && *codec == Codec::Protobuf))
        .find(|codec| codec.media_type() == media)
        .ok_or_else(|| {
            let accepted =
                if custom { "application/json, application/yaml".to_string() } else { media_list(false) };
            ApiError::unsupported_media_type(format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            ))
        })
}

/// The route check go-restful makes for built-in resources before kube-apiserver negotiates:
/// a PATCH needs a patch Content-Type (else 415), and some `Accept` entry (parameters dropped)
/// must be `*/*` or a media type the route produces, exactly (else 406, so `application/*` is
/// refused there). Collections (list and watch) also produce the watch stream types.
pub fn builtin_route(
    patch: bool,
    collection: bool,
    content_type: &str,
    accept: &str,
) -> Result<(), ApiError> {
    let bare = |text: &str| text.split(';').next().unwrap_or_default().trim_matches(' ').to_string();
    if patch {
        let patch_types = [
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/apply-patch+yaml",
        ];
        let content_type = if content_type.is_empty() { "application/octet-stream" } else { content_type };
        if !content_type.split(',').any(|part| patch_types.contains(&bare(part).as_str())) {
            let mut error = ApiError::unsupported_media_type("415: Unsupported Media Type");
            error.details = Some(serde_json::json!({}));
            return Err(error);
        }
    }
    let accept = if accept.is_empty() { "*/*" } else { accept };
    let produced = |mime: &str| mime == "*/*" || OFFERED.iter().any(|codec| codec.media_type() == mime);
    if !accept.split(',').any(|part| produced(&bare(part))) {
        let mut available = media_list(false);
        if collection {
            available = format!("{available}, {}", media_list(true));
        }
        let mut error = ApiError::not_acceptable(format!(
            "406: Not Acceptable\n\nAvailable representations: {available}"
        ));
        error.details = Some(serde_json::json!({}));
        return Err(error);
    }
    Ok(())
}

/// The form of an OpenAPI document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenApiForm {
    /// JSON.
    Json,
    /// gnostic's protobuf form.
    Protobuf,
}

/// For `/openapi/v2` and `/openapi/v3`: the form kube-apiserver's OpenAPI handler picks (the
/// first clause that matches JSON or the protobuf form), None when nothing matches (406).
pub fn openapi_form(accept: &str, version: u8) -> Option<OpenApiForm> {
    let accept = if accept.is_empty() { "*/*" } else { accept };
    let protobuf = [
        format!("com.github.proto-openapi.spec.v{version}@v1.0+protobuf"),
        format!("com.github.proto-openapi.spec.v{version}.v1.0+protobuf"),
    ];
    let offered = ["json", protobuf[0].as_str(), protobuf[1].as_str()];
    for clause in parse_accept(accept) {
        for (index, subtype) in offered.iter().enumerate() {
            if (clause.kind == "application" || clause.kind == "*")
                && (clause.subtype == *subtype || clause.subtype == "*")
            {
                return Some(if index == 0 { OpenApiForm::Json } else { OpenApiForm::Protobuf });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    const METADATA_PB: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

    fn out(codec: Codec, conversion: Conversion) -> Result<Output, u16> {
        Ok(Output { codec, conversion })
    }

    #[test]
    fn output_negotiation_follows_kube_apiserver() {
        use Codec::*;
        use Conversion::{None as Plain, PartialObjectMetadataList as Meta, Table as Tab};
        use Endpoint::*;
        let cases: &[(&str, Endpoint, Result<Output, u16>)] = &[
            ("", Builtin, out(Json, Plain)),
            ("", Custom, out(Json, Plain)),
            ("*/*", Builtin, out(Json, Plain)),
            ("application/*", Custom, out(Json, Plain)),
            // (built-in routes refuse `application/*` before this: see builtin_route)
            ("application/*", Builtin, out(Json, Plain)),
            ("application/json", Builtin, out(Json, Plain)),
            ("application/yaml", Builtin, out(Yaml, Plain)),
            ("application/vnd.kubernetes.protobuf", Builtin, out(Protobuf, Plain)),
            // client-go's protobuf clients
            ("application/vnd.kubernetes.protobuf, */*", Builtin, out(Protobuf, Plain)),
            ("application/vnd.kubernetes.protobuf, */*", Custom, out(Json, Plain)),
            ("application/vnd.kubernetes.protobuf", Custom, Err(406)),
            ("application/json, application/vnd.kubernetes.protobuf", Builtin, out(Json, Plain)),
            ("application/vnd.kubernetes.protobuf;q=0.5, application/json", Builtin, out(Json, Plain)),
            ("*/*, application/vnd.kubernetes.protobuf", Builtin, out(Protobuf, Plain)),
            ("text/html", Builtin, Err(406)),
            ("application/cbor", Builtin, Err(406)),
            ("garbage", Builtin, Err(406)),
            (TABLE, Builtin, out(Json, Tab)),
            (TABLE, Custom, out(Json, Tab)),
            ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", Builtin, Err(406)),
            ("application/yaml;as=Table;v=v1;g=meta.k8s.io", Builtin, out(Yaml, Tab)),
            ("application/json;as=Table;v=v2;g=meta.k8s.io", Builtin, Err(406)),
            ("application/json;as=Table", Builtin, Err(406)),
            ("application/json;as=Pod;v=v1;g=", Builtin, Err(406)),
            (METADATA_PB, Builtin, out(Protobuf, Meta)),
            (METADATA_PB, Custom, out(Protobuf, Meta)),
            (
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1",
                Builtin,
                out(Json, Conversion::PartialObjectMetadata),
            ),
            ("application/json;sv=v1", Builtin, out(Json, Plain)),
            ("application/json;sv=v2", Builtin, Err(406)),
            ("application/json;stream=watch", Builtin, out(Json, Plain)),
            ("application/yaml;stream=watch", Builtin, Err(406)),
            ("application/json;stream=other", Builtin, Err(406)),
            ("application/json;pretty=1;foo=bar", Builtin, out(Json, Plain)),
            ("Application/JSON", Builtin, Err(406)),
        ];
        for (accept, endpoint, expected) in cases {
            let got = output(accept, *endpoint).map_err(|e| e.code);
            assert_eq!(&got, expected, "Accept {accept:?} on {endpoint:?}");
        }
        let error = output("application/vnd.kubernetes.protobuf", Custom).unwrap_err();
        assert_eq!(error.reason, "NotAcceptable");
        assert_eq!(
            error.message,
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
    }

    #[test]
    fn watches_need_a_serializer_that_streams() {
        assert_eq!(
            stream("application/vnd.kubernetes.protobuf;stream=watch", Endpoint::Builtin).unwrap().codec,
            Codec::Protobuf
        );
        assert_eq!(stream("application/json", Endpoint::Builtin).unwrap().codec, Codec::Json);
        assert_eq!(
            stream("application/vnd.kubernetes.protobuf, */*", Endpoint::Custom).unwrap().codec,
            Codec::Json
        );
        // The first acceptable clause decides, even if a later one would stream.
        let error = stream("application/yaml, application/json", Endpoint::Builtin).unwrap_err();
        assert_eq!(error.code, 406);
        assert_eq!(
            error.message,
            "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
        );
        assert_eq!(stream(TABLE, Endpoint::Builtin).unwrap().conversion, Conversion::Table);
    }

    #[test]
    fn errors_are_written_in_an_acceptable_form_or_json() {
        assert_eq!(for_error("application/vnd.kubernetes.protobuf, */*"), Codec::Protobuf);
        assert_eq!(for_error("application/vnd.kubernetes.protobuf"), Codec::Protobuf);
        assert_eq!(for_error(TABLE), Codec::Json);
        assert_eq!(for_error("application/json;as=Table;v=v1;g=meta.k8s.io"), Codec::Json);
        assert_eq!(for_error("application/yaml"), Codec::Yaml);
        assert_eq!(for_error("text/plain"), Codec::Json);
    }

    #[test]
    fn openapi_forms_follow_accept() {
        use OpenApiForm::*;
        let v2 = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
        let cases: &[(&str, u8, Option<OpenApiForm>)] = &[
            ("", 2, Some(Json)),
            ("application/json", 2, Some(Json)),
            ("*/*", 3, Some(Json)),
            ("application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", 2, Some(Json)),
            // kubectl's OpenAPI v2 request
            (v2, 2, Some(Protobuf)),
            ("application/com.github.proto-openapi.spec.v2.v1.0+protobuf", 2, Some(Protobuf)),
            (v2, 3, None),
            ("application/com.github.proto-openapi.spec.v3.v1.0+protobuf", 3, Some(Protobuf)),
            ("text/html", 2, None),
            ("application/yaml", 3, None),
        ];
        for (accept, version, expected) in cases {
            assert_eq!(openapi_form(accept, *version), *expected, "{accept:?} v{version}");
        }
    }

    #[test]
    fn bodies_are_read_by_content_type() {
        let cases: &[(&str, Result<Codec, u16>)] = &[
            ("", Ok(Codec::Json)),
            ("application/json", Ok(Codec::Json)),
            ("application/json; charset=utf-8", Ok(Codec::Json)),
            ("Application/JSON", Ok(Codec::Json)),
            ("application/yaml", Ok(Codec::Yaml)),
            ("application/vnd.kubernetes.protobuf", Ok(Codec::Protobuf)),
            ("text/plain", Err(415)),
            ("application/x-yaml", Err(415)),
            ("application/cbor", Err(415)),
        ];
        for (content_type, expected) in cases {
            assert_eq!(
                &input(content_type, Endpoint::Builtin).map_err(|e| e.code),
                expected,
                "{content_type:?}"
            );
        }
        assert_eq!(
            input("application/vnd.kubernetes.protobuf", Endpoint::Custom).map_err(|e| e.code),
            Err(415)
        );
        assert_eq!(input("application/yaml", Endpoint::Custom), Ok(Codec::Yaml));
        assert_eq!(
            input("text/plain", Endpoint::Builtin).unwrap_err().message,
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
    }
}
