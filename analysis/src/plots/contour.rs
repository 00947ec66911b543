//! The adaptive boundary as a picture: the estimate of P(not recovered)
//! over two continuous axes as a shaded map, the threshold's contour on
//! it, and every point run, coloured by its share of runs that did not
//! recover; one panel per combination of categories.

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;

use super::*;
use crate::contour::{Segment, nice_ticks, unit, value};
use crate::manifest::SampledAxis;

/// One panel of [`boundary_contour`].
#[derive(Debug, Clone, PartialEq)]
pub struct ContourPanel {
    pub title: String,
    /// The estimate at the map's corners, `values[i][j]` at unit
    /// coordinates (i / n, j / n) of the x and y axes.
    pub values: Vec<Vec<f64>>,
    pub segments: Vec<Segment>,
    /// Points run: unit x, unit y, share of their runs that did not recover.
    pub points: Vec<(f64, f64, f64)>,
}

/// Recovered (0) to not recovered (1): blue to red through a light grey.
fn outcome_colour(p: f64, light: bool) -> RGBColor {
    let (blue, grey, red) = if light {
        ((198, 219, 239), (240, 240, 240), (252, 205, 195))
    } else {
        ((33, 102, 172), (200, 200, 200), (178, 24, 43))
    };
    let p = p.clamp(0.0, 1.0);
    let (a, b, t): ((u8, u8, u8), (u8, u8, u8), f64) = if p < 0.5 {
        (blue, grey, p * 2.0)
    } else {
        (grey, red, p * 2.0 - 1.0)
    };
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * t).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

const PANEL_W: u32 = 520;

