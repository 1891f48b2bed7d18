//! schema: filled in by its author.
