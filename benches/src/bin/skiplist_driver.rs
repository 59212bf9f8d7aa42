//! `cargo run --release -p benches --bin skiplist_driver -- MODE`: the
//! skiplist benchmark's contenders (the same code as `benches/skiplist.rs`)
//! outside criterion, for measurements that criterion does not make.
//!
//! ```text
//! skiplist_driver memory                 # bytes per entry after N inserts, every contender
//! skiplist_driver count NAME             # a run to count under valgrind (below)
//! skiplist_driver rounds [NAME...]       # interleaved throughput rounds, medians and ratios
//! ```
//!
//! N is `SKIPLIST_BENCH_N` (default 1,000,000) random 16-byte keys with
//! 100-byte values. NAME is a contender's bench name (`skiplist`,
//! `skiplist_b2`, `skipmap`, `scc_treeindex`, `concurrent_map`, ...).
//!
//! `count` builds the structure from the first N - M keys (M is
//! `SKIPLIST_DRIVER_OPS`, default 200,000), then inserts the last M keys in
//! `insert_phase` and looks up M present keys in random order in
//! `lookup_phase`, both on this thread. Under callgrind, collect only those
//! two functions and read their inclusive costs:
//!
//! ```text
//! valgrind --tool=callgrind --cache-sim=yes --collect-atstart=no \
//!     --toggle-collect='*insert_phase*' --toggle-collect='*lookup_phase*' \
//!     target/release/skiplist_driver count skipmap
//! callgrind_annotate --inclusive=yes callgrind.out.PID | grep _phase
//! ```
//!
//! `rounds` runs, three times over, each contender's random insert of N
//! keys and N lookups at 1 and 2 threads, one contender after the other in
//! each round, and prints each figure, the median of the three, and the
//! ratios of ours to the best peer.
#![allow(missing_docs)]

#[path = "../../benches/skiplist/contenders.rs"]
#[allow(dead_code)]
mod contenders;

