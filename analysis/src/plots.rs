//! Plots for the report: time bands, heatmaps, sensitivity bars, recovery
//! lines, and (in `traffic`) offered load and latency distributions.
//!
//! Every plot is written twice, as `<stem>.svg` and `<stem>.png` (the
//! extensions are appended to the stem, so a stem such as `p_0.5` keeps its
//! dot); missing parent directories are created. If drawing fails, both
//! files are removed rather than left truncated.
//!
//! Text needs a font and the machine may have none installed, so DejaVu Sans
//! (regular and bold, embedded by the `dejavu` crate) is registered with
//! plotters as `"sans-serif"` once per process, before the first plot.
//!
//! Empty inputs (no bands, no panels, no levels, or no finite point at all)
//! and inconsistent shapes return `Err` with a message and write no file;
//! missing or non-finite single values are skipped (or shown grey in
//! heatmaps) instead.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use crate::error::PlotError;

/// One series of a time plot: per x, the median and the interquartile range
/// over seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// The series name shown in the legend.
    pub label: String,
    /// The points, in any order (they are sorted by x before drawing).
    pub points: Vec<BandPoint>,
}

/// One x of a [`Band`]: the median over seeds and its quartiles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandPoint {
    /// Position on the x axis (e.g. simulated time in seconds).
    pub x: f64,
    /// Median over seeds; a non-finite median breaks the line.
    pub median: f64,
    /// 25th percentile over seeds (lower edge of the band).
    pub q25: f64,
    /// 75th percentile over seeds (upper edge of the band).
    pub q75: f64,
}

/// What a shaded span of a time plot is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShadeKind {
    /// A tier's slow window.
    Slow,
    /// A load spike of the client.
    Spike,
    /// A tier's error, crash or cache-flush window.
    Outage,
    /// A trigger span of unknown kind (a slow window or a load spike).
    Trigger,
    /// A trigger of length 0: the instant recovery is measured from (a
    /// grid whose load profile is its trigger marks it so), a line.
    Mark,
}

impl ShadeKind {
    /// The legend's name for it.
    pub fn label(self) -> &'static str {
        match self {
            ShadeKind::Slow => "slow window",
            ShadeKind::Spike => "load spike",
            ShadeKind::Outage => "error, crash or cache flush",
            ShadeKind::Trigger => "trigger (slow window or spike)",
            ShadeKind::Mark => "recovery measured from here",
        }
    }

    fn color(self) -> RGBAColor {
        match self {
            ShadeKind::Slow => BLACK.mix(0.1),
            ShadeKind::Spike => RGBColor(255, 170, 0).mix(0.22),
            ShadeKind::Outage => RGBColor(200, 40, 40).mix(0.12),
            ShadeKind::Trigger => RGBColor(120, 120, 200).mix(0.15),
            ShadeKind::Mark => BLACK.mix(0.55),
        }
    }
}

/// A shaded x-span of a time plot: a slow window or a load spike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shade {
    pub kind: ShadeKind,
    pub from: f64,
    pub to: f64,
}

/// One panel of [`heatmaps`]: a grid of values over the x and y levels.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatPanel {
    /// The panel's title (e.g. the strategy).
    pub title: String,
    /// `values[y][x]`, indexed like `y_levels` and `x_levels`; `None` (or a
    /// non-finite value) is a missing cell, drawn grey.
    pub values: Vec<Vec<Option<f64>>>,
}

/// One panel of [`sensitivity_bars`]: the Sobol indices of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexBars {
    /// The metric the indices are about (the panel's title).
    pub metric: String,
    /// The input axes, one group of bars each.
    pub axes: Vec<String>,
    /// First-order index per axis.
    pub s1: Vec<f64>,
    /// Confidence half-width of `s1` per axis; NaN draws no error bar.
    pub s1_conf: Vec<f64>,
    /// Total-order index per axis.
    pub st: Vec<f64>,
    /// Confidence half-width of `st` per axis; NaN draws no error bar.
    pub st_conf: Vec<f64>,
}

/// The font family every text uses, registered by [`ensure_fonts`].
const FONT: &str = "sans-serif";
/// Size of the time and sensitivity plots, in pixels.
const SIZE: (u32, u32) = (1000, 600);
/// Tableau 10: distinct, colour-blind-friendlier series colours.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
/// Fill of missing heatmap cells.
const MISSING: RGBColor = RGBColor(190, 190, 190);
/// Colour of the first-order bars.
const S1_COLOR: RGBColor = PALETTE[0];
/// Colour of the total-order bars.
const ST_COLOR: RGBColor = PALETTE[1];

/// Registers DejaVu Sans (regular and bold) as `"sans-serif"`, once.
fn ensure_fonts() -> Result<(), PlotError> {
    static DONE: OnceLock<Result<(), &'static str>> = OnceLock::new();
    DONE.get_or_init(|| {
        for (style, name, bytes) in [
            (FontStyle::Normal, "normal", dejavu::sans::regular()),
            (FontStyle::Bold, "bold", dejavu::sans::bold()),
        ] {
            plotters::style::register_font(FONT, style, bytes).map_err(|_| name)?;
        }
        Ok(())
    })
    .map_err(|style| PlotError::Font { style })
}

/// `stem.svg` and `stem.png` (appended, not replacing an extension);
/// creates the parent directory.
fn output_paths(stem: &Path) -> Result<(PathBuf, PathBuf), PlotError> {
    if stem.as_os_str().is_empty() {
        return Err(PlotError::EmptyPath);
    }
    if let Some(parent) = stem.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|source| PlotError::CreateDir {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let with = |ext: &str| {
        let mut s = stem.as_os_str().to_owned();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    };
    Ok((with("svg"), with("png")))
}

/// A drawing error (its backend's error type need not be `'static`, so it
/// is kept as its message).
fn de<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// The input of a plot cannot be drawn.
fn bad_input(title: &str, problem: String) -> PlotError {
    PlotError::Input {
        title: title.to_string(),
        problem,
    }
}

/// Runs `$draw` (an expression using the drawing area `$root`) once on an
/// SVG and once on a PNG backend of `$size`; removes both files on error.
macro_rules! render_both {
    ($stem:expr, $size:expr, |$root:ident| $draw:expr) => {{
        ensure_fonts()?;
        let (svg, png) = output_paths($stem)?;
        let size: (u32, u32) = $size;
        let result = (|| -> Result<(), PlotError> {
            {
                let $root = SVGBackend::new(&svg, size).into_drawing_area();
                $draw?;
                $root.present().map_err(|e| PlotError::Write {
                    path: svg.clone(),
                    source: Box::new(e),
                })?;
            }
            {
                let $root = PngBackend(BitMapBackend::new(&png, size)).into_drawing_area();
                $draw?;
                $root.present().map_err(|e| PlotError::Write {
                    path: png.clone(),
                    source: Box::new(e),
                })?;
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&svg);
            let _ = std::fs::remove_file(&png);
        }
        result
    }};
}

mod contour;
pub use contour::{ContourPanel, boundary_contour};
mod traffic;
pub use traffic::{CdfLine, LoadPanel, LoadPoint, cdf, latency_cdfs, offered_load};

/// A text style in the plot font.
fn text(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// A bold text style in the plot font.
fn bold(size: f64) -> TextStyle<'static> {
    // `FontDesc::style` keeps the regular glyphs: build the bold font anew.
    (FONT, size, FontStyle::Bold).into_font().color(&BLACK)
}

/// Fills the background and draws the title, on as many lines as it
/// needs to fit the width (a slice named by long parameter paths would
/// be cut at both ends); returns the area below it.
fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>, PlotError> {
    root.fill(&WHITE).map_err(de)?;
    let style = bold(24.0);
    let room = root.dim_in_pixel().0.saturating_sub(40);
    let mut area = root.clone();
    for line in wrapped(title, room, |s| text_width(s, &style)) {
        area = area.titled(&line, style.clone()).map_err(de)?;
    }
    Ok(area)
}

/// `text` cut at spaces into lines no wider than `room` (as `width`
/// measures them). A word wider than that (a long parameter path) is cut
/// after the dots, `=`, `+` and commas between its names, or failing that
/// after the underscores within them (never inside a name's words); a
/// piece still wider is a line of its own.
fn wrapped(text: &str, room: u32, width: impl Fn(&str) -> u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if width(&format!("{line} {word}")) <= room => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.extend(word_lines(
                word,
                room,
                &width,
                &[&['.', '=', '+', ','], &['_']],
            )),
        }
    }
    lines
}

