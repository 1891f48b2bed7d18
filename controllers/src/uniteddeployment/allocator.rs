//! How a UnitedDeployment's replicas are split over its subsets (upstream `allocator.go`), pure.
//!
//! - Specific ([`specific_allocate`]): subsets with `replicas` (a count or a percentage of the
//!   total) get exactly that; the rest share what is left evenly, the larger shares going to the
//!   subsets that already run the most. The specified counts may not exceed the total, and must
//!   add up to it when every subset is specified.
//! - Elastic ([`min_max_allocate`], any subset with `minReplicas` or `maxReplicas`): each subset
//!   in order gets its minimum while replicas remain, then each in order is filled up to its
//!   maximum.
//! - Adaptive ([`adaptive_allocate`]): elastic, except that a subset found unschedulable keeps
//!   only its ready pods (the rest go to later subsets) and a schedulable subset never loses
//!   ready pods to the minimum/maximum reshuffle.
//! - Adaptive with reserved pods ([`reservation_allocate`]): an unschedulable subset keeps its
//!   pods (the pending ones are reserved) and later subsets get temporary substitutes for them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_crds::{
    apps::v1beta1::{Subset, UnitedDeploymentScheduleStrategyType, UnitedDeploymentSpec},
    validation::parse_uniteddeployment_subset_replicas,
};

use super::core::SubsetView;

/// Why the replicas cannot be split as the spec asks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// The specified subset replicas add up to more than the total.
    #[error("specified subsets' replica ({specified}) is greater than UnitedDeployment replica ({total})")]
    TooMany {
        /// Their sum.
        specified: i32,
        /// `spec.replicas`.
        total: i32,
    },
    /// Every subset is specified but they add up to less than the total.
    #[error("specified subsets' replica ({specified}) is less than UnitedDeployment replica ({total})")]
    TooFew {
        /// Their sum.
        specified: i32,
        /// `spec.replicas`.
        total: i32,
    },
    /// Without `spec.replicas` every subset must say its replicas.
    #[error("all subsets must be specified when UnitedDeployment replica is unspecified")]
    Unspecified,
    /// A subset's minimum exceeds its maximum.
    #[error("subset[{index}].maxReplicas({max}) must be more than or equal to minReplicas({min})")]
    MinAboveMax {
        /// The subset's index.
        index: usize,
        /// Its minimum.
        min: i32,
        /// Its maximum.
        max: i32,
    },
}

/// The next replicas of every subset, by subset name.
pub type Allocation = BTreeMap<String, i32>;

/// Whether the strategy is Adaptive.
pub fn is_adaptive(spec: &UnitedDeploymentSpec) -> bool {
    spec.topology.schedule_strategy.type_ == UnitedDeploymentScheduleStrategyType::Adaptive
}

/// Whether the strategy is Adaptive with `reserveUnschedulablePods`.
pub fn reserves_unschedulable_pods(spec: &UnitedDeploymentSpec) -> bool {
    is_adaptive(spec)
        && spec.topology.schedule_strategy.adaptive.as_ref().is_some_and(|a| a.reserve_unschedulable_pods)
}

/// Splits `spec.replicas` with the allocator the spec calls for (upstream
/// `NewReplicaAllocator(ud).Alloc(existingSubsets)`).
pub fn allocate(
    spec: &UnitedDeploymentSpec,
    existing: &BTreeMap<String, SubsetView>,
) -> Result<Allocation, AllocError> {
    if reserves_unschedulable_pods(spec) {
        return reservation_allocate(spec, existing);
    }
    if is_adaptive(spec) {
        return adaptive_allocate(spec, existing);
    }
    if spec.topology.subsets.iter().any(|s| s.min_replicas.is_some() || s.max_replicas.is_some()) {
        return min_max_allocate(spec);
    }
    specific_allocate(spec, existing)
}

/// A value of `replicas`, `minReplicas` or `maxReplicas` as a count (`total` < 0: not set).
fn parse(total: i32, value: &IntOrString) -> Result<i32, String> {
    parse_uniteddeployment_subset_replicas((total >= 0).then_some(total), value)
}

/// One subset as the specific allocator sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubsetShare {
    /// The subset's name.
    pub name: String,
    /// Its replicas: the current ones, then the allocated ones.
    pub replicas: i32,
    /// Whether its replicas were given in the spec.
    pub specified: bool,
}

