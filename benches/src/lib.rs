//! Criterion benchmarks of the workspace's primitives against the crates
//! users would pick instead, and the comparison report.
//!
//! - `cargo bench -p benches --bench NAME` with NAME one of `arena`,
//!   `write_group`, `skiplist`, `vecmem`, `ordered_publish`, `shared_file`,
//!   `engine`: the full criterion runs, with HTML reports under
//!   `target/criterion/`.
//! - `cargo run --release -p benches --bin report`: a short run of every
//!   comparison, written as one self-contained HTML page with plots and as
//!   Markdown tables under `target/report/` ([`report`] formats them).

pub mod report;

/// The thread counts a benchmark runs: `BENCH_THREADS` when set (a
/// comma-separated list such as `1,2,4,8,16`, for a machine with more cores
/// than the defaults assume), else `default`.
///
/// The defaults suit a small machine; on a many-core one the same benchmark
/// ids then cover the scaling:
///
/// ```
/// let threads = benches::thread_counts(&[1, 2, 4]);
/// if std::env::var_os("BENCH_THREADS").is_none() {
///     assert_eq!(threads, [1, 2, 4]);
/// }
/// ```
///
/// # Panics
///
/// If `BENCH_THREADS` is set but is not a list of positive counts: a
/// benchmark run with a mistyped list should stop, not measure the defaults.
pub fn thread_counts(default: &[usize]) -> Vec<usize> {
    match std::env::var("BENCH_THREADS") {
        Ok(text) => parse_thread_counts(&text).unwrap_or_else(|| {
            panic!("BENCH_THREADS={text:?} is not a comma-separated list of positive counts")
        }),
        Err(_) => default.to_vec(),
    }
}

/// Bytes resident in this process (`/proc/self/statm`; 0 where that is
/// missing): the memory benches take its change across a fill.
///
/// ```
/// let resident = benches::resident_bytes();
/// assert!(resident > 0 || cfg!(not(target_os = "linux")));
/// ```
pub fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * usize::try_from(page).unwrap_or(4096)
}

/// Gives freed heap memory back to the kernel (glibc's `malloc_trim`; a
/// no-op elsewhere), so that the next [`resident_bytes`] delta starts from
/// a clean slate.
///
/// ```
/// benches::trim_heap();
/// ```
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// CPU work that the optimiser cannot remove: `rounds` steps of a
/// multiply-and-rotate hash chain from `seed`. The benches stand it in for
/// the work a writer does outside any lock (a memtable insert): 1,300
/// rounds are one to two microseconds on the development VM.
///
/// ```
/// assert_eq!(benches::hash_chain(7, 100), benches::hash_chain(7, 100));
/// assert_ne!(benches::hash_chain(7, 100), benches::hash_chain(8, 100));
/// ```
pub fn hash_chain(seed: u64, rounds: u32) -> u64 {
    let mut h = seed ^ 0x9e37_79b9_7f4a_7c15;
    for _ in 0..rounds {
        h = h.rotate_left(5).wrapping_mul(0x100_0000_01b3) ^ 0xcbf2_9ce4_8422_2325;
    }
    std::hint::black_box(h)
}

/// Runs `work(chunk)` on `threads` threads over `0..n` split in equal
/// chunks, and times from a common start to the last thread's end (thread
/// creation excluded).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let sum = AtomicUsize::new(0);
/// benches::timed_parallel(3, 10, |chunk| {
///     // Relaxed: read after the threads joined.
///     sum.fetch_add(chunk.sum::<usize>(), Ordering::Relaxed);
/// });
/// assert_eq!(sum.into_inner(), 45);
/// ```
pub fn timed_parallel(
    threads: usize,
    n: usize,
    work: impl Fn(std::ops::Range<usize>) + Sync,
) -> std::time::Duration {
    let barrier = std::sync::Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, work) = (&barrier, &work);
                s.spawn(move || {
                    barrier.wait();
                    work(t * n / threads..(t + 1) * n / threads);
                })
            })
            .collect();
        barrier.wait();
        let start = std::time::Instant::now();
        for h in handles {
            h.join().expect("a worker panicked");
        }
        start.elapsed()
    })
}

/// `"1,2, 16"` as `[1, 2, 16]`; `None` for an empty list, a zero or a word.
fn parse_thread_counts(text: &str) -> Option<Vec<usize>> {
    let counts: Vec<usize> = text
        .split(',')
        .map(|part| part.trim().parse().ok().filter(|&n| n > 0))
        .collect::<Option<_>>()?;
    (!counts.is_empty()).then_some(counts)
}

#[cfg(test)]
mod tests {
    use super::parse_thread_counts;

    #[test]
    fn thread_lists_parse_or_are_refused() {
        assert_eq!(
            parse_thread_counts("1,2,4,8,16"),
            Some(vec![1, 2, 4, 8, 16])
        );
        assert_eq!(parse_thread_counts(" 16 , 32"), Some(vec![16, 32]));
        assert_eq!(parse_thread_counts(""), None);
        assert_eq!(parse_thread_counts("1,0"), None);
        assert_eq!(parse_thread_counts("1,two"), None);
        assert_eq!(parse_thread_counts("4,"), None);
    }
}
