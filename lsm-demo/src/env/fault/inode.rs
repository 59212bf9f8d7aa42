//! An in-memory file of [`FaultInjectionFs`](super::FaultInjectionFs): its
//! bytes as the running process sees them, and what a power loss leaves of
//! them.
//!
//! Appended files lose a tail: the unsynced bytes go, or (torn) all but a
//! random-length prefix of them. A file written at offsets
//! ([`FileSystem::create_positional`](crate::env::FileSystem::create_positional))
//! can also be written below its synced length (into a hole that a later
//! write left), and a disk writes its dirty pages back in no particular
//! order: a torn power loss keeps a random set of its unsynced pages, each
//! kept or lost whole, and the file ends after the last one kept.

use std::collections::BTreeMap;

/// The granule a torn power loss keeps or loses of a positionally written
/// file: the page cache's page.
const PAGE: usize = 4096;

#[derive(Debug, Default)]
pub(super) struct Inode {
    /// The bytes as the running process sees them.
    pub(super) data: Vec<u8>,
    /// `data[..synced_len]` survives a power loss, except the pages in
    /// `saved`.
    pub(super) synced_len: usize,
    /// Written at offsets (see the module docs).
    pub(super) positional: bool,
    /// Each page below `synced_len` written since the last sync, by its
    /// index: its bytes below `synced_len` as of that sync (what a power
    /// loss brings back).
    saved: BTreeMap<usize, Vec<u8>>,
}

impl Inode {
    /// An empty file, written at offsets if `positional`.
    pub(super) fn new(positional: bool) -> Inode {
        Inode {
            positional,
            ..Inode::default()
        }
    }

    /// Writes `bytes` at `offset`, extending the file with zeros up to it.
    /// (Positioned writes, like files that writers share, are Linux's.)
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(super) fn write_at(&mut self, offset: usize, bytes: &[u8]) {
        let end = offset + bytes.len();
        if offset < self.synced_len {
            for page in offset / PAGE..end.min(self.synced_len).div_ceil(PAGE) {
                let from = page * PAGE;
                let upto = ((page + 1) * PAGE).min(self.synced_len);
                let data = &self.data;
                self.saved
                    .entry(page)
                    .or_insert_with(|| data[from..upto].to_vec());
            }
        }
        if self.data.len() < end {
            self.data.resize(end, 0);
        }
        self.data[offset..end].copy_from_slice(bytes);
    }

    /// Appends `bytes`.
    pub(super) fn append(&mut self, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
    }

    /// Cuts or extends (with zeros) the file to `len` bytes. A cut below
    /// the synced length is taken as durable at once (as a journaled
    /// truncation may be).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(super) fn set_len(&mut self, len: usize) {
        self.data.resize(len, 0);
        if len < self.synced_len {
            self.synced_len = len;
            self.saved.retain(|&page, _| page * PAGE < len);
            if let Some(old) = self.saved.get_mut(&(len / PAGE)) {
                old.truncate(len % PAGE);
            }
        }
    }

    /// Makes every byte survive a power loss.
    pub(super) fn sync(&mut self) {
        self.synced_len = self.data.len();
        self.saved.clear();
    }

    /// The bytes a power loss would lose now (counting each page written
    /// below the synced length whole).
    pub(super) fn unsynced(&self) -> usize {
        self.data.len() - self.synced_len + self.saved.values().map(Vec::len).sum::<usize>()
    }

    /// What a power loss leaves: the synced bytes, and with `rng` (a torn
    /// loss) some unsynced ones: a random-length prefix of an appended
    /// file's, a random set of a positional file's pages.
    pub(super) fn lose_power(&mut self, mut rng: Option<&mut u64>) {
        let mut end = self.synced_len;
        if self.positional {
            let mut keep = || rng.as_deref_mut().is_some_and(|r| next(r) & 1 == 1);
            for (page, old) in std::mem::take(&mut self.saved) {
                if !keep() {
                    self.data[page * PAGE..page * PAGE + old.len()].copy_from_slice(&old);
                }
            }
            let len = self.data.len();
            for page in self.synced_len / PAGE..len.div_ceil(PAGE) {
                let from = (page * PAGE).max(self.synced_len);
                let upto = ((page + 1) * PAGE).min(len);
                if keep() {
                    end = upto;
                } else {
                    self.data[from..upto].fill(0);
                }
            }
        } else if let Some(r) = rng {
            let unsynced = self.data.len() - self.synced_len;
            end += next(r) as usize % (unsynced + 1);
        }
        self.data.truncate(end);
        self.synced_len = end;
    }
}

