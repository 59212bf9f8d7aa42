//! Criterion benchmarks of the workspace's primitives against the crates
//! users would pick instead, and the comparison report.
//!
//! - `cargo bench -p benches --bench NAME` with NAME one of `arena`,
//!   `write_group`, `skiplist`, `vecmem`: the full criterion runs, with HTML
//!   reports under `target/criterion/`.
//! - `cargo run --release -p benches --bin report`: a short run of every
//!   comparison, written as one self-contained HTML page with plots and as
//!   Markdown tables under `target/report/` ([`report`] formats them).

pub mod report;
