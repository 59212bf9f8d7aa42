//! `cargo run --release -p benches --bin report`: runs a short version of
//! every comparison and writes one self-contained HTML page (tables and
//! throughput-against-threads plots) plus the same tables as Markdown,
//! stamped with machine, date and commit.
//!
//! ```text
//! report [--skip-run] [--out DIR] [--benches arena,write_group,skiplist,vecmem] [--no-engine]
//! ```
//!
//! - the primitives: each criterion bench runs with short warm-up and
//!   measurement times and smaller inputs; the report reads criterion's
//!   `new/benchmark.json` and `new/estimates.json` files. `--skip-run`
//!   formats the results already under `target/criterion` (for example
//!   after a full `cargo bench -p benches`).
//! - the engine: `lsm-demo bench` on a few workloads; where RocksDB's
//!   `db_bench` is installed and `benches/scripts/vs-rocksdb.sh` exists, that
//!   script's side-by-side table instead.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use benches::report::{Measurement, Series, html_page, markdown_tables, parse_threads};

struct Args {
    skip_run: bool,
    out: PathBuf,
    benches: Vec<String>,
    engine: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        skip_run: false,
        out: target_dir().join("report"),
        benches: ["arena", "write_group", "skiplist", "vecmem"]
            .map(String::from)
            .to_vec(),
        engine: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--skip-run" => a.skip_run = true,
            "--no-engine" => a.engine = false,
            "--out" => a.out = it.next().ok_or("--out needs a directory")?.into(),
            "--benches" => {
                a.benches = it
                    .next()
                    .ok_or("--benches needs a list")?
                    .split(',')
                    .map(String::from)
                    .collect()
            }
            "-h" | "--help" => {
                println!(
                    "report [--skip-run] [--out DIR] [--benches arena,write_group,skiplist,vecmem] [--no-engine]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    for b in &a.benches {
        if !["arena", "write_group", "skiplist", "vecmem"].contains(&b.as_str()) {
            return Err(format!("unknown bench {b:?}"));
        }
    }
    Ok(a)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("benches/ has a parent")
        .to_path_buf()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

fn run_bench(name: &str) -> Result<(), String> {
    eprintln!("report: running the short `{name}` benchmark");
    let status = Command::new(env!("CARGO"))
        .current_dir(workspace_root())
        .args(["bench", "-q", "-p", "benches", "--bench", name, "--"])
        .args([
            "--warm-up-time",
            "0.3",
            "--measurement-time",
            "1",
            "--sample-size",
            "10",
        ])
        .arg("--noplot")
        // Smaller inputs for the benches that read them.
        .env("SKIPLIST_BENCH_N", "200000")
        .env("VECMEM_BENCH_N", "200000")
        .env("ARENA_BENCH_N", "200000")
        .env("WRITE_GROUP_BENCH_N", "20000")
        .status()
        .map_err(|e| format!("running cargo bench: {e}"))?;
    if !status.success() {
        return Err(format!("cargo bench --bench {name} failed: {status}"));
    }
    Ok(())
}

/// Reads every `*/new/benchmark.json` under criterion's directory.
fn read_criterion(dir: &Path) -> Vec<Measurement> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "benchmark.json")
                && p.parent()
                    .and_then(|q| q.file_name())
                    .is_some_and(|n| n == "new")
                && let Some(m) = read_one(&p)
            {
                out.push(m);
            }
        }
    }
    out.sort_by(|a, b| (&a.group, &a.function, &a.value).cmp(&(&b.group, &b.function, &b.value)));
    out
}

fn read_one(benchmark_json: &Path) -> Option<Measurement> {
    let bench: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(benchmark_json).ok()?).ok()?;
    let est_path = benchmark_json.with_file_name("estimates.json");
    let est: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(est_path).ok()?).ok()?;
    let nanos = est["mean"]["point_estimate"].as_f64()?;
    let elements = bench["throughput"]["Elements"]
        .as_f64()
        .or_else(|| bench["throughput"]["Bytes"].as_f64());
    Some(Measurement {
        group: bench["group_id"].as_str()?.to_string(),
        function: bench["function_id"].as_str().unwrap_or("").to_string(),
        value: bench["value_str"].as_str().unwrap_or("").to_string(),
        nanos_per_iter: nanos,
        elements_per_iter: elements,
    })
}

fn stamp() -> String {
    let commit = Command::new("git")
        .current_dir(workspace_root())
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let date = Command::new("date")
        .arg("-u")
        .arg("+%Y-%m-%d %H:%M UTC")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!("{date}; commit {commit}; {cores} cores, {cpu}")
}

