//! CustomResourceDefinition manifests built from the [`catalog`](crate::catalog).

use k8s_openapi::{
    apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
        CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
        CustomResourceSubresourceScale, CustomResourceSubresourceStatus, CustomResourceSubresources,
        CustomResourceValidation, ServiceReference, WebhookClientConfig, WebhookConversion,
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};

use crate::{
    catalog::{KindInfo, all_kinds},
    schema::SchemaError,
};

/// Namespace the manager's webhook service lives in (upstream `kruise-system`).
pub const KRUISE_NAMESPACE: &str = "kruise-system";
/// Name of the webhook service the conversion webhook is reached through.
pub const WEBHOOK_SERVICE: &str = "kruise-webhook-service";
/// Path of the conversion webhook.
pub const CONVERSION_PATH: &str = "/convert";

/// The CRD of one kind. Kinds converted by webhook point at [`WEBHOOK_SERVICE`]; the manager
/// patches in the CA bundle (or a URL, outside a cluster) when it starts.
pub fn crd_for(kind: &KindInfo) -> Result<CustomResourceDefinition, SchemaError> {
    let versions = kind
        .versions
        .iter()
        .map(|version| {
            let columns: Vec<CustomResourceColumnDefinition> = version
                .printer_columns
                .iter()
                .map(|column| CustomResourceColumnDefinition {
                    name: column.name.to_string(),
                    type_: column.type_.to_string(),
                    json_path: column.json_path.to_string(),
                    priority: (column.priority != 0).then_some(column.priority),
                    description: (!column.description.is_empty()).then(|| column.description.to_string()),
                    format: None,
                })
                .collect();
            Ok(CustomResourceDefinitionVersion {
                name: version.name.to_string(),
                served: true,
                storage: version.storage,
                schema: Some(CustomResourceValidation { open_api_v3_schema: Some((version.schema)()?) }),
                additional_printer_columns: (!columns.is_empty()).then_some(columns),
                subresources: Some(CustomResourceSubresources {
                    status: version
                        .status_subresource
                        .then(|| CustomResourceSubresourceStatus(serde_json::json!({}))),
                    scale: version.scale.map(|scale| CustomResourceSubresourceScale {
                        spec_replicas_path: scale.spec_replicas.to_string(),
                        status_replicas_path: scale.status_replicas.to_string(),
                        label_selector_path: Some(scale.label_selector.to_string()),
                    }),
                }),
                ..Default::default()
            })
        })
        .collect::<Result<Vec<_>, SchemaError>>()?;

    let conversion = kind.conversion_webhook.then(|| CustomResourceConversion {
        strategy: "Webhook".to_string(),
        webhook: Some(WebhookConversion {
            client_config: Some(WebhookClientConfig {
                service: Some(ServiceReference {
                    namespace: KRUISE_NAMESPACE.to_string(),
                    name: WEBHOOK_SERVICE.to_string(),
                    path: Some(CONVERSION_PATH.to_string()),
                    port: None,
                }),
                ..Default::default()
            }),
            conversion_review_versions: vec!["v1".to_string(), "v1beta1".to_string()],
        }),
    });

    Ok(CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{}", kind.plural, kind.group)),
            labels: Some([("app.kubernetes.io/part-of".to_string(), "kruise-rs".to_string())].into()),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: kind.group.to_string(),
            names: CustomResourceDefinitionNames {
                kind: kind.kind.to_string(),
                list_kind: Some(format!("{}List", kind.kind)),
                plural: kind.plural.to_string(),
                singular: Some(kind.singular.to_string()),
                short_names: (!kind.short_names.is_empty())
                    .then(|| kind.short_names.iter().map(|name| name.to_string()).collect()),
                categories: None,
            },
            scope: if kind.namespaced { "Namespaced" } else { "Cluster" }.to_string(),
            versions,
            conversion,
            preserve_unknown_fields: None,
        },
        status: None,
    })
}

/// Every Kruise CRD, in catalog order.
pub fn all_crds() -> Result<Vec<CustomResourceDefinition>, SchemaError> {
    all_kinds().iter().map(crd_for).collect()
}
