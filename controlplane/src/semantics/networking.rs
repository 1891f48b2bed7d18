//! `networking.k8s.io/v1` Ingress and IngressClass as kube-apiserver defaults and validates them
//! (`pkg/apis/networking/{v1/defaults.go,validation}`), with its field paths and messages.

use k8s_openapi::api::networking::v1::{IngressBackend, IngressClass, IngressClassSpec, IngressSpec};
use kruise_machinery::{
    field::{ErrorList, FieldError, FieldPath, quoted},
    validation::meta::dns1123_subdomain_problems,
};
use serde_json::Value;

/// The IngressClass default: parameters are cluster-scoped unless they say otherwise.
pub fn default_ingress_class(class: &mut IngressClass) {
    if let Some(parameters) = class.spec.as_mut().and_then(|spec| spec.parameters.as_mut()) {
        parameters.scope.get_or_insert_with(|| "Cluster".into());
    }
}

/// The rules of an Ingress spec, given as JSON (and of the class annotation agreeing with the
/// spec, on create). An absent `pathType` is required; an empty one is not a supported type.
pub fn validate_ingress(raw: Option<&Value>, class_annotation: Option<&str>, create: bool) -> ErrorList {
    let root = FieldPath::root("spec");
    let raw = raw.cloned().unwrap_or(Value::Null);
    let spec: IngressSpec = serde_json::from_value(raw.clone()).unwrap_or_default();
    let spec = &spec;
    let mut errors = Vec::new();
    let rules = spec.rules.as_deref().unwrap_or_default();
    if rules.is_empty() && spec.default_backend.is_none() {
        let value = if spec.rules.is_some() { "[]" } else { "null" };
        errors.push(FieldError::invalid(
            &root,
            value,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = &spec.default_backend {
        errors.extend(validate_backend(backend, &root.child("defaultBackend")));
    }
    for (index, rule) in rules.iter().enumerate() {
        let path = root.child("rules").index(index);
        if let Some(host) = rule.host.as_deref().filter(|host| !host.is_empty()) {
            if host.parse::<std::net::IpAddr>().is_ok() {
                errors.push(FieldError::invalid(
                    &path.child("host"),
                    quoted(host),
                    "must be a DNS name, not an IP address",
                ));
            }
            for problem in host_problems(host) {
                errors.push(FieldError::invalid(&path.child("host"), quoted(host), problem));
            }
        }
        let Some(http) = &rule.http else { continue };
        let http_path = path.child("http");
        if http.paths.is_empty() {
            errors.push(FieldError::required(&http_path.child("paths"), ""));
        }
        for (path_index, ingress_path) in http.paths.iter().enumerate() {
            let path = http_path.child("paths").index(path_index);
            let value = ingress_path.path.as_deref().unwrap_or_default();
            let pointer = format!("/rules/{index}/http/paths/{path_index}/pathType");
            if raw.pointer(&pointer).is_none_or(Value::is_null) {
                errors.push(FieldError::required(&path.child("pathType"), "pathType must be specified"));
                continue;
            }
            match ingress_path.path_type.as_str() {
                "Exact" | "Prefix" => {
                    if !value.starts_with('/') {
                        errors.push(FieldError::invalid(
                            &path.child("path"),
                            quoted(value),
                            "must be an absolute path",
                        ));
                    }
                    for sequence in ["//", "/./", "/../", "%2f", "%2F"] {
                        if value.contains(sequence) {
                            errors.push(FieldError::invalid(
                                &path.child("path"),
                                quoted(value),
                                format!("must not contain '{sequence}'"),
                            ));
                        }
                    }
                    for suffix in ["/..", "/."] {
                        if value.ends_with(suffix) {
                            errors.push(FieldError::invalid(
                                &path.child("path"),
                                quoted(value),
                                format!("cannot end with '{suffix}'"),
                            ));
                        }
                    }
                }
                "ImplementationSpecific" => {
                    if !value.is_empty() && !value.starts_with('/') {
                        errors.push(FieldError::invalid(
                            &path.child("path"),
                            quoted(value),
                            "must be an absolute path",
                        ));
                    }
                }
                other => errors.push(FieldError::not_supported(
                    &path.child("pathType"),
                    other,
                    &["Exact", "ImplementationSpecific", "Prefix"],
                )),
            }
            errors.extend(validate_backend(&ingress_path.backend, &path.child("backend")));
        }
    }
    for (index, tls) in spec.tls.iter().flatten().enumerate() {
        let path = root.child("tls").index(index);
        for (host_index, host) in tls.hosts.iter().flatten().enumerate() {
            for problem in host_problems(host) {
                errors.push(FieldError::invalid(
                    &path.child("hosts").index(host_index),
                    quoted(host),
                    problem,
                ));
            }
        }
        if let Some(secret) = tls.secret_name.as_deref().filter(|name| !name.is_empty()) {
            for problem in dns1123_subdomain_problems(secret) {
                errors.push(FieldError::invalid(&path.child("secretName"), quoted(secret), problem));
            }
        }
    }
    if let Some(class) = &spec.ingress_class_name {
        for problem in dns1123_subdomain_problems(class) {
            errors.push(FieldError::invalid(&root.child("ingressClassName"), quoted(class), problem));
        }
    }
    if create
        && let (Some(annotation), Some(class)) = (class_annotation, &spec.ingress_class_name)
        && annotation != class
    {
        errors.push(FieldError::invalid(
            &FieldPath::root("annotations").child("kubernetes.io/ingress.class"),
            quoted(annotation),
            "must match `ingressClassName` when both are specified",
        ));
    }
    errors
}

/// A host: a DNS subdomain, or a wildcard one (`*.example.com`).
fn host_problems(host: &str) -> Vec<String> {
    if !host.contains('*') {
        return dns1123_subdomain_problems(host);
    }
    let valid = host.strip_prefix("*.").is_some_and(|rest| dns1123_subdomain_problems(rest).is_empty());
    if valid {
        Vec::new()
    } else {
        vec![
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must \
             consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character \
             (e.g. '*.example.com', regex used for validation is \
             '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_string(),
        ]
    }
}

fn validate_backend(backend: &IngressBackend, path: &FieldPath) -> ErrorList {
    let mut errors = Vec::new();
    match (&backend.resource, &backend.service) {
        (Some(_), Some(_)) => {
            errors.push(FieldError::invalid(path, "\"\"", "cannot set both resource and service backends"))
        }
        (Some(resource), None) => {
            let path = path.child("resource");
            if let Some(group) = &resource.api_group {
                for problem in dns1123_subdomain_problems(group) {
                    errors.push(FieldError::invalid(&path.child("apiGroup"), quoted(group), problem));
                }
            }
            errors.extend(path_segment(&resource.kind, &path.child("kind")));
            errors.extend(path_segment(&resource.name, &path.child("name")));
        }
        (None, Some(service)) => {
            let service_path = path.child("service");
            if service.name.is_empty() {
                errors.push(FieldError::required(&service_path.child("name"), ""));
            } else {
                for problem in dns1035_label_problems(&service.name) {
                    errors.push(FieldError::invalid(
                        &service_path.child("name"),
                        quoted(&service.name),
                        problem,
                    ));
                }
            }
            let port = service.port.as_ref();
            let name = port.and_then(|p| p.name.as_deref()).unwrap_or_default();
            let number = port.and_then(|p| p.number).unwrap_or(0);
            match (name.is_empty(), number == 0) {
                (false, false) => {
                    errors.push(FieldError::invalid(path, "\"\"", "cannot set both port name & port number"))
                }
                (false, true) => {
                    for problem in port_name_problems(name) {
                        errors.push(FieldError::invalid(
                            &service_path.child("port").child("name"),
                            quoted(name),
                            problem,
                        ));
                    }
                }
                (true, false) => {
                    if !(1..=65535).contains(&number) {
                        errors.push(FieldError::invalid(
                            &service_path.child("port").child("number"),
                            number,
                            "must be between 1 and 65535, inclusive",
                        ));
                    }
                }
                (true, true) => errors.push(FieldError::required(path, "port name or number is required")),
            }
        }
        (None, None) => {
            errors.push(FieldError::invalid(path, "\"\"", "resource or service backend is required"))
        }
    }
    errors
}

/// Required, and usable as one URL path segment.
fn path_segment(value: &str, path: &FieldPath) -> ErrorList {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let mut errors = Vec::new();
    if value == "." || value == ".." {
        errors.push(FieldError::invalid(path, quoted(value), format!("may not be '{value}'")));
    }
    for forbidden in ["/", "%"] {
        if value.contains(forbidden) {
            errors.push(FieldError::invalid(path, quoted(value), format!("may not contain '{forbidden}'")));
        }
    }
    errors
}

/// A Service name: a DNS-1035 label.
fn dns1035_label_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    let bytes = value.as_bytes();
    let valid = bytes.first().is_some_and(u8::is_ascii_lowercase)
        && bytes.last().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
    if !valid {
        problems.push(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an \
             alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex \
             used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
                .to_string(),
        );
    }
    problems
}

/// A port name (IANA_SVC_NAME): at most 15 lower case letters, digits and single inner hyphens,
/// with at least one letter.
fn port_name_problems(name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if name.len() > 15 {
        problems.push("must be no more than 15 characters".to_string());
    }
    if !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        problems.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string());
    }
    if name.contains("--") {
        problems.push("must not contain consecutive hyphens".to_string());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        problems.push("must contain at least one letter (a-z)".to_string());
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("must not begin or end with a hyphen".to_string());
    }
    problems
}

/// The rules of an IngressClass spec; `old` for an update (the controller is immutable).
pub fn validate_ingress_class(spec: Option<&IngressClassSpec>, old: Option<&IngressClassSpec>) -> ErrorList {
    let root = FieldPath::root("spec");
    let default_spec = IngressClassSpec::default();
    let spec = spec.unwrap_or(&default_spec);
    let mut errors = Vec::new();
    let controller = spec.controller.as_deref().unwrap_or_default();
    let controller_path = root.child("controller");
    if controller.len() > 250 {
        errors.push(FieldError {
            kind: kruise_machinery::field::ErrorType::TooLong,
            path: controller_path.clone(),
            value: None,
            detail: "may not be more than 250 bytes".into(),
        });
    }
    errors.extend(domain_prefixed_path(controller, &controller_path));
    if let Some(parameters) = &spec.parameters {
        let path = root.child("parameters");
        if let Some(group) = &parameters.api_group {
            for problem in dns1123_subdomain_problems(group) {
                errors.push(FieldError::invalid(&path.child("apiGroup"), quoted(group), problem));
            }
        }
        errors.extend(path_segment(&parameters.kind, &path.child("kind")));
        errors.extend(path_segment(&parameters.name, &path.child("name")));
        match parameters.scope.as_deref() {
            None => errors.push(FieldError::required(&path.child("scope"), "")),
            Some("Namespace") if parameters.namespace.is_none() => errors.push(FieldError::required(
                &path.child("namespace"),
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some("Cluster") if parameters.namespace.is_some() => errors.push(FieldError::forbidden(
                &path.child("namespace"),
                "`parameters.scope` is set to 'Cluster'",
            )),
            Some("Namespace" | "Cluster") => {}
            Some(other) => {
                errors.push(FieldError::not_supported(&path.child("scope"), other, &["Cluster", "Namespace"]))
            }
        }
    }
    if let Some(old) = old
        && old.controller != spec.controller
    {
        errors.push(FieldError::invalid(&controller_path, quoted(controller), "field is immutable"));
    }
    errors
}

/// `acme.io/foo`: a DNS subdomain, a slash, and a non-empty path.
fn domain_prefixed_path(value: &str, path: &FieldPath) -> ErrorList {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let Some((host, rest)) =
        value.split_once('/').filter(|(host, rest)| !host.is_empty() && !rest.is_empty())
    else {
        return vec![FieldError::invalid(
            path,
            quoted(value),
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    };
    let mut errors: ErrorList = dns1123_subdomain_problems(host)
        .into_iter()
        .map(|p| FieldError::invalid(path, quoted(host), p))
        .collect();
    let allowed = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !rest.chars().all(allowed) {
        errors.push(FieldError::invalid(path, quoted(rest), "Invalid path"));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(errors: ErrorList) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn ingress_rules_report_kube_apiserver_paths_and_messages() {
        let backend = json!({"service": {"name": "web", "port": {"number": 80}}});
        let cases: Vec<(&str, Value, Vec<&str>)> = vec![
            (
                "valid",
                json!({"rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}]}),
                vec![],
            ),
            ("default backend only", json!({"defaultBackend": backend}), vec![]),
            (
                "nothing",
                json!({}),
                vec!["spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"],
            ),
            (
                "no path type",
                json!({"rules": [{"http": {"paths": [{"path": "/", "backend": backend}]}}]}),
                vec!["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"],
            ),
            (
                "relative path",
                json!({"rules": [{"http": {"paths": [{"path": "api", "pathType": "Exact", "backend": backend}]}}]}),
                vec!["spec.rules[0].http.paths[0].path: Invalid value: \"api\": must be an absolute path"],
            ),
            (
                "IP host",
                json!({"rules": [{"host": "10.0.0.1", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}]}),
                vec![
                    "spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
                ],
            ),
            (
                "no port",
                json!({"defaultBackend": {"service": {"name": "web"}}}),
                vec!["spec.defaultBackend: Required value: port name or number is required"],
            ),
            (
                "both ports",
                json!({"defaultBackend": {"service": {"name": "web", "port": {"name": "http", "number": 80}}}}),
                vec!["spec.defaultBackend: Invalid value: \"\": cannot set both port name & port number"],
            ),
            (
                "no backend",
                json!({"defaultBackend": {}}),
                vec!["spec.defaultBackend: Invalid value: \"\": resource or service backend is required"],
            ),
            (
                "no paths",
                json!({"rules": [{"http": {"paths": []}}]}),
                vec!["spec.rules[0].http.paths: Required value"],
            ),
            ("wildcard host", json!({"rules": [{"host": "*.example.com"}]}), vec![]),
            (
                "empty path type",
                json!({"rules": [{"http": {"paths": [{"path": "/", "pathType": "", "backend": backend}]}}]}),
                vec![
                    "spec.rules[0].http.paths[0].pathType: Unsupported value: \"\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"",
                ],
            ),
        ];
        for (case, value, expected) in cases {
            assert_eq!(messages(validate_ingress(Some(&value), None, true)), expected, "{case}");
        }
        let annotated = validate_ingress(
            Some(&json!({"defaultBackend": backend, "ingressClassName": "nginx"})),
            Some("traefik"),
            true,
        );
        assert_eq!(
            messages(annotated),
            [
                "annotations.kubernetes.io/ingress.class: Invalid value: \"traefik\": must match `ingressClassName` when both are specified"
            ]
        );
    }

    #[test]
    fn ingress_classes_need_a_domain_prefixed_controller_and_scoped_parameters() {
        let class = |value: Value| -> IngressClass { serde_json::from_value(value).unwrap() };
        let mut defaulted = class(
            json!({"metadata": {"name": "c"}, "spec": {"controller": "example.com/ingress", "parameters": {"kind": "Params", "name": "p"}}}),
        );
        default_ingress_class(&mut defaulted);
        assert_eq!(
            defaulted.spec.as_ref().unwrap().parameters.as_ref().unwrap().scope.as_deref(),
            Some("Cluster")
        );
        assert!(validate_ingress_class(defaulted.spec.as_ref(), None).is_empty());
        let bad = class(json!({"metadata": {"name": "c"}, "spec": {"controller": "nginx"}}));
        assert_eq!(
            messages(validate_ingress_class(bad.spec.as_ref(), None)),
            [
                "spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"
            ]
        );
        let moved = class(json!({"metadata": {"name": "c"}, "spec": {"controller": "example.com/other"}}));
        assert_eq!(
            messages(validate_ingress_class(moved.spec.as_ref(), defaulted.spec.as_ref())),
            ["spec.controller: Invalid value: \"example.com/other\": field is immutable"]
        );
    }
}
