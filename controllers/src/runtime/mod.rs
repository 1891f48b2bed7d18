//! The manager runtime: leader election, health and readiness, metrics, running controllers.
