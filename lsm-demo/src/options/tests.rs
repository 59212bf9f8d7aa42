use super::*;

fn error_of(set: impl FnOnce(&mut Options)) -> String {
    let mut o = Options::default();
    set(&mut o);
    match o.validate() {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

/// Each out-of-range value gets an `InvalidArgument` naming the option
/// and the value; the limits themselves are accepted.
#[test]
fn out_of_range_options_are_named() {
    let named = |m: String, what: &str| assert!(m.contains(what), "{what}: {m}");
    named(
        error_of(|o| {
            o.set_write_buffer_size((64 << 10) - 1);
        }),
        "write_buffer_size 65535",
    );
    named(
        error_of(|o| {
            o.set_write_buffer_size((1 << 40) + 1);
        }),
        "write_buffer_size 1099511627777",
    );
    named(
        error_of(|o| {
            o.set_max_write_buffer_number(1);
        }),
        "max_write_buffer_number 1 ",
    );
    named(
        error_of(|o| {
            o.set_max_write_buffer_number(1025);
        }),
        "max_write_buffer_number 1025",
    );
    named(
        error_of(|o| {
            o.set_level_zero_file_num_compaction_trigger(0);
        }),
        "level0_file_num_compaction_trigger",
    );
    named(
        error_of(|o| {
            o.set_level_zero_stop_writes_trigger(4);
        }),
        "level0_stop_writes_trigger 4 must exceed the compaction trigger 4",
    );
    named(
        error_of(|o| {
            o.set_block_size(255);
        }),
        "block_size 255",
    );
    named(
        error_of(|o| {
            o.set_block_size((64 << 20) + 1);
        }),
        "block_size 67108865",
    );
    named(
        error_of(|o| {
            o.set_bloom_bits_per_key(65);
        }),
        "bloom_bits_per_key 65",
    );
    named(
        error_of(|o| {
            o.set_target_file_size_base((64 << 10) - 1);
        }),
        "target_file_size_base 65535",
    );
    named(
        error_of(|o| {
            o.set_unordered_write(true)
                .set_allow_concurrent_memtable_write(false);
        }),
        "unordered_write",
    );
    named(
        error_of(|o| {
            o.set_allow_mmap_writes(true)
                .set_wal_recovery_mode(crate::wal::DBRecoveryMode::AbsoluteConsistency);
        }),
        "allow_mmap_writes",
    );

    let mut o = Options::default();
    o.set_write_buffer_size(64 << 10)
        .set_max_write_buffer_number(2)
        .set_level_zero_file_num_compaction_trigger(1)
        .set_level_zero_stop_writes_trigger(2)
        .set_block_size(256)
        .set_bloom_bits_per_key(64)
        .set_target_file_size_base(64 << 10);
    assert!(o.validate().is_ok());
    o.set_write_buffer_size(1 << 40)
        .set_max_write_buffer_number(1024)
        .set_block_size(64 << 20);
    assert!(o.validate().is_ok());
}
