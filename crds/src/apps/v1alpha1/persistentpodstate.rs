//! persistentpodstate (v1alpha1): filled in by the kind's author.