/// Draws the panels side by side, each on the unit square of `x` and `y`
/// labelled in their values (a log axis in its logarithm). Written to
/// `stem.svg` and `stem.png`. Errors: no panel, or a map that is not
/// square.
pub fn boundary_contour(
    stem: &Path,
    title: &str,
    x: &SampledAxis,
    y: &SampledAxis,
    threshold: f64,
    panels: &[ContourPanel],
) -> Result<(), PlotError> {
    if panels.is_empty() {
        return Err(bad_input(title, "no panels to plot".to_string()));
    }
    for p in panels {
        let n = p.values.len();
        if n < 2 || p.values.iter().any(|r| r.len() != n) {
            return Err(bad_input(
                title,
                format!("panel {:?}: the map is not square", p.title),
            ));
        }
    }
    let width = PANEL_W * panels.len() as u32 + 260;
    render_both!(stem, (width, 620), |root| draw(
        &root, title, x, y, threshold, panels
    ))
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x: &SampledAxis,
    y: &SampledAxis,
    threshold: f64,
    panels: &[ContourPanel],
) -> Result<(), PlotError> {
    let body = titled(root, title)?;
    let (w, _) = body.dim_in_pixel();
    let (charts, legend) = body.split_horizontally(w - 260);
    let areas = charts.split_evenly((1, panels.len()));
    let x_tick = |v: &f64| crate::load::number(float_tidy(value(x, *v)));
    let y_tick = |v: &f64| crate::load::number(float_tidy(value(y, *v)));
    for (area, p) in areas.iter().zip(panels) {
        let mut chart = ChartBuilder::on(area)
            .caption(&p.title, text(17.0))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(UnitAxis::new(x), UnitAxis::new(y))
            .map_err(de)?;
        chart
            .configure_mesh()
            .x_desc(format!("{}{}", x.path, if x.log { " (log)" } else { "" }))
            .y_desc(format!("{}{}", y.path, if y.log { " (log)" } else { "" }))
            .x_label_formatter(&x_tick)
            .y_label_formatter(&y_tick)
            .label_style(text(14.0))
            .axis_desc_style(text(15.0))
            .disable_mesh()
            .draw()
            .map_err(de)?;
        let n = p.values.len() - 1;
        let step = 1.0 / n as f64;
        chart
            .draw_series((0..n).flat_map(|i| {
                (0..n).map(move |j| {
                    let v = &p.values;
                    let mean = (v[i][j] + v[i + 1][j] + v[i][j + 1] + v[i + 1][j + 1]) / 4.0;
                    let (x0, y0) = (i as f64 * step, j as f64 * step);
                    Rectangle::new(
                        [(x0, y0), (x0 + step, y0 + step)],
                        outcome_colour(mean, true).filled(),
                    )
                })
            }))
            .map_err(de)?;
        chart
            .draw_series(
                (p.segments.iter())
                    .map(|s| PathElement::new(vec![s[0], s[1]], BLACK.stroke_width(2))),
            )
            .map_err(de)?;
        chart
            .draw_series(p.points.iter().map(|(px, py, share)| {
                Circle::new((*px, *py), 4, outcome_colour(*share, false).filled())
            }))
            .map_err(de)?;
        chart
            .draw_series(
                (p.points.iter())
                    .map(|(px, py, _)| Circle::new((*px, *py), 4, BLACK.stroke_width(1))),
            )
            .map_err(de)?;
    }
    let mut yy = 40;
    legend
        .draw(&Text::new("points run:", (10, yy), bold(15.0)))
        .map_err(de)?;
    for (share, words) in [
        (0.0, "all seeds recovered"),
        (0.5, "half of them"),
        (1.0, "none recovered"),
    ] {
        yy += 26;
        legend
            .draw(&Circle::new(
                (20, yy + 8),
                5,
                outcome_colour(share, false).filled(),
            ))
            .map_err(de)?;
        legend
            .draw(&Text::new(words, (34, yy), text(14.0)))
            .map_err(de)?;
    }
    yy += 40;
    legend
        .draw(&Text::new("shade: estimated", (10, yy), bold(15.0)))
        .map_err(de)?;
    yy += 20;
    legend
        .draw(&Text::new("P(not recovered)", (10, yy), bold(15.0)))
        .map_err(de)?;
    for (share, words) in [(0.0, "0"), (0.5, "0.5"), (1.0, "1")] {
        yy += 26;
        legend
            .draw(&Rectangle::new(
                [(12, yy), (28, yy + 16)],
                outcome_colour(share, true).filled(),
            ))
            .map_err(de)?;
        legend
            .draw(&Text::new(words, (34, yy), text(14.0)))
            .map_err(de)?;
    }
    yy += 40;
    legend
        .draw(&PathElement::new(
            vec![(10, yy + 8), (30, yy + 8)],
            BLACK.stroke_width(2),
        ))
        .map_err(de)?;
    legend
        .draw(&Text::new(
            format!("estimate = {threshold}"),
            (36, yy),
            text(14.0),
        ))
        .map_err(de)?;
    Ok(())
}

/// The unit interval of a sampled axis, its ticks at round values of the
/// axis (1, 2, 5 times a power of ten; on a log axis 1, 3, 10, 30, ... in
/// place of the unit square's 1, 5.4772, 30).
struct UnitAxis {
    ticks: Vec<f64>,
}

impl UnitAxis {
    fn new(a: &SampledAxis) -> UnitAxis {
        UnitAxis {
            ticks: nice_ticks(a).into_iter().map(|v| unit(a, v)).collect(),
        }
    }
}

impl Ranged for UnitAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        RangedCoordf64::from(0.0..1.0).map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> Range<f64> {
        0.0..1.0
    }
}

/// Labels come from the panel's own formatters (in the axis' values).
impl ValueFormatter<f64> for UnitAxis {
    fn format(value: &f64) -> String {
        format!("{value}")
    }
}

/// Four decimals at most: tick labels of a log axis read 3.1623, not
/// 3.1622776601683795.
fn float_tidy(v: f64) -> f64 {
    format!("{v:.4}").parse::<f64>().unwrap_or(v)
}
