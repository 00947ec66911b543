//! The two pictures of the traffic itself: the load offered to a tier
//! against what it can serve (the retry storm), and the distribution of the
//! users' latencies.

use super::*;

/// One bin of [`offered_load`] (a second, or a bin of `series_bin_s`):
/// medians over seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadPoint {
    /// The bin's start, in simulated seconds.
    pub second: f64,
    /// Requests per second arriving that are a caller's first attempt.
    pub first: f64,
    /// Requests per second arriving that are retries.
    pub retries: f64,
    /// What the tier can serve per second (`None`: no work of its own).
    pub capacity: Option<f64>,
    /// Requests per second it let in (`None`: not drawn, as where it
    /// turned next to none away): the gap down from the bars is what its
    /// rate limit, full queue, shedding or a replica down turned away.
    pub admitted: Option<f64>,
}

/// One panel of [`offered_load`]: a line of the report (a strategy).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPanel {
    pub label: String,
    /// The width of its points' bins, in seconds (1: per second).
    pub bin_s: f64,
    pub points: Vec<LoadPoint>,
}

/// Height of one panel of [`offered_load`], in pixels.
const LOAD_PANEL_H: u32 = 210;

/// Requests arriving per second at one tier, first tries and retries
/// stacked, against the tier's capacity (a dashed step line) and what it
/// let in (a solid one, where given), one panel per line with a shared y
/// axis; the triggers shaded. Written to `stem.svg`
/// and `stem.png`, 1000 px wide. Errors: no panel or no point.
pub fn offered_load(
    stem: &Path,
    title: &str,
    panels: &[LoadPanel],
    shades: &[Shade],
) -> Result<(), PlotError> {
    let seconds = || {
        panels
            .iter()
            .flat_map(|p| p.points.iter().map(|q| q.second))
    };
    let Some(x_lo) = seconds().reduce(f64::min) else {
        return Err(bad_input(title, "no points to plot".to_string()));
    };
    let bin = panels.iter().map(|p| p.bin_s).fold(0.0, f64::max);
    let x_hi = seconds().fold(x_lo, f64::max) + bin;
    let points = || panels.iter().flat_map(|p| &p.points);
    let load = (points())
        .map(|q| (q.first + q.retries).max(q.admitted.unwrap_or(0.0)))
        .fold(1.0, f64::max);
    // A capacity far above the load would flatten the bars against the
    // axis: the axis ends at the load and the capacities near it (in
    // another panel, say), and the legend gives the lowest one above.
    let capacities = || points().filter_map(|q| q.capacity);
    let y_max = capacities()
        .filter(|&c| c <= CAPACITY_ABOVE * load)
        .fold(load, f64::max)
        * 1.08;
    let above = capacities().filter(|&c| c > y_max).reduce(f64::min);
    let mut kinds: Vec<ShadeKind> = Vec::new();
    for s in shades {
        if !kinds.contains(&s.kind) {
            kinds.push(s.kind);
        }
    }
    let let_in = points().any(|q| q.admitted.is_some());
    let rows = legend_rows(&legend_entries(above, let_in, &kinds));
    let size = (
        1000,
        90 + LEGEND_ROW_H * (rows.len() as u32 - 1) + LOAD_PANEL_H * panels.len() as u32,
    );
    render_both!(stem, size, |root| draw_load(
        &root,
        title,
        panels,
        shades,
        (x_lo, x_hi, y_max),
        &rows
    ))
}

/// How far above the highest load a capacity must be to be left above
/// the y axis.
const CAPACITY_ABOVE: f64 = 4.0;

/// The legend's rows: each row below the first adds this to the figure.
const LEGEND_ROW_H: u32 = 24;

/// What a legend entry of [`offered_load`] shows beside its label.
#[derive(Clone, Copy)]
enum Mark {
    Fill(RGBAColor),
    Dashed,
    Line,
}

/// The legend of [`offered_load`]: the stacked layers, the capacity (with
/// `above`, the lowest capacity left above the axis), the line of what was
/// let in (`let_in`) and the shaded triggers.
fn legend_entries(above: Option<f64>, let_in: bool, kinds: &[ShadeKind]) -> Vec<(Mark, String)> {
    let mut entries = vec![
        (Mark::Fill(FIRST_COLOR.mix(0.55)), "first tries".to_string()),
        (Mark::Fill(RETRY_COLOR.mix(0.75)), "retries".to_string()),
    ];
    let capacity = "capacity: slots / mean service time";
    entries.push((
        Mark::Dashed,
        match above {
            Some(c) => format!("{capacity} (from {c:.0}/s: above the axis)"),
            None => capacity.to_string(),
        },
    ));
    if let_in {
        entries.push((Mark::Line, "let in".to_string()));
    }
    for kind in kinds {
        entries.push((Mark::Fill(kind.color()), kind.label().to_string()));
    }
    entries
}

