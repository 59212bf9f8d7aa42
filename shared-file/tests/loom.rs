//! Loom models of `SharedFile`, run on the shipped code: its atomics and
//! locks are loom's under `--cfg loom`.
//!
//! - `mapped`: the mapped backing's growth, over real files and mappings
//!   (Linux).
//! - `striped`: the striped backing's writers meeting at the primary,
//!   sharing stripes, and syncs that skip what a sync already covered,
//!   over files in memory.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release -p shared-log-file --test loom`
#![cfg(loom)]

#[cfg(target_os = "linux")]
#[path = "loom/mapped.rs"]
mod mapped;
#[path = "loom/striped.rs"]
mod striped;
