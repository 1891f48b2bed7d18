//! ImagePullJob validation (upstream `pkg/webhook/imagepulljob/validating`), the pull settings
//! ImageListPullJob and AdvancedCronJob's image-list template share with it, and
//! [`parse_image_reference`], the container image reference parser the node daemon reuses.

use std::{collections::BTreeSet, fmt, sync::LazyLock};

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use regex::Regex;

use super::meta::{validate_label_selector, validate_non_negative, validate_object_meta};
use crate::{
    apps::{
        v1alpha1,
        v1beta1::{self, CompletionPolicy, CompletionPolicyType, ImagePullJobTemplate},
    },
    defaults::DEFAULT_IMAGE_PULL_TIMEOUT_SECONDS,
    field::{ErrorList, FieldError, FieldPath, quoted},
    intstr::display,
};

/// Validates a v1beta1 ImagePullJob; with `old`, also the rules of an update.
pub fn validate_imagepulljob_v1beta1(
    job: &v1beta1::ImagePullJob,
    old: Option<&v1beta1::ImagePullJob>,
) -> ErrorList {
    let mut errors = validate_object_meta(&job.metadata, true);
    errors.extend(validate_imagepulljob_spec(&job.spec, old.map(|old| &old.spec), &FieldPath::root("spec")));
    errors
}

/// Validates a v1alpha1 ImagePullJob (same schema as v1beta1); with `old`, also the rules of an
/// update.
pub fn validate_imagepulljob_v1alpha1(
    job: &v1alpha1::ImagePullJob,
    old: Option<&v1alpha1::ImagePullJob>,
) -> ErrorList {
    let mut errors = validate_object_meta(&job.metadata, true);
    errors.extend(validate_imagepulljob_spec(&job.spec, old.map(|old| &old.spec), &FieldPath::root("spec")));
    errors
}

/// Validates an ImagePullJob spec at `path`: the image is a parseable reference, the pull
/// settings are valid, and on update (`old`) the pull secrets did not change.
pub fn validate_imagepulljob_spec(
    spec: &v1beta1::ImagePullJobSpec,
    old: Option<&v1beta1::ImagePullJobSpec>,
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let image_path = path.child("image");
    if spec.image.is_empty() {
        errors.push(FieldError::required(&image_path, "image can not be empty"));
    } else if let Err(error) = parse_image_reference(&spec.image) {
        errors.push(FieldError::invalid(
            &image_path,
            quoted(&spec.image),
            format!("invalid image reference: {error}"),
        ));
    }
    errors.extend(validate_image_pull_job_template(&spec.template, path));
    if let Some(old) = old
        && old.template.pull_secrets != spec.template.pull_secrets
    {
        errors.push(FieldError::forbidden(&path.child("pullSecrets"), "pullSecrets is immutable"));
    }
    errors
}

/// Validates the pull settings ImagePullJob, ImageListPullJob and AdvancedCronJob's image-list
/// template share (fields inlined in the spec at `path`): node selector by names or labels but
/// not both, no duplicate names, selector and podSelector not both, an integer parallelism,
/// pull policy numbers, the image pull policy and the completion policy.
pub fn validate_image_pull_job_template(template: &ImagePullJobTemplate, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let selector_path = path.child("selector");
    if let Some(selector) = &template.selector {
        let labels = &selector.label_selector;
        if labels.match_labels.is_some() || labels.match_expressions.is_some() {
            if !selector.names.is_empty() {
                errors.push(FieldError::invalid(
                    &selector_path,
                    format!("{:?}", selector.names),
                    "can not set both names and a label selector in selector",
                ));
            }
            errors.extend(validate_label_selector(labels, &selector_path));
        }
        let mut seen = BTreeSet::new();
        for (index, name) in selector.names.iter().enumerate() {
            if !seen.insert(name) {
                errors.push(FieldError::duplicate(&selector_path.child("names").index(index), quoted(name)));
            }
        }
    }
    if let Some(pod_selector) = &template.pod_selector {
        let pod_selector_path = path.child("podSelector");
        if template.selector.is_some() {
            errors
                .push(FieldError::forbidden(&pod_selector_path, "can not set both selector and podSelector"));
        }
        errors.extend(validate_label_selector(pod_selector, &pod_selector_path));
    }
    if let Some(parallelism) = &template.parallelism {
        errors.extend(validate_integer_parallelism(parallelism, &path.child("parallelism")));
    }
    let pull_path = path.child("pullPolicy");
    if let Some(pull) = &template.pull_policy {
        if let Some(timeout) = pull.timeout_seconds {
            errors.extend(validate_non_negative(timeout.into(), &pull_path.child("timeoutSeconds")));
        }
        if let Some(backoff) = pull.backoff_limit {
            errors.extend(validate_non_negative(backoff.into(), &pull_path.child("backoffLimit")));
        }
    }
    let policy = &template.image_pull_policy;
    if !policy.is_unset() && !policy.is_known() {
        errors.push(FieldError::not_supported(
            &path.child("imagePullPolicy"),
            policy.as_str(),
            v1beta1::ImagePullPolicy::KNOWN,
        ));
    }
    let timeout = template
        .pull_policy
        .as_ref()
        .and_then(|pull| pull.timeout_seconds)
        .unwrap_or(DEFAULT_IMAGE_PULL_TIMEOUT_SECONDS);
    errors.extend(validate_pull_completion_policy(
        &template.completion_policy,
        timeout,
        &path.child("completionPolicy"),
    ));
    errors
}

