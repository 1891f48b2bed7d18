//! `resource.Quantity` exactly as apimachinery (v0.32) parses and prints it: `ParseQuantity`
//! (with its fast path that keeps the input string when it is already in canonical form, so
//! `+1`, `100m` and `1Gi` print as written), `String()`/`MarshalJSON` through
//! `CanonicalizeBytes` (DecimalSI, BinarySI, DecimalExponent, BinarySI printed as DecimalSI
//! below 1024 or when it is not a whole number), and `RoundUp`, which the Kubernetes defaults
//! apply to resource lists at milli scale.
//!
//! Go's own quirks are kept on purpose: a DecimalSI exponent without a suffix (`1000E`, 10^21)
//! prints without one (`1`), and BinarySI values are capped at 2^63-1. The value is an exact
//! decimal (arbitrary precision, like Go's `inf.Dec`), so nothing is lost to rounding here.

use std::{cmp::Ordering, fmt};

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// How a quantity prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `12e6`.
    DecimalExponent,
    /// `12Mi`.
    BinarySI,
    /// `12M`.
    DecimalSI,
}

/// Why `ParseQuantity` refused a string (Go's error texts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// `ErrFormatWrong`.
    #[error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
    FormatWrong,
    /// `ErrSuffix`.
    #[error("unable to parse quantity's suffix")]
    Suffix,
    /// `ErrNumeric`.
    #[error("unable to parse numeric part of quantity")]
    Numeric,
}

/// A quantity as Go holds it: an exact decimal `unscaled * 10^-scale`, the format it prints in,
/// and the string Go caches when the input was already canonical.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoQuantity {
    unscaled: BigInt,
    scale: i32,
    format: Format,
    cached: Option<String>,
}

