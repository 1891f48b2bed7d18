//! The orders in which workload controllers take pods for a rolling update (upstream
//! `pkg/util/updatesort` and the order half of `SortUpdateIndexes`): Kubernetes' `ActivePods`
//! order (not ready, unscheduled, pending first), the `priorityStrategy` (weight or order terms)
//! and the `scatterStrategy` (spreading pods with a label through the order).
//!
//! The sorters work on positions into a pod list and take labels per position (`None` for a
//! hole), so CloneSet and Advanced StatefulSet (whose pod list has holes for reserved ordinals)
//! share them. Which pods are candidates and how many a round takes is each workload's own
//! arithmetic (CloneSet's is in [`crate::cloneset::core::update_order`]).

use std::{borrow::Borrow, cmp::Ordering, collections::BTreeMap};

use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};
use kruise_crds::common::{LifecycleState, UpdatePriorityStrategy, UpdateScatterTerm};
use kruise_crds::selector;

use super::pods::{
    creation_time, is_pod_ready, lifecycle_state, max_container_restarts, node_name, phase, pod_ready_time,
};

static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

/// The pod's labels, empty when it has none.
pub fn pod_labels(pod: &Pod) -> &BTreeMap<String, String> {
    pod.metadata.labels.as_ref().unwrap_or(&NO_LABELS)
}

fn phase_ordinal(pod: &Pod) -> u8 {
    match phase(pod) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}

fn after_or_zero(a: Option<Timestamp>, b: Option<Timestamp>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => b.cmp(&a),
    }
}

/// Kubernetes' `ActivePods` order, the default update order: unscheduled, then Pending < Unknown
/// < Running, then not ready, then ready for less time, more restarts, newer. `Less` means `a`
/// is updated first.
pub fn compare_active(a: &Pod, b: &Pod) -> Ordering {
    let (node_a, node_b) = (node_name(a), node_name(b));
    if node_a != node_b && (node_a.is_empty() || node_b.is_empty()) {
        return if node_a.is_empty() { Ordering::Less } else { Ordering::Greater };
    }
    let by_phase = phase_ordinal(a).cmp(&phase_ordinal(b));
    if by_phase != Ordering::Equal {
        return by_phase;
    }
    let (ready_a, ready_b) = (is_pod_ready(a), is_pod_ready(b));
    if ready_a != ready_b {
        return ready_a.cmp(&ready_b);
    }
    if ready_a && ready_b {
        let by_ready_time = after_or_zero(pod_ready_time(a), pod_ready_time(b));
        if by_ready_time != Ordering::Equal {
            return by_ready_time;
        }
    }
    let by_restarts = max_container_restarts(b).cmp(&max_container_restarts(a));
    if by_restarts != Ordering::Equal {
        return by_restarts;
    }
    after_or_zero(creation_time(a), creation_time(b))
}

/// The integer at the end of a label value (`o-10` -> 10), 0 when there is none or it overflows.
pub fn int_suffix(value: &str) -> i64 {
    let digits = value.len() - value.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    value[value.len() - digits..].parse().unwrap_or(0)
}

/// The sum of the weights of the weight terms whose selector matches the labels.
pub fn priority_weight(strategy: &UpdatePriorityStrategy, labels: &BTreeMap<String, String>) -> i64 {
    strategy
        .weight_priority
        .iter()
        .filter(|term| selector::matches(&term.match_selector, labels))
        .map(|term| i64::from(term.weight))
        .sum()
}

/// `(term index, value suffix)` of the first order term whose key the labels carry, `(-1, 0)` when
/// none does.
pub fn order_priority(strategy: &UpdatePriorityStrategy, labels: &BTreeMap<String, String>) -> (i64, i64) {
    strategy
        .order_priority
        .iter()
        .enumerate()
        .find_map(|(i, term)| {
            labels
                .get(&term.ordered_key)
                .map(|value| (i64::try_from(i).unwrap_or(i64::MAX), int_suffix(value)))
        })
        .unwrap_or((-1, 0))
}

/// The priority order of two pods' labels: higher total weight first when weight terms exist,
/// else lower term index and then higher value suffix first; `Equal` keeps the incoming order.
pub fn compare_priority(
    strategy: &UpdatePriorityStrategy,
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
) -> Ordering {
    if !strategy.weight_priority.is_empty() {
        return priority_weight(strategy, b).cmp(&priority_weight(strategy, a));
    }
    if !strategy.order_priority.is_empty() {
        let (level_a, order_a) = order_priority(strategy, a);
        let (level_b, order_b) = order_priority(strategy, b);
        return level_a.cmp(&level_b).then(order_b.cmp(&order_a));
    }
    Ordering::Equal
}

