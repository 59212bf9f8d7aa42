//! The records of a batch and of a log record: decoding them, and the
//! headers and trailers around them in the log.

use super::{BatchOp, GROUP_HEADER_LEN, LOG_DATA_TYPE, RANGE_DELETION_TYPE};
use crate::key::{ValueType, get_varint};

/// A malformed log payload.
///
/// # Examples
///
/// The field says what was wrong with the record:
///
/// ```
/// use lsm_demo::BadRecord;
///
/// let err = BadRecord("bad length varint");
/// assert_eq!(err.0, "bad length varint");
/// assert_eq!(err, BadRecord("bad length varint"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRecord(pub &'static str);

/// One encoded record: an operation, or log data.
#[derive(Debug)]
pub(crate) enum Record<'a> {
    Op(BatchOp<'a>),
    LogData(&'a [u8]),
}

/// Iterates encoded records; stops with an error at the first malformed one.
#[derive(Debug)]
pub(crate) struct Records<'a> {
    pub(crate) rest: &'a [u8],
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, BadRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        let (&t, rest) = self.rest.split_first()?;
        let take = |rest: &mut &'a [u8]| -> Result<&'a [u8], BadRecord> {
            let (len, used) = get_varint(rest).ok_or(BadRecord("bad length varint"))?;
            let after = &rest[used..];
            if len > after.len() as u64 {
                return Err(BadRecord("length past the end of the record"));
            }
            let (s, tail) = after.split_at(len as usize);
            *rest = tail;
            Ok(s)
        };
        let mut rest = rest;
        let op = match ValueType::from_byte(t) {
            _ if t == LOG_DATA_TYPE => take(&mut rest).map(Record::LogData),
            _ if t == RANGE_DELETION_TYPE => take(&mut rest)
                .and_then(|from| Ok(Record::Op(BatchOp::DeleteRange(from, take(&mut rest)?)))),
            Some(ValueType::Value) => {
                take(&mut rest).and_then(|k| Ok(Record::Op(BatchOp::Put(k, take(&mut rest)?))))
            }
            Some(ValueType::Deletion) => take(&mut rest).map(|k| Record::Op(BatchOp::Delete(k))),
            None => Err(BadRecord("unknown operation type")),
        };
        self.rest = if op.is_ok() { rest } else { &[] };
        Some(op)
    }
}

/// Encodes a group's log record header.
pub(crate) fn group_header(first_seq: u64, count: u32) -> [u8; GROUP_HEADER_LEN] {
    let mut h = [0; GROUP_HEADER_LEN];
    h[..8].copy_from_slice(&first_seq.to_le_bytes());
    h[8..].copy_from_slice(&count.to_le_bytes());
    h
}

/// The length of a log trailer record.
pub(crate) const LOG_TRAILER_LEN: usize = GROUP_HEADER_LEN + 8;

/// The last record of a log the engine moved on from: the number of the log
/// that follows. It has the shape of a group header with a first sequence
/// (0) and a count (`u32::MAX`) no group has, then the log number.
pub(crate) fn log_trailer(next_log: u64) -> [u8; LOG_TRAILER_LEN] {
    let mut t = [0; LOG_TRAILER_LEN];
    t[..GROUP_HEADER_LEN].copy_from_slice(&group_header(0, u32::MAX));
    t[GROUP_HEADER_LEN..].copy_from_slice(&next_log.to_le_bytes());
    t
}

/// What the trailer of a log the engine closed names: no log has this
/// number. Only a log written positionally ends so, once its writers are
/// done: recovery then knows that damage before its end is damage, not a
/// crash's writes in flight.
pub(crate) const NO_NEXT_LOG: u64 = 0;

/// The next log named by a trailer record, or `None` for any other record.
pub(crate) fn decode_log_trailer(record: &[u8]) -> Option<u64> {
    let (header, next) = record.split_at_checked(GROUP_HEADER_LEN)?;
    let next: [u8; 8] = next.try_into().ok()?;
    (header == group_header(0, u32::MAX)).then_some(u64::from_le_bytes(next))
}

/// Decodes a group's log record: first sequence, count, and the operations.
pub(crate) fn decode_group(record: &[u8]) -> Result<(u64, Vec<BatchOp<'_>>), BadRecord> {
    if record.len() < GROUP_HEADER_LEN {
        return Err(BadRecord("record shorter than its header"));
    }
    let first = u64::from_le_bytes(record[..8].try_into().expect("8 bytes"));
    let count = u32::from_le_bytes(record[8..12].try_into().expect("4 bytes"));
    let mut ops = Vec::new();
    let records = Records {
        rest: &record[GROUP_HEADER_LEN..],
    };
    for r in records {
        if let Record::Op(op) = r? {
            ops.push(op);
        }
    }
    if ops.len() != count as usize {
        return Err(BadRecord("operation count does not match the header"));
    }
    Ok((first, ops))
}
