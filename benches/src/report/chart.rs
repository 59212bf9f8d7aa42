//! Line charts of throughput against threads as inline SVG: one colour per
//! contender across every chart of a report, round axis ticks, and error
//! bars from each point's interval.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::{Series, esc};

/// Line colours, most distinct first: the Okabe-Ito palette, which stays
/// apart for the common colour-vision deficiencies, without its yellow (too
/// pale for a line on white), then a brown and a grey for the rare chart
/// with more contenders.
pub const PALETTE: [&str; 9] = [
    "#0072B2", // blue
    "#D55E00", // vermillion
    "#009E73", // bluish green
    "#CC79A7", // reddish purple
    "#E69F00", // orange
    "#56B4E9", // sky blue
    "#000000", // black
    "#8C6D46", // brown
    "#999999", // grey
];

/// Dash patterns that tell apart the variants of one contender in a chart
/// (for example batch sizes, or the engine with and without its log).
const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// A fixed colour for each contender name, for all the charts of a report.
///
/// Contenders that share a chart get different colours; the greedy choice
/// takes the contenders that appear in the most charts first and gives each
/// the first palette colour no chart neighbour holds yet. Only when a
/// contender has more neighbours than the palette has colours does a colour
/// repeat within a chart.
///
/// # Examples
///
/// ```
/// use benches::report::chart::ColorMap;
/// let colors = ColorMap::new([vec!["ours", "mutex"], vec!["ours", "bumpalo"]]);
/// assert_ne!(colors.color("ours"), colors.color("mutex"));
/// assert_ne!(colors.color("ours"), colors.color("bumpalo"));
/// // Never in one chart together: they may share a colour.
/// assert_eq!(colors.color("mutex"), colors.color("bumpalo"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ColorMap {
    colors: BTreeMap<String, &'static str>,
}

impl ColorMap {
    /// Assigns colours to the contenders of `charts`, each chart given as
    /// the contender names it draws.
    ///
    /// # Examples
    ///
    /// ```
    /// use benches::report::chart::ColorMap;
    /// let colors = ColorMap::new([["a", "b", "c"]]);
    /// assert_eq!(colors.color("a"), "#0072B2");
    /// ```
    pub fn new<C, N>(charts: impl IntoIterator<Item = C>) -> Self
    where
        C: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        let mut neighbours: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut charts_of: BTreeMap<String, usize> = BTreeMap::new();
        for chart in charts {
            let names: BTreeSet<String> =
                chart.into_iter().map(|n| n.as_ref().to_string()).collect();
            for n in &names {
                *charts_of.entry(n.clone()).or_default() += 1;
                let others = neighbours.entry(n.clone()).or_default();
                others.extend(names.iter().filter(|m| *m != n).cloned());
            }
        }
        let mut order: Vec<&String> = charts_of.keys().collect();
        order.sort_by(|a, b| charts_of[*b].cmp(&charts_of[*a]).then(a.cmp(b)));
        let mut colors: BTreeMap<String, &'static str> = BTreeMap::new();
        for name in order {
            let taken: Vec<&str> = neighbours[name]
                .iter()
                .filter_map(|m| colors.get(m).copied())
                .collect();
            let color = PALETTE
                .iter()
                .copied()
                .find(|c| !taken.contains(c))
                // More neighbours than colours: the one its neighbours use least.
                .unwrap_or_else(|| {
                    PALETTE
                        .iter()
                        .copied()
                        .min_by_key(|c| taken.iter().filter(|t| *t == c).count())
                        .expect("the palette is not empty")
                });
            colors.insert(name.clone(), color);
        }
        ColorMap { colors }
    }

    /// The colour of `contender`; grey for a name the map was not built with.
    ///
    /// # Examples
    ///
    /// ```
    /// use benches::report::chart::ColorMap;
    /// let colors = ColorMap::new([["a"]]);
    /// assert_eq!(colors.color("unknown"), "#999999");
    /// ```
    pub fn color(&self, contender: &str) -> &'static str {
        self.colors.get(contender).copied().unwrap_or("#999999")
    }
}

