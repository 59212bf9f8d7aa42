//! The `lsm-demo` command line.

pub mod bench;
pub mod stress;
