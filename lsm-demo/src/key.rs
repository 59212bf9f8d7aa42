//! Internal keys: how the engine orders versions of a user key.
//!
//! An internal key is the user key followed by an 8-byte little-endian tag,
//! `sequence << 8 | value type`. Internal keys sort by user key ascending,
//! then by tag descending, so the newest version of a key comes first and a
//! seek to `(key, snapshot sequence)` lands on the newest version visible to
//! that snapshot.
//!
//! A memtable entry packs an internal key and its value into one byte string,
//! `varint32(internal key length) ++ internal key ++ value`, so that a
//! memtable stores one allocation per write.

use std::cmp::Ordering;

use key_comparator::Comparator;

use crate::options::UserComparator;

/// Sequence numbers are 56 bits: the low byte of the tag holds the type.
pub const MAX_SEQUENCE: u64 = (1 << 56) - 1;

/// Size of the tag that ends every internal key.
pub const TAG_LEN: usize = 8;

/// What an entry records about its user key.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{internal_key, parse_internal_key, ValueType};
/// let tombstone = internal_key(b"k", 7, ValueType::Deletion);
/// let parsed = parse_internal_key(&tombstone).unwrap();
/// assert_eq!(parsed.value_type, ValueType::Deletion);
/// assert_eq!(ValueType::Value as u8, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ValueType {
    /// A tombstone: the key was deleted at this sequence.
    Deletion = 0,
    /// A value was put at this sequence.
    Value = 1,
}

impl ValueType {
    /// The type that sorts first among equal (user key, sequence) pairs,
    /// used to build seek targets.
    pub const FOR_SEEK: ValueType = ValueType::Value;

    /// Decodes a type byte; `None` for bytes no version of the engine writes.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::key::ValueType;
    /// assert_eq!(ValueType::from_byte(1), Some(ValueType::Value));
    /// assert_eq!(ValueType::from_byte(ValueType::Deletion as u8), Some(ValueType::Deletion));
    /// assert_eq!(ValueType::from_byte(7), None);
    /// ```
    #[inline]
    pub fn from_byte(b: u8) -> Option<ValueType> {
        match b {
            0 => Some(ValueType::Deletion),
            1 => Some(ValueType::Value),
            _ => None,
        }
    }
}

/// Packs a sequence number and a type into a tag.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{pack_tag, ValueType};
/// assert_eq!(pack_tag(5, ValueType::Value), 0x501);
/// // A newer sequence gives a larger tag, whatever the type:
/// assert!(pack_tag(6, ValueType::Deletion) > pack_tag(5, ValueType::Value));
/// ```
#[inline]
pub fn pack_tag(seq: u64, t: ValueType) -> u64 {
    debug_assert!(seq <= MAX_SEQUENCE);
    (seq << 8) | t as u64
}

/// Appends the internal key `(user_key, seq, t)` to `out`.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{append_internal_key, internal_key, ValueType, TAG_LEN};
/// let mut buf = b"prefix:".to_vec();
/// append_internal_key(&mut buf, b"k", 9, ValueType::Value);
/// assert_eq!(buf.len(), 7 + 1 + TAG_LEN);
/// assert_eq!(buf[7..], internal_key(b"k", 9, ValueType::Value));
/// ```
#[inline]
pub fn append_internal_key(out: &mut Vec<u8>, user_key: &[u8], seq: u64, t: ValueType) {
    out.extend_from_slice(user_key);
    out.extend_from_slice(&pack_tag(seq, t).to_le_bytes());
}

/// Builds the internal key `(user_key, seq, t)`.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{internal_key, ValueType};
/// let ikey = internal_key(b"k", 1, ValueType::Value);
/// // "k", then the tag 1 << 8 | 1 in little-endian order.
/// assert_eq!(ikey, [b'k', 1, 1, 0, 0, 0, 0, 0, 0]);
/// ```
pub fn internal_key(user_key: &[u8], seq: u64, t: ValueType) -> Vec<u8> {
    let mut out = Vec::with_capacity(user_key.len() + TAG_LEN);
    append_internal_key(&mut out, user_key, seq, t);
    out
}

