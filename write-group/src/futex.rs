//! Futex wait and wake on an [`AtomicU32`]: Linux's `futex(2)` called
//! directly, and `atomic-wait`'s per-platform calls elsewhere.
//!
//! Why not `atomic-wait` on Linux too: its Linux calls pass the word to the
//! variadic `syscall(SYS_futex, ...)` as a `&AtomicU32`, where the syscall
//! takes a `*mut u32`. The machine code is the same, but miri (which runs this
//! crate's unit tests, sleeps included) checks the types of C variadic
//! arguments since its 2026-09 nightlies and stops there. These calls pass
//! every argument at the type the kernel reads, as std's own futex code does.
//!
//! Only the std build uses this module: under loom, [`crate::sync`] maps
//! waits to `park` and `yield_now`.

use std::sync::atomic::AtomicU32;

/// Sleeps while `word` holds `expected`. Returns at once if it does not, and
/// may return spuriously (on a signal, or when woken for an earlier value):
/// callers loop on the value.
#[inline]
pub(crate) fn wait(word: &AtomicU32, expected: u32) {
    imp::wait(word, expected);
}

/// Wakes at most one thread sleeping in [`wait`] on `word`.
///
/// `word` need not point to a live atomic: the kernel only compares the
/// address with those of its sleepers, so a freed word at worst wakes an
/// unrelated waiter early, which [`wait`]'s callers tolerate.
#[inline]
pub(crate) fn wake_one(word: *const AtomicU32) {
    imp::wake(word, 1);
}

/// Wakes every thread sleeping in [`wait`] on `word`.
#[inline]
pub(crate) fn wake_all(word: &AtomicU32) {
    imp::wake(word, i32::MAX as u32);
}

#[cfg(target_os = "linux")]
mod imp {
    use std::sync::atomic::AtomicU32;

    /// `FUTEX_WAIT` without a timeout: the word stays private to this process.
    #[inline]
    pub(super) fn wait(word: &AtomicU32, expected: u32) {
        // SAFETY: `word.as_ptr()` is a valid, aligned `u32` for the duration
        // of the call (the borrow keeps it alive); FUTEX_WAIT only reads it.
        // A null timeout means no timeout. The result is ignored: EAGAIN
        // (value changed), EINTR and a wake-up all mean "look again", which
        // every caller does.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                expected,
                std::ptr::null::<libc::timespec>(),
            );
        }
    }

    /// `FUTEX_WAKE` of up to `count` sleepers on `word`.
    #[inline]
    pub(super) fn wake(word: *const AtomicU32, count: u32) {
        // `AtomicU32` has the layout of `u32`; the syscall wants `*mut u32`.
        let word = word.cast::<u32>().cast_mut();
        // SAFETY: FUTEX_WAKE never dereferences the address, it only looks
        // up sleepers keyed by it, so any address (even a dangling one) is
        // sound. The count of woken threads is not needed.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word,
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                count,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::sync::atomic::AtomicU32;

    #[inline]
    pub(super) fn wait(word: &AtomicU32, expected: u32) {
        atomic_wait::wait(word, expected);
    }

    #[inline]
    pub(super) fn wake(word: *const AtomicU32, count: u32) {
        if count == 1 {
            atomic_wait::wake_one(word);
        } else {
            atomic_wait::wake_all(word);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::{Acquire, Release};
    use std::thread;

    #[test]
    fn a_wait_on_a_changed_value_returns_at_once() {
        let word = AtomicU32::new(1);
        wait(&word, 0);
    }

    #[test]
    fn wake_one_and_wake_all_release_sleepers() {
        for wake_everyone in [false, true] {
            let word = AtomicU32::new(0);
            thread::scope(|s| {
                let sleepers: Vec<_> = (0..2)
                    .map(|_| {
                        s.spawn(|| {
                            // Acquire: pairs with the Release store that wakes
                            // us.
                            while word.load(Acquire) == 0 {
                                wait(&word, 0);
                            }
                        })
                    })
                    .collect();
                // Release: the sleepers' Acquire loads see it.
                word.store(1, Release);
                if wake_everyone {
                    wake_all(&word);
                } else {
                    // One wake-up per sleeper; a sleeper that had not yet
                    // slept sees the new value and never sleeps.
                    wake_one(&word);
                    wake_one(&word);
                }
                for sleeper in sleepers {
                    sleeper.join().unwrap();
                }
            });
        }
    }

    #[test]
    fn waking_a_freed_word_is_harmless() {
        let word = Box::new(AtomicU32::new(0));
        let address: *const AtomicU32 = &*word;
        drop(word);
        wake_one(address);
    }
}
