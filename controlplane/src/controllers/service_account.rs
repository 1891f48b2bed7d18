//! The `default` ServiceAccount of every namespace, as kube-controller-manager's serviceaccounts
//! controller keeps it: made in every active namespace (those that exist at start, new ones, and
//! again when someone deletes it); namespaces being deleted are left alone. Clients such as
//! upstream OpenKruise's e2e suite wait for it before they create pods.

use serde_json::{Value, json};

use super::CONTROLLER_TICK;
use crate::{
    apiserver::{
        api::Api,
        objects,
        options::{FieldValidation, WriteOptions},
    },
    storage::{CollectionKey, ObjectKey},
};

/// The ServiceAccount every namespace gets.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";

/// The namespaces (by name) that need their `default` ServiceAccount made (pure): the active
/// ones (phase `Active`, not being deleted) for which `has_account` says there is none yet.
pub fn namespaces_missing_account<'a>(
    namespaces: impl IntoIterator<Item = &'a Value>,
    has_account: impl Fn(&str) -> bool,
) -> Vec<String> {
    namespaces
        .into_iter()
        .filter(|namespace| is_active(namespace))
        .filter_map(|namespace| objects::name(namespace))
        .filter(|name| !has_account(name))
        .map(str::to_string)
        .collect()
}

/// Whether kube-controller-manager would make objects in the namespace: phase `Active` (a
/// namespace being deleted is `Terminating`).
fn is_active(namespace: &Value) -> bool {
    !objects::is_deleting(namespace)
        && namespace.pointer("/status/phase").and_then(Value::as_str) == Some("Active")
}

pub(super) async fn run(api: Api) {
    let namespaces = CollectionKey { group: String::new(), resource: "namespaces".into(), namespace: None };
    loop {
        let (all, _) = api.store.list(&namespaces);
        let missing = namespaces_missing_account(all.iter().map(|ns| &**ns), |namespace| {
            api.store.get(&account_key(namespace)).is_some()
        });
        for namespace in missing {
            create_default(&api, &namespace).await;
        }
        tokio::time::sleep(CONTROLLER_TICK).await;
    }
}

fn account_key(namespace: &str) -> ObjectKey {
    ObjectKey {
        group: String::new(),
        resource: "serviceaccounts".into(),
        namespace: Some(namespace.to_string()),
        name: DEFAULT_SERVICE_ACCOUNT.into(),
    }
}

async fn create_default(api: &Api, namespace: &str) {
    let Some(def) = api.registry.find("", "v1", "serviceaccounts") else { return };
    let account = json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": namespace},
    });
    let options = WriteOptions {
        dry_run: false,
        field_manager: "kube-controller-manager".into(),
        field_validation: FieldValidation::Ignore,
        force: false,
    };
    match api.create(&def, "v1", Some(namespace), account, &options).await {
        Ok(_) => tracing::debug!(namespace, "created the default service account"),
        // Made meanwhile, or the namespace began terminating: both are fine, as upstream.
        Err(error) if error.code == 409 || error.code == 403 || error.code == 404 => {}
        Err(error) => tracing::warn!(namespace, %error, "could not create the default service account"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespace(name: &str, phase: &str, deleting: bool) -> Value {
        let mut ns = json!({"metadata": {"name": name}, "status": {"phase": phase}});
        if deleting {
            ns["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        ns
    }

    #[test]
    fn active_namespaces_without_an_account_get_one() {
        let cases: &[(&str, Value, bool, bool)] = &[
            // (case, namespace, has an account, needs one)
            ("new namespace", namespace("a", "Active", false), false, true),
            ("account exists", namespace("a", "Active", false), true, false),
            ("terminating", namespace("a", "Terminating", true), false, false),
            ("marked for deletion, phase not yet updated", namespace("a", "Active", true), false, false),
            ("no status yet", json!({"metadata": {"name": "a"}}), false, false),
        ];
        for (case, ns, has, needs) in cases {
            let missing = namespaces_missing_account([ns], |_| *has);
            assert_eq!(missing == ["a"], *needs, "{case}: {missing:?}");
        }
    }

    #[test]
    fn each_namespace_is_checked_for_its_own_account() {
        let namespaces = [
            namespace("default", "Active", false),
            namespace("team-a", "Active", false),
            namespace("team-b", "Active", false),
        ];
        let missing = namespaces_missing_account(&namespaces, |name| name == "team-a");
        assert_eq!(missing, ["default", "team-b"]);
    }
}
