//! One module per subcommand.

pub mod apiserver;
pub mod crds;
pub mod validate;
