//! Bearer tokens and their scopes.
//!
//! Tokens are long random secrets handed to pipelines and people; the server only ever keeps
//! their SHA-256 (`sha256:<hex>` in the tokens file), so a leaked tokens file or database grants
//! nothing. A fast hash is the right tool here: tokens are high-entropy (256 random bits from
//! [`generate_token`]), so there is nothing for a slow password hash (argon2, bcrypt) to protect
//! against, and a lookup stays a hash-map probe on every request.
//!
//! The tokens file is YAML (or JSON, which is YAML):
//!
//! ```yaml
//! tokens:
//!   - name: ci-pipeline              # the actor in audit records
//!     hash: "sha256:9f86d08…"        # `kruise api hash-token` prints it
//!     namespaces: [default, staging] # or "*"
//!     actions: [rollout, audit-read] # among rollout, image-pull, recreate, job, job-read,
//!                                    # audit-read; or "*"
//! ```
//!
//! Cluster-scoped targets (SidecarSets, whose sidecars run in pods of any namespace) need
//! `namespaces: "*"` ([`Principal::may_cluster_wide`]).
//!
//! A token itself never reaches a log line or an audit record: only its name does.

use std::{collections::HashMap, fmt, path::Path, sync::Arc};

use base64::Engine;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::error::ConfigError;

/// What a token may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Start, read, pause, resume, promote and abort rollouts.
    Rollout,
    /// Request and read image pre-pulls.
    ImagePull,
    /// Request and read container recreates.
    Recreate,
    /// Run AdvancedCronJobs now (a manual run) and read job results.
    Job,
    /// Read job results only (a BroadcastJob's per-node results): for dashboards and pipelines
    /// that follow jobs without starting any.
    JobRead,
    /// Read the audit history.
    AuditRead,
}

impl Action {
    /// The name used in tokens files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rollout => "rollout",
            Self::ImagePull => "image-pull",
            Self::Recreate => "recreate",
            Self::Job => "job",
            Self::JobRead => "job-read",
            Self::AuditRead => "audit-read",
        }
    }

    /// Every action.
    pub const ALL: [Action; 6] =
        [Self::Rollout, Self::ImagePull, Self::Recreate, Self::Job, Self::JobRead, Self::AuditRead];

    /// Whether holding this action also grants `other`: `job` includes reading job results
    /// (`job-read`), as `rollout` includes reading rollouts.
    pub fn implies(self, other: Action) -> bool {
        self == other || (self == Self::Job && other == Self::JobRead)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set that is either everything (`"*"`) or the listed items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope<T> {
    /// Every item.
    All,
    /// Only these.
    Only(Vec<T>),
}

impl Scope<Action> {
    /// Whether the scope grants `action`, directly or through an action that implies it.
    pub fn grants(&self, action: Action) -> bool {
        match self {
            Self::All => true,
            Self::Only(actions) => actions.iter().any(|held| held.implies(action)),
        }
    }
}

impl<T: PartialEq> Scope<T> {
    /// Whether `item` is in the scope.
    pub fn allows(&self, item: &T) -> bool {
        match self {
            Self::All => true,
            Self::Only(items) => items.contains(item),
        }
    }
}

/// An authenticated caller: the token's name and scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// The token's name, recorded as the actor.
    pub name: String,
    /// Namespaces it may act in.
    pub namespaces: Scope<String>,
    /// Actions it may perform.
    pub actions: Scope<Action>,
}

impl Principal {
    /// Whether the principal may perform `action` in `namespace`.
    pub fn may(&self, action: Action, namespace: &str) -> bool {
        self.actions.grants(action) && self.namespaces.allows(&namespace.to_string())
    }

    /// Whether the principal may perform `action` on a cluster-scoped object (a SidecarSet),
    /// whose effects reach pods in any namespace: only with every namespace (`"*"`) in scope.
    pub fn may_cluster_wide(&self, action: Action) -> bool {
        self.actions.grants(action) && self.namespaces == Scope::All
    }
}

/// Why a request carries no valid identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnonymousReason {
    /// No `Authorization` header.
    Missing,
    /// A header that is not `Bearer <token>`.
    Malformed,
    /// A token that matches no entry.
    Unknown,
}

impl AnonymousReason {
    /// The message a client gets (never the token).
    pub fn message(self) -> &'static str {
        match self {
            Self::Missing => "no bearer token: send `Authorization: Bearer <token>`",
            Self::Malformed => "the Authorization header is not `Bearer <token>`",
            Self::Unknown => "the bearer token is not valid",
        }
    }
}

/// Who sent a request, as far as authentication could tell.
#[derive(Clone, Debug)]
pub enum Identity {
    /// A valid token.
    Principal(Arc<Principal>),
    /// No valid token (recorded as actor `anonymous`).
    Anonymous(AnonymousReason),
}

