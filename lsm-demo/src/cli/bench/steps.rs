//! How long one benchmark thread runs: a number of steps, or, with
//! `--duration`, a number of seconds (db_bench's `Duration`).
//!
//! A count gives each thread the same share of work, so on a busy machine
//! the threads end at different times and the last runs on alone: the rate
//! of the whole run then mixes concurrency levels. A duration keeps every
//! thread running until the same moment, and the rate is that of the
//! threads running together.

use std::time::{Duration, Instant};

/// A thread's budget of operations: ask [`next`](Steps::next) before each
/// step.
#[derive(Debug)]
pub(super) struct Steps {
    /// Operations of the steps granted so far, the one asked for included.
    asked: u64,
    limit: Limit,
}

#[derive(Debug)]
enum Limit {
    /// Steps while the operations stay within this many.
    Count(u64),
    /// Steps until `end`, looked at each time the operations cross a
    /// multiple of `check_every` (a clock read per operation would cost
    /// more than a fast operation).
    Until { end: Instant, check_every: u64 },
}

impl Steps {
    /// Steps of up to `max` operations in all.
    pub(super) fn counted(max: u64) -> Steps {
        Steps {
            asked: 0,
            limit: Limit::Count(max),
        }
    }

    /// Steps until `run` has passed since `start`, the clock read each
    /// time a multiple of `check_every` operations is crossed.
    pub(super) fn timed(start: Instant, run: Duration, check_every: u64) -> Steps {
        Steps {
            asked: 0,
            limit: Limit::Until {
                end: start + run,
                check_every: check_every.max(1),
            },
        }
    }

    /// Whether a step of `ops` operations (at least one) is to run.
    pub(super) fn next(&mut self, ops: u64) -> bool {
        let before = self.asked;
        self.asked += ops.max(1);
        match self.limit {
            Limit::Count(max) => self.asked <= max,
            Limit::Until { end, check_every } => {
                self.asked / check_every == before / check_every || Instant::now() < end
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn granted(mut s: Steps, ops: u64) -> u64 {
        let mut n = 0;
        while s.next(ops) {
            n += 1;
        }
        n
    }

    #[test]
    fn a_count_grants_whole_steps_within_it() {
        assert_eq!(granted(Steps::counted(10), 1), 10);
        assert_eq!(granted(Steps::counted(10), 3), 3);
        assert_eq!(granted(Steps::counted(10), 0), 10);
        assert_eq!(granted(Steps::counted(2), 1000), 0);
    }

    #[test]
    fn a_duration_reads_the_clock_only_at_multiples() {
        // Already past its end: runs on to the first multiple of the check.
        let past = Instant::now() - 2 * SECOND;
        assert_eq!(granted(Steps::timed(past, SECOND, 1000), 1), 999);
        assert_eq!(granted(Steps::timed(past, SECOND, 1000), 300), 3);
        assert_eq!(granted(Steps::timed(past, SECOND, 1), 1), 0);
        assert_eq!(granted(Steps::timed(past, SECOND, 0), 1), 0);
    }

    #[test]
    fn a_duration_runs_until_its_end() {
        let start = Instant::now();
        let run = Duration::from_millis(100);
        let mut s = Steps::timed(start, run, 1);
        let mut steps = 0u64;
        while s.next(1) {
            steps += 1;
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(start.elapsed() >= run);
        assert!(steps >= 2, "{steps}");
    }
}
