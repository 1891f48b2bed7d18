//! Writing responses in the negotiated serializer: objects and lists as JSON, YAML or
//! protobuf, Tables as JSON or YAML, errors as a `Status` in whatever the client accepts.

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde_json::Value;

use super::{
    errors::ApiError,
    negotiation::{self, Codec, Conversion, Output},
    protobuf,
};

/// The Content-Type of a Table answer.
pub const TABLE_CONTENT_TYPE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// The body and Content-Type of a value in a serializer; an object that has no protobuf form,
/// or does not fit it, is an internal error (kube-apiserver's types always do).
pub fn encode(body: &Value, output: Output) -> Result<(Vec<u8>, &'static str), ApiError> {
    match output.codec {
        Codec::Json => {
            let content_type = if output.conversion == Conversion::Table {
                TABLE_CONTENT_TYPE
            } else {
                Codec::Json.media_type()
            };
            Ok((serde_json::to_vec(body).unwrap_or_default(), content_type))
        }
        Codec::Yaml => serde_yaml::to_string(body)
            .map(|text| (text.into_bytes(), Codec::Yaml.media_type()))
            .map_err(|error| ApiError::internal(format!("encoding YAML: {error}"))),
        Codec::Protobuf => protobuf::encode(body)
            .map(|bytes| (bytes, Codec::Protobuf.media_type()))
            .map_err(|error| ApiError::internal(format!("encoding protobuf: {error}"))),
    }
}

/// A response with `Warning` headers.
pub fn object(status: StatusCode, body: &Value, output: Output, warnings: &[String]) -> Response {
    let (bytes, content_type) = match encode(body, output) {
        Ok(encoded) => encoded,
        Err(error) => return error_as(&error, Codec::Json),
    };
    let mut response = (status, [(http::header::CONTENT_TYPE, content_type)], bytes).into_response();
    for warning in warnings {
        let escaped = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = http::HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            response.headers_mut().append(http::header::WARNING, value);
        }
    }
    response
}

/// An error as a `Status` in the serializer the `Accept` header allows (JSON if none).
pub fn error(error: &ApiError, accept: &str) -> Response {
    error_as(error, negotiation::for_error(accept))
}

fn error_as(error: &ApiError, codec: Codec) -> Response {
    let code = StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let output = Output { codec, conversion: Conversion::None };
    match encode(&error.to_status(), output) {
        Ok((bytes, content_type)) => {
            (code, [(http::header::CONTENT_TYPE, content_type)], bytes).into_response()
        }
        Err(_) => error.clone().into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_follow_accept() {
        let not_found = ApiError::not_found("", "pods", "web");
        let response = error(&not_found, "application/vnd.kubernetes.protobuf, */*");
        assert_eq!(response.status(), 404);
        assert_eq!(response.headers()[http::header::CONTENT_TYPE], protobuf::MEDIA_TYPE);
        let response = error(&not_found, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
        assert_eq!(response.headers()[http::header::CONTENT_TYPE], "application/json");
        let response = error(&not_found, "application/yaml");
        assert_eq!(response.headers()[http::header::CONTENT_TYPE], "application/yaml");
    }
}
