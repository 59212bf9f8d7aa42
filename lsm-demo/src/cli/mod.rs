//! The `lsm-demo` command line.

use std::path::Path;

pub mod admin;
pub mod bench;
pub mod crashtest;
pub mod expected;
pub mod levels;
pub mod power_loss;
pub mod stress;

/// `--db` may name a missing or empty directory, or a database of ours,
/// whose own files the command may delete (`bench`) or overwrite with its
/// workload (`crashtest`): nothing else. Checked before anything is printed.
pub(crate) fn check_db_dir(dir: &Path, command: &str) -> Result<(), String> {
    let refuse = |why: String| {
        Err(format!(
            "--db {}: {why}; {command} only deletes a database of its own",
            dir.display()
        ))
    };
    if !dir.exists() {
        return Ok(());
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries.count(),
        Err(e) => return refuse(e.to_string()),
    };
    match lsm_demo::manifest::read_manifest(&lsm_demo::env::PosixFs, dir) {
        Ok(Some(_)) => Ok(()),
        Ok(None) if entries == 0 => Ok(()),
        Ok(None) => refuse("the directory holds files and no database".into()),
        Err(e) => refuse(e.to_string()),
    }
}
