//! statefulset conversion: filled in by the kind's author.
