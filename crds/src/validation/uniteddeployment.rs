//! UnitedDeployment validation (INVENTORY d.4; upstream
//! `pkg/webhook/uniteddeployment/validating/uniteddeployment_validation.go`). Both served
//! versions share one spec type, so their field paths are the same.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::{NodeSelectorTerm, PodTemplateSpec, Toleration},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta},
        util::intstr::IntOrString,
    },
};

use super::{
    meta::{
        dns1123_label_problems, dns1123_subdomain_problems, label_value_problems, qualified_name_problems,
        validate_label_selector, validate_non_negative, validate_object_meta,
    },
    pod::validate_pod_template,
};
use crate::{
    apps::{
        v1alpha1,
        v1beta1::{self, Subset, SubsetTemplate, UnitedDeploymentSpec},
    },
    field::{ErrorList, FieldError, FieldPath, quoted},
    intstr::display,
    selector,
};

/// Validates a v1beta1 UnitedDeployment; with `old`, also the rules of an update.
pub fn validate_uniteddeployment_v1beta1(
    united: &v1beta1::UnitedDeployment,
    old: Option<&v1beta1::UnitedDeployment>,
) -> ErrorList {
    validate_parts(&united.metadata, &united.spec, old.map(|old| &old.spec))
}

/// Validates a v1alpha1 UnitedDeployment; with `old`, also the rules of an update.
pub fn validate_uniteddeployment_v1alpha1(
    united: &v1alpha1::UnitedDeployment,
    old: Option<&v1alpha1::UnitedDeployment>,
) -> ErrorList {
    validate_parts(&united.metadata, &united.spec, old.map(|old| &old.spec))
}

fn validate_parts(
    metadata: &ObjectMeta,
    spec: &UnitedDeploymentSpec,
    old: Option<&UnitedDeploymentSpec>,
) -> ErrorList {
    let mut errors = validate_object_meta(metadata, true);
    errors.extend(validate_spec(spec));
    if let Some(old) = old {
        errors.extend(validate_spec_update(spec, old));
    }
    errors
}

fn validate_spec(spec: &UnitedDeploymentSpec) -> ErrorList {
    let path = FieldPath::root("spec");
    let mut errors = ErrorList::new();
    if let Some(replicas) = spec.replicas {
        errors.extend(validate_non_negative(replicas.into(), &path.child("replicas")));
    }
    let selector_path = path.child("selector");
    match &spec.selector {
        None => errors.push(FieldError::required(&selector_path, "")),
        Some(value) => {
            errors.extend(validate_label_selector(value, &selector_path));
            if selector::is_empty(value) {
                errors.push(FieldError::invalid(
                    &selector_path,
                    "{}",
                    "empty selector is invalid for uniteddeployment",
                ));
            }
        }
    }

    let schedule = &spec.topology.schedule_strategy;
    let adaptive = schedule.type_ == v1beta1::UnitedDeploymentScheduleStrategyType::Adaptive;
    let reserves = adaptive && schedule.adaptive.as_ref().is_some_and(|a| a.reserve_unschedulable_pods);
    let stateful = spec.template.stateful_set_template.is_some()
        || spec.template.advanced_stateful_set_template.is_some();
    if reserves && stateful {
        errors.push(FieldError::invalid(
            &path.child("topology").child("scheduleStrategy").child("adaptive").child("reserveUnschedulablePods"),
            true,
            "reserving unschedulable pods only works with stateless subsets (deploymentTemplate or cloneSetTemplate)",
        ));
    }

    errors.extend(validate_template(&spec.template, spec.selector.as_ref(), &path.child("template")));
    let subsets_path = path.child("topology").child("subsets");
    errors.extend(validate_subset_replicas(spec.replicas, &spec.topology.subsets, &subsets_path));

    let mut names = BTreeSet::new();
    for (index, subset) in spec.topology.subsets.iter().enumerate() {
        let item = subsets_path.index(index);
        if subset.name.is_empty() {
            errors.push(FieldError::required(&item.child("name"), ""));
        } else {
            if !names.insert(subset.name.as_str()) {
                errors.push(FieldError::duplicate(&item.child("name"), quoted(&subset.name)));
            }
            for problem in dns1123_label_problems(&subset.name) {
                errors.push(FieldError::invalid(&item.child("name"), quoted(&subset.name), problem));
            }
        }
        errors
            .extend(validate_node_selector_term(&subset.node_selector_term, &item.child("nodeSelectorTerm")));
        errors.extend(validate_tolerations(&subset.tolerations, &item.child("tolerations")));
        if subset.replicas.is_some() && adaptive {
            errors.push(FieldError::forbidden(
                &item.child("replicas"),
                "the Adaptive schedule strategy needs minReplicas/maxReplicas instead of replicas",
            ));
        }
    }

    let strategy_path = path.child("updateStrategy");
    let strategy = &spec.update_strategy;
    if !strategy.type_.is_unset() && !strategy.type_.is_known() {
        errors.push(FieldError::not_supported(
            &strategy_path.child("type"),
            strategy.type_.as_str(),
            &["Manual", ""],
        ));
    } else if let Some(manual) = &strategy.manual_update {
        for name in manual.partitions.keys() {
            if !names.contains(name.as_str()) {
                errors.push(FieldError::invalid(
                    &strategy_path.child("manualUpdate").child("partitions").key(name),
                    quoted(name),
                    format!("subset {name} does not exist"),
                ));
            }
        }
    }
    errors
}