/// The legend's entries laid out in rows that fit the figure's width.
fn legend_rows(entries: &[(Mark, String)]) -> Vec<Vec<(Mark, String, i32)>> {
    let (first_x, right) = (90, 980);
    let mut rows: Vec<Vec<(Mark, String, i32)>> = vec![Vec::new()];
    let mut x = first_x;
    for (mark, label) in entries {
        let width = 40 + text_width(label, &text(15.0)) as i32;
        if x + width > right && x > first_x {
            rows.push(Vec::new());
            x = first_x;
        }
        rows.last_mut()
            .expect("a row")
            .push((*mark, label.clone(), x));
        x += width;
    }
    rows
}

const FIRST_COLOR: RGBColor = PALETTE[0];
const RETRY_COLOR: RGBColor = PALETTE[3];
const ADMITTED_COLOR: RGBColor = PALETTE[2];

fn draw_load<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    panels: &[LoadPanel],
    shades: &[Shade],
    (x_lo, x_hi, y_max): (f64, f64, f64),
    legend_rows: &[Vec<(Mark, String, i32)>],
) -> Result<(), PlotError> {
    let body = titled(root, title)?;
    let height = 30 + LEGEND_ROW_H * (legend_rows.len() as u32 - 1);
    let (legend, rest) = body.split_vertically(height);
    let dashed = BLACK.stroke_width(2);
    let admitted_line = ADMITTED_COLOR.stroke_width(3);
    for (row, entries) in legend_rows.iter().enumerate() {
        let y = 13 + LEGEND_ROW_H as i32 * row as i32;
        for (mark, label, x) in entries {
            let x = *x;
            match mark {
                Mark::Fill(color) => swatch(&legend, (x, y - 7), (24, 14), color.filled(), None)?,
                Mark::Dashed => legend
                    .draw(&DashedPathElement::new(
                        vec![(x, y), (x + 24, y)],
                        6,
                        4,
                        dashed,
                    ))
                    .map_err(de)?,
                Mark::Line => legend
                    .draw(&PathElement::new(vec![(x, y), (x + 24, y)], admitted_line))
                    .map_err(de)?,
            }
            legend
                .draw(&Text::new(
                    label.as_str(),
                    (x + 30, y),
                    text(15.0).pos(left()),
                ))
                .map_err(de)?;
        }
    }
    let areas = rest.split_evenly((panels.len(), 1));
    for (panel, area) in panels.iter().zip(&areas) {
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.label, bold(16.0))
            .margin(8)
            .margin_right(20)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(x_lo..x_hi, 0.0..y_max)
            .map_err(de)?;
        chart
            .configure_mesh()
            .x_desc("simulated time (s)")
            .y_desc("requests / s")
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style(text(13.0))
            .axis_desc_style(text(14.0))
            .bold_line_style(BLACK.mix(0.12))
            .light_line_style(BLACK.mix(0.03))
            .max_light_lines(2)
            .draw()
            .map_err(de)?;
        for s in shades {
            let (from, to) = (s.from.max(x_lo), s.to.min(x_hi));
            if from < to {
                chart
                    .draw_series([Rectangle::new(
                        [(from, 0.0), (to, y_max)],
                        s.kind.color().filled(),
                    )])
                    .map_err(de)?;
            }
        }
        let mut points = panel.points.clone();
        points.sort_by(|a, b| a.second.total_cmp(&b.second));
        // Each bin is a step from its start to the next bin's. A layer is
        // a polygon per run of bins where it has height: one of no height
        // would be drawn as a line along its base.
        let bin = panel.bin_s;
        let layer = |lo: &dyn Fn(&LoadPoint) -> f64, hi: &dyn Fn(&LoadPoint) -> f64| {
            (points.split(|p| hi(p) <= lo(p)))
                .filter(|run| !run.is_empty())
                .map(|run| {
                    let step = |y: &dyn Fn(&LoadPoint) -> f64| {
                        (run.iter())
                            .flat_map(|p| [(p.second, y(p)), (p.second + bin, y(p))])
                            .collect::<Vec<_>>()
                    };
                    let (upper, lower) = (step(hi), step(lo));
                    (upper.into_iter())
                        .chain(lower.into_iter().rev())
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        };
        let first = layer(&|_| 0.0, &|p| p.first);
        let retries = layer(&|p| p.first, &|p| p.first + p.retries);
        let style = (
            FIRST_COLOR.mix(0.55).filled(),
            RETRY_COLOR.mix(0.75).filled(),
        );
        chart
            .draw_series(first.into_iter().map(|poly| Polygon::new(poly, style.0)))
            .map_err(de)?;
        chart
            .draw_series(retries.into_iter().map(|poly| Polygon::new(poly, style.1)))
            .map_err(de)?;
        for run in points.split(|p| p.capacity.is_none_or(|c| c > y_max)) {
            let line: Vec<(f64, f64)> = (run.iter())
                .flat_map(|p| {
                    let c = p.capacity.unwrap_or(0.0);
                    [(p.second, c), (p.second + bin, c)]
                })
                .collect();
            if line.len() > 1 {
                chart
                    .draw_series([DashedPathElement::new(line, 6, 4, dashed)])
                    .map_err(de)?;
            }
        }
        // Nothing arrived, nothing let in: no line along the axis.
        let idle = |p: &LoadPoint| p.first + p.retries == 0.0 && p.admitted == Some(0.0);
        for run in points.split(|p| p.admitted.is_none() || idle(p)) {
            let line: Vec<(f64, f64)> = (run.iter())
                .flat_map(|p| {
                    let a = p.admitted.unwrap_or(0.0).min(y_max);
                    [(p.second, a), (p.second + bin, a)]
                })
                .collect();
            if line.len() > 1 {
                chart
                    .draw_series([PathElement::new(line, admitted_line)])
                    .map_err(de)?;
            }
        }
    }
    Ok(())
}

fn left() -> Pos {
    Pos::new(HPos::Left, VPos::Center)
}

/// One line of [`latency_cdfs`]: a strategy's users, pooled over the runs
/// of a slice, per bucket of the latency histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct CdfLine {
    pub label: String,
    /// Counts per bucket: one more than the edges (the last is above the
    /// last edge).
    pub ok: Vec<u64>,
    pub failed: Vec<u64>,
}

