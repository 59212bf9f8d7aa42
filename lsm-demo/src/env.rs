//! PLACEHOLDER: being written.
