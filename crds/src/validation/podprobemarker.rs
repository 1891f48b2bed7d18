//! PodProbeMarker validation (upstream `pkg/webhook/podprobemarker/validating`), and the probe
//! spec rules NodePodProbe shares.

use std::collections::BTreeSet;

use k8s_openapi::{
    api::core::v1::{HTTPGetAction, TCPSocketAction},
    apimachinery::pkg::util::intstr::IntOrString,
};

use super::meta::{
    qualified_name_problems, validate_annotations, validate_label_selector, validate_labels,
    validate_non_negative, validate_object_meta,
};
use crate::{
    apps::v1alpha1::{self, ContainerProbeSpec, PodContainerProbe, ProbeState},
    field::{ErrorList, FieldError, FieldPath, quoted},
    selector,
};

/// Pod condition types Kubernetes and Kruise set themselves; a probe may not take their names.
pub const POD_PROBE_MARKER_RESERVED_CONDITIONS: &[&str] =
    &["PodScheduled", "Initialized", "Ready", "ContainersReady", "KruisePodReady", "InPlaceUpdateReady"];

/// Validates a PodProbeMarker; with `old`, also the rules of an update (the selector is
/// immutable).
pub fn validate_podprobemarker(
    marker: &v1alpha1::PodProbeMarker,
    old: Option<&v1alpha1::PodProbeMarker>,
) -> ErrorList {
    let path = FieldPath::root("spec");
    let spec = &marker.spec;
    let mut errors = validate_object_meta(&marker.metadata, true);
    let selector_path = path.child("selector");
    match &spec.selector {
        None => errors.push(FieldError::required(&selector_path, "a selector is required")),
        Some(value) => {
            errors.extend(validate_label_selector(value, &selector_path));
            if selector::is_empty(value) {
                errors.push(FieldError::invalid(
                    &selector_path,
                    "{}",
                    "empty selector is not valid for podProbeMarker",
                ));
            }
        }
    }
    let probes_path = path.child("probes");
    if spec.probes.is_empty() {
        errors.push(FieldError::required(&probes_path, "at least one probe is required"));
    }
    let mut names = BTreeSet::new();
    let mut condition_types = BTreeSet::new();
    for (index, probe) in spec.probes.iter().enumerate() {
        let item = probes_path.index(index);
        errors.extend(validate_probe(probe, &item));
        if !probe.name.is_empty() && !names.insert(probe.name.as_str()) {
            errors.push(FieldError::duplicate(&item.child("name"), quoted(&probe.name)));
        }
        let condition = probe.pod_condition_type.as_str();
        if !condition.is_empty() && !condition_types.insert(condition) {
            errors.push(FieldError::duplicate(&item.child("podConditionType"), quoted(condition)));
        }
    }
    if let Some(old) = old
        && old.spec.selector != spec.selector
    {
        errors.push(FieldError::forbidden(&selector_path, "selector is immutable"));
    }
    errors
}