/// `word` cut after the characters of `cuts[0]` (not a decimal point) into
/// as few lines no wider than `room` as it can; a line still wider is cut
/// by `cuts[1..]`.
fn word_lines(
    word: &str,
    room: u32,
    width: &impl Fn(&str) -> u32,
    cuts: &[&[char]],
) -> Vec<String> {
    let Some((here, finer)) = cuts.split_first().filter(|_| width(word) > room) else {
        return vec![word.to_string()];
    };
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = word.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let decimal_point = c == '.' && next.is_some_and(|n| n.is_ascii_digit());
        if here.contains(&c) && !decimal_point {
            parts.push(&word[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    parts.push(&word[start..]);
    let mut lines = vec![String::new()];
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let line = lines.last_mut().expect("never empty");
        if !line.is_empty() && width(&format!("{line}{part}")) > room {
            lines.push(part.to_string());
        } else {
            line.push_str(part);
        }
    }
    (lines.iter())
        .flat_map(|l| word_lines(l, room, width, finer))
        .collect()
}

/// Pixel width of `s` in `style` (0 if it cannot be measured), as both
/// backends lay it out (neither has a text measure of its own).
fn text_width(s: &str, style: &TextStyle) -> u32 {
    style.font.box_size(s).map(|(w, _)| w).unwrap_or(0)
}

/// `(lo, hi)` widened so that it has a positive length.
fn non_degenerate(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo {
        (lo, hi)
    } else {
        let pad = if lo.abs() > 1e-12 {
            lo.abs() * 0.1
        } else {
            1.0
        };
        (lo - pad, hi + pad)
    }
}

/// Tick label for a float axis: a plain decimal (`0.0001`, `250000`, as
/// the axes in seconds and counts read elsewhere; never `1.0e-4`), short,
/// without float noise: four decimals, or three significant digits below
/// 0.001.
fn tick(v: &f64) -> String {
    if *v == 0.0 {
        return "0".to_string();
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(4, 12) as usize;
    let s = format!("{v:.decimals$}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Draws a legend entry swatch at `(x, y)` (top left), `w` × `h` pixels.
fn swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    (w, h): (i32, i32),
    fill: ShapeStyle,
    line: Option<ShapeStyle>,
) -> Result<(), PlotError> {
    area.draw(&Rectangle::new([(x, y), (x + w, y + h)], fill))
        .map_err(de)?;
    if let Some(line) = line {
        area.draw(&PathElement::new(
            vec![(x, y + h / 2), (x + w, y + h / 2)],
            line,
        ))
        .map_err(de)?;
    }
    Ok(())
}

// ------------------------------------------------------------- PNG text

/// The PNG backend: plotters' bitmap backend, with text drawn the way the
/// SVG's is laid out by a browser. (plotters' own bitmap text drops each
/// glyph's left side bearing, so "cl" reads "d" and a decimal point drifts;
/// it draws glyphs about 7 % larger than the SVG's font size and puts the
/// baseline half a size below the anchor, so titles are clipped at the top
/// and stacked labels overlap.) Here: the font size is the SVG's
/// (`size / 1.24` px per em), glyphs are placed at their advance plus
/// kerning with their bearings, sub-pixel, and the anchor is the SVG's
/// (`text-anchor`, and the baseline `0.76em` below a top anchor, half an
/// x-height below a centre one, half an x-height above a bottom one).
struct PngBackend<'a>(BitMapBackend<'a>);

/// DejaVu Sans regular and bold, as `ab_glyph` fonts.
fn glyph_fonts() -> &'static (ab_glyph::FontRef<'static>, ab_glyph::FontRef<'static>) {
    static FONTS: OnceLock<(ab_glyph::FontRef<'static>, ab_glyph::FontRef<'static>)> =
        OnceLock::new();
    FONTS.get_or_init(|| {
        let load = |b: &'static [u8]| ab_glyph::FontRef::try_from_slice(b).expect("DejaVu parses");
        (load(dejavu::sans::regular()), load(dejavu::sans::bold()))
    })
}

/// DejaVu Sans' x-height, in em (1120 of 2048 units).
const X_HEIGHT_EM: f32 = 1120.0 / 2048.0;

/// The pixels of `text` at `size` (plotters' size: `size / 1.24` px per
/// em, as the SVG's `font-size`), relative to the anchor point, with their
/// coverage: what [`PngBackend`] draws.
fn text_pixels(
    text: &str,
    size: f64,
    bold: bool,
    anchor: Pos,
    transform: plotters::style::FontTransform,
) -> Vec<(i32, i32, f32)> {
    use ab_glyph::{Font, ScaleFont, point};
    use plotters::style::FontTransform as T;
    let fonts = glyph_fonts();
    let font = if bold { &fonts.1 } else { &fonts.0 };
    let em = (size / 1.24) as f32;
    let upem = font.units_per_em().unwrap_or(2048.0);
    let scale = ab_glyph::PxScale::from(em * font.height_unscaled() / upem);
    let sf = font.as_scaled(scale);
    let mut ids = Vec::new();
    let mut x = 0.0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = sf.glyph_id(c);
        if let Some(p) = prev {
            x += sf.kern(p, id);
        }
        ids.push((id, x));
        x += sf.h_advance(id);
        prev = Some(id);
    }
    let dx = match anchor.h_pos {
        HPos::Left => 0.0,
        HPos::Center => -x / 2.0,
        HPos::Right => -x,
    };
    let dy = match anchor.v_pos {
        VPos::Top => 0.76 * em,
        VPos::Center => 0.5 * X_HEIGHT_EM * em,
        VPos::Bottom => -0.5 * X_HEIGHT_EM * em,
    };
    let mut out = Vec::new();
    for (id, gx) in ids {
        let glyph = id.with_scale_and_position(scale, point(dx + gx, dy));
        let Some(outline) = font.outline_glyph(glyph) else {
            continue;
        };
        let b = outline.px_bounds();
        outline.draw(|px, py, cov| {
            if cov <= 0.0 {
                return;
            }
            let (ux, uy) = (b.min.x as i32 + px as i32, b.min.y as i32 + py as i32);
            let (rx, ry) = match transform {
                T::Rotate90 => (-uy, ux),
                T::Rotate180 => (-ux, -uy),
                T::Rotate270 => (uy, -ux),
                _ => (ux, uy),
            };
            out.push((rx, ry, cov.min(1.0)));
        });
    }
    out
}

impl<'a> DrawingBackend for PngBackend<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }
    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        iwh: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, iwh, src)
    }
    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let bold = matches!(style.style(), plotters::style::FontStyle::Bold);
        for (x, y, cov) in text_pixels(text, style.size(), bold, style.anchor(), style.transform())
        {
            self.0.draw_pixel(
                (pos.0 + x, pos.1 + y),
                BackendColor {
                    alpha: color.alpha * cov as f64,
                    rgb: color.rgb,
                },
            )?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- time bands

/// Lines with shaded interquartile bands (one colour per band), optional
/// shaded x-span (the slow window), written to `stem.svg` and `stem.png`
/// (1000 × 600).
///
/// Each band's line is its median, its shaded area the 25–75 % range; a
/// non-finite median (or quartile) breaks the line (or band), and a lone
/// point is drawn as a dot with a vertical IQR bar. `shade` is clipped to
/// the data's x range. `y_range` fixes the y axis (e.g. `(0.0, 1.0)` for a
/// rate); otherwise it spans the data with a 5 % margin. The legend, right
/// of the plot, names every band and the shaded span; it is at least
/// `legend_w` pixels wide (see [`time_legend_width`]), so that figures
/// given the same one have plots of the same width, whose time axes line
/// up when a page stacks them.
///
/// Errors (no file written): `bands` empty, or no point with a finite x and
/// median; or a file cannot be written.
#[allow(clippy::too_many_arguments)]
pub fn time_bands(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    bands: &[Band],
    shade: &[Shade],
    y_range: Option<(f64, f64)>,
    legend_w: u32,
) -> Result<(), PlotError> {
    if bands.is_empty() {
        return Err(bad_input(title, "no bands to plot".to_string()));
    }
    let sorted: Vec<Vec<BandPoint>> = bands
        .iter()
        .map(|b| {
            let mut p: Vec<BandPoint> = b
                .points
                .iter()
                .copied()
                .filter(|p| p.x.is_finite())
                .collect();
            p.sort_by(|a, b| a.x.total_cmp(&b.x));
            p
        })
        .collect();
    let finite = |v: f64| v.is_finite().then_some(v);
    let xs = sorted
        .iter()
        .flatten()
        .filter(|p| p.median.is_finite())
        .map(|p| p.x);
    let (x_lo, x_hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    if x_lo > x_hi {
        return Err(bad_input(
            title,
            "no point with a finite x and median".to_string(),
        ));
    }
    let x_range = if x_lo < x_hi {
        (x_lo, x_hi)
    } else {
        non_degenerate(x_lo, x_hi)
    };
    let y_range = match y_range {
        Some((a, b)) if a.is_finite() && b.is_finite() => non_degenerate(a.min(b), a.max(b)),
        _ => {
            let ys = sorted
                .iter()
                .flatten()
                .flat_map(|p| [finite(p.median), finite(p.q25), finite(p.q75)])
                .flatten();
            let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
                (lo.min(y), hi.max(y))
            });
            let pad = (hi - lo) * 0.05;
            non_degenerate(lo - pad, hi + pad)
        }
    };
    let shade: Vec<Shade> = shade
        .iter()
        .filter(|s| s.from.is_finite() && s.to.is_finite())
        .map(|s| Shade {
            from: s.from.min(s.to).max(x_range.0),
            to: s.from.max(s.to).min(x_range.1),
            ..*s
        })
        // A mark is a span of length 0, drawn as a line.
        .filter(|s| s.from < s.to || (s.kind == ShadeKind::Mark && s.from == s.to))
        .collect();
    let plot = TimePlot {
        title,
        x_label,
        y_label,
        bands,
        sorted: &sorted,
        shade,
        x_range,
        y_range,
        legend_w,
    };
    render_both!(stem, SIZE, |root| plot.draw(&root))
}

/// The legend width [`time_bands`] gives `bands` and `shade` by itself.
pub fn time_legend_width(bands: &[Band], shade: &[Shade]) -> Result<u32, PlotError> {
    ensure_fonts()?;
    let (entries, _) = time_legend(bands, shade);
    let names: Vec<&str> = (entries.iter().map(|(l, _)| l.as_str()))
        .chain(TIME_NOTE)
        .collect();
    Ok(legend_width(SIZE.0, &names, 15.0, 150))
}

/// The notes under a time plot's legend.
const TIME_NOTE: [&str; 2] = ["line: median", "band: 25–75 % over runs"];

/// A time plot's legend: each band's name with its index, then each kind
/// of shaded span once, with none; and those kinds.
fn time_legend(bands: &[Band], shade: &[Shade]) -> (Vec<(String, Option<usize>)>, Vec<ShadeKind>) {
    let mut entries: Vec<(String, Option<usize>)> = (legend_labels(bands).into_iter())
        .enumerate()
        .map(|(i, l)| (l, Some(i)))
        .collect();
    let mut kinds: Vec<ShadeKind> = Vec::new();
    for s in shade {
        if !kinds.contains(&s.kind) {
            kinds.push(s.kind);
            entries.push((s.kind.label().to_string(), None));
        }
    }
    (entries, kinds)
}

/// Everything [`time_bands`] draws, validated.
struct TimePlot<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    bands: &'a [Band],
    /// Per band, its points with a finite x, sorted by x.
    sorted: &'a [Vec<BandPoint>],
    shade: Vec<Shade>,
    x_range: (f64, f64),
    y_range: (f64, f64),
    /// The legend's least width.
    legend_w: u32,
}

impl TimePlot<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let body = titled(root, self.title)?;
        let same = coinciding(self.bands);
        let (entries, kinds) = time_legend(self.bands, &self.shade);
        let names: Vec<&str> = (entries.iter().map(|(l, _)| l.as_str()))
            .chain(TIME_NOTE)
            .collect();
        let (w, _) = body.dim_in_pixel();
        let legend_w = legend_width(w, &names, 15.0, 150).max(self.legend_w.min(w * 2 / 5));
        let (chart_area, legend_area) = body.split_horizontally(w - legend_w);

        let mut chart = ChartBuilder::on(&chart_area)
            .margin(15)
            .margin_right(10)
            .x_label_area_size(55)
            .y_label_area_size(80)
            .build_cartesian_2d(
                self.x_range.0..self.x_range.1,
                self.y_range.0..self.y_range.1,
            )
            .map_err(de)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style(text(15.0))
            .axis_desc_style(text(17.0))
            .bold_line_style(BLACK.mix(0.12))
            .light_line_style(BLACK.mix(0.03))
            .max_light_lines(4)
            .draw()
            .map_err(de)?;
        let (y0, y1) = self.y_range;
        for s in &self.shade {
            if s.kind == ShadeKind::Mark {
                chart
                    .draw_series([DashedPathElement::new(
                        vec![(s.from, y0), (s.from, y1)],
                        6,
                        4,
                        s.kind.color().stroke_width(2),
                    )])
                    .map_err(de)?;
                continue;
            }
            chart
                .draw_series([Rectangle::new(
                    [(s.from, y0), (s.to, y1)],
                    s.kind.color().filled(),
                )])
                .map_err(de)?;
        }
        // Bands first, so that every line is drawn above every band.
        for (i, points) in self.sorted.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            for seg in points.split(|p| !(p.q25.is_finite() && p.q75.is_finite())) {
                match seg {
                    [] => {}
                    [p] => {
                        chart
                            .draw_series([PathElement::new(
                                vec![(p.x, p.q25), (p.x, p.q75)],
                                color.stroke_width(2),
                            )])
                            .map_err(de)?;
                    }
                    _ => {
                        let upper = seg.iter().map(|p| (p.x, p.q75));
                        let lower = seg.iter().rev().map(|p| (p.x, p.q25));
                        chart
                            .draw_series([Polygon::new(
                                upper.chain(lower).collect::<Vec<_>>(),
                                color.mix(0.2).filled(),
                            )])
                            .map_err(de)?;
                    }
                }
            }
        }
        let n_bands = self.sorted.len().max(1);
        for (i, points) in self.sorted.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            // A line hidden under an earlier identical one is drawn
            // thinner and dashed, so both stay visible.
            let width = if same[i].is_some() { 2 } else { 3 };
            for seg in points.split(|p| !p.median.is_finite()) {
                match seg {
                    [] => {}
                    [p] => {
                        chart
                            .draw_series([Circle::new((p.x, p.median), 4, color.filled())])
                            .map_err(de)?;
                    }
                    _ => {
                        let pts = seg.iter().map(|p| (p.x, p.median));
                        match line_dash(i) {
                            None => chart
                                .draw_series(LineSeries::new(pts, color.stroke_width(width)))
                                .map(|_| ()),
                            Some((dash, gap)) => chart
                                .draw_series(DashedLineSeries::new(
                                    pts,
                                    dash,
                                    gap,
                                    color.stroke_width(width),
                                ))
                                .map(|_| ()),
                        }
                        .map_err(de)?;
                    }
                }
            }
            // Markers on every `step`-th point, staggered per line, so
            // that lines on top of each other still show every marker.
            let step = (points.len() / 8).max(n_bands).max(1);
            let offset = i * step / n_bands;
            for p in points
                .iter()
                .skip(offset)
                .step_by(step)
                .filter(|p| p.median.is_finite())
            {
                let c = chart.backend_coord(&(p.x, p.median));
                marker(root.clone(), c, i, color, 6)?;
            }
        }

        // Legend, right of the plot, top aligned with it.
        let (x, mut y) = (5, 20);
        for (label, band) in &entries {
            match band {
                Some(i) => {
                    let color = PALETTE[i % PALETTE.len()];
                    swatch(
                        &legend_area,
                        (x, y),
                        (28, 14),
                        color.mix(0.2).filled(),
                        None,
                    )?;
                    let style = color.stroke_width(if same[*i].is_some() { 2 } else { 3 });
                    let line = vec![(x, y + 7), (x + 28, y + 7)];
                    match line_dash(*i) {
                        None => legend_area.draw(&PathElement::new(line, style)),
                        Some((dash, gap)) => {
                            legend_area.draw(&DashedPathElement::new(line, dash, gap, style))
                        }
                    }
                    .map_err(de)?;
                    marker(legend_area.clone(), (x + 14, y + 7), *i, color, 6)?;
                }
                None => {
                    let kind = kinds
                        .iter()
                        .find(|k| k.label() == label)
                        .copied()
                        .unwrap_or(ShadeKind::Trigger);
                    if kind == ShadeKind::Mark {
                        legend_area
                            .draw(&DashedPathElement::new(
                                vec![(x + 14, y), (x + 14, y + 14)],
                                6,
                                4,
                                kind.color().stroke_width(2),
                            ))
                            .map_err(de)?;
                    } else {
                        swatch(&legend_area, (x, y), (28, 14), kind.color().filled(), None)?;
                    }
                }
            }
            y += 26 + legend_text(&legend_area, (x + LEGEND_TEXT_X, y + 7), label, 15.0)?;
        }
        legend_notes(&legend_area, (x, y + 10), &TIME_NOTE)
    }
}

