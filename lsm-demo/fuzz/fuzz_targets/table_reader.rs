//! Arbitrary bytes as a table file: open, scan both ways, seek.
#![no_main]

use key_comparator::BytewiseComparator;
use libfuzzer_sys::fuzz_target;
use lsm_demo::table::Table;
use std::sync::Arc;

fn whole_key(key: &[u8]) -> &[u8] {
    key
}

/// Enough steps for any table a fuzz input can hold, so loops stay bounded
/// even if an iterator were to cycle.
const MAX_STEPS: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(table) = Table::open(
        Arc::new(data.to_vec()),
        data.len() as u64,
        Arc::new(BytewiseComparator),
        whole_key,
    ) else {
        return;
    };
    let _ = table.properties();
    let _ = table.may_contain(data.get(..4).unwrap_or_default());
    let mut it = table.iter();
    it.seek_to_first();
    let mut steps = 0;
    while it.valid() && steps < MAX_STEPS {
        let _ = (it.key(), it.value());
        it.next();
        steps += 1;
    }
    let _ = it.status();
    let mut it = table.iter();
    it.seek_to_last();
    steps = 0;
    while it.valid() && steps < MAX_STEPS {
        it.prev();
        steps += 1;
    }
    let _ = it.status();
    for probe in [&data[..data.len().min(3)], &[][..], &[0xff; 4][..]] {
        let mut it = table.iter();
        it.seek(probe);
        it.next();
        it.prev();
        it.seek_for_prev(probe);
        it.prev();
        it.next();
        let _ = it.status();
    }
});
