use super::*;

fn p(s: &str) -> &Path {
    Path::new(s)
}

fn write(fs: &dyn FileSystem, path: &str, data: &[u8], sync: bool) {
    let mut f = fs.create(p(path)).unwrap();
    f.append(data).unwrap();
    if sync {
        f.sync().unwrap();
    }
}

#[test]
fn crash_drops_unsynced_bytes() {
    let fs = FaultInjectionFs::new();
    fs.create_dir_all(p("/db")).unwrap();
    let mut f = fs.create(p("/db/log")).unwrap();
    f.append(b"one").unwrap();
    f.sync().unwrap();
    f.append(b"two").unwrap();
    assert_eq!(fs.unsynced_bytes(p("/db/log")), Some(6));
    fs.sync_dir(p("/db")).unwrap();
    assert_eq!(fs.unsynced_bytes(p("/db/log")), Some(3));
    assert_eq!(fs.read_file(p("/db/log")).unwrap(), b"onetwo");
    fs.simulate_crash();
    assert_eq!(fs.read_file(p("/db/log")).unwrap(), b"one");
    // Old handles are dead; new ones work.
    assert!(f.append(b"x").is_err());
    assert!(f.sync().is_err());
    let mut g = fs.open_append(p("/db/log")).unwrap();
    assert_eq!(g.size(), 3);
    g.append(b"!").unwrap();
    assert_eq!(fs.read_file(p("/db/log")).unwrap(), b"one!");
}

#[test]
fn crash_drops_unsynced_creations_and_removals() {
    let fs = FaultInjectionFs::new();
    fs.create_dir_all(p("d")).unwrap();
    write(&fs, "d/kept", b"k", true);
    fs.sync_dir(p("d")).unwrap();
    write(&fs, "d/new", b"n", true); // synced data, unsynced entry
    fs.remove_file(p("d/kept")).unwrap();
    assert_eq!(fs.list_dir(p("d")).unwrap(), vec!["new"]);
    fs.simulate_crash();
    assert_eq!(fs.list_dir(p("d")).unwrap(), vec!["kept"]);
    assert_eq!(fs.read_file(p("d/kept")).unwrap(), b"k");
}

#[test]
fn unsynced_rename_is_undone() {
    let fs = FaultInjectionFs::new();
    write(&fs, "MANIFEST", b"old", true);
    fs.sync_dir(p("")).unwrap();
    write(&fs, "MANIFEST.tmp", b"new", true);
    fs.rename(p("MANIFEST.tmp"), p("MANIFEST")).unwrap();
    assert_eq!(fs.read_file(p("MANIFEST")).unwrap(), b"new");
    fs.simulate_crash();
    assert_eq!(fs.read_file(p("MANIFEST")).unwrap(), b"old");
    assert!(!fs.exists(p("MANIFEST.tmp")));

    write(&fs, "MANIFEST.tmp", b"new", true);
    fs.rename(p("MANIFEST.tmp"), p("MANIFEST")).unwrap();
    fs.sync_dir(p("")).unwrap();
    fs.simulate_crash();
    assert_eq!(fs.read_file(p("MANIFEST")).unwrap(), b"new");
    assert!(!fs.exists(p("MANIFEST.tmp")));
}

#[test]
fn torn_crash_keeps_a_prefix() {
    for seed in 0..20 {
        let fs = FaultInjectionFs::new();
        let mut f = fs.create(p("f")).unwrap();
        f.append(b"0123").unwrap();
        f.sync().unwrap();
        fs.sync_dir(p("")).unwrap();
        f.append(b"456789").unwrap();
        fs.simulate_crash_torn(seed);
        let data = fs.read_file(p("f")).unwrap();
        assert!(data.len() >= 4 && b"0123456789".starts_with(&data));
    }
}

#[test]
fn removed_file_stays_readable_through_open_handle() {
    let fs = FaultInjectionFs::new();
    write(&fs, "t", b"table", true);
    let r = fs.open_random(p("t")).unwrap();
    fs.remove_file(p("t")).unwrap();
    let mut buf = [0u8; 5];
    r.read_exact_at(0, &mut buf).unwrap();
    assert_eq!(&buf, b"table");
    assert!(fs.open_random(p("t")).is_err());
}

