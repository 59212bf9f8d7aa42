//! PLACEHOLDER: the `vecmem` crate is being written.
