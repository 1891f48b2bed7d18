//! The admission and conversion webhook server.