/// The share of `counts` at or below each edge: `(edge, share)`, from the
/// edge before the first with any count (share 0) to where the share
/// reaches 1 (`None` without counts).
pub fn cdf(edges_s: &[f64], counts: &[u64]) -> Option<Vec<(f64, f64)>> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let mut below = 0;
    let mut out = Vec::new();
    for (k, (edge, c)) in edges_s.iter().zip(counts).enumerate() {
        if below == 0 && *c > 0 && k > 0 {
            out.push((edges_s[k - 1], 0.0));
        }
        below += c;
        if below > 0 {
            out.push((*edge, below as f64 / total as f64));
        }
        if below == total {
            break;
        }
    }
    Some(out)
}

/// Per line, its CDF in one panel of [`latency_cdfs`] (`None`: no user).
type Curves = Vec<Option<Vec<(f64, f64)>>>;

/// The distribution of finished users' latencies per line, in two panels
/// (successes, failures), each curve the share of its users finished within
/// x (log scale); every line has its own colour, dash and markers, and the
/// legend says when a line is the same as another or lies on top of it
/// ([`cdf_labels`]). Written to `stem.svg` and
/// `stem.png`. Errors: no line with a finished user.
pub fn latency_cdfs(
    stem: &Path,
    title: &str,
    edges_s: &[f64],
    lines: &[CdfLine],
) -> Result<(), PlotError> {
    let curves = |get: fn(&CdfLine) -> &Vec<u64>| -> Curves {
        lines.iter().map(|l| cdf(edges_s, get(l))).collect()
    };
    let panels = [
        ("successes", curves(|l| &l.ok)),
        ("failures", curves(|l| &l.failed)),
    ];
    let xs = || {
        (panels
            .iter()
            .flat_map(|(_, c)| c.iter().flatten().flatten()))
        .map(|(x, _)| *x)
    };
    let (Some(lo), Some(hi)) = (xs().reduce(f64::min), xs().reduce(f64::max)) else {
        return Err(bad_input(title, "no finished user".to_string()));
    };
    let range = (lo / 1.5, (hi * 1.5).max(lo * 10.0));
    let labels = cdf_labels(lines);
    render_both!(stem, SIZE, |root| draw_cdfs(
        &root, title, &labels, &panels, range
    ))
}

