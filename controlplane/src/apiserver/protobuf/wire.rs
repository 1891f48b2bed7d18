//! The protobuf wire format at its lowest level: varints, keys, length-delimited fields, and
//! a reader that splits a message into its fields.

use super::CodecError;

/// Wire type of varint fields.
pub const VARINT: u8 = 0;
/// Wire type of 64-bit fields.
pub const FIXED64: u8 = 1;
/// Wire type of length-delimited fields.
pub const LEN: u8 = 2;
/// Wire type of 32-bit fields.
pub const FIXED32: u8 = 5;

/// Appends a varint.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends a field key.
pub fn put_key(out: &mut Vec<u8>, number: u32, wire_type: u8) {
    put_varint(out, (u64::from(number) << 3) | u64::from(wire_type));
}

/// Appends a length-delimited field.
pub fn put_bytes(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    put_key(out, number, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends a varint field.
pub fn put_varint_field(out: &mut Vec<u8>, number: u32, value: u64) {
    put_key(out, number, VARINT);
    put_varint(out, value);
}

/// One field value as read off the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Raw<'a> {
    /// A varint.
    Varint(u64),
    /// A 64-bit value.
    Fixed64(u64),
    /// A 32-bit value.
    Fixed32(u32),
    /// Length-delimited bytes.
    Bytes(&'a [u8]),
}

fn varint(data: &[u8], at: &mut usize) -> Result<u64, CodecError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *data.get(*at).ok_or(CodecError::Truncated)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err(CodecError::Malformed("varint longer than 10 bytes".into()))
}

fn take<'a>(data: &'a [u8], at: &mut usize, len: usize) -> Result<&'a [u8], CodecError> {
    let end = at.checked_add(len).filter(|end| *end <= data.len()).ok_or(CodecError::Truncated)?;
    let slice = &data[*at..end];
    *at = end;
    Ok(slice)
}

/// Splits a message into its fields, in wire order.
pub fn fields(data: &[u8]) -> Result<Vec<(u32, Raw<'_>)>, CodecError> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < data.len() {
        let key = varint(data, &mut at)?;
        let number = u32::try_from(key >> 3).map_err(|_| CodecError::Malformed("field number".into()))?;
        if number == 0 {
            return Err(CodecError::Malformed("field number 0".into()));
        }
        let value = match (key & 7) as u8 {
            VARINT => Raw::Varint(varint(data, &mut at)?),
            FIXED64 => {
                let bytes = take(data, &mut at, 8)?;
                Raw::Fixed64(u64::from_le_bytes(bytes.try_into().map_err(|_| CodecError::Truncated)?))
            }
            LEN => {
                let len = usize::try_from(varint(data, &mut at)?).map_err(|_| CodecError::Truncated)?;
                Raw::Bytes(take(data, &mut at, len)?)
            }
            FIXED32 => {
                let bytes = take(data, &mut at, 4)?;
                Raw::Fixed32(u32::from_le_bytes(bytes.try_into().map_err(|_| CodecError::Truncated)?))
            }
            other => return Err(CodecError::Malformed(format!("wire type {other}"))),
        };
        out.push((number, value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_fields_split() {
        let mut out = Vec::new();
        put_varint_field(&mut out, 1, 300);
        put_bytes(&mut out, 2, b"abc");
        put_varint_field(&mut out, 17, u64::MAX);
        assert_eq!(&out[..3], &[0x08, 0xac, 0x02]);
        let read = fields(&out).unwrap();
        assert_eq!(read, vec![(1, Raw::Varint(300)), (2, Raw::Bytes(b"abc")), (17, Raw::Varint(u64::MAX))]);
    }

    #[test]
    fn truncated_and_malformed_input_is_an_error_not_a_panic() {
        assert_eq!(fields(&[0x12, 0x05, b'a']), Err(CodecError::Truncated));
        assert_eq!(fields(&[0x08]), Err(CodecError::Truncated));
        assert!(matches!(fields(&[0x0b]), Err(CodecError::Malformed(_))));
        assert!(matches!(fields(&[0x00, 0x01]), Err(CodecError::Malformed(_))));
        assert!(matches!(fields(&[0xff; 12]), Err(CodecError::Malformed(_))));
    }
}
