//! The range-deletion block: `(key, end)` pairs, each a varint length and
//! bytes, in the order the builder was given them.

use super::coding::{Decoder, put_length_prefixed};

/// A range deletion as the table stores it: a key and the range's end.
pub(super) type RangeDeletion = (Vec<u8>, Vec<u8>);

/// Appends one range deletion to a block being built.
pub(super) fn encode_to(out: &mut Vec<u8>, key: &[u8], end: &[u8]) {
    put_length_prefixed(out, key);
    put_length_prefixed(out, end);
}

/// Decodes a whole block. Nothing is allocated for a length read from the
/// block before the decoder has checked it against the block's size.
pub(super) fn decode(block: &[u8], expected: u64) -> Result<Vec<RangeDeletion>, &'static str> {
    let mut d = Decoder::new(block);
    let mut out = Vec::new();
    while d.remaining() > 0 {
        let key = d.length_prefixed("bad range deletion key")?;
        let end = d.length_prefixed("bad range deletion end")?;
        out.push((key.to_vec(), end.to_vec()));
    }
    if out.len() as u64 != expected {
        return Err("range deletion count does not match the properties");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let mut block = Vec::new();
        encode_to(&mut block, b"a", b"c");
        encode_to(&mut block, b"", b"zz");
        let pairs = decode(&block, 2).unwrap();
        assert_eq!(
            pairs,
            [(b"a".to_vec(), b"c".to_vec()), (vec![], b"zz".to_vec())]
        );
        assert!(decode(&block, 3).is_err());
        assert!(decode(&block[..block.len() - 1], 2).is_err());
        assert_eq!(decode(&[], 0).unwrap(), []);
    }
}
