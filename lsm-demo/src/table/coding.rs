//! Byte-level encodings shared by the on-disk formats: little-endian fixed
//! integers, LEB128 varints, length-prefixed byte strings, and masked
//! CRC32C checksums. Every decoder checks bounds before it reads, and none
//! allocates from a length it has not checked against the bytes left.

/// Longest encoding of a `u64` varint.
pub(crate) const MAX_VARINT64_LEN: usize = 10;

/// Appends `v` as a LEB128 varint (7 bits per byte, low groups first).
pub(crate) fn put_varint64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `bytes` preceded by its length as a varint.
pub(crate) fn put_length_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Decodes a varint from the start of `input`: the value and the bytes it
/// took, or `None` if it is unterminated or longer than 10 bytes or
/// overflows 64 bits.
pub(crate) fn get_varint64(input: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &byte) in input.iter().take(MAX_VARINT64_LEN).enumerate() {
        let bits = u64::from(byte & 0x7f);
        if i == MAX_VARINT64_LEN - 1 && bits > 1 {
            return None;
        }
        value |= bits << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Reads a little-endian `u32` at `pos`, if the 4 bytes are there.
pub(crate) fn read_u32_le(input: &[u8], pos: usize) -> Option<u32> {
    let bytes = input.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

/// Reads a little-endian `u64` at `pos`, if the 8 bytes are there.
pub(crate) fn read_u64_le(input: &[u8], pos: usize) -> Option<u64> {
    let bytes = input.get(pos..pos.checked_add(8)?)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// Whether checksum mismatches are errors. Fuzzing builds (`--cfg fuzzing`,
/// set by cargo-fuzz) compute checksums but ignore mismatches, so that the
/// fuzzer reaches the parsers behind them instead of stopping at a CRC it
/// cannot guess.
pub(crate) const VERIFY_CHECKSUMS: bool = !cfg!(fuzzing);

/// A constant added after rotation, so a stored checksum of bytes that
/// themselves contain checksums does not look like a checksum of zeros.
const CRC_MASK_DELTA: u32 = 0x6c73_6d64;

/// Masks a CRC32C before it is stored: rotate right by 15, add a constant.
/// Stored checksums are masked so that checksumming data that embeds
/// checksums (a file inside a file) stays effective.
pub(crate) fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(CRC_MASK_DELTA)
}

/// The masked CRC32C of the concatenation of `parts`.
pub(crate) fn masked_crc(parts: &[&[u8]]) -> u32 {
    let crc = parts
        .iter()
        .fold(0u32, |crc, part| crc32c::crc32c_append(crc, part));
    mask_crc(crc)
}

/// A cursor over bytes being decoded; every read is bounds-checked and
/// reports what was expected on failure.
#[derive(Debug)]
pub(crate) struct Decoder<'a> {
    input: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Self {
        Self { input, pos: 0 }
    }

    /// Offset of the next byte to read.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.input.len() - self.pos
    }

    pub(crate) fn varint64(&mut self, what: &'static str) -> Result<u64, &'static str> {
        let (v, n) = get_varint64(&self.input[self.pos..]).ok_or(what)?;
        self.pos += n;
        Ok(v)
    }

    pub(crate) fn bytes(&mut self, len: u64, what: &'static str) -> Result<&'a [u8], &'static str> {
        let len = usize::try_from(len).map_err(|_| what)?;
        if len > self.remaining() {
            return Err(what);
        }
        let out = &self.input[self.pos..self.pos + len];
        self.pos += len;
        Ok(out)
    }

    pub(crate) fn length_prefixed(&mut self, what: &'static str) -> Result<&'a [u8], &'static str> {
        let len = self.varint64(what)?;
        self.bytes(len, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip() {
        for v in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX - 1, u64::MAX] {
            let mut buf = Vec::new();
            put_varint64(&mut buf, v);
            assert_eq!(get_varint64(&buf), Some((v, buf.len())));
            assert_eq!(get_varint64(&buf[..buf.len() - 1]), None);
        }
    }

    #[test]
    fn varint_rejects_overflow_and_overlong() {
        let mut ten = vec![0xff; 9];
        ten.push(0x02); // bit 64 set
        assert_eq!(get_varint64(&ten), None);
        assert_eq!(get_varint64(&[0x80; 11]), None);
        assert_eq!(get_varint64(&[]), None);
    }

    #[test]
    fn decoder_checks_lengths_before_reading() {
        let mut buf = Vec::new();
        put_varint64(&mut buf, u64::MAX);
        let mut d = Decoder::new(&buf);
        assert_eq!(d.length_prefixed("x"), Err("x"));
        let mut buf = Vec::new();
        put_length_prefixed(&mut buf, b"abc");
        let mut d = Decoder::new(&buf);
        assert_eq!(d.length_prefixed("x"), Ok(&b"abc"[..]));
        assert_eq!(d.remaining(), 0);
        assert_eq!(d.position(), 4);
    }

    #[test]
    fn masking_changes_the_crc() {
        let crc = crc32c::crc32c(b"abc");
        assert_ne!(mask_crc(crc), crc);
        assert_eq!(masked_crc(&[b"a", b"bc"]), mask_crc(crc));
    }
}
