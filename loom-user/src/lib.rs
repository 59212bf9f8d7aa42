//! Checking your own code together with ours under loom: a worked example.
//!
//! This crate has no API. Its tests (`tests/loom.rs`) are loom models of
//! small programs that use `write-group`, `inline-skiplist`, `vecmem` and
//! `arena` the way an application would, through their public APIs only: a
//! journal numbered by a write group, a memtable filled by its writers, an
//! interner in a concurrent arena. Copy them as a starting point for models
//! of your own code.
//!
//! # How
//!
//! Every crate of this workspace that synchronises threads routes its
//! atomics, locks, cells, spins and thread-locals through a private `sync`
//! module, which switches from std to loom under `--cfg loom`. The flag goes
//! through `RUSTFLAGS`, so it reaches every crate of the build at once: your
//! crate and ours are compiled against loom together, and a model explores
//! the interleavings of both. Your own code does the same as ours: take its
//! atomics and cells from loom under `cfg(loom)` (the models here use
//! `loom::cell::UnsafeCell` for state that they claim needs no lock, so that
//! loom reports a race if our ordering guarantee did not hold), put the
//! models in a test file that starts with `#![cfg(loom)]`, and run it with
//! the optimiser on and a bound on preemptions:
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release -p loom-user --test loom
//! ```
//!
//! Your crate needs loom only in that build, as this one has it:
//! `[target.'cfg(loom)'.dev-dependencies] loom = "0.7"` (plain
//! `dependencies` if your library code switches too), and
//! `check-cfg = ["cfg(loom)"]` under `[lints.rust] unexpected_cfgs` so that
//! rustc knows the flag. Take loom 0.7, the version our crates use: another
//! major version keeps its model state apart, and our crates' operations
//! would panic outside it.
//!
//! Use a separate target directory (`CARGO_TARGET_DIR=target/loom`), or the
//! changed flags rebuild your normal build from scratch each time you switch.
//! Without the flag the test file compiles to nothing, so `cargo test`
//! passes over it.
//!
//! Keep models tiny: two or three threads and a handful of operations each.
//! Loom's search grows exponentially with both, and each of our operations
//! is many atomic steps. In particular, give a `WriteGroup` options that
//! never spin (`with_spin_count(0)`, `with_max_yield_usec(0)`,
//! `with_barge_spins(0)`): under loom every spin is a yield, and so a
//! branch point of the search.
//!
//! # Which crates support loom
//!
//! | crate | under `--cfg loom` |
//! |---|---|
//! | `arena` | atomics (the shard spin locks included) and spins are loom's; the CPU number is a per-thread mock, 0 unless `arena::mock_current_cpu` (loom only) sets it |
//! | `write-group` | the writer protocol is loom's; futex waits become park/unpark, and there is no yield phase and no clock in gather windows |
//! | `inline-skiplist` | links, heights and the length are loom's; node heights follow a fixed 2, 1, 2, ... pattern per thread, so that runs replay |
//! | `vecmem` | the locks (the shared vector's and the write lanes'), the batch list and the cells are loom's; there are 2 lanes, every thread starts on lane 0 unless `vecmem::mock_lane` (loom only) moves it; a `Writer` batch of 2 entries (16 in normal builds) already takes the lock-free list; the per-thread spare buffer is off |
//! | `ordered-publish` | atomics, the mutex and the condition variable are loom's |
//! | `key-comparator` | nothing to model (no shared state) |
//! | `lsm-demo` | not supported: it uses std threads, locks and files directly |
//!
//! # What it does not cover
//!
//! - Interleavings beyond `LOOM_MAX_PREEMPTIONS`: a bound of 2 is a search of
//!   the likely schedules, not a proof over all of them.
//! - Larger states: tiny models never reach a tall skiplist tower, vecmem's
//!   parallel sort or a write group of more than a few members. Each
//!   crate's own `tests/loom.rs` steers its internals (arena block refills,
//!   CAS races at a chosen level) in ways a user's model cannot.
//! - Time and the scheduler: spin budgets, yield phases, gather windows and
//!   CPU numbers are replaced by yields and mocks, so loom checks that the
//!   protocols are right, not that they are fast or fair.
//! - Statistics and ids (write-group's `Stats`, the ids that arenas and
//!   skiplists draw) stay std atomics: they order nothing, and are left out
//!   to keep the search small. Do not build synchronisation on them.
//! - What loom itself does not model: some weak-memory outcomes (it does not
//!   produce loads that read from later stores), and code that calls into
//!   std threads, OS primitives or `rayon` behind its back.
