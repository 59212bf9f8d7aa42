//! Leveled compaction: which files to merge next ([`picker`]) and what the
//! merge keeps ([`iterator`]).
//!
//! The tree has level 0, whose files are flushed memtables that may overlap,
//! and levels 1 to 6, each a sorted run of disjoint files. Every level below
//! the first non-empty one has a target size a multiplier larger than the
//! level above (computed from the bottom by default, as RocksDB's
//! `level_compaction_dynamic_level_bytes`), so that most of the data lives on
//! the last level and each byte is rewritten about once a level: the bytes
//! written per byte of user data grow with the number of levels, the
//! logarithm of the database's size, not with the size itself.

pub(crate) mod iterator;
pub(crate) mod picker;

pub(crate) use iterator::{CompactionIterator, LevelsBelow};