fn validate_template(
    template: &SubsetTemplate,
    ud_selector: Option<&LabelSelector>,
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let count = [
        template.stateful_set_template.is_some(),
        template.advanced_stateful_set_template.is_some(),
        template.clone_set_template.is_some(),
        template.deployment_template.is_some(),
    ]
    .into_iter()
    .filter(|set| *set)
    .count();
    let kinds = "statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate or deploymentTemplate";
    if count == 0 {
        errors.push(FieldError::required(path, format!("one of {kinds} is required")));
    } else if count > 1 {
        errors.push(FieldError::invalid(
            path,
            format!("{count} templates"),
            format!("only one of {kinds} may be set"),
        ));
    }

    // Both the workload's labels and its pods' labels must match the UnitedDeployment selector.
    let usable_selector = ud_selector.filter(|s| !selector::is_empty(s));
    let check_labels = |labels: Option<&BTreeMap<String, String>>, at: &FieldPath, errors: &mut ErrorList| {
        if let Some(ud_selector) = usable_selector {
            let labels = labels.cloned().unwrap_or_default();
            if !selector::matches(ud_selector, &labels) {
                errors.push(FieldError::invalid(
                    at,
                    format!("{labels:?}"),
                    "`selector` does not match template `labels`",
                ));
            }
        }
    };

    if let Some(statefulset) = &template.stateful_set_template {
        let at = path.child("statefulSetTemplate");
        let spec_path = at.child("spec");
        let spec = &statefulset.spec;
        check_labels(
            statefulset.metadata.labels.as_ref(),
            &at.child("metadata").child("labels"),
            &mut errors,
        );
        if let Some(replicas) = spec.replicas {
            errors.push(FieldError::invalid(
                &spec_path.child("replicas"),
                replicas,
                "replicas of a subset template are not used",
            ));
        }
        let strategy = spec.update_strategy.as_ref();
        let strategy_type = strategy.and_then(|s| s.type_.as_deref()).unwrap_or("RollingUpdate");
        if let Some(partition) = strategy.and_then(|s| s.rolling_update.as_ref()).and_then(|r| r.partition)
            && strategy_type == "RollingUpdate"
        {
            errors.push(FieldError::invalid(
                &spec_path.child("updateStrategy").child("rollingUpdate").child("partition"),
                partition,
                "partition of a subset template is not used (set manualUpdate.partitions instead)",
            ));
        }
        if let Some(policy) = spec.pod_management_policy.as_deref().filter(|p| !p.is_empty())
            && !matches!(policy, "OrderedReady" | "Parallel")
        {
            errors.push(FieldError::not_supported(
                &spec_path.child("podManagementPolicy"),
                policy,
                &["OrderedReady", "Parallel"],
            ));
        }
        let strategy_path = spec_path.child("updateStrategy");
        match strategy_type {
            "RollingUpdate" => {
                if let Some(max) =
                    strategy.and_then(|s| s.rolling_update.as_ref()).and_then(|r| r.max_unavailable.as_ref())
                {
                    let max_path = strategy_path.child("rollingUpdate").child("maxUnavailable");
                    errors.extend(super::statefulset::validate_strict_int_or_percent(max, &max_path));
                    errors.extend(super::statefulset::validate_percent_at_most_100(max, &max_path));
                    if *max == IntOrString::Int(0) || *max == IntOrString::String("0%".into()) {
                        errors.push(FieldError::invalid(&max_path, display(max), "must not be less than 1"));
                    }
                }
            }
            "OnDelete" => {
                if strategy.is_some_and(|s| s.rolling_update.is_some()) {
                    errors.push(FieldError::invalid(
                        &strategy_path.child("rollingUpdate"),
                        "{...}",
                        "only allowed for updateStrategy type 'RollingUpdate'",
                    ));
                }
            }
            "" => {}
            other => errors.push(FieldError::not_supported(
                &strategy_path.child("type"),
                other,
                &["RollingUpdate", "OnDelete"],
            )),
        }
        if let Some(retention) = &spec.persistent_volume_claim_retention_policy {
            let retention_path = spec_path.child("persistentVolumeClaimRetentionPolicy");
            for (name, value) in
                [("whenDeleted", &retention.when_deleted), ("whenScaled", &retention.when_scaled)]
            {
                if let Some(value) = value.as_deref().filter(|v| !matches!(*v, "Retain" | "Delete")) {
                    errors.push(FieldError::not_supported(
                        &retention_path.child(name),
                        value,
                        &["Retain", "Delete"],
                    ));
                }
            }
        }
        if let Some(seconds) = spec.min_ready_seconds {
            errors.extend(validate_non_negative(seconds.into(), &spec_path.child("minReadySeconds")));
        }
        if let Some(start) = spec.ordinals.as_ref().and_then(|o| o.start) {
            errors.extend(validate_non_negative(start.into(), &spec_path.child("ordinals").child("start")));
        }
        let claims: Vec<String> = spec
            .volume_claim_templates
            .iter()
            .flatten()
            .filter_map(|claim| claim.metadata.name.clone())
            .collect();
        errors.extend(validate_subset_pod_template(
            &spec.template,
            &claims,
            &spec_path.child("template"),
            &check_labels,
        ));
    }
    if let Some(statefulset) = &template.advanced_stateful_set_template {
        let at = path.child("advancedStatefulSetTemplate");
        let spec = &statefulset.spec;
        let spec_path = at.child("spec");
        check_labels(
            statefulset.metadata.labels.as_ref(),
            &at.child("metadata").child("labels"),
            &mut errors,
        );
        if let Some(replicas) = spec.replicas {
            errors.push(FieldError::invalid(
                &spec_path.child("replicas"),
                replicas,
                "replicas of a subset template are not used",
            ));
        }
        let rolling_strategy =
            matches!(spec.update_strategy.type_, v1beta1::StatefulSetUpdateStrategyType::RollingUpdate)
                || spec.update_strategy.type_.is_unset();
        if let Some(partition) = spec.update_strategy.rolling_update.as_ref().and_then(|r| r.partition)
            && rolling_strategy
        {
            errors.push(FieldError::invalid(
                &spec_path.child("updateStrategy").child("rollingUpdate").child("partition"),
                partition,
                "partition of a subset template is not used (set manualUpdate.partitions instead)",
            ));
        }
        let claims: Vec<String> =
            spec.volume_claim_templates.iter().filter_map(|claim| claim.metadata.name.clone()).collect();
        errors.extend(validate_subset_pod_template(
            &spec.template,
            &claims,
            &spec_path.child("template"),
            &check_labels,
        ));
    }
    if let Some(cloneset) = &template.clone_set_template {
        let spec_path = path.child("cloneSetTemplate").child("spec");
        let claims: Vec<String> = cloneset
            .spec
            .volume_claim_templates
            .iter()
            .filter_map(|claim| claim.metadata.name.clone())
            .collect();
        errors.extend(validate_subset_pod_template(
            &cloneset.spec.template,
            &claims,
            &spec_path.child("template"),
            &check_labels,
        ));
    }
    if let Some(deployment) = &template.deployment_template {
        let at = path.child("deploymentTemplate");
        let spec_path = at.child("spec");
        check_labels(deployment.metadata.labels.as_ref(), &at.child("metadata").child("labels"), &mut errors);
        if let Some(replicas) = deployment.spec.replicas {
            errors.push(FieldError::invalid(
                &spec_path.child("replicas"),
                replicas,
                "replicas of a subset template are not used",
            ));
        }
        errors.extend(validate_subset_pod_template(
            &deployment.spec.template,
            &[],
            &spec_path.child("template"),
            &check_labels,
        ));
    }
    errors
}

