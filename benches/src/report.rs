//! Turning criterion's results into the comparison report: Markdown tables
//! and one self-contained HTML page with inline SVG charts.
//!
//! [`Report`] holds what the page shows; [`chart`] draws the charts and
//! [`markdown`] turns the Markdown texts the page quotes into HTML.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

pub mod chart;
pub mod markdown;

use chart::{ColorMap, fmt_ops, svg_chart};

/// One criterion benchmark's result.
///
/// # Examples
///
/// ```
/// use benches::report::Measurement;
/// // 100 elements in 50 µs, the mean somewhere in 40 to 60 µs.
/// let m = Measurement {
///     group: "skiplist_insert_random".into(),
///     function: "skipmap".into(),
///     value: "2t".into(),
///     nanos_per_iter: 50_000.0,
///     nanos_interval: Some((40_000.0, 60_000.0)),
///     elements_per_iter: Some(100.0),
/// };
/// assert_eq!(m.ops_per_sec(), 2e6);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Criterion group, e.g. `skiplist_insert_random`.
    pub group: String,
    /// Contender, e.g. `crossbeam_skipmap`.
    pub function: String,
    /// Parameter, e.g. `2t` or `t2_b100`.
    pub value: String,
    /// Mean time of one iteration.
    pub nanos_per_iter: f64,
    /// Criterion's 95% confidence interval of that mean, (lower, upper).
    pub nanos_interval: Option<(f64, f64)>,
    /// Elements one iteration processes (criterion's throughput).
    pub elements_per_iter: Option<f64>,
}

impl Measurement {
    /// Elements per second, or iterations per second without a throughput.
    ///
    /// # Examples
    ///
    /// ```
    /// use benches::report::Measurement;
    /// let m = Measurement {
    ///     group: "g".into(),
    ///     function: "f".into(),
    ///     value: "1t".into(),
    ///     nanos_per_iter: 2e9,
    ///     nanos_interval: None,
    ///     elements_per_iter: Some(1e6),
    /// };
    /// assert_eq!(m.ops_per_sec(), 5e5);
    /// ```
    pub fn ops_per_sec(&self) -> f64 {
        self.elements_per_iter.unwrap_or(1.0) * 1e9 / self.nanos_per_iter
    }

    /// The confidence interval of the time as one of operations per
    /// second, (lower, upper): the slower bound gives the lower rate.
    ///
    /// # Examples
    ///
    /// ```
    /// use benches::report::Measurement;
    /// let m = Measurement {
    ///     group: "g".into(),
    ///     function: "f".into(),
    ///     value: String::new(),
    ///     nanos_per_iter: 1000.0,
    ///     nanos_interval: Some((800.0, 1250.0)),
    ///     elements_per_iter: None,
    /// };
    /// assert_eq!(m.ops_interval(), Some((8e5, 1.25e6)));
    /// ```
    pub fn ops_interval(&self) -> Option<(f64, f64)> {
        let per_iter = self.elements_per_iter.unwrap_or(1.0);
        self.nanos_interval
            .map(|(lo, hi)| (per_iter * 1e9 / hi, per_iter * 1e9 / lo))
    }
}

/// One measured point of a [`Series`].
///
/// # Examples
///
/// ```
/// use benches::report::Point;
/// let p = Point { threads: Some(2), param: "t2_b100".into(), ops: 7.2e7, interval: Some((7.0e7, 7.4e7)) };
/// assert_eq!(p.threads, Some(2));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Thread count, where the parameter names one.
    pub threads: Option<u32>,
    /// The parameter as criterion wrote it (`2t`, `t2_b100`, ...).
    pub param: String,
    /// Operations per second.
    pub ops: f64,
    /// An interval around `ops`, (lower, upper): criterion's 95%
    /// confidence interval, or the range of repeated runs.
    pub interval: Option<(f64, f64)>,
}

/// One contender's points in a group, e.g. `vecmem` at batch size 100.
///
/// # Examples
///
/// ```
/// use benches::report::{Point, Series};
/// let s = Series {
///     contender: "vecmem".into(),
///     variant: "b100".into(),
///     points: vec![Point { threads: Some(1), param: "t1_b100".into(), ops: 5e7, interval: None }],
/// };
/// assert_eq!(s.points.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Contender (criterion's function id): the colour in every chart.
    pub contender: String,
    /// The non-thread part of the parameter (e.g. `b100`), or empty.
    pub variant: String,
    /// Its measurements.
    pub points: Vec<Point>,
}