impl SubsetShare {
    /// A subset currently running `replicas`.
    pub fn new(name: &str, replicas: i32) -> Self {
        Self { name: name.to_string(), replicas, specified: false }
    }
}

/// Sorts by replicas, then name (upstream `subsetInfos.Less`).
pub fn sort_shares(shares: &mut [SubsetShare]) {
    shares.sort_by(|a, b| a.replicas.cmp(&b.replicas).then_with(|| a.name.cmp(&b.name)));
}

/// The specific allocator (upstream `specificAllocator.Alloc`).
pub fn specific_allocate(
    spec: &UnitedDeploymentSpec,
    existing: &BTreeMap<String, SubsetView>,
) -> Result<Allocation, AllocError> {
    let mut shares: Vec<SubsetShare> = spec
        .topology
        .subsets
        .iter()
        .map(|s| SubsetShare::new(&s.name, existing.get(&s.name).map_or(0, |v| v.spec_replicas)))
        .collect();
    sort_shares(&mut shares);
    let total = spec.replicas.unwrap_or(-1);
    let specified = specified_subset_replicas(total, &spec.topology.subsets);
    allocate_replicas(&mut shares, total, &specified)?;
    Ok(shares.into_iter().map(|s| (s.name, s.replicas)).collect())
}

/// The subsets whose replicas the spec gives, as counts (a value that cannot be read is
/// skipped, as upstream logs and skips it).
pub fn specified_subset_replicas(total: i32, subsets: &[Subset]) -> BTreeMap<String, i32> {
    subsets
        .iter()
        .filter_map(|s| {
            let value = s.replicas.as_ref()?;
            match parse(total, value) {
                Ok(count) => Some((s.name.clone(), count)),
                Err(error) => {
                    tracing::warn!(subset = %s.name, %error, "subset replicas ignored");
                    None
                }
            }
        })
        .collect()
}