/// Grey notes under a legend's entries, a line each from `(x, y)` down.
fn legend_notes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, mut y): (i32, i32),
    notes: &[&str],
) -> Result<(), PlotError> {
    for note in notes {
        area.draw(&Text::new(
            *note,
            (x, y + 7),
            text(13.0)
                .color(&BLACK.mix(0.7))
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(de)?;
        y += 20;
    }
    Ok(())
}

/// Where a legend entry's text starts, right of its swatch at `x`.
const LEGEND_TEXT_X: i32 = 36;

/// The width of a legend right of a plot in an area `width` pixels wide:
/// enough for the widest of `labels` in `size` px after its swatch, at
/// least `min`, at most two fifths of the width (the plot keeps the rest;
/// a longer label is wrapped by [`legend_text`], never cut).
fn legend_width(width: u32, labels: &[&str], size: f64, min: u32) -> u32 {
    let widest = (labels.iter())
        .map(|l| text_width(l, &text(size)))
        .max()
        .unwrap_or(0);
    let most = width * 2 / 5;
    (widest + LEGEND_TEXT_X as u32 + 24).clamp(min.min(most), most)
}

/// A legend entry's `label` in `size` px, starting at `x` with its first
/// line's middle at `y`, wrapped ([`wrapped`]) to the area's width; returns
/// how much lower than one line it reaches (0 for a single line).
fn legend_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    label: &str,
    size: f64,
) -> Result<i32, PlotError> {
    let font = text(size).pos(Pos::new(HPos::Left, VPos::Center));
    let room = (area.dim_in_pixel().0 as i32 - x - 5).max(1) as u32;
    let step = (size * 1.2).round() as i32;
    let lines = wrapped(label, room, |s| text_width(s, &font));
    for (k, line) in lines.iter().enumerate() {
        area.draw(&Text::new(
            line.as_str(),
            (x, y + step * k as i32),
            font.clone(),
        ))
        .map_err(de)?;
    }
    Ok(step * (lines.len() as i32 - 1))
}

/// The legend entry of line `i` at `(x, y)` (top left): its colour and
/// dash, its marker of radius `r`, and `label` in `size` px (wrapped to
/// the area); returns how much lower than one line the label reaches.
fn legend_line<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    i: usize,
    label: &str,
    (r, size): (i32, f64),
) -> Result<i32, PlotError> {
    let color = PALETTE[i % PALETTE.len()];
    let seg = vec![(x, y + 7), (x + 28, y + 7)];
    match line_dash(i) {
        None => area.draw(&PathElement::new(seg, color.stroke_width(2))),
        Some((d, g)) => area.draw(&DashedPathElement::new(seg, d, g, color.stroke_width(2))),
    }
    .map_err(de)?;
    marker(area.clone(), (x + 14, y + 7), i, color, r)?;
    legend_text(area, (x + LEGEND_TEXT_X, y + 7), label, size)
}

/// The dash pattern (dash, gap in pixels) of line `i`; `None`: solid.
fn line_dash(i: usize) -> Option<(u32, u32)> {
    [
        None,
        Some((10, 5)),
        Some((3, 4)),
        Some((14, 4)),
        Some((6, 6)),
    ][i % 5]
}

/// Draws marker `i` (circle, triangle, square, triangle pointing down,
/// diamond) at `c`. No cross: the recovery plot's cross means "no run
/// recovered", which a line's own marker must not be read as.
fn marker<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    c: (i32, i32),
    i: usize,
    color: RGBColor,
    r: i32,
) -> Result<(), PlotError> {
    let (x, y) = c;
    let style = color.filled();
    match i % 5 {
        0 => area.draw(&Circle::new(c, r - 1, style)),
        1 => area.draw(&Polygon::new(
            vec![(x, y - r), (x + r, y + r - 1), (x - r, y + r - 1)],
            style,
        )),
        2 => area.draw(&Rectangle::new(
            [(x - r + 1, y - r + 1), (x + r - 1, y + r - 1)],
            style,
        )),
        3 => area.draw(&Polygon::new(
            vec![(x, y + r), (x + r, y - r + 1), (x - r, y - r + 1)],
            style,
        )),
        _ => area.draw(&Polygon::new(
            vec![(x, y - r), (x + r, y), (x, y + r), (x - r, y)],
            style,
        )),
    }
    .map_err(de)
}

/// For each band, the first earlier band it coincides with: the same x
/// values and medians within 1 % of the medians' range at every x (lines
/// that close are drawn on top of each other), whose line it would hide.
pub fn coinciding(bands: &[Band]) -> Vec<Option<usize>> {
    let key = |b: &Band| {
        let mut p: Vec<(f64, f64)> = b
            .points
            .iter()
            .filter(|p| p.x.is_finite())
            .map(|p| (p.x, p.median))
            .collect();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        p
    };
    let keys: Vec<Vec<(f64, f64)>> = bands.iter().map(key).collect();
    let (lo, hi) = keys
        .iter()
        .flatten()
        .map(|p| p.1)
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let tol = if hi > lo { (hi - lo) * 0.01 } else { 1e-9 };
    let near = |a: f64, b: f64| (!a.is_finite() && !b.is_finite()) || (a - b).abs() <= tol;
    let same = |a: &[(f64, f64)], b: &[(f64, f64)]| {
        !a.is_empty()
            && a.len() == b.len()
            && a.iter().zip(b).all(|(p, q)| p.0 == q.0 && near(p.1, q.1))
    };
    (0..keys.len())
        .map(|i| (0..i).find(|&j| same(&keys[i], &keys[j])))
        .collect()
}

/// The legend's name of each band: its label, and for a band that
/// coincides with an earlier one, which (`"b (on top of a)"`).
pub fn legend_labels(bands: &[Band]) -> Vec<String> {
    coinciding(bands)
        .iter()
        .zip(bands)
        .map(|(same, b)| match same {
            Some(j) => format!("{} (on top of {})", b.label, bands[*j].label),
            None => b.label.clone(),
        })
        .collect()
}

// ------------------------------------------------------------------ heatmaps

/// A heatmap per panel over two axes (x levels × y levels), cell colour =
/// value in \[0, 1\] (e.g. probability of not recovering), missing cells
/// grey, the value printed in each cell, a colour scale legend, one panel
/// per entry (e.g. one per strategy), at most three side by side.
///
/// Colours follow viridis (0 dark purple, 1 yellow); values outside
/// \[0, 1\] are clamped for the colour but printed as they are. The first
/// y level is at the bottom. The image is at least 1000 × 600 and grows
/// with the number of panels (a row of panels per three) and levels.
///
/// Errors (no file written): no panels, no x or y levels, or a panel whose
/// `values` is not `y_levels.len()` rows of `x_levels.len()` cells.
#[allow(clippy::too_many_arguments)] // the public API asked for this shape
pub fn heatmaps(
    stem: &Path,
    title: &str,
    x_label: &str,
    x_levels: &[String],
    y_label: &str,
    y_levels: &[String],
    panels: &[HeatPanel],
    value_label: &str,
) -> Result<(), PlotError> {
    if panels.is_empty() {
        return Err(bad_input(title, "no panels to plot".to_string()));
    }
    if x_levels.is_empty() || y_levels.is_empty() {
        return Err(bad_input(title, "no x or y levels".to_string()));
    }
    for p in panels {
        if p.values.len() != y_levels.len()
            || p.values.iter().any(|row| row.len() != x_levels.len())
        {
            return Err(bad_input(
                title,
                format!(
                    "panel {:?} is not {} rows of {} values",
                    p.title,
                    y_levels.len(),
                    x_levels.len()
                ),
            ));
        }
    }
    let (nx, ny) = (x_levels.len() as u32, y_levels.len() as u32);
    let panel_w = (70 * nx + 150).clamp(320, 800);
    let (rows, columns) = heat_grid(panels.len());
    let width = (columns as u32 * panel_w + 160).max(1000);
    let height = rows as u32 * (48 * ny + 230).max(600);
    let plot = HeatPlot {
        title,
        x_label,
        x_levels,
        y_label,
        y_levels,
        panels,
        value_label,
    };
    render_both!(stem, (width, height), |root| plot.draw(&root))
}

/// Rows and columns of `panels` heatmaps: at most three side by side, so
/// that their text stays readable once the page scales the image to its
/// width (four make two rows of two).
fn heat_grid(panels: usize) -> (usize, usize) {
    let rows = panels.div_ceil(3);
    (rows, panels.div_ceil(rows))
}

/// Everything [`heatmaps`] draws, validated.
struct HeatPlot<'a> {
    title: &'a str,
    x_label: &'a str,
    x_levels: &'a [String],
    y_label: &'a str,
    y_levels: &'a [String],
    panels: &'a [HeatPanel],
    value_label: &'a str,
}

/// Viridis at nine evenly spaced stops.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

