//! Kubernetes resource quantities (`100m`, `1.5Gi`, `2e3`): parsing and comparison.
//!
//! Validation compares requests with limits, and the simulated scheduler adds requests up
//! against allocatable, so values are kept as an exact count of nano-units. How Go parses and
//! prints a quantity (its canonical form) is [`go`].

pub mod go;

use std::{cmp::Ordering, fmt};

/// Why a quantity string is not a quantity.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
pub struct QuantityError;

/// A parsed quantity, as an exact number of nano-units (saturating at the i128 range).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Quantity {
    nanos: i128,
}

const NANO: i128 = 1_000_000_000;

impl Quantity {
    /// Parses the Kubernetes quantity syntax.
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        let text = text.trim();
        let (negative, body) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let number_end = body.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(body.len());
        let (number, suffix) = body.split_at(number_end);
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(QuantityError);
        }
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let digits = format!("{whole}{fraction}");
        // value = digits * 10^(-fraction.len()) * multiplier
        let mut decimal_exponent = -(fraction.len() as i32);
        let mut binary_multiplier: i128 = 1;
        match suffix {
            "" => {}
            "Ki" => binary_multiplier = 1 << 10,
            "Mi" => binary_multiplier = 1 << 20,
            "Gi" => binary_multiplier = 1 << 30,
            "Ti" => binary_multiplier = 1 << 40,
            "Pi" => binary_multiplier = 1 << 50,
            "Ei" => binary_multiplier = 1 << 60,
            "n" => decimal_exponent -= 9,
            "u" => decimal_exponent -= 6,
            "m" => decimal_exponent -= 3,
            "k" => decimal_exponent += 3,
            "M" => decimal_exponent += 6,
            "G" => decimal_exponent += 9,
            "T" => decimal_exponent += 12,
            "P" => decimal_exponent += 15,
            "E" => decimal_exponent += 18,
            other => {
                let exponent = other.strip_prefix(['e', 'E']).ok_or(QuantityError)?;
                let value: i32 = exponent.parse().map_err(|_| QuantityError)?;
                if !(-100..=100).contains(&value) {
                    return Err(QuantityError);
                }
                decimal_exponent += value;
            }
        }
        let mut nanos: i128 = 0;
        for digit in digits.bytes() {
            nanos = nanos.saturating_mul(10).saturating_add(i128::from(digit - b'0'));
        }
        nanos = nanos.saturating_mul(binary_multiplier);
        let exponent = decimal_exponent + 9;
        if exponent >= 0 {
            for _ in 0..exponent {
                nanos = nanos.saturating_mul(10);
            }
        } else {
            // Values below one nano-unit round up, as Kubernetes rounds up to its smallest scale.
            let mut divisor: i128 = 1;
            for _ in 0..(-exponent).min(38) {
                divisor = divisor.saturating_mul(10);
            }
            nanos = (nanos + divisor - 1) / divisor;
        }
        Ok(Self { nanos: if negative { -nanos } else { nanos } })
    }

    /// A quantity of whole units.
    pub fn from_units(units: i64) -> Self {
        Self { nanos: i128::from(units) * NANO }
    }

    /// A quantity of milli-units (cpu millicores).
    pub fn from_millis(millis: i64) -> Self {
        Self { nanos: i128::from(millis) * 1_000_000 }
    }

    /// The value in milli-units, rounded up.
    pub fn millis(&self) -> i128 {
        let (quotient, remainder) = (self.nanos / 1_000_000, self.nanos % 1_000_000);
        if remainder > 0 { quotient + 1 } else { quotient }
    }

    /// The value in whole units, rounded up.
    pub fn units(&self) -> i128 {
        let (quotient, remainder) = (self.nanos / NANO, self.nanos % NANO);
        if remainder > 0 { quotient + 1 } else { quotient }
    }

    /// Whether the quantity is below zero.
    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// The sum of two quantities (saturating).
    pub fn saturating_add(self, other: Self) -> Self {
        Self { nanos: self.nanos.saturating_add(other.nanos) }
    }

    /// The difference of two quantities (saturating).
    pub fn saturating_sub(self, other: Self) -> Self {
        Self { nanos: self.nanos.saturating_sub(other.nanos) }
    }

    /// Compares two quantity strings; `None` when either does not parse.
    pub fn compare(left: &str, right: &str) -> Option<Ordering> {
        Some(Self::parse(left).ok()?.cmp(&Self::parse(right).ok()?))
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos % NANO == 0 {
            write!(f, "{}", self.nanos / NANO)
        } else if self.nanos % 1_000_000 == 0 {
            write!(f, "{}m", self.nanos / 1_000_000)
        } else {
            write!(f, "{}n", self.nanos)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_suffix_kind() {
        let cases = [
            ("1", 1_000),
            ("100m", 100),
            ("0.5", 500),
            ("1.5k", 1_500_000),
            ("1Ki", 1_024_000),
            ("2Mi", 2 * 1_048_576 * 1000),
            ("1e3", 1_000_000),
            ("1E-3", 1),
            ("+3", 3_000),
            ("-2", -2_000),
            ("10u", 1),
        ];
        for (text, millis) in cases {
            assert_eq!(Quantity::parse(text).map(|q| q.millis()), Ok(millis), "{text}");
        }
    }

    #[test]
    fn rejects_malformed_quantities() {
        for text in ["", "abc", "1.2.3", "1Qi", "m", "1e", "--1", "1 Gi"] {
            assert_eq!(Quantity::parse(text), Err(QuantityError), "{text:?}");
        }
    }

    #[test]
    fn compares_across_notations() {
        assert_eq!(Quantity::compare("1Gi", "1G"), Some(Ordering::Greater));
        assert_eq!(Quantity::compare("1000m", "1"), Some(Ordering::Equal));
        assert_eq!(Quantity::compare("x", "1"), None);
    }
}
