//! PLACEHOLDER: the `write-group` crate is being written.