/// The next value of a xorshift generator.
fn next(r: &mut u64) -> u64 {
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    *r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `PAGE + 10` synced bytes of 1.
    fn synced(positional: bool) -> Inode {
        let mut inode = Inode::new(positional);
        inode.write_at(0, &[1; PAGE + 10]);
        inode.sync();
        inode
    }

    #[test]
    fn a_power_loss_keeps_the_synced_bytes_only() {
        for positional in [false, true] {
            let mut inode = synced(positional);
            inode.append(&[2; 3 * PAGE]);
            assert_eq!(inode.unsynced(), 3 * PAGE);
            inode.lose_power(None);
            assert_eq!(inode.data, vec![1; PAGE + 10]);
        }
    }

    #[test]
    fn a_write_into_a_hole_below_the_synced_length_is_lost_without_a_sync() {
        let mut inode = Inode::new(true);
        inode.write_at(2 * PAGE, &[3; 8]); // a hole before it
        inode.sync();
        inode.write_at(PAGE - 4, &[4; 8]); // into the hole, over two pages
        assert_eq!(inode.unsynced(), 2 * PAGE);
        inode.lose_power(None);
        let mut expected = vec![0; 2 * PAGE];
        expected.extend_from_slice(&[3; 8]);
        assert_eq!(inode.data, expected);
    }

    #[test]
    fn a_cut_below_the_synced_length_keeps_what_is_below_it() {
        let mut inode = Inode::new(true);
        inode.write_at(2 * PAGE, &[3; 8]);
        inode.sync();
        inode.write_at(PAGE, &[4; 8]);
        inode.set_len(PAGE + 4);
        inode.lose_power(None);
        assert_eq!(inode.data, vec![0; PAGE + 4]);
    }

    #[test]
    fn a_torn_power_loss_keeps_whole_pages_of_a_positional_file() {
        let base = PAGE + 10;
        // Page `p` of the file holds `p + 10` after `base`.
        let tail: Vec<u8> = (base..5 * PAGE).map(|i| (i / PAGE) as u8 + 10).collect();
        let mut kept_after_a_lost_page = false;
        for seed in 1..200u64 {
            let mut inode = synced(true);
            inode.write_at(base, &tail);
            inode.lose_power(Some(&mut { seed }));
            assert_eq!(inode.data[..base], [1; PAGE + 10], "seed {seed}");
            let pages: Vec<bool> = (base / PAGE..inode.data.len().div_ceil(PAGE))
                .map(|page| {
                    let from = (page * PAGE).max(base);
                    let bytes = &inode.data[from..((page + 1) * PAGE).min(inode.data.len())];
                    let whole = bytes.iter().all(|&b| b == page as u8 + 10);
                    assert!(
                        whole || bytes.iter().all(|&b| b == 0),
                        "seed {seed}: page {page}"
                    );
                    whole
                })
                .collect();
            assert!(
                pages.last().is_none_or(|&kept| kept),
                "seed {seed}: ends on a kept page"
            );
            kept_after_a_lost_page |= pages.iter().skip_while(|&&kept| kept).any(|&kept| kept);
        }
        assert!(
            kept_after_a_lost_page,
            "some loss keeps a page after a lost one"
        );
    }

    #[test]
    fn a_torn_power_loss_keeps_a_prefix_of_an_appended_file() {
        let mut lengths = std::collections::BTreeSet::new();
        for seed in 1..50u64 {
            let mut inode = synced(false);
            inode.append(&[2; 3 * PAGE]);
            inode.lose_power(Some(&mut { seed }));
            assert_eq!(inode.data[..PAGE + 10], [1; PAGE + 10]);
            assert!(inode.data[PAGE + 10..].iter().all(|&b| b == 2));
            lengths.insert(inode.data.len());
        }
        assert!(lengths.len() > 10, "random lengths: {lengths:?}");
    }
}
