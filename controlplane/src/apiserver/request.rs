//! What a request asks for: the API group and version, the resource, namespace, name,
//! subresource and verb, parsed from the URL path and method the way kube-apiserver's
//! `RequestInfoFactory` does.

use http::Method;

/// Where in the API a path points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `/api`: the core group's versions.
    CoreVersions,
    /// `/apis`: every API group.
    Groups,
    /// `/apis/{group}`: one group.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`: the resources of a group version.
    GroupVersion {
        /// API group ("" for core).
        group: String,
        /// Version.
        version: String,
    },
    /// A resource request.
    Resource(ResourceRequest),
}

/// The verbs of resource requests (as RBAC names them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    /// GET one object.
    Get,
    /// GET a collection.
    List,
    /// GET a collection with `watch=true`.
    Watch,
    /// POST to a collection (or to a subresource such as `binding` or `eviction`).
    Create,
    /// PUT one object.
    Update,
    /// PATCH one object.
    Patch,
    /// DELETE one object.
    Delete,
    /// DELETE a collection.
    DeleteCollection,
}

impl Verb {
    /// True for the verbs that write (create, update, patch, delete, deletecollection).
    pub fn is_write(self) -> bool {
        matches!(self, Self::Create | Self::Update | Self::Patch | Self::Delete | Self::DeleteCollection)
    }
}

/// A request for objects of one resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRequest {
    /// API group ("" for core).
    pub group: String,
    /// Version in the URL.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
    /// Namespace from the URL, if any.
    pub namespace: Option<String>,
    /// Object name, if the request is for one object.
    pub name: Option<String>,
    /// Subresource (`status`, `scale`, `binding`, `eviction`, `resize`, `finalize`, ...).
    pub subresource: Option<String>,
    /// What the request does.
    pub verb: Verb,
}

/// Why a path is not an API path.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("the server could not find the requested resource")]
pub struct NotAnApiPath;

