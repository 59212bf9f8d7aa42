//! PLACEHOLDER: the `lsm-demo` command line is being written.
fn main() {}
