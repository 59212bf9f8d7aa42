//! The view of a group its leader gets: [`GroupMembers`], and its
//! iterators over the members' items.

use std::fmt;
use std::iter::FusedIterator;
use std::marker::PhantomData;
use std::ptr;

use crate::waiter::Waiter;

/// The members of a group, as [`Commit::lead`](crate::Commit::lead) sees them: every member's
/// item, leader first, in enqueue order, mutably.
///
/// # Examples
///
/// ```
/// use write_group::{Commit, GroupMembers, Lead, Options, WriteGroup};
///
/// struct Numbering;
/// impl Commit<(u64, &'static str)> for Numbering {
///     type Token = ();
///     type Error = ();
///     fn lead(&self, group: &mut GroupMembers<'_, (u64, &'static str)>) -> Result<Lead<()>, ()> {
///         assert_eq!(group.len(), group.iter().count());
///         for (seq, item) in group.iter_mut().enumerate() {
///             item.0 = seq as u64;
///         }
///         Ok(Lead::serial(()))
///     }
/// }
///
/// let group = WriteGroup::new(Options::default());
/// assert_eq!(group.write(&Numbering, (99, "a")), Ok((0, "a")));
/// ```
pub struct GroupMembers<'g, T> {
    /// The leader's item, in its submitter's frame (reached through its
    /// node, or directly for a writer that found the queue idle).
    leader_item: *mut T,
    /// The leader's waiter, through which the other members are reached;
    /// never followed in a group of one (a lone writer has no node).
    leader: *const Waiter<T>,
    len: usize,
    bytes: usize,
    /// The id of the write group this is the leader's view of.
    group_id: u64,
    _items: PhantomData<&'g mut T>,
}

