//! Every scenario, run on the embedded API server and on a real kube-apiserver (skipped with a
//! message when the real binaries are absent), with the differential report printed at the end.
//! A target with its own `main` (`harness = false`), so that the report comes once, after all
//! scenarios; see `kruise_integration::suite` for its arguments.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod admission_all_kinds;
mod advancedcronjob;
mod apiserver;
mod broadcastjob;
mod cloneset;
mod cloneset_features;
mod cloneset_kit;
mod cloneset_predownload;
mod cloneset_robustness;
mod containerlaunchpriority;
mod crds;
mod crr;
mod daemon;
mod daemon_kit;
mod daemonset;
mod deletion_protection;
mod envmeta;
mod ephemeraljob;
mod job_admission;
mod journal;
mod kubectl;
mod kubectl_create;
mod nodes;
mod nodes_lifecycle;
mod nodes_streams;
mod persistentpodstate;
mod podprobe;
mod podunavailablebudget;
mod resourcedistribution;
mod service_api;
mod sidecarset;
mod sidecarterminator;
mod statefulset;
mod uniteddeployment;
mod upstream;
mod workloadspread;

use std::process::ExitCode;

use kruise_integration::{
    nodes::Hosting,
    suite::{Scenario, run_suite},
};

fn main() -> ExitCode {
    run_suite(&[
        Scenario {
            name: "kruise_crds_are_accepted",
            run: |scene| Box::pin(crds::kruise_crds_are_accepted(scene)),
        },
        Scenario {
            name: "apiserver::default_service_account",
            run: |scene| Box::pin(apiserver::default_service_account(scene)),
        },
        Scenario {
            name: "apiserver::field_selectors_read_absent_fields_as_zero_values",
            run: |scene| Box::pin(apiserver::field_selectors_read_absent_fields_as_zero_values(scene)),
        },
        Scenario {
            name: "apiserver::pod_and_template_defaults",
            run: |scene| Box::pin(apiserver::pod_and_template_defaults(scene)),
        },
        Scenario {
            name: "apiserver::ingress_and_autoscaler_kinds",
            run: |scene| Box::pin(apiserver::ingress_and_autoscaler_kinds(scene)),
        },
        Scenario {
            name: "apiserver::controller_revision_data_is_kept_as_sent",
            run: |scene| Box::pin(apiserver::controller_revision_data_is_kept_as_sent(scene)),
        },
        Scenario {
            name: "deletion_protection::built_in_kinds_and_crds",
            run: |scene| Box::pin(deletion_protection::built_in_kinds_and_crds(scene)),
        },
        Scenario {
            name: "admission_all_kinds::every_kind_refuses_what_kruise_validate_refuses",
            run: |scene| {
                Box::pin(admission_all_kinds::every_kind_refuses_what_kruise_validate_refuses(scene))
            },
        },
        Scenario {
            name: "containerlaunchpriority::ordered_pod_starts_containers_in_priority_order",
            run: |scene| {
                Box::pin(containerlaunchpriority::ordered_pod_starts_containers_in_priority_order(scene))
            },
        },
        Scenario {
            name: "kubectl_drives_the_api_server",
            run: |scene| Box::pin(kubectl::kubectl_drives_the_api_server(scene)),
        },
        Scenario {
            name: "sidecarset::inject_and_upgrade_in_place",
            run: |scene| Box::pin(sidecarset::inject_and_upgrade_in_place(scene)),
        },
        Scenario {
            name: "sidecarterminator::job_pods_complete_despite_sidecars",
            run: |scene| Box::pin(sidecarterminator::job_pods_complete_despite_sidecars(scene)),
        },
        Scenario {
            name: "advancedcronjob::runs_on_schedule",
            run: |scene| Box::pin(advancedcronjob::runs_on_schedule(scene)),
        },
        Scenario {
            name: "broadcastjob::runs_once_on_every_node",
            run: |scene| Box::pin(broadcastjob::runs_once_on_every_node(scene)),
        },
        Scenario {
            name: "broadcastjob::never_policy_serves_new_nodes",
            run: |scene| Box::pin(broadcastjob::never_policy_serves_new_nodes(scene)),
        },
        Scenario {
            name: "broadcastjob::fail_fast_and_deadline",
            run: |scene| Box::pin(broadcastjob::fail_fast_and_deadline(scene)),
        },
        Scenario {
            name: "job_admission::invalid_job_objects_are_refused_with_field_paths",
            run: |scene| Box::pin(job_admission::invalid_job_objects_are_refused_with_field_paths(scene)),
        },
        Scenario {
            name: "podunavailablebudget::evictions_and_rollouts_respect_the_budget",
            run: |scene| Box::pin(podunavailablebudget::evictions_and_rollouts_respect_the_budget(scene)),
        },
        Scenario {
            name: "podunavailablebudget::invalid_budgets_are_refused_with_field_paths",
            run: |scene| Box::pin(podunavailablebudget::invalid_budgets_are_refused_with_field_paths(scene)),
        },
        Scenario {
            name: "resourcedistribution::distributes_a_secret_to_labelled_namespaces",
            run: |scene| Box::pin(resourcedistribution::distributes_a_secret_to_labelled_namespaces(scene)),
        },
        Scenario {
            name: "resourcedistribution::invalid_distributions_are_refused_with_field_paths",
            run: |scene| {
                Box::pin(resourcedistribution::invalid_distributions_are_refused_with_field_paths(scene))
            },
        },
        Scenario {
            name: "uniteddeployment::spreads_cloneset_subsets_over_zones_and_updates_with_partitions",
            run: |scene| {
                Box::pin(uniteddeployment::spreads_cloneset_subsets_over_zones_and_updates_with_partitions(
                    scene,
                ))
            },
        },
        Scenario {
            name: "uniteddeployment::spreads_deployment_subsets_with_elastic_replicas",
            run: |scene| Box::pin(uniteddeployment::spreads_deployment_subsets_with_elastic_replicas(scene)),
        },
        Scenario {
            name: "uniteddeployment::invalid_uniteddeployments_are_refused_with_field_paths",
            run: |scene| {
                Box::pin(uniteddeployment::invalid_uniteddeployments_are_refused_with_field_paths(scene))
            },
        },
        Scenario {
            name: "persistentpodstate::recreated_pods_return_to_their_zone",
            run: |scene| Box::pin(persistentpodstate::recreated_pods_return_to_their_zone(scene)),
        },
        Scenario {
            name: "persistentpodstate::white_listed_custom_workloads",
            run: |scene| Box::pin(persistentpodstate::white_listed_custom_workloads(scene)),
        },
        Scenario {
            name: "workloadspread::spreads_a_cloneset_over_two_zones",
            run: |scene| Box::pin(workloadspread::spreads_a_cloneset_over_two_zones(scene)),
        },
        Scenario {
            name: "workloadspread::invalid_workloadspreads_are_refused_with_field_paths",
            run: |scene| {
                Box::pin(workloadspread::invalid_workloadspreads_are_refused_with_field_paths(scene))
            },
        },
        Scenario {
            name: "ephemeraljob::runs_on_replicas_and_succeeds",
            run: |scene| Box::pin(ephemeraljob::runs_on_replicas_and_succeeds(scene)),
        },
        Scenario {
            name: "ephemeraljob::failing_command_fails_the_job",
            run: |scene| Box::pin(ephemeraljob::failing_command_fails_the_job(scene)),
        },
        Scenario {
            name: "ephemeraljob::deadline_and_ttl",
            run: |scene| Box::pin(ephemeraljob::deadline_and_ttl(scene)),
        },
        Scenario {
            name: "sidecarset::hot_upgrade_keeps_a_sidecar_ready",
            run: |scene| Box::pin(sidecarset::hot_upgrade_keeps_a_sidecar_ready(scene)),
        },
        Scenario {
            name: "upstream::manager_reconciles_a_cloneset",
            run: |scene| Box::pin(upstream::upstream_manager_reconciles_a_cloneset(scene)),
        },
        Scenario {
            name: "upstream::takeover_without_a_rollout",
            run: |scene| Box::pin(upstream::takeover_from_upstream_without_a_rollout(scene)),
        },
        Scenario {
            name: "kubectl_generators_create_built_in_kinds",
            run: |scene| Box::pin(kubectl_create::kubectl_generators_create_built_in_kinds(scene)),
        },
        Scenario {
            name: "nodes_in_process::pods_run_on_simulated_nodes",
            run: |scene| Box::pin(nodes::pods_run_on_simulated_nodes(scene, Hosting::InProcess)),
        },
        Scenario {
            name: "nodes_as_processes::pods_run_on_simulated_nodes",
            run: |scene| Box::pin(nodes::pods_run_on_simulated_nodes(scene, Hosting::Process)),
        },
        Scenario {
            name: "nodes_in_process::deletion_and_scheduling",
            run: |scene| Box::pin(nodes::deletion_and_scheduling(scene, Hosting::InProcess)),
        },
        Scenario {
            name: "nodes_as_processes::deletion_and_scheduling",
            run: |scene| Box::pin(nodes::deletion_and_scheduling(scene, Hosting::Process)),
        },
        Scenario {
            name: "nodes_in_process::node_loss",
            run: |scene| Box::pin(nodes::node_loss(scene, Hosting::InProcess)),
        },
        Scenario {
            name: "nodes_as_processes::node_loss",
            run: |scene| Box::pin(nodes::node_loss(scene, Hosting::Process)),
        },
        Scenario {
            name: "nodes::kubelet_conventions",
            run: |scene| Box::pin(nodes_lifecycle::kubelet_conventions(scene)),
        },
        Scenario {
            name: "nodes::kubectl_exec_and_logs",
            run: |scene| Box::pin(nodes_streams::kubectl_exec_and_logs(scene)),
        },
        Scenario {
            name: "cloneset::create_scale_and_delete",
            run: |scene| Box::pin(cloneset::create_scale_and_delete(scene)),
        },
        Scenario {
            name: "cloneset::update_strategies",
            run: |scene| Box::pin(cloneset::update_strategies(scene)),
        },
        Scenario {
            name: "cloneset::kruise_rollout_sequence",
            run: |scene| Box::pin(cloneset::kruise_rollout_sequence(scene)),
        },
        Scenario {
            name: "cloneset::progress_deadline_and_metrics",
            run: |scene| Box::pin(cloneset::progress_deadline_and_metrics(scene)),
        },
        Scenario {
            name: "cloneset::manager_restart_mid_rollout",
            run: |scene| Box::pin(cloneset_robustness::manager_restart_mid_rollout(scene)),
        },
        Scenario {
            name: "cloneset::leader_handover",
            run: |scene| Box::pin(cloneset_robustness::leader_handover(scene)),
        },
        Scenario {
            name: "cloneset::conflict_storm",
            run: |scene| Box::pin(cloneset_robustness::conflict_storm(scene)),
        },
        Scenario {
            name: "cloneset::lifecycle_hooks",
            run: |scene| Box::pin(cloneset_features::lifecycle_hooks(scene)),
        },
        Scenario {
            name: "cloneset::priority_scatter_and_scale_limit",
            run: |scene| Box::pin(cloneset_features::priority_scatter_and_scale_limit(scene)),
        },
        Scenario {
            name: "cloneset::grace_and_resize",
            run: |scene| Box::pin(cloneset_features::grace_and_resize(scene)),
        },
        Scenario {
            name: "cloneset::volume_claims",
            run: |scene| Box::pin(cloneset_features::volume_claims(scene)),
        },
        Scenario {
            name: "service_api::rollout_in_place_through_rest",
            run: |scene| Box::pin(service_api::rollout_in_place_through_rest(scene)),
        },
        Scenario {
            name: "service_api::rollout_statefulset_in_place_through_rest",
            run: |scene| Box::pin(service_api::rollout_statefulset_in_place_through_rest(scene)),
        },
        Scenario {
            name: "service_api::rollout_daemonset_in_place_through_rest",
            run: |scene| Box::pin(service_api::rollout_daemonset_in_place_through_rest(scene)),
        },
        Scenario {
            name: "service_api::advancedcronjob_manual_run_and_broadcastjob_results",
            run: |scene| Box::pin(service_api::advancedcronjob_manual_run_and_broadcastjob_results(scene)),
        },
        Scenario {
            name: "cloneset::image_pre_download",
            run: |scene| Box::pin(cloneset_predownload::image_pre_download(scene)),
        },
        Scenario {
            name: "statefulset::ordered_identity_and_scale",
            run: |scene| Box::pin(statefulset::ordered_identity_and_scale(scene)),
        },
        Scenario {
            name: "statefulset::rolling_updates",
            run: |scene| Box::pin(statefulset::rolling_updates(scene)),
        },
        Scenario {
            name: "statefulset::parallel_reserved_and_max_unavailable",
            run: |scene| Box::pin(statefulset::parallel_reserved_and_max_unavailable(scene)),
        },
        Scenario {
            name: "statefulset::hooks_priority_and_specified_delete",
            run: |scene| Box::pin(statefulset::hooks_priority_and_specified_delete(scene)),
        },
        Scenario {
            name: "statefulset::image_pre_download",
            run: |scene| Box::pin(statefulset::image_pre_download(scene)),
        },
        Scenario {
            name: "statefulset::volume_claims_and_retention",
            run: |scene| Box::pin(statefulset::volume_claims_and_retention(scene)),
        },
        Scenario {
            name: "statefulset::volume_claim_resize_on_rolling_update",
            run: |scene| Box::pin(statefulset::volume_claim_resize_on_rolling_update(scene)),
        },
        Scenario {
            name: "statefulset::ordinals_start",
            run: |scene| Box::pin(statefulset::ordinals_start(scene)),
        },
        Scenario {
            name: "daemon::imagepulljob_over_three_nodes",
            run: |scene| Box::pin(daemon::imagepulljob_over_three_nodes(scene)),
        },
        Scenario {
            name: "daemon::bad_image_fails_without_retrying_past_backoff_limit",
            run: |scene| Box::pin(daemon::bad_image_fails_without_retrying_past_backoff_limit(scene)),
        },
        Scenario { name: "daemon::deadline_and_ttl", run: |scene| Box::pin(daemon::deadline_and_ttl(scene)) },
        Scenario {
            name: "daemon::parallelism_one_pulls_one_node_at_a_time",
            run: |scene| Box::pin(daemon::parallelism_one_pulls_one_node_at_a_time(scene)),
        },
        Scenario {
            name: "daemon::imagelistpulljob_creates_one_job_per_image",
            run: |scene| Box::pin(daemon::imagelistpulljob_creates_one_job_per_image(scene)),
        },
        Scenario {
            name: "daemon::bad_node_image_entry_fails_while_others_pull",
            run: |scene| Box::pin(daemon::bad_node_image_entry_fails_while_others_pull(scene)),
        },
        Scenario {
            name: "daemon::cri_unavailable_then_recovers",
            run: |scene| Box::pin(daemon::cri_unavailable_then_recovers(scene)),
        },
        Scenario {
            name: "daemon::env_from_metadata_in_place_update",
            run: |scene| Box::pin(envmeta::env_from_metadata_in_place_update(scene)),
        },
        Scenario {
            name: "crr::recreates_exactly_the_named_containers",
            run: |scene| Box::pin(crr::recreates_exactly_the_named_containers(scene)),
        },
        Scenario {
            name: "crr::ordered_recreate_restarts_in_order",
            run: |scene| Box::pin(crr::ordered_recreate_restarts_in_order(scene)),
        },
        Scenario {
            name: "crr::bad_requests_are_refused_or_fail_with_a_message",
            run: |scene| Box::pin(crr::bad_requests_are_refused_or_fail_with_a_message(scene)),
        },
        Scenario {
            name: "podprobe::marker_condition_follows_the_probe",
            run: |scene| Box::pin(podprobe::marker_condition_follows_the_probe(scene)),
        },
        Scenario {
            name: "daemonset::covers_eligible_nodes",
            run: |scene| Box::pin(daemonset::covers_eligible_nodes(scene)),
        },
        Scenario {
            name: "daemonset::in_place_and_recreate_updates",
            run: |scene| Box::pin(daemonset::in_place_and_recreate_updates(scene)),
        },
        Scenario {
            name: "daemonset::canary_selector_partition_paused",
            run: |scene| Box::pin(daemonset::canary_selector_partition_paused(scene)),
        },
        Scenario { name: "daemonset::surge_update", run: |scene| Box::pin(daemonset::surge_update(scene)) },
        Scenario {
            name: "daemonset::pre_delete_hook",
            run: |scene| Box::pin(daemonset::pre_delete_hook(scene)),
        },
        Scenario {
            name: "daemonset::validation_and_versions",
            run: |scene| Box::pin(daemonset::validation_and_versions(scene)),
        },
        Scenario {
            name: "daemonset::image_pre_download",
            run: |scene| Box::pin(daemonset::image_pre_download(scene)),
        },
    ])
}