/// The viridis colour of `v`, clamped to \[0, 1\].
fn viridis(v: f64) -> RGBColor {
    let t = v.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (t.floor() as usize).min(VIRIDIS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Black or white, whichever reads better on `c`.
fn ink_on(c: RGBColor) -> RGBColor {
    let luma = 0.299 * c.0 as f64 + 0.587 * c.1 as f64 + 0.114 * c.2 as f64;
    if luma > 140.0 { BLACK } else { WHITE }
}

/// Value printed in a cell: two decimals, fewer digits for large values.
fn cell_text(v: f64) -> String {
    if !v.is_finite() {
        format!("{v}")
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// An f64 axis `0..n` of `n` unit cells, with one tick at each cell's
/// centre `i + 0.5` (all of them, whatever the hint).
struct Centred(usize);

impl Ranged for Centred {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, (a, b): (i32, i32)) -> i32 {
        a + (v / self.0 as f64 * (b - a) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        (0..self.0).map(|i| i as f64 + 0.5).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.0 as f64
    }
}

/// The level at tick `v` of a [`Centred`] axis.
fn level(levels: &[String], v: f64) -> String {
    if v < 0.0 {
        return String::new();
    }
    levels.get(v as usize).cloned().unwrap_or_default()
}

impl HeatPlot<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let body = titled(root, self.title)?;
        let (w, _) = body.dim_in_pixel();
        let (main, scale) = body.split_horizontally(w - 160);
        let label_font = text(15.0);
        let y_tick_w = self
            .y_levels
            .iter()
            .map(|l| text_width(l, &label_font))
            .max()
            .unwrap_or(0);
        let (nx, ny) = (self.x_levels.len(), self.y_levels.len());
        let missing = self
            .panels
            .iter()
            .flat_map(|p| p.values.iter().flatten())
            .any(|v| !v.is_some_and(f64::is_finite));
        let caption_font = bold(18.0);
        for (panel, area) in self
            .panels
            .iter()
            .zip(main.split_evenly(heat_grid(self.panels.len())))
        {
            let mut chart = ChartBuilder::on(&area)
                .caption(&panel.title, caption_font.clone())
                .margin(10)
                .x_label_area_size(55)
                .y_label_area_size(y_tick_w + 45)
                .build_cartesian_2d(Centred(nx), Centred(ny))
                .map_err(de)?;
            chart
                .configure_mesh()
                .disable_mesh()
                .x_desc(self.x_label)
                .y_desc(self.y_label)
                .x_label_formatter(&|v| level(self.x_levels, *v))
                .y_label_formatter(&|v| level(self.y_levels, *v))
                .label_style(label_font.clone())
                .axis_desc_style(text(16.0))
                .draw()
                .map_err(de)?;
            let (pw, ph) = chart.plotting_area().dim_in_pixel();
            let cell = ((pw as f64 / nx as f64) * 0.22).min(ph as f64 / ny as f64 * 0.4);
            let value_size = cell.clamp(9.0, 18.0);
            for (yi, row) in panel.values.iter().enumerate() {
                for (xi, v) in row.iter().enumerate() {
                    let (x, y) = (xi as f64, yi as f64);
                    let (fill, label) = match v {
                        Some(v) if v.is_finite() => (viridis(*v), cell_text(*v)),
                        Some(v) => (MISSING, cell_text(*v)),
                        None => (MISSING, "–".to_string()),
                    };
                    chart
                        .draw_series([
                            Rectangle::new([(x, y), (x + 1.0, y + 1.0)], fill.filled()),
                            Rectangle::new([(x, y), (x + 1.0, y + 1.0)], WHITE.stroke_width(1)),
                        ])
                        .map_err(de)?;
                    chart
                        .draw_series([Text::new(
                            label,
                            (x + 0.5, y + 0.5),
                            text(value_size)
                                .color(&ink_on(fill))
                                .pos(Pos::new(HPos::Center, VPos::Center)),
                        )])
                        .map_err(de)?;
                }
            }
        }

        // Colour scale, top aligned with the panels' plotting areas.
        let mut chart = ChartBuilder::on(&scale)
            .caption(" ", caption_font)
            .margin(10)
            .margin_right(55)
            .x_label_area_size(55)
            .y_label_area_size(30)
            .build_cartesian_2d(0.0..1.0, 0.0..1.0)
            .map_err(de)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_labels(0)
            .y_desc(self.value_label)
            .axis_desc_style(text(16.0))
            .draw()
            .map_err(de)?;
        // The scale's ticks on its right, clear of the bar (plotters' left
        // labels ran into it).
        for k in 0..=5 {
            let v = k as f64 / 5.0;
            let (x, y) = chart.backend_coord(&(1.0, v));
            root.draw(&PathElement::new(
                vec![(x, y), (x + 5, y)],
                BLACK.stroke_width(1),
            ))
            .map_err(de)?;
            root.draw(&Text::new(
                format!("{v:.1}"),
                (x + 8, y),
                label_font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(de)?;
        }
        let steps = 100;
        chart
            .draw_series((0..steps).map(|i| {
                let (a, b) = (i as f64 / steps as f64, (i + 1) as f64 / steps as f64);
                Rectangle::new([(0.0, a), (1.0, b)], viridis((a + b) / 2.0).filled())
            }))
            .map_err(de)?;
        chart
            .draw_series([Rectangle::new(
                [(0.0, 0.0), (1.0, 1.0)],
                BLACK.stroke_width(1),
            )])
            .map_err(de)?;
        if missing {
            let (x, y) = chart.backend_coord(&(0.0, 0.0));
            let (x, y) = (x, y + 18);
            root.draw(&Rectangle::new(
                [(x, y), (x + 22, y + 16)],
                MISSING.filled(),
            ))
            .map_err(de)?;
            root.draw(&Text::new(
                "no data",
                (x + 28, y + 8),
                text(14.0).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(de)?;
        }
        Ok(())
    }
}

// --------------------------------------------------------- sensitivity bars

/// Grouped bars: for each axis, two bars (S1 and ST) with error bars
/// (conf), one panel per metric (small multiples in a grid), y from 0 to 1.
///
/// The grid has up to three columns (two for four panels); the image is
/// 1000 × 600 for up to two panels and grows with more. `conf` is the
/// half-width of the confidence interval; a NaN conf draws no error bar, a
/// NaN index no bar. The y axis, shared by all panels, is 0–1, widened to
/// show estimates below 0 or above 1 (within −0.5…1.5; beyond that bars are
/// clipped). The prefix of dotted path every axis name shares
/// (`page.fanout.recs.`) is left out of the names and said once under the
/// legend; names too long for their slot are written vertically, whole,
/// and the panels grow to fit them.
///
/// Errors (no file written): no panels, or a panel whose five vectors are
/// not all the same length. A panel without axes is drawn empty.
pub fn sensitivity_bars(stem: &Path, title: &str, panels: &[IndexBars]) -> Result<(), PlotError> {
    if panels.is_empty() {
        return Err(bad_input(title, "no panels to plot".to_string()));
    }
    for p in panels {
        let n = p.axes.len();
        if [p.s1.len(), p.s1_conf.len(), p.st.len(), p.st_conf.len()]
            .iter()
            .any(|&l| l != n)
        {
            return Err(bad_input(
                title,
                format!(
                    "panel {:?} has {} axes but {}/{}/{}/{} S1/S1 conf/ST/ST conf values",
                    p.metric,
                    n,
                    p.s1.len(),
                    p.s1_conf.len(),
                    p.st.len(),
                    p.st_conf.len()
                ),
            ));
        }
    }
    let n = panels.len();
    let cols = match n {
        1..=3 => n,
        4 => 2,
        _ => 3,
    };
    let rows = n.div_ceil(cols);
    let width = if cols == 3 { 1200 } else { 1000 };
    let prefix = common_prefix(panels.iter().flat_map(|p| &p.axes));
    let names: Vec<AxisNames> = (panels.iter())
        .map(|p| AxisNames::fit(&p.axes, prefix, width / cols as u32))
        .collect();
    // Every panel's names get the room of the longest, so that the panels
    // of a row line up.
    let x_area = names.iter().map(|a| a.height).max().unwrap_or(0);
    let legend_h = if prefix.is_empty() { 34 } else { 56 };
    let height = (rows as u32 * (290 + x_area) + 76 + legend_h).max(600);
    let values = panels
        .iter()
        .flat_map(|p| p.s1.iter().chain(&p.st))
        .copied()
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold((0.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let y_range = (
        ((lo * 10.0).floor() / 10.0).max(-0.5),
        ((hi * 10.0).ceil() / 10.0).min(1.5),
    );
    let plot = BarsPlot {
        title,
        panels,
        names,
        prefix,
        x_area,
        legend_h,
        cols,
        rows,
        y_range,
    };
    render_both!(stem, (width, height), |root| plot.draw(&root))
}

/// The prefix of dotted path (ending in `.`) that all of `names` share,
/// empty if none: `page.fanout.recs.` of `page.fanout.recs.required` and
/// `page.fanout.recs.max_in_flight`.
fn common_prefix<'a>(mut names: impl Iterator<Item = &'a String>) -> &'a str {
    let Some(first) = names.next() else {
        return "";
    };
    let mut prefix = &first[..first.rfind('.').map_or(0, |i| i + 1)];
    for name in names {
        while !name.starts_with(prefix) {
            let cut = prefix[..prefix.len() - 1].rfind('.').map_or(0, |i| i + 1);
            prefix = &prefix[..cut];
        }
    }
    prefix
}

/// How one panel of [`sensitivity_bars`] writes its axis names.
struct AxisNames {
    /// The names, without the common prefix.
    names: Vec<String>,
    /// 14 px, or 12 px if that fits where 14 does not.
    size: f64,
    /// Written bottom to top: too wide for their slots even at 12 px.
    vertical: bool,
    /// The room they take below the x axis, in pixels.
    height: u32,
}

impl AxisNames {
    /// The names of `axes` less `prefix`, laid out for a panel `width` px
    /// wide: horizontal if they fit their slots, else vertical, never cut.
    fn fit(axes: &[String], prefix: &str, width: u32) -> Self {
        let names: Vec<String> = (axes.iter())
            .map(|a| a.strip_prefix(prefix).unwrap_or(a).to_string())
            .collect();
        let slot = (width as f64 - BAR_Y_LABEL_W as f64 - 20.0) / names.len().max(1) as f64;
        let widest = |size: f64| {
            (names.iter())
                .map(|s| text_width(s, &text(size)))
                .max()
                .unwrap_or(0)
        };
        let fits = |size: f64| widest(size) as f64 <= slot * 0.95;
        let size = if fits(14.0) { 14.0 } else { 12.0 };
        let vertical = !fits(size);
        let height = if vertical { widest(size) + 16 } else { 30 };
        AxisNames {
            names,
            size,
            vertical,
            height,
        }
    }
}

/// The width of the y labels of a panel of [`sensitivity_bars`].
const BAR_Y_LABEL_W: u32 = 75;

/// Everything [`sensitivity_bars`] draws, validated.
struct BarsPlot<'a> {
    title: &'a str,
    panels: &'a [IndexBars],
    /// Per panel, its axis names as written.
    names: Vec<AxisNames>,
    /// Left out of every axis name.
    prefix: &'a str,
    /// The room of the axis names below every panel.
    x_area: u32,
    /// The height of the legend under the title.
    legend_h: u32,
    cols: usize,
    rows: usize,
    y_range: (f64, f64),
}

impl BarsPlot<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let body = titled(root, self.title)?;
        let (legend, grid) = body.split_vertically(self.legend_h);
        self.legend(&legend)?;
        for ((panel, names), area) in
            (self.panels.iter().zip(&self.names)).zip(grid.split_evenly((self.rows, self.cols)))
        {
            self.panel(root, &area, panel, names)?;
        }
        Ok(())
    }

    /// The shared legend, centred under the title.
    fn legend<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let font = text(15.0);
        let items = [
            "S1 (first-order)",
            "ST (total-order)",
            "95 % confidence interval",
        ];
        let widths: Vec<i32> = items
            .iter()
            .map(|s| text_width(s, &font) as i32 + 60)
            .collect();
        let (w, _) = area.dim_in_pixel();
        let mut x = (w as i32 - widths.iter().sum::<i32>()) / 2;
        let y = 8;
        for (i, (item, iw)) in items.iter().zip(&widths).enumerate() {
            match i {
                0 => swatch(area, (x, y), (22, 16), S1_COLOR.filled(), None)?,
                1 => swatch(area, (x, y), (22, 16), ST_COLOR.filled(), None)?,
                _ => {
                    let cx = x + 11;
                    let style = BLACK.stroke_width(2);
                    for path in [
                        vec![(cx, y - 2), (cx, y + 18)],
                        vec![(cx - 5, y - 2), (cx + 5, y - 2)],
                        vec![(cx - 5, y + 18), (cx + 5, y + 18)],
                    ] {
                        area.draw(&PathElement::new(path, style)).map_err(de)?;
                    }
                }
            }
            area.draw(&Text::new(
                *item,
                (x + 30, y + 8),
                font.pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(de)?;
            x += iw;
        }
        if !self.prefix.is_empty() {
            area.draw(&Text::new(
                format!(
                    "axes named without the prefix they all share: {}",
                    self.prefix
                ),
                (w as i32 / 2, y + 34),
                text(14.0)
                    .color(&BLACK.mix(0.7))
                    .pos(Pos::new(HPos::Center, VPos::Center)),
            ))
            .map_err(de)?;
        }
        Ok(())
    }

    /// One metric's panel; `root` is the whole image (for the axis names,
    /// which lie outside the panel's plotting area).
    fn panel<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        area: &DrawingArea<DB, Shift>,
        p: &IndexBars,
        names: &AxisNames,
    ) -> Result<(), PlotError> {
        let n = p.axes.len();
        let font = text(names.size);
        let (y0, y1) = self.y_range;
        let mut chart = ChartBuilder::on(area)
            .caption(&p.metric, bold(17.0))
            .margin(10)
            .margin_right(15)
            .x_label_area_size(self.x_area)
            .y_label_area_size(BAR_Y_LABEL_W)
            .build_cartesian_2d(0.0..n.max(1) as f64, y0..y1)
            .map_err(de)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(6)
            .y_label_formatter(&|v| format!("{v:.1}"))
            .y_desc("Sobol index")
            .label_style(text(14.0))
            .axis_desc_style(text(15.0))
            .bold_line_style(BLACK.mix(0.12))
            .light_line_style(BLACK.mix(0.0))
            .draw()
            .map_err(de)?;
        if n == 0 {
            let (w, h) = chart.plotting_area().dim_in_pixel();
            return chart
                .plotting_area()
                .strip_coord_spec()
                .draw(&Text::new(
                    "no axes",
                    (w as i32 / 2, h as i32 / 2),
                    text(15.0).pos(Pos::new(HPos::Center, VPos::Center)),
                ))
                .map_err(de);
        }
        if y0 < 0.0 {
            chart
                .draw_series([PathElement::new(
                    vec![(0.0, 0.0), (n as f64, 0.0)],
                    BLACK.stroke_width(1),
                )])
                .map_err(de)?;
        }
        for (i, name) in names.names.iter().enumerate() {
            let x = i as f64;
            for (v, conf, left, color) in [
                (p.s1[i], p.s1_conf[i], x + 0.12, S1_COLOR),
                (p.st[i], p.st_conf[i], x + 0.5, ST_COLOR),
            ] {
                if !v.is_finite() {
                    continue;
                }
                chart
                    .draw_series([Rectangle::new(
                        [(left, 0.0), (left + 0.38, v)],
                        color.filled(),
                    )])
                    .map_err(de)?;
                if conf.is_finite() {
                    let (c, cap) = (left + 0.19, 0.06);
                    let (lo, hi) = (v - conf.abs(), v + conf.abs());
                    let style = BLACK.stroke_width(1);
                    chart
                        .draw_series([
                            PathElement::new(vec![(c, lo), (c, hi)], style),
                            PathElement::new(vec![(c - cap, lo), (c + cap, lo)], style),
                            PathElement::new(vec![(c - cap, hi), (c + cap, hi)], style),
                        ])
                        .map_err(de)?;
                }
            }
            // The axis name, below the x axis.
            let (px, py) = chart.backend_coord(&(x + 0.5, y0));
            let label = if names.vertical {
                Text::new(
                    name.as_str(),
                    (px, py + 8),
                    font.transform(FontTransform::Rotate270)
                        .pos(Pos::new(HPos::Right, VPos::Center)),
                )
            } else {
                Text::new(
                    name.as_str(),
                    (px, py + 8),
                    font.pos(Pos::new(HPos::Center, VPos::Top)),
                )
            };
            root.draw(&label).map_err(de)?;
        }
        Ok(())
    }
}

// ------------------------------------------------------------------ boundary

/// Where the searched quantity crosses its threshold along the bisected
/// axis, at one point of the other axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Crossing {
    /// Below the threshold at `lo`, at or above it at `hi` (or the other
    /// way round): the final bracket.
    Between { lo: f64, hi: f64 },
    /// At or above the threshold over the whole range searched.
    AboveEverywhere,
    /// Below the threshold over the whole range searched.
    BelowEverywhere,
}

/// One line of [`boundary`]: the crossing at each level of the x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryLine {
    /// The levels of the remaining axes (the legend), empty for one line.
    pub label: String,
    /// `(index into x_levels, crossing)`.
    pub points: Vec<(usize, Crossing)>,
}

/// What [`boundary`] draws.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryPlot {
    pub title: String,
    /// The first of the other axes (one position per level, as written).
    pub x_label: String,
    pub x_levels: Vec<String>,
    /// The bisected axis and the range searched.
    pub y_label: String,
    pub y_range: (f64, f64),
    pub threshold: f64,
    pub lines: Vec<BoundaryLine>,
}

