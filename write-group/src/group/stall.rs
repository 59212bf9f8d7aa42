//! Stalls: holding new writes back while background work catches up.

use std::sync::atomic::Ordering::{Relaxed, SeqCst};

#[cfg(doc)]
use crate::commit::{Commit, WriteError};
use crate::sync;

use super::{STALL_TAG, WriteGroup, is_stalled, untagged};

impl<T, C> WriteGroup<T, C> {
    /// Whether the group is stalled.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::WriteGroup;
    ///
    /// let group: WriteGroup<u8, ()> = WriteGroup::default();
    /// assert!(!group.is_stalled());
    /// group.stall();
    /// assert!(group.is_stalled());
    /// group.release_stall();
    /// assert!(!group.is_stalled());
    /// ```
    #[must_use]
    pub fn is_stalled(&self) -> bool {
        // Relaxed: a report; the stall protocol itself uses SeqCst.
        is_stalled(self.hot.newest.load(Relaxed))
    }

    /// Stalls writes: until [`release_stall`](Self::release_stall), new
    /// writes wait (or fail with [`WriteError::Stalled`] when
    /// [`no_slowdown`](Commit::no_slowdown)). Writes already queued are
    /// admitted and complete, except `no_slowdown` ones that a leader
    /// gathers while the stall is on: those fail with
    /// [`WriteError::Stalled`] when the next group forms (that is, once the
    /// group in flight, if any, is done: do not wait for the stall to end
    /// inside a callback). A `no_slowdown` writer that becomes leader is
    /// admitted. Unbatched entries are not held back. Returns false if the
    /// group was already stalled.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteError, WriteGroup};
    ///
    /// struct Impatient;
    /// impl Commit<u8> for Impatient {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn no_slowdown(&self, _: &u8) -> bool {
    ///         true
    ///     }
    ///     fn lead(&self, _: &mut GroupMembers<'_, u8>) -> Result<Lead<()>, ()> {
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert!(group.stall());
    /// assert_eq!(group.write(&Impatient, 1), Err(WriteError::Stalled));
    /// assert!(group.release_stall());
    /// assert_eq!(group.write(&Impatient, 1), Ok(1));
    /// ```
    pub fn stall(&self) -> bool {
        // SeqCst: cold path; keeps the tag/epoch handshake with stalled
        // writers obviously free of lost wake-ups.
        let mut word = self.hot.newest.load(SeqCst);
        loop {
            if is_stalled(word) {
                return false;
            }
            let stalled = word.map_addr(|addr| addr | STALL_TAG);
            // SeqCst: as above.
            match self
                .hot
                .newest
                .compare_exchange_weak(word, stalled, SeqCst, SeqCst)
            {
                Ok(_) => return true,
                Err(actual) => word = actual,
            }
        }
    }

    /// Lifts a stall and wakes the writes it held. Returns false if the group
    /// was not stalled.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::WriteGroup;
    ///
    /// let group: WriteGroup<u8, ()> = WriteGroup::default();
    /// assert!(!group.release_stall(), "not stalled: nothing to release");
    /// assert!(group.stall());
    /// assert!(group.release_stall());
    /// assert!(!group.release_stall(), "already released");
    /// ```
    pub fn release_stall(&self) -> bool {
        // SeqCst: see `stall`.
        let mut word = self.hot.newest.load(SeqCst);
        loop {
            if !is_stalled(word) {
                return false;
            }
            // SeqCst: see `stall`.
            match self
                .hot
                .newest
                .compare_exchange_weak(word, untagged(word), SeqCst, SeqCst)
            {
                Ok(_) => break,
                Err(actual) => word = actual,
            }
        }
        // SeqCst: a stalled writer reads the epoch before the tag; seeing the
        // tag set means it read the old epoch, so its futex wait returns.
        self.stall_epoch.fetch_add(1, SeqCst);
        sync::shared_wake_all(&self.stall_epoch);
        true
    }

    /// Sleeps until the stall is lifted (or spuriously).
    #[cold]
    pub(super) fn wait_for_stall_release(&self) {
        loop {
            // SeqCst: see `release_stall`.
            let epoch = self.stall_epoch.load(SeqCst);
            // SeqCst: see `release_stall`.
            if !is_stalled(self.hot.newest.load(SeqCst)) {
                return;
            }
            sync::shared_wait(&self.stall_epoch, epoch);
        }
    }
}
