//! `lsm-demo stress` and `lsm-demo crashtest`: many threads of random
//! operations checked against an expected state kept in a file beside the
//! database, and a loop that kills the stress process at random and verifies
//! what survived.
//!
//! # The expected state
//!
//! One 8-byte slot per key: the low 32 bits hold the value id the database
//! must hold (0: absent), the high 32 bits a pending value id (0: none).
//! A writer, holding the key's lock, first records `pending = new`, then
//! writes to the database, then, once the write is acknowledged, records
//! `current = new, pending = 0`. Each slot update is one `pwrite` of 8
//! aligned bytes, which a killed process cannot tear. After a crash a key
//! with a pending id may hold either id; any other key must hold exactly
//! `current`.
//!
//! # What a kill tests
//!
//! `crashtest` kills with SIGKILL: the process dies, the operating system
//! keeps every byte the engine handed to `write`. So acknowledged writes
//! must all survive, with `--sync=1` and with `--sync=0` alike.
//! `crashtest --power_loss=1` loses power instead (see `power_loss.rs`):
//! only synced writes must survive.
//!
//! Besides each key's value, verification scans the whole database: every
//! key must be one of the stress keys and hold a well-formed value equal to
//! what a point read returns, so nothing appears that was never written.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lsm_demo::{DB, IteratorMode, MemtableKind, Options, WriteBatch, WriteOptions};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Flags of `lsm-demo stress`.
#[derive(Debug, Clone, clap::Args)]
#[command(rename_all = "snake_case")]
pub struct StressArgs {
    /// Database directory.
    #[arg(long)]
    pub db: PathBuf,
    /// Expected-state file (default: the database path with `.expected`).
    #[arg(long)]
    pub expected: Option<PathBuf>,
    /// Worker threads.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Distinct keys.
    #[arg(long, default_value_t = 10_000)]
    pub keys: u32,
    /// Operations per thread (0: until --duration ends).
    #[arg(long, default_value_t = 10_000)]
    pub ops: u64,
    /// Seconds to run when --ops is 0.
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// Random seed (0: from the clock); printed for replay.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Sync every write (1) or none (0).
    #[arg(long, default_value = "1", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub sync: bool,
    /// Memtable: skip_list or vector.
    #[arg(long, default_value = "skip_list")]
    pub memtablerep: String,
    /// Small memtables, so flushes and compactions run often.
    #[arg(long, default_value_t = 256 << 10)]
    pub write_buffer_size: usize,
    /// Print a `progress:` line (acknowledged writes, operations) every
    /// this many milliseconds (0: never). `crashtest` reads it.
    #[arg(long, default_value_t = 0)]
    pub report_every_ms: u64,
}

/// Most `--threads` of `stress` and `crashtest`.
pub const MAX_THREADS: usize = 1024;
/// Most `--keys`: the expected state holds 8 bytes and a lock per key.
pub const MAX_KEYS: u32 = 10_000_000;
/// Longest `--max_run_ms` of `crashtest` (a stress child runs an hour).
pub const MAX_RUN_MS: u64 = 3_600_000;

pub(crate) fn check_workload(threads: usize, keys: u32) -> Result<(), String> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(format!("--threads={threads} is outside [1, {MAX_THREADS}]"));
    }
    if keys == 0 || keys > MAX_KEYS {
        return Err(format!("--keys={keys} is outside [1, {MAX_KEYS}]"));
    }
    Ok(())
}

fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("expected 0, 1, true or false, got {s:?}")),
    }
}

/// Flags of `lsm-demo crashtest`.
#[derive(Debug, Clone, clap::Args)]
#[command(rename_all = "snake_case")]
pub struct CrashArgs {
    /// Database directory (default: a temporary directory).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Kill-and-verify rounds.
    #[arg(long, default_value_t = 24)]
    pub kills: u32,
    /// Longest time a stress run lives before its kill, in milliseconds.
    #[arg(long, default_value_t = 1500)]
    pub max_run_ms: u64,
    /// Worker threads of each stress run.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Distinct keys.
    #[arg(long, default_value_t = 5_000)]
    pub keys: u32,
    /// Sync every write (1) or none (0).
    #[arg(long, default_value = "1", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub sync: bool,
    /// Memtable: skip_list or vector.
    #[arg(long, default_value = "skip_list")]
    pub memtablerep: String,
    /// Random seed (0: from the clock).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Simulate power losses instead of kills: the workload runs in this
    /// process on the fault-injecting file system, which drops every
    /// unsynced byte (or a random part of it) at a random moment. Needs
    /// --sync=1; --db is not used.
    #[arg(long, default_value = "0", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub power_loss: bool,
}