/// Stable-sorts `indexes` by the priority strategy (upstream `prioritySort.Sort`). `labels` holds
/// each position's labels (`None` for a hole in the list).
pub fn sort_by_priority(
    strategy: &UpdatePriorityStrategy,
    labels: &[Option<&BTreeMap<String, String>>],
    mut indexes: Vec<usize>,
) -> Vec<usize> {
    if strategy.weight_priority.is_empty() && strategy.order_priority.is_empty() {
        return indexes;
    }
    let of = |i: usize| labels.get(i).copied().flatten().unwrap_or(&NO_LABELS);
    indexes.sort_by(|&i, &j| compare_priority(strategy, of(i), of(j)));
    indexes
}

fn label_or_empty<'a>(labels: &'a BTreeMap<String, String>, key: &str) -> &'a str {
    labels.get(key).map(String::as_str).unwrap_or_default()
}

/// The scatter terms to apply, most-matched first (upstream `getScatterTerms`): with one term,
/// that term; otherwise each term that at least one candidate carries, ordered by how many
/// candidates carry it (ties keep the strategy order).
pub fn scatter_terms(
    strategy: &[UpdateScatterTerm],
    labels: &[Option<&BTreeMap<String, String>>],
    indexes: &[usize],
) -> Vec<UpdateScatterTerm> {
    if strategy.len() == 1 {
        return strategy.to_vec();
    }
    let mut terms: Vec<(UpdateScatterTerm, usize)> = Vec::new();
    for term in strategy {
        for &i in indexes {
            let Some(pod_labels) = labels.get(i).copied().flatten() else {
                continue;
            };
            if pod_labels.get(&term.key) == Some(&term.value) {
                match terms.iter_mut().find(|(t, _)| t == term) {
                    Some((_, count)) => *count += 1,
                    None => terms.push((term.clone(), 1)),
                }
            }
        }
    }
    terms.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    terms.into_iter().map(|(term, _)| term).collect()
}

/// How matched and unmatched pods are interleaved by one scatter term.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ScatterGroup {
    groups: usize,
    matched_size: usize,
    unmatched_size: usize,
    unmatched_remainder: usize,
}

fn round_ratio(numerator: usize, denominator: usize) -> usize {
    if denominator == 0 {
        return 0;
    }
    // Go's math.Round: halves away from zero, as f64::round.
    (numerator as f64 / denominator as f64).round() as usize
}

fn scatter_group(matched: usize, unmatched: usize) -> ScatterGroup {
    let groups = matched.min(unmatched);
    ScatterGroup {
        groups,
        matched_size: round_ratio(matched, groups),
        unmatched_size: round_ratio(unmatched, groups),
        unmatched_remainder: 0,
    }
}

fn group_by_density(
    total_matched: usize,
    total_unmatched: usize,
    update_matched: usize,
    update_unmatched: usize,
) -> ScatterGroup {
    let total = scatter_group(total_matched, total_unmatched);
    let update = scatter_group(update_matched, update_unmatched);
    // Upstream compares the densities in float32.
    let ratio = |a: usize, b: usize| a as f32 / b as f32;
    if ratio(total_unmatched, total_matched) >= ratio(update_unmatched, update_matched) {
        return update;
    }
    let mut group = ScatterGroup {
        matched_size: total.matched_size,
        unmatched_size: total.unmatched_size,
        ..Default::default()
    };
    let by_matched = update_matched.checked_div(group.matched_size).unwrap_or(0);
    let by_unmatched = update_unmatched.checked_div(group.unmatched_size).unwrap_or(0);
    group.groups = by_matched.min(by_unmatched);
    group.unmatched_remainder = update_unmatched.saturating_sub(group.groups * group.unmatched_size);
    group
}

fn migrate(source: &mut Vec<usize>, destination: &mut Vec<usize>, size: usize) {
    let take = size.min(source.len());
    destination.extend(source.drain(..take));
}

