//! The string formats of kube-openapi's `strfmt` registry that CRDs may use.

use std::sync::LazyLock;

use regex::Regex;

use super::names;
use crate::semantics::jsonpath::valid_date;

#[allow(clippy::unwrap_used)] // constant patterns
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}]",
        r"(([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
    ))
    .unwrap()
});
#[allow(clippy::unwrap_used)]
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$").unwrap()
});
#[allow(clippy::unwrap_used)]
static UUID3: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$").unwrap()
});
#[allow(clippy::unwrap_used)]
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").unwrap()
});
#[allow(clippy::unwrap_used)]
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").unwrap()
});
#[allow(clippy::unwrap_used)]
static CREDIT_CARD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|",
        r"3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$"
    ))
    .unwrap()
});
#[allow(clippy::unwrap_used)]
static HEX_COLOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").unwrap());
#[allow(clippy::unwrap_used)]
static RGB_COLOR: LazyLock<Regex> = LazyLock::new(|| {
    let part = r"(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
    let space = r"[\t\n\f\r ]*";
    Regex::new(&format!(r"^rgb\({space}{part}{space},{space}{part}{space},{space}{part}{space}\)$")).unwrap()
});
#[allow(clippy::unwrap_used)]
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$").unwrap()
});
#[allow(clippy::unwrap_used)]
static SSN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$").unwrap());
#[allow(clippy::unwrap_used)]
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(?:[^<>]*<[^<>@\s]+@[^<>@\s]+>|"[^"]*"@[^<>@\s,]+|[^<>@\s,"]+@[^<>@\s,]+)$"#).unwrap()
});

/// Whether `text` is valid for the (dash-less) format name `format`.
pub(super) fn is_valid(format: &str, text: &str) -> bool {
    match format {
        "bsonobjectid" => text.len() == 24 && text.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(text),
        "email" => EMAIL.is_match(text),
        "hostname" => {
            HOSTNAME.is_match(text) && text.len() <= 255 && text.split('.').all(|label| label.len() <= 63)
        }
        "ipv4" => parse_ip(text).is_some() && text.contains('.'),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok() && text.contains(':'),
        "cidr" => is_cidr(text),
        "mac" => is_mac(text),
        "uuid" => UUID.is_match(text),
        "uuid3" => UUID3.is_match(text),
        "uuid4" => UUID4.is_match(text),
        "uuid5" => UUID5.is_match(text),
        "isbn" => is_isbn10(text) || is_isbn13(text),
        "isbn10" => is_isbn10(text),
        "isbn13" => is_isbn13(text),
        "creditcard" => is_credit_card(text),
        "ssn" => text.len() == 11 && SSN.is_match(text),
        "hexcolor" => HEX_COLOR.is_match(text),
        "rgbcolor" => RGB_COLOR.is_match(text),
        "byte" => BASE64.is_match(text),
        "password" => true,
        "date" => parse_date(text).is_some(),
        "duration" => is_duration(text),
        "datetime" => is_date_time(text),
        "k8sshortname" => text.len() <= 63 && names::dns1123_label(text).is_empty(),
        "k8slongname" => text.len() <= 253 && names::dns1123_subdomain(text).is_empty(),
        _ => true,
    }
}

fn is_request_uri(text: &str) -> bool {
    if text.is_empty() || text.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if text == "*" || text.starts_with('/') {
        return true;
    }
    let scheme_end = text.find(':');
    match scheme_end {
        Some(end) if end > 0 => {
            let scheme = &text[..end];
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        _ => false,
    }
}

/// An IPv4 address in dotted-decimal (leading zeros tolerated) or an IPv6 address.
fn parse_ip(text: &str) -> Option<()> {
    if text.contains(':') {
        return text.parse::<std::net::Ipv6Addr>().ok().map(|_| ());
    }
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    for part in parts {
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if part.parse::<u16>().ok()? > 255 {
            return None;
        }
    }
    Some(())
}

fn is_cidr(text: &str) -> bool {
    let Some((ip, bits)) = text.split_once('/') else { return false };
    if parse_ip(ip).is_none() || bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let max = if ip.contains(':') { 128 } else { 32 };
    bits.parse::<u32>().is_ok_and(|b| b <= max)
}

fn is_mac(text: &str) -> bool {
    let hex = |group: &str, len: usize| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit());
    for separator in [':', '-'] {
        let groups: Vec<&str> = text.split(separator).collect();
        if matches!(groups.len(), 6 | 8 | 20) && groups.iter().all(|g| hex(g, 2)) {
            return true;
        }
    }
    let groups: Vec<&str> = text.split('.').collect();
    if matches!(groups.len(), 3 | 4 | 10) && groups.iter().all(|g| hex(g, 4)) {
        return true;
    }
    matches!(text.len(), 12 | 16 | 40) && hex(text, text.len())
}

fn sanitize_isbn(text: &str) -> String {
    text.chars().filter(|c| !(c.is_whitespace() || *c == '-')).collect()
}