#[test]
fn injected_errors_surface() {
    let fs = FaultInjectionFs::new();
    let mut f = fs.create(p("f")).unwrap();
    fs.fail_next(FaultOp::Append, 2);
    assert!(FaultInjectionFs::is_injected(&f.append(b"a").unwrap_err()));
    assert!(f.append(b"a").is_err());
    f.append(b"b").unwrap();
    assert_eq!(fs.injected(FaultOp::Append), 2);
    assert_eq!(fs.calls(FaultOp::Append), 3);

    fs.fail_after(FaultOp::Sync, 1);
    f.sync().unwrap();
    assert!(f.sync().is_err());
    assert!(f.sync().is_err());
    fs.clear_fault(FaultOp::Sync);
    f.sync().unwrap();

    for op in [
        FaultOp::Rename,
        FaultOp::Read,
        FaultOp::Open,
        FaultOp::SyncDir,
    ] {
        fs.fail_next(op, 1);
    }
    assert!(fs.rename(p("f"), p("g")).is_err());
    assert!(fs.exists(p("f")), "a failed rename changes nothing");
    assert!(fs.read_file(p("f")).is_err());
    assert!(fs.open_random(p("f")).is_err());
    assert!(fs.sync_dir(p("")).is_err());
    let r = fs.open_random(p("f")).unwrap();
    fs.fail_next(FaultOp::Read, 1);
    let mut buf = [0u8; 1];
    let err = r.read_exact_at(0, &mut buf).unwrap_err();
    assert!(err.to_string().contains("Read on f"), "{err}");
    r.read_exact_at(0, &mut buf).unwrap();
    assert_eq!(&buf, b"b");
}

#[test]
fn torn_appends_write_half() {
    let fs = FaultInjectionFs::new();
    fs.set_torn_appends(true);
    let mut f = fs.create(p("f")).unwrap();
    fs.fail_next(FaultOp::Append, 1);
    assert!(f.append(b"abcd").is_err());
    assert_eq!(fs.read_file(p("f")).unwrap(), b"ab");
    assert_eq!(f.size(), 2);
}

#[test]
fn random_faults_are_deterministic() {
    let run = |seed| {
        let fs = FaultInjectionFs::new();
        let mut f = fs.create(p("f")).unwrap();
        fs.fail_randomly(FaultOp::Append, 0.3, seed);
        (0..200).map(|_| f.append(b"x").is_ok()).collect::<Vec<_>>()
    };
    let a = run(7);
    assert_eq!(a, run(7));
    let failures = a.iter().filter(|ok| !**ok).count();
    assert!((30..=90).contains(&failures), "{failures}");
    let fs = FaultInjectionFs::new();
    fs.fail_randomly(FaultOp::Create, 1.0, 1);
    assert!(fs.create(p("x")).is_err());
    fs.fail_randomly(FaultOp::Create, 0.0, 1);
    assert!(fs.create(p("x")).is_ok());
}

#[test]
fn namespace_errors() {
    let fs = FaultInjectionFs::new();
    assert_eq!(
        fs.create(p("/no/such/f")).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    fs.create_dir_all(p("/a/b")).unwrap();
    assert!(fs.is_dir(p("/a")) && fs.is_dir(p("/a/b/")));
    assert_eq!(fs.list_dir(p("/a")).unwrap(), vec!["b"]);
    assert!(fs.create(p("/a/b")).is_err());
    write(&fs, "/a/file", b"", false);
    assert!(fs.create_dir_all(p("/a/file/x")).is_err());
    assert_eq!(fs.list_dir(p("/a/./")).unwrap(), vec!["b", "file"]);
    assert!(fs.remove_file(p("/a/missing")).is_err());
    assert!(fs.rename(p("/a/missing"), p("/a/x")).is_err());
    assert!(fs.list_dir(p("/nope")).is_err());
    assert_eq!(fs.file_size(p("/a/file")).unwrap(), 0);
}

#[test]
fn mem_lock_is_exclusive() {
    let fs = FaultInjectionFs::new();
    let lock = fs.lock(p("LOCK")).unwrap();
    assert_eq!(lock.path(), p("LOCK"));
    let err = fs.lock(p("LOCK")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ResourceBusy);
    drop(lock);
    let lock = fs.lock(p("LOCK")).unwrap();
    fs.simulate_crash();
    let again = fs.lock(p("LOCK")).unwrap();
    drop(lock); // the stale lock must not release the new one
    assert!(fs.lock(p("LOCK")).is_err());
    drop(again);
}

#[test]
fn posix_round_trip_and_lock() {
    let dir = tempfile::tempdir().unwrap();
    let fs = PosixFs;
    let sub = dir.path().join("db");
    fs.create_dir_all(&sub).unwrap();
    assert!(fs.is_dir(&sub));
    let path = sub.join("f");
    let mut f = fs.create(&path).unwrap();
    f.append(b"hello ").unwrap();
    f.sync().unwrap();
    drop(f);
    let mut f = fs.open_append(&path).unwrap();
    assert_eq!(f.size(), 6);
    f.append(b"world").unwrap();
    f.flush().unwrap();
    f.sync().unwrap();
    fs.sync_dir(&sub).unwrap();
    let r = fs.open_random(&path).unwrap();
    assert_eq!(r.size().unwrap(), 11);
    let mut buf = [0u8; 5];
    r.read_exact_at(6, &mut buf).unwrap();
    assert_eq!(&buf, b"world");
    assert_eq!(
        r.read_exact_at(8, &mut buf).unwrap_err().kind(),
        io::ErrorKind::UnexpectedEof
    );
    fs.rename(&path, &sub.join("g")).unwrap();
    assert_eq!(fs.list_dir(&sub).unwrap(), vec!["g"]);
    assert_eq!(fs.file_size(&sub.join("g")).unwrap(), 11);
    fs.remove_file(&sub.join("g")).unwrap();
    assert!(!fs.exists(&sub.join("g")));
    let err = fs.read_file(&sub.join("g")).unwrap_err();
    assert!(err.to_string().contains("g"), "{err}");

    let lock_path = sub.join("LOCK");
    let lock = fs.lock(&lock_path).unwrap();
    let err = fs.lock(&lock_path).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ResourceBusy);
    assert!(err.to_string().contains("LOCK"), "{err}");
    drop(lock);
    fs.lock(&lock_path).unwrap();
}