/// Round tick values for an axis from zero to at least `max`: multiples of
/// a step of 1, 2 or 5 times a power of ten, the smallest such step that
/// needs at most `max_intervals` intervals.
///
/// # Examples
///
/// ```
/// use benches::report::chart::nice_ticks;
/// assert_eq!(nice_ticks(36.1e6, 6), [0.0, 10e6, 20e6, 30e6, 40e6]);
/// assert_eq!(nice_ticks(0.9, 5), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
/// ```
pub fn nice_ticks(max: f64, max_intervals: usize) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let intervals = max_intervals.max(1) as f64;
    let mut exp = (max / intervals).log10().floor() as i32;
    loop {
        for m in [1.0, 2.0, 5.0] {
            // i * m * 10^exp, divided rather than multiplied by a negative
            // power so that 3 * 0.2 comes out as 0.6.
            let tick = |i: f64| {
                if exp >= 0 {
                    i * m * 10f64.powi(exp)
                } else {
                    i * m / 10f64.powi(-exp)
                }
            };
            let n = (max / tick(1.0) - 1e-9).ceil().max(1.0);
            if n <= intervals {
                return (0..=n as usize).map(|i| tick(i as f64)).collect();
            }
        }
        exp += 1;
    }
}

/// A scale for axis labels: the divisor and the word for it.
fn unit_of(top: f64) -> (f64, &'static str) {
    if top >= 1e9 {
        (1e9, "billion ")
    } else if top >= 1e6 {
        (1e6, "million ")
    } else if top >= 1e4 {
        (1e3, "thousand ")
    } else {
        (1.0, "")
    }
}

/// Tick labels in `divisor` units, with as many decimals as the step needs.
fn tick_labels(ticks: &[f64], divisor: f64) -> Vec<String> {
    let step = if ticks.len() > 1 {
        (ticks[1] - ticks[0]) / divisor
    } else {
        1.0
    };
    let decimals = (-(step.log10() + 1e-9).floor()).max(0.0) as usize;
    ticks
        .iter()
        .map(|t| format!("{:.*}", decimals, t / divisor))
        .collect()
}

/// `v` with three significant figures and a k/M/G suffix, as in the tables.
///
/// # Examples
///
/// ```
/// use benches::report::chart::fmt_ops;
/// assert_eq!(fmt_ops(1_234_567.0), "1.23 M");
/// assert_eq!(fmt_ops(98_765.0), "98.8 k");
/// assert_eq!(fmt_ops(512.0), "512");
/// ```
pub fn fmt_ops(v: f64) -> String {
    let (scaled, suffix) = if v >= 1e9 {
        (v / 1e9, " G")
    } else if v >= 1e6 {
        (v / 1e6, " M")
    } else if v >= 1e3 {
        (v / 1e3, " k")
    } else {
        (v, "")
    };
    let decimals = if scaled >= 100.0 {
        0
    } else if scaled >= 10.0 {
        1
    } else {
        2
    };
    format!("{scaled:.decimals$}{suffix}")
}