impl GoQuantity {
    /// `resource.ParseQuantity`.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        if text.is_empty() {
            return Err(ParseError::FormatWrong);
        }
        if text == "0" {
            return Ok(Self::zero(Some("0".into())));
        }
        let parts = split(text)?;
        let (base, exponent, format) = interpret(parts.suffix).ok_or(ParseError::Suffix)?;

        let mut mantissa: i64 = 1;
        let (precision, mut scale) = match format {
            Format::DecimalExponent | Format::DecimalSI => {
                (18 - len_i32(parts.num) - len_i32(parts.denom), exponent)
            }
            Format::BinarySI if exponent >= 0 && parts.denom.is_empty() => {
                mantissa <<= exponent;
                // Go: int32(float32(exponent)*3/10), exact for the binary exponents 10..60.
                (15 - len_i32(parts.num) - exponent * 3 / 10 - 1, 0)
            }
            Format::BinarySI => (-1, 0),
        };

        if precision >= 0 {
            scale -= len_i32(parts.denom);
            if scale >= -9 {
                let shifted = format!("{}{}", parts.num, parts.denom);
                let value: i64 = shifted.parse().map_err(|_| ParseError::Numeric)?;
                if let Some(result) = value.checked_mul(mantissa) {
                    let result = if parts.positive { result } else { -result };
                    let canonical = match format {
                        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
                        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
                    };
                    return Ok(Self {
                        unscaled: BigInt::from(result),
                        scale: -scale,
                        format,
                        cached: canonical.then(|| text.to_string()),
                    });
                }
            }
        }

        // The slow path: an arbitrary-precision decimal.
        let (mut unscaled, mut dec_scale) = parse_decimal(parts.value).ok_or(ParseError::Numeric)?;
        if base == 10 {
            dec_scale -= exponent;
        } else {
            unscaled *= BigInt::one() << u32::try_from(exponent).unwrap_or(0);
        }
        let negative = unscaled.is_negative();
        if negative {
            unscaled = -unscaled;
        }
        let mut format = format;
        let mut amount = Self { unscaled, scale: dec_scale, format, cached: None };
        if !amount.unscaled.is_zero() {
            // Non-zero values are rounded up to the smallest representable value (a nano).
            amount = amount.rounded_away(9);
        }
        if format == Format::BinarySI && amount.cmp_int(i64::MAX) == Ordering::Greater {
            amount = Self { unscaled: BigInt::from(i64::MAX), scale: 0, format, cached: None };
        }
        if format == Format::BinarySI
            && amount.cmp_int(1) == Ordering::Less
            && amount.cmp_int(0) == Ordering::Greater
        {
            format = Format::DecimalSI;
        }
        if negative {
            amount.unscaled = -amount.unscaled;
        }
        amount.format = format;
        Ok(amount)
    }

    /// The zero quantity (`Quantity{}`), printed `0`.
    fn zero(cached: Option<String>) -> Self {
        Self { unscaled: BigInt::zero(), scale: 0, format: Format::DecimalSI, cached }
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.unscaled.is_zero()
    }

    /// The format it prints in.
    pub fn format(&self) -> Format {
        self.format
    }

    /// `Quantity.RoundUp(scale)`: rounds away from zero to `10^scale` (Go's `Scale`, e.g. -3
    /// for milli) and tells whether that was exact. A value already that coarse keeps its
    /// cached string.
    pub fn round_up(&mut self, scale: i32) -> bool {
        let target = -scale;
        if self.scale <= target {
            return true;
        }
        self.cached = None;
        let rounded = self.rounded_away(target);
        let exact = rounded.cmp_value(self) == Ordering::Equal;
        *self = rounded;
        exact
    }

    /// The value rounded away from zero to `10^-scale` (the value unchanged, rescaled, when it
    /// is already that coarse), as Go's `inf.Dec.Round(.., RoundUp)`.
    fn rounded_away(&self, scale: i32) -> Self {
        let (unscaled, new_scale) = if self.scale <= scale {
            (&self.unscaled * pow10(scale - self.scale), scale)
        } else {
            let divisor = pow10(self.scale - scale);
            let quotient = &self.unscaled / &divisor;
            let remainder = &self.unscaled % &divisor;
            let quotient = match remainder.sign() {
                num_bigint::Sign::NoSign => quotient,
                num_bigint::Sign::Plus => quotient + 1,
                num_bigint::Sign::Minus => quotient - 1,
            };
            (quotient, scale)
        };
        Self { unscaled, scale: new_scale, format: self.format, cached: None }
    }

    fn cmp_value(&self, other: &Self) -> Ordering {
        let scale = self.scale.max(other.scale);
        let left = &self.unscaled * pow10(scale - self.scale);
        let right = &other.unscaled * pow10(scale - other.scale);
        left.cmp(&right)
    }

    fn cmp_int(&self, value: i64) -> Ordering {
        self.cmp_value(&Self { unscaled: BigInt::from(value), scale: 0, format: self.format, cached: None })
    }

    /// `CanonicalizeBytes`: the number and the suffix.
    fn canonical(&self) -> (String, String) {
        if self.is_zero() {
            return ("0".into(), String::new());
        }
        let mut format = self.format;
        let mut rounded = None;
        if format == Format::BinarySI {
            if self.cmp_int(-1024) == Ordering::Greater && self.cmp_int(1024) == Ordering::Less {
                format = Format::DecimalSI;
            } else {
                let whole = self.rounded_away(0);
                if whole.cmp_value(self) == Ordering::Equal {
                    rounded = Some(whole);
                } else {
                    format = Format::DecimalSI;
                }
            }
        }
        match (format, rounded) {
            (Format::BinarySI, Some(whole)) => {
                let (amount, times) = remove_factors(whole.unscaled, 1024);
                let suffix = match times {
                    1 => "Ki",
                    2 => "Mi",
                    3 => "Gi",
                    4 => "Ti",
                    5 => "Pi",
                    6 => "Ei",
                    _ => "",
                };
                (amount.to_string(), suffix.into())
            }
            _ => {
                let (mut amount, times) = remove_factors(self.unscaled.clone(), 10);
                let mut exponent = -self.scale + times;
                while exponent % 3 != 0 {
                    amount *= 10;
                    exponent -= 1;
                }
                let suffix = if format == Format::DecimalExponent {
                    if exponent == 0 { String::new() } else { format!("e{exponent}") }
                } else {
                    match exponent {
                        -9 => "n",
                        -6 => "u",
                        -3 => "m",
                        3 => "k",
                        6 => "M",
                        9 => "G",
                        12 => "T",
                        15 => "P",
                        18 => "E",
                        // Go finds no suffix for other exponents and prints none.
                        _ => "",
                    }
                    .into()
                };
                (amount.to_string(), suffix)
            }
        }
    }
}

/// `Quantity.String()` (and, quoted, `MarshalJSON`).
impl fmt::Display for GoQuantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(cached) = &self.cached {
            return f.write_str(cached);
        }
        let (number, suffix) = self.canonical();
        write!(f, "{number}{suffix}")
    }
}

/// What `Quantity.UnmarshalJSON` then `MarshalJSON` make of a string: its canonical form.
pub fn canonical(text: &str) -> Result<String, ParseError> {
    Ok(GoQuantity::parse(text.trim())?.to_string())
}

/// A quantity rounded up to milli-units as `SetDefaults_ResourceList` does, printed as Go
/// prints it afterwards.
pub fn round_up_milli(text: &str) -> Result<String, ParseError> {
    let mut quantity = GoQuantity::parse(text.trim())?;
    quantity.round_up(-3);
    Ok(quantity.to_string())
}

fn len_i32(text: &str) -> i32 {
    i32::try_from(text.len()).unwrap_or(i32::MAX)
}

