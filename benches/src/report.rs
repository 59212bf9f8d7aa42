//! Turning criterion's results into the comparison report: Markdown tables
//! and one self-contained HTML page with inline SVG plots.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One criterion benchmark's result.
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
    ///     elements_per_iter: Some(1e6),
    /// };
    /// assert_eq!(m.ops_per_sec(), 5e5);
    /// ```
    pub fn ops_per_sec(&self) -> f64 {
        self.elements_per_iter.unwrap_or(1.0) / (self.nanos_per_iter * 1e-9)
    }
}

/// One contender's points in a group: (threads, parameter, ops/s).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Contender and the non-thread part of the parameter.
    pub label: String,
    /// Its measurements.
    pub points: Vec<(Option<u32>, String, f64)>,
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

fn fmt_ops(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} k", v / 1e3)
    } else {
        format!("{v:.1}")
    }
}

/// The distinct columns of a group, thread counts first in order.
fn columns(series: &[Series]) -> Vec<(Option<u32>, String)> {
    let mut cols: Vec<(Option<u32>, String)> = Vec::new();
    for s in series {
        for (t, v, _) in &s.points {
            let key = match t {
                Some(n) => (Some(*n), format!("{n} thr")),
                None => (None, v.clone()),
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

fn cell(s: &Series, col: &(Option<u32>, String)) -> Option<f64> {
    s.points
        .iter()
        .find(|(t, v, _)| match col.0 {
            Some(n) => *t == Some(n),
            None => t.is_none() && *v == col.1,
        })
        .map(|p| p.2)
}

/// Markdown: one table per group (rows: contenders; columns: threads or
/// parameters; cells: operations per second), then the engine's table.
pub fn markdown_tables(
    stamp: &str,
    groups: &BTreeMap<String, Vec<Series>>,
    engine: Option<&str>,
) -> String {
    let mut md = format!(
        "# Comparison report\n\n{stamp}\n\nThroughput in operations per second (criterion means).\n"
    );
    for (name, series) in groups {
        let cols = columns(series);
        let _ = write!(md, "\n## {name}\n\n| contender |");
        for c in &cols {
            let _ = write!(md, " {} |", c.1);
        }
        md.push_str("\n|---|");
        md.push_str(&"---:|".repeat(cols.len()));
        md.push('\n');
        for s in series {
            let _ = write!(md, "| {} |", s.label);
            for c in &cols {
                let _ = write!(
                    md,
                    " {} |",
                    cell(s, c).map(fmt_ops).unwrap_or_else(|| "-".into())
                );
            }
            md.push('\n');
        }
    }
    if let Some(e) = engine {
        let _ = write!(md, "\n## engine\n\n{e}\n");
    }
    md
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
/// that explains it is: the `### <scenario>` section of `profiles`
/// (`benches/PROFILES.md`), or a note that none is recorded.
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
                    format!("profiled: PROFILES.md, {name}")
                } else {
                    "no profile recorded yet".to_string()
                };
                (format!("{t:.1}"), "no", cause)
            }
        };
        let _ = writeln!(
            md,
            "| {name} | {rocks} | {ours} | {ratio} | {target_cell} | {met} | {cause} |"
        );
    }
    md
}

const COLORS: [&str; 8] = [
    "#1b6ca8", "#d1495b", "#66a182", "#edae49", "#8d6a9f", "#00798c", "#30343f", "#e07a5f",
];