/// The engine's table: vs-rocksdb.sh where db_bench exists, else our bench alone.
fn engine_table() -> Option<String> {
    let root = workspace_root();
    let script = root.join("benches/scripts/vs-rocksdb.sh");
    let have_db_bench = Command::new("sh")
        .args(["-c", "command -v db_bench"])
        .output()
        .is_ok_and(|o| o.status.success());
    if have_db_bench && script.exists() {
        eprintln!("report: running vs-rocksdb.sh --quick --reps 1");
        let out = Command::new("bash")
            .current_dir(&root)
            .arg(&script)
            .args(["--quick", "--reps", "1"])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let profiles =
            std::fs::read_to_string(root.join("benches/PROFILES.md")).unwrap_or_default();
        let md = benches::report::engine_target_table(&text, &profiles);
        return Some(format!(
            "Engine against RocksDB's own db_bench (`vs-rocksdb.sh --quick --reps 1`, one alternating run, ops counts divided by 5; the targets are for the full runs, median of 3). The causes of misses are in `benches/PROFILES.md`, copied at the end of this report.\n\n{md}"
        ));
    }
    eprintln!("report: db_bench not installed; running lsm-demo bench alone");
    let json = std::env::temp_dir().join(format!("lsm-demo-report-{}.json", std::process::id()));
    let status = Command::new(env!("CARGO"))
        .current_dir(&root)
        .args(["run", "-q", "--release", "-p", "lsm-demo", "--", "bench"])
        .args([
            "--benchmarks=fillseq,fillrandom,readrandom,readseq",
            "--num=200000",
            "--quiet",
        ])
        .arg(format!("--json={}", json.display()))
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).ok()?).ok()?;
    let _ = std::fs::remove_file(&json);
    let mut md = String::from("| benchmark | threads | ops/s |\n|---|---:|---:|\n");
    // `lsm-demo bench --json` writes {program, machine, seed, settings,
    // results}; older builds wrote the results alone.
    let results = if v.is_array() { &v } else { &v["results"] };
    for r in results.as_array()? {
        let _ = writeln!(
            md,
            "| {} | {} | {:.0} |",
            r["name"].as_str().unwrap_or("?"),
            r["threads"],
            r["ops_per_sec"].as_f64().unwrap_or(0.0)
        );
    }
    Some(format!(
        "The engine alone (RocksDB's db_bench is not installed here):\n\n{md}"
    ))
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    if !args.skip_run {
        for b in &args.benches {
            if let Err(e) = run_bench(b) {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    let measurements = read_criterion(&target_dir().join("criterion"));
    if measurements.is_empty() {
        eprintln!(
            "error: no criterion results under {}",
            target_dir().join("criterion").display()
        );
        std::process::exit(1);
    }
    let mut groups: BTreeMap<String, Vec<Series>> = BTreeMap::new();
    for m in &measurements {
        let (threads, rest) = parse_threads(&m.value);
        let label = if rest.is_empty() {
            m.function.clone()
        } else {
            format!("{} {rest}", m.function)
        };
        let series = groups.entry(m.group.clone()).or_default();
        let s = match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s,
            None => {
                series.push(Series {
                    label,
                    points: Vec::new(),
                });
                series.last_mut().expect("just pushed")
            }
        };
        s.points.push((threads, m.value.clone(), m.ops_per_sec()));
    }
    let engine = if args.engine { engine_table() } else { None };
    let stamp = stamp();
    let mut md = markdown_tables(&stamp, &groups, engine.as_deref());
    let mut html = html_page(&stamp, &groups, engine.as_deref());
    // The profiles behind the explanations of missed targets.
    if let Ok(profiles) = std::fs::read_to_string(workspace_root().join("benches/PROFILES.md")) {
        let _ = write!(md, "\n---\n\n{profiles}");
        let escaped = profiles
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        let section = format!(
            "<h2>profiles (benches/PROFILES.md)</h2><pre style=\"white-space:pre-wrap\">{escaped}</pre>"
        );
        match html.rfind("</body>") {
            Some(at) => html.insert_str(at, &section),
            None => html.push_str(&section),
        }
    }
    if let Err(e) = std::fs::create_dir_all(&args.out)
        .and_then(|()| std::fs::write(args.out.join("report.md"), &md))
        .and_then(|()| std::fs::write(args.out.join("report.html"), &html))
    {
        eprintln!("error: writing the report to {}: {e}", args.out.display());
        std::process::exit(1);
    }
    println!("{md}");
    eprintln!(
        "report: wrote {} and {}",
        args.out.join("report.html").display(),
        args.out.join("report.md").display()
    );
}
