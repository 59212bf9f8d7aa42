//! PLACEHOLDER: the `skiplist` crate is being written.
