//! The `lsm-demo` command line.

use std::fmt;
use std::path::Path;

use lsm_demo::MemtableKind;

pub mod admin;
pub mod bench;
pub mod crashtest;
mod error;
pub mod expected;
pub mod levels;
pub mod power_loss;
pub mod stress;

pub use error::Error;

/// The generator behind every seed the commands print for replay:
/// `stress`'s and `crashtest`'s operations and `bench`'s values (`bench`'s
/// keys follow db_bench's own generator). xoshiro256++, a fixed algorithm,
/// so a seed replays the same run on any platform and with any later
/// `rand`, which `rand::rngs::SmallRng` does not promise.
pub type ReplayRng = rand_xoshiro::Xoshiro256PlusPlus;

/// `--memtablerep` of `bench`, `stress` and `crashtest`: the memtable's
/// representation, under db_bench's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemtableRep {
    /// The concurrent skip list: ordered inserts, reads at any time.
    #[value(name = "skip_list")]
    SkipList,
    /// Unordered appends, sorted once when read or flushed.
    #[value(name = "vector")]
    Vector,
}

impl MemtableRep {
    /// The engine's memtable for this representation.
    pub fn kind(self) -> MemtableKind {
        match self {
            MemtableRep::SkipList => MemtableKind::SkipList,
            MemtableRep::Vector => MemtableKind::Vector,
        }
    }

    /// db_bench's name, as `--memtablerep` takes it.
    pub fn name(self) -> &'static str {
        match self {
            MemtableRep::SkipList => "skip_list",
            MemtableRep::Vector => "vector",
        }
    }
}

impl fmt::Display for MemtableRep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `--db` may name a missing or empty directory, or a database of ours,
/// whose own files the command may delete (`bench`) or overwrite with its
/// workload (`crashtest`): nothing else. Checked before anything is printed.
pub(crate) fn check_db_dir(dir: &Path, command: &str) -> Result<(), Error> {
    let refuse = |why: String| {
        Err(Error::usage(format!(
            "--db {}: {why}; {command} only deletes a database of its own",
            dir.display()
        )))
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

/// Parses `flags` as a command whose arguments are `A` would (say, a
/// subcommand's), for the tests of their values and checks.
#[cfg(test)]
pub(crate) fn parse_flags<A: clap::Args + clap::FromArgMatches>(
    flags: &[&str],
) -> Result<A, clap::Error> {
    let command = A::augment_args(clap::Command::new("lsm-demo"));
    let argv = std::iter::once("lsm-demo").chain(flags.iter().copied());
    A::from_arg_matches_mut(&mut command.try_get_matches_from(argv)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn replay_seeds_draw_a_fixed_stream() {
        use rand::{Rng, RngCore, SeedableRng};
        // xoshiro256++ seeded through SplitMix64: these numbers are the
        // algorithm's, the same on every platform and release, so a seed
        // printed by `stress` or `crashtest` replays the same operations.
        let mut r = ReplayRng::seed_from_u64(11);
        assert_eq!(r.next_u64(), 15_860_195_524_371_628_672);
        let mut a = ReplayRng::seed_from_u64(11);
        let mut b = ReplayRng::seed_from_u64(11);
        let xs: Vec<u32> = (0..100).map(|_| a.random_range(0..1000)).collect();
        let ys: Vec<u32> = (0..100).map(|_| b.random_range(0..1000)).collect();
        assert_eq!(xs, ys);
    }

    #[test]
    fn memtablerep_names_round_trip() {
        // `crashtest` passes the name on to its `stress` children.
        for rep in MemtableRep::value_variants() {
            let name = rep.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(rep.to_string(), name);
            assert_eq!(MemtableRep::from_str(&name, false), Ok(*rep));
        }
        assert_eq!(MemtableRep::SkipList.kind(), MemtableKind::SkipList);
        assert_eq!(MemtableRep::Vector.kind(), MemtableKind::Vector);
    }
}
