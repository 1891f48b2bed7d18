//! Tables of the remaining kinds with a printer: leases, disruption budgets, priority and
//! storage classes, role bindings and webhook configurations.

use serde_json::{Value, json};

use super::{
    AGE, ColumnDef, NAME, Printer, col,
    format::{self, list, text},
    wide,
};

/// The printer of a coordination, policy, scheduling, storage, RBAC or admission kind.
pub(super) fn printer(group: &str, kind: &str) -> Option<Printer> {
    Some(match (group, kind) {
        ("coordination.k8s.io", "Lease") => Printer::new(LEASE, lease_cells),
        ("policy", "PodDisruptionBudget") => Printer::new(BUDGET, budget_cells),
        ("scheduling.k8s.io", "PriorityClass") => Printer::new(PRIORITY_CLASS, priority_class_cells),
        ("storage.k8s.io", "StorageClass") => Printer::new(STORAGE_CLASS, storage_class_cells),
        ("rbac.authorization.k8s.io", "RoleBinding") => Printer::new(ROLE_BINDING, binding_cells),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            Printer::new(CLUSTER_ROLE_BINDING, binding_cells)
        }
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => Printer::new(WEBHOOKS, webhook_cells),
        _ => return None,
    })
}

fn name(object: &Value) -> Value {
    json!(text(object, "/metadata/name"))
}

const LEASE: &[ColumnDef] =
    &[NAME, col("Holder", "string", "The identity currently holding the lease."), AGE];

fn lease_cells(lease: &Value, now: i64) -> Vec<Value> {
    vec![name(lease), json!(text(lease, "/spec/holderIdentity")), json!(format::age(lease, now))]
}

const BUDGET: &[ColumnDef] = &[
    NAME,
    col("Min Available", "string", "Pods that must stay available (number or percentage)."),
    col("Max Unavailable", "string", "Pods that may be unavailable (number or percentage)."),
    col("Allowed Disruptions", "integer", "Pod disruptions currently allowed."),
    AGE,
];

fn budget_cells(budget: &Value, now: i64) -> Vec<Value> {
    let bound =
        |pointer: &str| budget.pointer(pointer).map_or_else(|| "N/A".to_string(), format::int_or_string);
    vec![
        name(budget),
        json!(bound("/spec/minAvailable")),
        json!(bound("/spec/maxUnavailable")),
        json!(format::int(budget, "/status/disruptionsAllowed")),
        json!(format::age(budget, now)),
    ]
}

const PRIORITY_CLASS: &[ColumnDef] = &[
    NAME,
    col("Value", "integer", "The priority of pods of this class."),
    col("Global-Default", "boolean", "Whether pods without a class get this one."),
    AGE,
    col("PreemptionPolicy", "string", "Whether pods of this class preempt lower-priority ones."),
];

fn priority_class_cells(class: &Value, now: i64) -> Vec<Value> {
    vec![
        name(class),
        json!(format::int(class, "/value")),
        json!(class.get("globalDefault").and_then(Value::as_bool).unwrap_or(false)),
        json!(format::age(class, now)),
        json!(text(class, "/preemptionPolicy")),
    ]
}

const STORAGE_CLASS: &[ColumnDef] = &[
    NAME,
    col("Provisioner", "string", "The volume plugin that provisions volumes of this class."),
    col("ReclaimPolicy", "string", "What happens to provisioned volumes when released."),
    col("VolumeBindingMode", "string", "When volumes are bound and provisioned."),
    col("AllowVolumeExpansion", "string", "Whether claims of this class may grow."),
    AGE,
];

fn storage_class_cells(class: &Value, now: i64) -> Vec<Value> {
    let annotation = |key: &str| {
        class.pointer("/metadata/annotations").and_then(|a| a.get(key)).and_then(Value::as_str)
            == Some("true")
    };
    let mut shown = text(class, "/metadata/name").to_string();
    if annotation("storageclass.kubernetes.io/is-default-class")
        || annotation("storageclass.beta.kubernetes.io/is-default-class")
    {
        shown.push_str(" (default)");
    }
    vec![
        json!(shown),
        json!(text(class, "/provisioner")),
        json!(format::or(text(class, "/reclaimPolicy"), "Delete")),
        json!(format::or(text(class, "/volumeBindingMode"), "Immediate")),
        json!(class.get("allowVolumeExpansion").and_then(Value::as_bool).unwrap_or(false)),
        json!(format::age(class, now)),
    ]
}

