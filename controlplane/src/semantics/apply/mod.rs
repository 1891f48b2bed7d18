//! Server-side apply and managed fields: who owns which field of an object.
//!
//! This is a port of the semantics kube-apiserver gets from structured-merge-diff and its
//! managed-fields pipeline, working on JSON values with a [`ListTypes`] lookup instead of a typed
//! schema:
//!
//! * [`apply`] merges an applied configuration into the live object (maps merged, associative
//!   lists merged by key, sets unioned, atomic values replaced), reports conflicts with fields
//!   other managers own and hold other values for (unless forced, which takes them over), removes
//!   fields the applier owned before and no longer applies (unless someone else owns them too),
//!   and records the applier's ownership.
//! * [`record_update`] records the ownership a create/update/patch takes: the fields it changed,
//!   which other managers lose.
//!
//! Built-in kinds are compared in their Go typed form, as kube-apiserver does (optional empty
//! lists, maps and nulls are absent, the structs and times of the zero value present), which is
//! why a container's owner also owns `f:resources` and a status writer's entry has no `.` on
//! `f:status`. Custom resources are compared as they are.
//!
//! Ownership is kept in `metadata.managedFields` in the real `FieldsV1` encoding (`f:<field>`,
//! `k:{"name":"x"}`, `v:<value>`, `.`), entries sorted and keyed exactly as kube-apiserver does it,
//! so `kubectl apply --server-side`, `kubectl get --show-managed-fields` and kube-rs `Patch::Apply`
//! see what they would see against a real cluster.
//!
//! The parts, by job: `list_types` (the [`ListTypes`] lookup and how list items are identified),
//! `fieldpath` (paths, field sets and their `FieldsV1` encoding), `to_field_set`, `compare` and
//! `merge` (structured-merge-diff's walks over values), `typed_form` (the form built-in kinds are
//! compared in), `managed_fields` (the entries of `metadata.managedFields`), `conflicts` (who
//! loses which fields, and the 409 messages), `applying` ([`apply`]) and `recording`
//! ([`record_update`]).

mod applying;
mod compare;
mod conflicts;
mod fieldpath;
mod list_types;
mod managed_fields;
mod merge;
mod recording;
mod to_field_set;
mod typed_form;

pub use self::{
    applying::{ApplyError, apply, apply_subresource},
    conflicts::{Conflict, conflict_cause_message, conflict_message},
    list_types::{DeducedListTypes, ListTypes},
    recording::{record_subresource_update, record_update},
};