/// An internal key split into its parts.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{internal_key, parse_internal_key, ParsedKey, ValueType};
/// let ikey = internal_key(b"apple", 42, ValueType::Value);
/// let expected = ParsedKey { user_key: b"apple", sequence: 42, value_type: ValueType::Value };
/// assert_eq!(parse_internal_key(&ikey), Some(expected));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    /// The key the user wrote.
    pub user_key: &'a [u8],
    /// The sequence number of this version.
    pub sequence: u64,
    /// Value or tombstone.
    pub value_type: ValueType,
}

/// Splits an internal key; `None` if it is too short or has an unknown type.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{internal_key, parse_internal_key, ValueType};
/// let mut ikey = internal_key(b"k", 9, ValueType::Deletion);
/// let p = parse_internal_key(&ikey).unwrap();
/// assert_eq!((p.user_key, p.sequence, p.value_type), (&b"k"[..], 9, ValueType::Deletion));
/// assert_eq!(parse_internal_key(b"short"), None); // no room for a tag
/// ikey[1] = 0xee; // the type byte
/// assert_eq!(parse_internal_key(&ikey), None);
/// ```
#[inline]
pub fn parse_internal_key(ikey: &[u8]) -> Option<ParsedKey<'_>> {
    let split = ikey.len().checked_sub(TAG_LEN)?;
    let tag = u64::from_le_bytes(ikey[split..].try_into().ok()?);
    Some(ParsedKey {
        user_key: &ikey[..split],
        sequence: tag >> 8,
        value_type: ValueType::from_byte(tag as u8)?,
    })
}

/// The user-key part of an internal key: empty if the input is too short to
/// hold a tag (the comparators then treat it as an empty user key with tag
/// 0, consistently).
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{internal_key, user_key, ValueType};
/// assert_eq!(user_key(&internal_key(b"apple", 3, ValueType::Value)), b"apple");
/// assert_eq!(user_key(&internal_key(b"", 3, ValueType::Value)), b"");
/// assert_eq!(user_key(b"short"), b""); // no room for a tag
/// ```
#[inline]
pub fn user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(TAG_LEN)]
}

#[inline]
pub(crate) fn tag_of(ikey: &[u8]) -> u64 {
    let n = ikey.len();
    if n < TAG_LEN {
        return 0;
    }
    u64::from_le_bytes(ikey[n - TAG_LEN..].try_into().unwrap_or([0; 8]))
}

/// Orders internal keys: user key ascending (bytewise unless the database
/// was given another order), then tag descending.
///
/// # Examples
///
/// ```
/// use key_comparator::Comparator;
/// use lsm_demo::key::{internal_key, InternalKeyComparator, ValueType};
/// use std::cmp::Ordering;
/// let old = internal_key(b"k", 1, ValueType::Value);
/// let new = internal_key(b"k", 2, ValueType::Value);
/// let next = internal_key(b"l", 9, ValueType::Value);
/// let cmp = InternalKeyComparator::default(); // user keys bytewise
/// assert_eq!(cmp.compare(&new, &old), Ordering::Less); // newest first
/// assert_eq!(cmp.compare(&old, &next), Ordering::Less);
/// ```
#[derive(Debug, Default, Clone)]
pub struct InternalKeyComparator {
    user: UserComparator,
}

impl InternalKeyComparator {
    /// Orders internal keys by `user`'s order of their user keys.
    pub(crate) fn new(user: UserComparator) -> Self {
        InternalKeyComparator { user }
    }
}

impl Comparator for InternalKeyComparator {
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.user.compare_internal(a, b)
    }
}