/// The legend's name of each line of [`latency_cdfs`]: its label, and
/// what it would hide or be hidden by: `b (= a)` for the same users at the
/// same latencies as an earlier line; else `b (on top of a)` when its
/// curves lie on an earlier line's in both panels (shares within 1% of
/// the y axis at every edge, as the success-rate bands are judged;
/// `b (on top of a in successes)` when only in one, naming the panel).
pub fn cdf_labels(lines: &[CdfLine]) -> Vec<String> {
    // The share at or below each edge (and the last bucket's), or None
    // without a user.
    let shares = |counts: &[u64]| -> Option<Vec<f64>> {
        let total: u64 = counts.iter().sum();
        (total > 0).then(|| {
            (counts.iter())
                .scan(0u64, |below, c| {
                    *below += c;
                    Some(*below as f64 / total as f64)
                })
                .collect()
        })
    };
    let curves: Vec<[Option<Vec<f64>>; 2]> = (lines.iter())
        .map(|l| [shares(&l.ok), shares(&l.failed)])
        .collect();
    let on_top = |a: &Option<Vec<f64>>, b: &Option<Vec<f64>>| match (a, b) {
        (Some(a), Some(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 0.01)
        }
        _ => false,
    };
    // In a panel: the same curve, or no curve in either.
    let alike =
        |a: &Option<Vec<f64>>, b: &Option<Vec<f64>>| on_top(a, b) || (a.is_none() && b.is_none());
    (lines.iter().enumerate())
        .map(|(i, l)| {
            if let Some(e) = (lines[..i].iter()).find(|e| e.ok == l.ok && e.failed == l.failed) {
                return format!("{} (= {})", l.label, e.label);
            }
            let c = &curves[i];
            if let Some(j) =
                (0..i).find(|&j| alike(&c[0], &curves[j][0]) && alike(&c[1], &curves[j][1]))
            {
                return format!("{} (on top of {})", l.label, lines[j].label);
            }
            let panels: Vec<String> = (["successes", "failures"].iter().enumerate())
                .filter_map(|(p, name)| {
                    let j = (0..i).find(|&j| on_top(&c[p], &curves[j][p]))?;
                    Some(format!("{} in {name}", lines[j].label))
                })
                .collect();
            match panels.is_empty() {
                true => l.label.clone(),
                false => format!("{} (on top of {})", l.label, panels.join(", ")),
            }
        })
        .collect()
}

