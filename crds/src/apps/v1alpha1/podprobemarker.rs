//! podprobemarker (v1alpha1 only): filled in by the kind's author.