/// A sync that a crash overtakes fails: one that returns `Ok` took effect
/// before the crash, so what it synced survives it. (A sync that checked
/// its handle, then let a crash in before it synced, used to return `Ok`
/// for bytes the crash had dropped.)
#[test]
fn a_sync_racing_a_crash_either_fails_or_keeps_its_bytes() {
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
    let rounds: u64 = 200_000;
    let fs = FaultInjectionFs::new();
    write(&fs, "f", b"", true);
    fs.sync_dir(p("")).unwrap();
    // Each round, the syncer takes the round's handle and says so in
    // `armed`, syncs once `go` names the round, and answers in `done`:
    // 2 * round if the sync failed, one more if it returned Ok.
    let (armed, go, done) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let handle = std::sync::Mutex::new(None::<Arc<dyn FileSync>>);
    // Waits for `ready`: spins briefly, then yields (`Backoff::snooze`),
    // since with more threads than cores (other tests, a loaded machine)
    // the thread waited for needs the core.
    fn wait_until(mut ready: impl FnMut() -> bool) {
        let backoff = crossbeam_utils::Backoff::new();
        while !ready() {
            backoff.snooze();
        }
    }
    let wait_for = |at: &AtomicU64, at_least: u64| wait_until(|| at.load(SeqCst) >= at_least);
    let (synced, lost) = std::thread::scope(|s| {
        s.spawn(|| {
            for round in 1..=rounds {
                let mut sync = None;
                wait_until(|| {
                    sync = handle.lock().unwrap().take();
                    sync.is_some()
                });
                let sync = sync.unwrap();
                armed.store(round, SeqCst);
                wait_for(&go, round);
                let ok = sync.sync().is_ok();
                done.store(2 * round + u64::from(ok), SeqCst);
            }
        });
        let (mut synced, mut lost) = (0, 0);
        let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
        for round in 1..=rounds {
            let before = fs.file_size(p("f")).unwrap();
            let mut f = fs.open_append(p("f")).unwrap();
            f.append(&round.to_le_bytes()).unwrap();
            *handle.lock().unwrap() = Some(f.sync_handle().unwrap());
            wait_for(&armed, round);
            go.store(round, SeqCst);
            // Crash at a different point of the sync each round.
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            for _ in 0..rng % 16 {
                std::hint::spin_loop();
            }
            fs.simulate_crash();
            wait_for(&done, 2 * round);
            if done.load(SeqCst) == 2 * round + 1 {
                synced += 1;
                lost += u32::from(fs.file_size(p("f")).unwrap() != before + 8);
            }
        }
        (synced, lost)
    });
    assert_eq!(
        lost, 0,
        "{lost} of {synced} syncs that returned Ok lost their bytes ({rounds} rounds)"
    );
}