/// The boundary found by `sweep refine`: per level of the x axis, the
/// middle of the final bracket (marker, value printed beside it) with the
/// bracket as an error bar, one line per combination of the remaining
/// axes; where there is no crossing, a marker on the edge of the range
/// searched (up: still below the threshold at the top; down: already above
/// it at the bottom). Written to `stem.svg` and `stem.png` (1000 × 600).
/// Errors: no x level or no point at all.
pub fn boundary(stem: &Path, plot: &BoundaryPlot) -> Result<(), PlotError> {
    if plot.x_levels.is_empty() || plot.lines.iter().all(|l| l.points.is_empty()) {
        return Err(bad_input(&plot.title, "no points to plot".to_string()));
    }
    let (lo, hi) = non_degenerate(plot.y_range.0, plot.y_range.1);
    let pad = (hi - lo) * 0.1;
    let frame = (lo - pad, hi + pad);
    render_both!(stem, SIZE, |root| draw_boundary(&root, plot, frame))
}

fn draw_boundary<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &BoundaryPlot,
    (y_lo, y_hi): (f64, f64),
) -> Result<(), PlotError> {
    let body = titled(root, &plot.title)?;
    let (w, _) = body.dim_in_pixel();
    let (chart_area, legend_area) = body.split_horizontally(w - 260);
    let (lo, hi) = plot.y_range;
    let mut chart = ChartBuilder::on(&chart_area)
        .margin(15)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .build_cartesian_2d(Centred(plot.x_levels.len()), y_lo..y_hi)
        .map_err(de)?;
    chart
        .configure_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .x_label_formatter(&|v| level(&plot.x_levels, *v))
        .y_label_formatter(&tick)
        .label_style(text(15.0))
        .axis_desc_style(text(17.0))
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(BLACK.mix(0.03))
        .max_light_lines(4)
        .draw()
        .map_err(de)?;
    // The range searched: nothing outside it was run.
    for y in [lo, hi] {
        chart
            .draw_series([DashedPathElement::new(
                vec![(0.0, y), (plot.x_levels.len() as f64, y)],
                6,
                4,
                BLACK.mix(0.4).stroke_width(1),
            )])
            .map_err(de)?;
    }
    let n = plot.lines.len() as i32;
    for (i, line) in plot.lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        // Lines at one x are spread a little so that every bracket shows.
        let spread = (i as i32 * 2 - (n - 1)) * 9;
        let at = |x: usize, y: f64| {
            let (px, py) = chart.backend_coord(&(x as f64 + 0.5, y));
            (px + spread, py)
        };
        let mut points = line.points.clone();
        points.sort_by_key(|(x, _)| *x);
        let mids: Vec<Option<(i32, i32)>> = points
            .iter()
            .map(|(x, c)| match c {
                Crossing::Between { lo, hi } => Some(at(*x, (lo + hi) / 2.0)),
                _ => None,
            })
            .collect();
        for seg in mids.split(Option::is_none) {
            let path: Vec<(i32, i32)> = seg.iter().flatten().copied().collect();
            if path.len() > 1 {
                match line_dash(i) {
                    None => root.draw(&PathElement::new(path, color.stroke_width(2))),
                    Some((d, g)) => {
                        root.draw(&DashedPathElement::new(path, d, g, color.stroke_width(2)))
                    }
                }
                .map_err(de)?;
            }
        }
        for (x, c) in &points {
            match *c {
                Crossing::Between { lo, hi } => {
                    let (top, bottom) = (at(*x, hi), at(*x, lo));
                    let style = color.stroke_width(2);
                    root.draw(&PathElement::new(vec![top, bottom], style))
                        .map_err(de)?;
                    for (cx, cy) in [top, bottom] {
                        root.draw(&PathElement::new(vec![(cx - 5, cy), (cx + 5, cy)], style))
                            .map_err(de)?;
                    }
                    let mid = at(*x, (lo + hi) / 2.0);
                    marker(root.clone(), mid, i, color, 6)?;
                    // As many decimals as the bracket's width warrants.
                    let decimals = (-(hi - lo).log10()).ceil().clamp(0.0, 6.0) as usize + 1;
                    root.draw(&Text::new(
                        format!("{:.decimals$}", (lo + hi) / 2.0),
                        (mid.0 + 9, mid.1),
                        text(13.0)
                            .color(&color)
                            .pos(Pos::new(HPos::Left, VPos::Center)),
                    ))
                    .map_err(de)?;
                }
                Crossing::BelowEverywhere => edge_arrow(root, at(*x, hi), color, true)?,
                Crossing::AboveEverywhere => edge_arrow(root, at(*x, lo), color, false)?,
            }
        }
    }
    let (x, mut y) = (5, 20);
    for (i, line) in plot.lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let seg = vec![(x, y + 7), (x + 28, y + 7)];
        match line_dash(i) {
            None => legend_area.draw(&PathElement::new(seg, color.stroke_width(2))),
            Some((d, g)) => {
                legend_area.draw(&DashedPathElement::new(seg, d, g, color.stroke_width(2)))
            }
        }
        .map_err(de)?;
        marker(legend_area.clone(), (x + 14, y + 7), i, color, 6)?;
        let label = if line.label.is_empty() {
            "boundary"
        } else {
            &line.label
        };
        legend_area
            .draw(&Text::new(
                label.to_string(),
                (x + 36, y + 7),
                text(14.0).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(de)?;
        y += 26;
    }
    let t = tick(&plot.threshold);
    let (up, down) = (
        format!("▲ at top: below {t} up to it"),
        format!("▼ at bottom: {t} or more from it"),
    );
    legend_notes(
        &legend_area,
        (x, y + 10),
        &[
            "marker: middle of the final",
            "bracket, bar: the bracket",
            "dashed: the range searched",
            &up,
            &down,
        ],
    )
}

/// A no-crossing mark on the edge `c` of the range searched: a triangle
/// pointing out of the range (up or down).
fn edge_arrow<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    color: RGBColor,
    up: bool,
) -> Result<(), PlotError> {
    let r = 8;
    let tip = if up { y - r } else { y + r };
    area.draw(&Polygon::new(
        vec![(x, tip), (x + r, y), (x - r, y)],
        color.filled(),
    ))
    .map_err(de)
}

// ------------------------------------------------------------ recovery lines

/// One x of a [`RecoveryLine`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecoveryPoint {
    pub x: f64,
    /// Median recovery time of the runs that recovered (`None`: none did).
    pub median: Option<f64>,
    /// Share of the runs that never recovered.
    pub never: f64,
}

/// One line of [`recovery_lines`] (a strategy).
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryLine {
    pub label: String,
    pub points: Vec<RecoveryPoint>,
}