/// Parses a request path (without query) and method. `watch` is the `watch` query parameter.
pub fn parse(method: &Method, path: &str, watch: bool) -> Result<Target, NotAnApiPath> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api"] => return Ok(Target::CoreVersions),
        ["apis"] => return Ok(Target::Groups),
        ["apis", group] => return Ok(Target::Group(group.to_string())),
        ["api", version] => {
            return Ok(Target::GroupVersion { group: String::new(), version: version.to_string() });
        }
        ["apis", group, version] => {
            return Ok(Target::GroupVersion { group: group.to_string(), version: version.to_string() });
        }
        ["api", version, rest @ ..] => (String::new(), version.to_string(), rest),
        ["apis", group, version, rest @ ..] => (group.to_string(), version.to_string(), rest),
        _ => return Err(NotAnApiPath),
    };

    // `/namespaces/{ns}/{resource}/...` addresses namespaced objects, but `/namespaces/{name}` and
    // `/namespaces/{name}/{status|finalize}` address the Namespace object itself.
    let (namespace, rest) = match rest {
        ["namespaces", namespace, resource, tail @ ..]
            if !(group.is_empty() && tail.is_empty() && matches!(*resource, "status" | "finalize")) =>
        {
            (Some(namespace.to_string()), {
                let mut parts = vec![*resource];
                parts.extend_from_slice(tail);
                parts
            })
        }
        other => (None, other.to_vec()),
    };
    let (resource, name, subresource) = match rest.as_slice() {
        [resource] => (resource.to_string(), None, None),
        [resource, name] => (resource.to_string(), Some(name.to_string()), None),
        [resource, name, subresource] => {
            (resource.to_string(), Some(name.to_string()), Some(subresource.to_string()))
        }
        _ => return Err(NotAnApiPath),
    };

    let verb = match (method.as_str(), name.is_some()) {
        ("GET" | "HEAD", true) => Verb::Get,
        ("GET" | "HEAD", false) if watch => Verb::Watch,
        ("GET" | "HEAD", false) => Verb::List,
        ("POST", _) => Verb::Create,
        ("PUT", true) => Verb::Update,
        ("PATCH", true) => Verb::Patch,
        ("DELETE", true) => Verb::Delete,
        ("DELETE", false) => Verb::DeleteCollection,
        _ => return Err(NotAnApiPath),
    };
    // A watch of one object: GET .../pods?watch=true&fieldSelector=metadata.name=x is the usual
    // form; GET .../pods/x?watch=true is the legacy one, served as a watch filtered by name.
    let verb = if verb == Verb::Get && watch && subresource.is_none() { Verb::Watch } else { verb };
    Ok(Target::Resource(ResourceRequest { group, version, resource, namespace, name, subresource, verb }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(method: Method, path: &str, watch: bool) -> ResourceRequest {
        match parse(&method, path, watch) {
            Ok(Target::Resource(request)) => request,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn discovery_paths() {
        assert_eq!(parse(&Method::GET, "/api", false), Ok(Target::CoreVersions));
        assert_eq!(parse(&Method::GET, "/apis/", false), Ok(Target::Groups));
        assert_eq!(parse(&Method::GET, "/apis/apps", false), Ok(Target::Group("apps".into())));
        assert_eq!(
            parse(&Method::GET, "/api/v1", false),
            Ok(Target::GroupVersion { group: String::new(), version: "v1".into() })
        );
        assert_eq!(
            parse(&Method::GET, "/apis/apps.kruise.io/v1beta1", false),
            Ok(Target::GroupVersion { group: "apps.kruise.io".into(), version: "v1beta1".into() })
        );
        assert_eq!(parse(&Method::GET, "/healthz", false), Err(NotAnApiPath));
    }

    /// (group, resource, namespace, name, subresource, verb) a path parses to.
    type Expected<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>, Verb);

    #[test]
    fn resource_paths_and_verbs() {
        let cases: Vec<(Method, &str, bool, Expected)> = vec![
            (Method::GET, "/api/v1/pods", false, ("", "pods", None, None, None, Verb::List)),
            (Method::GET, "/api/v1/pods", true, ("", "pods", None, None, None, Verb::Watch)),
            (
                Method::GET,
                "/api/v1/namespaces/ns/pods",
                false,
                ("", "pods", Some("ns"), None, None, Verb::List),
            ),
            (
                Method::POST,
                "/api/v1/namespaces/ns/pods",
                false,
                ("", "pods", Some("ns"), None, None, Verb::Create),
            ),
            (
                Method::GET,
                "/api/v1/namespaces/ns/pods/p",
                false,
                ("", "pods", Some("ns"), Some("p"), None, Verb::Get),
            ),
            (
                Method::GET,
                "/api/v1/namespaces/ns/pods/p",
                true,
                ("", "pods", Some("ns"), Some("p"), None, Verb::Watch),
            ),
            (
                Method::POST,
                "/api/v1/namespaces/ns/pods/p/binding",
                false,
                ("", "pods", Some("ns"), Some("p"), Some("binding"), Verb::Create),
            ),
            (
                Method::PATCH,
                "/api/v1/namespaces/ns/pods/p/resize",
                false,
                ("", "pods", Some("ns"), Some("p"), Some("resize"), Verb::Patch),
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/ns/pods",
                false,
                ("", "pods", Some("ns"), None, None, Verb::DeleteCollection),
            ),
            (Method::GET, "/api/v1/namespaces", false, ("", "namespaces", None, None, None, Verb::List)),
            (
                Method::GET,
                "/api/v1/namespaces/ns",
                false,
                ("", "namespaces", None, Some("ns"), None, Verb::Get),
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/ns/finalize",
                false,
                ("", "namespaces", None, Some("ns"), Some("finalize"), Verb::Update),
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/ns/status",
                false,
                ("", "namespaces", None, Some("ns"), Some("status"), Verb::Update),
            ),
            (Method::GET, "/api/v1/nodes/n1", false, ("", "nodes", None, Some("n1"), None, Verb::Get)),
            (
                Method::PATCH,
                "/apis/apps.kruise.io/v1beta1/namespaces/d/clonesets/web/scale",
                false,
                ("apps.kruise.io", "clonesets", Some("d"), Some("web"), Some("scale"), Verb::Patch),
            ),
            (
                Method::PUT,
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.y/status",
                false,
                (
                    "apiextensions.k8s.io",
                    "customresourcedefinitions",
                    None,
                    Some("x.y"),
                    Some("status"),
                    Verb::Update,
                ),
            ),
        ];
        for (method, path, watch, (group, res, ns, name, sub, verb)) in cases {
            let request = resource(method, path, watch);
            assert_eq!(
                (
                    request.group.as_str(),
                    request.resource.as_str(),
                    request.namespace.as_deref(),
                    request.name.as_deref(),
                    request.subresource.as_deref(),
                    request.verb
                ),
                (group, res, ns, name, sub, verb),
                "{path}"
            );
        }
    }

    #[test]
    fn too_deep_paths_are_not_api_paths() {
        assert_eq!(parse(&Method::GET, "/api/v1/namespaces/a/pods/b/c/d", false), Err(NotAnApiPath));
        assert_eq!(parse(&Method::PUT, "/api/v1/pods", false), Err(NotAnApiPath));
    }
}
