//! PLACEHOLDER: the `lsm-demo` crate is being written.