impl Identity {
    /// The actor name for audit records.
    pub fn actor(&self) -> &str {
        match self {
            Self::Principal(principal) => &principal.name,
            Self::Anonymous(_) => "anonymous",
        }
    }
}

/// The actor name of unauthenticated requests.
pub const ANONYMOUS: &str = "anonymous";

/// The SHA-256 of a token, as kept in the tokens file (`sha256:<64 hex>`).
pub fn hash_token(token: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(token.as_bytes())))
}

/// A new random token: `kr_` and 43 URL-safe characters (256 bits).
pub fn generate_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("kr_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The tokens the server accepts, by hash.
#[derive(Clone, Debug, Default)]
pub struct TokenRegistry {
    by_hash: HashMap<[u8; 32], Arc<Principal>>,
}

/// One entry of a tokens file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenEntry {
    name: String,
    #[serde(default)]
    hash: Option<String>,
    /// Refused with a hint: tokens must be stored hashed.
    #[serde(default)]
    token: Option<serde::de::IgnoredAny>,
    namespaces: ScopeEntry<String>,
    actions: ScopeEntry<Action>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ScopeEntry<T> {
    Star(String),
    List(Vec<T>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    tokens: Vec<TokenEntry>,
}

impl TokenRegistry {
    /// A registry with one token granting everything (what `kruise up` makes for its user).
    pub fn admin(name: &str, token: &str) -> Self {
        let mut registry = Self::default();
        registry.insert(
            digest_of(token),
            Principal { name: name.into(), namespaces: Scope::All, actions: Scope::All },
        );
        registry
    }

    /// Adds a principal for a token (tests and embedding).
    pub fn with_token(mut self, token: &str, principal: Principal) -> Self {
        self.insert(digest_of(token), principal);
        self
    }

    fn insert(&mut self, digest: [u8; 32], principal: Principal) {
        self.by_hash.insert(digest, Arc::new(principal));
    }

    /// Reads a tokens file (YAML or JSON).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let error = |message: String| ConfigError::Tokens { path: path.display().to_string(), message };
        let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
        Self::parse(&text).map_err(error)
    }

    /// Parses the text of a tokens file.
    pub fn parse(text: &str) -> Result<Self, String> {
        let file: TokensFile = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        let mut registry = Self::default();
        let mut names = std::collections::HashSet::new();
        for (index, entry) in file.tokens.into_iter().enumerate() {
            let at = format!("tokens[{index}] ({})", entry.name);
            if entry.name.trim().is_empty() {
                return Err(format!("tokens[{index}]: name must not be empty"));
            }
            if !names.insert(entry.name.clone()) {
                return Err(format!("{at}: the name is used twice"));
            }
            if entry.token.is_some() {
                return Err(format!(
                    "{at}: tokens are stored hashed: replace `token` with `hash: sha256:<hex>` \
                     (print it with `kruise api hash-token`)"
                ));
            }
            let hash = entry.hash.ok_or_else(|| format!("{at}: `hash` is missing"))?;
            let digest = parse_hash(&hash).ok_or_else(|| {
                format!("{at}: hash must be `sha256:` followed by 64 hex digits (`kruise api hash-token`)")
            })?;
            let namespaces = scope(entry.namespaces).map_err(|e| format!("{at}: namespaces: {e}"))?;
            let actions = scope(entry.actions).map_err(|e| format!("{at}: actions: {e}"))?;
            if registry.by_hash.contains_key(&digest) {
                return Err(format!("{at}: the same token hash is listed twice"));
            }
            registry.insert(digest, Principal { name: entry.name, namespaces, actions });
        }
        Ok(registry)
    }

    /// How many tokens are known.
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// Whether no token is known (every request is then refused).
    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    /// The identity for an `Authorization` header value (or its absence).
    pub fn authenticate(&self, authorization: Option<&[u8]>) -> Identity {
        let Some(value) = authorization else {
            return Identity::Anonymous(AnonymousReason::Missing);
        };
        let Ok(value) = std::str::from_utf8(value) else {
            return Identity::Anonymous(AnonymousReason::Malformed);
        };
        let mut parts = value.trim().splitn(2, ' ');
        let (Some(scheme), Some(token)) = (parts.next(), parts.next()) else {
            return Identity::Anonymous(AnonymousReason::Malformed);
        };
        let token = token.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
            return Identity::Anonymous(AnonymousReason::Malformed);
        }
        match self.by_hash.get(&digest_of(token)) {
            Some(principal) => Identity::Principal(principal.clone()),
            None => Identity::Anonymous(AnonymousReason::Unknown),
        }
    }
}

