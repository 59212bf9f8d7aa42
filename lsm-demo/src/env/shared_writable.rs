//! The [`WritableFile`] handle of a file that many writers write at once:
//! what [`FileSystem::create_mapped`](super::FileSystem::create_mapped),
//! [`FileSystem::create_positional`](super::FileSystem::create_positional)
//! and [`FileSystem::create_striped`](super::FileSystem::create_striped)
//! return on Linux, over a [`SharedFile`] of the `shared-log-file` crate, which
//! [`WritableFile::shared_writes`] hands out to the writers.

use std::io;
use std::path::Path;
use std::sync::Arc;

use shared_log_file::{PositionedFile, stripe_path};

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

    /// The handle of a striped file at `path` with `stripes` stripes, each
    /// file made empty by `create`: the stripes first, so a crash before
    /// the file is made leaves no stripe bytes newer than it. Its sync
    /// handle syncs through [`SharedFile::sync_data`] (the primary if it
    /// changed, then every stripe written since the last sync).
    pub(super) fn striped<F: PositionedFile + 'static>(
        path: &Path,
        stripes: usize,
        create: impl Fn(&Path) -> io::Result<F>,
    ) -> io::Result<SharedWritableFile> {
        let files = (1..=stripes)
            .map(|i| Ok(Box::new(create(&stripe_path(path, i))?) as Box<dyn PositionedFile>))
            .collect::<io::Result<_>>()?;
        let shared = Arc::new(SharedFile::striped(create(path)?, files, path)?);
        Ok(SharedWritableFile {
            sync: Arc::new(SyncShared(shared.clone())),
            shared,
        })
    }
}

/// Syncs a [`SharedFile`] beside its writers.
#[derive(Debug)]
struct SyncShared(Arc<SharedFile>);

impl FileSync for SyncShared {
    fn sync(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    /// The log file's bytes there: a lone writer's records (see
    /// [`SharedFile::striped`]); each stripe writes back behind itself.
    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        self.0.start_writeback(offset, len)
    }
}

impl WritableFile for SharedWritableFile {
    /// Writes at the end of the furthest write: while no other thread
    /// writes through [`shared_writes`](WritableFile::shared_writes).
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        // SAFETY: the engine appends to a log that writers share only while
        // none of them holds bytes of it: its header before they are let
        // in, its trailer once every copy has ended (`LogFile::end_copies`,
        // with the sequencer closed or the database closing). Appends take
        // `&mut self`, so they do not overlap each other.
        unsafe { self.shared.append_unchecked(data) }
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
        // SAFETY: as in `append`: the engine syncs through this handle only
        // once every copy has ended (a switch, the close); sync groups use
        // the sync handle, which cuts nothing.
        unsafe { self.shared.sync_unchecked() }
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
