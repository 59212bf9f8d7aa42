//! `lsm-demo verify` and `lsm-demo repair`: the database's checksums, and a
//! rebuild from what reads cleanly.

use std::path::PathBuf;

use lsm_demo::env::PosixFs;
use lsm_demo::repair::{repair_with_fs, verify_with_fs};

use super::Error;

/// Flags of `lsm-demo verify`.
#[derive(Debug, Clone, clap::Args)]
#[command(rename_all = "snake_case")]
pub struct VerifyArgs {
    /// Database directory (closed: verify takes its lock).
    #[arg(long)]
    pub db: PathBuf,
}

/// Flags of `lsm-demo repair`.
#[derive(Debug, Clone, clap::Args)]
#[command(rename_all = "snake_case")]
pub struct RepairArgs {
    /// Database directory (closed: repair takes its lock).
    #[arg(long)]
    pub db: PathBuf,
}

/// Prints what `verify_with_fs` found; damage is an error (exit status 1).
pub fn verify(a: VerifyArgs) -> Result<(), Error> {
    let report = verify_with_fs(&a.db, &PosixFs)?;
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
    let opts = lsm_demo::Options::default();
    let report = repair_with_fs(&opts, &a.db, &PosixFs)?;
    println!("{report}");
    Ok(())
}