/// Reports, into the list, labels at the path that the UnitedDeployment selector does not match.
type LabelCheck<'a> = dyn Fn(Option<&BTreeMap<String, String>>, &FieldPath, &mut ErrorList) + 'a;

/// The pod template of a subset workload: labels matching the UnitedDeployment selector, a
/// valid pod template, restart policy Always and no active deadline.
fn validate_subset_pod_template(
    template: &PodTemplateSpec,
    claims: &[String],
    path: &FieldPath,
    check_labels: &LabelCheck<'_>,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let labels = template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    check_labels(labels, &path.child("metadata").child("labels"), &mut errors);
    errors.extend(validate_pod_template(template, path, claims));
    if let Some(pod) = &template.spec {
        let pod_path = path.child("spec");
        if let Some(policy) = pod.restart_policy.as_deref().filter(|p| !p.is_empty() && *p != "Always") {
            errors.push(FieldError::not_supported(&pod_path.child("restartPolicy"), policy, &["Always"]));
        }
        if pod.active_deadline_seconds.is_some() {
            errors.push(FieldError::forbidden(
                &pod_path.child("activeDeadlineSeconds"),
                "activeDeadlineSeconds is not supported in a subset workload",
            ));
        }
    }
    errors
}

/// A subset's `replicas`, `minReplicas` or `maxReplicas` as a pod count (upstream
/// `ParseSubsetReplicas`): an integer of at least 0, or a whole percentage in [0, 100] of the
/// UnitedDeployment's replicas (rounded half up), which then must be set.
pub fn parse_uniteddeployment_subset_replicas(
    total: Option<i32>,
    value: &IntOrString,
) -> Result<i32, String> {
    match value {
        IntOrString::Int(count) if *count < 0 => {
            Err(format!("subset replicas ({count}) must not be less than 0"))
        }
        IntOrString::Int(count) => Ok(*count),
        IntOrString::String(text) => {
            let Some(total) = total.filter(|t| *t >= 0) else {
                return Err(format!(
                    "subset replicas ({text}) can not be a percentage when spec.replicas is not set"
                ));
            };
            let Some(number) = text.strip_suffix('%') else {
                return Err(format!(
                    "subset replicas ({text}) must be an integer or a percentage ending in '%'"
                ));
            };
            let percent: i64 = number
                .parse()
                .map_err(|error| format!("subset replicas ({text}) must be a whole percentage: {error}"))?;
            if !(0..=100).contains(&percent) {
                return Err(format!("subset replicas ({text}) must be in the range [0%, 100%]"));
            }
            let scaled = (f64::from(total) * percent as f64 / 100.0 + 0.5).floor();
            // In [0, total] by the range check above.
            Ok(scaled as i32)
        }
    }
}