/// Recovery time against a numeric axis, one line per entry: the median
/// over the runs that recovered; above the plot a `never` row where a
/// cross marks a level at which no run recovered and a hollow marker one at
/// which some did not (the share printed beside it). Written to `stem.svg`
/// and `stem.png` (1000 × 600). Errors: no line, or no point at all.
pub fn recovery_lines(
    stem: &Path,
    title: &str,
    x_label: &str,
    lines: &[RecoveryLine],
) -> Result<(), PlotError> {
    let xs: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.x))
        .collect();
    if xs.is_empty() {
        return Err(bad_input(title, "no points to plot".to_string()));
    }
    let (x_lo, x_hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let pad = ((x_hi - x_lo) * 0.04).max(0.5);
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().filter_map(|p| p.median))
        .fold(0.0f64, f64::max)
        .max(1.0);
    let frame = (x_lo - pad, x_hi + pad, y_max);
    render_both!(stem, SIZE, |root| draw_recovery(
        &root, title, x_label, lines, frame
    ))
}

fn draw_recovery<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    lines: &[RecoveryLine],
    (x_lo, x_hi, y_max): (f64, f64, f64),
) -> Result<(), PlotError> {
    let body = titled(root, title)?;
    let (w, _) = body.dim_in_pixel();
    let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
    let legend_w = legend_width(body.dim_in_pixel().0, &labels, 15.0, 230);
    let (chart_area, legend_area) = body.split_horizontally(w - legend_w);
    let build = |y_top: f64| {
        ChartBuilder::on(&chart_area)
            .margin(15)
            .x_label_area_size(55)
            .y_label_area_size(80)
            .build_cartesian_2d(x_lo..x_hi, 0.0..y_top)
            .map_err(de)
    };
    // The `never` row: per line, its markers spread a little at each level
    // so that every one shows, and above them the share that did not
    // recover, in rows so that no two shares overlap; the chart's top
    // leaves room for those rows. (The x of a level does not depend on
    // the y range.)
    let chart = build(y_max)?;
    // Per level, the lines with a mark there, centred on the level: a
    // lone mark sits on it.
    let never: Vec<(usize, f64)> = (lines.iter().enumerate())
        .flat_map(|(i, l)| {
            l.points
                .iter()
                .filter(|p| p.never > 0.0)
                .map(move |p| (i, p.x))
        })
        .collect();
    let mut marks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        for p in line.points.iter().filter(|p| p.never > 0.0) {
            let here: Vec<usize> = (never.iter()).filter(|m| m.1 == p.x).map(|m| m.0).collect();
            let k = here.iter().position(|&j| j == i).unwrap_or(0) as i32;
            let spread = (2 * k - (here.len() as i32 - 1)) * 7 / 2;
            let x = chart.backend_coord(&(p.x, 0.0)).0 + spread;
            let share = (p.never < 1.0).then(|| format!("{:.0}%", 100.0 * p.never));
            marks.push((i, x, share));
        }
    }
    let share_font = text(12.0);
    let spans: Vec<(i32, i32)> = (marks.iter())
        .filter_map(|(_, x, share)| {
            let half = text_width(share.as_deref()?, &share_font) as i32 / 2 + 2;
            Some((x - half, x + half))
        })
        .collect();
    let rows = label_rows(&spans);
    // Room above the highest median, in pixels: a gap, the row, the shares.
    const ROW_H: i32 = 14;
    let gap = 30;
    let above_row = 20 + ROW_H * rows.iter().max().map_or(0, |r| r + 1) as i32;
    let h = chart.plotting_area().dim_in_pixel().1 as f64;
    let need = ((gap + above_row) as f64).min(h / 2.0);
    let y_top = y_max * h / (h - need);
    let never_y = y_max + y_top * gap as f64 / h;
    let mut chart = build(y_top)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("recovery time after the trigger ends (s)")
        .x_label_formatter(&tick)
        .y_label_formatter(&|v| {
            if *v > y_max * 1.05 {
                String::new()
            } else {
                tick(v)
            }
        })
        .label_style(text(15.0))
        .axis_desc_style(text(17.0))
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(BLACK.mix(0.03))
        .max_light_lines(4)
        .draw()
        .map_err(de)?;
    chart
        .draw_series([DashedPathElement::new(
            vec![(x_lo, never_y), (x_hi, never_y)],
            6,
            4,
            BLACK.mix(0.5).stroke_width(1),
        )])
        .map_err(de)?;
    let (nx, ny) = chart.backend_coord(&(x_lo, never_y));
    root.draw(&Text::new(
        "never",
        (nx - 8, ny),
        text(15.0).pos(Pos::new(HPos::Right, VPos::Center)),
    ))
    .map_err(de)?;
    for (i, line) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut pts = line.points.clone();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        for seg in pts.split(|p| p.median.is_none()) {
            if seg.len() > 1 {
                let path = seg.iter().map(|p| (p.x, p.median.unwrap_or(0.0)));
                match line_dash(i) {
                    None => chart
                        .draw_series(LineSeries::new(path, color.stroke_width(2)))
                        .map(|_| ()),
                    Some((d, g)) => chart
                        .draw_series(DashedLineSeries::new(path, d, g, color.stroke_width(2)))
                        .map(|_| ()),
                }
                .map_err(de)?;
            }
        }
        for p in &pts {
            if let Some(m) = p.median {
                marker(root.clone(), chart.backend_coord(&(p.x, m)), i, color, 6)?;
            }
        }
    }
    // The rows of the marks with a share, in order.
    let mut rows = rows.into_iter();
    for &(i, x, ref share) in &marks {
        let color = PALETTE[i % PALETTE.len()];
        let c = (x, ny);
        match share {
            None => root.draw(&Cross::new(c, 7, color.stroke_width(3))),
            Some(share) => {
                let row = rows.next().unwrap_or(0) as i32;
                root.draw(&Circle::new(c, 6, color.stroke_width(2)))
                    .map_err(de)?;
                root.draw(&Text::new(
                    share.as_str(),
                    (x, ny - 10 - ROW_H * row),
                    share_font
                        .color(&color)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                ))
            }
        }
        .map_err(de)?;
    }
    let (x, mut y) = (5, 20);
    for (i, line) in lines.iter().enumerate() {
        let label = match (0..i).find(|&j| same_recovery(&lines[j], line, y_max * 0.01)) {
            Some(j) => format!("{} (on top of {})", line.label, lines[j].label),
            None => line.label.clone(),
        };
        y += 26 + legend_line(&legend_area, (x, y), i, &label, (6, 15.0))?;
    }
    // Only the marks the plot shows are explained.
    let mut notes = vec!["line: median over the", "runs that recovered"];
    if marks.iter().any(|(_, _, share)| share.is_none()) {
        notes.push("×: no run recovered");
    }
    if marks.iter().any(|(_, _, share)| share.is_some()) {
        notes.push("○ n%: n% did not");
    }
    legend_notes(&legend_area, (x, y + 10), &notes)
}

/// Whether two recovery lines would be drawn on top of each other: the
/// same levels and medians within `tol` (their `never` marks are spread
/// apart, and show either way).
fn same_recovery(a: &RecoveryLine, b: &RecoveryLine, tol: f64) -> bool {
    let sorted = |l: &RecoveryLine| {
        let mut p = l.points.clone();
        p.sort_by(|p, q| p.x.total_cmp(&q.x));
        p
    };
    let (a, b) = (sorted(a), sorted(b));
    !a.is_empty()
        && a.len() == b.len()
        && a.iter().zip(&b).all(|(p, q)| {
            p.x == q.x
                && match (p.median, q.median) {
                    (Some(m), Some(n)) => (m - n).abs() <= tol,
                    (None, None) => true,
                    _ => false,
                }
        })
}

