//! Which compaction runs next: each level's target size, its score, and the
//! input files, chosen from file metadata alone (so it is tested without a
//! disk).
//!
//! Scores: level 0's is its file count over
//! `level0_file_num_compaction_trigger`; a level below, its bytes (those not
//! already being compacted) over its target. The level with the highest
//! score of at least 1 compacts first. Level 0 compacts all its files into
//! the base level with every base file they overlap; a level below compacts
//! one file into the next level, the file whose overlap there is smallest
//! for its size (RocksDB's default `kMinOverlappingRatio`), with the files it
//! overlaps. A compaction with nothing to merge on the output level moves
//! its files down by editing the manifest alone.
//!
//! Compactions run side by side when they share no file and their output
//! ranges on a level are disjoint, so two never write overlapping files to
//! one level.

use std::collections::HashSet;

use crate::key::user_key;
use crate::manifest::{FileMeta, NUM_LEVELS};
use crate::options::{Options, UserComparator};

/// The last level: it is never compacted further.
pub(crate) const LAST_LEVEL: usize = NUM_LEVELS - 1;

/// Each level's target size, and where level 0 compacts to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LevelShape {
    /// The level level 0 compacts into.
    pub(crate) base_level: usize,
    /// Target bytes of each level from the base level down; 0 above it.
    pub(crate) target_bytes: [u64; NUM_LEVELS],
}

/// The shape of a tree whose levels hold `level_bytes`.
///
/// Static (`level_compaction_dynamic_level_bytes` off): level 1 is the base,
/// its target `max_bytes_for_level_base`, each level below `multiplier`
/// times larger. Dynamic: the last level's target is the largest level's
/// size, each level above `multiplier` times smaller, and the base is the
/// first level whose target is at most `max_bytes_for_level_base`; no
/// target is below that size. A small database compacts level 0 straight
/// into the last level, and levels open upward as it grows.
pub(crate) fn level_shape(level_bytes: &[u64; NUM_LEVELS], opts: &Options) -> LevelShape {
    let multiplier = opts.max_bytes_for_level_multiplier;
    let base_bytes = opts.level_base_bytes();
    let mut target_bytes = [0u64; NUM_LEVELS];
    if !opts.level_compaction_dynamic_level_bytes {
        let mut target = base_bytes as f64;
        for t in &mut target_bytes[1..] {
            *t = target.min(u64::MAX as f64) as u64;
            target *= multiplier;
        }
        return LevelShape {
            base_level: 1,
            target_bytes,
        };
    }
    let first_nonempty = (1..NUM_LEVELS)
        .find(|&l| level_bytes[l] > 0)
        .unwrap_or(LAST_LEVEL);
    let largest = level_bytes[1..].iter().copied().max().unwrap_or(0);
    // What the first non-empty level's target would be if the last level's
    // were the largest level's size.
    let mut size = largest as f64 / multiplier.powi((LAST_LEVEL - first_nonempty) as i32);
    let mut base_level = first_nonempty;
    // Levels above the first non-empty one open while its target would
    // still exceed the base size.
    while base_level > 1 && size > base_bytes as f64 {
        base_level -= 1;
        size /= multiplier;
    }
    // No level targets less than the base size, as in RocksDB: a young
    // database does not compact on every flush, and the levels just below
    // the base fan out less than the multiplier.
    let mut target = size;
    for t in &mut target_bytes[base_level..] {
        *t = target.max(base_bytes as f64).min(u64::MAX as f64) as u64;
        target *= multiplier;
    }
    LevelShape {
        base_level,
        target_bytes,
    }
}

/// A compaction under way, as later picks must avoid it.
#[derive(Debug, Clone)]
pub(crate) struct Running {
    pub(crate) output_level: usize,
    /// The user-key range it writes on `output_level`.
    pub(crate) smallest: Vec<u8>,
    pub(crate) largest: Vec<u8>,
    /// Every file it reads.
    pub(crate) files: Vec<u64>,
}

