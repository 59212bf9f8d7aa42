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

use shared_log_file::SharedFile;

/// Copies `data` at `at` from a writer thread of a model.
fn write(shared: &SharedFile, at: u64, data: &[u8]) {
    // SAFETY: the models give each writer bytes of its own, and the owner
    // sets the size, appends or cuts only once the writers are done.
    unsafe { shared.write_at(at, data) }.unwrap();
}