impl Series {
    /// Contender and variant, as legends and tables name the series.
    ///
    /// # Examples
    ///
    /// ```
    /// use benches::report::Series;
    /// let s = Series { contender: "vecmem".into(), variant: "b100".into(), points: vec![] };
    /// assert_eq!(s.label(), "vecmem b100");
    /// ```
    pub fn label(&self) -> String {
        if self.variant.is_empty() {
            self.contender.clone()
        } else {
            format!("{} {}", self.contender, self.variant)
        }
    }
}

/// Splits a criterion parameter into a thread count and the rest:
/// `"2t"`, `"t2"`, `"t2_b100"`, `"threads=4"` and a bare `"8"` all name
/// threads.
///
/// # Examples
///
/// ```
/// use benches::report::parse_threads;
/// assert_eq!(parse_threads("t2_b100"), (Some(2), "b100".to_string()));
/// assert_eq!(parse_threads("4t"), (Some(4), String::new()));
/// assert_eq!(parse_threads("8"), (Some(8), String::new()));
/// assert_eq!(parse_threads("fresh"), (None, "fresh".to_string()));
/// ```
pub fn parse_threads(value: &str) -> (Option<u32>, String) {
    let parts: Vec<&str> = value
        .split(['_', '/', ' ', ','])
        .filter(|p| !p.is_empty())
        .collect();
    for (i, p) in parts.iter().enumerate() {
        let digits = p
            .strip_prefix("threads=")
            .or_else(|| p.strip_prefix("threads"))
            .or_else(|| p.strip_prefix('t'))
            .or_else(|| p.strip_suffix('t'))
            .unwrap_or(p);
        if let Ok(n) = digits.parse::<u32>() {
            let rest: Vec<&str> = parts
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, p)| *p)
                .collect();
            return (Some(n), rest.join(" "));
        }
    }
    (None, value.to_string())
}

/// Criterion's results by group, each group's series by contender and
/// variant in the order of `measurements`.
///
/// # Examples
///
/// ```
/// use benches::report::{Measurement, group_measurements};
/// let m = |function: &str, value: &str| Measurement {
///     group: "vecmem".into(),
///     function: function.into(),
///     value: value.into(),
///     nanos_per_iter: 1e3,
///     nanos_interval: None,
///     elements_per_iter: None,
/// };
/// let groups = group_measurements(&[m("vecmem", "t1_b1"), m("vecmem", "t2_b1"), m("vecmem", "t1_b100")]);
/// let series = &groups["vecmem"];
/// assert_eq!(series.len(), 2);
/// assert_eq!(series[0].label(), "vecmem b1");
/// assert_eq!(series[0].points.len(), 2);
/// ```
pub fn group_measurements(measurements: &[Measurement]) -> BTreeMap<String, Vec<Series>> {
    let mut groups: BTreeMap<String, Vec<Series>> = BTreeMap::new();
    for m in measurements {
        let (threads, variant) = parse_threads(&m.value);
        let series = groups.entry(m.group.clone()).or_default();
        let i = match series
            .iter()
            .position(|s| s.contender == m.function && s.variant == variant)
        {
            Some(i) => i,
            None => {
                series.push(Series {
                    contender: m.function.clone(),
                    variant,
                    points: Vec::new(),
                });
                series.len() - 1
            }
        };
        series[i].points.push(Point {
            threads,
            param: m.value.clone(),
            ops: m.ops_per_sec(),
            interval: m.ops_interval(),
        });
    }
    groups
}