/// A compaction to run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pick {
    /// The level it takes files from.
    pub(crate) level: usize,
    pub(crate) output_level: usize,
    /// Files of `level`.
    pub(crate) inputs: Vec<u64>,
    /// Files of `output_level` that overlap the inputs.
    pub(crate) overlaps: Vec<u64>,
    /// Nothing to merge: the inputs move to `output_level` unchanged.
    pub(crate) trivial_move: bool,
    /// The level's score when it was picked.
    pub(crate) score: f64,
    /// The user-key range of the inputs and overlaps.
    pub(crate) smallest: Vec<u8>,
    pub(crate) largest: Vec<u8>,
}

impl Pick {
    /// What later picks must avoid while this one runs.
    pub(crate) fn running(&self) -> Running {
        Running {
            output_level: self.output_level,
            smallest: self.smallest.clone(),
            largest: self.largest.clone(),
            files: self.inputs.iter().chain(&self.overlaps).copied().collect(),
        }
    }
}

/// The tree as the picker sees it: level 0 newest first, every other level
/// sorted by smallest key.
pub(crate) type Levels<'a> = [Vec<&'a FileMeta>; NUM_LEVELS];

/// Every file the compactions `running` read.
pub(crate) fn busy_files(running: &[Running]) -> HashSet<u64> {
    running
        .iter()
        .flat_map(|r| r.files.iter().copied())
        .collect()
}

/// Each level's score, highest first, for the levels that may compact.
pub(crate) fn scores(
    levels: &Levels<'_>,
    shape: &LevelShape,
    opts: &Options,
    busy: &HashSet<u64>,
) -> Vec<(usize, f64)> {
    let mut scores = Vec::new();
    let l0_files = levels[0]
        .iter()
        .filter(|f| !busy.contains(&f.number))
        .count();
    scores.push((0, l0_files as f64 / opts.level0_compaction_trigger as f64));
    for (level, files) in levels
        .iter()
        .enumerate()
        .take(LAST_LEVEL)
        .skip(shape.base_level)
    {
        let bytes: u64 = files
            .iter()
            .filter(|f| !busy.contains(&f.number))
            .map(|f| f.file_size)
            .sum();
        scores.push((level, bytes as f64 / shape.target_bytes[level] as f64));
    }
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    scores
}

/// The compaction to run next, if any level needs one that does not
/// collide with those `running`.
pub(crate) fn pick(
    levels: &Levels<'_>,
    shape: &LevelShape,
    opts: &Options,
    running: &[Running],
) -> Option<Pick> {
    let busy = busy_files(running);
    for (level, score) in scores(levels, shape, opts, &busy) {
        if score < 1.0 {
            break;
        }
        let pick = if level == 0 {
            pick_level0(levels, shape.base_level, &busy, running, &opts.comparator)
        } else {
            pick_file(levels, level, &busy, running, &opts.comparator)
        };
        if let Some(mut p) = pick {
            p.score = score;
            return Some(p);
        }
    }
    None
}

/// Level 0 into the base level: every level-0 file (one such compaction at
/// a time), with the base files they overlap.
fn pick_level0(
    levels: &Levels<'_>,
    base_level: usize,
    busy: &HashSet<u64>,
    running: &[Running],
    ucmp: &UserComparator,
) -> Option<Pick> {
    let inputs = &levels[0];
    if inputs.is_empty() || inputs.iter().any(|f| busy.contains(&f.number)) {
        return None;
    }
    let (lo, hi) = key_range(inputs.iter().copied(), ucmp);
    let overlaps = overlapping(&levels[base_level], lo, hi, ucmp);
    finish_pick(0, base_level, inputs, overlaps, busy, running, ucmp)
}

/// Whether no two of `files` share a user key.
fn disjoint(files: &[&FileMeta], ucmp: &UserComparator) -> bool {
    let mut sorted = files.to_vec();
    sorted.sort_by(|a, b| ucmp.compare(user_key(&a.smallest), user_key(&b.smallest)));
    sorted
        .windows(2)
        .all(|w| ucmp.lt(user_key(&w[0].largest), user_key(&w[1].smallest)))
}