/// [`InternalKeyComparator`] as a function, for bytewise user keys.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{compare_internal_keys, internal_key, ValueType};
/// let a1 = internal_key(b"a", 1, ValueType::Value);
/// let a5 = internal_key(b"a", 5, ValueType::Deletion);
/// let b1 = internal_key(b"b", 1, ValueType::Value);
/// let mut keys = vec![b1.clone(), a1.clone(), a5.clone()];
/// keys.sort_by(|x, y| compare_internal_keys(x, y));
/// assert_eq!(keys, [a5, a1, b1]);
/// ```
#[inline]
pub fn compare_internal_keys(a: &[u8], b: &[u8]) -> Ordering {
    key_comparator::compare_bytes(user_key(a), user_key(b)).then_with(|| tag_of(b).cmp(&tag_of(a)))
}

// ---- varints ---------------------------------------------------------------

/// Appends `v` as a LEB128 varint.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::put_varint;
/// let mut out = Vec::new();
/// put_varint(&mut out, 1);
/// put_varint(&mut out, 300);
/// assert_eq!(out, [0x01, 0xac, 0x02]);
/// ```
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes a LEB128 varint of at most 10 bytes from the front of `input`;
/// returns the value and the bytes it used, or `None` if it is truncated or
/// overlong.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::get_varint;
/// assert_eq!(get_varint(&[0xac, 0x02, 0xff]), Some((300, 2)));
/// assert_eq!(get_varint(&[0xac]), None); // truncated
/// assert_eq!(get_varint(&[0x80; 11]), None); // overlong
/// ```
#[inline]
pub fn get_varint(input: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, &b) in input.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Bytes `put_varint(v)` writes.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{put_varint, varint_len};
/// assert_eq!(varint_len(127), 1);
/// assert_eq!(varint_len(128), 2);
/// assert_eq!(varint_len(u64::MAX), 10);
/// let mut out = Vec::new();
/// put_varint(&mut out, 300);
/// assert_eq!(out.len(), varint_len(300));
/// ```
#[inline]
pub fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

// ---- memtable entries ------------------------------------------------------

/// Bytes a memtable entry for `(user_key, value)` takes.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{entry, entry_len, ValueType};
/// // 1 length byte + 3-byte key + 8-byte tag + 5-byte value:
/// assert_eq!(entry_len(3, 5), 17);
/// assert_eq!(entry(b"key", 1, ValueType::Value, b"value").len(), entry_len(3, 5));
/// ```
#[inline]
pub fn entry_len(user_key_len: usize, value_len: usize) -> usize {
    let ikey_len = user_key_len + TAG_LEN;
    varint_len(ikey_len as u64) + ikey_len + value_len
}

/// Writes a memtable entry into `buf`, which must be exactly
/// [`entry_len`] bytes long.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{decode_entry, encode_entry, entry_len, internal_key, ValueType};
/// let mut buf = vec![0u8; entry_len(1, 2)];
/// encode_entry(&mut buf, b"k", 7, ValueType::Value, b"v1");
/// let (ikey, value) = decode_entry(&buf);
/// assert_eq!(ikey, internal_key(b"k", 7, ValueType::Value));
/// assert_eq!(value, b"v1");
/// ```
#[inline]
pub fn encode_entry(buf: &mut [u8], user_key: &[u8], seq: u64, t: ValueType, value: &[u8]) {
    let ikey_len = user_key.len() + TAG_LEN;
    let mut pos = 0;
    let mut v = ikey_len as u64;
    while v >= 0x80 {
        buf[pos] = (v as u8) | 0x80;
        v >>= 7;
        pos += 1;
    }
    buf[pos] = v as u8;
    pos += 1;
    buf[pos..pos + user_key.len()].copy_from_slice(user_key);
    pos += user_key.len();
    buf[pos..pos + TAG_LEN].copy_from_slice(&pack_tag(seq, t).to_le_bytes());
    pos += TAG_LEN;
    buf[pos..].copy_from_slice(value);
}

