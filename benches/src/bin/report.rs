//! `cargo run --release -p benches --bin report`: runs a short version of
//! every comparison and writes one self-contained HTML page (tables, and
//! charts of throughput against threads with criterion's confidence
//! intervals) plus the same tables as Markdown, stamped with machine, date
//! and commit.
//!
//! ```text
//! report [--skip-run] [--out DIR]
//!        [--benches arena,write_group,skiplist,vecmem,ordered_publish,shared_file]
//!        [--no-engine] [--vs-rocksdb FILE] [--scaling-csv CSV]
//! ```
//!
//! - the primitives: each criterion bench runs with short warm-up and
//!   measurement times and smaller inputs; the report reads criterion's
//!   `new/benchmark.json` and `new/estimates.json` files (the mean and its
//!   95% confidence interval). `--skip-run` formats the results already
//!   under `target/criterion` (for example after a full `cargo bench -p
//!   benches`).
//! - the engine: `lsm-demo bench` on a few workloads; where RocksDB's
//!   `db_bench` is installed and `benches/scripts/vs-rocksdb.sh` exists, that
//!   script's side-by-side table instead (or its saved output, with
//!   `--vs-rocksdb`). The chart of ops/s against threads beside RocksDB's
//!   is read from the newest CSV of `benches/scripts/thread-scaling.sh`
//!   under `benches/results/` (or `--scaling-csv`), not rerun.
//! - `benches/PROFILES.md`, rendered; `--no-engine` leaves out the engine
//!   and the profiles' engine sections.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use benches::report::{
    Machine, Measurement, Report, Scaling, group_measurements, markdown, scaling_series,
};
use clap::{Parser, ValueEnum};

/// Runs a short version of every comparison and writes it as one HTML page
/// and as Markdown.
#[derive(Parser, Debug)]
#[command(name = "report")]
struct Args {
    /// Format the results already under target/criterion instead of
    /// running the benches (for example after a full `cargo bench -p
    /// benches`).
    #[arg(long)]
    skip_run: bool,
    /// Where to write report.html and report.md [default: target/report].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The criterion benches to run, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "arena,write_group,skiplist,vecmem,ordered_publish,shared_file"
    )]
    benches: Vec<Bench>,
    /// Leave the engine out: its run against RocksDB, its thread scaling
    /// and its sections of the profiles.
    #[arg(long)]
    no_engine: bool,
    /// Saved output of `benches/scripts/vs-rocksdb.sh` to tabulate instead
    /// of running it.
    #[arg(long, value_name = "FILE")]
    vs_rocksdb: Option<PathBuf>,
    /// The CSV of `benches/scripts/thread-scaling.sh` to chart [default:
    /// the newest under benches/results/*thread-scaling*/].
    #[arg(long, value_name = "CSV")]
    scaling_csv: Option<PathBuf>,
}

/// The criterion benches the report runs.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
enum Bench {
    Arena,
    #[value(name = "write_group")]
    WriteGroup,
    Skiplist,
    Vecmem,
    #[value(name = "ordered_publish")]
    OrderedPublish,
    #[value(name = "shared_file")]
    SharedFile,
}

impl Bench {
    fn name(self) -> &'static str {
        match self {
            Bench::Arena => "arena",
            Bench::WriteGroup => "write_group",
            Bench::Skiplist => "skiplist",
            Bench::Vecmem => "vecmem",
            Bench::OrderedPublish => "ordered_publish",
            Bench::SharedFile => "shared_file",
        }
    }
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
    let mean = &est["mean"];
    let nanos = mean["point_estimate"].as_f64()?;
    let ci = &mean["confidence_interval"];
    let nanos_interval = ci["lower_bound"].as_f64().zip(ci["upper_bound"].as_f64());
    let elements = bench["throughput"]["Elements"]
        .as_f64()
        .or_else(|| bench["throughput"]["Bytes"].as_f64());
    Some(Measurement {
        group: bench["group_id"].as_str()?.to_string(),
        function: bench["function_id"].as_str().unwrap_or("").to_string(),
        value: bench["value_str"].as_str().unwrap_or("").to_string(),
        nanos_per_iter: nanos,
        nanos_interval,
        elements_per_iter: elements,
    })
}

