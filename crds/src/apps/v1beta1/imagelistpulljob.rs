//! imagelistpulljob (v1beta1): filled in by the kind's author.
