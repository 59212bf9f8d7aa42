//! `lsm-demo bench` end to end: db_bench's result lines and histogram
//! layout, no progress bar when standard output is not a terminal, and
//! `--json=-` writing the JSON alone to standard output, `--duration` and
//! `--perf_level`.

use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lsm-demo"))
        .arg("bench")
        .args(args)
        .output()
        .expect("running lsm-demo")
}

/// A successful run with `--json=-` among `args`: its text (on standard
/// error) and its results.
fn bench_json(args: &[&str]) -> (String, serde_json::Value) {
    let out = bench(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON alone");
    (stderr, v)
}

#[test]
fn result_lines_and_histograms_are_db_bench_s() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let out = bench(&[
        "--benchmarks=fillrandom,readrandom,readrandomwriterandom",
        "--num=3000",
        "--seed=42",
        "--histogram=1",
        &db,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    // Not a terminal: no bar on either stream.
    assert!(!stderr.contains('[') && !stdout.contains('\r'), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let at = |prefix: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in {stdout}"))
    };
    let fill = at("fillrandom   : ");
    assert!(lines[fill].contains(" 3000 operations;"), "{}", lines[fill]);
    assert_eq!(lines[fill + 1], "Microseconds per write:");
    assert!(lines[fill + 2].starts_with("Count: 3000 Average: "));
    assert!(lines[fill + 3].starts_with("Min: "));
    assert!(lines[fill + 4].starts_with("Percentiles: P50: "));
    assert!(lines[fill + 4].contains(" P99.9: ") && lines[fill + 4].contains(" P99.99: "));
    assert_eq!(lines[fill + 5], "-".repeat(54));
    assert!(lines[fill + 6].starts_with('[') || lines[fill + 6].starts_with('('));
    let read = at("readrandom   : ");
    assert!(lines[read].ends_with(" found)"), "{}", lines[read]);
    // db_bench's note ends in a newline: an empty line, then the histogram.
    assert_eq!(lines[read + 1], "");
    assert_eq!(lines[read + 2], "Microseconds per read:");
    let mixed = at("readrandomwriterandom : ");
    // The counts of db_bench 7.8.3 on the same flags, which draws the same
    // keys.
    assert!(
        lines[read].ends_with("(1857 of 3000 found)"),
        "{}",
        lines[read]
    );
    assert!(
        lines[mixed].ends_with("operations; ( reads:2700 writes:300 total:3000 found:1715)"),
        "{}",
        lines[mixed]
    );
    assert_eq!(lines[mixed + 1], "Microseconds per read:");
    assert!(
        stdout.contains("Microseconds per write:\nCount: 300 "),
        "{stdout}"
    );
}

#[test]
fn json_dash_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let (stderr, v) = bench_json(&[
        "--benchmarks=fillseq,seekrandom",
        "--num=500",
        "--seek_nexts=2",
        "--json=-",
        "--histogram=1",
        &db,
    ]);
    // The text went to standard error; standard output is the JSON alone.
    assert!(stderr.contains("seekrandom   : "), "{stderr}");
    let seed = v["seed"].as_u64().unwrap();
    assert!(stderr.contains(&format!("Set seed to {seed} because --seed was 0")));
    assert_eq!(v["settings"]["seek_nexts"], 2);
    assert_eq!(v["results"][1]["name"], "seekrandom");
    assert_eq!(v["results"][1]["latency"][0]["op"], "seek");
    assert_eq!(v["results"][1]["found"], 500);
}

#[test]
fn runs_of_several_threads_say_when_the_first_thread_was_done() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let run = |threads: &str| {
        let args = [
            "--benchmarks=fillrandom",
            "--num=2000",
            threads,
            "--json=-",
            &db,
        ];
        let (text, v) = bench_json(&args);
        (text, v["results"][0].clone())
    };
    let (text, result) = run("--threads=3");
    let (first, all) = (
        result["first_done_seconds"].as_f64().unwrap(),
        result["seconds"].as_f64().unwrap(),
    );
    assert!(0.0 < first && first <= all, "{result}");
    let line = format!("  threads: the first done at {first:.3} s of {all:.3} s\n");
    assert!(text.contains(&line), "no {line:?} in {text}");
    // One thread: nothing to say.
    let (text, result) = run("--threads=1");
    assert!(result["first_done_seconds"].is_null(), "{result}");
    assert!(!text.contains("  threads: "), "{text}");
}

#[test]
fn duration_runs_the_random_benchmarks_for_a_time_and_not_a_count() {
    let dir = tempfile::tempdir().unwrap();
    let (stderr, v) = bench_json(&[
        "--benchmarks=fillrandom,readrandom,fillseq",
        "--num=50",
        "--threads=2",
        "--duration=1",
        "--ops_between_duration_checks=7",
        "--json=-",
        &format!("--db={}", dir.path().join("db").display()),
    ]);
    assert_eq!(v["settings"]["duration"], 1);
    let results = v["results"].as_array().unwrap();
    for r in &results[..2] {
        // Each thread ran a second, past its 50 operations.
        assert!(r["seconds"].as_f64().unwrap() >= 1.0, "{r}");
        assert!(r["ops"].as_u64().unwrap() > 100, "{r}");
    }
    // readrandom's note counts the first thread's reads, as many as it did.
    let line = stderr
        .lines()
        .find(|l| l.starts_with("readrandom"))
        .unwrap();
    let note = line.rsplit('(').next().unwrap();
    let (found, reads) = note.trim_end_matches(" found)").split_once(" of ").unwrap();
    let (found, reads): (u64, u64) = (found.parse().unwrap(), reads.parse().unwrap());
    assert!(found <= reads && reads > 50, "{line}");
    // fillseq's keys are not random: it keeps its count, as in db_bench.
    assert_eq!(results[2]["ops"], 100, "{}", results[2]);
}

#[test]
fn perf_level_adds_the_threads_perf_counters() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let run = |level: &str| {
        let args = [
            "--benchmarks=fillrandom,readrandom",
            "--num=2000",
            "--threads=2",
            level,
            "--json=-",
            &db,
        ];
        let (text, v) = bench_json(&args);
        (text, v["results"].clone())
    };
    let (text, results) = run("--perf_level=3");
    let (write, read) = (&results[0]["perf_context"], &results[1]["perf_context"]);
    assert!(
        write["write_memtable_time"].as_u64().unwrap() > 0,
        "{write}"
    );
    assert!(write["write_wal_time"].as_u64().unwrap() > 0, "{write}");
    // Both threads' reads, summed.
    assert_eq!(read["get_from_memtable_count"], 4000, "{read}");
    assert!(
        text.contains("  perf context (all threads): write_wal_time = "),
        "{text}"
    );
    // Counts only at 2; nothing by default.
    let (_, results) = run("--perf_level=2");
    let read = &results[1]["perf_context"];
    assert_eq!(read["get_from_memtable_count"], 4000, "{read}");
    assert_eq!(read["get_from_memtable_time"], 0, "{read}");
    let (text, results) = run("--perf_level=1");
    assert!(results[0]["perf_context"].is_null());
    assert!(!text.contains("perf context"), "{text}");
    let out = bench(&["--perf_level=6"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--perf_level=6 is above 5"));
}