use contenders::{
    CMap, Contender, Data, Key, Locked, Map, Ours, Set, Tree, Worker, build, entries,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// The system allocator, counting the bytes live while `COUNTING` is set.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; the counter only
// observes sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // Relaxed: a statistic, read after the threads that allocate joined.
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Relaxed: as above.
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Relaxed: as above.
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(new_size, Ordering::Relaxed);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn memory_one<C: Contender>(keys: &[Key]) {
    let rss_before = benches::resident_bytes();
    // Relaxed: this thread alone allocates for the contender.
    LIVE.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let c = build::<C>(keys);
    COUNTING.store(false, Ordering::Relaxed);
    let n = keys.len() as f64;
    let heap = LIVE.load(Ordering::Relaxed) as f64 / n;
    let rss = benches::resident_bytes().saturating_sub(rss_before) as f64 / n;
    let arena = c
        .arena_bytes()
        .map_or(String::new(), |b| format!("{:8.1}", b as f64 / n));
    println!("| {:<16} | {heap:8.1} | {rss:8.1} | {arena:>8} |", C::NAME);
    drop(c);
    benches::trim_heap();
}

fn memory(data: &Data) {
    println!(
        "memory per entry, {} random entries of 16 + 100 bytes, one thread",
        data.random.len()
    );
    println!("| contender | heap B | resident B | arena B |");
    println!("|---|---:|---:|---:|");
    memory_one::<Ours<false>>(&data.random);
    memory_one::<Ours<false, true>>(&data.random);
    memory_one::<Ours<true, true>>(&data.random);
    memory_one::<Ours<false, false, true>>(&data.random);
    memory_one::<Ours<false, true, true>>(&data.random);
    memory_one::<Map>(&data.random);
    memory_one::<Set>(&data.random);
    memory_one::<Locked>(&data.random);
    memory_one::<Tree>(&data.random);
    memory_one::<CMap>(&data.random);
}

#[inline(never)]
fn insert_phase(w: &impl Worker, keys: &[Key]) {
    for k in keys {
        w.insert(k);
    }
}

#[inline(never)]
fn lookup_phase(w: &impl Worker, keys: &[Key]) -> usize {
    keys.iter().map(|k| usize::from(w.get(k))).sum()
}

fn count<C: Contender>(data: &Data, ops: usize) {
    let n = data.random.len();
    let (before, last) = data.random.split_at(n - ops.min(n));
    let c = build::<C>(before);
    let w = c.worker();
    insert_phase(&w, last);
    let found = lookup_phase(&w, &data.lookups[..ops.min(n)]);
    assert_eq!(found, ops.min(n), "every looked-up key is present");
    println!(
        "{}: {} inserts, {found} lookups counted",
        C::NAME,
        last.len()
    );
}

/// M ops/s of: insert 1 thread, insert 2 threads, lookup 1, lookup 2.
fn round_one<C: Contender>(data: &Data) -> [f64; 4] {
    let n = data.random.len();
    let rate = |d: Duration| n as f64 / d.as_secs_f64() / 1e6;
    let mut out = [0.0; 4];
    for (i, threads) in [1, 2].into_iter().enumerate() {
        let c = C::new();
        out[i] = rate(benches::timed_parallel(threads, n, |range| {
            let w = c.worker();
            for k in &data.random[range] {
                w.insert(k);
            }
        }));
        if threads == 2 {
            for (j, threads) in [1, 2].into_iter().enumerate() {
                out[2 + j] = rate(benches::timed_parallel(threads, n, |range| {
                    let w = c.worker();
                    let found: usize = data.lookups[range]
                        .iter()
                        .map(|k| usize::from(w.get(k)))
                        .sum();
                    black_box(found);
                }));
            }
        }
    }
    out
}

type RoundFn = fn(&Data) -> [f64; 4];

fn contender(name: &str) -> Option<RoundFn> {
    Some(match name {
        "skiplist" => round_one::<Ours<false>>,
        "skiplist_thp" => round_one::<Ours<true>>,
        "skiplist_b2" => round_one::<Ours<false, true>>,
        "skiplist_thp_b2" => round_one::<Ours<true, true>>,
        "skiplist_p" => round_one::<Ours<false, false, true>>,
        "skiplist_b2p" => round_one::<Ours<false, true, true>>,
        "skiplist_thp_b2p" => round_one::<Ours<true, true, true>>,
        "skipmap" => round_one::<Map>,
        "skipset" => round_one::<Set>,
        "mutex_btreemap" => round_one::<Locked>,
        "scc_treeindex" => round_one::<Tree>,
        "concurrent_map" => round_one::<CMap>,
        _ => return None,
    })
}

fn counter(name: &str) -> Option<fn(&Data, usize)> {
    Some(match name {
        "skiplist" => count::<Ours<false>>,
        "skiplist_thp" => count::<Ours<true>>,
        "skiplist_b2" => count::<Ours<false, true>>,
        "skiplist_thp_b2" => count::<Ours<true, true>>,
        "skiplist_p" => count::<Ours<false, false, true>>,
        "skiplist_b2p" => count::<Ours<false, true, true>>,
        "skiplist_thp_b2p" => count::<Ours<true, true, true>>,
        "skipmap" => count::<Map>,
        "skipset" => count::<Set>,
        "mutex_btreemap" => count::<Locked>,
        "scc_treeindex" => count::<Tree>,
        "concurrent_map" => count::<CMap>,
        _ => return None,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn rounds(data: &Data, names: &[String]) {
    const ROUNDS: usize = 3;
    const COLUMNS: [&str; 4] = ["insert 1t", "insert 2t", "lookup 1t", "lookup 2t"];
    let fns: Vec<(&str, RoundFn)> = names
        .iter()
        .map(|n| {
            (
                n.as_str(),
                contender(n).unwrap_or_else(|| panic!("no contender {n}")),
            )
        })
        .collect();
    let mut figures = vec![Vec::new(); fns.len()];
    for round in 1..=ROUNDS {
        for (i, (name, f)) in fns.iter().enumerate() {
            let r = f(data);
            eprintln!("round {round} {name:<16} {r:.3?}");
            figures[i].push(r);
        }
    }
    let medians: Vec<[f64; 4]> = figures
        .iter()
        .map(|rs| std::array::from_fn(|c| median(rs.iter().map(|r| r[c]).collect())))
        .collect();
    println!(
        "median of {ROUNDS} interleaved rounds, {} entries, M ops/s",
        data.random.len()
    );
    println!("| contender | {} |", COLUMNS.join(" | "));
    println!("|---|{}", "---:|".repeat(4));
    for ((name, _), m) in fns.iter().zip(&medians) {
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} | {:.2} |",
            m[0], m[1], m[2], m[3]
        );
    }
    let best_peer: [f64; 4] = std::array::from_fn(|c| {
        fns.iter()
            .zip(&medians)
            .filter(|((n, _), _)| !n.starts_with("skiplist"))
            .map(|(_, m)| m[c])
            .fold(0.0, f64::max)
    });
    println!("\nratio to the best peer in each column ({best_peer:.2?}):");
    for ((name, _), m) in fns.iter().zip(&medians) {
        if name.starts_with("skiplist") {
            let r: Vec<String> = (0..4)
                .map(|c| format!("{:.2}x", m[c] / best_peer[c]))
                .collect();
            println!("| {name} | {} |", r.join(" | "));
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = Data::new(entries());
    let ops: usize = std::env::var("SKIPLIST_DRIVER_OPS")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(200_000);
    match args.first().map(String::as_str) {
        Some("memory") => memory(&data),
        Some("count") => {
            let name = args.get(1).expect("count NAME");
            counter(name).unwrap_or_else(|| panic!("no contender {name}"))(&data, ops);
        }
        Some("rounds") => {
            let default = [
                "skiplist",
                "skiplist_b2",
                "skipmap",
                "scc_treeindex",
                "concurrent_map",
            ];
            let names: Vec<String> = if args.len() > 1 {
                args[1..].to_vec()
            } else {
                default.iter().map(|s| s.to_string()).collect()
            };
            rounds(&data, &names);
        }
        _ => {
            eprintln!("usage: skiplist_driver memory | count NAME | rounds [NAME...]");
            std::process::exit(2);
        }
    }
}