/// Completion policy of a pull job: with Always, the deadline must leave room for one pull
/// (`timeout`); with Never, neither a deadline nor a TTL may be set.
fn validate_pull_completion_policy(policy: &CompletionPolicy, timeout: i32, path: &FieldPath) -> ErrorList {
    let mut errors = validate_completion_numbers(policy, path);
    match &policy.type_ {
        CompletionPolicyType::Always => {
            if let Some(deadline) =
                policy.active_deadline_seconds.filter(|d| *d > 0 && i64::from(timeout) > *d)
            {
                errors.push(FieldError::invalid(
                    &path.child("activeDeadlineSeconds"),
                    deadline,
                    format!("must not be less than pullPolicy.timeoutSeconds ({timeout})"),
                ));
            }
        }
        CompletionPolicyType::Never => errors.extend(validate_never_completion(policy, path)),
        unset if unset.is_unset() => {}
        other => errors.push(FieldError::not_supported(
            &path.child("type"),
            other.as_str(),
            CompletionPolicyType::KNOWN,
        )),
    }
    errors
}

/// The numbers of a completion policy: a positive deadline, a non-negative TTL.
pub(super) fn validate_completion_numbers(policy: &CompletionPolicy, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(deadline) = policy.active_deadline_seconds.filter(|d| *d <= 0) {
        errors.push(FieldError::invalid(
            &path.child("activeDeadlineSeconds"),
            deadline,
            "must be a positive integer",
        ));
    }
    if let Some(ttl) = policy.ttl_seconds_after_finished {
        errors.extend(validate_non_negative(ttl.into(), &path.child("ttlSecondsAfterFinished")));
    }
    errors
}

/// With a Never completion policy the job never finishes, so a deadline or a TTL is meaningless.
pub(super) fn validate_never_completion(policy: &CompletionPolicy, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(deadline) = policy.active_deadline_seconds {
        errors.push(FieldError::invalid(
            &path.child("activeDeadlineSeconds"),
            deadline,
            "activeDeadlineSeconds can only be used with the Always completion policy",
        ));
    }
    if let Some(ttl) = policy.ttl_seconds_after_finished {
        errors.push(FieldError::invalid(
            &path.child("ttlSecondsAfterFinished"),
            ttl,
            "ttlSecondsAfterFinished can only be used with the Always completion policy",
        ));
    }
    errors
}

/// A pull job's parallelism: a non-negative integer, possibly written as a string, never a
/// percentage.
fn validate_integer_parallelism(parallelism: &IntOrString, path: &FieldPath) -> ErrorList {
    let shown = display(parallelism);
    let value = match parallelism {
        IntOrString::Int(value) => i64::from(*value),
        IntOrString::String(text) if text.ends_with('%') => {
            return vec![FieldError::invalid(path, shown, "parallelism does not support a percentage")];
        }
        IntOrString::String(text) => match text.parse::<i32>() {
            Ok(value) => i64::from(value),
            Err(error) => {
                return vec![FieldError::invalid(
                    path,
                    shown,
                    format!("parallelism must be an integer: {error}"),
                )];
            }
        },
    };
    if value < 0 {
        vec![FieldError::invalid(path, shown, "parallelism must be non-negative")]
    } else {
        Vec::new()
    }
}

