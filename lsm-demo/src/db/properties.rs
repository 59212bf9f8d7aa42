//! Named properties, as RocksDB's `DB::GetProperty`: the figures the engine
//! keeps, under RocksDB's names, as text or as integers.

use std::fmt::Write as _;

use super::{DBWithThreadMode, Shared, ThreadMode};
use crate::error::Result;
use crate::manifest::NUM_LEVELS;

use crate::properties as p;

/// A property's value.
enum Value {
    Int(u64),
    Text(String),
}

impl Shared {
    fn property(&self, name: &str) -> Option<Value> {
        if let Some(level) = name.strip_prefix(p::NUM_FILES_AT_LEVEL_PREFIX) {
            let level: usize = level.parse().ok().filter(|l| *l < NUM_LEVELS)?;
            let st = self.state.lock();
            return Some(Value::Int(st.version.levels[level].len() as u64));
        }
        if name == p::NUM_SNAPSHOTS {
            let snaps = self.snapshots.lock();
            return Some(Value::Int(snaps.values().sum::<usize>() as u64));
        }
        if name == p::BACKGROUND_ERRORS {
            let failed = self.bg_error.lock().is_some();
            return Some(Value::Int(u64::from(failed)));
        }
        let st = self.state.lock();
        let v = &st.version;
        let active_bytes = v.mem.memory_usage() as u64;
        let imm_bytes: u64 = v.imm.iter().map(|m| m.memory_usage() as u64).sum();
        let imm_entries: u64 = v.imm.iter().map(|m| m.rep.len() as u64).sum();
        let tables = || v.levels.iter().flatten();
        let table_bytes: u64 = tables().map(|t| t.meta.file_size).sum();
        let int = |n: u64| Some(Value::Int(n));
        match name {
            p::ESTIMATE_NUM_KEYS => {
                let table_entries: u64 = tables().map(|t| t.meta.entries).sum();
                int(v.mem.rep.len() as u64 + imm_entries + table_entries)
            }
            p::CUR_SIZE_ACTIVE_MEM_TABLE => int(active_bytes),
            p::CUR_SIZE_ALL_MEM_TABLES | p::SIZE_ALL_MEM_TABLES => int(active_bytes + imm_bytes),
            p::NUM_IMMUTABLE_MEM_TABLE => int(v.imm.len() as u64),
            p::NUM_ENTRIES_ACTIVE_MEM_TABLE => int(v.mem.rep.len() as u64),
            p::NUM_ENTRIES_IMM_MEM_TABLES => int(imm_entries),
            p::MEM_TABLE_FLUSH_PENDING => int(u64::from(!v.imm.is_empty())),
            p::COMPACTION_PENDING => {
                let due = self.level_stats(&st).iter().any(|l| l.score >= 1.0);
                int(u64::from(due))
            }
            p::NUM_RUNNING_COMPACTIONS => int(st.bg.compactions.len() as u64),
            p::NUM_RUNNING_FLUSHES => int((st.bg.running_jobs - st.bg.compactions.len()) as u64),
            p::ESTIMATE_PENDING_COMPACTION_BYTES => int(st.bg.pending_compaction_bytes),
            p::TOTAL_SST_FILES_SIZE | p::LIVE_SST_FILES_SIZE | p::ESTIMATE_LIVE_DATA_SIZE => {
                int(table_bytes)
            }
            p::BASE_LEVEL => int(st.bg.shape.base_level as u64),
            p::LEVELSTATS => {
                let mut out = String::from("Level Files Size(MB)\n--------------------\n");
                for (level, files) in v.levels.iter().enumerate() {
                    let bytes: u64 = files.iter().map(|t| t.meta.file_size).sum();
                    let mb = bytes as f64 / (1 << 20) as f64;
                    let _ = writeln!(out, "{level:>5} {:>5} {mb:>8.0}", files.len());
                }
                Some(Value::Text(out))
            }
            p::STATS => Some(Value::Text(self.stats_text(&st))),
            _ => None,
        }
    }

    /// The text of `rocksdb.stats`: a row per level, then the stalls.
    fn stats_text(&self, st: &super::State) -> String {
        const MB: f64 = (1 << 20) as f64;
        let mut out = String::from(
            "** Compaction Stats **\n\
             Level Files   Size(MB) Score Target(MB) Comps Rn(MB) Rnp1(MB) Write(MB) Moved(MB) Comp(sec)\n",
        );
        let levels = self.level_stats(st);
        for (l, s) in levels.iter().enumerate() {
            let _ = writeln!(
                out,
                "  L{l} {:>5} {:>10.1} {:>5.2} {:>10.1} {:>5} {:>6.1} {:>8.1} {:>9.1} {:>9.1} {:>9.2}",
                s.files,
                s.bytes as f64 / MB,
                s.score,
                s.target_bytes as f64 / MB,
                s.compactions,
                s.read_input_bytes as f64 / MB,
                s.read_output_level_bytes as f64 / MB,
                s.written_bytes as f64 / MB,
                s.moved_bytes as f64 / MB,
                s.micros as f64 / 1e6,
            );
        }
        let stalls = st.bg.stalls;
        let _ = writeln!(
            out,
            "Write stalls: {} slowdowns ({:.3} s), {} stops ({:.3} s)",
            stalls.slowdowns,
            stalls.slowdown_micros as f64 / 1e6,
            stalls.stops,
            stalls.stop_micros as f64 / 1e6,
        );
        out
    }
}

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// The value of the property `name` as text (integer properties in
    /// decimal), or `None` for a name the engine does not know; the names
    /// are RocksDB's, listed in [`properties`](crate::properties).
    ///
    /// # Errors
    ///
    /// None today: the `Result` is the `rocksdb` crate's signature.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, properties};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.flush().unwrap();
    /// let files = db.property_value(properties::num_files_at_level(0)).unwrap();
    /// assert_eq!(files.as_deref(), Some("1"));
    /// let stats = db.property_value(properties::STATS).unwrap().unwrap();
    /// assert!(stats.contains("L0"));
    /// assert_eq!(db.property_value("rocksdb.no-such-property").unwrap(), None);
    /// ```
    pub fn property_value(&self, name: impl AsRef<str>) -> Result<Option<String>> {
        Ok(match self.shared.property(name.as_ref()) {
            Some(Value::Int(n)) => Some(n.to_string()),
            Some(Value::Text(s)) => Some(s),
            None => None,
        })
    }

    /// The value of the integer property `name`, or `None` for a name the
    /// engine does not know or a text-only one (`rocksdb.stats`).
    ///
    /// # Errors
    ///
    /// None today: the `Result` is the `rocksdb` crate's signature.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, properties};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let entries = db.property_int_value(properties::NUM_ENTRIES_ACTIVE_MEM_TABLE);
    /// assert_eq!(entries.unwrap(), Some(2));
    /// assert_eq!(db.property_int_value(properties::STATS).unwrap(), None);
    /// ```
    pub fn property_int_value(&self, name: impl AsRef<str>) -> Result<Option<u64>> {
        Ok(match self.shared.property(name.as_ref()) {
            Some(Value::Int(n)) => Some(n),
            _ => None,
        })
    }
}