/// Checks the specified replicas against the total, then gives the specified subsets their
/// count and shares the rest evenly over the others, the remainder going to the subsets last in
/// `shares` order (upstream `AllocateReplicas`). On an error `shares` is left as it was.
pub fn allocate_replicas(
    shares: &mut [SubsetShare],
    total: i32,
    specified: &BTreeMap<String, i32>,
) -> Result<(), AllocError> {
    let specified_sum: i32 = specified.values().sum();
    let specified_count = shares.iter().filter(|s| specified.contains_key(&s.name)).count();
    if total != -1 {
        if specified_sum > total {
            return Err(AllocError::TooMany { specified: specified_sum, total });
        }
        if specified_sum < total && specified_count == shares.len() {
            return Err(AllocError::TooFew { specified: specified_sum, total });
        }
    } else if specified_count != shares.len() {
        return Err(AllocError::Unspecified);
    }

    for share in shares.iter_mut() {
        if let Some(count) = specified.get(&share.name) {
            share.replicas = *count;
            share.specified = true;
        }
    }
    let mut left = shares.len() - specified_count;
    if left != 0 {
        let allocatable = total - specified_sum;
        let count = i32::try_from(left).unwrap_or(i32::MAX);
        let (average, mut remainder) = (allocatable / count, allocatable % count);
        for share in shares.iter_mut().rev() {
            if share.specified {
                continue;
            }
            if remainder > 0 {
                share.replicas = average + 1;
                remainder -= 1;
            } else {
                share.replicas = average;
            }
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    Ok(())
}

/// `" a -> 1; b -> 2;"` in replicas-then-name order (upstream `specificAllocator.String`), for
/// tests and logs.
pub fn describe(shares: &[SubsetShare]) -> String {
    let mut sorted = shares.to_vec();
    sort_shares(&mut sorted);
    sorted.iter().map(|s| format!(" {} -> {};", s.name, s.replicas)).collect()
}

/// Each subset's raw minimum (0 when unset) and maximum (`i32::MAX` when unset), by name.
fn raw_min_max(total: i32, subsets: &[Subset]) -> Result<(Allocation, Allocation), AllocError> {
    let mut mins = Allocation::new();
    let mut maxes = Allocation::new();
    for (index, subset) in subsets.iter().enumerate() {
        let min = subset.min_replicas.as_ref().map_or(0, |v| parse(total, v).unwrap_or(0));
        let max = subset.max_replicas.as_ref().map_or(i32::MAX, |v| parse(total, v).unwrap_or(0));
        if min > max {
            return Err(AllocError::MinAboveMax { index, min, max });
        }
        mins.insert(subset.name.clone(), min);
        maxes.insert(subset.name.clone(), max);
    }
    Ok((mins, maxes))
}

/// The elastic allocator (upstream `minMaxAllocator.Alloc`).
pub fn min_max_allocate(spec: &UnitedDeploymentSpec) -> Result<Allocation, AllocError> {
    let total = spec.replicas.unwrap_or(0);
    let (mins, maxes) = raw_min_max(total, &spec.topology.subsets)?;
    Ok(allocate_by_min_max(total, &mins, &maxes, &spec.topology.subsets))
}

/// Minimums in order while replicas remain, then maximums in order (upstream
/// `allocateByMinMaxMap`).
fn allocate_by_min_max(total: i32, mins: &Allocation, maxes: &Allocation, subsets: &[Subset]) -> Allocation {
    let mut allocated = 0;
    let mut result = Allocation::new();
    for subset in subsets {
        let min = mins.get(&subset.name).copied().unwrap_or(0);
        let add = min.min(total - allocated).max(0);
        result.insert(subset.name.clone(), add);
        allocated += add;
    }
    if allocated >= total {
        return result;
    }
    for subset in subsets {
        let min = mins.get(&subset.name).copied().unwrap_or(0);
        let max = maxes.get(&subset.name).copied().unwrap_or(i32::MAX);
        let add = max.saturating_sub(min).min(total - allocated).max(0);
        *result.entry(subset.name.clone()).or_default() += add;
        allocated += add;
    }
    result
}

/// The Adaptive allocator (upstream `adaptiveAllocator.Alloc`).
pub fn adaptive_allocate(
    spec: &UnitedDeploymentSpec,
    existing: &BTreeMap<String, SubsetView>,
) -> Result<Allocation, AllocError> {
    let total = spec.replicas.unwrap_or(0);
    let (mut mins, mut maxes) = raw_min_max(total, &spec.topology.subsets)?;
    for subset in &spec.topology.subsets {
        let name = &subset.name;
        let (mut min, mut max) = (mins[name], maxes[name]);
        let view = existing.get(name);
        let unschedulable = view.is_some_and(|v| v.status.unschedulable.unschedulable);
        let ready = view.map_or(0, |v| v.status.ready_replicas);
        if unschedulable && view.is_some() {
            min = min.max(ready);
            max = max.min(ready);
        }
        // Ready pods of a schedulable subset stay where they are.
        if !unschedulable && ready > min {
            min = ready.min(max);
        }
        mins.insert(name.clone(), min);
        maxes.insert(name.clone(), max);
    }
    Ok(allocate_by_min_max(total, &mins, &maxes, &spec.topology.subsets))
}

/// One subset in the reservation allocator: how many more replicas it can take and be expected
/// to run (negative: that many of its pods are reserved), and what it was given.
struct Record {
    max_allocatable: i32,
    allocated: i32,
}

impl Record {
    /// Raises the subset to `to` out of `rest` remaining replicas; returns how many of those
    /// count as placed (replicas beyond what the subset can run are given to it as reserved pods
    /// but still count as unplaced, so later subsets get substitutes).
    fn allocate(&mut self, to: i32, rest: i32) -> i32 {
        let mut add = (to - self.allocated).min(rest);
        self.allocated += add;
        self.max_allocatable = self.max_allocatable.saturating_sub(add);
        if self.max_allocatable < 0 {
            add += self.max_allocatable;
            add.max(0)
        } else {
            add
        }
    }
}

/// The Adaptive allocator with reserved pods (upstream `reservationAllocator.Alloc` and
/// `allocateByMinMaxMapAndReservation`).
pub fn reservation_allocate(
    spec: &UnitedDeploymentSpec,
    existing: &BTreeMap<String, SubsetView>,
) -> Result<Allocation, AllocError> {
    let mut total = spec.replicas.unwrap_or(0);
    let (mins, maxes) = raw_min_max(total, &spec.topology.subsets)?;
    let names: Vec<&String> = spec.topology.subsets.iter().map(|s| &s.name).collect();
    let mut records: BTreeMap<&String, Record> = names
        .iter()
        .map(|name| {
            let max_allocatable = match existing.get(*name) {
                Some(view) if !view.allocatable() => {
                    view.spec_replicas - view.status.unschedulable.reserved_pods
                }
                _ => i32::MAX,
            };
            (*name, Record { max_allocatable, allocated: 0 })
        })
        .collect();
    let export = |records: &BTreeMap<&String, Record>| -> Allocation {
        records.iter().map(|(name, r)| ((*name).clone(), r.allocated)).collect()
    };
    for name in &names {
        if let Some(record) = records.get_mut(*name) {
            total -= record.allocate(mins[*name], total);
        }
        if total <= 0 {
            return Ok(export(&records));
        }
    }
    for name in &names {
        let view = existing.get(*name);
        let to = match view {
            Some(view) if view.status.unschedulable.unschedulable => view.spec_replicas,
            _ => maxes[*name],
        };
        if let Some(record) = records.get_mut(*name) {
            total -= record.allocate(to, total);
        }
        if total <= 0 {
            return Ok(export(&records));
        }
    }
    Ok(export(&records))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::api::core::v1::Pod;
    use kruise_crds::apps::v1beta1::{AdaptiveUnitedDeploymentStrategy, UnitedDeploymentScheduleStrategy};

    use super::*;
    use crate::uniteddeployment::core::{SubsetState, Unschedulable};

    fn shares(list: &[(&str, i32)]) -> Vec<SubsetShare> {
        let mut shares: Vec<SubsetShare> = list.iter().map(|(n, r)| SubsetShare::new(n, *r)).collect();
        sort_shares(&mut shares);
        shares
    }

    fn spec_map(list: &[(&str, i32)]) -> BTreeMap<String, i32> {
        list.iter().map(|(n, r)| (n.to_string(), *r)).collect()
    }

    /// Upstream `TestScaleReplicas`.
    #[test]
    fn scale_replicas() {
        type Case<'a> = (&'a [(&'a str, i32)], i32, &'a str);
        let cases: &[Case] = &[
            (&[("t1", 1), ("t2", 4), ("t3", 2), ("t4", 2)], 5, " t1 -> 1; t3 -> 1; t4 -> 1; t2 -> 2;"),
            (&[("t1", 2)], 0, " t1 -> 0;"),
            (&[("t1", 1), ("t2", 4), ("t3", 2), ("t4", 2)], 17, " t1 -> 4; t3 -> 4; t4 -> 4; t2 -> 5;"),
            (&[("t1", 2), ("t2", 4), ("t3", 2), ("t4", 2)], 9, " t1 -> 2; t3 -> 2; t4 -> 2; t2 -> 3;"),
            (&[("t1", 0), ("t2", 10)], 19, " t1 -> 9; t2 -> 10;"),
            (&[("t1", 0), ("t2", 10)], 21, " t1 -> 10; t2 -> 11;"),
        ];
        for (list, total, want) in cases {
            let mut s = shares(list);
            allocate_replicas(&mut s, *total, &BTreeMap::new()).unwrap();
            assert_eq!(describe(&s), *want, "{list:?} to {total}");
        }
    }

    /// Upstream `TestSpecifyValidReplicas`.
    #[test]
    fn specify_valid_replicas() {
        type Case<'a> = (&'a [(&'a str, i32)], i32, &'a [(&'a str, i32)], &'a str);
        let cases: &[Case] = &[
            (
                &[("t1", 1), ("t2", 4), ("t3", 2), ("t4", 2)],
                27,
                &[("t1", 4), ("t3", 4)],
                " t1 -> 4; t3 -> 4; t4 -> 9; t2 -> 10;",
            ),
            (
                &[("t1", 2), ("t2", 4), ("t3", 2), ("t4", 2)],
                8,
                &[("t1", 4), ("t3", 4)],
                " t2 -> 0; t4 -> 0; t1 -> 4; t3 -> 4;",
            ),
            (
                &[("t1", 2), ("t2", 4), ("t3", 2), ("t4", 2)],
                16,
                &[("t1", 4), ("t2", 4), ("t3", 4), ("t4", 4)],
                " t1 -> 4; t2 -> 4; t3 -> 4; t4 -> 4;",
            ),
            (
                &[("t1", 4), ("t2", 2), ("t3", 2), ("t4", 2)],
                10,
                &[("t1", 1), ("t2", 2), ("t3", 3)],
                " t1 -> 1; t2 -> 2; t3 -> 3; t4 -> 4;",
            ),
            (
                &[("t1", 4), ("t2", 2), ("t3", 2), ("t4", 2)],
                10,
                &[("t1", 1), ("t2", 2), ("t3", 3), ("t4", 4)],
                " t1 -> 1; t2 -> 2; t3 -> 3; t4 -> 4;",
            ),
            (
                &[("t1", 4), ("t2", 2), ("t3", 2), ("t4", 2)],
                -1,
                &[("t1", 1), ("t2", 2), ("t3", 3), ("t4", 4)],
                " t1 -> 1; t2 -> 2; t3 -> 3; t4 -> 4;",
            ),
        ];
        for (list, total, specified, want) in cases {
            let mut s = shares(list);
            allocate_replicas(&mut s, *total, &spec_map(specified)).unwrap();
            assert_eq!(describe(&s), *want, "{list:?} to {total} with {specified:?}");
        }
    }

    /// Upstream `TestSpecifyInvalidReplicas`: refused, the subsets keep their replicas.
    #[test]
    fn specify_invalid_replicas() {
        let mut s = shares(&[("t1", 10), ("t2", 4)]);
        let error = allocate_replicas(&mut s, 14, &spec_map(&[("t1", 6), ("t2", 6)])).unwrap_err();
        assert_eq!(error, AllocError::TooFew { specified: 12, total: 14 });
        assert_eq!(describe(&s), " t2 -> 4; t1 -> 10;");
        let error = allocate_replicas(&mut s, 14, &spec_map(&[("t1", 10), ("t2", 11)])).unwrap_err();
        assert_eq!(error, AllocError::TooMany { specified: 21, total: 14 });
        assert_eq!(describe(&s), " t2 -> 4; t1 -> 10;");
    }

    fn count(x: i32) -> Option<IntOrString> {
        (x >= 0).then_some(IntOrString::Int(x))
    }

    /// Upstream `TestCapacityAllocator`.
    #[test]
    fn capacity_allocator() {
        type Case<'a> = (&'a str, i32, [i32; 5], [i32; 5], [i32; 5]);
        let cases: &[Case] = &[
            ("sum_all_min_replicas == replicas", 10, [2; 5], [5, 5, 5, 5, -1], [2, 2, 2, 2, 2]),
            ("sum_all_min_replicas < replicas", 14, [2; 5], [5, 5, 5, 5, -1], [5, 3, 2, 2, 2]),
            ("sum_all_min_replicas > replicas", 5, [2; 5], [5, 5, 5, 5, -1], [2, 2, 1, 0, 0]),
        ];
        for (name, replicas, mins, maxes, want) in cases {
            let mut spec = UnitedDeploymentSpec { replicas: Some(*replicas), ..Default::default() };
            for i in 0..5 {
                spec.topology.subsets.push(Subset {
                    name: format!("subset-{i}"),
                    min_replicas: count(mins[i]),
                    max_replicas: count(maxes[i]),
                    ..Default::default()
                });
            }
            let result = min_max_allocate(&spec).unwrap();
            let got: Vec<i32> = (0..5).map(|i| result[&format!("subset-{i}")]).collect();
            assert_eq!(got, want.to_vec(), "{name}");
        }
    }

    fn pods(total: i32, pending: i32) -> Vec<Pod> {
        (0..total)
            .map(|i| {
                let mut pod = Pod::default();
                pod.status.get_or_insert_default().phase =
                    Some(if i < pending { "Pending" } else { "Running" }.into());
                pod
            })
            .collect()
    }

    /// Upstream `TestDefaultAdaptiveAllocation`.
    #[test]
    fn default_adaptive_allocation() {
        #[rustfmt::skip]
        type Case<'a> = (&'a str, i32, &'a [i32], &'a [i32], &'a [i32], &'a [i32], &'a [i32]);
        let cases: &[Case] = &[
            // name, replicas, subset pods, min, max, pending (-1: none but unschedulable), expected
            ("5 pending pods = maxReplicas -> 3, 7", 10, &[5, 5], &[3, -1], &[5, -1], &[5, 0], &[3, 7]),
            ("4 pending pods < maxReplicas -> 3, 7", 10, &[5, 5], &[3, -1], &[5, -1], &[4, 0], &[3, 7]),
            ("3 pending pods = minReplicas -> 3, 7", 10, &[5, 5], &[3, -1], &[5, -1], &[3, 0], &[3, 7]),
            ("2 pending pods < minReplicas -> 3, 7", 10, &[5, 5], &[3, -1], &[5, -1], &[2, 0], &[3, 7]),
            ("no pending pods -> 5, 5", 10, &[5, 5], &[3, -1], &[5, -1], &[0, 0], &[5, 5]),
            ("normal scale up 2-> 4", 4, &[1, 1], &[1, -1], &[2, -1], &[0, 0], &[2, 2]),
            ("normal scale down 4 -> 3", 3, &[2, 2], &[1, -1], &[2, -1], &[0, 0], &[2, 1]),
            ("normal scale down 3 -> 1", 1, &[2, 1], &[1, -1], &[2, -1], &[0, 0], &[1, 0]),
            ("scale down with min and pending", 3, &[1, 3], &[1, -1], &[2, -1], &[1, 0], &[1, 2]),
            ("scale down with only pending", 3, &[1, 3], &[0, -1], &[2, -1], &[1, 0], &[0, 3]),
            (
                "complex: start",
                4,
                &[0, 0, 0, 0],
                &[0, 0, 0, 0],
                &[2, -1, -1, -1],
                &[0, 0, 0, 0],
                &[2, 2, 0, 0],
            ),
            (
                "complex: found subset-1 unschedulable",
                4,
                &[2, 2, 0, 0],
                &[0, 0, 0, 0],
                &[2, -1, -1, -1],
                &[0, 2, 0, 0],
                &[2, 0, 2, 0],
            ),
            (
                "complex: found subset-2 unschedulable",
                4,
                &[2, 0, 2, 0],
                &[0, 0, 0, 0],
                &[2, -1, -1, -1],
                &[0, -1, 2, 0],
                &[2, 0, 0, 2],
            ),
            (
                "complex: scale up 4 -> 8 when unschedulable",
                8,
                &[2, 0, 0, 2],
                &[0, 0, 0, 0],
                &[2, -1, -1, -1],
                &[0, -1, -1, 0],
                &[2, 0, 0, 6],
            ),
            (
                "complex: scale up 4 -> 8 after recovered",
                8,
                &[2, 0, 0, 2],
                &[0, 0, 0, 0],
                &[2, -1, -1, -1],
                &[0, 0, 0, 0],
                &[2, 4, 0, 2],
            ),
            (
                "complex: scale down 8 -> 4 when unschedulable",
                4,
                &[2, 0, 0, 6],
                &[0, 0, 0, 0],
                &[-1, -1, -1, -1],
                &[0, 0, 0, 0],
                &[2, 0, 0, 2],
            ),
            (
                "complex: scale down 8 -> 4 after recovered",
                4,
                &[2, 0, 0, 6],
                &[0, 0, 0, 0],
                &[-1, -1, -1, -1],
                &[0, 0, 0, 0],
                &[2, 0, 0, 2],
            ),
        ];
        for (name, replicas, subset_pods, mins, maxes, pending, want) in cases {
            let mut spec = UnitedDeploymentSpec { replicas: Some(*replicas), ..Default::default() };
            spec.topology.schedule_strategy.type_ = UnitedDeploymentScheduleStrategyType::Adaptive;
            let mut existing = BTreeMap::new();
            for i in 0..subset_pods.len() {
                let subset = format!("subset-{i}");
                let p = pending[i].max(0);
                spec.topology.subsets.push(Subset {
                    name: subset.clone(),
                    min_replicas: count(mins[i]),
                    max_replicas: count(maxes[i]),
                    ..Default::default()
                });
                existing.insert(
                    subset.clone(),
                    SubsetView {
                        subset_name: subset,
                        spec_replicas: subset_pods[i],
                        pods: pods(subset_pods[i], p),
                        status: SubsetState {
                            replicas: subset_pods[i],
                            ready_replicas: subset_pods[i] - p,
                            updated_ready_replicas: subset_pods[i] - p,
                            unschedulable: Unschedulable {
                                unschedulable: pending[i] != 0,
                                pending_pods: p,
                                ..Default::default()
                            },
                            ..Default::default()
                        },
                        ..Default::default()
                    },
                );
            }
            let result = allocate(&spec, &existing).unwrap();
            let got: Vec<i32> = (0..want.len()).map(|i| result[&format!("subset-{i}")]).collect();
            assert_eq!(got, want.to_vec(), "{name}");
        }
    }

    /// Upstream `TestReservedAdaptiveAllocation`.
    #[test]
    fn reserved_adaptive_allocation() {
        type Case<'a> = (&'a str, i32, Option<&'a [i32]>, Option<&'a [i32]>, &'a [i32], &'a [i32], &'a [i32]);
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // name, replicas, min, max, cur, reserved (-1: none but marked unschedulable), expected
            ("4 subsets, 2 each, start", 8, Some(&[1, 1, 1, 1]), Some(&[2, 2, 2, -1]), &[0, 0, 0, 0], &[0, 0, 0, 0], &[2, 2, 2, 2]),
            ("4 subsets, subset 1 and 2 unschedulable detected", 8, Some(&[1, 1, 1, 1]), Some(&[2, 2, 2, -1]), &[2, 2, 2, 2], &[0, 2, 2, 0], &[2, 2, 2, 6]),
            ("4 subsets, subset 1 and 2 starts each 1 pods", 8, Some(&[1, 1, 1, 1]), Some(&[2, 2, 2, -1]), &[2, 2, 2, 6], &[0, 1, 1, 0], &[2, 2, 2, 4]),
            ("4 subsets, subset 1 recovered", 8, Some(&[1, 1, 1, 1]), Some(&[2, 2, 2, -1]), &[2, 2, 2, 4], &[0, -1, 1, 0], &[2, 2, 2, 3]),
            ("4 subsets, all subset recovered", 8, Some(&[1, 1, 1, 1]), Some(&[2, 2, 2, -1]), &[2, 2, 2, 3], &[0, 0, -1, 0], &[2, 2, 2, 2]),
            ("4 subsets, part of subset 1 and 2 started, scaled to 16", 16, Some(&[2, 2, 2, 2]), Some(&[4, 4, 4, -1]), &[2, 2, 2, 6], &[0, 1, 1, 0], &[4, 2, 2, 10]),
            ("4 subsets, part of subset 1 and 2 started, scaled back to 8", 8, Some(&[1, 1, 1, 1]), Some(&[2, 2, 2, -1]), &[4, 2, 2, 10], &[0, 1, 1, 0], &[2, 2, 2, 4]),
            ("4 subsets, all of subset 1 and 2 started, already scaled to 16 replicas", 16, Some(&[2, 2, 2, 2]), Some(&[4, 4, 4, -1]), &[4, 2, 2, 10], &[0, -1, -1, 0], &[4, 4, 4, 8]),
            ("4 subsets, scaled to 16, new pods of subset 1 2 already started, verifying new pods", 16, Some(&[2, 2, 2, 2]), Some(&[4, 4, 4, -1]), &[4, 4, 4, 8], &[0, 2, 2, 0], &[4, 4, 4, 8]),
            ("4 subsets, scaled to 16, new pods of subset 1 2 already started, new pods started", 16, Some(&[2, 2, 2, 2]), Some(&[4, 4, 4, -1]), &[4, 4, 4, 8], &[0, -1, -1, 0], &[4, 4, 4, 4]),
            ("3 infinity subsets, start", 2, None, None, &[0, 0, 0], &[0, 0, 0], &[2, 0, 0]),
            ("3 infinity subsets, found subset-0 unschedulable", 2, None, None, &[2, 0, 0], &[2, 0, 0], &[2, 2, 0]),
            ("3 infinity subsets, found subset-1 unschedulable", 2, None, None, &[2, 2, 0], &[2, 2, 0], &[2, 2, 2]),
            ("3 infinity subsets, 2 unschedulable, scale up to 4", 4, None, None, &[2, 2, 2], &[2, 2, 0], &[2, 2, 4]),
            ("3 infinity subsets, scaled, 2 unschedulable, subset-1 recovered", 4, None, None, &[2, 2, 4], &[4, -1, 0], &[2, 4, 2]),
            ("3 infinity subsets, scaled, 2 unschedulable, subset-1 started, waiting verify", 4, None, None, &[2, 4, 2], &[4, 2, 0], &[2, 4, 2]),
            ("3 infinity subsets, scaled, 2 unschedulable, subset-1 started after recovery", 4, None, None, &[2, 4, 2], &[4, -1, 0], &[2, 4, 0]),
            ("3 infinity subsets, one of subset-1 started", 2, None, None, &[2, 2, 2], &[2, 1, 0], &[2, 2, 1]),
            ("3 infinity subsets, subset-0 recovered", 2, None, None, &[2, 2, 1], &[0, 1, 0], &[2, 0, 0]),
            ("3 infinity subsets, scale from 4 to 2", 2, None, None, &[2, 2, 0], &[0, 0, 0], &[2, 0, 0]),
            ("3 infinity subsets, scaled from 2 to 4 and subset-1 recovered", 4, None, None, &[2, 2, 4], &[-1, 2, 0], &[4, 2, 2]),
            ("3 subsets, 2 with minReplicas, start", 2, Some(&[1, 1, 0]), None, &[0, 0, 0], &[0, 0, 0], &[1, 1, 0]),
            ("3 subsets, 2 with minReplicas, two subsets unschedulable", 2, Some(&[1, 1, 0]), None, &[1, 1, 0], &[1, 1, 0], &[1, 1, 2]),
            ("3 subsets, 2 with minReplicas, subset-0 recovered", 2, Some(&[1, 1, 0]), None, &[1, 1, 2], &[-1, 1, 0], &[2, 1, 1]),
            ("3 subsets, 2 with minReplicas, subset-0 recovered, verifying new pods ", 2, Some(&[1, 1, 0]), None, &[2, 1, 1], &[1, 1, 0], &[2, 1, 1]),
            ("3 subsets, 2 with minReplicas, subset-0 recovered, new pod started", 2, Some(&[1, 1, 0]), None, &[2, 1, 1], &[0, 1, 0], &[2, 1, 0]),
            ("3 subsets, 2 with minReplicas, subset-1 recovered", 2, Some(&[1, 1, 0]), None, &[2, 1, 0], &[0, -1, 0], &[1, 1, 0]),
        ];
        for (name, replicas, mins, maxes, cur, reserved, want) in cases {
            let mut spec = UnitedDeploymentSpec { replicas: Some(*replicas), ..Default::default() };
            spec.topology.schedule_strategy = UnitedDeploymentScheduleStrategy {
                type_: UnitedDeploymentScheduleStrategyType::Adaptive,
                adaptive: Some(AdaptiveUnitedDeploymentStrategy {
                    reserve_unschedulable_pods: true,
                    ..Default::default()
                }),
            };
            let mut existing = BTreeMap::new();
            for i in 0..reserved.len() {
                let subset = format!("subset-{i}");
                spec.topology.subsets.push(Subset {
                    name: subset.clone(),
                    min_replicas: mins.and_then(|m| count(m[i])),
                    max_replicas: maxes.and_then(|m| count(m[i])),
                    ..Default::default()
                });
                let marked = reserved[i] != 0;
                let r = reserved[i].max(0);
                existing.insert(
                    subset.clone(),
                    SubsetView {
                        subset_name: subset,
                        spec_replicas: cur[i],
                        pods: pods(cur[i], r),
                        status: SubsetState {
                            replicas: cur[i],
                            ready_replicas: cur[i] - r,
                            updated_ready_replicas: cur[i] - r,
                            unschedulable: Unschedulable {
                                unschedulable: r != 0,
                                marked_as_unschedulable: marked,
                                reserved_pods: r,
                                ..Default::default()
                            },
                            ..Default::default()
                        },
                        ..Default::default()
                    },
                );
            }
            if let Some(last) = spec.topology.subsets.last_mut() {
                last.max_replicas = None;
            }
            let result = allocate(&spec, &existing).unwrap();
            let got: Vec<i32> = (0..want.len()).map(|i| result[&format!("subset-{i}")]).collect();
            assert_eq!(got, want.to_vec(), "{name}");
        }
    }
}