/// The date (UTC) and the short commit the report runs at.
fn date_and_commit() -> (String, String) {
    let out = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .current_dir(workspace_root())
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    (
        out("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_default(),
        out("git", &["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into()),
    )
}

/// The engine's table: vs-rocksdb.sh's (run here, or its saved output)
/// where db_bench exists, else our bench alone.
fn engine_table(saved: Option<&Path>, profiles: &str) -> Option<String> {
    let root = workspace_root();
    let script = root.join("benches/scripts/vs-rocksdb.sh");
    let with_targets = |text: &str, how: &str| {
        let md = benches::report::engine_target_table(text, profiles);
        format!(
            "Engine against RocksDB's own db_bench ({how}; the targets are for the full runs, median of 3). The causes of misses are in `benches/PROFILES.md`, quoted at the end of this report.\n\n{md}"
        )
    };
    if let Some(path) = saved {
        let text = std::fs::read_to_string(path).ok()?;
        return Some(with_targets(
            &text,
            &format!("saved output of `vs-rocksdb.sh` from `{}`", path.display()),
        ));
    }
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
        return Some(with_targets(
            &String::from_utf8_lossy(&out.stdout),
            "`vs-rocksdb.sh --quick --reps 1`, one alternating run on this machine, ops counts divided by 5",
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

/// The newest `benches/results/*thread-scaling*/*.csv`: directories start
/// with their date, so the last name sorts newest.
fn newest_scaling_csv() -> Option<PathBuf> {
    let results = workspace_root().join("benches/results");
    let newest = |dir: &Path, keep: &dyn Fn(&Path) -> bool| {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| keep(p))
            .collect();
        found.sort();
        found.pop()
    };
    let dir = newest(&results, &|p| {
        p.is_dir()
            && p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains("thread-scaling"))
    })?;
    newest(&dir, &|p| p.extension().is_some_and(|e| e == "csv"))
}

fn scaling(arg: Option<&Path>) -> Option<Scaling> {
    let path = match arg {
        Some(p) => p.to_path_buf(),
        None => newest_scaling_csv()?,
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| eprintln!("report: reading {}: {e}", path.display()))
        .ok()?;
    let series = scaling_series(&text);
    if series.is_empty() {
        eprintln!("report: no thread-scaling rows in {}", path.display());
        return None;
    }
    let root = workspace_root();
    let source = path
        .strip_prefix(&root)
        .unwrap_or(&path)
        .display()
        .to_string();
    Some(Scaling { source, series })
}

/// Sections of the profiles about the engine: `## Engine ...`.
fn is_engine_section(title: &str) -> bool {
    title.to_ascii_lowercase().starts_with("engine")
}

fn main() {
    let args = Args::parse();
    if !args.skip_run {
        for b in &args.benches {
            if let Err(e) = run_bench(b.name()) {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    let criterion = target_dir().join("criterion");
    let measurements = read_criterion(&criterion);
    if measurements.is_empty() {
        eprintln!("error: no criterion results under {}", criterion.display());
        std::process::exit(1);
    }
    let benches_dir = workspace_root().join("benches");
    let profiles = std::fs::read_to_string(benches_dir.join("PROFILES.md")).ok();
    let engine = !args.no_engine;
    let (date, commit) = date_and_commit();
    let report = Report {
        date,
        commit,
        machine: Machine::detect(),
        groups: group_measurements(&measurements),
        engine_table: if engine {
            engine_table(
                args.vs_rocksdb.as_deref(),
                profiles.as_deref().unwrap_or(""),
            )
        } else {
            None
        },
        scaling: if engine {
            scaling(args.scaling_csv.as_deref())
        } else {
            None
        },
        profiles: profiles.map(|p| {
            if engine {
                p
            } else {
                markdown::drop_sections(&p, is_engine_section)
            }
        }),
        // The profiles' links are relative to benches/.
        link_base: format!("file://{}/", benches_dir.display()),
    };
    let md = report.markdown();
    let html = report.html();
    let out = args.out.unwrap_or_else(|| target_dir().join("report"));
    if let Err(e) = std::fs::create_dir_all(&out)
        .and_then(|()| std::fs::write(out.join("report.md"), &md))
        .and_then(|()| std::fs::write(out.join("report.html"), &html))
    {
        eprintln!("error: writing the report to {}: {e}", out.display());
        std::process::exit(1);
    }
    println!("{md}");
    eprintln!(
        "report: wrote {} and {}",
        out.join("report.html").display(),
        out.join("report.md").display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_with_clap() {
        let a = Args::try_parse_from([
            "report",
            "--skip-run",
            "--benches",
            "vecmem,write_group",
            "--no-engine",
        ])
        .expect("valid arguments");
        assert!(a.skip_run && a.no_engine);
        assert_eq!(a.benches, [Bench::Vecmem, Bench::WriteGroup]);
        let d = Args::try_parse_from(["report"]).expect("defaults");
        assert_eq!(d.benches.len(), 6, "every criterion bench but the engine's");
        assert!(d.benches.contains(&Bench::SharedFile));
        assert!(Args::try_parse_from(["report", "--benches", "nope"]).is_err());
        assert!(Args::try_parse_from(["report", "--frobnicate"]).is_err());
    }

    #[test]
    fn the_checked_in_scaling_csv_is_found() {
        let csv = newest_scaling_csv().expect("benches/results has a thread-scaling CSV");
        assert!(csv.to_string_lossy().ends_with(".csv"));
        assert!(!scaling(Some(&csv)).expect("it parses").series.is_empty());
    }
}