/// Spreads the candidates carrying one scatter label through the order (upstream
/// `scatterPodsByRule`): the last matching candidate moves to the end, the others are
/// interleaved with non-matching candidates in groups sized by their density among all pods.
fn scatter_by_term(
    term: &UpdateScatterTerm,
    labels: &[Option<&BTreeMap<String, String>>],
    indexes: Vec<usize>,
) -> Vec<usize> {
    let matches = |l: &BTreeMap<String, String>| label_or_empty(l, &term.key) == term.value;
    let of = |i: usize| labels.get(i).copied().flatten().unwrap_or(&NO_LABELS);
    let (mut matched, mut unmatched): (Vec<usize>, Vec<usize>) =
        indexes.iter().partition(|&&i| matches(of(i)));
    if matched.len() <= 1 || unmatched.len() <= 1 {
        return indexes;
    }
    let (mut total_matched, mut total_unmatched) = (0usize, 0usize);
    for pod_labels in labels.iter().flatten() {
        if matches(pod_labels) {
            total_matched += 1;
        } else {
            total_unmatched += 1;
        }
    }

    let Some(last_matched) = matched.pop() else {
        return indexes;
    };
    total_matched = total_matched.saturating_sub(1);

    let group = group_by_density(total_matched, total_unmatched, matched.len(), unmatched.len());
    let mut order = Vec::with_capacity(indexes.len());
    if group.unmatched_remainder > 0 {
        migrate(&mut unmatched, &mut order, group.unmatched_remainder);
    }
    for _ in 0..group.groups {
        migrate(&mut matched, &mut order, group.matched_size);
        migrate(&mut unmatched, &mut order, group.unmatched_size);
    }
    order.append(&mut matched);
    order.append(&mut unmatched);
    order.push(last_matched);
    order
}

/// Spreads candidates by every scatter term, most-matched term first (upstream
/// `scatterSort.Sort`).
pub fn scatter_sort(
    strategy: &[UpdateScatterTerm],
    labels: &[Option<&BTreeMap<String, String>>],
    mut indexes: Vec<usize>,
) -> Vec<usize> {
    if strategy.is_empty() || indexes.len() <= 1 {
        return indexes;
    }
    for term in scatter_terms(strategy, labels, &indexes) {
        indexes = scatter_by_term(&term, labels, indexes);
    }
    indexes
}

