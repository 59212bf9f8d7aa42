//! Turning criterion's results into the comparison report: Markdown tables
//! and one self-contained HTML page with inline SVG charts.
//!
//! [`Report`] holds what the page shows; [`chart`] draws the charts and
//! [`markdown`] turns the Markdown texts the page quotes into HTML.

use std::collections::BTreeMap;
use std::fmt::Write as _;

pub mod chart;
mod data;
mod engine;
mod machine;
pub mod markdown;

use chart::{ColorMap, fmt_ops, svg_chart};

pub use data::{Measurement, Point, Series, group_measurements, parse_threads, scaling_series};
pub use engine::{ENGINE_TARGETS, engine_target_table};
pub use machine::Machine;

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

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests;
