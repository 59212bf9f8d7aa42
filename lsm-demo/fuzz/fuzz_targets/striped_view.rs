//! Arbitrary bytes as a striped log's files (the primary and up to three
//! stripes), read back through a `StripedView`: a view or a typed error,
//! never a panic, and any read of a range gives that range of the whole.
//!
//! Input: one byte for the number of stripes (mod 4), then each stripe as
//! a little-endian u16 length and its bytes; the rest is the primary.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared_log_file::StripedView;

fuzz_target!(|data: &[u8]| {
    let Some((&n, mut rest)) = data.split_first() else {
        return;
    };
    let mut stripes = Vec::new();
    for _ in 0..n % 4 {
        let Some((len, tail)) = rest.split_first_chunk::<2>() else {
            break;
        };
        let len = (u16::from_le_bytes(*len) as usize).min(tail.len());
        stripes.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    let files: u64 = rest.len() as u64 + stripes.iter().map(|s| s.len() as u64).sum::<u64>();
    let Ok(view) = StripedView::new(rest.to_vec(), stripes) else {
        return;
    };
    // The view's length is the primary's or an entry's end: an entry's
    // offset is arbitrary, so only read what memory allows.
    if view.len() > 1 << 20 {
        return;
    }
    let whole = view.read_to_vec().unwrap();
    assert_eq!(whole.len() as u64, view.len());
    // Every byte comes from some file, or is zero.
    let nonzero = whole.iter().filter(|&&b| b != 0).count() as u64;
    assert!(nonzero <= files);
    for end in view.stripe_ends() {
        assert!(end.valid_len <= end.file_len);
    }
    // Reads of pieces agree with the whole.
    let len = whole.len();
    for (start, size) in [(0, 1), (len / 3, 7), (len / 2, len), (len.saturating_sub(5), 9)] {
        let mut buf = vec![0xa5; size];
        let n = view.read_at(start as u64, &mut buf).unwrap();
        assert_eq!(n, size.min(len.saturating_sub(start)));
        assert_eq!(&buf[..n], &whole[start..start + n]);
    }
});