const ROLE_BINDING: &[ColumnDef] = &[
    NAME,
    col("Role", "string", "The bound role, as kind/name."),
    AGE,
    wide("Users", "string", "Users in the roleBinding"),
    wide("Groups", "string", "Groups in the roleBinding"),
    wide("ServiceAccounts", "string", "ServiceAccounts in the roleBinding"),
];

const CLUSTER_ROLE_BINDING: &[ColumnDef] = &[
    NAME,
    col("Role", "string", "The bound cluster role, as kind/name."),
    AGE,
    wide("Users", "string", "Users in the clusterRoleBinding"),
    wide("Groups", "string", "Groups in the clusterRoleBinding"),
    wide("ServiceAccounts", "string", "ServiceAccounts in the clusterRoleBinding"),
];

/// The users, groups and service accounts (`namespace/name`) a binding names.
pub(super) fn subjects(binding: &Value) -> (String, String, String) {
    let (mut users, mut groups, mut accounts) = (Vec::new(), Vec::new(), Vec::new());
    for subject in list(binding, "/subjects") {
        let name = text(subject, "/name");
        match text(subject, "/kind") {
            "User" => users.push(name.to_string()),
            "Group" => groups.push(name.to_string()),
            "ServiceAccount" => accounts.push(format!("{}/{name}", text(subject, "/namespace"))),
            _ => {}
        }
    }
    (users.join(", "), groups.join(", "), accounts.join(", "))
}

fn binding_cells(binding: &Value, now: i64) -> Vec<Value> {
    let (users, groups, accounts) = subjects(binding);
    vec![
        name(binding),
        json!(format!("{}/{}", text(binding, "/roleRef/kind"), text(binding, "/roleRef/name"))),
        json!(format::age(binding, now)),
        json!(users),
        json!(groups),
        json!(accounts),
    ]
}

const WEBHOOKS: &[ColumnDef] =
    &[NAME, col("Webhooks", "integer", "Number of webhooks in the configuration."), AGE];

fn webhook_cells(configuration: &Value, now: i64) -> Vec<Value> {
    vec![
        name(configuration),
        json!(format::count(configuration, "/webhooks")),
        json!(format::age(configuration, now)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_704_067_200; // 2024-01-01T00:00:00Z

    #[test]
    fn budgets_show_their_bounds() {
        let budget = json!({"spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}});
        assert_eq!(budget_cells(&budget, NOW)[1..4], [json!("50%"), json!("N/A"), json!(1)]);
        let numeric = json!({"spec": {"maxUnavailable": 2}});
        assert_eq!(budget_cells(&numeric, NOW)[1..4], [json!("N/A"), json!("2"), json!(0)]);
    }

    #[test]
    fn classes_and_leases() {
        let class = json!({"metadata": {"name": "standard",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "sim.io/disk"});
        assert_eq!(
            storage_class_cells(&class, NOW)[..5],
            [
                json!("standard (default)"),
                json!("sim.io/disk"),
                json!("Delete"),
                json!("Immediate"),
                json!(false)
            ]
        );
        let priority = json!({"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"});
        let cells = priority_class_cells(&priority, NOW);
        assert_eq!(
            (cells[1].clone(), cells[2].clone(), cells[4].clone()),
            (json!(1000), json!(false), json!("Never"))
        );
        let lease = json!({"spec": {"holderIdentity": "node-1"}});
        assert_eq!(lease_cells(&lease, NOW)[1], json!("node-1"));
    }

    #[test]
    fn bindings_list_their_subjects() {
        let binding = json!({
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [
                {"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "ci", "namespace": "build"}, {"kind": "User", "name": "bob"},
            ],
        });
        assert_eq!(
            binding_cells(&binding, NOW)[1..],
            [
                json!("ClusterRole/view"),
                json!("<unknown>"),
                json!("alice, bob"),
                json!("devs"),
                json!("build/ci")
            ]
        );
        let hooks = json!({"webhooks": [{"name": "a"}, {"name": "b"}]});
        assert_eq!(webhook_cells(&hooks, NOW)[1], json!(2));
    }
}