fn pow10(exponent: i32) -> BigInt {
    num_traits::pow(BigInt::from(10), usize::try_from(exponent).unwrap_or(0))
}

/// Divides out `factor` as often as it goes (Go's `removeBigIntFactors`).
fn remove_factors(mut value: BigInt, factor: u32) -> (BigInt, i32) {
    let factor = BigInt::from(factor);
    let mut times = 0;
    while !value.is_zero() && (&value % &factor).is_zero() {
        value /= &factor;
        times += 1;
    }
    (value, times)
}

/// `inf.Dec.SetString`: an optional sign, digits and at most one point; at least one digit.
fn parse_decimal(text: &str) -> Option<(BigInt, i32)> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let digits = format!("{whole}{fraction}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let unscaled: BigInt = digits.parse().ok()?;
    Some((if negative { -unscaled } else { unscaled }, len_i32(fraction)))
}

/// The pieces `parseQuantityString` cuts a quantity into.
struct Parts<'a> {
    positive: bool,
    /// The number as written, sign included (`-1.5`).
    value: &'a str,
    /// Digits before the point, leading zeros removed (`0` when none are left).
    num: &'a str,
    /// Digits after the point.
    denom: &'a str,
    suffix: &'a str,
}

/// Go's `parseQuantityString`.
fn split(text: &str) -> Result<Parts<'_>, ParseError> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut positive = true;
    let mut pos = 0;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts { positive, value: "0", num: "0", denom: "", suffix: "" });
    }
    let start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts { positive, value: text, num: &text[start..], denom: "", suffix: "" });
    }
    let num = if pos == start { "0" } else { &text[start..pos] };
    let mut denom = "";
    if bytes[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        if pos >= end {
            return Ok(Parts { positive, value: text, num, denom: &text[start..], suffix: "" });
        }
        denom = &text[start..pos];
    }
    let value = &text[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && (bytes[pos] == b'-' || bytes[pos] == b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(ParseError::FormatWrong);
    }
    Ok(Parts { positive, value, num, denom, suffix: &text[suffix_start..] })
}

/// The suffix's base, exponent and format (Go's `quantitySuffixer.interpret`).
fn interpret(suffix: &str) -> Option<(i32, i32, Format)> {
    let decimal = |exponent| Some((10, exponent, Format::DecimalSI));
    let binary = |exponent| Some((2, exponent, Format::BinarySI));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let rest = suffix.strip_prefix(['e', 'E']).filter(|rest| !rest.is_empty())?;
            // strconv.ParseInt(.., 10, 64), then int32(...).
            let exponent: i64 = parse_go_int(rest)?;
            #[allow(clippy::cast_possible_truncation)] // Go truncates the same way
            Some((10, exponent as i32, Format::DecimalExponent))
        }
    }
}

/// `strconv.ParseInt(text, 10, 64)`: an optional sign and decimal digits.
fn parse_go_int(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_follow_go() {
        let cases = [
            ("0", "0"),
            ("1000m", "1"),
            ("0.5", "500m"),
            ("1024Mi", "1Gi"),
            ("1Gi", "1Gi"),
            ("100m", "100m"),
            ("+1", "+1"),
            ("1.5Gi", "1536Mi"),
            ("1.5Ki", "1536"),
            ("0.5Ki", "512"),
            ("1e3", "1e3"),
            ("1000", "1k"),
            ("10u", "10u"),
            ("1E", "1E"),
            ("1000E", "1"),
            ("0.0000000001", "1n"),
            ("-0.5", "-500m"),
            (".5", "500m"),
            ("00", "0"),
            ("12e6", "12e6"),
            ("1200e3", "1200e3"),
            ("120e4", "1200e3"),
        ];
        for (input, want) in cases {
            assert_eq!(canonical(input).as_deref(), Ok(want), "{input}");
        }
    }

    #[test]
    fn errors_are_go_errors() {
        assert_eq!(canonical(""), Err(ParseError::FormatWrong));
        assert_eq!(canonical("1 Gi"), Err(ParseError::FormatWrong));
        assert_eq!(canonical("1Qi"), Err(ParseError::FormatWrong));
        assert_eq!(canonical("1K"), Err(ParseError::Suffix));
        assert_eq!(canonical("1e"), Err(ParseError::Suffix));
    }

    #[test]
    fn milli_rounding_keeps_canonical_strings_that_need_none() {
        assert_eq!(round_up_milli("10u").as_deref(), Ok("1m"));
        assert_eq!(round_up_milli("+100m").as_deref(), Ok("+100m"));
        assert_eq!(round_up_milli("1.0001").as_deref(), Ok("1001m"));
        assert_eq!(round_up_milli("-1.0001").as_deref(), Ok("-1001m"));
        assert_eq!(round_up_milli("1Gi").as_deref(), Ok("1Gi"));
    }
}
