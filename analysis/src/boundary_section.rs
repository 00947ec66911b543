//! The report's section of an adaptive boundary design (`[sample] method
//! = "boundary"`): per combination of categories, the estimate of
//! P(not recovered) from the points run, its contour at the search's
//! threshold (`boundary_contour.csv`) and the plot
//! (`plots/boundary_contour`).
//!
//! With 2 axes the plane is the space itself. With 3 or 4, the plane is
//! the two axes that move the estimate most ([`contour::influence`],
//! summed over the categories), the others held at the middle of their
//! range (unit coordinate 0.5: the geometric middle of a log axis), and
//! the points are drawn projected onto it.

use crate::ReportError;
use crate::contour::{self, Observed};
use crate::load::Sweep;
use crate::manifest::SampleDesign;
use crate::plots;
use polars::prelude::*;
use std::path::Path;

/// The stem of the plot under `plots/`.
pub const PLOT: &str = "boundary_contour";

/// One combination of categories: its label and its points run.
pub struct Category {
    pub label: String,
    pub points: Vec<Observed>,
}

/// The points of each combination of categories, from the runs table:
/// runs grouped by category and `sample_index`, each point's runs with a
/// recovery verdict and those that did not recover (failed runs count in
/// neither).
pub fn categories(sweep: &Sweep, design: &SampleDesign) -> Option<Vec<Category>> {
    let recovered = sweep.metric("recovered")?;
    let index = sweep.metric("sample_index")?;
    let axes: Vec<Vec<Option<f64>>> = (design.axes.iter())
        .map(|a| sweep.metric(&a.path))
        .collect::<Option<_>>()?;
    let last = sweep.dims.len().checked_sub(1)?;
    let mut out: Vec<(Vec<usize>, Category, Vec<u64>)> = Vec::new();
    for r in 0..sweep.runs.height() {
        let cat: Vec<usize> = sweep.positions[r][..last].to_vec();
        let Some(i) = index[r] else { continue };
        let at = match out.iter().position(|(c, _, _)| *c == cat) {
            Some(at) => at,
            None => {
                let label = (sweep.dims[..last].iter().zip(&cat))
                    .map(|(d, p)| format!("{}={}", d.name, d.labels[*p]))
                    .collect::<Vec<_>>()
                    .join(", ");
                out.push((
                    cat,
                    Category {
                        label: if label.is_empty() {
                            "all".into()
                        } else {
                            label
                        },
                        points: Vec::new(),
                    },
                    Vec::new(),
                ));
                out.len() - 1
            }
        };
        let (_, c, ids) = &mut out[at];
        let point = match ids.iter().position(|id| *id == i as u64) {
            Some(p) => p,
            None => {
                ids.push(i as u64);
                c.points.push(Observed {
                    x: (design.axes.iter().zip(&axes))
                        .map(|(a, v)| contour::unit(a, v[r].unwrap_or(f64::NAN)))
                        .collect(),
                    runs: 0,
                    not_recovered: 0,
                });
                c.points.len() - 1
            }
        };
        if let Some(v) = recovered[r] {
            c.points[point].runs += 1;
            c.points[point].not_recovered += u64::from(v == 0.0);
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Some(out.into_iter().map(|(_, c, _)| c).collect())
}

/// The plane drawn: the two most influential axes, in design order.
pub fn plane(cats: &[Category], k: usize) -> (usize, usize) {
    if k == 2 {
        return (0, 1);
    }
    // Spread evaluation points: a 6^k lattice of cell centres.
    let side = 6usize;
    let at: Vec<Vec<f64>> = (0..side.pow(k as u32))
        .map(|mut i| {
            (0..k)
                .map(|_| {
                    let c = i % side;
                    i /= side;
                    (c as f64 + 0.5) / side as f64
                })
                .collect()
        })
        .collect();
    let mut total = vec![0.0; k];
    for c in cats {
        for (t, v) in total.iter_mut().zip(contour::influence(&c.points, &at, k)) {
            *t += v;
        }
    }
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|a, b| total[*b].total_cmp(&total[*a]).then(a.cmp(b)));
    let (a, b) = (order[0].min(order[1]), order[0].max(order[1]));
    (a, b)
}

/// The section and its lines for "In short".
pub struct BoundarySection {
    pub in_short: String,
    pub body: String,
}

/// Writes `boundary_contour` (Parquet and CSV: each contour segment, in
/// axis values) and the plot; returns the section (None for any other
/// design).
pub fn section(
    sweep: &Sweep,
    dir: &Path,
    plot_dir: &Path,
) -> Result<Option<BoundarySection>, ReportError> {
    let Some(design) = sweep.manifest.design.as_ref() else {
        return Ok(None);
    };
    let Some(rules) = &design.boundary else {
        return Ok(None);
    };
    let Some(cats) = categories(sweep, design) else {
        return Ok(None);
    };
    let mut in_short = String::new();
    let k = design.axes.len();
    let (x, y) = plane(&cats, k);
    let rest = vec![0.5; k];
    let (ax, ay) = (&design.axes[x], &design.axes[y]);
    let mut panels = Vec::new();
    let mut rows: Vec<(String, usize, [f64; 4])> = Vec::new();
    let mut md = format!(
        "\n## Where it tips: the adaptive boundary\n\nWhere P(not recovered) crosses {} over `{}` and `{}`{}, estimated from the points the search ran (black line; the shade is the estimate, the dots the points run).\n\n| category | points | runs | not recovered | region estimated at or above {} |\n|---|---|---|---|---|\n",
        rules.threshold,
        ax.path,
        ay.path,
        if k > 2 {
            let held: Vec<String> = (0..k)
                .filter(|j| *j != x && *j != y)
                .map(|j| {
                    let a = &design.axes[j];
                    format!("`{}` = {}", a.path, short(contour::value(a, 0.5)))
                })
                .collect();
            format!(
                " (the two axes that move the estimate most; {} held at the middle of its range, the points projected)",
                held.join(", ")
            )
        } else {
            String::new()
        },
        rules.threshold
    );
    for c in &cats {
        let map = contour::map(&c.points, x, y, &rest);
        let segments = contour::contour(&map, rules.threshold);
        let cells = map.values.iter().flatten().count();
        let above = (map.values.iter().flatten())
            .filter(|v| **v >= rules.threshold)
            .count();
        let runs: u64 = c.points.iter().map(|p| p.runs).sum();
        let not: u64 = c.points.iter().map(|p| p.not_recovered).sum();
        let judged = runs > 0 && cells > 0;
        md.push_str(&format!(
            "| {} | {} | {runs} | {not} | {} |\n",
            c.label,
            c.points.len(),
            if judged {
                format!("{:.0}%", 100.0 * above as f64 / cells as f64)
            } else {
                "-".to_string()
            }
        ));
        let t = rules.threshold;
        let side = match above {
            _ if !judged => {
                "no verdict: none of its runs can say whether it recovered (they failed, or no recovery window with users follows their trigger)".to_string()
            }
            0 => format!("P(not recovered) below {t} throughout the region searched"),
            a if a == cells => {
                format!("P(not recovered) at or above {t} throughout the region searched")
            }
            a => format!(
                "P(not recovered) at or above {t} over {:.0}% of the region searched (the boundary: *Where it tips: the adaptive boundary*)",
                100.0 * a as f64 / cells as f64
            ),
        };
        in_short.push_str(&format!(
            "- **{}**: {side}; {} points, {runs} runs.\n",
            crate::tables::markdown_text(&c.label),
            c.points.len()
        ));
        for (i, s) in segments.iter().enumerate() {
            rows.push((
                c.label.clone(),
                i,
                [
                    contour::value(ax, s[0].0),
                    contour::value(ay, s[0].1),
                    contour::value(ax, s[1].0),
                    contour::value(ay, s[1].1),
                ],
            ));
        }
        panels.push(plots::ContourPanel {
            title: c.label.clone(),
            values: map.values,
            segments,
            points: c
                .points
                .iter()
                .map(|p| (p.x[x], p.x[y], p.share()))
                .collect(),
        });
    }
    let col = |j: usize| rows.iter().map(|r| r.2[j]).collect::<Vec<_>>();
    let mut df = DataFrame::new(
        rows.len(),
        vec![
            Column::new(
                "category".into(),
                rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
            ),
            Column::new(
                "segment".into(),
                rows.iter().map(|r| r.1 as u64).collect::<Vec<_>>(),
            ),
            Column::new(format!("{}_from", ax.path).into(), col(0)),
            Column::new(format!("{}_from", ay.path).into(), col(1)),
            Column::new(format!("{}_to", ax.path).into(), col(2)),
            Column::new(format!("{}_to", ay.path).into(), col(3)),
        ],
    )
    .map_err(ReportError::table("boundary contour"))?;
    crate::report::write_frame(dir, PLOT, &mut df)?;
    plots::boundary_contour(
        &plot_dir.join(PLOT),
        &format!("Where P(not recovered) crosses {}", rules.threshold),
        ax,
        ay,
        rules.threshold,
        &panels,
    )?;
    md.push_str(&format!(
        "\n![Adaptive boundary](plots/{PLOT}.svg)\n\n*The estimate at a place is the mean of the shares of runs that did not recover at the {} nearest points run, each weighted by its runs over its distance (in coordinates scaled to each axis' range, a log axis in its logarithm); the line is where it equals {} (marching squares on a {m} x {m} map). A region without a line is on one side throughout. Table: `{PLOT}.csv` (every segment of the line, in the axes' values); the search's rounds: `boundary_rounds.md`.*\n",
        contour::NEIGHBOURS,
        rules.threshold,
        m = contour::MAP_CELLS
    ));
    Ok(Some(BoundarySection { in_short, body: md }))
}

fn short(v: f64) -> String {
    crate::load::number(format!("{v:.4}").parse::<f64>().unwrap_or(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    /// A boundary sweep on disk: strategy a never recovers right of x = 5
    /// (y, a log axis, plays no part), b always recovers; a 12 x 12
    /// lattice of points, 2 seeds each, and one more failed run at a's
    /// first point (no verdict).
    fn write_boundary_sweep() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("runs")).unwrap();
        std::fs::create_dir_all(dir.join("series")).unwrap();
        std::fs::write(
            dir.join("manifest.json"),
            r#"{"grid_name": "t", "scenario": "ch37", "axes": ["strategy", "x", "y"],
            "dimensions": [["strategy"], ["x", "y"]], "status": "complete", "report": {},
            "design": {"method": "boundary", "n": 144, "seed": 1, "replicates": 2,
              "second_order": true, "levels": 4, "maximin": false,
              "axes": [{"path": "x", "min": 0.0, "max": 10.0, "log": false, "integer": false},
                       {"path": "y", "min": 1.0, "max": 100.0, "log": true, "integer": false}],
              "boundary": {"threshold": 0.5, "initial": 16, "batch": 8, "spacing": 0.05,
                           "tolerance": 0.02, "candidates": 1024}}}"#,
        )
        .unwrap();
        // strategy, x, y, sample_index, recovered, status
        type Row = (&'static str, f64, f64, u64, Option<bool>, &'static str);
        let mut rows: Vec<Row> = Vec::new();
        for s in ["a", "b"] {
            for i in 0..144u64 {
                let x = (i / 12) as f64 * 10.0 / 11.0;
                let y = 10f64.powf((i % 12) as f64 * 2.0 / 11.0);
                for _ in 0..2 {
                    rows.push((s, x, y, i, Some(!(s == "a" && x > 5.0)), "ok"));
                }
                if s == "a" && i == 0 {
                    rows.push((s, x, y, i, None, "failed"));
                }
            }
        }
        let n = rows.len();
        let mut runs = DataFrame::new(
            n,
            vec![
                Column::new(
                    "run_id".into(),
                    (0..n).map(|i| format!("r{i}")).collect::<Vec<_>>(),
                ),
                Column::new("run_index".into(), (0..n as u64).collect::<Vec<_>>()),
                Column::new(
                    "seed".into(),
                    (0..n as u64).map(|i| i % 2).collect::<Vec<_>>(),
                ),
                Column::new(
                    "strategy".into(),
                    rows.iter().map(|r| r.0).collect::<Vec<_>>(),
                ),
                Column::new("x".into(), rows.iter().map(|r| r.1).collect::<Vec<_>>()),
                Column::new("y".into(), rows.iter().map(|r| r.2).collect::<Vec<_>>()),
                Column::new(
                    "sample_index".into(),
                    rows.iter().map(|r| r.3).collect::<Vec<_>>(),
                ),
                Column::new(
                    "recovered".into(),
                    rows.iter().map(|r| r.4).collect::<Vec<_>>(),
                ),
                Column::new(
                    "status".into(),
                    rows.iter().map(|r| r.5).collect::<Vec<_>>(),
                ),
                Column::new("svc_max_queue".into(), vec![1u64; n]),
                // A trigger: without one no run has a verdict.
                Column::new("window_start_s".into(), vec![1.0; n]),
                Column::new("window_end_s".into(), vec![2.0; n]),
            ],
        )
        .unwrap();
        ParquetWriter::new(File::create(dir.join("runs/part-s0of1-000000.parquet")).unwrap())
            .finish(&mut runs)
            .unwrap();
        tmp
    }

    /// The contour the plot draws and the table holds: a's segments lie
    /// on x = 5 (within half the lattice's spacing of 0.91) from the
    /// bottom of y to its top, in the axes' values; b, which always
    /// recovers, has none; the failed run counts in no point's runs.
    #[test]
    fn the_contour_lies_on_the_known_boundary_in_the_axes_values() {
        let tmp = write_boundary_sweep();
        let dir = tmp.path();
        let sweep = Sweep::load(dir).unwrap();
        std::fs::create_dir_all(dir.join("analysis/plots")).unwrap();
        let s =
            (section(&sweep, &dir.join("analysis"), &dir.join("analysis/plots")).unwrap()).unwrap();
        let md = s.body;
        assert_eq!(
            s.in_short,
            "- **strategy=a**: P(not recovered) at or above 0.5 over 50% of the region searched (the boundary: *Where it tips: the adaptive boundary*); 144 points, 288 runs.\n- **strategy=b**: P(not recovered) below 0.5 throughout the region searched; 144 points, 288 runs.\n"
        );
        assert!(
            md.contains("| strategy=a | 144 | 288 | 144 | 50% |"),
            "{md}"
        );
        assert!(md.contains("| strategy=b | 144 | 288 | 0 | 0% |"), "{md}");
        assert!(dir.join("analysis/plots/boundary_contour.svg").exists());
        let csv = std::fs::read_to_string(dir.join("analysis/boundary_contour.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("category,segment,x_from,y_from,x_to,y_to")
        );
        let (mut y_lo, mut y_hi, mut segments) = (f64::INFINITY, 0.0f64, 0);
        for line in lines {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f[0], "strategy=a", "{line}");
            let v: Vec<f64> = f[2..].iter().map(|x| x.parse().unwrap()).collect();
            for (x, y) in [(v[0], v[1]), (v[2], v[3])] {
                assert!((x - 5.0).abs() < 0.46, "{line}");
                y_lo = y_lo.min(y);
                y_hi = y_hi.max(y);
            }
            segments += 1;
        }
        assert!(
            segments >= contour::MAP_CELLS,
            "at least one per row of the map"
        );
        assert!(
            (y_lo - 1.0).abs() < 1e-9 && (y_hi - 100.0).abs() < 1e-9,
            "{y_lo} {y_hi}"
        );
    }

    /// With 3 axes the plane is the two the outcome depends on.
    #[test]
    fn the_plane_of_three_axes_is_the_two_that_matter() {
        let points: Vec<Observed> = (0..512)
            .map(|i| {
                let x: Vec<f64> = [i % 8, (i / 8) % 8, i / 64]
                    .iter()
                    .map(|c| (*c as f64 + 0.5) / 8.0)
                    .collect();
                let not = u64::from(x[0] + x[2] > 1.0);
                Observed {
                    x,
                    runs: 1,
                    not_recovered: not,
                }
            })
            .collect();
        let cats = [Category {
            label: "all".into(),
            points,
        }];
        assert_eq!(plane(&cats, 3), (0, 2));
    }
}