fn validate_probe(probe: &PodContainerProbe, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let name_path = path.child("name");
    if probe.name.is_empty() {
        errors.push(FieldError::required(&name_path, "probe name can not be empty"));
    } else if probe.name.contains('#') {
        errors.push(FieldError::invalid(&name_path, quoted(&probe.name), "probe name can not contain '#'"));
    } else if POD_PROBE_MARKER_RESERVED_CONDITIONS.contains(&probe.name.as_str()) {
        errors.push(FieldError::invalid(
            &name_path,
            quoted(&probe.name),
            "probe name can not be a built-in pod condition type",
        ));
    }
    if probe.container_name.is_empty() {
        errors
            .push(FieldError::required(&path.child("containerName"), "probe containerName can not be empty"));
    }
    errors.extend(validate_container_probe_spec(&probe.probe, &path.child("probe")));

    let condition = probe.pod_condition_type.as_str();
    let condition_path = path.child("podConditionType");
    if condition.is_empty() && probe.marker_policy.is_empty() {
        errors.push(FieldError::required(path, "podConditionType and markerPolicy can not both be empty"));
    }
    if !condition.is_empty() {
        for problem in qualified_name_problems(condition) {
            errors.push(FieldError::invalid(&condition_path, quoted(condition), problem));
        }
        if POD_PROBE_MARKER_RESERVED_CONDITIONS.contains(&condition) {
            errors.push(FieldError::invalid(
                &condition_path,
                quoted(condition),
                "podConditionType can not be a built-in pod condition type",
            ));
        }
    }

    let mut states = BTreeSet::new();
    for (index, policy) in probe.marker_policy.iter().enumerate() {
        let item = path.child("markerPolicy").index(index);
        let state_path = item.child("state");
        if !matches!(policy.state, ProbeState::Succeeded | ProbeState::Failed) {
            errors.push(FieldError::not_supported(
                &state_path,
                policy.state.as_str(),
                &["Succeeded", "Failed"],
            ));
        } else if !states.insert(policy.state.as_str()) {
            errors.push(FieldError::duplicate(&state_path, quoted(policy.state.as_str())));
        }
        if policy.labels.is_empty() && policy.annotations.is_empty() {
            errors.push(FieldError::required(
                &item,
                "marker policy labels and annotations can not both be empty",
            ));
        }
        errors.extend(validate_labels(Some(&policy.labels), &item.child("labels")));
        errors.extend(validate_annotations(Some(&policy.annotations), &item.child("annotations")));
    }
    errors
}

/// Validates a probe spec run by the node daemon: exactly one of exec (with a command), httpGet
/// or tcpSocket (gRPC is not supported by the daemon), no `host` (probes always target the pod
/// IP), valid ports, an HTTP path and scheme, and non-negative timing fields.
pub fn validate_container_probe_spec(probe: &ContainerProbeSpec, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let set = [
        ("exec", probe.exec.is_some()),
        ("httpGet", probe.http_get.is_some()),
        ("tcpSocket", probe.tcp_socket.is_some()),
    ];
    let handlers = set.iter().filter(|(_, present)| *present).count();
    // The first handler set is checked; each further one is reported as extra.
    let first = set.iter().find(|(_, present)| *present).map(|(name, _)| *name);
    for (name, _) in set.iter().filter(|(name, present)| *present && Some(*name) != first) {
        errors.push(FieldError::forbidden(&path.child(name), "may not specify more than 1 handler type"));
    }
    let exec_without_command =
        probe.exec.as_ref().and_then(|exec| exec.command.as_ref()).is_none_or(|command| command.is_empty());
    match first {
        Some("exec") if exec_without_command => {
            errors.push(FieldError::required(&path.child("exec").child("command"), ""))
        }
        Some("httpGet") => errors
            .extend(probe.http_get.iter().flat_map(|get| validate_http_get(get, &path.child("httpGet")))),
        Some("tcpSocket") => errors.extend(
            probe.tcp_socket.iter().flat_map(|tcp| validate_tcp_socket(tcp, &path.child("tcpSocket"))),
        ),
        _ => {}
    }
    if probe.grpc.is_some() {
        errors.push(FieldError::forbidden(&path.child("grpc"), "gRPC probes are not supported"));
    } else if handlers == 0 {
        errors.push(FieldError::required(path, "must specify a handler type"));
    }
    for (name, value) in [
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ] {
        errors.extend(validate_non_negative(value.into(), &path.child(name)));
    }
    errors
}

fn validate_tcp_socket(tcp: &TCPSocketAction, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(host) = tcp.host.as_deref().filter(|h| !h.is_empty()) {
        errors.push(FieldError::invalid(
            &path.child("host"),
            quoted(host),
            "host field in probes is not allowed",
        ));
    }
    errors.extend(validate_port(&tcp.port, &path.child("port")));
    errors
}