/// One file of `level` into the next, the one with the least overlap there
/// for its size.
fn pick_file(
    levels: &Levels<'_>,
    level: usize,
    busy: &HashSet<u64>,
    running: &[Running],
    ucmp: &UserComparator,
) -> Option<Pick> {
    let next = &levels[level + 1];
    let mut best: Option<(u128, Pick)> = None;
    for f in &levels[level] {
        if busy.contains(&f.number) {
            continue;
        }
        let overlaps = overlapping(next, user_key(&f.smallest), user_key(&f.largest), ucmp);
        let overlap_bytes: u64 = overlaps.iter().map(|o| o.file_size).sum();
        // Overlap per byte of the file, scaled to stay an integer.
        let ratio = u128::from(overlap_bytes) * 1024 / u128::from(f.file_size.max(1));
        if best.as_ref().is_some_and(|(r, _)| *r <= ratio) {
            continue;
        }
        if let Some(p) = finish_pick(level, level + 1, &[*f], overlaps, busy, running, ucmp) {
            best = Some((ratio, p));
        }
    }
    best.map(|(_, p)| p)
}

/// A step of a manual compaction (`DB::compact_range`): the files of
/// `level` that hold a user key in `[start, end]` (an open end unbounded),
/// into `output_level` with the files they overlap there. On level 0 every
/// file goes once one is in the range: its files overlap one another, and
/// an older one left behind would hide the newer versions moved down.
/// With `output_level == level` the files are rewritten in place (nothing
/// else on the level overlaps them). `None` when nothing on `level` is in
/// the range or a file is busy.
pub(crate) fn pick_range(
    levels: &Levels<'_>,
    level: usize,
    output_level: usize,
    start: Option<&[u8]>,
    end: Option<&[u8]>,
    running: &[Running],
    ucmp: &UserComparator,
) -> Option<Pick> {
    let in_range = |f: &FileMeta| {
        start.is_none_or(|s| ucmp.le(s, user_key(&f.largest)))
            && end.is_none_or(|e| ucmp.le(user_key(&f.smallest), e))
    };
    let inputs: Vec<&FileMeta> = if level == 0 {
        if !levels[0].iter().any(|f| in_range(f)) {
            return None;
        }
        levels[0].clone()
    } else {
        levels[level]
            .iter()
            .copied()
            .filter(|f| in_range(f))
            .collect()
    };
    if inputs.is_empty() {
        return None;
    }
    let busy = busy_files(running);
    if inputs.iter().any(|f| busy.contains(&f.number)) {
        return None;
    }
    if output_level == level {
        let mut pick = finish_pick(level, level, &inputs, Vec::new(), &busy, running, ucmp)?;
        // A rewrite, never a move onto itself.
        pick.trivial_move = false;
        return Some(pick);
    }
    let (lo, hi) = key_range(inputs.iter().copied(), ucmp);
    let overlaps = overlapping(&levels[output_level], lo, hi, ucmp);
    finish_pick(level, output_level, &inputs, overlaps, &busy, running, ucmp)
}

/// The pick of `inputs` with `overlaps`, unless a file is busy or a
/// running compaction writes into the same range of `output_level`.
fn finish_pick(
    level: usize,
    output_level: usize,
    inputs: &[&FileMeta],
    overlaps: Vec<&FileMeta>,
    busy: &HashSet<u64>,
    running: &[Running],
    ucmp: &UserComparator,
) -> Option<Pick> {
    if overlaps.iter().any(|f| busy.contains(&f.number)) {
        return None;
    }
    let (lo, hi) = key_range(inputs.iter().chain(&overlaps).copied(), ucmp);
    let collides = running.iter().any(|r| {
        r.output_level == output_level && ucmp.le(&r.smallest, hi) && ucmp.le(lo, &r.largest)
    });
    if collides {
        return None;
    }
    Some(Pick {
        level,
        output_level,
        inputs: inputs.iter().map(|f| f.number).collect(),
        trivial_move: overlaps.is_empty() && disjoint(inputs, ucmp),
        overlaps: overlaps.iter().map(|f| f.number).collect(),
        score: 0.0,
        smallest: lo.to_vec(),
        largest: hi.to_vec(),
    })
}

