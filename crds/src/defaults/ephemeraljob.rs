//! EphemeralJob defaults. Upstream has no mutating webhook for EphemeralJob, so its validating
//! webhook insists on `imagePullPolicy` and `terminationMessagePolicy` in every ephemeral
//! container; here they are filled in with the values the API server gives the containers when
//! they are injected into a pod, so a template that omits them is accepted. Parallelism and the
//! TTL stay unset: the controller applies its own defaults (1 and 1800s) when it reads the job.

use k8s_openapi::api::core::v1::EphemeralContainer;

use super::pod::image_tag;
use crate::apps::v1alpha1;

/// Fills in EphemeralJob defaults: each ephemeral container gets an image pull policy (Always
/// for `latest` images, IfNotPresent otherwise), termination message policy `File` and path
/// `/dev/termination-log`.
pub fn default_ephemeraljob(job: &mut v1alpha1::EphemeralJob) {
    for container in &mut job.spec.template.ephemeral_containers {
        default_ephemeral_container(container);
    }
}

fn default_ephemeral_container(container: &mut EphemeralContainer) {
    if container.image_pull_policy.is_none() {
        let latest = image_tag(container.image.as_deref().unwrap_or_default()) == "latest";
        container.image_pull_policy = Some(if latest { "Always" } else { "IfNotPresent" }.into());
    }
    container.termination_message_policy.get_or_insert_with(|| "File".into());
    container.termination_message_path.get_or_insert_with(|| "/dev/termination-log".into());
}