/// Builds a memtable entry in a fresh vector.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{entry, ValueType};
/// let e = entry(b"k", 1, ValueType::Value, b"v");
/// // varint32(9) ++ "k" ++ tag (1 << 8 | 1) ++ "v"
/// assert_eq!(e, [9, b'k', 1, 1, 0, 0, 0, 0, 0, 0, b'v']);
/// ```
pub fn entry(user_key: &[u8], seq: u64, t: ValueType, value: &[u8]) -> Vec<u8> {
    let mut buf = vec![0; entry_len(user_key.len(), value.len())];
    encode_entry(&mut buf, user_key, seq, t, value);
    buf
}

/// Splits a memtable entry into (internal key, value). Entries are written
/// by the engine itself, so a malformed one yields an empty key.
///
/// # Examples
///
/// ```
/// use lsm_demo::key::{decode_entry, entry, parse_internal_key, ValueType};
/// let e = entry(b"apple", 3, ValueType::Value, b"red");
/// let (ikey, value) = decode_entry(&e);
/// assert_eq!(parse_internal_key(ikey).unwrap().sequence, 3);
/// assert_eq!(value, b"red");
/// assert_eq!(decode_entry(&[0xff]), (&[][..], &[][..])); // malformed
/// ```
#[inline]
pub fn decode_entry(e: &[u8]) -> (&[u8], &[u8]) {
    match get_varint(e) {
        Some((len, used)) if (len as usize) <= e.len() - used => {
            let end = used + len as usize;
            (&e[used..end], &e[end..])
        }
        _ => (&[], &[]),
    }
}

/// Orders memtable entries by their internal keys.
///
/// # Examples
///
/// ```
/// use key_comparator::Comparator;
/// use lsm_demo::key::{entry, EntryComparator, ValueType};
/// use std::cmp::Ordering;
/// let v1 = entry(b"k", 1, ValueType::Value, b"old");
/// let v2 = entry(b"k", 2, ValueType::Value, b"new");
/// let cmp = EntryComparator::default(); // user keys bytewise
/// assert_eq!(cmp.compare(&v2, &v1), Ordering::Less); // newest first
/// // Values take no part in the order:
/// let other = entry(b"k", 1, ValueType::Value, b"zzz");
/// assert_eq!(cmp.compare(&v1, &other), Ordering::Equal);
/// ```
#[derive(Debug, Default, Clone)]
pub struct EntryComparator {
    user: UserComparator,
}

impl EntryComparator {
    /// Orders entries by `user`'s order of their user keys.
    pub(crate) fn new(user: UserComparator) -> Self {
        EntryComparator { user }
    }

    /// The order of user keys it follows.
    pub(crate) fn user(&self) -> &UserComparator {
        &self.user
    }
}

impl Comparator for EntryComparator {
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        if !self.user.is_bytewise() {
            return self.user.compare_internal(entry_key(a), entry_key(b));
        }
        // Most comparisons are decided by the first 8 bytes of the user
        // keys: read them straight from the entries when both keys have
        // a one-byte length and a user key of 8 bytes or more.
        if let (
            Some(&[la, a0, a1, a2, a3, a4, a5, a6, a7]),
            Some(&[lb, b0, b1, b2, b3, b4, b5, b6, b7]),
        ) = (a.first_chunk::<9>(), b.first_chunk::<9>())
        {
            const MIN: u8 = TAG_LEN as u8 + 8;
            if (MIN..0x80).contains(&la)
                && (MIN..0x80).contains(&lb)
                && usize::from(la) < a.len()
                && usize::from(lb) < b.len()
            {
                let wa = u64::from_be_bytes([a0, a1, a2, a3, a4, a5, a6, a7]);
                let wb = u64::from_be_bytes([b0, b1, b2, b3, b4, b5, b6, b7]);
                if wa != wb {
                    return wa.cmp(&wb);
                }
            }
        }
        compare_internal_keys(entry_key(a), entry_key(b))
    }

    /// The user key's summary: entries are ordered by user key first, and
    /// equal user keys give equal summaries, so the order of summaries
    /// never contradicts the entries'.
    #[inline]
    fn key_prefix(&self, entry: &[u8]) -> u64 {
        self.user.key_prefix(user_key(entry_key(entry)))
    }
}