fn draw_cdfs<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    labels: &[String],
    panels: &[(&str, Curves); 2],
    (lo, hi): (f64, f64),
) -> Result<(), PlotError> {
    let body = titled(root, title)?;
    let (w, _) = body.dim_in_pixel();
    let names: Vec<&str> = labels.iter().map(String::as_str).collect();
    let legend_w = legend_width(body.dim_in_pixel().0, &names, 14.0, 220);
    let (charts, legend_area) = body.split_horizontally(w - legend_w);
    let (cw, _) = charts.dim_in_pixel();
    let (left_area, right_area) = charts.split_horizontally(cw / 2);
    for ((name, curves), area) in panels.iter().zip([left_area, right_area]) {
        let mut chart = ChartBuilder::on(&area)
            .caption(*name, bold(17.0))
            .margin(10)
            .x_label_area_size(50)
            .y_label_area_size(60)
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)
            .map_err(de)?;
        chart
            .configure_mesh()
            .x_desc("latency (s, log scale)")
            .y_desc("share finished within")
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style(text(14.0))
            .axis_desc_style(text(15.0))
            .bold_line_style(BLACK.mix(0.12))
            .light_line_style(BLACK.mix(0.03))
            .draw()
            .map_err(de)?;
        // An empty panel says why it is empty, not leave it to be guessed.
        if curves.iter().all(Option::is_none) {
            let what = if *name == "failures" {
                "failed"
            } else {
                "succeeded"
            };
            root.draw(&Text::new(
                format!("no user of the slice's runs {what}"),
                chart.backend_coord(&((lo * hi).sqrt(), 0.5)),
                text(14.0).pos(Pos::new(HPos::Center, VPos::Center)),
            ))
            .map_err(de)?;
        }
        let n = curves.len().max(1);
        for (i, points) in curves.iter().enumerate() {
            let Some(points) = points else { continue };
            let color = PALETTE[i % PALETTE.len()];
            let pts = points.iter().copied();
            match line_dash(i) {
                None => chart
                    .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                    .map(|_| ()),
                Some((d, g)) => chart
                    .draw_series(DashedLineSeries::new(pts, d, g, color.stroke_width(2)))
                    .map(|_| ()),
            }
            .map_err(de)?;
            // Markers staggered per line, so that lines on top of each
            // other still show every marker.
            let step = (points.len() / 6).max(n);
            for p in points.iter().skip(i * step / n).step_by(step) {
                marker(root.clone(), chart.backend_coord(p), i, color, 5)?;
            }
        }
    }
    let (x, mut y) = (5, 40);
    for (i, label) in labels.iter().enumerate() {
        y += 26 + legend_line(&legend_area, (x, y), i, label, (5, 14.0))?;
    }
    super::legend_notes(
        &legend_area,
        (x, y + 10),
        &[
            "all finished users of",
            "the slice's runs, exact",
            "at the bucket edges",
            "(ten a decade)",
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_is_the_share_at_or_below_each_edge() {
        let edges = [0.001, 0.01, 0.1, 1.0];
        assert_eq!(cdf(&edges, &[0, 0, 0, 0, 0]), None);
        assert_eq!(
            cdf(&edges, &[0, 2, 1, 1, 0]),
            Some(vec![(0.001, 0.0), (0.01, 0.5), (0.1, 0.75), (1.0, 1.0)])
        );
        // Users above the last edge keep the curve below 1.
        assert_eq!(
            cdf(&edges, &[1, 0, 0, 0, 1]),
            Some(vec![(0.001, 0.5), (0.01, 0.5), (0.1, 0.5), (1.0, 0.5)])
        );
    }

    /// Lines whose curves lie on an earlier line's are said to, in both
    /// panels or in the one where they do; the same users, `=`; lines
    /// apart, nothing.
    #[test]
    fn a_latency_curve_on_top_of_another_is_said() {
        let line = |label: &str, ok: &[u64], failed: &[u64]| CdfLine {
            label: label.to_string(),
            ok: ok.to_vec(),
            failed: failed.to_vec(),
        };
        let lines = [
            line("a", &[0, 10, 0, 0], &[0, 0, 4, 0]),
            // Twice a's users at the same latencies: the same curves.
            line("b", &[0, 20, 0, 0], &[0, 0, 8, 0]),
            line("c", &[0, 10, 0, 0], &[0, 0, 4, 0]),
            // Successes as a's, failures later.
            line("d", &[0, 5, 0, 0], &[0, 0, 0, 3]),
            line("e", &[0, 3, 7, 0], &[0, 0, 0, 0]),
            // Successes as e's within 1%, failures as d's.
            line("f", &[0, 301, 699, 0], &[0, 0, 0, 1]),
        ];
        assert_eq!(
            cdf_labels(&lines),
            [
                "a",
                "b (on top of a)",
                "c (= a)",
                "d (on top of a in successes)",
                "e",
                "f (on top of e in successes, d in failures)"
            ]
        );
    }

    #[test]
    fn both_traffic_plots_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let points = (0..20)
            .map(|s| LoadPoint {
                second: s as f64,
                first: 100.0,
                retries: if s > 5 { 50.0 } else { 0.0 },
                capacity: (s > 0).then_some(120.0),
                admitted: Some(if s > 5 { 120.0 } else { 100.0 }),
            })
            .collect();
        let panels = vec![LoadPanel {
            label: "naive".into(),
            bin_s: 1.0,
            points,
        }];
        let shade = [Shade {
            kind: ShadeKind::Slow,
            from: 5.0,
            to: 10.0,
        }];
        let stem = dir.path().join("load");
        offered_load(&stem, "Offered load", &panels, &shade).unwrap();
        assert!(dir.path().join("load.png").exists());
        // Retries begin at second 6: their layer is not drawn before it,
        // as a line along the first tries' top.
        let svg = std::fs::read_to_string(dir.path().join("load.svg")).unwrap();
        let left_ends = |color: RGBColor| -> Vec<i64> {
            let fill = format!(
                "fill=\"#{:02X}{:02X}{:02X}\" points=\"",
                color.0, color.1, color.2
            );
            (svg.split(&fill).skip(1))
                .map(|points| {
                    let xs = points.split('"').next().unwrap().split(' ');
                    (xs.filter_map(|xy| xy.split(',').next()?.parse().ok()))
                        .min()
                        .unwrap()
                })
                .collect()
        };
        let (first, retries) = (left_ends(FIRST_COLOR), left_ends(RETRY_COLOR));
        assert_eq!((first.len(), retries.len()), (1, 1));
        assert!(retries[0] > first[0] + 200, "{retries:?} {first:?}");
        let lines = vec![CdfLine {
            label: "naive".into(),
            ok: vec![0, 5, 3, 1, 0],
            failed: vec![0, 0, 0, 2, 1],
        }];
        let stem = dir.path().join("cdf");
        latency_cdfs(&stem, "Latency", &[0.001, 0.01, 0.1, 1.0], &lines).unwrap();
        assert!(
            std::fs::read_to_string(dir.path().join("cdf.svg"))
                .unwrap()
                .contains("successes")
        );
        assert!(offered_load(&stem, "empty", &[], &shade).is_err());
    }
}