/// The row of each of `spans` (pixel intervals `(left, right)` of labels
/// on one line), row 0 first: placed from left to right, each in the
/// lowest row where it overlaps none placed before it.
fn label_rows(spans: &[(i32, i32)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&k| spans[k].0);
    // The right end of the last span placed in each row.
    let mut ends: Vec<i32> = Vec::new();
    let mut rows = vec![0; spans.len()];
    for k in order {
        let (left, right) = spans[k];
        let row = ends.iter().position(|&e| e < left).unwrap_or(ends.len());
        match ends.get_mut(row) {
            Some(e) => *e = right,
            None => ends.push(right),
        }
        rows[k] = row;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts both files exist, are well-formed-ish, of `size`, with
    /// `title` in the SVG, and that the PNG is not blank.
    fn check(stem: &Path, title: &str, size: (u32, u32)) {
        check_within(stem, title, size.0, size.1..=size.1);
    }

    /// As [`check`], for a plot whose height follows the system font's
    /// metrics (names written whole).
    fn check_within(stem: &Path, title: &str, width: u32, heights: std::ops::RangeInclusive<u32>) {
        let (svg, png) = output_paths(stem).unwrap();
        let svg = std::fs::read_to_string(svg).unwrap();
        assert!(
            svg.starts_with("<svg") || svg.starts_with("<?xml"),
            "{svg:.80}"
        );
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains(title), "title {title:?} not in SVG");
        let png = std::fs::read(png).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert_eq!(w, width);
        assert!(heights.contains(&h), "height {h} not in {heights:?}");
        // A blank white 1000×600 PNG compresses to a few kB; text, lines
        // and fills make it much larger.
        assert!(png.len() > 15_000, "PNG suspiciously small: {}", png.len());
    }

    fn band(label: &str, n: usize, level: f64) -> Band {
        Band {
            label: label.to_string(),
            points: (0..n)
                .map(|i| {
                    let x = i as f64;
                    let dip = if (20.0..40.0).contains(&x) { 0.5 } else { 0.0 };
                    let m = level - dip + 0.05 * (x / 5.0).sin();
                    BandPoint {
                        x,
                        median: m,
                        q25: m - 0.08,
                        q75: m + 0.05,
                    }
                })
                .collect(),
        }
    }

    fn bands() -> Vec<Band> {
        vec![band("no retry", 60, 0.9), band("retry ×3", 60, 0.8)]
    }

    /// A boundary with crossings and both kinds of no crossing draws; one
    /// without any point is refused and writes nothing.
    #[test]
    fn boundary_draws_brackets_and_edges() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("boundary");
        let mut plot = BoundaryPlot {
            title: "Where P(not recovered) crosses 0.5".to_string(),
            x_label: "client.rate_per_s".to_string(),
            x_levels: vec!["250".to_string(), "400".to_string()],
            y_label: "svc_b.slow.duration_s at the crossing".to_string(),
            y_range: (0.5, 8.0),
            threshold: 0.5,
            lines: vec![BoundaryLine {
                label: "strategy=naive".to_string(),
                points: vec![
                    (0, Crossing::Between { lo: 2.0, hi: 2.5 }),
                    (1, Crossing::AboveEverywhere),
                ],
            }],
        };
        boundary(&stem, &plot).unwrap();
        check(&stem, "Where P(not recovered) crosses 0.5", SIZE);
        plot.lines[0].points.clear();
        let empty = dir.path().join("empty");
        assert!(boundary(&empty, &plot).is_err());
        assert!(!output_paths(&empty).unwrap().0.exists());
    }

    fn heat_input() -> (Vec<String>, Vec<String>, Vec<HeatPanel>) {
        let xs: Vec<String> = ["0.5", "1", "2", "4", "8"].map(String::from).to_vec();
        let ys: Vec<String> = ["10", "100", "1000"].map(String::from).to_vec();
        let panel = |title: &str, k: f64| HeatPanel {
            title: title.to_string(),
            values: (0..ys.len())
                .map(|y| {
                    (0..xs.len())
                        .map(|x| match (x, y) {
                            (0, 0) => None,
                            (4, 2) => Some(1.25),
                            _ => Some((k * (x + y) as f64 / 6.0).min(1.0)),
                        })
                        .collect()
                })
                .collect(),
        };
        let panels = vec![
            panel("no retry", 0.5),
            panel("retry", 1.0),
            panel("backoff", 0.3),
        ];
        (xs, ys, panels)
    }

    fn bars_input() -> Vec<IndexBars> {
        let axes: Vec<String> = ["timeout_s", "retries", "slow_factor", "users"]
            .map(String::from)
            .to_vec();
        let panel = |metric: &str, shift: f64| IndexBars {
            metric: metric.to_string(),
            axes: axes.clone(),
            s1: vec![0.4 + shift, 0.1, 0.25, -0.02],
            s1_conf: vec![0.05, 0.03, f64::NAN, 0.04],
            st: vec![0.55 + shift, 0.2, 0.3, 0.05],
            st_conf: vec![0.06, 0.04, 0.05, f64::NAN],
        };
        vec![
            panel("recovery_s", 0.0),
            panel("goodput", 0.1),
            panel("wasted_share", -0.2),
            panel("success_rate_during", 0.05),
        ]
    }

    /// Text is wrapped at spaces; a path too long for a line is cut
    /// between its names, an underscore only where a name alone is too
    /// long, and nothing is ever dropped.
    #[test]
    fn a_long_title_is_wrapped_at_spaces_then_between_names() {
        let width = |s: &str| 10 * s.chars().count() as u32;
        assert_eq!(wrapped("short title", 200, width), ["short title"]);
        assert_eq!(
            wrapped(
                "Success rate (page.fanout.recs.max_in_flight=4, required=true)",
                300,
                width
            ),
            [
                "Success rate",
                "(page.fanout.recs.",
                "max_in_flight=4,",
                "required=true)"
            ]
        );
        assert_eq!(
            wrapped("page.fanout.recs.attempt_timeout_s=0.25", 120, width),
            ["page.fanout.", "recs.", "attempt_", "timeout_s=", "0.25"]
        );
        // A number is never cut at its decimal point.
        assert_eq!(
            wrapped("svc_b.slow.duration_s=0.25", 120, width),
            ["svc_b.slow.", "duration_s=", "0.25"]
        );
        let label =
            "page.fanout.recs.attempt_timeout_s=0.25 (= page.fanout.recs.attempt_timeout_s=0.5)";
        for room in [80, 150, 250, 400] {
            let lines = wrapped(label, room, width);
            assert_eq!(lines.join("").replace(' ', ""), label.replace(' ', ""));
        }
    }

    #[test]
    fn time_bands_writes_svg_and_png() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let stem = dir.join("success_rate");
        let title = "Success rate over time";
        time_bands(
            &stem,
            title,
            "time (s)",
            "success rate (share)",
            &bands(),
            &[Shade {
                kind: ShadeKind::Slow,
                from: 20.0,
                to: 40.0,
            }],
            Some((0.0, 1.0)),
            0,
        )
        .unwrap();
        check(&stem, title, SIZE);
    }

    #[test]
    fn time_bands_edge_cases() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        assert!(time_bands(&dir.join("a"), "t", "x", "y", &[], &[], None, 0).is_err());
        let nan = Band {
            label: "nan".into(),
            points: vec![BandPoint {
                x: 1.0,
                median: f64::NAN,
                q25: 0.0,
                q75: 1.0,
            }],
        };
        assert!(time_bands(&dir.join("b"), "t", "x", "y", &[nan], &[], None, 0).is_err());
        assert!(!dir.join("b.svg").exists() && !dir.join("b.png").exists());
        // A single x, a gap, an empty band, a shade outside the data, a
        // degenerate y range: all drawn.
        let single = Band {
            label: "single".into(),
            points: vec![BandPoint {
                x: 3.0,
                median: 0.5,
                q25: 0.4,
                q75: 0.7,
            }],
        };
        let empty = Band {
            label: "empty".into(),
            points: vec![],
        };
        let stem = dir.join("single.x");
        time_bands(
            &stem,
            "Single point",
            "x (s)",
            "y (1)",
            &[single.clone(), empty],
            &[Shade {
                kind: ShadeKind::Spike,
                from: 10.0,
                to: 20.0,
            }],
            None,
            0,
        )
        .unwrap();
        check(&stem, "Single point", SIZE);
        assert!(dir.join("single.x.svg").exists());
        let mut gappy = band("gappy", 30, 0.5);
        gappy.points[10].median = f64::NAN;
        gappy.points[15].q75 = f64::INFINITY;
        time_bands(
            &dir.join("gap"),
            "Gap",
            "x",
            "y",
            &[gappy, single],
            &[],
            Some((1.0, 1.0)),
            0,
        )
        .unwrap();
    }

    #[test]
    fn heatmaps_write_svg_and_png() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let stem = dir.join("not_recovered");
        let title = "Probability of not recovering";
        let (xs, ys, panels) = heat_input();
        heatmaps(
            &stem,
            title,
            "timeout (s)",
            &xs,
            "users",
            &ys,
            &panels,
            "P(not recovered)",
        )
        .unwrap();
        check(&stem, title, (3 * (70 * 5 + 150) + 160, 600));
    }

    #[test]
    fn heatmaps_edge_cases() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (xs, ys, panels) = heat_input();
        let stem = dir.join("h");
        assert!(heatmaps(&stem, "t", "x", &xs, "y", &ys, &[], "v").is_err());
        assert!(heatmaps(&stem, "t", "x", &[], "y", &ys, &panels, "v").is_err());
        assert!(heatmaps(&stem, "t", "x", &xs[..2], "y", &ys, &panels, "v").is_err());
        assert!(!dir.join("h.svg").exists());
        // One cell, out of range and NaN values.
        let one = [HeatPanel {
            title: "only".into(),
            values: vec![vec![Some(-0.5)]],
        }];
        heatmaps(&stem, "One cell", "x", &xs[..1], "y", &ys[..1], &one, "v").unwrap();
        check(&stem, "One cell", (1000, 600));
        let nan = [HeatPanel {
            title: "nan".into(),
            values: vec![vec![Some(f64::NAN), None]],
        }];
        heatmaps(&stem, "NaN", "x", &xs[..2], "y", &ys[..1], &nan, "v").unwrap();
    }

    #[test]
    fn sensitivity_bars_write_svg_and_png() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let stem = dir.join("sobol");
        let title = "Sobol indices";
        sensitivity_bars(&stem, title, &bars_input()).unwrap();
        check(&stem, title, (1000, 750));
    }

    #[test]
    fn sensitivity_bars_edge_cases() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let stem = dir.join("s");
        assert!(sensitivity_bars(&stem, "t", &[]).is_err());
        let mut bad = bars_input();
        bad[1].st_conf.pop();
        assert!(sensitivity_bars(&stem, "t", &bad).is_err());
        assert!(!dir.join("s.svg").exists());
        let long = IndexBars {
            metric: "long names".into(),
            axes: (0..8)
                .map(|i| format!("a_rather_long_axis_name_number_{i}"))
                .collect(),
            s1: vec![1.3, 0.1, f64::NAN, 0.2, 0.0, 0.1, 0.2, 0.3],
            s1_conf: vec![f64::NAN; 8],
            st: vec![0.5; 8],
            st_conf: vec![0.1; 8],
        };
        let empty = IndexBars {
            metric: "empty".into(),
            axes: vec![],
            s1: vec![],
            s1_conf: vec![],
            st: vec![],
            st_conf: vec![],
        };
        sensitivity_bars(&stem, "Edge cases", &[long, empty]).unwrap();
        // The whole names, written vertically: 600 px, or a little taller
        // where the system font's are wider.
        check_within(&stem, "Edge cases", 1000, 600..=660);
        let svg = std::fs::read_to_string(dir.join("s.svg")).unwrap();
        assert!(svg.contains(">\na_rather_long_axis_name_number_7\n<"));
    }

    /// Axis names are never cut: the dotted prefix they all share is said
    /// once under the legend and left out of each, and what is left is
    /// written whole, the panels growing to fit it.
    #[test]
    fn sensitivity_bars_show_whole_axis_names() {
        let tmp = tempfile::tempdir().unwrap();
        let stem = tmp.path().join("s");
        let axes = [
            "page.fanout.recs.attempt_timeout_s",
            "page.fanout.recs.max_in_flight",
            "page.fanout.recs.required",
            "page.fanout.recs.a_much_longer_parameter_name_than_the_others",
        ];
        let panel = |metric: &str| IndexBars {
            metric: metric.into(),
            axes: axes.map(String::from).to_vec(),
            s1: vec![0.1; 4],
            s1_conf: vec![0.05; 4],
            st: vec![0.2; 4],
            st_conf: vec![0.05; 4],
        };
        let panels: Vec<IndexBars> = ["recovered", "goodput", "wasted_share", "queue"]
            .map(panel)
            .to_vec();
        sensitivity_bars(&stem, "Whole names", &panels).unwrap();
        let svg = std::fs::read_to_string(tmp.path().join("s.svg")).unwrap();
        assert!(svg.contains("prefix they all share: page.fanout.recs."));
        for name in axes {
            let rest = name.strip_prefix("page.fanout.recs.").unwrap();
            assert!(svg.contains(&format!(">\n{rest}\n<")), "{rest} not whole");
        }
        assert!(!svg.contains('…'));
    }

    /// Figures given the same least legend width have their legend, and
    /// so their plot's right edge, at the same place, whatever their own
    /// labels' lengths: a page stacks them on one time axis.
    #[test]
    fn time_figures_given_one_legend_width_line_up() {
        let tmp = tempfile::tempdir().unwrap();
        let slow = [Shade {
            kind: ShadeKind::Slow,
            from: 20.0,
            to: 40.0,
        }];
        let short = [band("a", 60, 0.9)];
        let long = [band("a_strategy_with_a_long_name", 60, 0.9)];
        let legend_x = |bands: &[Band], legend_w: u32, name: &str| {
            let stem = tmp.path().join(name);
            time_bands(&stem, "t", "x", "y", bands, &slow, None, legend_w).unwrap();
            let svg = std::fs::read_to_string(output_paths(&stem).unwrap().0).unwrap();
            let texts = svg_texts(&svg);
            let (_, at) = (texts.iter().find(|(t, _)| t == "slow window")).unwrap();
            at.unwrap().0
        };
        let widest = time_legend_width(&short, &slow)
            .unwrap()
            .max(time_legend_width(&long, &slow).unwrap());
        assert!(
            time_legend_width(&long, &slow).unwrap() > time_legend_width(&short, &slow).unwrap()
        );
        assert_eq!(
            legend_x(&short, widest, "short"),
            legend_x(&long, widest, "long")
        );
        // Each by its own labels, they would not.
        assert!(legend_x(&short, 0, "short_own") > legend_x(&long, 0, "long_own"));
    }

    /// The texts of `svg` in order, each with its left end and width in
    /// pixels when it is drawn rightwards from its anchor (not rotated).
    fn svg_texts(svg: &str) -> Vec<(String, Option<(f64, u32)>)> {
        (svg.split("<text ").skip(1))
            .map(|element| {
                let (head, rest) = element.split_once('>').unwrap();
                let attr = |name: &str| {
                    let v = head.split(&format!("{name}=\"")).nth(1)?;
                    v.split('"').next()
                };
                let content = rest.split('<').next().unwrap().trim().to_string();
                let rightwards =
                    attr("text-anchor") == Some("start") && attr("transform").is_none();
                let extent = rightwards.then(|| {
                    let x: f64 = attr("x").unwrap().parse().unwrap();
                    let size: f64 = attr("font-size").unwrap().parse().unwrap();
                    // plotters' size is the SVG's font-size times 1.24.
                    (x, text_width(&content, &text(size * 1.24)))
                });
                (content, extent)
            })
            .collect()
    }

    /// Legends show every label whole, inside the image: widened to the
    /// longest label (up to two fifths of the width) and wrapped beyond,
    /// between names, never cut (the latency plot's legend was a fixed
    /// 220 px and cut `page.fanout.recs.attempt_timeo...`).
    #[test]
    fn legend_labels_are_whole_and_inside_the_image() {
        let tmp = tempfile::tempdir().unwrap();
        let labels = [
            "page.fanout.recs.attempt_timeout_s=0.25",
            "page.fanout.recs.attempt_timeout_s=0.5+page.fanout.recs.max_in_flight=unbounded",
        ];
        let cdf = |label: &str| CdfLine {
            label: label.into(),
            ok: vec![0, 5, 3, label.len() as u64, 0],
            failed: vec![0, 0, 0, 2, 1],
        };
        let stem = tmp.path().join("cdf");
        latency_cdfs(
            &stem,
            "Latency",
            &[1e-4, 1e-3, 1e-2, 1e-1],
            &labels.map(cdf),
        )
        .unwrap();
        let bands: Vec<Band> = labels.iter().map(|l| band(l, 60, 0.9)).collect();
        let band_stem = tmp.path().join("bands");
        time_bands(&band_stem, "Bands", "t", "y", &bands, &[], None, 0).unwrap();
        let recovery: Vec<RecoveryLine> = (labels.iter())
            .map(|l| RecoveryLine {
                label: l.to_string(),
                points: vec![RecoveryPoint {
                    x: 1.0,
                    median: Some(2.0),
                    never: 0.5,
                }],
            })
            .collect();
        let recovery_stem = tmp.path().join("recovery");
        recovery_lines(&recovery_stem, "Recovery", "x", &recovery).unwrap();
        for stem in [stem, band_stem, recovery_stem] {
            let svg = std::fs::read_to_string(output_paths(&stem).unwrap().0).unwrap();
            let texts = svg_texts(&svg);
            for (content, extent) in &texts {
                if let Some((x, w)) = extent {
                    assert!(x + *w as f64 <= 1000.0, "{content:?} runs off at {x} + {w}");
                }
            }
            let all: String = texts.iter().map(|(c, _)| c.as_str()).collect();
            for label in labels {
                assert!(all.contains(label), "{label} not whole in {stem:?}");
            }
        }
    }

    /// Tick labels are plain decimals (seconds, counts), never `1.0e-4`.
    #[test]
    fn ticks_are_plain_decimals() {
        let ticks: Vec<String> = [
            1e-4,
            2.5e-4,
            1e-3,
            0.1,
            0.30000000000000004,
            1.0,
            250000.0,
            -0.5,
            0.0,
        ]
        .iter()
        .map(tick)
        .collect();
        assert_eq!(
            ticks,
            [
                "0.0001", "0.00025", "0.001", "0.1", "0.3", "1", "250000", "-0.5", "0"
            ]
        );
    }

    #[test]
    fn common_prefix_ends_at_a_dot_all_names_share() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let of = |n: &[&str]| common_prefix(names(n).iter()).to_string();
        assert_eq!(of(&["a.b.c", "a.b.d"]), "a.b.");
        assert_eq!(of(&["a.bc.d", "a.bd.e"]), "a.");
        assert_eq!(of(&["a.b.c", "strategy"]), "");
        assert_eq!(of(&["a.b.c"]), "a.b.");
        assert_eq!(of(&[]), "");
    }

    /// The shares printed above the `never` row: labels that would overlap
    /// (the lines of one level, or of levels close together) go to
    /// different rows, labels apart share the first.
    #[test]
    fn never_row_labels_do_not_overlap() {
        let spans = [(100, 130), (107, 137), (114, 144), (300, 330), (135, 165)];
        let rows = label_rows(&spans);
        assert_eq!(rows, [0, 1, 2, 0, 0]);
        for (a, b) in (0..spans.len()).flat_map(|a| (0..a).map(move |b| (a, b))) {
            let overlap = spans[a].0 <= spans[b].1 && spans[b].0 <= spans[a].1;
            assert!(!(overlap && rows[a] == rows[b]), "{a} and {b}");
        }
    }

    #[test]
    fn svg_escapes_title() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let stem = dir.join("e");
        sensitivity_bars(&stem, "S1 & ST <all>", &bars_input()[..1]).unwrap();
        check(&stem, "S1 &amp; ST &lt;all&gt;", SIZE);
    }

    #[test]
    fn png_pixels_are_not_blank() {
        ensure_fonts().unwrap();
        let (w, h) = SIZE;
        let mut buf = vec![0u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut buf, SIZE).into_drawing_area();
            let plot = TimePlot {
                title: "Buffer",
                x_label: "x",
                y_label: "y",
                bands: &bands(),
                sorted: &bands().into_iter().map(|b| b.points).collect::<Vec<_>>(),
                shade: vec![Shade {
                    kind: ShadeKind::Slow,
                    from: 20.0,
                    to: 40.0,
                }],
                x_range: (0.0, 59.0),
                y_range: (0.0, 1.0),
                legend_w: 0,
            };
            plot.draw(&root).unwrap();
            root.present().unwrap();
        }
        let white = buf.iter().filter(|&&b| b == 255).count();
        assert!(white < buf.len(), "all white");
        assert!(white > buf.len() / 2, "mostly background expected");
        let colored = buf
            .chunks(3)
            .filter(|p| p[0] != p[1] || p[1] != p[2])
            .count();
        assert!(colored > 1000, "too few coloured pixels: {colored}");
    }

    /// The recovery plot's legend says which line lies on another's, and
    /// explains only the marks drawn: no "○ n%" where every level either
    /// recovered in every run or in none.
    #[test]
    fn the_recovery_legend_says_hidden_lines_and_only_the_marks_drawn() {
        let tmp = tempfile::tempdir().unwrap();
        let line = |label: &str, never: f64| RecoveryLine {
            label: label.into(),
            points: vec![
                RecoveryPoint {
                    x: 1.0,
                    median: Some(2.0),
                    never: 0.0,
                },
                RecoveryPoint {
                    x: 2.0,
                    median: None,
                    never,
                },
            ],
        };
        let stem = tmp.path().join("r");
        recovery_lines(&stem, "R", "x", &[line("a", 1.0), line("b", 1.0)]).unwrap();
        let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert!(svg.contains("b (on top of a)"), "{svg}");
        assert!(svg.contains("no run recovered"), "{svg}");
        assert!(!svg.contains("did not"), "{svg}");
    }

    /// PNG text: each glyph keeps its side bearing ("cl" is not "d"), and
    /// text anchored at its top starts below the anchor, as in the SVG.
    #[test]
    fn png_text_keeps_bearings_and_stays_below_a_top_anchor() {
        use plotters::style::FontTransform;
        let top = Pos::new(HPos::Left, VPos::Top);
        let px = |t: &str| text_pixels(t, 24.0, false, top, FontTransform::None);
        let c_right = px("c").iter().map(|p| p.0).max().unwrap();
        let cl = px("cl");
        let l_left = cl
            .iter()
            .filter(|p| p.0 > c_right)
            .map(|p| p.0)
            .min()
            .unwrap();
        // The l stands apart from the c: a gap of its bearing.
        assert!(
            l_left >= c_right + 2,
            "c ends at {c_right}, l starts at {l_left}"
        );
        assert!(
            px("Title").iter().all(|p| p.1 >= 0),
            "glyphs above a top anchor"
        );
        // The SVG's font size: an em of 24 / 1.24 px; a capital is ~0.73 em.
        let h = px("H");
        let (lo, hi) = (
            h.iter().map(|p| p.1).min().unwrap(),
            h.iter().map(|p| p.1).max().unwrap(),
        );
        let cap = (hi - lo + 1) as f64;
        assert!((cap - 0.73 * 24.0 / 1.24).abs() <= 1.5, "cap height {cap}");
        // A decimal point sits between its digits.
        let dot = px("5.0");
        let five_right = px("5").iter().map(|p| p.0).max().unwrap();
        let zero_left = px("5.0")
            .iter()
            .filter(|p| p.0 > five_right + 6)
            .map(|p| p.0)
            .min()
            .unwrap();
        assert!(dot.iter().any(|p| p.0 > five_right && p.0 < zero_left));
    }
}