/// The series of `benches/scripts/thread-scaling.sh`'s CSV (`round,engine,
/// wal,threads,ops`): one per engine and log setting, each point the median
/// of the rounds with the lowest and highest round as its interval.
///
/// # Examples
///
/// ```
/// use benches::report::scaling_series;
/// let csv = "round,engine,wal,threads,ops\n1,rocksdb,0,1,300\n2,rocksdb,0,1,340\n3,rocksdb,0,1,320\n";
/// let series = scaling_series(csv);
/// assert_eq!(series[0].label(), "rocksdb log off");
/// assert_eq!(series[0].points[0].ops, 320.0);
/// assert_eq!(series[0].points[0].interval, Some((300.0, 340.0)));
/// ```
pub fn scaling_series(csv: &str) -> Vec<Series> {
    let mut runs: BTreeMap<(String, String), BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let [_round, engine, wal, threads, ops] = f[..] else {
            continue;
        };
        let (Ok(threads), Ok(ops)) = (threads.parse::<u32>(), ops.parse::<f64>()) else {
            continue;
        };
        let variant = if wal == "0" {
            "log off"
        } else {
            "log on, unsynced"
        };
        runs.entry((engine.to_string(), variant.to_string()))
            .or_default()
            .entry(threads)
            .or_default()
            .push(ops);
    }
    runs.into_iter()
        .map(|((contender, variant), by_threads)| Series {
            contender,
            variant,
            points: by_threads
                .into_iter()
                .map(|(t, mut ops)| {
                    ops.sort_by(f64::total_cmp);
                    let n = ops.len();
                    let median = if n % 2 == 1 {
                        ops[n / 2]
                    } else {
                        (ops[n / 2 - 1] + ops[n / 2]) / 2.0
                    };
                    Point {
                        threads: Some(t),
                        param: t.to_string(),
                        ops: median,
                        interval: (n > 1).then(|| (ops[0], ops[n - 1])),
                    }
                })
                .collect(),
        })
        .collect()
}

/// The machine a report ran on.
///
/// # Examples
///
/// ```
/// use benches::report::Machine;
/// let m = Machine { cores: 2, model: "Intel(R) Xeon(R) Processor".into(), kernel: "Linux 6.1.0 x86_64".into() };
/// assert_eq!(m.to_string(), "2 cores, Intel(R) Xeon(R) Processor, Linux 6.1.0 x86_64");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Cores this process may run on.
    pub cores: usize,
    /// The CPU's model name.
    pub model: String,
    /// Kernel name and release, and the architecture.
    pub kernel: String,
}

impl Machine {
    /// This machine: cores from the scheduler, model from `/proc/cpuinfo`
    /// (or `sysctl` elsewhere), kernel from `/proc/sys/kernel` (or
    /// `uname`).
    ///
    /// # Examples
    ///
    /// ```
    /// let m = benches::report::Machine::detect();
    /// assert!(m.cores >= 1);
    /// println!("{m}");
    /// ```
    pub fn detect() -> Machine {
        let run = |cmd: &str, args: &[&str]| {
            std::process::Command::new(cmd)
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| cpu_model(&s))
            .or_else(|| run("sysctl", &["-n", "machdep.cpu.brand_string"]))
            .unwrap_or_else(|| "unknown CPU".into());
        let proc_kernel = |f: &str| {
            std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
                .ok()
                .map(|s| s.trim().to_string())
        };
        let kernel = match (proc_kernel("ostype"), proc_kernel("osrelease")) {
            (Some(t), Some(r)) => format!("{t} {r}"),
            _ => run("uname", &["-sr"]).unwrap_or_else(|| std::env::consts::OS.into()),
        };
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            model,
            kernel: format!("{kernel} {}", std::env::consts::ARCH),
        }
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.cores == 1 { "" } else { "s" };
        write!(f, "{} core{s}, {}, {}", self.cores, self.model, self.kernel)
    }
}

/// The first `model name` of a `/proc/cpuinfo` text.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The engine's thread scaling, read from a CSV of
/// `benches/scripts/thread-scaling.sh` rather than measured by the report.
///
/// # Examples
///
/// ```
/// use benches::report::{Scaling, scaling_series};
/// let csv = "round,engine,wal,threads,ops\n1,lsm-demo,0,1,800000\n1,lsm-demo,0,2,900000\n";
/// let s = Scaling { source: "scaling.csv".into(), series: scaling_series(csv) };
/// assert_eq!(s.series[0].points.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    /// Where the CSV is, as the report names it.
    pub source: String,
    /// Its series ([`scaling_series`]).
    pub series: Vec<Series>,
}

