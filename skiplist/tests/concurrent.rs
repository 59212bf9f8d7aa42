//! Readers racing writers, after the idea of RocksDB's `ConcurrentTest`
//! (our own code).
//!
//! A key carries `(k, generation, hash)`: `k` picks one of `K` slots, writers
//! insert the slot's next generation and then publish it in `generations[k]`,
//! and the hash byte lets a reader check that every key it sees is intact.
//! A reader first snapshots all generations, then positions a cursor and
//! walks it forward with `next` and random forward `seek`s. Everything
//! published before the snapshot was inserted before the cursor moved, so:
//!
//! - no key with `1 <= generation <= snapshot[k]` may be skipped,
//! - the position never moves backwards,
//! - every key seen decodes to a valid slot with a matching hash.
//!
//! Newer keys may or may not be seen. The drivers run one reader against
//! waves of four writers on distinct slots (with and without hints), and
//! against a single writer.

use inline_skiplist::{BytewiseComparator, SkipList, Splice};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Number of key slots.
const K: u64 = 8;

/// `(k, generation)` in one number: the key without its hash byte.
type Id = u64;

fn id(k: u64, generation: u64) -> Id {
    (k << 32) | generation
}
fn slot(id: Id) -> u64 {
    id >> 32
}
fn generation(id: Id) -> u64 {
    id & 0xffff_ffff
}

fn hash8(id: Id) -> u8 {
    let h = id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 56) as u8
}

/// The stored key: big-endian, so byte order is numeric order.
fn encode(id: Id) -> [u8; 8] {
    ((id << 8) | u64::from(hash8(id))).to_be_bytes()
}

/// Decodes a stored key and checks its hash byte and slot.
fn decode(key: &[u8]) -> Id {
    let raw = u64::from_be_bytes(key.try_into().expect("keys are 8 bytes"));
    let id = raw >> 8;
    assert_eq!(raw as u8, hash8(id), "corrupt key {raw:#x}");
    assert!(slot(id) < K, "key {raw:#x} outside the key space");
    id
}

struct State {
    generations: [AtomicU64; K as usize],
}