// ------------------------------------------------------------ PRIM trajectory

/// One box of a PRIM peeling and pasting trajectory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrajectoryPoint {
    pub coverage: f64,
    pub density: f64,
    /// Restricted parameters.
    pub restricted: usize,
    /// From pasting (drawn hollow) rather than peeling.
    pub pasted: bool,
}

/// The trade-off of a PRIM trajectory, as the EMA Workbench's
/// `show_tradeoff`: density against coverage, one marker per box coloured
/// by its number of restricted parameters, the chosen box ringed and
/// labelled. Written to `stem.svg` and `stem.png` (1000 × 600). Errors: no
/// box, or `chosen` not one of them.
pub fn prim_trajectory(
    stem: &Path,
    title: &str,
    points: &[TrajectoryPoint],
    chosen: usize,
) -> Result<(), PlotError> {
    if chosen >= points.len() {
        return Err(bad_input(
            title,
            format!("box {chosen} chosen of {}", points.len()),
        ));
    }
    render_both!(stem, SIZE, |root| draw_trajectory(
        &root, title, points, chosen
    ))
}

fn draw_trajectory<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    points: &[TrajectoryPoint],
    chosen: usize,
) -> Result<(), PlotError> {
    let body = titled(root, title)?;
    let (w, _) = body.dim_in_pixel();
    let (chart_area, legend_area) = body.split_horizontally(w - 230);
    let mut chart = ChartBuilder::on(&chart_area)
        .margin(15)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..1.02, 0.0..1.02)
        .map_err(de)?;
    chart
        .configure_mesh()
        .x_desc("coverage (share of the runs with the outcome inside the box)")
        .y_desc("density (share of the box's runs with it)")
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style(text(15.0))
        .axis_desc_style(text(17.0))
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(BLACK.mix(0.03))
        .max_light_lines(4)
        .draw()
        .map_err(de)?;
    let color = |r: usize| PALETTE[r % PALETTE.len()];
    chart
        .draw_series(LineSeries::new(
            points.iter().map(|p| (p.coverage, p.density)),
            BLACK.mix(0.25).stroke_width(1),
        ))
        .map_err(de)?;
    for p in points {
        let c = chart.backend_coord(&(p.coverage, p.density));
        let style = if p.pasted {
            color(p.restricted).stroke_width(2)
        } else {
            color(p.restricted).filled()
        };
        root.draw(&Circle::new(c, 5, style)).map_err(de)?;
    }
    let best = points[chosen];
    let c = chart.backend_coord(&(best.coverage, best.density));
    root.draw(&Circle::new(c, 11, BLACK.stroke_width(2)))
        .map_err(de)?;
    root.draw(&Text::new(
        format!(
            "reported: coverage {:.2}, density {:.2}",
            best.coverage, best.density
        ),
        (c.0 - 14, c.1 + 14),
        text(15.0).pos(Pos::new(HPos::Right, VPos::Top)),
    ))
    .map_err(de)?;
    // Legend: colour = restricted parameters.
    let mut counts: Vec<usize> = points.iter().map(|p| p.restricted).collect();
    counts.sort_unstable();
    counts.dedup();
    let mut y = 30;
    legend_area
        .draw(&Text::new("restricted", (10, y), bold(15.0)))
        .map_err(de)?;
    for r in counts {
        y += 26;
        legend_area
            .draw(&Circle::new((20, y + 8), 5, color(r).filled()))
            .map_err(de)?;
        legend_area
            .draw(&Text::new(
                format!("{r} parameter{}", if r == 1 { "" } else { "s" }),
                (34, y),
                text(15.0),
            ))
            .map_err(de)?;
    }
    // The reported box's ring, then hollow markers only where a box was
    // pasted: a legend entry for a mark the plot lacks would misread the
    // ring as one.
    y += 34;
    legend_area
        .draw(&Circle::new((20, y + 8), 11, BLACK.stroke_width(2)))
        .map_err(de)?;
    legend_area
        .draw(&Text::new("reported box", (38, y), text(15.0)))
        .map_err(de)?;
    if points.iter().any(|p| p.pasted) {
        y += 30;
        legend_area
            .draw(&Circle::new((20, y + 8), 5, BLACK.stroke_width(2)))
            .map_err(de)?;
        legend_area
            .draw(&Text::new("hollow: pasted", (34, y), text(15.0)))
            .map_err(de)?;
    }
    Ok(())
}
