//! One module per subcommand.

pub mod apiserver;
pub mod crds;
pub mod manager;
pub mod nodes;
pub mod up;
pub mod validate;