/// An SVG line chart of throughput against threads: one line per series
/// (colour from `colors` by contender, dash by variant), a bar over each
/// point that has an interval, titled axes (`unit` names what is counted
/// per second, e.g. `ops`), round ticks and a legend. The x axis is
/// logarithmic in threads. `None` when fewer than two thread counts are
/// measured.
///
/// # Examples
///
/// ```
/// use benches::report::chart::{ColorMap, svg_chart};
/// use benches::report::{Point, Series};
/// let line = Series {
///     contender: "ours".into(),
///     variant: String::new(),
///     points: vec![
///         Point { threads: Some(1), param: "1".into(), ops: 1e6, interval: Some((0.9e6, 1.1e6)) },
///         Point { threads: Some(2), param: "2".into(), ops: 2e6, interval: None },
///     ],
/// };
/// let colors = ColorMap::new([["ours"]]);
/// let svg = svg_chart(&[line], "ops", &colors).unwrap();
/// assert!(svg.contains("million ops/s") && svg.contains(">threads"));
/// ```
pub fn svg_chart(series: &[Series], unit: &str, colors: &ColorMap) -> Option<String> {
    let threads: Vec<u32> = {
        let mut t: Vec<u32> = series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.threads))
            .filter(|&t| t > 0)
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
        .flat_map(|s| s.points.iter().filter(|p| p.threads.is_some()))
        .map(|p| p.interval.map_or(p.ops, |(_, hi)| hi.max(p.ops)))
        .fold(0.0_f64, f64::max);
    let ticks = nice_ticks(max, 6);
    let top_value = *ticks.last().expect("at least two ticks");
    let (divisor, scale_word) = unit_of(top_value);
    let labels = tick_labels(&ticks, divisor);

    let legend_w = series
        .iter()
        .map(|s| s.label().chars().count())
        .max()
        .unwrap_or(0) as f64
        * 7.2
        + 44.0;
    let (plot_w, plot_h) = (560.0, 300.0);
    let (left, top, bottom) = (76.0, 16.0, 52.0);
    let w = (left + plot_w + 24.0 + legend_w).ceil();
    let h = top + plot_h + bottom;
    let (lo, hi) = (
        f64::from(threads[0]).log2(),
        f64::from(*threads.last().expect("two or more")).log2(),
    );
    // The outer points stay clear of the axis and of the plot's edge.
    let pad = 24.0;
    let x_of = |t: u32| left + pad + (plot_w - 2.0 * pad) * (f64::from(t).log2() - lo) / (hi - lo);
    let y_of = |v: f64| top + plot_h * (1.0 - v / top_value);

    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="13" role="img">"#
    );
    // Grid, y ticks and the axes.
    for (v, label) in ticks.iter().zip(&labels) {
        let y = y_of(*v);
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"##,
            left + plot_w,
            left - 8.0,
            y + 4.0,
        );
    }
    for &t in &threads {
        let x = x_of(t);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#444"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{t}</text>"##,
            top + plot_h,
            top + plot_h + 5.0,
            top + plot_h + 19.0
        );
    }
    let _ = write!(
        svg,
        r##"<path d="M{left} {top}V{:.1}H{:.1}" fill="none" stroke="#444"/>"##,
        top + plot_h,
        left + plot_w
    );
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">threads (logarithmic)</text>"#,
        left + plot_w / 2.0,
        top + plot_h + 40.0
    );
    let _ = write!(
        svg,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">throughput ({scale_word}{}/s)</text>"#,
        top + plot_h / 2.0,
        esc(unit)
    );

    // Variants of one contender differ by dash.
    let mut variants_of: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in series {
        let v = variants_of.entry(&s.contender).or_default();
        if !v.contains(&s.variant.as_str()) {
            v.push(&s.variant);
        }
    }
    let mut legend_y = top + 8.0;
    for s in series {
        let mut pts: Vec<_> = s
            .points
            .iter()
            .filter(|p| p.threads.is_some_and(|t| t > 0))
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by_key(|p| p.threads);
        let color = colors.color(&s.contender);
        let variant = variants_of[s.contender.as_str()]
            .iter()
            .position(|v| *v == s.variant)
            .unwrap_or(0);
        let dash = DASHES[variant % DASHES.len()];
        let dash_attr = if dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{dash}""#)
        };
        let path: Vec<String> = pts
            .iter()
            .map(|p| {
                format!(
                    "{:.1},{:.1}",
                    x_of(p.threads.expect("filtered")),
                    y_of(p.ops)
                )
            })
            .collect();
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2"{dash_attr} points="{}"/>"#,
            path.join(" ")
        );
        let label = esc(&s.label());
        for p in &pts {
            let t = p.threads.expect("filtered");
            let (x, y) = (x_of(t), y_of(p.ops));
            let mut tip = format!("{label}: {} {}/s at {t} threads", fmt_ops(p.ops), esc(unit));
            if let Some((l, u)) = p.interval {
                let (yl, yu) = (y_of(l), y_of(u));
                let _ = write!(
                    svg,
                    r#"<path class="err" d="M{x:.1} {yl:.1}V{yu:.1}M{:.1} {yl:.1}h8M{:.1} {yu:.1}h8" stroke="{color}" stroke-width="1.3" fill="none"/>"#,
                    x - 4.0,
                    x - 4.0,
                );
                let _ = write!(tip, " ({} to {})", fmt_ops(l), fmt_ops(u));
            }
            let _ = write!(
                svg,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{color}"><title>{tip}</title></circle>"#
            );
        }
        let lx = left + plot_w + 24.0;
        let _ = write!(
            svg,
            r#"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2.5"{dash_attr}/><circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"/><text x="{:.1}" y="{legend_y:.1}">{label}</text>"#,
            legend_y - 4.0,
            lx + 28.0,
            legend_y - 4.0,
            lx + 14.0,
            legend_y - 4.0,
            lx + 36.0,
        );
        legend_y += 18.0;
    }
    svg.push_str("</svg>");
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        // The old axis split 36.10 M into quarters: 9.03 M, 18.05 M, ...
        assert_eq!(nice_ticks(36.1e6, 6), [0.0, 10e6, 20e6, 30e6, 40e6]);
        assert_eq!(
            nice_ticks(1.01e6, 6),
            [0.0, 0.2e6, 0.4e6, 0.6e6, 0.8e6, 1e6, 1.2e6]
        );
        assert_eq!(nice_ticks(867.2e3, 6).last(), Some(&1e6));
        assert_eq!(nice_ticks(100.0, 5), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(nice_ticks(7.0, 6), [0.0, 2.0, 4.0, 6.0, 8.0]);
        for max in [0.37, 3.0, 12.5, 99.0, 4.4e5, 2.9e6, 7.7e8] {
            let t = nice_ticks(max, 6);
            assert!(t.len() >= 2 && t.len() <= 7, "{max}: {t:?}");
            assert!(*t.last().unwrap() >= max, "{max}: {t:?}");
            let step = t[1];
            let mantissa = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-9),
                "{max}: step {step}"
            );
        }
        // Degenerate input still gives an axis.
        assert!(nice_ticks(0.0, 6).len() >= 2);
        assert!(nice_ticks(f64::NAN, 6).len() >= 2);
    }

    #[test]
    fn tick_labels_take_the_decimals_of_the_step() {
        let ticks = nice_ticks(1.01e6, 6);
        let (div, word) = unit_of(*ticks.last().unwrap());
        assert_eq!(word, "million ");
        assert_eq!(
            tick_labels(&ticks, div),
            ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0", "1.2"]
        );
        let ticks = nice_ticks(36.1e6, 6);
        assert_eq!(tick_labels(&ticks, 1e6), ["0", "10", "20", "30", "40"]);
    }

    #[test]
    fn a_contender_keeps_its_colour_and_chart_neighbours_differ() {
        let charts = [
            vec!["mutex", "write_group", "ordered_publish"],
            vec!["mutex_vec", "write_group", "ordered_queue"],
            vec!["lsm-demo", "fjall"],
            vec!["lsm-demo", "rocksdb"],
        ];
        let colors = ColorMap::new(charts.clone());
        for chart in &charts {
            let mut seen: Vec<&str> = chart.iter().map(|n| colors.color(n)).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), chart.len(), "{chart:?}");
        }
        // Present in the most charts, so coloured first: the first colour.
        assert_eq!(colors.color("write_group"), PALETTE[0]);
        // The same map whatever the order the charts come in.
        let reversed = ColorMap::new(charts.iter().rev().cloned());
        for n in charts.iter().flatten() {
            assert_eq!(colors.color(n), reversed.color(n), "{n}");
        }
    }

    #[test]
    fn more_contenders_than_colours_reuse_the_least_used() {
        let names: Vec<String> = (0..PALETTE.len() + 2).map(|i| format!("c{i}")).collect();
        let colors = ColorMap::new([names.clone()]);
        let used: BTreeSet<&str> = names.iter().map(|n| colors.color(n)).collect();
        assert_eq!(used.len(), PALETTE.len());
    }
}