fn validate_http_get(get: &HTTPGetAction, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    match get.path.as_deref() {
        None | Some("") => errors.push(FieldError::required(&path.child("path"), "")),
        Some(url) if !is_valid_url_path(url) => {
            errors.push(FieldError::invalid(&path.child("path"), quoted(url), "must be a valid URL path"))
        }
        Some(_) => {}
    }
    if let Some(host) = get.host.as_deref().filter(|h| !h.is_empty()) {
        errors.push(FieldError::invalid(
            &path.child("host"),
            quoted(host),
            "host field in probes is not allowed",
        ));
    }
    errors.extend(validate_port(&get.port, &path.child("port")));
    let scheme = get.scheme.as_deref().unwrap_or_default();
    if !matches!(scheme, "HTTP" | "HTTPS") {
        errors.push(FieldError::not_supported(&path.child("scheme"), scheme, &["HTTP", "HTTPS"]));
    }
    for (index, header) in get.http_headers.iter().flatten().enumerate() {
        let valid =
            !header.name.is_empty() && header.name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !valid {
            errors.push(FieldError::invalid(
                &path.child("httpHeaders").index(index).child("name"),
                quoted(&header.name),
                "a valid HTTP header name must consist of alphanumeric characters or '-'",
            ));
        }
    }
    errors
}

/// A port number (1-65535) or an IANA service name.
fn validate_port(port: &IntOrString, path: &FieldPath) -> ErrorList {
    match port {
        IntOrString::Int(number) if !(1..=65535).contains(number) => {
            vec![FieldError::invalid(path, number, "must be between 1 and 65535, inclusive")]
        }
        IntOrString::String(name) if !is_port_name(name) => vec![FieldError::invalid(
            path,
            quoted(name),
            "must be no more than 15 characters, contain only lowercase letters, digits and '-', contain at \
             least one letter and not start, end or repeat '-'",
        )],
        _ => Vec::new(),
    }
}

fn is_port_name(name: &str) -> bool {
    (1..=15).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && name.bytes().any(|b| b.is_ascii_lowercase())
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// Whether a probe path parses as a URL reference: no control characters or spaces, and every
/// `%` starts a two-digit hex escape.
fn is_valid_url_path(url: &str) -> bool {
    let bytes = url.as_bytes();
    if bytes.iter().any(|b| b.is_ascii_control() || *b == b' ') {
        return false;
    }
    bytes.iter().enumerate().all(|(index, b)| {
        *b != b'%'
            || (bytes.get(index + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(index + 2).is_some_and(u8::is_ascii_hexdigit))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ExecAction, GRPCAction};

    fn paths(errors: &ErrorList) -> Vec<String> {
        errors.iter().map(|e| e.path.to_string()).collect()
    }

    #[test]
    fn handlers_are_counted_and_checked() {
        let path = FieldPath::root("p");
        let exec = ContainerProbeSpec {
            exec: Some(ExecAction { command: Some(vec!["true".into()]) }),
            ..Default::default()
        };
        assert!(validate_container_probe_spec(&exec, &path).is_empty());
        assert_eq!(paths(&validate_container_probe_spec(&ContainerProbeSpec::default(), &path)), ["p"]);
        let two = ContainerProbeSpec {
            tcp_socket: Some(TCPSocketAction { port: IntOrString::Int(80), host: None }),
            ..exec.clone()
        };
        assert_eq!(paths(&validate_container_probe_spec(&two, &path)), ["p.tcpSocket"]);
        let grpc =
            ContainerProbeSpec { grpc: Some(GRPCAction { port: 9000, service: None }), ..Default::default() };
        assert_eq!(paths(&validate_container_probe_spec(&grpc, &path)), ["p.grpc"]);
        let http = ContainerProbeSpec {
            http_get: Some(HTTPGetAction {
                path: Some("/a%zz".into()),
                host: Some("example.com".into()),
                port: IntOrString::String("Bad_Name".into()),
                scheme: Some("FTP".into()),
                ..Default::default()
            }),
            period_seconds: -1,
            ..Default::default()
        };
        assert_eq!(
            paths(&validate_container_probe_spec(&http, &path)),
            ["p.httpGet.path", "p.httpGet.host", "p.httpGet.port", "p.httpGet.scheme", "p.periodSeconds"]
        );
    }
}