impl<T> fmt::Debug for GroupMembers<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupMembers")
            .field("len", &self.len)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl<'g, T> GroupMembers<'g, T> {
    /// A view of the `len` members starting at `leader`.
    ///
    /// # Safety
    ///
    /// `leader` and the `len - 1` waiters after it (through `link_newer`)
    /// must be live, hold an item, and have their items accessed by nobody
    /// else for `'g`; the view must be built only for the `lead` call of the
    /// current leader of the write group `group_id` names (it proves
    /// leadership to a [`LeaderCell`](crate::LeaderCell)).
    #[inline]
    pub(crate) unsafe fn new(
        leader: *const Waiter<T>,
        len: usize,
        bytes: usize,
        group_id: u64,
    ) -> Self {
        Self {
            // SAFETY: the caller guarantees `leader` is live with an item.
            leader_item: unsafe { item_ptr(leader) },
            leader,
            len,
            bytes,
            group_id,
            _items: PhantomData,
        }
    }

    /// A view of a group of one whose item is not in a node.
    ///
    /// # Safety
    ///
    /// The view must be built only for the `lead` call of the current
    /// leader of the write group `group_id` names.
    #[inline]
    pub(crate) unsafe fn alone(item: &'g mut T, bytes: usize, group_id: u64) -> Self {
        Self {
            leader_item: item,
            leader: ptr::null(),
            len: 1,
            bytes,
            group_id,
            _items: PhantomData,
        }
    }

    /// The id of the write group whose leader holds this view.
    #[inline]
    pub(crate) fn group_id(&self) -> u64 {
        self.group_id
    }

    /// The number of members, leader included (at least 1).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// /// Tells each writer how many writes shared its group.
    /// struct GroupSize;
    /// impl Commit<usize> for GroupSize {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, usize>) -> Result<Lead<()>, ()> {
    ///         let len = group.len();
    ///         group.iter_mut().for_each(|item| *item = len);
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert_eq!(group.write(&GroupSize, 0), Ok(1), "a lone writer's group");
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a group has at least its leader.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// /// Tells each writer whether its group was empty.
    /// struct Empty;
    /// impl Commit<bool> for Empty {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, bool>) -> Result<Lead<()>, ()> {
    ///         let empty = group.is_empty();
    ///         group.iter_mut().for_each(|item| *item = empty);
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert_eq!(group.write(&Empty, true), Ok(false));
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The sum of the members' [`Commit::size`](crate::Commit::size).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    /// struct Log;
    /// impl Commit<Vec<u8>> for Log {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn size(&self, record: &Vec<u8>) -> usize {
    ///         record.len()
    ///     }
    ///     fn lead(&self, group: &mut GroupMembers<'_, Vec<u8>>) -> Result<Lead<()>, ()> {
    ///         let bytes = group.bytes() as u8; // appended to every record
    ///         group.iter_mut().for_each(|record| record.push(bytes));
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// assert_eq!(WriteGroup::default().write(&Log, vec![9; 3]), Ok(vec![9, 9, 9, 3]));
    /// ```
    #[inline]
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The leader's item.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// /// Tells each writer which write led its group.
    /// struct WhoLed;
    /// impl Commit<(char, char)> for WhoLed {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, (char, char)>) -> Result<Lead<()>, ()> {
    ///         let leader = group.leader().0;
    ///         group.iter_mut().for_each(|item| item.1 = leader);
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert_eq!(group.write(&WhoLed, ('a', '?')), Ok(('a', 'a')), "a lone writer leads");
    /// ```
    #[inline]
    #[must_use]
    pub fn leader(&self) -> &T {
        // SAFETY: the constructors' contracts: the leader's item is live and
        // only this view accesses it; `&self` keeps it shared.
        unsafe { &*self.leader_item }
    }

    /// The items in enqueue order.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// struct Total(AtomicU64);
    /// impl Commit<u64> for Total {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, u64>) -> Result<Lead<()>, ()> {
    ///         self.0.fetch_add(group.iter().sum(), Relaxed);
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let (group, total) = (WriteGroup::default(), Total(AtomicU64::new(0)));
    /// assert_eq!((group.write(&total, 5), group.write(&total, 7)), (Ok(5), Ok(7)));
    /// assert_eq!(total.0.into_inner(), 12);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            item: self.leader_item,
            waiter: self.leader,
            remaining: self.len,
            _items: PhantomData,
        }
    }

    /// The items in enqueue order, mutably.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// struct Double;
    /// impl Commit<u32> for Double {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, u32>) -> Result<Lead<()>, ()> {
    ///         for item in group.iter_mut() {
    ///             *item *= 2; // the leader may rewrite every member's item
    ///         }
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert_eq!(group.write(&Double, 21), Ok(42));
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        IterMut {
            item: self.leader_item,
            waiter: self.leader,
            remaining: self.len,
            _items: PhantomData,
        }
    }
}

