//! `lsm-demo verify` and `lsm-demo repair`: the database's checksums, and a
//! rebuild from what reads cleanly.

use std::path::PathBuf;

use lsm_demo::env::PosixFs;
use lsm_demo::repair::{repair_with_fs, verify_with_fs};

use super::Error;
use super::stress::parse_bool;

/// Flags of `lsm-demo verify`.
#[derive(Debug, Clone, clap::Args)]
#[command(rename_all = "snake_case")]
pub struct VerifyArgs {
    /// Database directory (closed: verify takes its lock).
    #[arg(long)]
    pub db: PathBuf,
    /// The logs were written through a memory map (`allow_mmap_writes`):
    /// whole records after a torn one at the end of the last log are then
    /// writes in flight at a crash, a torn tail, not damage.
    #[arg(long, default_value = "0", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub mmap_write: bool,
}

/// Flags of `lsm-demo repair`.
#[derive(Debug, Clone, clap::Args)]
#[command(rename_all = "snake_case")]
pub struct RepairArgs {
    /// Database directory (closed: repair takes its lock).
    #[arg(long)]
    pub db: PathBuf,
    /// The logs were written through a memory map (`allow_mmap_writes`):
    /// whole records after a torn one at the end of the last log are then
    /// writes in flight at a crash, dropped as on open, not salvaged.
    #[arg(long, default_value = "0", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub mmap_write: bool,
}

/// Prints what `verify_with_fs` found; damage is an error (exit status 1).
pub fn verify(a: VerifyArgs) -> Result<(), Error> {
    let mut opts = lsm_demo::Options::default();
    opts.set_allow_mmap_writes(a.mmap_write);
    let report = verify_with_fs(&opts, &a.db, &PosixFs)?;
    println!("{report}");
    if report.is_clean() {
        Ok(())
    } else {
        Err(Error::Verification(format!(
            "{} damaged files in {}",
            report.damaged.len(),
            a.db.display()
        )))
    }
}

/// Rebuilds the database and prints what was salvaged.
pub fn repair(a: RepairArgs) -> Result<(), Error> {
    let mut opts = lsm_demo::Options::default();
    opts.set_allow_mmap_writes(a.mmap_write);
    let report = repair_with_fs(&opts, &a.db, &PosixFs)?;
    println!("{report}");
    Ok(())
}