/// An SVG line chart of throughput against threads; `None` when the group
/// has fewer than two thread counts.
pub fn svg_chart(title: &str, series: &[Series]) -> Option<String> {
    let threads: Vec<u32> = {
        let mut t: Vec<u32> = series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.0))
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    if threads.len() < 2 {
        return None;
    }
    let max = series
        .iter()
        .flat_map(|s| s.points.iter().filter(|p| p.0.is_some()).map(|p| p.2))
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let (w, h, left, right, top, bottom) = (700.0, 320.0, 70.0, 250.0, 30.0, 40.0);
    let plot_w = w - left - right;
    let plot_h = h - top - bottom;
    let x_of = |t: u32| {
        let i = threads.iter().position(|&x| x == t).unwrap_or(0) as f64;
        left + plot_w * i / (threads.len() - 1) as f64
    };
    let y_of = |v: f64| top + plot_h * (1.0 - v / max);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(
        svg,
        r#"<text x="{left}" y="18" font-size="13" font-weight="bold">{}</text>"#,
        esc(title)
    );
    // Axes and grid.
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        let y = y_of(v);
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + plot_w,
            left - 6.0,
            y + 4.0,
            fmt_ops(v)
        );
    }
    for &t in &threads {
        let x = x_of(t);
        let _ = write!(
            svg,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{t}</text>"#,
            top + plot_h + 16.0
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">threads</text>"#,
        left + plot_w / 2.0,
        h - 6.0
    );
    let mut legend_y = top + 10.0;
    for (i, s) in series.iter().enumerate() {
        let mut pts: Vec<(u32, f64)> = s
            .points
            .iter()
            .filter_map(|p| p.0.map(|t| (t, p.2)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by_key(|p| p.0);
        let color = COLORS[i % COLORS.len()];
        let path: Vec<String> = pts
            .iter()
            .map(|&(t, v)| format!("{:.1},{:.1}", x_of(t), y_of(v)))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        for &(t, v) in &pts {
            let _ = write!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{}: {} ops/s at {t} threads</title></circle>"#,
                x_of(t),
                y_of(v),
                esc(&s.label),
                fmt_ops(v)
            );
        }
        let lx = left + plot_w + 12.0;
        let _ = write!(
            svg,
            r#"<rect x="{lx:.1}" y="{:.1}" width="10" height="10" fill="{color}"/><text x="{:.1}" y="{legend_y:.1}">{}</text>"#,
            legend_y - 9.0,
            lx + 14.0,
            esc(&s.label)
        );
        legend_y += 16.0;
    }
    svg.push_str("</svg>");
    Some(svg)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Minimal Markdown-table-to-HTML for the engine section.
fn md_table_to_html(md: &str) -> String {
    let mut html = String::new();
    let mut in_table = false;
    for line in md.lines() {
        let l = line.trim();
        if l.starts_with('|') {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            if cells
                .iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
            {
                continue;
            }
            if !in_table {
                html.push_str("<table><tr>");
                for c in &cells {
                    let _ = write!(html, "<th>{}</th>", esc(c));
                }
                html.push_str("</tr>");
                in_table = true;
            } else {
                html.push_str("<tr>");
                for c in &cells {
                    let _ = write!(html, "<td>{}</td>", esc(c));
                }
                html.push_str("</tr>");
            }
        } else {
            if in_table {
                html.push_str("</table>");
                in_table = false;
            }
            if !l.is_empty() {
                let _ = write!(html, "<p>{}</p>", esc(l));
            }
        }
    }
    if in_table {
        html.push_str("</table>");
    }
    html
}

/// The self-contained HTML page: no scripts, no external files.
pub fn html_page(
    stamp: &str,
    groups: &BTreeMap<String, Vec<Series>>,
    engine: Option<&str>,
) -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>lsm-write-path comparison report</title><style>\
         body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}\
         table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
         td:first-child,th:first-child{text-align:left}h2{margin-top:2em;border-bottom:1px solid #eee}\
         .stamp{color:#666}</style></head><body><h1>lsm-write-path comparison report</h1>",
    );
    let _ = write!(
        html,
        "<p class=\"stamp\">{}</p><p>Throughput in operations per second (criterion means of a short run; compare contenders within one group, as ratios).</p>",
        esc(stamp)
    );
    if let Some(e) = engine {
        let _ = write!(html, "<h2>engine</h2>{}", md_table_to_html(e));
    }
    for (name, series) in groups {
        let _ = write!(html, "<h2>{}</h2>", esc(name));
        if let Some(svg) = svg_chart(name, series) {
            html.push_str(&svg);
        }
        let cols = columns(series);
        html.push_str("<table><tr><th>contender</th>");
        for c in &cols {
            let _ = write!(html, "<th>{}</th>", esc(&c.1));
        }
        html.push_str("</tr>");
        for s in series {
            let _ = write!(html, "<tr><td>{}</td>", esc(&s.label));
            for c in &cols {
                let _ = write!(
                    html,
                    "<td>{}</td>",
                    cell(s, c).map(fmt_ops).unwrap_or_else(|| "-".into())
                );
            }
            html.push_str("</tr>");
        }
        html.push_str("</table>");
    }
    html.push_str("</body></html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups() -> BTreeMap<String, Vec<Series>> {
        let mut g = BTreeMap::new();
        g.insert(
            "insert".to_string(),
            vec![
                Series {
                    label: "ours".into(),
                    points: vec![(Some(1), "1t".into(), 2e6), (Some(2), "2t".into(), 3.5e6)],
                },
                Series {
                    label: "peer".into(),
                    points: vec![(Some(1), "1t".into(), 1e6)],
                },
            ],
        );
        g.insert(
            "scan".to_string(),
            vec![Series {
                label: "ours".into(),
                points: vec![(None, "full".into(), 9e6)],
            }],
        );
        g
    }

    #[test]
    fn markdown_has_a_row_per_contender_and_a_column_per_thread_count() {
        let md = markdown_tables("stamp", &groups(), Some("| a | b |\n|---|---|\n| 1 | 2 |"));
        assert!(md.contains("| contender | 1 thr | 2 thr |"), "{md}");
        assert!(md.contains("| ours | 2.00 M | 3.50 M |"), "{md}");
        assert!(md.contains("| peer | 1.00 M | - |"), "{md}");
        assert!(md.contains("| ours | 9.00 M |"), "{md}");
        assert!(md.contains("## engine"));
    }

    #[test]
    fn engine_targets_are_checked_and_misses_point_at_their_profile() {
        let output = "scenario rocksdb_ops/s lsm-demo_ops/s ratio\n\
                      fillseq-skiplist-t1 100 200 2.00\n\
                      fillsync-wal-t8 100 110 1.10\n\
                      fillrandom-wal-t2 100 120 1.20\n\
                      fillrandom-vector-t2 100 90 0.90\n\
                      readrandom-t1 0 0 n/a\n";
        let profiles = "# Profiles\n### fillsync-wal-t8\nfsync bound\n";
        let md = engine_target_table(output, profiles);
        assert!(
            md.contains("| fillseq-skiplist-t1 | 100 | 200 | 2.00 | 1.5 | yes |  |"),
            "{md}"
        );
        assert!(
            md.contains("| fillsync-wal-t8 | 100 | 110 | 1.10 | 1.5 | no | profiled: PROFILES.md, fillsync-wal-t8 |"),
            "{md}"
        );
        assert!(
            md.contains("| 1.3 | no | no profile recorded yet |"),
            "{md}"
        );
        assert!(
            md.contains("| fillrandom-vector-t2 | 100 | 90 | 0.90 | - |  |  |"),
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
        let html = html_page(
            "stamp <x>",
            &groups(),
            Some("| a | b |\n|---|---|\n| 1 | 2 |"),
        );
        assert_eq!(
            html.matches("<svg").count(),
            1,
            "only the threaded group gets a chart"
        );
        assert_eq!(html.matches("<polyline").count(), 2);
        assert!(html.contains("stamp &lt;x&gt;"));
        assert!(!html.contains("<script") && !html.contains("src="));
        assert!(html.contains("<td>1</td><td>2</td>"));
    }
}
