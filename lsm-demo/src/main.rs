//! `lsm-demo`: the engine's command line.
//!
//! - `lsm-demo bench [db_bench flags]`: db_bench's workloads and result line.
//!   Without flags, a default suite on a temporary directory.
//! - `lsm-demo stress`: random operations from many threads, checked against
//!   an expected state kept in a file beside the database.
//! - `lsm-demo crashtest`: kills `stress` at random moments, reopens, verifies.
//! - `lsm-demo verify --db DIR`: every checksum of every live file.
//! - `lsm-demo repair --db DIR`: rebuilds a database from what reads cleanly.
//!
//! Exit status: 0 on success, 2 for a bad flag or flag value (as clap's own
//! usage errors), 1 for any other failure: an engine or I/O error, a lost
//! or wrong value found by `stress`, `crashtest` or `verify`, a failed
//! benchmark.

mod cli;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "lsm-demo",
    version,
    about = "An LSM engine built from the lsm-write-path primitives"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run db_bench's workloads (same flags, same result line).
    Bench(Box<cli::bench::BenchArgs>),
    /// Random operations checked against an expected-state file.
    Stress(cli::stress::StressArgs),
    /// Kill `stress` at random, reopen and verify, in a loop.
    Crashtest(cli::crashtest::CrashArgs),
    /// Check every checksum of every live file (as `ldb verify_checksum`).
    Verify(cli::admin::VerifyArgs),
    /// Rebuild the database from the tables and logs that read cleanly.
    Repair(cli::admin::RepairArgs),
}

fn main() {
    let raw: Vec<String> = std::env::args().collect();
    let is_bench = raw.get(1).map(String::as_str) == Some("bench");
    if is_bench && let Err(e) = cli::bench::reject_rocksdb_only_flags(&raw[2..]) {
        exit_with(&e);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => {
            // No flags at all: the default suite.
            let default_suite = raw.len() == 2;
            cli::bench::run(*args, default_suite).map(|_| ())
        }
        Command::Stress(args) => cli::stress::stress(args),
        Command::Crashtest(args) => cli::crashtest::crashtest(args),
        Command::Verify(args) => cli::admin::verify(args),
        Command::Repair(args) => cli::admin::repair(args),
    };
    if let Err(e) = result {
        exit_with(&e);
    }
}

/// Prints `e` as clap prints its own errors and exits with its status: 2
/// for a usage error, 1 for any other failure. The message already holds
/// its sources' messages.
fn exit_with(e: &cli::Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(e.exit_code());
}