/// What the report shows; [`Report::markdown`] and [`Report::html`] write
/// it.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use benches::report::{Machine, Report};
/// let report = Report {
///     date: "2026-12-05 10:00 UTC".into(),
///     commit: "abc1234".into(),
///     machine: Machine { cores: 2, model: "Some CPU".into(), kernel: "Linux 6.1 x86_64".into() },
///     groups: BTreeMap::new(),
///     engine_table: None,
///     scaling: None,
///     profiles: None,
///     link_base: String::new(),
/// };
/// assert!(report.html().contains("Machine: 2 cores, Some CPU, Linux 6.1 x86_64"));
/// assert!(report.markdown().starts_with("# Comparison report"));
/// ```
#[derive(Debug, Clone)]
pub struct Report {
    /// When the report ran.
    pub date: String,
    /// The commit it ran at.
    pub commit: String,
    /// Where it ran.
    pub machine: Machine,
    /// Criterion's results by group ([`group_measurements`]).
    pub groups: BTreeMap<String, Vec<Series>>,
    /// The engine against RocksDB, as Markdown (a paragraph and a table).
    pub engine_table: Option<String>,
    /// The engine's ops/s against threads, beside RocksDB's.
    pub scaling: Option<Scaling>,
    /// `benches/PROFILES.md`, as the report should quote it.
    pub profiles: Option<String>,
    /// Put in front of the profiles' relative links in the HTML page.
    pub link_base: String,
}

const INTERVAL_NOTE: &str = "Throughput in operations per second: criterion's mean, \
     with ± half the width of its 95% confidence interval as a share of the mean \
     (the bars in the charts). Compare contenders within one group, as ratios.";

fn scaling_note(source: &str) -> String {
    format!(
        "fillrandom, the same number of writes split over the threads, each \
         engine with its log (unsynced) and without. Read from `{source}`, written by \
         `benches/scripts/thread-scaling.sh`; this report does not rerun it, so \
         the machine line above does not apply to it. Points are medians of the \
         rounds; bars and ± span the lowest to the highest round."
    )
}

fn profiles_note(machine: &Machine) -> String {
    format!(
        "Copied from `benches/PROFILES.md`. Each profile was taken on the \
         machine and day it names, which need not be this report's machine \
         ({machine})."
    )
}

/// Splits the profiles' first `# ` heading off as the section's title.
fn profiles_title(md: &str) -> (&str, &str) {
    match md.split_once('\n') {
        Some((first, rest)) if first.starts_with("# ") => (first[2..].trim(), rest),
        _ => ("Profiles", md),
    }
}

fn columns(series: &[Series]) -> Vec<(Option<u32>, String)> {
    let mut cols: Vec<(Option<u32>, String)> = Vec::new();
    for s in series {
        for p in &s.points {
            let key = match p.threads {
                Some(n) => (Some(n), format!("{n} thr")),
                None if p.param.is_empty() => (None, "ops/s".to_string()),
                None => (None, p.param.clone()),
            };
            if !cols.contains(&key) {
                cols.push(key);
            }
        }
    }
    cols.sort_by(|a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.1.cmp(&b.1),
    });
    cols
}

fn cell<'a>(s: &'a Series, col: &(Option<u32>, String)) -> Option<&'a Point> {
    s.points.iter().find(|p| match col.0 {
        Some(n) => p.threads == Some(n),
        None => {
            p.threads.is_none() && (p.param == col.1 || (p.param.is_empty() && col.1 == "ops/s"))
        }
    })
}

/// `±3%`: half the interval's width as a share of the point.
fn spread(p: &Point) -> Option<String> {
    let (lo, hi) = p.interval?;
    let pct = (hi - lo) / 2.0 / p.ops * 100.0;
    Some(if pct < 1.0 {
        format!("±{pct:.1}%")
    } else {
        format!("±{pct:.0}%")
    })
}

fn md_table(md: &mut String, series: &[Series]) {
    let cols = columns(series);
    md.push_str("| contender |");
    for c in &cols {
        let _ = write!(md, " {} |", c.1);
    }
    md.push_str("\n|---|");
    md.push_str(&"---:|".repeat(cols.len()));
    md.push('\n');
    for s in series {
        let _ = write!(md, "| {} |", s.label());
        for c in &cols {
            match cell(s, c) {
                Some(p) => match spread(p) {
                    Some(sp) => {
                        let _ = write!(md, " {} {sp} |", fmt_ops(p.ops));
                    }
                    None => {
                        let _ = write!(md, " {} |", fmt_ops(p.ops));
                    }
                },
                None => md.push_str(" - |"),
            }
        }
        md.push('\n');
    }
}