impl State {
    fn new() -> Self {
        Self {
            generations: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    fn snapshot(&self) -> [u64; K as usize] {
        // Acquire: pairs with the writer's Release after its insert, so every
        // generation we read is in the list before we position the cursor.
        std::array::from_fn(|k| self.generations[k].load(Ordering::Acquire))
    }

    /// One write of slot `k` by its only current writer.
    fn write(&self, list: &SkipList, k: u64, hint: Option<&mut Splice>) {
        let slot = &self.generations[k as usize];
        // Relaxed: this thread is the slot's only writer in this wave, and
        // the wave barrier ordered it after the previous writer.
        let g = slot.load(Ordering::Relaxed) + 1;
        let key = encode(id(k, g));
        let inserted = match hint {
            Some(hint) => list.insert_with_hint(&key, hint),
            None => list.insert(&key),
        };
        assert!(inserted, "generation {g} of slot {k} inserted twice");
        let previous = slot.swap(g, Ordering::Release);
        assert_eq!(previous, g - 1, "another writer bumped slot {k}");
    }
}

/// No id present at the snapshot lies in `[pos, current)`.
fn check_nothing_skipped(pos: Id, current: Id, snapshot: &[u64; K as usize]) {
    for k in slot(pos)..=slot(current).min(K - 1) {
        let low = if k == slot(pos) { generation(pos) } else { 0 }.max(1);
        let high = if k == slot(current) {
            generation(current)
        } else {
            u64::MAX
        };
        assert!(
            !(low <= snapshot[k as usize] && low < high),
            "skipped ({k}, {low}) present at snapshot {snapshot:?}: pos {pos:#x}, current {current:#x}"
        );
    }
}

fn random_target(rng: &mut SmallRng, snapshot: &[u64; K as usize]) -> Id {
    match rng.random_range(0..10) {
        0 => id(0, 0),
        1 => id(K, 0),
        2 | 3 => {
            let k = rng.random_range(0..K);
            id(k, rng.random_range(0..=snapshot[k as usize] + 1))
        }
        _ => id(rng.random_range(0..K), 0),
    }
}

/// One read: snapshot, position, then walk forward to the end.
fn read_step(list: &SkipList, state: &State, rng: &mut SmallRng) -> usize {
    let snapshot = state.snapshot();
    let mut pos = random_target(rng, &snapshot);
    let mut cursor = list.cursor();
    cursor.seek(&encode(pos));
    let mut steps = 0;
    loop {
        steps += 1;
        let current = if cursor.valid() {
            decode(cursor.key())
        } else {
            id(K, 0)
        };
        assert!(
            pos <= current,
            "cursor moved backwards: {pos:#x} > {current:#x}"
        );
        check_nothing_skipped(pos, current, &snapshot);
        if !cursor.valid() {
            return steps;
        }
        if rng.random_bool(0.5) {
            cursor.next();
            pos = current + 1;
        } else {
            let target = random_target(rng, &snapshot);
            if target > pos {
                pos = target;
                cursor.seek(&encode(target));
            }
        }
    }
}

/// Scale: rounds (fresh list each), waves per round, writes per writer per
/// wave.
fn scale() -> (usize, usize, usize) {
    if cfg!(debug_assertions) {
        (4, 80, 4)
    } else {
        (20, 250, 4)
    }
}

/// One reader against waves of four writers on distinct slots.
fn waves_of_four_writers(with_hints: bool) {
    const WRITERS: u64 = 4;
    let (rounds, waves, writes) = scale();
    for round in 0..rounds {
        let list = SkipList::new(BytewiseComparator);
        let state = State::new();
        let done = AtomicBool::new(false);
        // The writers start once the reader runs: on a loaded 2-core machine
        // the reader could otherwise be scheduled only after they finished.
        let reader_running = AtomicBool::new(false);
        let barrier = Barrier::new(WRITERS as usize);
        let reads = std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut rng = SmallRng::seed_from_u64(round as u64);
                let mut reads = 0;
                // Relaxed: only tells the writers when to start; it orders
                // no data.
                reader_running.store(true, Ordering::Relaxed);
                // Relaxed: only tells the reader when to stop; the final
                // check below runs after the join.
                while !done.load(Ordering::Relaxed) {
                    read_step(&list, &state, &mut rng);
                    reads += 1;
                }
                reads
            });
            let writers: Vec<_> = (0..WRITERS)
                .map(|t| {
                    let (list, state, barrier) = (&list, &state, &barrier);
                    let reader_running = &reader_running;
                    s.spawn(move || {
                        // Relaxed: a start signal only (see its declaration).
                        while !reader_running.load(Ordering::Relaxed) {
                            std::thread::yield_now();
                        }
                        let mut hint = Splice::new();
                        for wave in 0..waves as u64 {
                            let k = (wave * WRITERS + t) % K;
                            for _ in 0..writes {
                                state.write(list, k, with_hints.then_some(&mut hint));
                            }
                            // The next wave gives this slot to another
                            // writer: wait until every write of this one is in.
                            barrier.wait();
                        }
                    })
                })
                .collect();
            for w in writers {
                w.join().unwrap();
            }
            done.store(true, Ordering::Relaxed);
            reader.join().unwrap()
        });
        // After the join the reader must see everything.
        let mut rng = SmallRng::seed_from_u64(!round as u64);
        read_step(&list, &state, &mut rng);
        let total: u64 = state.snapshot().iter().sum();
        assert_eq!(total as usize, waves * writes * WRITERS as usize);
        assert_eq!(list.len(), total as usize);
        list.check_invariants().unwrap();
        assert!(reads > 0);
    }
}

#[test]
fn one_reader_waves_of_four_writers() {
    waves_of_four_writers(false);
}

#[test]
fn one_reader_waves_of_four_writers_with_hints() {
    waves_of_four_writers(true);
}

/// One reader against the list's single writer, which writes random slots.
#[test]
fn one_reader_one_single_writer() {
    let (rounds, waves, writes) = scale();
    for round in 0..rounds {
        let mut list = SkipList::new(BytewiseComparator);
        let mut writer = list.single_writer().unwrap();
        let list = list;
        let state = State::new();
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut rng = SmallRng::seed_from_u64(round as u64);
                // Relaxed: see above.
                while !done.load(Ordering::Relaxed) {
                    read_step(&list, &state, &mut rng);
                }
            });
            let mut rng = SmallRng::seed_from_u64(1000 + round as u64);
            for _ in 0..waves * writes {
                let k = rng.random_range(0..K);
                let slot = &state.generations[k as usize];
                // Relaxed: this thread is the only writer.
                let g = slot.load(Ordering::Relaxed) + 1;
                assert!(writer.insert(&list, &encode(id(k, g))));
                slot.store(g, Ordering::Release);
            }
            done.store(true, Ordering::Relaxed);
        });
        let total: u64 = state.snapshot().iter().sum();
        assert_eq!(list.len(), total as usize);
        list.check_invariants().unwrap();
    }
}

/// The check itself must be able to fail: a list missing a published key
/// is caught.
#[test]
#[should_panic(expected = "skipped")]
fn the_reader_check_catches_a_missing_key() {
    let list = SkipList::new(BytewiseComparator);
    let state = State::new();
    state.write(&list, 3, None);
    // Publish generation 2 of slot 3 without inserting it.
    // Release: as `State::write`'s publication, which the readers Acquire.
    state.generations[3].store(2, Ordering::Release);
    let mut rng = SmallRng::seed_from_u64(7);
    for _ in 0..100 {
        read_step(&list, &state, &mut rng);
    }
}
