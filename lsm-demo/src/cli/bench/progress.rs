//! The progress bar of a benchmark: on standard error while standard
//! output is a terminal and `--quiet` is off; otherwise a hidden bar that
//! still counts, which is what the tests read.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// A bar for `total` operations of benchmark `name` (`None`: a run for
/// `--duration`, whose count is not known ahead), shown only when
/// `visible`.
pub(super) fn bar(name: &str, total: Option<u64>, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden());
    }
    drawn_on(name, total, ProgressDrawTarget::stderr())
}

fn drawn_on(name: &str, total: Option<u64>, target: ProgressDrawTarget) -> ProgressBar {
    let b = ProgressBar::with_draw_target(total, target);
    b.set_style(match total {
        Some(_) => style(),
        None => timed_style(),
    });
    b.set_message(name.to_string());
    b
}

/// Whether bars are drawn: standard output is a terminal, and no `--quiet`.
pub(super) fn visible(quiet: bool) -> bool {
    !quiet && std::io::stdout().is_terminal()
}

/// `fillrandom [=====>    ] 52224/100000 373870/s eta 1s`: whole numbers,
/// and a bar that takes what the terminal's width leaves (at least a few
/// columns at 80 with the longest benchmark name and ten-digit counts).
fn style() -> ProgressStyle {
    with_rate("{msg} [{wide_bar}] {pos}/{len} {rate} eta {eta}").progress_chars("=> ")
}

/// `fillrandom 52224 373870/s 3s`: the count so far, the rate and the time
/// run, for a run whose end is a time rather than a count.
fn timed_style() -> ProgressStyle {
    with_rate("{msg} {pos} {rate} {elapsed}")
}

/// A style of `template`, whose `{rate}` is whole operations a second.
fn with_rate(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{}/s", s.per_sec() as u64);
        })
}

/// One thread's share of the bar: it adds its operations to the bar every
/// `step` of them (fewer calls into the bar), and the rest when dropped,
/// so the bar ends at the operations done whatever the batch size.
#[derive(Debug)]
pub(super) struct Ticker<'a> {
    bar: &'a ProgressBar,
    pending: u64,
    step: u64,
}

impl<'a> Ticker<'a> {
    /// A share of `bar`, whose length is the total of all threads.
    pub(super) fn new(bar: &'a ProgressBar) -> Ticker<'a> {
        // About a thousand updates over the run, at most one per 1024
        // operations' worth of progress (1024 when the total is unknown).
        let step = bar.length().map_or(1024, |l| (l / 1000).clamp(1, 1024));
        Ticker {
            bar,
            pending: 0,
            step,
        }
    }

    /// `n` more operations done.
    #[inline]
    pub(super) fn add(&mut self, n: u64) {
        self.pending += n;
        if self.pending >= self.step {
            self.bar.inc(self.pending);
            self.pending = 0;
        }
    }
}

impl Drop for Ticker<'_> {
    fn drop(&mut self) {
        if self.pending > 0 {
            self.bar.inc(self.pending);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickers_add_up_to_the_total_for_any_batch() {
        for (total, batch, threads) in [(100_000u64, 1u64, 1usize), (100_000, 7, 3), (10, 1000, 2)]
        {
            let b = bar("fillrandom", Some(total * threads as u64), false);
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        let mut t = Ticker::new(&b);
                        let mut done = 0;
                        while done < total {
                            let n = batch.min(total - done);
                            t.add(n);
                            done += n;
                        }
                    });
                }
            });
            assert_eq!(Some(b.position()), b.length(), "{total} {batch} {threads}");
        }
    }

    /// A terminal of 80 columns that keeps what is written to it.
    #[derive(Debug, Default, Clone)]
    struct Screen(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            if !s.is_empty() {
                self.0.lock().unwrap().push(s.to_string());
            }
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_drawn_line_fits_80_columns_in_whole_numbers() {
        for (name, total) in [
            ("fillrandom", 100_000u64),
            ("readrandomwriterandom", 4_000_000_000),
        ] {
            let screen = Screen::default();
            let b = drawn_on(
                name,
                Some(total),
                ProgressDrawTarget::term_like(Box::new(screen.clone())),
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
            b.set_position(total / 3);
            b.abandon();
            let lines = screen.0.lock().unwrap().clone();
            let last = lines.last().expect("drawn");
            assert!(last.chars().count() <= 80, "{last:?}");
            assert!(last.starts_with(&format!("{name} [")), "{last:?}");
            let after_bar = last.rsplit(']').next().unwrap();
            assert!(
                after_bar.contains(&format!(" {}/{total} ", total / 3)),
                "{last:?}"
            );
            // `<whole number>/s`: no decimal point anywhere after the bar.
            assert!(!after_bar.contains('.'), "{last:?}");
            assert!(after_bar.contains("/s eta "), "{last:?}");
        }
    }
}