/// What a verification found.
#[derive(Debug, Default, Clone, Copy)]
pub struct Verified {
    /// Keys checked.
    pub keys: u64,
    /// Keys whose state the expected-state file pinned exactly.
    pub exact: u64,
    /// Keys with a write in flight at the crash (either value allowed).
    pub pending: u64,
    /// Acknowledged writes missing, or values never written: must be 0.
    pub mismatches: u64,
    /// Entries met by the full scan.
    pub scanned: u64,
}

impl std::ops::AddAssign for Verified {
    fn add_assign(&mut self, v: Verified) {
        self.keys += v.keys;
        self.exact += v.exact;
        self.pending += v.pending;
        self.mismatches += v.mismatches;
        self.scanned += v.scanned;
    }
}

/// The expected state: one slot per key.
pub(crate) struct Expected {
    slots: Slots,
}

enum Slots {
    /// In a file beside the database, so it survives a killed process.
    File(File),
    /// In memory, for a power loss simulated inside the process.
    Memory(Vec<AtomicU64>),
}

const PENDING_SHIFT: u32 = 32;

impl Expected {
    /// The expected state of `keys` keys in memory, all absent.
    pub(crate) fn in_memory(keys: u32) -> Expected {
        Expected {
            slots: Slots::Memory((0..keys).map(|_| AtomicU64::new(0)).collect()),
        }
    }

    fn open(path: &Path, keys: u32) -> std::io::Result<Expected> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let want = keys as u64 * 8;
        if file.metadata()?.len() < want {
            file.set_len(want)?;
        }
        Ok(Expected {
            slots: Slots::File(file),
        })
    }

    fn read(&self, k: u32) -> (u32, u32) {
        let v = match &self.slots {
            Slots::File(file) => {
                let mut b = [0u8; 8];
                file.read_exact_at(&mut b, k as u64 * 8)
                    .expect("reading the expected state");
                u64::from_le_bytes(b)
            }
            // Relaxed: a slot is read and written under its key's lock, or
            // while no worker runs.
            Slots::Memory(slots) => slots[k as usize].load(Ordering::Relaxed),
        };
        (v as u32, (v >> PENDING_SHIFT) as u32)
    }

    fn write(&self, k: u32, current: u32, pending: u32) {
        let v = (current as u64) | ((pending as u64) << PENDING_SHIFT);
        match &self.slots {
            Slots::File(file) => file
                .write_all_at(&v.to_le_bytes(), k as u64 * 8)
                .expect("writing the expected state"),
            // Relaxed: as in `read`.
            Slots::Memory(slots) => slots[k as usize].store(v, Ordering::Relaxed),
        }
    }
}

fn key_bytes(k: u32) -> Vec<u8> {
    format!("key{k:08}").into_bytes()
}

/// A value names its key and id, so a misplaced or damaged value is caught.
fn value_bytes(k: u32, id: u32) -> Vec<u8> {
    let mut v = format!("{k}:{id}:").into_bytes();
    let fill = b'a' + (id % 26) as u8;
    v.resize(v.len() + 16 + (id % 64) as usize, fill);
    v
}

fn value_id(k: u32, v: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(v).ok()?;
    let mut parts = s.splitn(3, ':');
    let key: u32 = parts.next()?.parse().ok()?;
    let id: u32 = parts.next()?.parse().ok()?;
    (key == k && value_bytes(k, id) == v).then_some(id)
}

pub(crate) fn options(memtablerep: &str, write_buffer_size: usize) -> Result<Options, String> {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(write_buffer_size);
    // Up to three frozen memtables: flushes can fall behind, so recovery
    // meets several logs that are still needed.
    o.set_max_write_buffer_number(4);
    o.set_level_zero_file_num_compaction_trigger(3);
    // Small levels of small files and two compaction threads: a megabyte
    // spreads over several levels, and crashes land while compactions run
    // side by side.
    o.set_max_bytes_for_level_base(write_buffer_size as u64);
    o.set_max_bytes_for_level_multiplier(4.0);
    o.set_target_file_size_base((write_buffer_size as u64 / 4).max(64 << 10));
    o.set_max_background_jobs(3);
    o.set_memtable_kind(match memtablerep {
        "skip_list" => MemtableKind::SkipList,
        "vector" => MemtableKind::Vector,
        other => return Err(format!("--memtablerep={other}: use skip_list or vector")),
    });
    Ok(o)
}