fn html_table(html: &mut String, series: &[Series], colors: &ColorMap) {
    let cols = columns(series);
    html.push_str("<table class=\"num\"><tr><th>contender</th>");
    for c in &cols {
        let _ = write!(html, "<th>{}</th>", esc(&c.1));
    }
    html.push_str("</tr>\n");
    for s in series {
        let _ = write!(
            html,
            "<tr><td><span class=\"sw\" style=\"background:{}\"></span>{}</td>",
            colors.color(&s.contender),
            esc(&s.label())
        );
        for c in &cols {
            match cell(s, c) {
                Some(p) => {
                    let title = p
                        .interval
                        .map(|(lo, hi)| format!(" title=\"{} to {}\"", fmt_ops(lo), fmt_ops(hi)))
                        .unwrap_or_default();
                    let sp = spread(p)
                        .map(|sp| format!(" <small>{sp}</small>"))
                        .unwrap_or_default();
                    let _ = write!(html, "<td{title}>{}{sp}</td>", fmt_ops(p.ops));
                }
                None => html.push_str("<td>-</td>"),
            }
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
}

/// Adds a `#` to each heading outside code blocks: a quoted file's `# `
/// title becomes a section of the report.
fn demote_headings(md: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in md.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if !in_code && line.starts_with('#') {
            out.push('#');
        }
        out.push_str(line);
    }
    out
}

/// "Machine: " in the profiles' text names where they were taken.
fn relabel_machine(profiles: &str) -> String {
    profiles.replace("Machine: ", "Profiled on: ")
}

impl Report {
    fn colors(&self) -> ColorMap {
        let mut charts: Vec<Vec<&str>> = self
            .groups
            .values()
            .map(|series| series.iter().map(|s| s.contender.as_str()).collect())
            .collect();
        if let Some(s) = &self.scaling {
            charts.push(s.series.iter().map(|s| s.contender.as_str()).collect());
        }
        ColorMap::new(charts)
    }

    /// Markdown: the stamp, the engine's table and thread scaling, one
    /// table per group (rows: contenders; columns: threads or parameters;
    /// cells: operations per second), then the profiles.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use benches::report::{Machine, Report};
    /// let report = Report {
    ///     date: "2026-12-05 10:00 UTC".into(),
    ///     commit: "abc1234".into(),
    ///     machine: Machine { cores: 2, model: "Some CPU".into(), kernel: "Linux 6.1 x86_64".into() },
    ///     groups: BTreeMap::new(),
    ///     engine_table: None,
    ///     scaling: None,
    ///     profiles: Some("# Profiles\n\n## Primitives\n\n- arena: memset\n".into()),
    ///     link_base: String::new(),
    /// };
    /// let md = report.markdown();
    /// assert!(md.contains("## Profiles\n") && md.contains("### Primitives"));
    /// ```
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "# Comparison report\n\nMachine: {}\\\nRun: {}, commit {}\n\n{INTERVAL_NOTE}\n",
            self.machine, self.date, self.commit
        );
        if self.engine_table.is_some() || self.scaling.is_some() {
            md.push_str("\n## engine\n");
        }
        if let Some(e) = &self.engine_table {
            let _ = write!(md, "\n{e}\n");
        }
        if let Some(s) = &self.scaling {
            let _ = write!(
                md,
                "\n### fillrandom against threads\n\n{}\n\n",
                scaling_note(&s.source)
            );
            md_table(&mut md, &s.series);
        }
        for (name, series) in &self.groups {
            let _ = write!(md, "\n## {name}\n\n");
            md_table(&mut md, series);
        }
        if let Some(p) = &self.profiles {
            let (title, body) = profiles_title(p);
            let _ = write!(
                md,
                "\n---\n\n## {title}\n\n{}\n{}",
                profiles_note(&self.machine),
                demote_headings(&relabel_machine(body))
            );
        }
        md
    }

    /// The self-contained HTML page: no scripts, no external files.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use benches::report::{Machine, Report};
    /// let report = Report {
    ///     date: "2026-12-05 10:00 UTC".into(),
    ///     commit: "abc1234".into(),
    ///     machine: Machine { cores: 2, model: "Some CPU".into(), kernel: "Linux 6.1 x86_64".into() },
    ///     groups: BTreeMap::new(),
    ///     engine_table: None,
    ///     scaling: None,
    ///     profiles: Some("# Profiles\n\n## Primitives\n\n- arena: memset\n".into()),
    ///     link_base: String::new(),
    /// };
    /// let html = report.html();
    /// assert!(html.contains("<li>arena: memset</li>") && !html.contains("<script"));
    /// ```
    pub fn html(&self) -> String {
        let colors = self.colors();
        let mut html = String::from(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>lsm-write-path comparison report</title><style>\
             body{font-family:system-ui,sans-serif;max-width:1040px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
             table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px}\
             table.num td,table.num th{text-align:right}table.num td:first-child,table.num th:first-child{text-align:left}\
             td small{color:#777}th{background:#f4f4f4}\
             .sw{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}\
             h2{margin-top:2em;border-bottom:1px solid #ddd}.stamp{color:#555}.note{color:#555;font-size:0.95em}\
             code{background:#f3f3f3;padding:0 3px;border-radius:3px;font-size:0.92em}\
             pre{background:#f6f6f6;padding:0.6em;overflow-x:auto}pre code{background:none;padding:0}\
             svg{display:block;margin:0.5em 0;max-width:100%;height:auto}nav ul{columns:3}</style></head>\
             <body><h1>lsm-write-path comparison report</h1>\n",
        );
        let _ = writeln!(
            html,
            "<p class=\"stamp\">Machine: {}<br>Run: {}, commit {}</p>\n<p>{}</p>",
            esc(&self.machine.to_string()),
            esc(&self.date),
            esc(&self.commit),
            esc(INTERVAL_NOTE)
        );
        let has_engine = self.engine_table.is_some() || self.scaling.is_some();
        // Contents.
        html.push_str("<nav><ul>");
        if has_engine {
            html.push_str("<li><a href=\"#section-engine\">engine</a></li>");
        }
        for name in self.groups.keys() {
            let _ = write!(
                html,
                "<li><a href=\"#group-{}\">{}</a></li>",
                markdown::slug(name),
                esc(name)
            );
        }
        if self.profiles.is_some() {
            html.push_str("<li><a href=\"#profiles\">profiles</a></li>");
        }
        html.push_str("</ul></nav>\n");

        if has_engine {
            html.push_str("<h2 id=\"section-engine\">engine</h2>\n");
        }
        if let Some(e) = &self.engine_table {
            html.push_str(&markdown::to_html(e, "", 2));
        }
        if let Some(s) = &self.scaling {
            let _ = writeln!(
                html,
                "<h3 id=\"section-engine-threads\">fillrandom against threads</h3>\n<p class=\"note\">{}</p>",
                markdown::inline_to_html(&scaling_note(&s.source), "")
            );
            if let Some(svg) = svg_chart(&s.series, "ops", &colors) {
                html.push_str(&svg);
            }
            html_table(&mut html, &s.series, &colors);
        }
        for (name, series) in &self.groups {
            let _ = writeln!(
                html,
                "<h2 id=\"group-{}\">{}</h2>",
                markdown::slug(name),
                esc(name)
            );
            if let Some(svg) = svg_chart(series, "ops", &colors) {
                html.push_str(&svg);
            }
            html_table(&mut html, series, &colors);
        }
        if let Some(p) = &self.profiles {
            let (title, body) = profiles_title(p);
            let _ = writeln!(
                html,
                "<h2 id=\"profiles\">{}</h2>\n<p class=\"note\">{}</p>",
                esc(title),
                markdown::inline_to_html(&profiles_note(&self.machine), "")
            );
            html.push_str(&markdown::to_html(
                &relabel_machine(body),
                &self.link_base,
                1,
            ));
        }
        html.push_str("</body></html>\n");
        html
    }
}

/// The engine issue's targets: ratio of our ops/s to RocksDB 7.8.3's in
/// each `vs-rocksdb.sh` scenario (median of 3 alternating runs there).
pub const ENGINE_TARGETS: [(&str, f64); 9] = [
    ("fillseq-skiplist-t1", 1.5),
    ("fillrandom-skiplist-t1", 1.5),
    ("fillrandom-skiplist-t2", 1.5),
    ("fillrandom-skiplist-t8", 2.0),
    ("fillrandom-vector-t1", 1.0),
    ("fillrandom-vector-t2-cc", 1.5),
    ("fillrandom-wal-t2", 1.3),
    ("fillsync-wal-t8", 1.5),
    ("readrandom-t1", 1.0),
];

/// The engine table from `vs-rocksdb.sh`'s output (a header line, then
/// `scenario rocksdb_ops/s lsm-demo_ops/s ratio` lines), with each
/// scenario's target, whether it was met and, for a miss, where the profile
/// that explains it is: a link to the `### <scenario>` section of
/// `profiles` (`benches/PROFILES.md`, quoted at the end of the report), or
/// a note that none is recorded.
///
/// # Examples
///
/// ```
/// let md = benches::report::engine_target_table("fillsync-wal-t8 100 110 1.10\n", "### fillsync-wal-t8\n");
/// assert!(md.contains("| 1.5 | no | [profile](#fillsync-wal-t8) |"));
/// ```
pub fn engine_target_table(vs_rocksdb_output: &str, profiles: &str) -> String {
    let mut md = String::from(
        "| scenario | RocksDB 7.8.3 ops/s | lsm-demo ops/s | ratio | target | met | cause of a miss |\n\
         |---|---:|---:|---:|---:|---|---|\n",
    );
    for line in vs_rocksdb_output.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [name, rocks, ours, ratio] = f[..] else {
            continue;
        };
        let Ok(measured) = ratio.parse::<f64>() else {
            continue; // the header, or "n/a"
        };
        let target = ENGINE_TARGETS.iter().find(|(n, _)| *n == name).map(|t| t.1);
        let (target_cell, met, cause) = match target {
            None => ("-".to_string(), "", String::new()),
            Some(t) if measured >= t => (format!("{t:.1}"), "yes", String::new()),
            Some(t) => {
                let cause = if profiles.contains(&format!("### {name}")) {
                    format!("[profile](#{})", markdown::slug(name))
                } else {
                    "no profile recorded yet".to_string()
                };
                (format!("{t:.1}"), "no", cause)
            }
        };
        let count = |s: &str| {
            s.parse::<f64>()
                .map_or_else(|_| s.to_string(), |v| group_digits(v.round() as u64))
        };
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {ratio} | {target_cell} | {met} | {cause} |",
            count(rocks),
            count(ours)
        );
    }
    md
}

/// `1234567` as `1,234,567`.
fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(threads: Option<u32>, param: &str, ops: f64) -> Point {
        Point {
            threads,
            param: param.into(),
            ops,
            interval: None,
        }
    }

    fn groups() -> BTreeMap<String, Vec<Series>> {
        let mut g = BTreeMap::new();
        g.insert(
            "insert".to_string(),
            vec![
                Series {
                    contender: "ours".into(),
                    variant: String::new(),
                    points: vec![
                        Point {
                            interval: Some((1.9e6, 2.1e6)),
                            ..point(Some(1), "1t", 2e6)
                        },
                        point(Some(2), "2t", 3.5e6),
                    ],
                },
                Series {
                    contender: "peer".into(),
                    variant: String::new(),
                    points: vec![point(Some(1), "1t", 1e6)],
                },
            ],
        );
        g.insert(
            "scan".to_string(),
            vec![Series {
                contender: "ours".into(),
                variant: String::new(),
                points: vec![point(None, "", 9e6)],
            }],
        );
        g
    }

    fn report() -> Report {
        Report {
            date: "2026-12-05 10:00 UTC".into(),
            commit: "abc1234".into(),
            machine: Machine {
                cores: 2,
                model: "Test <CPU>".into(),
                kernel: "Linux 6.1 x86_64".into(),
            },
            groups: groups(),
            engine_table: Some("| a | b |\n|---|---|\n| 1 | 2 |".into()),
            scaling: None,
            profiles: Some(
                "# Profiles\n\nMachine: another VM.\n\n## Engine\n\n### t8\n\nx\n".into(),
            ),
            link_base: String::new(),
        }
    }

    #[test]
    fn markdown_has_a_row_per_contender_and_a_column_per_thread_count() {
        let md = report().markdown();
        assert!(md.contains("| contender | 1 thr | 2 thr |"), "{md}");
        assert!(md.contains("| ours | 2.00 M ±5% | 3.50 M |"), "{md}");
        assert!(md.contains("| peer | 1.00 M | - |"), "{md}");
        assert!(
            md.contains("| contender | ops/s |\n|---|---:|\n| ours | 9.00 M |"),
            "{md}"
        );
        assert!(md.contains("## engine"));
        assert!(md.contains("Machine: 2 cores, Test <CPU>, Linux 6.1 x86_64"));
        assert!(md.contains("## Profiles\n"), "{md}");
        assert!(md.contains("\n### Engine\n\n#### t8\n"), "{md}");
        assert!(md.contains("Profiled on: another VM."), "{md}");
        assert!(!md.contains("Machine: another"), "{md}");
    }

    #[test]
    fn engine_targets_are_checked_and_misses_link_to_their_profile() {
        let output = "scenario rocksdb_ops/s lsm-demo_ops/s ratio\n\
                      fillseq-skiplist-t1 100 200 2.00\n\
                      fillsync-wal-t8 9734 13877 1.43\n\
                      fillrandom-wal-t2 100 120 1.20\n\
                      fillrandom-vector-t2 739751 541358 0.73\n\
                      readrandom-t1 0 0 n/a\n";
        let profiles = "# Profiles\n### fillsync-wal-t8\nfsync bound\n";
        let md = engine_target_table(output, profiles);
        assert!(
            md.contains("| fillseq-skiplist-t1 | 100 | 200 | 2.00 | 1.5 | yes |  |"),
            "{md}"
        );
        assert!(
            md.contains(
                "| fillsync-wal-t8 | 9,734 | 13,877 | 1.43 | 1.5 | no | [profile](#fillsync-wal-t8) |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| 1.3 | no | no profile recorded yet |"),
            "{md}"
        );
        assert!(
            md.contains("| fillrandom-vector-t2 | 739,751 | 541,358 | 0.73 | - |  |  |"),
            "{md}"
        );
        assert!(
            !md.contains("readrandom-t1"),
            "unmeasured rows are left out: {md}"
        );
        assert!(!md.contains("| scenario | rocksdb"), "{md}");
    }

    #[test]
    fn html_is_self_contained_with_a_chart_per_threaded_group() {
        let html = report().html();
        assert_eq!(
            html.matches("<svg").count(),
            1,
            "only the threaded group gets a chart"
        );
        assert_eq!(html.matches("<polyline").count(), 2);
        assert_eq!(html.matches("class=\"err\"").count(), 1, "one interval");
        assert!(html.contains("Test &lt;CPU&gt;"));
        assert!(!html.contains("<script") && !html.contains("src="));
        assert!(
            html.contains(">1</td><td style=\"text-align:left\">2</td>"),
            "{html}"
        );
        // The profiles as HTML, their machine line relabelled.
        assert!(html.contains("<h2 id=\"profiles\">Profiles</h2>"), "{html}");
        assert!(html.contains("<h3 id=\"engine\">Engine</h3>"), "{html}");
        assert!(
            html.contains("<h2 id=\"section-engine\">engine</h2>"),
            "{html}"
        );
        assert!(html.contains("<p>Profiled on: another VM.</p>"), "{html}");
    }

    #[test]
    fn one_colour_per_contender_in_every_chart() {
        let html = report().html();
        let colors = report().colors();
        let ours = colors.color("ours");
        assert_ne!(ours, colors.color("peer"));
        // The swatch of `ours` has the same colour in both groups' tables.
        assert_eq!(
            html.matches(&format!("background:{ours}\"></span>ours<"))
                .count(),
            2,
            "{html}"
        );
    }

    #[test]
    fn thread_scaling_csv_gives_medians_and_ranges() {
        let csv = "round,engine,wal,threads,ops\n\
                   1,lsm-demo,1,1,500\n1,rocksdb,1,1,250\n\
                   2,lsm-demo,1,1,560\n2,rocksdb,1,1,240\n\
                   1,lsm-demo,1,2,600\n2,lsm-demo,1,2,700\n";
        let s = scaling_series(csv);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].label(), "lsm-demo log on, unsynced");
        assert_eq!(s[0].points[0].ops, 530.0);
        assert_eq!(s[0].points[1].interval, Some((600.0, 700.0)));
        assert_eq!(s[1].contender, "rocksdb");
    }

    #[test]
    fn cpu_model_from_proc_cpuinfo() {
        let info =
            "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n";
        assert_eq!(
            cpu_model(info).as_deref(),
            Some("Intel(R) Xeon(R) Processor")
        );
        assert_eq!(cpu_model("processor : 0\n"), None);
    }
}