fn validate_subset_replicas(total: Option<i32>, subsets: &[Subset], path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let (mut sum_replicas, mut sum_min, mut sum_max) = (0i64, 0i64, 0i64);
    let (mut count_replicas, mut count_max) = (0usize, 0usize);
    let (mut has_replicas, mut has_capacity) = (false, false);

    for (index, subset) in subsets.iter().enumerate() {
        let item = path.index(index);
        let parse = |value: &IntOrString, name: &str, errors: &mut ErrorList| -> i32 {
            parse_uniteddeployment_subset_replicas(total, value).unwrap_or_else(|problem| {
                errors.push(FieldError::invalid(&item.child(name), display(value), problem));
                0
            })
        };
        if let Some(value) = &subset.replicas {
            count_replicas += 1;
            has_replicas = true;
            sum_replicas += i64::from(parse(value, "replicas", &mut errors));
        }
        let mut min = 0;
        if let Some(value) = &subset.min_replicas {
            has_capacity = true;
            min = parse(value, "minReplicas", &mut errors);
        }
        let mut max = 1_000_000;
        if let Some(value) = &subset.max_replicas {
            count_max += 1;
            has_capacity = true;
            max = parse(value, "maxReplicas", &mut errors);
        }
        sum_min += i64::from(min);
        sum_max += i64::from(max);
        if min > max {
            errors.push(FieldError::invalid(
                &item.child("minReplicas"),
                min,
                "minReplicas must be less than or equal to maxReplicas",
            ));
        }
    }

    if has_replicas && has_capacity {
        errors.push(FieldError::invalid(
            path,
            "",
            "subset replicas and subset minReplicas/maxReplicas can not be used together",
        ));
        return errors;
    }
    if has_capacity {
        if total.is_none() {
            errors.push(FieldError::required(
                &FieldPath::root("spec").child("replicas"),
                "spec.replicas must be set when subsets use minReplicas/maxReplicas",
            ));
        }
        if count_max >= subsets.len() {
            errors.push(FieldError::invalid(
                path,
                count_max,
                "at least one subset must leave maxReplicas unset",
            ));
        }
        if sum_min > sum_max {
            errors.push(FieldError::invalid(
                path,
                sum_min,
                format!(
                    "the sum of subset minReplicas must not exceed the sum of subset maxReplicas ({sum_max})"
                ),
            ));
        }
    } else if let Some(total) = total {
        if sum_replicas > i64::from(total) {
            errors.push(FieldError::invalid(
                path,
                sum_replicas,
                format!("the sum of subset replicas must not exceed spec.replicas ({total})"),
            ));
        }
        if count_replicas > 0 && count_replicas == subsets.len() && sum_replicas != i64::from(total) {
            errors.push(FieldError::invalid(
                path,
                sum_replicas,
                format!("when every subset sets replicas, they must add up to spec.replicas ({total})"),
            ));
        }
    } else if count_replicas != subsets.len() {
        errors.push(FieldError::invalid(
            path,
            sum_replicas,
            "when spec.replicas is not set, every subset must set replicas",
        ));
    }
    errors
}

