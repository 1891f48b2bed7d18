//! Label selectors: matching labels and rendering the selector string the scale subresource
//! reports (`status.labelSelector`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

/// Whether `labels` satisfy `selector` (an empty selector matches everything, as in Kubernetes;
/// callers that must reject empty selectors validate that separately).
pub fn matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let labels_ok = selector.match_labels.iter().flatten().all(|(key, value)| labels.get(key) == Some(value));
    labels_ok
        && selector
            .match_expressions
            .iter()
            .flatten()
            .all(|requirement| requirement_matches(requirement, labels))
}

fn requirement_matches(requirement: &LabelSelectorRequirement, labels: &BTreeMap<String, String>) -> bool {
    let values = requirement.values.as_deref().unwrap_or_default();
    let current = labels.get(&requirement.key);
    match requirement.operator.as_str() {
        "In" => current.is_some_and(|value| values.contains(value)),
        "NotIn" => current.is_none_or(|value| !values.contains(value)),
        "Exists" => current.is_some(),
        "DoesNotExist" => current.is_none(),
        _ => false,
    }
}

/// Whether the selector has no terms at all.
pub fn is_empty(selector: &LabelSelector) -> bool {
    selector.match_labels.as_ref().is_none_or(|m| m.is_empty())
        && selector.match_expressions.as_ref().is_none_or(|e| e.is_empty())
}

/// The selector in Kubernetes' string form (`app=web,tier in (a,b),!canary`), sorted by key as
/// `metav1.LabelSelectorAsSelector(...).String()` renders it.
pub fn to_selector_string(selector: &LabelSelector) -> String {
    let mut terms: Vec<(String, String)> = Vec::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        terms.push((key.clone(), format!("{key}={value}")));
    }
    for requirement in selector.match_expressions.iter().flatten() {
        let mut values = requirement.values.clone().unwrap_or_default();
        values.sort();
        let key = &requirement.key;
        let term = match requirement.operator.as_str() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other} ({})", values.join(",")),
        };
        terms.push((key.clone(), term));
    }
    terms.sort();
    terms.into_iter().map(|(_, term)| term).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn requirement(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn every_operator_matches_as_in_kubernetes() {
        let selector = LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            match_expressions: Some(vec![
                requirement("tier", "In", &["a", "b"]),
                requirement("env", "NotIn", &["prod"]),
                requirement("team", "Exists", &[]),
                requirement("canary", "DoesNotExist", &[]),
            ]),
        };
        let good = labels(&[("app", "web"), ("tier", "a"), ("team", "x")]);
        assert!(matches(&selector, &good));
        for (key, value) in [("app", "db"), ("tier", "c"), ("env", "prod"), ("canary", "1")] {
            let mut bad = good.clone();
            bad.insert(key.into(), value.into());
            assert!(!matches(&selector, &bad), "{key}={value}");
        }
        let mut missing = good.clone();
        missing.remove("team");
        assert!(!matches(&selector, &missing));
    }

    #[test]
    fn selector_strings_are_sorted_by_key() {
        let selector = LabelSelector {
            match_labels: Some(labels(&[("b", "2"), ("a", "1")])),
            match_expressions: Some(vec![
                requirement("c", "In", &["y", "x"]),
                requirement("d", "DoesNotExist", &[]),
            ]),
        };
        assert_eq!(to_selector_string(&selector), "a=1,b=2,c in (x,y),!d");
    }
}
