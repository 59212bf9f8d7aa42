//! A file that many threads write at once, each at offsets it reserved.
//!
//! # What it is
//!
//! A write-ahead log that many threads fill usually has them take turns:
//! a lock around each append, or a leader that appends everyone's records
//! while the others wait (a group commit). When each writer can reserve its
//! record's bytes with one atomic step (a `fetch_add` on a counter, or the
//! same compare-and-swap that takes its sequence numbers, as
//! `ordered_publish::Sequencer::reserve_with_bytes` does), none of them
//! need wait for another to write: each writes its own bytes, beside the
//! others. A [`SharedFile`] is the file side of that design, in three
//! backings:
//!
//! - **mapped** ([`SharedFile::mapped`], Linux): writers copy into a shared
//!   memory map of the file. No lock and no system call per write. The file
//!   grows a megabyte at a time ahead of the writes (`fallocate`, so a full
//!   disk fails a growth, never a copy), and its pages are faulted in as it
//!   grows.
//! - **positional** ([`SharedFile::positional`]): a `pwrite` each, through
//!   a [`PositionedFile`] (a [`std::fs::File`], or a file of your own:
//!   fault injection, counting). Each write extends the file as an append
//!   does, so a full disk fails the write that meets it.
//! - **striped** ([`SharedFile::striped`]): a `pwrite` each, as positional,
//!   into the file itself while one writer writes alone, and once two meet
//!   there into one of several stripe files, one that no other thread is
//!   writing, as an entry that says where its bytes belong. Linux takes a
//!   file's lock for each buffered write, so positional writers on
//!   different cores queue there; a stripe each, they do not. A
//!   [`StripedView`] reads the primary file and its stripes back as one.
//!
//! Either way a write is in the operating system when it returns (it
//! survives a crash of the process), and [`SharedFile::sync_data`] makes
//! every returned write durable while others go on. Once the writers are
//! done, the file's size is where their writes end (set by
//! [`Writers`] when it is dropped, or by the owner with
//! [`SharedFile::set_size`] after writes at offsets reserved elsewhere);
//! then the owner may [`append`](SharedFile::append) (a header, a
//! trailer) and [`sync`](SharedFile::sync), which cuts the file to that
//! size first, so the length that survives a power loss is exact.
//!
//! Safe code cannot race: [`SharedFile::writers`] borrows the file
//! exclusively and gives each write its own bytes, and `append` and `sync`
//! take `&mut self`. The `unsafe` [`write_at`](SharedFile::write_at),
//! [`append_unchecked`](SharedFile::append_unchecked) and
//! [`sync_unchecked`](SharedFile::sync_unchecked) are for writers whose
//! bytes are reserved elsewhere and for an owner that shares the file
//! through an `Arc` and keeps the writers off by its own protocol, as
//! `lsm-demo`'s log does.
//!
//! After a crash, the file holds whatever writes had reached the operating
//! system, in any combination: a writer still copying leaves a hole
//! (zeros) or a torn write with later writers' whole ones after it, and a
//! mapped file ends in the zeros of its last growth. A log reader over such
//! a file must tell those from damage (checksummed records, zeros ending
//! the file); `lsm-demo`'s log does.
//!
//! # When to use it, and what instead
//!
//! | | `SharedFile`, mapped | `SharedFile`, positional | `SharedFile`, striped | `Mutex<File>` appends | a group commit (`write-group`) |
//! |---|---|---|---|---|---|
//! | a write | a copy into memory | a `pwrite` | a stripe's lock, a `pwrite` | lock, `write`, unlock | hand the record to the leader, wait |
//! | writers at once | all | all (the kernel serialises one file's writes) | one per stripe | one | the leader |
//! | system calls | one per growth (1 MiB) | one per write | one per write; a sync syncs each stripe written | one per write | one per group |
//! | failure | an I/O error met through the map is `SIGBUS` | an error per write | an error per write | an error per write | an error per group |
//! | read back | as a file | as a file | through a [`StripedView`] | as a file | as a file |
//!
//! Use the mapped backing where writes are small and many and the process
//! may die on a disk error met through the map (RocksDB's
//! `allow_mmap_writes`, off by default there for that reason); the
//! positional one where every error must come back as an error. On Linux
//! file systems a buffered `pwrite` takes the file's lock for its copy into
//! the page cache, so positional writers from many cores queue there (with
//! nothing else to do, two cores may write less per second than one);
//! beside other work per write (a memtable insert) they overlap it. The
//! striped backing gives each writer a file of its own, at the price of a
//! sync per stripe written and of a reader that reassembles the file. Where
//! one thread at a time writes anyway, or writes must reach the file in
//! order, take a `Mutex<File>` or a group commit: this crate adds the
//! bookkeeping of reserved offsets (`set_size`, holes after a crash) for
//! nothing there.
//!
//! # Example
//!
//! Four threads append records of their own through
//! [`SharedFile::writers`], which reserves each record's bytes with one
//! atomic step; the owner then adds a trailer and syncs:
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! use shared_log_file::SharedFile;
//!
//! let path = dir.path().join("wal");
//! let mut log = SharedFile::create_positional(&path).unwrap();
//! let writers = log.writers();
//! std::thread::scope(|s| {
//!     for t in 0..4u8 {
//!         let writers = &writers;
//!         s.spawn(move || {
//!             for i in 0..100u8 {
//!                 writers.write(&[t, i, b'\n']).unwrap(); // no lock
//!             }
//!             writers.sync_data().unwrap(); // durable, while the others write on
//!         });
//!     }
//! });
//! drop(writers); // the size is now where the reservations end
//! log.append(b"END\n").unwrap();
//! log.sync().unwrap(); // cut to the size, then fdatasync
//! assert_eq!(std::fs::read(&path).unwrap().len(), 4 * 100 * 3 + 4);
//! ```
//!
//! With `ordered_publish::Sequencer::reserve_with_bytes` the bytes come
//! with sequence numbers, in sequence order, and each writer writes at its
//! own with the `unsafe` [`SharedFile::write_at`]: `examples/wal.rs` is a
//! write-ahead log built that way, replayed in order at the end.
//!
//! # Verification
//!
//! Unit tests and a stress test run the backings; loom models
//! (`RUSTFLAGS="--cfg loom" cargo test --release -p shared-log-file --test
//! loom`) explore the mapped file's growth over real files and mappings,
//! and the striped file's writers meeting, sharing stripes and syncing
//! beside each other over files in memory (the crate's atomics and locks
//! are loom's under `--cfg loom`); miri runs the unit tests of the
//! positional and striped backings over files in memory.

#![warn(missing_docs)]

mod file;
mod positioned;
mod striped;
mod sync;
mod writers;

pub use file::SharedFile;
pub use positioned::PositionedFile;
pub use striped::{ReadAt, StripeEnd, StripedView, stripe_path};
pub use writers::Writers;

#[cfg(test)]
mod tests;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
