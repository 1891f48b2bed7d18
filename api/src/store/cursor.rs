//! Opaque pagination cursors. A cursor names the position after the last item of a page and the
//! listing it belongs to (`a` audit, `r` rollouts), so a cursor from one listing is refused by
//! another rather than silently skipping records. Clients must treat it as an opaque string.

use base64::Engine;

const ENGINE: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The listing a cursor belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    /// `GET /v1/audit`.
    Audit,
    /// `GET /v1/namespaces/{ns}/rollouts`.
    Rollouts,
}

impl Listing {
    fn tag(self) -> &'static str {
        match self {
            Self::Audit => "a",
            Self::Rollouts => "r",
        }
    }
}

/// The cursor continuing a listing below sequence number `before`.
pub fn encode(listing: Listing, before: i64) -> String {
    ENGINE.encode(format!("v1:{}:{before}", listing.tag()))
}

/// The sequence number a cursor continues below; `None` when it is not a cursor of `listing`.
pub fn decode(listing: Listing, cursor: &str) -> Option<i64> {
    let bytes = ENGINE.decode(cursor.trim()).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let rest = text.strip_prefix("v1:")?.strip_prefix(listing.tag())?.strip_prefix(':')?;
    rest.parse::<i64>().ok().filter(|seq| *seq > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let cursor = encode(Listing::Audit, 42);
        assert_eq!(decode(Listing::Audit, &cursor), Some(42));
        assert_eq!(decode(Listing::Rollouts, &cursor), None);
        assert_eq!(decode(Listing::Audit, "not a cursor"), None);
        assert_eq!(decode(Listing::Audit, &ENGINE.encode("v1:a:-3")), None);
    }
}
