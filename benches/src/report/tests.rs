use super::machine::cpu_model;
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
        profiles: Some("# Profiles\n\nMachine: another VM.\n\n## Engine\n\n### t8\n\nx\n".into()),
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