fn expected_path(db: &Path, explicit: &Option<PathBuf>) -> PathBuf {
    explicit.clone().unwrap_or_else(|| {
        let mut p = db.as_os_str().to_owned();
        p.push(".expected");
        PathBuf::from(p)
    })
}

/// Checks every key of `db` against the expected state and resolves pending
/// slots to what the database holds.
pub(crate) fn verify(db: &DB, exp: &Expected, keys: u32) -> Result<Verified, String> {
    let mut r = Verified::default();
    for k in 0..keys {
        let (current, pending) = exp.read(k);
        let got = match db.get(key_bytes(k)).map_err(|e| e.to_string())? {
            None => Some(0),
            Some(v) => value_id(k, &v),
        };
        r.keys += 1;
        let ok = match got {
            Some(id) if pending != 0 => {
                r.pending += 1;
                id == current || id == pending || (pending == u32::MAX && id == 0)
            }
            Some(id) => {
                r.exact += 1;
                id == current
            }
            None => false,
        };
        if !ok {
            r.mismatches += 1;
            if r.mismatches <= 10 {
                eprintln!(
                    "MISMATCH key {k}: database holds {got:?}, expected {current} (pending {pending})"
                );
            }
            continue;
        }
        if pending != 0 {
            exp.write(k, got.unwrap_or(0), 0);
        }
    }
    // The scan must agree with the point reads (now recorded as current),
    // and meet no key outside the stress keys.
    let mut expect_next = 0u32;
    for kv in db.iterator(IteratorMode::Start) {
        let (key, v) = kv.map_err(|e| format!("scanning: {e}"))?;
        r.scanned += 1;
        let k = match parse_key(&key) {
            Some(k) if k < keys && k >= expect_next => k,
            _ => {
                r.mismatches += 1;
                if r.mismatches <= 10 {
                    eprintln!("MISMATCH scan met {key:?}, not a stress key in order");
                }
                continue;
            }
        };
        // Keys skipped by the scan must be absent.
        for missing in expect_next..k {
            if exp.read(missing).0 != 0 {
                r.mismatches += 1;
                if r.mismatches <= 10 {
                    eprintln!("MISMATCH scan skipped key {missing}");
                }
            }
        }
        expect_next = k + 1;
        let (current, _) = exp.read(k);
        if value_id(k, &v) != Some(current) {
            r.mismatches += 1;
            if r.mismatches <= 10 {
                eprintln!(
                    "MISMATCH scan: key {k} holds {:?}, expected {current}",
                    value_id(k, &v)
                );
            }
        }
    }
    for missing in expect_next..keys {
        if exp.read(missing).0 != 0 {
            r.mismatches += 1;
            if r.mismatches <= 10 {
                eprintln!("MISMATCH scan skipped key {missing}");
            }
        }
    }
    Ok(r)
}

