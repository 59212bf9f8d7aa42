//! The structural check behind the tests: [`SkipList::check_invariants`]
//! and the [`InvariantError`] it reports.

use std::cmp::Ordering as CmpOrdering;
use std::fmt;

use crate::node::{Hint, Node};
use crate::sync::Ordering;
use crate::{Comparator, SkipList};

impl<C: Comparator> SkipList<C> {
    /// Walks every level and checks the structure: each level is strictly
    /// ascending, every node of a level is linked in the level below, and no
    /// level at or above `max_height` is used. Returns how many nodes each
    /// level holds, one count per level of the list's options' `max_height`
    /// (`counts[0] == len()` when no insert is running). O(n · height).
    ///
    /// A test hook, hidden from the docs and not part of the stable API:
    /// this crate's tests (unit, proptest, stress, loom) call it after
    /// their inserts.
    ///
    /// # Errors
    ///
    /// The first violation found, which means a bug in this crate or an
    /// inconsistent comparator.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// for i in 0u32..100 {
    ///     list.insert(&i.to_le_bytes());
    /// }
    /// let counts = list.check_invariants().unwrap();
    /// assert_eq!(counts[0], 100);
    /// assert!(counts[1] < 100);
    /// ```
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<Vec<usize>, InvariantError> {
        let mut counts = vec![0; self.height_cap];
        // Relaxed: a raise we miss only means the levels above are checked
        // against a lower bound, which the next check repeats.
        let max_height = self.max_height.load(Ordering::Relaxed);
        for (level, count) in counts.iter_mut().enumerate() {
            let mut below: Option<Node> = None;
            let mut prev: Option<Node> = None;
            let mut at = self.next_of(None, level);
            while let Some(node) = at {
                *count += 1;
                if level >= max_height {
                    return Err(InvariantError::AboveMaxHeight { level });
                }
                let key = self.key_of(node);
                if let Some(p) = prev
                    && self.cmp.compare(self.key_of(p), key) != CmpOrdering::Less
                {
                    return Err(InvariantError::OutOfOrder { level });
                }
                if level > 0 && self.stride.prefixed() {
                    // SAFETY: `prev` (or the head) is of this list and has
                    // `level`, which is above 0 in the prefixed layout.
                    let (prefix, next) = unsafe {
                        prev.unwrap_or(self.head)
                            .prefix_and_next(level, self.stride)
                    };
                    // Another insert may have linked a node since `at` was
                    // read: the prefix is then that node's or `at`'s.
                    if next.is_none_or(|n| prefix < self.cmp.key_prefix(self.key_of(n))) {
                        return Err(InvariantError::PrefixBelow { level });
                    }
                    let from = prev.unwrap_or(self.head);
                    // SAFETY: as above.
                    let across = unsafe { from.hint(level, self.stride, Hint::Across) };
                    // The across hint names a node after the link's (or,
                    // after an insert since `at` was read, `at` itself).
                    if across.is_some_and(|h| {
                        h != node && self.cmp.compare(self.key_of(h), key) != CmpOrdering::Greater
                    }) {
                        return Err(InvariantError::HintNotAfter { level });
                    }
                    // SAFETY: as above.
                    let down = unsafe { from.hint(level, self.stride, Hint::Down) };
                    // The down hint names a node after the link's when it
                    // was set, so after `prev` (a racing insert may have
                    // put one between `prev` and `at` since).
                    if down.is_some_and(|h| {
                        prev.is_some_and(|p| {
                            self.cmp.compare(self.key_of(h), self.key_of(p)) != CmpOrdering::Greater
                        })
                    }) {
                        return Err(InvariantError::HintNotAfter { level });
                    }
                }
                if level > 0 {
                    loop {
                        below = self.next_of(below, level - 1);
                        match below {
                            Some(b) if b == node => break,
                            Some(b)
                                if self.cmp.compare(self.key_of(b), key) == CmpOrdering::Less => {}
                            _ => return Err(InvariantError::MissingBelow { level }),
                        }
                    }
                }
                prev = at;
                at = self.next_of(at, level);
            }
        }
        Ok(counts)
    }
}

/// A structural violation found by [`SkipList::check_invariants`]; like it,
/// a test hook, hidden from the docs and not part of the stable API.
///
/// # Examples
///
/// ```
/// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
/// let _: Result<_, inline_skiplist::InvariantError> = list.check_invariants();
/// ```
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvariantError {
    /// Two neighbours at `level` are not in strictly ascending order.
    OutOfOrder {
        /// The level.
        level: usize,
    },
    /// A node linked at `level` is missing from `level - 1`.
    MissingBelow {
        /// The level.
        level: usize,
    },
    /// A node is linked at a level at or above the list's recorded height.
    AboveMaxHeight {
        /// The level.
        level: usize,
    },
    /// In the prefixed layout, a hint beside a link at `level` names a node
    /// that is not after the one the link points to.
    HintNotAfter {
        /// The level.
        level: usize,
    },
    /// In the prefixed layout, a prefix beside a link at `level` is below
    /// the prefix of the node the link points to.
    PrefixBelow {
        /// The level.
        level: usize,
    },
}

impl fmt::Display for InvariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfOrder { level } => write!(f, "level {level} is not strictly ascending"),
            Self::MissingBelow { level } => {
                write!(f, "a node of level {level} is missing from the level below")
            }
            Self::AboveMaxHeight { level } => {
                write!(f, "level {level} is in use above the recorded max height")
            }
            Self::PrefixBelow { level } => {
                write!(f, "a key prefix at level {level} is below its node's")
            }
            Self::HintNotAfter { level } => {
                write!(
                    f,
                    "a successor hint at level {level} is not after its link's node"
                )
            }
        }
    }
}

impl std::error::Error for InvariantError {}
