//! apply: filled in by its author.
