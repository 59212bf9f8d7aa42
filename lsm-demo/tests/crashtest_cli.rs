//! The `stress` and `crashtest` subcommands end to end: a few kills with and
//! without sync, and a few simulated power losses, lose nothing; a tampered
//! expected state is caught, one left by a deleted database is not taken
//! for this one's; out-of-range flags are refused with the flag named.

use std::path::Path;
use std::process::{Command, Output};

fn lsm_demo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lsm-demo"))
        .args(args)
        .output()
        .expect("running lsm-demo")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_few_kills_lose_no_acknowledged_write() {
    for sync in ["--sync=1", "--sync=0"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let out = lsm_demo(&[
            "crashtest",
            &format!("--db={}", db.display()),
            "--kills=3",
            "--max_run_ms=600",
            "--keys=500",
            "--threads=3",
            "--seed=11",
            sync,
        ]);
        let all = text(&out);
        assert!(out.status.success(), "{all}");
        assert!(
            all.contains("3 kills survived") && all.contains("acknowledged writes lost: 0"),
            "{all}"
        );
    }
}

#[test]
fn power_losses_lose_no_synced_write() {
    for memtable in ["--memtablerep=skip_list", "--memtablerep=vector"] {
        let out = lsm_demo(&[
            "crashtest",
            "--power_loss=1",
            "--kills=6",
            "--max_run_ms=80",
            "--keys=500",
            "--threads=3",
            "--seed=5",
            memtable,
        ]);
        let all = text(&out);
        assert!(out.status.success(), "{all}");
        assert!(
            all.contains("6 power losses survived") && all.contains("acknowledged writes lost: 0"),
            "{all}"
        );
        assert!(
            all.contains("unsynced bytes torn") && all.contains("unsynced bytes dropped"),
            "{all}"
        );
    }
    let out = lsm_demo(&["crashtest", "--power_loss=1", "--sync=0"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("--power_loss needs --sync=1"));
}

/// Sets key `k`'s expected value id in the expected-state file.
fn tamper(expected: &Path, k: u64, id: u32) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(expected)
        .unwrap();
    f.write_all_at(&u64::from(id).to_le_bytes(), k * 8).unwrap();
}

#[test]
fn a_lost_write_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db_flag = format!("--db={}", db.display());
    let run = |ops: &str| lsm_demo(&["stress", &db_flag, "--keys=50", "--threads=2", ops]);
    let first = run("--ops=300");
    assert!(first.status.success(), "{}", text(&first));
    // The model now claims a value the database never held.
    tamper(&dir.path().join("db.expected"), 7, 4_000_000_000);
    let second = run("--ops=1");
    let all = text(&second);
    assert!(!second.status.success(), "{all}");
    assert!(
        all.contains("MISMATCH key 7") && all.contains("keys differ from the expected state"),
        "{all}"
    );
}

#[test]
fn out_of_range_flags_are_refused() {
    for (args, named) in [
        (
            &["stress", "--db=/nonexistent/x", "--threads=0"][..],
            "--threads=0",
        ),
        (&["stress", "--db=/nonexistent/x", "--keys=0"], "--keys=0"),
        (
            &["stress", "--db=/nonexistent/x", "--write_buffer_size=1"],
            "write_buffer_size 1 ",
        ),
        (&["crashtest", "--kills=0"], "--kills"),
        (&["crashtest", "--max_run_ms=0"], "--max_run_ms=0"),
        (
            &["bench", "--value_size=100000000"],
            "--value_size=100000000",
        ),
        (&["bench", "--reads=-5"], "--reads=-5"),
        (&["bench", "--disable_wal=1", "--sync=1"], "--disable_wal"),
        (&["bench", "--compression_type=none"], "--compression_type"),
    ] {
        let out = lsm_demo(args);
        let all = text(&out);
        assert!(!out.status.success(), "{args:?}: {all}");
        assert!(all.contains("error"), "{args:?}: {all}");
        assert!(all.contains(named), "{args:?}: {all}");
    }
    assert!(!Path::new("/nonexistent/x").exists());
}

/// The expected state lives beside the database (`DB.expected`): when the
/// database is deleted and the crash test repeated, the new, empty database
/// is not checked against the old state; `stress` on its own refuses it.
#[test]
fn a_new_database_starts_a_new_expected_state() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let crashtest = || {
        lsm_demo(&[
            "crashtest",
            &format!("--db={}", db.display()),
            "--kills=1",
            "--max_run_ms=300",
            "--keys=200",
            "--threads=2",
            "--seed=5",
        ])
    };
    let first = crashtest();
    assert!(first.status.success(), "{}", text(&first));
    std::fs::remove_dir_all(&db).unwrap();
    assert!(dir.path().join("db.expected").exists());
    let second = crashtest();
    let all = text(&second);
    assert!(second.status.success(), "{all}");
    assert!(all.contains("starts over"), "{all}");
    // `stress` alone refuses such a pair, naming the file.
    std::fs::remove_dir_all(&db).unwrap();
    let out = lsm_demo(&["stress", &format!("--db={}", db.display()), "--ops=10"]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("db.expected"), "{all}");
}