fn parse_key(key: &[u8]) -> Option<u32> {
    let digits = key.strip_prefix(b"key")?;
    if digits.len() != 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// `lsm-demo stress`: verifies what the last run left, then runs the workload.
pub fn stress(a: StressArgs) -> Result<(), String> {
    check_workload(a.threads, a.keys)?;
    let opts = options(&a.memtablerep, a.write_buffer_size)?;
    opts.validate().map_err(|e| e.to_string())?;
    let db = DB::open(&opts, &a.db).map_err(|e| format!("opening {}: {e}", a.db.display()))?;
    let seed = if a.seed == 0 { clock_seed() } else { a.seed };
    println!("stress: seed {seed} (replay with --seed={seed})");
    let exp = Expected::open(&expected_path(&a.db, &a.expected), a.keys)
        .map_err(|e| format!("opening the expected state: {e}"))?;
    let v = verify(&db, &exp, a.keys)?;
    println!(
        "stress: verified {} keys on open ({} pending resolved, {} mismatches)",
        v.keys, v.pending, v.mismatches
    );
    if v.mismatches > 0 {
        return Err(format!(
            "{} keys differ from the expected state",
            v.mismatches
        ));
    }
    let locks: Vec<Mutex<()>> = (0..a.keys).map(|_| Mutex::new(())).collect();
    let next_id = AtomicU64::new(1 + (seed % 1000) * 1_000_000);
    let ops_done = AtomicU64::new(0);
    let writes_acked = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let failure = Mutex::new(None::<String>);
    let deadline = Instant::now() + Duration::from_secs(a.duration);
    let workers_done = AtomicU64::new(0);
    std::thread::scope(|s| {
        if a.report_every_ms > 0 {
            let (ops_done, writes_acked, workers_done) = (&ops_done, &writes_acked, &workers_done);
            let every = Duration::from_millis(a.report_every_ms);
            let threads = a.threads as u64;
            s.spawn(move || {
                while workers_done.load(Ordering::Relaxed) < threads {
                    std::thread::sleep(every);
                    println!(
                        "progress: {} acknowledged writes, {} operations",
                        writes_acked.load(Ordering::Relaxed),
                        ops_done.load(Ordering::Relaxed)
                    );
                }
            });
        }
        for t in 0..a.threads {
            let (db, exp, locks, next_id, ops_done, stop, failure, a) =
                (&db, &exp, &locks, &next_id, &ops_done, &stop, &failure, &a);
            let (writes_acked, workers_done) = (&writes_acked, &workers_done);
            s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(seed.wrapping_add(t as u64 * 7919));
                let mut wo = WriteOptions::default();
                wo.set_sync(a.sync);
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if a.ops > 0 && i >= a.ops || a.ops == 0 && Instant::now() >= deadline {
                        break;
                    }
                    i += 1;
                    match one_op(db, exp, locks, next_id, &wo, a.keys, &mut rng) {
                        Ok(wrote) => {
                            writes_acked.fetch_add(wrote as u64, Ordering::Relaxed);
                        }
                        Err(e) => {
                            *failure.lock().expect("lock") = Some(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    ops_done.fetch_add(1, Ordering::Relaxed);
                }
                workers_done.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("lock") {
        return Err(e);
    }
    let v = verify(&db, &exp, a.keys)?;
    println!(
        "stress: {} operations ({} acknowledged writes), final verification of {} keys: {} mismatches",
        ops_done.load(Ordering::Relaxed),
        writes_acked.load(Ordering::Relaxed),
        v.keys,
        v.mismatches
    );
    if v.mismatches > 0 {
        return Err(format!(
            "{} keys differ from the expected state",
            v.mismatches
        ));
    }
    Ok(())
}

fn new_id(next_id: &AtomicU64) -> u32 {
    // Ids wrap within u32, skipping 0 (absent) and u32::MAX (pending delete).
    let id = (next_id.fetch_add(1, Ordering::Relaxed) % (u32::MAX as u64 - 2)) as u32 + 1;
    id.min(u32::MAX - 1)
}

pub(crate) fn one_op(
    db: &DB,
    exp: &Expected,
    locks: &[Mutex<()>],
    next_id: &AtomicU64,
    wo: &WriteOptions,
    keys: u32,
    rng: &mut SmallRng,
) -> Result<bool, String> {
    let k = rng.random_range(0..keys);
    let mut wrote = false;
    match rng.random_range(0..100) {
        // Put.
        0..45 => {
            let _g = locks[k as usize].lock().expect("key lock");
            let id = new_id(next_id);
            let (cur, _) = exp.read(k);
            exp.write(k, cur, id);
            db.put_opt(key_bytes(k), value_bytes(k, id), wo)
                .map_err(|e| e.to_string())?;
            exp.write(k, id, 0);
            wrote = true;
        }
        // Delete (pending id u32::MAX stands for "absent").
        45..55 => {
            let _g = locks[k as usize].lock().expect("key lock");
            let (cur, _) = exp.read(k);
            exp.write(k, cur, u32::MAX);
            db.delete_opt(key_bytes(k), wo).map_err(|e| e.to_string())?;
            exp.write(k, 0, 0);
            wrote = true;
        }
        // A batch over a few distinct keys, locked in order.
        55..65 => {
            let mut ks: Vec<u32> = (0..rng.random_range(2..6))
                .map(|_| rng.random_range(0..keys))
                .collect();
            ks.sort_unstable();
            ks.dedup();
            let _guards: Vec<_> = ks
                .iter()
                .map(|&k| locks[k as usize].lock().expect("key lock"))
                .collect();
            let mut batch = WriteBatch::new();
            let mut planned = Vec::new();
            for &k in &ks {
                let (cur, _) = exp.read(k);
                if rng.random_range(0..4) == 0 {
                    exp.write(k, cur, u32::MAX);
                    batch.delete(key_bytes(k));
                    planned.push((k, 0));
                } else {
                    let id = new_id(next_id);
                    exp.write(k, cur, id);
                    batch.put(key_bytes(k), value_bytes(k, id));
                    planned.push((k, id));
                }
            }
            db.write_opt(batch, wo).map_err(|e| e.to_string())?;
            for (k, id) in planned {
                exp.write(k, id, 0);
            }
            wrote = true;
        }
        // A read checked against the model.
        65..90 => {
            let _g = locks[k as usize].lock().expect("key lock");
            let (cur, _) = exp.read(k);
            let got = db.get(key_bytes(k)).map_err(|e| e.to_string())?;
            let id = match &got {
                None => Some(0),
                Some(v) => value_id(k, v),
            };
            if id != Some(cur) {
                return Err(format!("read of key {k}: got {id:?}, expected {cur}"));
            }
        }
        // A short scan: every value must belong to its key.
        90..96 => {
            for kv in db
                .iterator(IteratorMode::From(
                    &key_bytes(k),
                    lsm_demo::Direction::Forward,
                ))
                .take(20)
            {
                let (key, v) = kv.map_err(|e| e.to_string())?;
                let kk: u32 = std::str::from_utf8(&key[3..])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| format!("scan met a key that was never written: {key:?}"))?;
                if value_id(kk, &v).is_none() {
                    return Err(format!("scan: value of key {kk} is damaged"));
                }
            }
        }
        // A snapshot reads the same value twice while writers run.
        _ => {
            let snap = db.snapshot();
            let a = snap.get(key_bytes(k)).map_err(|e| e.to_string())?;
            std::thread::yield_now();
            let b = snap.get(key_bytes(k)).map_err(|e| e.to_string())?;
            if a != b {
                return Err(format!("snapshot read of key {k} changed"));
            }
        }
    }
    Ok(wrote)
}

pub(crate) fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1
}

/// `lsm-demo crashtest`: start `stress`, SIGKILL it at a random moment,
/// reopen and verify; repeat.
pub fn crashtest(a: CrashArgs) -> Result<(), String> {
    check_workload(a.threads, a.keys)?;
    if let Some(dir) = &a.db {
        super::check_db_dir(dir, "crashtest")?;
    }
    if a.kills == 0 {
        return Err("--kills must be at least 1".into());
    }
    if a.max_run_ms == 0 || a.max_run_ms > MAX_RUN_MS {
        return Err(format!(
            "--max_run_ms={} is outside [1, {MAX_RUN_MS}]",
            a.max_run_ms
        ));
    }
    let opts = options(&a.memtablerep, 256 << 10)?;
    if a.power_loss {
        return super::power_loss::run(&a, &opts);
    }
    let seed = if a.seed == 0 { clock_seed() } else { a.seed };
    println!(
        "crashtest: seed {seed} (replay with --seed={seed}), {} kills, sync={}, {} threads, {} keys, memtable {}",
        a.kills, a.sync as u8, a.threads, a.keys, a.memtablerep
    );
    let tmp;
    let dir = match &a.db {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
            tmp.path().join("db")
        }
    };
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut total = Verified::default();
    let mut survived = 0;
    let mut acked_writes = 0u64;
    let started = Instant::now();
    for round in 0..a.kills {
        let run_ms = rng.random_range(a.max_run_ms / 4..=a.max_run_ms);
        let mut child = std::process::Command::new(&exe)
            .arg("stress")
            .arg(format!("--db={}", dir.display()))
            .arg(format!("--threads={}", a.threads))
            .arg(format!("--keys={}", a.keys))
            .arg("--ops=0")
            .arg("--duration=3600")
            .arg(format!("--seed={}", seed.wrapping_add(round as u64 + 1)))
            .arg(format!("--sync={}", a.sync as u8))
            .arg(format!("--memtablerep={}", a.memtablerep))
            .arg("--report_every_ms=20")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting stress: {e}"))?;
        // Keep the last progress line; reading also keeps the pipe from
        // filling up in long runs.
        let progress = child.stdout.take().map(|out| {
            std::thread::spawn(move || {
                use std::io::BufRead;
                let mut last = 0u64;
                for line in std::io::BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if let Some(n) = line
                        .strip_prefix("progress: ")
                        .and_then(|r| r.split(' ').next())
                        .and_then(|n| n.parse().ok())
                    {
                        last = n;
                    }
                }
                last
            })
        });
        std::thread::sleep(Duration::from_millis(run_ms));
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut s) = child.stderr.take() {
                use std::io::Read;
                let _ = s.read_to_string(&mut err);
            }
            return Err(format!(
                "round {round}: stress exited early ({status}): {err}"
            ));
        }
        child.kill().map_err(|e| format!("killing stress: {e}"))?; // SIGKILL
        let _ = child.wait();
        let acked = progress.and_then(|h| h.join().ok()).unwrap_or(0);
        acked_writes += acked;
        survived += 1;
        let db = DB::open(&opts, &dir).map_err(|e| format!("round {round}: reopening: {e}"))?;
        let exp = Expected::open(&expected_path(&dir, &None), a.keys).map_err(|e| e.to_string())?;
        let v = verify(&db, &exp, a.keys)?;
        total += v;
        println!(
            "round {round:3}: killed after {run_ms} ms, >= {acked} acknowledged writes; {} keys verified, {} in flight, {} lost or wrong",
            v.keys, v.pending, v.mismatches
        );
        if v.mismatches > 0 {
            return Err(format!(
                "round {round}: {} acknowledged writes lost or wrong (seed {seed})",
                v.mismatches
            ));
        }
    }
    println!(
        "crashtest: sync={}: {survived} kills survived in {:.0} s, >= {acked_writes} acknowledged writes, {} key checks ({} exact, {} in flight) and {} scanned entries, acknowledged writes lost: {}",
        a.sync as u8,
        started.elapsed().as_secs_f64(),
        total.keys,
        total.exact,
        total.pending,
        total.scanned,
        total.mismatches
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Debug, clap::Subcommand)]
    enum Command {
        Stress(StressArgs),
        Crashtest(CrashArgs),
    }

    fn stress_args(flags: &[&str]) -> StressArgs {
        let argv = ["lsm-demo", "stress", "--db=/nonexistent/stress-db"];
        match Cli::try_parse_from(argv.iter().chain(flags))
            .unwrap()
            .command
        {
            Command::Stress(a) => a,
            Command::Crashtest(_) => unreachable!(),
        }
    }

    fn crash_args(flags: &[&str]) -> CrashArgs {
        let argv = ["lsm-demo", "crashtest", "--db=/nonexistent/crash-db"];
        match Cli::try_parse_from(argv.iter().chain(flags))
            .unwrap()
            .command
        {
            Command::Crashtest(a) => a,
            Command::Stress(_) => unreachable!(),
        }
    }

    #[test]
    fn out_of_range_stress_flags_are_named() {
        for (flag, named) in [
            ("--threads=0", "--threads=0"),
            ("--threads=5000", "--threads=5000"),
            ("--keys=0", "--keys=0"),
            ("--keys=4000000000", "--keys=4000000000"),
            ("--write_buffer_size=10", "write_buffer_size 10"),
            ("--memtablerep=hash", "--memtablerep=hash"),
        ] {
            let e = stress(stress_args(&[flag])).unwrap_err();
            assert!(e.contains(named), "{flag}: {e}");
        }
        // Nothing was created for a refused run.
        assert!(!Path::new("/nonexistent/stress-db").exists());
    }

    #[test]
    fn out_of_range_crashtest_flags_are_named() {
        for (flag, named) in [
            ("--kills=0", "--kills"),
            ("--max_run_ms=0", "--max_run_ms=0"),
            ("--max_run_ms=99999999", "--max_run_ms=99999999"),
            ("--threads=0", "--threads=0"),
            ("--keys=0", "--keys=0"),
            ("--memtablerep=hash", "--memtablerep=hash"),
        ] {
            let e = crashtest(crash_args(&[flag])).unwrap_err();
            assert!(e.contains(named), "{flag}: {e}");
        }
        let bad_bool = Cli::try_parse_from(["lsm-demo", "crashtest", "--sync=2"]).unwrap_err();
        assert!(
            bad_bool
                .to_string()
                .contains("expected 0, 1, true or false")
        );
    }

    #[test]
    fn keys_and_values_round_trip() {
        assert_eq!(parse_key(&key_bytes(1234)), Some(1234));
        assert_eq!(parse_key(b"key1234"), None);
        assert_eq!(parse_key(b"other"), None);
        assert_eq!(value_id(7, &value_bytes(7, 99)), Some(99));
        assert_eq!(
            value_id(8, &value_bytes(7, 99)),
            None,
            "another key's value"
        );
        let mut damaged = value_bytes(7, 99);
        damaged.pop();
        assert_eq!(value_id(7, &damaged), None);
    }
}
