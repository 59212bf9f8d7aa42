//! How fast threads can append small records to one file with `pwrite`,
//! each at offsets it reserved, against one thread doing all the calls:
//! the kernel's side of the default log, whose writers each `pwrite` their
//! own record (`Options::set_allow_concurrent_log_write`, through
//! `shared-log-file`'s positional backing). The `shared_file` bench
//! compares the same writes with the crate's other backing and with a
//! `Mutex<File>`.
//!
//! ```text
//! cargo run --release -p lsm-demo --example concurrent_pwrite -- [WRITES] [RECORD_BYTES] [THREADS...]
//! ```
//!
//! Defaults: 400,000 writes of 130 bytes (a fillrandom record: a 16-byte
//! key, a 100-byte value and the framing), at 1, 2 and 8 threads. Prints
//! writes per second and each thread count's rate over the first.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are numbers"))
        .collect();
    let writes = args.first().copied().unwrap_or(400_000);
    let record = args.get(1).copied().unwrap_or(130) as usize;
    let threads: Vec<u64> = match args.get(2..) {
        Some(t) if !t.is_empty() => t.to_vec(),
        _ => vec![1, 2, 8],
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut first = None;
    for &t in &threads {
        let path = dir.path().join(format!("log-{t}"));
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&path)
            .expect("the file opens");
        let end = AtomicU64::new(0);
        let per_thread = writes / t;
        let started = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..t {
                let (file, end) = (&file, &end);
                s.spawn(move || {
                    let bytes = vec![0x5a_u8; record];
                    for _ in 0..per_thread {
                        // Relaxed: a reservation of offsets; the calls
                        // themselves need no order between threads.
                        let at = end.fetch_add(record as u64, Ordering::Relaxed);
                        file.write_all_at(&bytes, at).expect("the write succeeds");
                    }
                });
            }
        });
        let rate = (per_thread * t) as f64 / started.elapsed().as_secs_f64();
        let base = *first.get_or_insert(rate);
        println!(
            "{t} threads: {rate:>10.0} writes/s, {:.2}x the first",
            rate / base
        );
        std::fs::remove_file(&path).expect("the file is removed");
    }
}
