//! Criterion's results and the thread-scaling CSV as series of points.

use std::collections::BTreeMap;

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