/// Orders the positions of pods waiting for update (upstream `SortUpdateIndexes`): `ActivePods`
/// order, then the priority strategy (when given), then the scatter strategy (when not empty),
/// then pods already in `PreparingUpdate` first.
pub fn sort_update_indexes<P: Borrow<Pod>>(
    priority: Option<&UpdatePriorityStrategy>,
    scatter: &[UpdateScatterTerm],
    pods: &[P],
    mut indexes: Vec<usize>,
) -> Vec<usize> {
    indexes.sort_by(|&i, &j| compare_active(pods[i].borrow(), pods[j].borrow()));
    if priority.is_some() || !scatter.is_empty() {
        let labels: Vec<Option<&BTreeMap<String, String>>> =
            pods.iter().map(|p| Some(pod_labels(p.borrow()))).collect();
        if let Some(priority) = priority {
            indexes = sort_by_priority(priority, &labels, indexes);
        }
        if !scatter.is_empty() {
            indexes = scatter_sort(scatter, &labels, indexes);
        }
    }
    let preparing = |i: usize| lifecycle_state(pods[i].borrow()) == LifecycleState::PreparingUpdate;
    indexes.sort_by_key(|&i| !preparing(i));
    indexes
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use k8s_openapi::{
        api::core::v1::{PodCondition, PodStatus},
        apimachinery::pkg::apis::meta::v1::LabelSelector,
    };
    use kruise_crds::common::{LIFECYCLE_STATE_KEY, UpdatePriorityOrderTerm, UpdatePriorityWeightTerm};

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn weight(w: i32, key: &str, value: &str) -> UpdatePriorityWeightTerm {
        UpdatePriorityWeightTerm {
            weight: w,
            match_selector: LabelSelector {
                match_labels: Some(labels(&[(key, value)])),
                ..Default::default()
            },
        }
    }

    fn order(keys: &[&str]) -> UpdatePriorityStrategy {
        UpdatePriorityStrategy {
            order_priority: keys
                .iter()
                .map(|k| UpdatePriorityOrderTerm { ordered_key: k.to_string() })
                .collect(),
            ..Default::default()
        }
    }

    /// upstream `TestCompare`: whether `a` goes before `b` (ties count as "before", as upstream's
    /// comparison returns its default for them).
    #[test]
    fn priority_comparison() {
        let foo_bar = UpdatePriorityStrategy {
            weight_priority: vec![weight(20, "key", "foo"), weight(10, "key", "bar")],
            ..Default::default()
        };
        let three_15 = UpdatePriorityStrategy {
            weight_priority: vec![
                weight(20, "key1", "foo"),
                weight(10, "key2", "bar"),
                weight(15, "key3", "baz"),
            ],
            ..Default::default()
        };
        let three_5 = UpdatePriorityStrategy {
            weight_priority: vec![
                weight(20, "key1", "foo"),
                weight(10, "key2", "bar"),
                weight(5, "key3", "baz"),
            ],
            ..Default::default()
        };
        let keys = order(&["key1", "key2"]);
        let cases: Vec<(&UpdatePriorityStrategy, BTreeMap<String, String>, BTreeMap<String, String>, bool)> = vec![
            (&foo_bar, labels(&[]), labels(&[]), true),
            (&foo_bar, labels(&[("key", "foo")]), labels(&[("key", "foo")]), true),
            (&foo_bar, labels(&[("key", "bar")]), labels(&[("key", "foo")]), false),
            (&foo_bar, labels(&[]), labels(&[("key", "bar")]), false),
            (&foo_bar, labels(&[]), labels(&[("key", "foo")]), false),
            (&three_15, labels(&[("key1", "foo")]), labels(&[("key2", "bar"), ("key3", "baz")]), false),
            (&three_5, labels(&[("key2", "bar"), ("key3", "baz")]), labels(&[("key1", "foo")]), false),
            (&keys, labels(&[]), labels(&[]), true),
            (&keys, labels(&[("key1", "o-10")]), labels(&[("key1", "o-5")]), true),
            (&keys, labels(&[("key1", "o-10")]), labels(&[("key1", "o-10")]), true),
            (&keys, labels(&[("key1", "o-10")]), labels(&[("key1", "o-20")]), false),
            (&keys, labels(&[("key2", "o-20")]), labels(&[("key1", "o-10")]), false),
            (&keys, labels(&[("key2", "o-20")]), labels(&[("key2", "o-10")]), true),
        ];
        for (number, (strategy, a, b, first)) in cases.into_iter().enumerate() {
            assert_eq!(compare_priority(strategy, &a, &b) != Ordering::Greater, first, "case #{number}");
        }
    }

    #[test]
    fn priority_sort_keeps_order_of_ties() {
        let strategy = UpdatePriorityStrategy {
            weight_priority: vec![weight(100, "foo", "bar"), weight(90, "hello", "world")],
            ..Default::default()
        };
        let pods = [labels(&[("hello", "world")]), labels(&[]), labels(&[("foo", "bar")]), labels(&[])];
        let refs: Vec<_> = pods.iter().map(Some).collect();
        assert_eq!(sort_by_priority(&strategy, &refs, vec![0, 1, 2, 3]), vec![2, 0, 1, 3]);
        let no_match = UpdatePriorityStrategy {
            weight_priority: vec![weight(100, "not", "match")],
            ..Default::default()
        };
        assert_eq!(sort_by_priority(&no_match, &refs, vec![0, 1, 2, 3]), vec![0, 1, 2, 3]);
        assert_eq!(sort_by_priority(&UpdatePriorityStrategy::default(), &refs, vec![2, 1, 0]), vec![2, 1, 0]);
        assert_eq!(int_suffix("o-10"), 10);
        assert_eq!(int_suffix("abc"), 0);
        assert_eq!(int_suffix("7"), 7);
    }

    fn term(key: &str, value: &str) -> UpdateScatterTerm {
        UpdateScatterTerm { key: key.into(), value: value.into() }
    }

    /// Parses upstream's `"labelA=AAA,labelB=BBB"` pod label notation.
    fn parse(text: &str) -> BTreeMap<String, String> {
        text.split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// upstream `TestScatterPodsByRule`.
    #[test]
    fn scatter_one_term() {
        let a = term("labelA", "AAA");
        let cases: [(&str, &[&str], &[usize]); 12] = [
            ("no label", &[""], &[0]),
            ("only one scattered pod", &["labelA=AAA"], &[0]),
            ("odd + odd", &["labelA=AAA", "bbb"], &[0, 1]),
            ("even + even", &["", "", "", "", "labelA=AAA", "labelA=AAA"], &[4, 0, 1, 2, 3, 5]),
            (
                "odd scattered + odd ordinary",
                &["", "", "", "labelA=AAA", "labelA=AAA", "labelA=AAA"],
                &[3, 0, 1, 4, 2, 5],
            ),
            (
                "even scattered + odd ordinary",
                &["", "", "", "labelA=AAA", "", "", "labelA=AAA"],
                &[3, 0, 1, 2, 4, 5, 6],
            ),
            (
                "odd scattered + even ordinary",
                &["", "", "", "", "", "", "labelA=AAA", "labelA=AAA", "labelA=AAA"],
                &[6, 0, 1, 2, 7, 3, 4, 5, 8],
            ),
            (
                "even + even, more scattered",
                &["", "", "labelA=AAA", "labelA=AAA", "labelA=AAA", "labelA=AAA"],
                &[2, 3, 0, 4, 1, 5],
            ),
            (
                "odd + odd, more scattered",
                &["", "", "", "labelA=AAA", "labelA=AAA", "labelA=AAA", "labelA=AAA", "labelA=AAA"],
                &[3, 0, 1, 4, 2, 5],
            ),
            (
                "even + odd, more scattered",
                &[
                    "",
                    "",
                    "labelA=AAA",
                    "",
                    "labelA=AAA",
                    "labelA=AAA",
                    "labelA=AAA",
                    "labelA=AAA",
                    "labelA=AAA",
                ],
                &[2, 4, 0, 5, 6, 1, 7, 3, 8],
            ),
            (
                "odd + even, more scattered",
                &["", "labelA=AAA", "", "labelA=AAA", "", "", "labelA=AAA", "labelA=AAA", "labelA=AAA"],
                &[1, 0, 3, 2, 6, 4, 7, 5, 8],
            ),
            (
                "invalid label",
                &["", "", "", "", "ee", "a", "", "labelA=AAA", "labelA=AAA", "labelA=AAA,labelB=BBB"],
                &[7, 0, 1, 2, 3, 8, 4, 5, 6, 9],
            ),
        ];
        for (name, pods, expected) in cases {
            // Upstream builds as many pods as expected indexes, taking labels from the front.
            let pod_labels: Vec<BTreeMap<String, String>> =
                pods.iter().take(expected.len()).map(|t| parse(t)).collect();
            let refs: Vec<_> = pod_labels.iter().map(Some).collect();
            let indexes: Vec<usize> = (0..refs.len()).collect();
            assert_eq!(scatter_by_term(&a, &refs, indexes), expected, "{name}");
        }
    }

    /// upstream `TestGenerateRules`.
    #[test]
    fn scatter_terms_most_matched_first() {
        let pods = [
            labels(&[]),
            labels(&[]),
            labels(&[("labelB", "B")]),
            labels(&[("labelB", "BBB")]),
            labels(&[("labelA", "AAA")]),
            labels(&[("labelA", "AAA")]),
        ];
        let refs: Vec<_> = pods.iter().map(Some).collect();
        let strategy = [term("labelA", "AAA"), term("labelB", "BBB")];
        assert_eq!(scatter_terms(&strategy, &refs, &[0, 1, 2, 3, 4, 5]), strategy.to_vec());
        let reversed = [term("labelB", "BBB"), term("labelA", "AAA")];
        assert_eq!(
            scatter_terms(&reversed, &refs, &[0, 1, 2, 3, 4, 5]),
            vec![term("labelA", "AAA"), term("labelB", "BBB")]
        );
    }

    /// upstream `TestSort` (scatter sorter, with `None` for reserved-ordinal holes).
    #[test]
    fn scatter_sort_cases() {
        type L = &'static [(&'static str, &'static str)];
        let a = || term("labelA", "AAA");
        let b = || term("labelB", "BBB");
        let c = || term("labelC", "CCC");
        let cases: Vec<(&str, Vec<Option<L>>, Vec<UpdateScatterTerm>, Vec<usize>)> = vec![
            ("a scattered pod", vec![Some(&[("labelA", "AAA"), ("labelB", "BBB")])], vec![a()], vec![0]),
            ("all ordinary pods", vec![Some(&[]); 6], vec![], vec![0, 1, 2, 3, 4, 5]),
            (
                "one pod one label",
                vec![
                    Some(&[]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[("labelA", "AAA")]),
                    Some(&[("labelA", "AAA")]),
                ],
                vec![a()],
                vec![4, 0, 1, 2, 3, 5],
            ),
            (
                "2 dimensions + one pod one label",
                vec![
                    Some(&[("labelB", "BBB")]),
                    Some(&[("labelB", "BBB")]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[("labelA", "AAA")]),
                    Some(&[("labelA", "AAA")]),
                ],
                vec![a(), b()],
                vec![0, 4, 2, 3, 5, 1],
            ),
            (
                "2 dimensions + same label + sequence: A + B",
                vec![
                    Some(&[]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[("sdfb", "eee")]),
                    Some(&[("dsf", "same")]),
                    Some(&[("labelB", "BBB")]),
                    Some(&[("labelA", "AAA")]),
                    Some(&[("labelA", "AAA")]),
                    Some(&[("labelB", "BBB")]),
                ],
                vec![b(), a()],
                vec![7, 6, 0, 1, 2, 3, 4, 5, 9, 8],
            ),
            (
                "3 dimensions + one pod one label",
                vec![
                    Some(&[]),
                    Some(&[("labelA", "AAA")]),
                    Some(&[("labelA", "AAA")]),
                    Some(&[("labelB", "BBB")]),
                    Some(&[("labelB", "BBB")]),
                    Some(&[("labelC", "CCC")]),
                    Some(&[("labelC", "CCC")]),
                    Some(&[("labelC", "CCC")]),
                    Some(&[("labelC", "CCC")]),
                    Some(&[("labelC", "CCC")]),
                ],
                vec![a(), b(), c()],
                vec![3, 1, 5, 0, 6, 7, 8, 9, 2, 4],
            ),
            (
                "continuous sort 2 (fewer indexes than pods)",
                vec![
                    Some(&[("labelA", "AAA")]),
                    Some(&[("labelA", "AAA")]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[]),
                    Some(&[("labelA", "AAA")]),
                ],
                vec![a()],
                vec![2, 0, 3, 4, 5, 6, 1],
            ),
            (
                "reserveOrdinals nil in slice",
                vec![
                    Some(&[]),
                    Some(&[("labelA", "AAA")]),
                    Some(&[("labelA", "AAA"), ("labelC", "CCC")]),
                    Some(&[("labelB", "BBB"), ("labelC", "CCC")]),
                    Some(&[("labelB", "BBB")]),
                    None,
                    Some(&[]),
                    Some(&[]),
                    Some(&[("labelC", "CCC")]),
                    Some(&[("labelC", "CCC")]),
                    Some(&[("labelC", "CCC")]),
                ],
                vec![a(), b(), c()],
                vec![3, 2, 0, 8, 9, 6, 7, 10, 1, 4],
            ),
        ];
        for (name, pods, strategy, expected) in cases {
            let owned: Vec<Option<BTreeMap<String, String>>> = pods.iter().map(|p| p.map(labels)).collect();
            let refs: Vec<Option<&BTreeMap<String, String>>> = owned.iter().map(Option::as_ref).collect();
            // Upstream sorts the first `expected.len()` present pods; later pods only count in totals.
            let indexes: Vec<usize> =
                (0..refs.len()).filter(|&i| refs[i].is_some()).take(expected.len()).collect();
            assert_eq!(scatter_sort(&strategy, &refs, indexes), expected, "{name}");
        }
    }

    fn pod(phase: &str, ready: bool) -> Pod {
        let mut pod = Pod::default();
        let mut status = PodStatus { phase: Some(phase.into()), ..Default::default() };
        if ready {
            status.conditions = Some(vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                ..Default::default()
            }]);
        }
        pod.status = Some(status);
        pod
    }

    /// upstream `TestSortUpdateIndexes`, plus PreparingUpdate first.
    #[test]
    fn update_order_active_then_preparing_first() {
        let none: &[UpdateScatterTerm] = &[];
        let pods = vec![
            pod("Pending", true),
            pod("Pending", false),
            pod("Pending", false),
            pod("Running", true),
            pod("Running", false),
        ];
        assert_eq!(sort_update_indexes(None, none, &pods, vec![0, 1, 3, 4]), vec![1, 0, 4, 3]);

        let mut pods = pods;
        pods[3].metadata.labels = Some(labels(&[(LIFECYCLE_STATE_KEY, "PreparingUpdate")]));
        assert_eq!(sort_update_indexes(None, none, &pods, vec![0, 1, 3, 4]), vec![3, 1, 0, 4]);

        let with_priority = order(&["rank"]);
        let mut ranked: Vec<Pod> = (0..3).map(|_| pod("Running", true)).collect();
        for (i, p) in ranked.iter_mut().enumerate() {
            p.metadata.labels = Some(labels(&[("rank", &format!("r-{i}"))]));
        }
        assert_eq!(sort_update_indexes(Some(&with_priority), none, &ranked, vec![0, 1, 2]), vec![2, 1, 0]);
    }
}
