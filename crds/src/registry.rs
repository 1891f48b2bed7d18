//! Every served (kind, version) with its Rust type, defaults and validation, in one table, so
//! that generic tools (`kruise validate`, admission decoding, sample tests) handle all kinds the
//! same way.

use serde_json::Value;

use crate::{
    apps::{v1alpha1, v1beta1},
    defaults, document,
    field::ErrorList,
    policy, validation,
};

macro_rules! registry {
    ($(
        $(#[$meta:meta])*
        $variant:ident => $ty:ty {
            defaults: $defaults:expr,
            validate: $validate:expr $(,)?
        }
    ),+ $(,)?) => {
        /// One Kruise object of any served kind and version.
        #[derive(Clone, Debug, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum AnyKruiseObject {
            $( $(#[$meta])* $variant($ty), )+
        }

        impl AnyKruiseObject {
            /// Applies the mutating webhook's defaults (as on create).
            pub fn apply_defaults(&mut self) {
                match self {
                    $( Self::$variant(object) => { let apply: fn(&mut $ty) = $defaults; apply(object) } )+
                }
            }

            /// Validates the object as on create.
            pub fn validate(&self) -> ErrorList {
                match self {
                    $( Self::$variant(object) => { let check: fn(&$ty) -> ErrorList = $validate; check(object) } )+
                }
            }

            /// `apiVersion` of the object.
            pub fn api_version(&self) -> String {
                match self {
                    $( Self::$variant(_) => <$ty as kube::Resource>::api_version(&()).into_owned(), )+
                }
            }

            /// Kind of the object.
            pub fn kind(&self) -> String {
                match self {
                    $( Self::$variant(_) => <$ty as kube::Resource>::kind(&()).into_owned(), )+
                }
            }

            /// Metadata of the object.
            pub fn metadata(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                match self {
                    $( Self::$variant(object) => &object.metadata, )+
                }
            }

            /// The object as JSON.
            pub fn to_value(&self) -> Result<Value, serde_json::Error> {
                match self {
                    $( Self::$variant(object) => serde_json::to_value(object), )+
                }
            }
        }

        /// How to decode one (apiVersion, kind).
        pub struct RegistryEntry {
            /// apiVersion served.
            pub api_version: fn() -> String,
            /// Kind served.
            pub kind: fn() -> String,
            /// Strict decoding into the typed object.
            pub decode: fn(&Value) -> Result<AnyKruiseObject, ErrorList>,
        }

        /// Every registered (kind, version).
        pub fn entries() -> &'static [RegistryEntry] {
            &[
                $( RegistryEntry {
                    api_version: || <$ty as kube::Resource>::api_version(&()).into_owned(),
                    kind: || <$ty as kube::Resource>::kind(&()).into_owned(),
                    decode: |value| document::strict_from_value::<$ty>(value).map(AnyKruiseObject::$variant),
                }, )+
            ]
        }
    };
}

registry! {
    /// CloneSet v1alpha1.
    CloneSetV1alpha1 => v1alpha1::CloneSet {
        defaults: |object| {
            defaults::default_cloneset_v1alpha1(object, true);
        },
        validate: |object| validation::validate_cloneset_v1alpha1(object, None),
    },
    /// CloneSet v1beta1.
    CloneSetV1beta1 => v1beta1::CloneSet {
        defaults: |object| {
            defaults::default_cloneset_v1beta1(object, true);
        },
        validate: |object| validation::validate_cloneset_v1beta1(object, None),
    },
    /// StatefulSet v1alpha1.
    StatefulSetV1alpha1 => v1alpha1::StatefulSet {
        defaults: |object| {
            defaults::default_statefulset_v1alpha1(object, true);
        },
        validate: |object| validation::validate_statefulset_v1alpha1(object, None),
    },
    /// StatefulSet v1beta1.
    StatefulSetV1beta1 => v1beta1::StatefulSet {
        defaults: |object| {
            defaults::default_statefulset_v1beta1(object, true);
        },
        validate: |object| validation::validate_statefulset_v1beta1(object, None),
    },
    /// DaemonSet v1alpha1.
    DaemonSetV1alpha1 => v1alpha1::DaemonSet {
        defaults: |object| {
            defaults::default_daemonset_v1alpha1(object);
        },
        validate: |object| validation::validate_daemonset_v1alpha1(object, None),
    },
    /// DaemonSet v1beta1.
    DaemonSetV1beta1 => v1beta1::DaemonSet {
        defaults: |object| {
            defaults::default_daemonset_v1beta1(object);
        },
        validate: |object| validation::validate_daemonset_v1beta1(object, None),
    },
    /// SidecarSet v1alpha1.
    SidecarSetV1alpha1 => v1alpha1::SidecarSet {
        defaults: |object| {
            defaults::default_sidecarset_v1alpha1(object);
            defaults::set_sidecarset_hash_annotations_v1alpha1(object);
            default_sidecar_name_regex(&mut object.spec.containers, &mut object.spec.init_containers);
        },
        validate: |object| validation::validate_sidecarset_v1alpha1(object, None),
    },
    /// SidecarSet v1beta1.
    SidecarSetV1beta1 => v1beta1::SidecarSet {
        defaults: |object| {
            defaults::default_sidecarset_v1beta1(object);
            defaults::set_sidecarset_hash_annotations_v1beta1(object);
            default_sidecar_name_regex(&mut object.spec.containers, &mut object.spec.init_containers);
        },
        validate: |object| validation::validate_sidecarset_v1beta1(object, None),
    },
    /// UnitedDeployment v1alpha1.
    UnitedDeploymentV1alpha1 => v1alpha1::UnitedDeployment {
        defaults: |object| {
            defaults::default_uniteddeployment_v1alpha1(object, true);
        },
        validate: |object| validation::validate_uniteddeployment_v1alpha1(object, None),
    },
    /// UnitedDeployment v1beta1.
    UnitedDeploymentV1beta1 => v1beta1::UnitedDeployment {
        defaults: |object| {
            defaults::default_uniteddeployment_v1beta1(object, true);
        },
        validate: |object| validation::validate_uniteddeployment_v1beta1(object, None),
    },
    /// BroadcastJob v1alpha1.
    BroadcastJobV1alpha1 => v1alpha1::BroadcastJob {
        defaults: |object| {
            defaults::default_broadcastjob_v1alpha1(object, true);
        },
        validate: |object| validation::validate_broadcastjob_v1alpha1(object, None),
    },
    /// BroadcastJob v1beta1.
    BroadcastJobV1beta1 => v1beta1::BroadcastJob {
        defaults: |object| {
            defaults::default_broadcastjob_v1beta1(object, true);
        },
        validate: |object| validation::validate_broadcastjob_v1beta1(object, None),
    },
    /// AdvancedCronJob v1alpha1.
    AdvancedCronJobV1alpha1 => v1alpha1::AdvancedCronJob {
        defaults: |object| {
            defaults::default_advancedcronjob_v1alpha1(object, true);
        },
        validate: |object| validation::validate_advancedcronjob_v1alpha1(object, None),
    },
    /// AdvancedCronJob v1beta1.
    AdvancedCronJobV1beta1 => v1beta1::AdvancedCronJob {
        defaults: |object| {
            defaults::default_advancedcronjob_v1beta1(object, true);
        },
        validate: |object| validation::validate_advancedcronjob_v1beta1(object, None),
    },
    /// ImagePullJob v1alpha1.
    ImagePullJobV1alpha1 => v1alpha1::ImagePullJob {
        defaults: |object| {
            defaults::default_imagepulljob_v1alpha1(object);
        },
        validate: |object| validation::validate_imagepulljob_v1alpha1(object, None),
    },
    /// ImagePullJob v1beta1.
    ImagePullJobV1beta1 => v1beta1::ImagePullJob {
        defaults: |object| {
            defaults::default_imagepulljob_v1beta1(object);
        },
        validate: |object| validation::validate_imagepulljob_v1beta1(object, None),
    },
    /// ImageListPullJob v1alpha1.
    ImageListPullJobV1alpha1 => v1alpha1::ImageListPullJob {
        defaults: |object| {
            defaults::default_imagelistpulljob_v1alpha1(object);
        },
        validate: |object| validation::validate_imagelistpulljob_v1alpha1(object, None),
    },
    /// ImageListPullJob v1beta1.
    ImageListPullJobV1beta1 => v1beta1::ImageListPullJob {
        defaults: |object| {
            defaults::default_imagelistpulljob_v1beta1(object);
        },
        validate: |object| validation::validate_imagelistpulljob_v1beta1(object, None),
    },
    /// NodeImage v1alpha1.
    NodeImageV1alpha1 => v1alpha1::NodeImage {
        defaults: |object| {
            defaults::default_nodeimage_v1alpha1(object);
        },
        validate: |object| validation::validate_nodeimage_v1alpha1(object, None),
    },
    /// NodeImage v1beta1.
    NodeImageV1beta1 => v1beta1::NodeImage {
        defaults: |object| {
            defaults::default_nodeimage_v1beta1(object);
        },
        validate: |object| validation::validate_nodeimage_v1beta1(object, None),
    },
    /// ContainerRecreateRequest v1alpha1.
    ContainerRecreateRequestV1alpha1 => v1alpha1::ContainerRecreateRequest {
        defaults: |object| {
            defaults::default_containerrecreaterequest_v1alpha1(object);
        },
        validate: |object| validation::validate_containerrecreaterequest_v1alpha1(object, None),
    },
    /// ContainerRecreateRequest v1beta1.
    ContainerRecreateRequestV1beta1 => v1beta1::ContainerRecreateRequest {
        defaults: |object| {
            defaults::default_containerrecreaterequest_v1beta1(object);
        },
        validate: |object| validation::validate_containerrecreaterequest_v1beta1(object, None),
    },
    /// ResourceDistribution v1alpha1.
    ResourceDistributionV1alpha1 => v1alpha1::ResourceDistribution {
        defaults: |object| {
            defaults::default_resourcedistribution_v1alpha1(object);
        },
        validate: |object| validation::validate_resourcedistribution_v1alpha1(object, None),
    },
    /// ResourceDistribution v1beta1.
    ResourceDistributionV1beta1 => v1beta1::ResourceDistribution {
        defaults: |object| {
            defaults::default_resourcedistribution_v1beta1(object);
        },
        validate: |object| validation::validate_resourcedistribution_v1beta1(object, None),
    },
    /// WorkloadSpread v1alpha1.
    WorkloadSpreadV1alpha1 => v1alpha1::WorkloadSpread {
        defaults: |object| {
            defaults::default_workloadspread_v1alpha1(object);
        },
        validate: |object| validation::validate_workloadspread_v1alpha1(object, None),
    },
    /// WorkloadSpread v1beta1.
    WorkloadSpreadV1beta1 => v1beta1::WorkloadSpread {
        defaults: |object| {
            defaults::default_workloadspread_v1beta1(object);
        },
        validate: |object| validation::validate_workloadspread_v1beta1(object, None),
    },
    /// PersistentPodState v1alpha1.
    PersistentPodStateV1alpha1 => v1alpha1::PersistentPodState {
        defaults: |object| {
            defaults::default_persistentpodstate_v1alpha1(object);
        },
        validate: |object| validation::validate_persistentpodstate_v1alpha1(object, None),
    },
    /// PersistentPodState v1beta1.
    PersistentPodStateV1beta1 => v1beta1::PersistentPodState {
        defaults: |object| {
            defaults::default_persistentpodstate_v1beta1(object);
        },
        validate: |object| validation::validate_persistentpodstate_v1beta1(object, None),
    },
    /// PodUnavailableBudget v1alpha1.
    PodUnavailableBudgetV1alpha1 => policy::v1alpha1::PodUnavailableBudget {
        defaults: |object| {
            defaults::default_podunavailablebudget_v1alpha1(object);
        },
        validate: |object| validation::validate_podunavailablebudget_v1alpha1(object, None),
    },
    /// PodUnavailableBudget v1beta1.
    PodUnavailableBudgetV1beta1 => policy::v1beta1::PodUnavailableBudget {
        defaults: |object| {
            defaults::default_podunavailablebudget_v1beta1(object);
        },
        validate: |object| validation::validate_podunavailablebudget_v1beta1(object, None),
    },
    /// EphemeralJob v1alpha1.
    EphemeralJobV1alpha1 => v1alpha1::EphemeralJob {
        defaults: defaults::default_ephemeraljob,
        validate: |object| validation::validate_ephemeraljob(object, None),
    },
    /// PodProbeMarker v1alpha1.
    PodProbeMarkerV1alpha1 => v1alpha1::PodProbeMarker {
        defaults: defaults::default_podprobemarker,
        validate: |object| validation::validate_podprobemarker(object, None),
    },
    /// NodePodProbe v1alpha1.
    NodePodProbeV1alpha1 => v1alpha1::NodePodProbe {
        defaults: defaults::default_nodepodprobe,
        validate: |object| validation::validate_nodepodprobe(object, None),
    },
}

/// The CRD schema defaults `targetContainersNameRegex: ".*"` (the API server applies it; offline
/// checks must too, or validation would report the field as missing).
fn default_sidecar_name_regex(
    containers: &mut [crate::apps::v1beta1::SidecarContainer],
    init_containers: &mut [crate::apps::v1beta1::SidecarContainer],
) {
    for container in containers.iter_mut().chain(init_containers.iter_mut()) {
        if let Some(policy) = container.resources_policy.as_mut()
            && policy.target_containers_name_regex.is_empty()
        {
            policy.target_containers_name_regex = ".*".into();
        }
    }
}

/// The entry serving `api_version`/`kind`, if any.
pub fn lookup(api_version: &str, kind: &str) -> Option<&'static RegistryEntry> {
    entries().iter().find(|entry| (entry.api_version)() == api_version && (entry.kind)() == kind)
}