impl<'a, T> IntoIterator for &'a GroupMembers<'_, T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut GroupMembers<'_, T> {
    type Item = &'a mut T;
    type IntoIter = IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// The item of a live waiter.
///
/// # Safety
///
/// `waiter` must be live and hold an item (not be an unbatched entry, nor
/// finished) that nobody mutates during `'a`.
#[inline]
pub(crate) unsafe fn item_ref<'a, T>(waiter: *const Waiter<T>) -> &'a T {
    // SAFETY: the caller guarantees the waiter is live and its item (live
    // for as long as the waiter is) shared.
    unsafe { (*waiter).item.with(|item| &**item) }
}

/// The item of a live waiter, mutably.
///
/// # Safety
///
/// `waiter` must be live and hold an item (not be an unbatched entry, nor
/// finished) that nobody else accesses during `'a`.
#[inline]
pub(crate) unsafe fn item_mut<'a, T>(waiter: *const Waiter<T>) -> &'a mut T {
    // SAFETY: the caller guarantees the waiter is live and its item (live
    // for as long as the waiter is) ours.
    unsafe { (*waiter).item.with_mut(|item| &mut **item) }
}

/// An item behind a member pointer, shared.
///
/// # Safety
///
/// `item` must be live and not mutated during `'a`.
#[inline]
unsafe fn as_ref<'a, T>(item: *mut T) -> &'a T {
    // SAFETY: the caller's contract.
    unsafe { &*item }
}

/// An item behind a member pointer, mutably.
///
/// # Safety
///
/// `item` must be live and accessed by nobody else during `'a`.
#[inline]
unsafe fn as_mut<'a, T>(item: *mut T) -> &'a mut T {
    // SAFETY: the caller's contract.
    unsafe { &mut *item }
}

/// The item of a live waiter, as a pointer.
///
/// # Safety
///
/// `waiter` must be live and hold an item.
#[inline]
unsafe fn item_ptr<T>(waiter: *const Waiter<T>) -> *mut T {
    // SAFETY: the caller guarantees the waiter is live.
    unsafe { (*waiter).item.with_mut(|item| *item) }
}

/// Steps from a member to the next one.
///
/// # Safety
///
/// `waiter` must be a live member that is not the group's last.
#[inline]
unsafe fn next_member<T>(waiter: *const Waiter<T>) -> *const Waiter<T> {
    // SAFETY: the caller guarantees `waiter` is live. Relaxed: the group's
    // links were written by its leader, which we are or which handed the group
    // to us with Release/Acquire.
    unsafe {
        (*waiter)
            .link_newer
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}

macro_rules! member_iter {
    ($(#[$doc:meta])* $name:ident, $item:ty, $get:ident) => {
        $(#[$doc])*
        pub struct $name<'a, T> {
            /// The next item to yield, held by `waiter` (except a lone
            /// leader's, which `waiter` does not hold).
            item: *mut T,
            waiter: *const Waiter<T>,
            remaining: usize,
            _items: PhantomData<$item>,
        }

        impl<T> fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("remaining", &self.remaining)
                    .finish()
            }
        }

        impl<'a, T> Iterator for $name<'a, T> {
            type Item = $item;

            #[inline]
            fn next(&mut self) -> Option<$item> {
                if self.remaining == 0 {
                    return None;
                }
                let current = self.item;
                self.remaining -= 1;
                if self.remaining > 0 {
                    // SAFETY: `waiter` is a live member and not the last one,
                    // so a node (a group of one has no other member).
                    unsafe {
                        self.waiter = next_member(self.waiter);
                        self.item = item_ptr(self.waiter);
                    }
                }
                // SAFETY: the `GroupMembers` this iterator borrows guarantees
                // every member is live with an item it alone accesses; each
                // member is yielded once.
                Some(unsafe { $get(current) })
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.remaining, Some(self.remaining))
            }
        }

        impl<T> ExactSizeIterator for $name<'_, T> {}
        impl<T> FusedIterator for $name<'_, T> {}
    };
}

member_iter!(
    /// The items of a group, from [`GroupMembers::iter`].
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// struct Max;
    /// impl Commit<(u32, u32)> for Max {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, (u32, u32)>) -> Result<Lead<()>, ()> {
    ///         let items = group.iter(); // what `for item in &*group` walks too
    ///         let max = items.map(|&(value, _)| value).max().unwrap();
    ///         group.iter_mut().for_each(|item| item.1 = max);
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert_eq!(group.write(&Max, (5, 0)), Ok((5, 5)));
    /// ```
    Iter,
    &'a T,
    as_ref
);
member_iter!(
    /// The items of a group, mutably, from [`GroupMembers::iter_mut`].
    ///
    /// # Examples
    ///
    /// `&mut GroupMembers` iterates over an `IterMut`:
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// struct Shout;
    /// impl Commit<String> for Shout {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, String>) -> Result<Lead<()>, ()> {
    ///         for line in group {
    ///             line.make_ascii_uppercase();
    ///         }
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert_eq!(group.write(&Shout, "hi".to_string()), Ok("HI".to_string()));
    /// ```
    IterMut,
    &'a mut T,
    as_mut
);
