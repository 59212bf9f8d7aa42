//! PLACEHOLDER: the `lsm-demo` engine is being written.
#![allow(missing_docs)]

pub mod bloom;
pub mod env;
pub mod manifest;
pub mod table;
pub mod wal;