/// A node selector term as a pod's required node affinity accepts it.
fn validate_node_selector_term(term: &NodeSelectorTerm, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    for (index, requirement) in term.match_expressions.iter().flatten().enumerate() {
        let item = path.child("matchExpressions").index(index);
        let values = requirement.values.as_deref().unwrap_or_default();
        match requirement.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => errors.push(FieldError::required(
                &item.child("values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "In" | "NotIn" => {}
            "Exists" | "DoesNotExist" if !values.is_empty() => errors.push(FieldError::forbidden(
                &item.child("values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "Exists" | "DoesNotExist" => {}
            "Gt" | "Lt" => {
                if values.len() != 1 || values[0].parse::<i64>().is_err() {
                    errors.push(FieldError::required(
                        &item.child("values"),
                        "must be a single integer when `operator` is 'Lt' or 'Gt'",
                    ));
                }
            }
            other => errors.push(FieldError::not_supported(
                &item.child("operator"),
                other,
                &["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"],
            )),
        }
        for problem in qualified_name_problems(&requirement.key) {
            errors.push(FieldError::invalid(&item.child("key"), quoted(&requirement.key), problem));
        }
    }
    for (index, requirement) in term.match_fields.iter().flatten().enumerate() {
        let item = path.child("matchFields").index(index);
        if requirement.key != "metadata.name" {
            errors.push(FieldError::not_supported(&item.child("key"), &requirement.key, &["metadata.name"]));
        }
        let values = requirement.values.as_deref().unwrap_or_default();
        match requirement.operator.as_str() {
            "In" | "NotIn" if values.len() != 1 => errors.push(FieldError::required(
                &item.child("values"),
                "must be exactly one node name when `operator` is 'In' or 'NotIn'",
            )),
            "In" | "NotIn" => {
                for problem in dns1123_subdomain_problems(&values[0]) {
                    errors.push(FieldError::invalid(
                        &item.child("values").index(0),
                        quoted(&values[0]),
                        problem,
                    ));
                }
            }
            other => errors.push(FieldError::not_supported(&item.child("operator"), other, &["In", "NotIn"])),
        }
    }
    errors
}

/// Tolerations as a pod accepts them.
fn validate_tolerations(tolerations: &[Toleration], path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    for (index, toleration) in tolerations.iter().enumerate() {
        let item = path.index(index);
        let key = toleration.key.as_deref().unwrap_or_default();
        let operator = toleration.operator.as_deref().unwrap_or_default();
        let effect = toleration.effect.as_deref().unwrap_or_default();
        if !key.is_empty() {
            for problem in qualified_name_problems(key) {
                errors.push(FieldError::invalid(&item.child("key"), quoted(key), problem));
            }
        } else if operator != "Exists" {
            errors.push(FieldError::invalid(
                &item.child("operator"),
                quoted(operator),
                "operator must be Exists when `key` is empty (which matches every key and value)",
            ));
        }
        if toleration.toleration_seconds.is_some() && effect != "NoExecute" {
            errors.push(FieldError::invalid(
                &item.child("effect"),
                quoted(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        let value = toleration.value.as_deref().unwrap_or_default();
        match operator {
            "" | "Equal" => {
                for problem in label_value_problems(value) {
                    errors.push(FieldError::invalid(&item.child("value"), quoted(value), problem));
                }
            }
            "Exists" if !value.is_empty() => errors.push(FieldError::invalid(
                &item.child("operator"),
                quoted(value),
                "value must be empty when `operator` is 'Exists'",
            )),
            "Exists" => {}
            other => {
                errors.push(FieldError::not_supported(&item.child("operator"), other, &["Equal", "Exists"]))
            }
        }
        if !effect.is_empty() && !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
            errors.push(FieldError::not_supported(
                &item.child("effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
    errors
}

/// Update rules: a kept subset (same name) keeps its nodeSelectorTerm and tolerations, and the
/// subset workload templates change only where the workload itself allows it.
fn validate_spec_update(spec: &UnitedDeploymentSpec, old: &UnitedDeploymentSpec) -> ErrorList {
    let mut errors = ErrorList::new();
    let subsets_path = FieldPath::root("spec").child("topology").child("subsets");
    let old_subsets: BTreeMap<&str, &Subset> =
        old.topology.subsets.iter().map(|s| (s.name.as_str(), s)).collect();
    for (index, subset) in spec.topology.subsets.iter().enumerate() {
        let Some(previous) = old_subsets.get(subset.name.as_str()) else { continue };
        if previous.node_selector_term != subset.node_selector_term {
            errors.push(FieldError::forbidden(
                &subsets_path.index(index).child("nodeSelectorTerm"),
                "may not be changed in an update",
            ));
        }
        if previous.tolerations != subset.tolerations {
            errors.push(FieldError::forbidden(
                &subsets_path.index(index).child("tolerations"),
                "may not be changed in an update",
            ));
        }
    }

    let template_path = FieldPath::root("spec").child("template");
    let (new_template, old_template) = (&spec.template, &old.template);
    if let (Some(new), Some(previous)) =
        (&new_template.stateful_set_template, &old_template.stateful_set_template)
    {
        let policy = |value: &Option<String>| {
            value.clone().filter(|p| !p.is_empty()).unwrap_or_else(|| "OrderedReady".into())
        };
        let unchanged = policy(&new.spec.pod_management_policy)
            == policy(&previous.spec.pod_management_policy)
            && new.spec.service_name == previous.spec.service_name
            && new.spec.volume_claim_templates == previous.spec.volume_claim_templates
            && new.spec.revision_history_limit == previous.spec.revision_history_limit;
        if !unchanged {
            errors.push(FieldError::forbidden(
                &template_path.child("statefulSetTemplate").child("spec"),
                "only 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds' and \
                 'ordinals' of a statefulSetTemplate may change",
            ));
        }
    } else if let (Some(new), Some(previous)) =
        (&new_template.advanced_stateful_set_template, &old_template.advanced_stateful_set_template)
    {
        let mut comparable = new.spec.clone();
        comparable.replicas = previous.spec.replicas;
        comparable.template = previous.spec.template.clone();
        comparable.update_strategy = previous.spec.update_strategy.clone();
        if comparable != previous.spec {
            errors.push(FieldError::forbidden(
                &template_path.child("advancedStatefulSetTemplate").child("spec"),
                "only 'template' and 'updateStrategy' of an advancedStatefulSetTemplate may change",
            ));
        }
    }
    errors
}