fn digest_of(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn parse_hash(text: &str) -> Option<[u8; 32]> {
    let hex_part = text.trim().strip_prefix("sha256:")?;
    let bytes = hex::decode(hex_part.to_ascii_lowercase()).ok()?;
    bytes.try_into().ok()
}

fn scope<T: PartialEq>(entry: ScopeEntry<T>) -> Result<Scope<T>, String> {
    match entry {
        ScopeEntry::Star(text) if text == "*" => Ok(Scope::All),
        ScopeEntry::Star(text) => Err(format!("expected a list or \"*\", got {text:?}")),
        ScopeEntry::List(items) if items.is_empty() => Err("must not be empty".into()),
        ScopeEntry::List(items) => Ok(Scope::Only(items)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn file(token: &str) -> String {
        format!(
            "tokens:\n  - name: ci\n    hash: {}\n    namespaces: [default]\n    actions: [rollout]\n  - name: auditor\n    hash: {}\n    namespaces: '*'\n    actions: [audit-read]\n",
            hash_token(token),
            hash_token("other")
        )
    }

    #[test]
    fn authenticates_by_hash_and_scopes() {
        let registry = TokenRegistry::parse(&file("secret-1")).unwrap();
        assert_eq!(registry.len(), 2);
        let Identity::Principal(ci) = registry.authenticate(Some(b"Bearer secret-1")) else { panic!() };
        assert_eq!(ci.name, "ci");
        assert!(ci.may(Action::Rollout, "default"));
        assert!(!ci.may(Action::Rollout, "prod"));
        assert!(!ci.may(Action::AuditRead, "default"));
        let Identity::Principal(auditor) = registry.authenticate(Some(b"bearer other")) else { panic!() };
        assert!(auditor.may(Action::AuditRead, "anything"));
        assert!(!ci.may_cluster_wide(Action::Rollout), "a namespaced token may not touch SidecarSets");
        assert!(auditor.may_cluster_wide(Action::AuditRead));
        assert!(!auditor.may_cluster_wide(Action::Rollout));
    }

    #[test]
    fn job_implies_job_read_and_not_the_reverse() {
        let text = format!(
            "tokens:\n  - name: runner\n    hash: {}\n    namespaces: [batch]\n    actions: [job]\n  - name: viewer\n    hash: {}\n    namespaces: [batch]\n    actions: [job-read]\n",
            hash_token("runner-token"),
            hash_token("viewer-token")
        );
        let registry = TokenRegistry::parse(&text).unwrap();
        let Identity::Principal(runner) = registry.authenticate(Some(b"Bearer runner-token")) else {
            panic!()
        };
        let Identity::Principal(viewer) = registry.authenticate(Some(b"Bearer viewer-token")) else {
            panic!()
        };
        assert!(runner.may(Action::Job, "batch") && runner.may(Action::JobRead, "batch"));
        assert!(!runner.may(Action::JobRead, "default"), "outside its namespaces");
        assert!(viewer.may(Action::JobRead, "batch"));
        assert!(!viewer.may(Action::Job, "batch"), "job-read does not run jobs");
        assert!(!runner.may(Action::Rollout, "batch"));
    }

    #[test]
    fn anonymous_reasons() {
        let registry = TokenRegistry::parse(&file("secret-1")).unwrap();
        let reason = |header: Option<&[u8]>| match registry.authenticate(header) {
            Identity::Anonymous(reason) => reason,
            Identity::Principal(p) => panic!("authenticated as {}", p.name),
        };
        assert_eq!(reason(None), AnonymousReason::Missing);
        assert_eq!(reason(Some(b"Basic abc")), AnonymousReason::Malformed);
        assert_eq!(reason(Some(b"Bearer")), AnonymousReason::Malformed);
        assert_eq!(reason(Some(b"Bearer wrong")), AnonymousReason::Unknown);
    }

    #[test]
    fn refuses_plain_tokens_and_bad_hashes() {
        let plain = "tokens:\n  - name: x\n    token: abc\n    namespaces: '*'\n    actions: '*'\n";
        assert!(TokenRegistry::parse(plain).unwrap_err().contains("stored hashed"));
        let bad = "tokens:\n  - name: x\n    hash: md5:abc\n    namespaces: '*'\n    actions: '*'\n";
        assert!(TokenRegistry::parse(bad).unwrap_err().contains("sha256:"));
        let action =
            "tokens:\n  - name: x\n    hash: sha256:00\n    namespaces: '*'\n    actions: [deploy]\n";
        assert!(TokenRegistry::parse(action).is_err());
    }

    #[test]
    fn json_is_accepted_and_generated_tokens_are_long() {
        let token = generate_token();
        assert!(token.starts_with("kr_") && token.len() == 46, "{token}");
        let json = format!(
            r#"{{"tokens":[{{"name":"a","hash":"{}","namespaces":"*","actions":"*"}}]}}"#,
            hash_token(&token)
        );
        let registry = TokenRegistry::parse(&json).unwrap();
        let header = format!("Bearer {token}");
        assert!(matches!(registry.authenticate(Some(header.as_bytes())), Identity::Principal(_)));
    }
}