/// Validates a list of images to pull at `path`: at least one, at most
/// [`IMAGE_LIST_MAX_IMAGES`], no duplicates, each a parseable reference.
pub fn validate_image_list(images: &[String], path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if images.is_empty() {
        errors.push(FieldError::required(path, "images can not be empty"));
    }
    if images.len() > IMAGE_LIST_MAX_IMAGES {
        errors.push(FieldError::invalid(
            path,
            images.len(),
            format!("must have at most {IMAGE_LIST_MAX_IMAGES} images"),
        ));
    }
    let mut seen = BTreeSet::new();
    for (index, image) in images.iter().enumerate() {
        let item = path.index(index);
        if !seen.insert(image) {
            errors.push(FieldError::duplicate(&item, quoted(image)));
        } else if let Err(error) = parse_image_reference(image) {
            errors.push(FieldError::invalid(
                &item,
                quoted(image),
                format!("invalid image reference: {error}"),
            ));
        }
    }
    errors
}

/// Most images one ImageListPullJob may pull.
pub const IMAGE_LIST_MAX_IMAGES: usize = 255;

/// A parsed container image reference (`[domain/]path[:tag][@digest]`), normalized the way
/// Docker and containerd read it: a reference without a domain is on `docker.io`, and a
/// single-segment path there is under `library/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageReference {
    /// Registry host, with port when written (`docker.io`, `registry:5000`).
    pub domain: String,
    /// Repository path within the registry (`library/nginx`, `team/app`).
    pub path: String,
    /// The tag, when written.
    pub tag: Option<String>,
    /// The digest (`sha256:<hex>`), when written.
    pub digest: Option<String>,
}

impl ImageReference {
    /// The fully qualified repository name (`docker.io/library/nginx`).
    pub fn repository(&self) -> String {
        format!("{}/{}", self.domain, self.path)
    }

    /// The repository name as users usually write it: without `docker.io/`, and without
    /// `library/` for official images (`nginx`, `quay.io/team/app`).
    pub fn familiar_name(&self) -> String {
        if self.domain != DEFAULT_DOMAIN {
            return self.repository();
        }
        match self.path.strip_prefix(OFFICIAL_REPO_PREFIX) {
            Some(rest) if !rest.contains('/') => rest.to_string(),
            _ => self.path.clone(),
        }
    }

    /// What a pull asks for: the digest when there is one (a tag beside a digest is ignored),
    /// else the tag, else `latest`.
    pub fn pull_tag(&self) -> String {
        self.digest.clone().or_else(|| self.tag.clone()).unwrap_or_else(|| "latest".to_string())
    }

    /// The normalized reference a runtime pulls: `repository@digest` when digested, else
    /// `repository:tag` with `latest` filled in.
    pub fn normalized(&self) -> String {
        match &self.digest {
            Some(digest) => format!("{}@{digest}", self.repository()),
            None => format!("{}:{}", self.repository(), self.tag.as_deref().unwrap_or("latest")),
        }
    }
}

impl fmt::Display for ImageReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repository())?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// Why an image reference does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImageReferenceError {
    /// Nothing was given.
    #[error("repository name must have at least one component")]
    Empty,
    /// A bare 64-character hex string, which would be mistaken for an image ID.
    #[error("invalid repository name ({0}), cannot specify 64-byte hexadecimal strings")]
    HexIdentifier(String),
    /// The repository path has upper-case letters.
    #[error("repository name ({0}) must be lowercase")]
    Uppercase(String),
    /// The reference does not follow the `[domain/]path[:tag][@digest]` grammar.
    #[error("invalid reference format")]
    InvalidFormat,
    /// The domain and path together are longer than 255 characters.
    #[error("repository name must not be more than 255 characters")]
    NameTooLong,
    /// The digest algorithm is not sha256, sha384 or sha512.
    #[error("unsupported digest algorithm {0:?}")]
    UnsupportedDigest(String),
    /// The digest's hex part has the wrong length or characters for its algorithm.
    #[error("invalid digest {0:?}: wrong length or not lower-case hex")]
    InvalidDigest(String),
}

