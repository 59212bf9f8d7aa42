//! `lsm-demo`: the engine's command line.
//!
//! - `lsm-demo bench [db_bench flags]`: db_bench's workloads and result line.
//!   Without flags, a default suite on a temporary directory.
//! - `lsm-demo stress`: random operations from many threads, checked against
//!   an expected state kept in a file beside the database.
//! - `lsm-demo crashtest`: kills `stress` at random moments, reopens, verifies.
//! - `lsm-demo verify --db DIR`: every checksum of every live file.
//! - `lsm-demo repair --db DIR`: rebuilds a database from what reads cleanly.

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
    Bench(cli::bench::BenchArgs),
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
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => {
            // No flags at all: the default suite.
            let default_suite = raw.len() == 2;
            cli::bench::run(args, default_suite).map(|_| ())
        }
        Command::Stress(args) => cli::stress::stress(args),
        Command::Crashtest(args) => cli::crashtest::crashtest(args),
        Command::Verify(args) => cli::admin::verify(args),
        Command::Repair(args) => cli::admin::repair(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
