//! The [`WritableFile`] handle of a file that many writers write at once:
//! what [`FileSystem::create_mapped`](super::FileSystem::create_mapped) and
//! [`FileSystem::create_positional`](super::FileSystem::create_positional)
//! return on Linux, over a [`SharedFile`] of the `shared-log-file` crate, which
//! [`WritableFile::shared_writes`] hands out to the writers.

use std::io;
use std::sync::Arc;

use super::{FileSync, SharedFile, WritableFile};

/// Appends at the end of a [`SharedFile`], and syncs it, for the log's own
/// writer: its header, a drain pass's records, its trailer.
#[derive(Debug)]
pub(super) struct SharedWritableFile {
    shared: Arc<SharedFile>,
    /// Made with the file: a sync from another thread (a sync group's
    /// leader) that cuts nothing.
    sync: Arc<dyn FileSync>,
}

impl SharedWritableFile {
    /// The handle of `shared`, which `sync` makes durable.
    pub(super) fn new(shared: SharedFile, sync: Arc<dyn FileSync>) -> SharedWritableFile {
        SharedWritableFile {
            shared: Arc::new(shared),
            sync,
        }
    }
}

impl WritableFile for SharedWritableFile {
    /// Writes at the end of the furthest write: while no other thread
    /// writes through [`shared_writes`](WritableFile::shared_writes).
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        // SAFETY: appends take `&mut self`, and the engine holds shared
        // writers off while it appends (the sequencer closed, or the log
        // written by drain passes, which take no shared writes).
        unsafe { self.shared.append(data) }
    }

    fn flush(&mut self) -> io::Result<()> {
        // The writes are in the page cache already.
        Ok(())
    }

    /// Cuts the file back to the bytes written, then syncs: the length
    /// that survives is exact, so a log ended this way (the engine syncs
    /// the old log as it moves to a new one, and the last as it closes)
    /// has no zeros after its last record. No shared writer may be at work
    /// (see [`SharedFile::sync`]).
    fn sync(&mut self) -> io::Result<()> {
        // SAFETY: as in `append`.
        unsafe { self.shared.sync() }
    }

    fn size(&self) -> u64 {
        self.shared.size()
    }

    fn sync_handle(&self) -> io::Result<Arc<dyn FileSync>> {
        Ok(self.sync.clone())
    }

    fn shared_writes(&self) -> Option<Arc<SharedFile>> {
        Some(self.shared.clone())
    }
}

#[cfg(test)]
mod tests;
