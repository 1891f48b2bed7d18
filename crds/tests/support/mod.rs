//! Test support shared by the crds integration tests.
#![allow(dead_code)]

pub mod populate;

/// Asserts both round trips are exact, and (when `natural` is true) that no stash annotation was
/// needed: the natural conversion alone is lossless for this object.
#[macro_export]
macro_rules! assert_round_trips {
    ($alpha:expr, $beta:expr, $to_beta:path, $to_alpha:path, natural = $natural:expr) => {{
        let alpha = $alpha;
        let beta = $beta;
        let converted = $to_beta(&alpha);
        assert_eq!($to_alpha(&converted), alpha, "alpha -> beta -> alpha");
        let converted_back = $to_alpha(&beta);
        assert_eq!($to_beta(&converted_back), beta, "beta -> alpha -> beta");
        if $natural {
            for annotations in [&converted.metadata.annotations, &converted_back.metadata.annotations] {
                let stashed: Vec<_> = annotations
                    .iter()
                    .flatten()
                    .filter(|(key, _)| key.starts_with(kruise_crds::conversion::STASH_ANNOTATION_PREFIX))
                    .collect();
                assert!(stashed.is_empty(), "natural conversion lost data: {stashed:?}");
            }
        }
    }};
}