/// The smallest and largest user keys of `files` (not empty).
fn key_range<'a>(
    files: impl Iterator<Item = &'a FileMeta> + Clone,
    ucmp: &UserComparator,
) -> (&'a [u8], &'a [u8]) {
    let lo = files
        .clone()
        .map(|f| user_key(&f.smallest))
        .min_by(|a, b| ucmp.compare(a, b))
        .expect("files");
    let hi = files
        .map(|f| user_key(&f.largest))
        .max_by(|a, b| ucmp.compare(a, b))
        .expect("files");
    (lo, hi)
}

/// The files of a sorted level that hold a user key in `[lo, hi]`.
fn overlapping<'a>(
    level: &[&'a FileMeta],
    lo: &[u8],
    hi: &[u8],
    ucmp: &UserComparator,
) -> Vec<&'a FileMeta> {
    let start = level.partition_point(|f| ucmp.lt(user_key(&f.largest), lo));
    level[start..]
        .iter()
        .take_while(|f| ucmp.le(user_key(&f.smallest), hi))
        .copied()
        .collect()
}

/// An estimate of the bytes compaction must still read and write to bring
/// every level within its target: level 0's files and the base level when
/// level 0 is due, then each level's excess (with what the level above
/// pushes into it) times one plus the fan-out below it. Writes slow down
/// and stop on it (`soft_pending_compaction_bytes_limit`, `hard_...`).
pub(crate) fn pending_compaction_bytes(
    level_bytes: &[u64; NUM_LEVELS],
    level0_files: usize,
    shape: &LevelShape,
    opts: &Options,
) -> u64 {
    let mut pending: u64 = 0;
    let mut incoming: u64 = 0;
    if level0_files >= opts.level0_compaction_trigger {
        incoming = level_bytes[0];
        pending = level_bytes[0].saturating_add(level_bytes[shape.base_level]);
    }
    for level in shape.base_level..LAST_LEVEL {
        let size = level_bytes[level].saturating_add(incoming);
        incoming = size.saturating_sub(shape.target_bytes[level]);
        if incoming > 0 {
            let fan_out = level_bytes[level + 1] as f64 / size.max(1) as f64;
            pending = pending.saturating_add((incoming as f64 * (1.0 + fan_out)) as u64);
        }
    }
    pending
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{ValueType, internal_key};

    fn file(number: u64, lo: &str, hi: &str, size: u64) -> FileMeta {
        FileMeta {
            number,
            level: 0,
            file_size: size,
            entries: 1,
            smallest: internal_key(lo.as_bytes(), 1, ValueType::Value),
            largest: internal_key(hi.as_bytes(), 1, ValueType::Value),
        }
    }

    fn opts() -> Options {
        let mut o = Options::default();
        o.set_max_bytes_for_level_base(1000)
            .set_max_bytes_for_level_multiplier(10.0);
        o
    }

    fn bytes(pairs: &[(usize, u64)]) -> [u64; NUM_LEVELS] {
        let mut b = [0; NUM_LEVELS];
        for &(l, n) in pairs {
            b[l] = n;
        }
        b
    }

    #[test]
    fn an_empty_tree_compacts_level_0_into_the_last_level() {
        let shape = level_shape(&[0; NUM_LEVELS], &opts());
        assert_eq!(shape.base_level, LAST_LEVEL);
        assert_eq!(shape.target_bytes[LAST_LEVEL], 1000);
    }

    #[test]
    fn levels_open_upward_as_the_last_level_grows() {
        // 50 000 on the last level: level 5 would target 5 000, level 4
        // 500, at or below the base size, so level 4 is the base (and
        // targets the base size).
        let shape = level_shape(&bytes(&[(6, 50_000)]), &opts());
        assert_eq!(shape.base_level, 4);
        assert_eq!(shape.target_bytes[4], 1_000);
        assert_eq!(shape.target_bytes[5], 5_000);
        assert_eq!(shape.target_bytes[6], 50_000);
        assert_eq!(shape.target_bytes[3], 0);
        // Just above the base size on the last level: one level opens.
        let shape = level_shape(&bytes(&[(6, 1_500)]), &opts());
        assert_eq!((shape.base_level, shape.target_bytes[5]), (5, 1_000));
        // The largest level sets the shape even before the last level fills.
        let shape = level_shape(&bytes(&[(5, 20_000), (6, 100)]), &opts());
        assert_eq!(shape.base_level, 4);
    }

    #[test]
    fn static_levels_start_at_level_1() {
        let mut o = opts();
        o.set_level_compaction_dynamic_level_bytes(false);
        let shape = level_shape(&bytes(&[(6, 50_000)]), &o);
        assert_eq!(shape.base_level, 1);
        assert_eq!(&shape.target_bytes[1..4], &[1_000, 10_000, 100_000]);
    }

    fn levels<'a>(files: &'a [(usize, FileMeta)]) -> Levels<'a> {
        let mut l: Levels<'a> = Default::default();
        for (level, f) in files {
            l[*level].push(f);
        }
        for level in &mut l[1..] {
            level.sort_by(|a, b| a.smallest.cmp(&b.smallest));
        }
        l
    }

    #[test]
    fn level_0_compacts_at_its_trigger_with_the_base_files_it_overlaps() {
        let o = opts(); // trigger 4
        let mut files: Vec<(usize, FileMeta)> =
            (1..=3).map(|n| (0, file(10 + n, "c", "m", 100))).collect();
        files.push((6, file(1, "a", "b", 100)));
        files.push((6, file(2, "d", "f", 100)));
        files.push((6, file(3, "x", "z", 100)));
        let shape = level_shape(&bytes(&[(6, 300)]), &o);
        assert_eq!(pick(&levels(&files), &shape, &o, &[]), None);
        files.push((0, file(14, "e", "n", 100)));
        let p = pick(&levels(&files), &shape, &o, &[]).expect("level 0 is due");
        assert_eq!((p.level, p.output_level, p.score), (0, 6, 1.0));
        assert_eq!(p.inputs, [11, 12, 13, 14]);
        assert_eq!(p.overlaps, [2]);
        assert!(!p.trivial_move);
        assert_eq!((&p.smallest[..], &p.largest[..]), (&b"c"[..], &b"n"[..]));
        // While it runs, no second level-0 compaction starts.
        assert_eq!(pick(&levels(&files), &shape, &o, &[p.running()]), None);
    }

    #[test]
    fn disjoint_level_0_files_over_a_gap_move_down_unchanged() {
        let o = opts();
        let files: Vec<(usize, FileMeta)> = vec![
            (0, file(5, "a", "b", 10)),
            (0, file(6, "c", "d", 10)),
            (0, file(7, "e", "f", 10)),
            (0, file(8, "g", "h", 10)),
            (6, file(1, "x", "z", 10)),
        ];
        let shape = level_shape(&bytes(&[(6, 10)]), &o);
        let p = pick(&levels(&files), &shape, &o, &[]).expect("due");
        assert!(p.trivial_move);
        assert!(p.overlaps.is_empty());
    }

    #[test]
    fn a_level_over_its_target_compacts_the_file_with_the_least_overlap() {
        let o = opts();
        // Base level 5 (target 1 000 at most), holding 1 500 bytes.
        let files: Vec<(usize, FileMeta)> = vec![
            (5, file(1, "a", "c", 500)),
            (5, file(2, "d", "f", 500)),
            (5, file(3, "g", "i", 500)),
            (6, file(10, "a", "b", 4_000)),
            (6, file(11, "d", "e", 400)),
            (6, file(12, "g", "h", 4_000)),
        ];
        let lv = levels(&files);
        let shape = level_shape(&bytes(&[(5, 1_500), (6, 8_400)]), &o);
        assert_eq!(shape.base_level, 5);
        let p = pick(&lv, &shape, &o, &[]).expect("level 5 is over its target");
        assert_eq!((p.level, p.output_level), (5, 6));
        assert_eq!(
            (p.inputs.as_slice(), p.overlaps.as_slice()),
            (&[2][..], &[11][..])
        );
        // With file 11 busy, the next best that collides with nothing.
        let other = Running {
            output_level: 6,
            smallest: b"d".to_vec(),
            largest: b"f".to_vec(),
            files: vec![2, 11],
        };
        let p = pick(&lv, &shape, &o, std::slice::from_ref(&other)).expect("another file");
        assert!(p.inputs == [1] || p.inputs == [3], "{p:?}");
        // A running compaction whose output range spans everything blocks
        // every pick into that level.
        let wide = Running {
            smallest: b"a".to_vec(),
            largest: b"z".to_vec(),
            ..other
        };
        assert_eq!(pick(&lv, &shape, &o, &[wide]), None);
    }

    #[test]
    fn a_file_with_nothing_below_moves_down_unchanged() {
        let o = opts();
        let files: Vec<(usize, FileMeta)> = vec![
            (5, file(1, "a", "c", 2_000)),
            (6, file(10, "x", "z", 4_000)),
        ];
        let shape = level_shape(&bytes(&[(5, 2_000), (6, 4_000)]), &o);
        let p = pick(&levels(&files), &shape, &o, &[]).expect("due");
        assert!(p.trivial_move && p.inputs == [1] && p.output_level == 6);
    }

    #[test]
    fn pending_bytes_grow_with_the_excess_and_the_fan_out() {
        let o = opts();
        let shape = level_shape(&bytes(&[(5, 1_000), (6, 10_000)]), &o);
        assert_eq!(
            pending_compaction_bytes(&bytes(&[(5, 1_000), (6, 10_000)]), 0, &shape, &o),
            0
        );
        let pending =
            pending_compaction_bytes(&bytes(&[(0, 400), (5, 1_000), (6, 10_000)]), 4, &shape, &o);
        // Level 0 and the base (1 400), then the base's 400 excess times
        // one plus its fan-out (10 000 / 1 400).
        assert_eq!(pending, 1_400 + (400.0 * (1.0 + 10_000.0 / 1_400.0)) as u64);
    }

    #[test]
    fn a_range_takes_all_of_level_0_and_only_its_files_below() {
        let files = [
            (0, file(1, "a", "c", 100)),
            (0, file(2, "x", "z", 100)),
            (5, file(3, "a", "b", 100)),
            (5, file(4, "d", "f", 100)),
            (5, file(5, "m", "p", 100)),
            (6, file(6, "a", "e", 100)),
            (6, file(7, "n", "o", 100)),
        ];
        let l = levels(&files);
        // Level 0: one file in the range takes both (they may overlap).
        let p = pick_range(
            &l,
            0,
            5,
            Some(b"b"),
            Some(b"b"),
            &[],
            &UserComparator::default(),
        )
        .unwrap();
        assert_eq!((p.inputs.len(), p.overlaps.clone()), (2, vec![3, 4, 5]));
        assert!(
            pick_range(
                &l,
                0,
                5,
                Some(b"d"),
                Some(b"e"),
                &[],
                &UserComparator::default()
            )
            .is_none()
        );
        // Level 5: the files in [c, e], with what they overlap below.
        let p = pick_range(
            &l,
            5,
            6,
            Some(b"c"),
            Some(b"e"),
            &[],
            &UserComparator::default(),
        )
        .unwrap();
        assert_eq!((p.inputs.clone(), p.overlaps.clone()), (vec![4], vec![6]));
        assert!(!p.trivial_move);
        // Open ends.
        let p = pick_range(&l, 5, 6, Some(b"g"), None, &[], &UserComparator::default()).unwrap();
        assert_eq!((p.inputs.clone(), p.overlaps.clone()), (vec![5], vec![7]));
        let p = pick_range(&l, 5, 6, None, Some(b"b"), &[], &UserComparator::default()).unwrap();
        assert_eq!(p.inputs, [3]);
        // The last level into itself: a rewrite, never a move.
        let p = pick_range(&l, 6, 6, None, None, &[], &UserComparator::default()).unwrap();
        assert_eq!((p.inputs.clone(), p.overlaps.clone()), (vec![6, 7], vec![]));
        assert!(!p.trivial_move);
        // A busy file waits.
        assert!(
            pick_range(
                &l,
                5,
                6,
                Some(b"c"),
                Some(b"e"),
                &[p.running()],
                &UserComparator::default()
            )
            .is_none()
        );
    }
}