const DEFAULT_DOMAIN: &str = "docker.io";
const LEGACY_DEFAULT_DOMAIN: &str = "index.docker.io";
const OFFICIAL_REPO_PREFIX: &str = "library/";
const NAME_TOTAL_LENGTH_MAX: usize = 255;

/// The reference grammar of the OCI distribution `reference` package: name, optional tag,
/// optional digest; the name is an optional domain (host[:port]) and slash-separated
/// lower-case path components.
#[allow(clippy::unwrap_used)] // constant pattern
static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    let path_component = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
    let domain_component = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
    let host = format!(r"(?:{domain_component}(?:\.{domain_component})*|\[[a-fA-F0-9:]+\])");
    let domain = format!(r"{host}(?::[0-9]+)?");
    let tag = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}";
    let digest = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
    Regex::new(&format!(
        r"^(?:({domain})/)?({path_component}(?:/{path_component})*)(?::({tag}))?(?:@({digest}))?$"
    ))
    .unwrap()
});

#[allow(clippy::unwrap_used)] // constant pattern
static HEX_IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-f0-9]{64}$").unwrap());

/// Parses a container image reference the way the container runtime (and upstream's
/// `NormalizeImageRef`) does: `nginx`, `nginx:1.25`, `registry:5000/team/app@sha256:<hex>`.
/// A reference without a domain is on `docker.io` (single-segment names under `library/`);
/// the tag and digest are returned as written (see [`ImageReference::pull_tag`] and
/// [`ImageReference::normalized`] for what a pull uses).
pub fn parse_image_reference(image: &str) -> Result<ImageReference, ImageReferenceError> {
    if image.is_empty() {
        return Err(ImageReferenceError::Empty);
    }
    if HEX_IDENTIFIER.is_match(image) {
        return Err(ImageReferenceError::HexIdentifier(image.to_string()));
    }
    let (domain, remainder) = split_domain(image);
    let remote_name = remainder.split_once(':').map_or(remainder.as_str(), |(name, _)| name);
    if remote_name.to_lowercase() != remote_name {
        return Err(ImageReferenceError::Uppercase(remote_name.to_string()));
    }
    let full = format!("{domain}/{remainder}");
    let captures = REFERENCE.captures(&full).ok_or(ImageReferenceError::InvalidFormat)?;
    let group = |index: usize| captures.get(index).map(|m| m.as_str().to_string());
    let (domain, path) = match (group(1), group(2)) {
        (Some(domain), Some(path)) => (domain, path),
        _ => return Err(ImageReferenceError::InvalidFormat),
    };
    if domain.len() + 1 + path.len() > NAME_TOTAL_LENGTH_MAX {
        return Err(ImageReferenceError::NameTooLong);
    }
    let digest = group(4);
    if let Some(digest) = &digest {
        check_digest(digest)?;
    }
    Ok(ImageReference { domain, path, tag: group(3), digest })
}

/// Splits off the registry domain: the first segment is a domain when it has a dot or a port,
/// is `localhost`, or has upper-case letters; otherwise the image is on docker.io.
fn split_domain(image: &str) -> (String, String) {
    let (domain, remainder) = match image.split_once('/') {
        Some((first, rest))
            if first.contains(['.', ':']) || first == "localhost" || first.to_lowercase() != first =>
        {
            (first.to_string(), rest.to_string())
        }
        _ => (DEFAULT_DOMAIN.to_string(), image.to_string()),
    };
    let domain = if domain == LEGACY_DEFAULT_DOMAIN { DEFAULT_DOMAIN.to_string() } else { domain };
    let remainder = if domain == DEFAULT_DOMAIN && !remainder.contains('/') {
        format!("{OFFICIAL_REPO_PREFIX}{remainder}")
    } else {
        remainder
    };
    (domain, remainder)
}

