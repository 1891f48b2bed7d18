//! Image pre-pull on the node (upstream `pkg/daemon/imagepuller`): the daemon pulls what the
//! NodeImage named after its node lists (ImagePullJobs and ImageListPullJobs put the images
//! there) and reports each tag's pull in the NodeImage status.
//!
//! - [`core`]: pure decisions (what to pull, timeouts and retries, the status, rate limits);
//! - [`puller`]: one worker task per tag, bounded by the node's pull slots;
//! - [`controller`]: the [`ImagePuller`] worker: the NodeImage watch and the status writer.

pub mod controller;
pub mod core;
pub mod puller;

pub use controller::{ImagePuller, ImagePullerConfig};