/// The internal key of an entry: `decode_entry(e).0`, with the common case
/// (a key shorter than 128 bytes, whose length is one varint byte) first.
/// A memtable insert compares entries a few dozen times; this keeps each
/// comparison to a few loads.
#[inline(always)]
fn entry_key(e: &[u8]) -> &[u8] {
    if let Some((&len, rest)) = e.split_first()
        && len < 0x80
    {
        return rest.get(..usize::from(len)).unwrap_or(&[]);
    }
    decode_entry(e).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_comparator_agrees_with_decoded_internal_keys() {
        // Keys around the fast path's edges: shorter than 8 bytes, sharing
        // their first 8 bytes, and long enough for a two-byte length.
        let mut keys: Vec<Vec<u8>> = vec![vec![], b"a".to_vec(), b"abcdefg".to_vec()];
        for len in [8, 9, 16, 119, 120, 200] {
            for last in [0u8, 7, 255] {
                let mut k = vec![b'k'; len];
                k[len - 1] = last;
                keys.push(k);
            }
        }
        keys.push([b'k'; 8].iter().copied().chain([0]).collect());
        let mut entries = Vec::new();
        for k in &keys {
            for seq in [1, 7] {
                entries.push(entry(k, seq, ValueType::Value, b"v"));
                entries.push(entry(k, seq, ValueType::Deletion, b""));
            }
        }
        for a in &entries {
            for b in &entries {
                let cmp = EntryComparator::default();
                assert_eq!(
                    cmp.compare(a, b),
                    compare_internal_keys(decode_entry(a).0, decode_entry(b).0),
                    "{a:?} against {b:?}"
                );
                // The summaries never contradict the order.
                if cmp.compare(a, b).is_lt() {
                    assert!(cmp.key_prefix(a) <= cmp.key_prefix(b), "{a:?} < {b:?}");
                }
            }
        }
    }

    #[test]
    fn newest_version_sorts_first() {
        let a = internal_key(b"k", 5, ValueType::Value);
        let b = internal_key(b"k", 9, ValueType::Deletion);
        let c = internal_key(b"l", 1, ValueType::Value);
        assert_eq!(compare_internal_keys(&b, &a), Ordering::Less);
        assert_eq!(compare_internal_keys(&a, &c), Ordering::Less);
        let p = parse_internal_key(&b).unwrap();
        assert_eq!(
            (p.user_key, p.sequence, p.value_type),
            (&b"k"[..], 9, ValueType::Deletion)
        );
        assert!(parse_internal_key(b"short").is_none());
    }

    #[test]
    fn entries_round_trip_and_order() {
        let e1 = entry(b"apple", 3, ValueType::Value, b"red");
        let e2 = entry(b"apple", 7, ValueType::Value, b"green");
        let (k, v) = decode_entry(&e1);
        assert_eq!(v, b"red");
        assert_eq!(parse_internal_key(k).unwrap().sequence, 3);
        assert_eq!(EntryComparator::default().compare(&e2, &e1), Ordering::Less);
        let big = vec![7u8; 300];
        let e3 = entry(&big, 1, ValueType::Value, b"");
        assert_eq!(decode_entry(&e3).0.len(), 308);
        assert_eq!(decode_entry(&[0xff]).0, b"");
    }

    #[test]
    fn varints_round_trip() {
        for v in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v));
            assert_eq!(get_varint(&out), Some((v, out.len())));
        }
        assert_eq!(get_varint(&[0x80, 0x80]), None);
    }
}