fn is_isbn10(text: &str) -> bool {
    let s = sanitize_isbn(text);
    let b = s.as_bytes();
    let shape =
        b.len() == 10 && b[..9].iter().all(u8::is_ascii_digit) && (b[9].is_ascii_digit() || b[9] == b'X');
    if !shape {
        return false;
    }
    let mut sum: u32 = (0..9).map(|i| (i as u32 + 1) * u32::from(b[i] - b'0')).sum();
    sum += 10 * if b[9] == b'X' { 10 } else { u32::from(b[9] - b'0') };
    sum.is_multiple_of(11)
}

fn is_isbn13(text: &str) -> bool {
    let s = sanitize_isbn(text);
    let b = s.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = (0..12).map(|i| if i % 2 == 0 { 1 } else { 3 } * u32::from(b[i] - b'0')).sum();
    u32::from(b[12] - b'0') == (10 - sum % 10) % 10
}

fn is_credit_card(text: &str) -> bool {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    if !CREDIT_CARD.is_match(&digits) {
        return false;
    }
    let mut sum = 0u32;
    for (i, c) in digits.bytes().rev().enumerate() {
        let mut d = u32::from(c - b'0');
        if i % 2 == 1 {
            d *= 2;
            if d >= 10 {
                d = d % 10 + 1;
            }
        }
        sum += d;
    }
    sum.is_multiple_of(10)
}

/// `YYYY-MM-DD`, a real calendar date.
pub(super) fn parse_date(text: &str) -> Option<(i64, u32, u32)> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(r)?;
        if part.bytes().all(|c| c.is_ascii_digit()) { part.parse().ok() } else { None }
    };
    let (year, month, day) = (digits(0..4)?, digits(5..7)? as u32, digits(8..10)? as u32);
    valid_date(year, month, day).then_some((year, month, day))
}

fn is_date_time(text: &str) -> bool {
    if text.len() < 4 {
        return false;
    }
    let lower = text.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || parse_date(parts[0]).is_none() {
        return false;
    }
    let time = parts[1].as_bytes();
    // hh:mm:ss(.fraction)?(z|±hh:mm)
    if time.len() < 9 || time[2] != b':' || time[5] != b':' {
        return false;
    }
    let two = |i: usize| -> Option<u32> {
        let (a, b) = (time.get(i)?, time.get(i + 1)?);
        (a.is_ascii_digit() && b.is_ascii_digit()).then(|| u32::from(a - b'0') * 10 + u32::from(b - b'0'))
    };
    let (Some(h), Some(m), Some(s)) = (two(0), two(3), two(6)) else { return false };
    let mut rest = &parts[1][8..];
    if rest.len() > 1 && !rest.starts_with(['z', '+', '-']) {
        // Any one character followed by digits is a fraction separator.
        let mut chars = rest.chars();
        chars.next();
        let tail = chars.as_str();
        let count = tail.bytes().take_while(u8::is_ascii_digit).count();
        if count == 0 {
            return false;
        }
        rest = &tail[count..];
    }
    let zone_ok = rest == "z" || {
        let z = rest.as_bytes();
        z.len() == 6
            && matches!(z[0], b'+' | b'-')
            && z[1].is_ascii_digit()
            && z[2].is_ascii_digit()
            && z[3] == b':'
            && z[4].is_ascii_digit()
            && z[5].is_ascii_digit()
    };
    zone_ok && h <= 23 && m <= 59 && s <= 59
}

fn is_duration(text: &str) -> bool {
    if go_parse_duration(text) {
        return true;
    }
    // The fallback of strfmt: "<digits><unit>" groups such as "3 days" or "1 hr".
    let units: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    #[allow(clippy::unwrap_used)] // constant pattern
    static GROUP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)").unwrap());
    GROUP.captures_iter(text).any(|caps| {
        let unit = caps.get(2).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
        caps.get(1).is_some_and(|d| d.as_str().parse::<i64>().is_ok())
            && units.iter().any(|variants| {
                let last = variants.len() - 1;
                variants
                    .iter()
                    .enumerate()
                    .any(|(i, v)| (i == last && unit.starts_with(v)) || unit.eq_ignore_ascii_case(v))
            })
    })
}

/// Go's `time.ParseDuration` syntax: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
fn go_parse_duration(text: &str) -> bool {
    let s = text.strip_prefix(['-', '+']).unwrap_or(text);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut rest = s;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let mut consumed = int_len;
        let mut frac_len = 0;
        if rest[consumed..].starts_with('.') {
            consumed += 1;
            frac_len = rest[consumed..].bytes().take_while(u8::is_ascii_digit).count();
            consumed += frac_len;
        }
        if int_len == 0 && frac_len == 0 {
            return false;
        }
        rest = &rest[consumed..];
        let unit_len = rest.find(|c: char| c == '.' || c.is_ascii_digit()).unwrap_or(rest.len());
        if !matches!(&rest[..unit_len], "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h") {
            return false;
        }
        rest = &rest[unit_len..];
    }
    true
}