fn check_digest(digest: &str) -> Result<(), ImageReferenceError> {
    let (algorithm, hex) =
        digest.split_once(':').ok_or_else(|| ImageReferenceError::InvalidDigest(digest.into()))?;
    let length = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        other => return Err(ImageReferenceError::UnsupportedDigest(other.to_string())),
    };
    let lower_hex = hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if hex.len() != length || !lower_hex {
        return Err(ImageReferenceError::InvalidDigest(digest.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000abc";

    /// Image, repository, tag, digest, familiar name.
    type Case<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>, &'a str);

    #[test]
    fn references_normalize_like_the_runtime() {
        let digested = format!("registry:5000/team/app:v1@{SHA}");
        let cases: Vec<Case<'_>> = vec![
            ("nginx", "docker.io/library/nginx", None, None, "nginx"),
            ("nginx:1.25", "docker.io/library/nginx", Some("1.25"), None, "nginx"),
            ("team/app:v2", "docker.io/team/app", Some("v2"), None, "team/app"),
            ("index.docker.io/library/busybox", "docker.io/library/busybox", None, None, "busybox"),
            ("localhost/app", "localhost/app", None, None, "localhost/app"),
            ("quay.io/org/img:latest", "quay.io/org/img", Some("latest"), None, "quay.io/org/img"),
            ("[::1]:5000/app", "[::1]:5000/app", None, None, "[::1]:5000/app"),
            (&digested, "registry:5000/team/app", Some("v1"), Some(SHA), "registry:5000/team/app"),
        ];
        for (image, repository, tag, digest, familiar) in cases {
            let parsed = parse_image_reference(image).unwrap_or_else(|e| panic!("{image}: {e}"));
            assert_eq!(parsed.repository(), repository, "{image}");
            assert_eq!(parsed.tag.as_deref(), tag, "{image}");
            assert_eq!(parsed.digest.as_deref(), digest, "{image}");
            assert_eq!(parsed.familiar_name(), familiar, "{image}");
        }
        let plain = parse_image_reference("nginx").expect("parses");
        assert_eq!(
            (plain.pull_tag(), plain.normalized()),
            ("latest".into(), "docker.io/library/nginx:latest".into())
        );
        let both = parse_image_reference(&digested).expect("parses");
        assert_eq!(both.pull_tag(), SHA);
        assert_eq!(both.normalized(), format!("registry:5000/team/app@{SHA}"));
    }

    #[test]
    fn bad_references_say_why() {
        let hex = "a".repeat(64);
        let long = format!("example.com/{}", "a".repeat(250));
        let cases = [
            ("", ImageReferenceError::Empty),
            (hex.as_str(), ImageReferenceError::HexIdentifier(hex.clone())),
            ("Nginx", ImageReferenceError::Uppercase("library/Nginx".into())),
            ("nginx:", ImageReferenceError::InvalidFormat),
            ("ngi nx", ImageReferenceError::InvalidFormat),
            ("nginx@sha256:abc", ImageReferenceError::InvalidFormat),
            ("-nginx", ImageReferenceError::InvalidFormat),
            ("a//b", ImageReferenceError::InvalidFormat),
            (long.as_str(), ImageReferenceError::NameTooLong),
            (
                "nginx@md5:0123456789abcdef0123456789abcdef",
                ImageReferenceError::UnsupportedDigest("md5".into()),
            ),
            (
                "nginx@sha256:0123456789abcdef0123456789abcdef",
                ImageReferenceError::InvalidDigest("sha256:0123456789abcdef0123456789abcdef".into()),
            ),
        ];
        for (image, expected) in cases {
            assert_eq!(parse_image_reference(image), Err(expected), "{image:?}");
        }
        assert!(parse_image_reference("REGISTRY.local/app").is_ok(), "domains may have capitals");
        assert!(parse_image_reference(&format!("nginx:{}", "t".repeat(129))).is_err());
    }

    #[test]
    fn parallelism_is_an_integer() {
        let path = FieldPath::root("p");
        assert!(validate_integer_parallelism(&IntOrString::Int(3), &path).is_empty());
        assert!(validate_integer_parallelism(&IntOrString::String("4".into()), &path).is_empty());
        for bad in [IntOrString::Int(-1), IntOrString::String("50%".into()), IntOrString::String("x".into())]
        {
            assert_eq!(validate_integer_parallelism(&bad, &path).len(), 1, "{bad:?}");
        }
    }
}
