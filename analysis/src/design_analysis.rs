//! Sobol and Morris indices of a sampled design (`[sample]`), per metric
//! and per combination of the categorical axes (one design each).
//!
//! Each metric is analysed on the per-point mean over the replicate seeds.
//! Runs without a value (failed, or the metric undefined there) are left
//! out of that mean and counted; a sample point left with no value drops
//! its whole Saltelli block (base point) or Morris trajectory, which the
//! estimators need complete, and that is counted too. With replicates, the
//! seed-noise share of a metric's run-to-run variance is reported, and the
//! indices describe the seed mean, whose noise is 1/replicates of it.

use crate::load::Sweep;
use crate::manifest::{SampleDesign, SampledAxis};
use crate::{morris, sobol};
use polars::prelude::*;

/// Bootstrap resamples of every interval (SALib's default).
pub const RESAMPLES: usize = 100;
/// The resamples' seed: reports are reproducible.
const BOOTSTRAP_SEED: u64 = 20100;

/// The indices of one metric in one design (one category combination).
pub struct DesignIndices {
    /// `dim=level` of the categorical axes; empty when there are none.
    pub category: String,
    pub metric: String,
    /// Base points (Sobol) or trajectories (Morris) analysed, and dropped.
    pub blocks_used: usize,
    pub blocks_dropped: usize,
    /// Runs without a value (failed or undefined metric).
    pub runs_dropped: usize,
    /// Per axis, the lowest and highest value among the base points or
    /// trajectories analysed (NaN when none is).
    pub kept_range: Vec<(f64, f64)>,
    /// Seed noise as a share of the run-to-run variance (replicates > 1).
    pub noise_share: Option<f64>,
    /// Whether the values analysed differ at all: every index is 0 also
    /// when they differ only in rows the estimator does not read (a
    /// Sobol design's BA rows), which is not "the same in every run".
    pub varies: bool,
    pub result: Result<Indices, String>,
}

pub enum Indices {
    Sobol(sobol::SobolIndices),
    Morris(morris::MorrisIndices),
}

/// The indices of every metric in every design, or `None` when the sweep
/// has no Sobol or Morris design.
pub fn analyze(sweep: &Sweep, metrics: &[String]) -> Option<Vec<DesignIndices>> {
    let design = sweep.manifest.design.as_ref()?;
    if design.method != "sobol" && design.method != "morris" {
        return None;
    }
    let k = design.axes.len();
    let block = match design.method.as_str() {
        "sobol" if design.second_order => 2 * k + 2,
        "sobol" => k + 2,
        _ => k + 1,
    };
    let points = design.n as usize * block;
    let sample: Vec<usize> = sweep
        .runs
        .column("sample_index")
        .ok()?
        .cast(&DataType::UInt64)
        .ok()?
        .u64()
        .ok()?
        .iter()
        .map(|v| v.unwrap_or(0) as usize)
        .collect();
    // The categories: every dimension but the design (the last).
    let cats = sweep.dims.len().saturating_sub(1);
    let mut categories: Vec<Vec<usize>> = Vec::new();
    let category_of: Vec<usize> = (0..sweep.runs.height())
        .map(|r| {
            let key = sweep.positions[r][..cats].to_vec();
            categories
                .iter()
                .position(|c| *c == key)
                .unwrap_or_else(|| {
                    categories.push(key);
                    categories.len() - 1
                })
        })
        .collect();
    let x = design_inputs(sweep, design, &sample, points);
    let mut out = Vec::new();
    for metric in metrics {
        let Some(values) = sweep.metric(metric) else {
            continue;
        };
        for (c, key) in categories.iter().enumerate() {
            let category = sweep.describe_levels(key.iter().copied().enumerate(), " ");
            let mut per_point: Vec<Vec<f64>> = vec![Vec::new(); points];
            let mut runs_dropped = 0;
            for r in (0..values.len()).filter(|r| category_of[*r] == c) {
                match values[r].filter(|v| v.is_finite() && sweep.ok()[r]) {
                    Some(v) if sample[r] < points => per_point[sample[r]].push(v),
                    _ => runs_dropped += 1,
                }
            }
            let complete: Vec<usize> = (0..design.n as usize)
                .filter(|b| (0..block).all(|i| !per_point[b * block + i].is_empty()))
                .collect();
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let y: Vec<f64> = complete
                .iter()
                .flat_map(|b| (0..block).map(move |i| b * block + i))
                .map(|p| mean(&per_point[p]))
                .collect();
            let result = if complete.is_empty() {
                Err("no complete base point or trajectory: every one lacks a value".to_string())
            } else if design.method == "sobol" {
                sobol::analyze(&y, k, design.second_order, RESAMPLES, BOOTSTRAP_SEED)
                    .map(Indices::Sobol)
                    .map_err(|e| e.to_string())
            } else {
                let rows: Vec<Vec<f64>> = complete
                    .iter()
                    .flat_map(|b| (0..block).map(move |i| b * block + i))
                    .map(|p| x[p].clone())
                    .collect();
                morris::analyze(&rows, &y, design.levels, RESAMPLES, BOOTSTRAP_SEED)
                    .map(Indices::Morris)
                    .map_err(|e| e.to_string())
            };
            let kept_range = (0..k)
                .map(|j| {
                    let values = (complete.iter())
                        .flat_map(|b| (0..block).map(move |i| b * block + i))
                        .map(|p| x[p][j])
                        .filter(|v| !v.is_nan());
                    values.fold((f64::NAN, f64::NAN), |(lo, hi), v| (lo.min(v), hi.max(v)))
                })
                .collect();
            out.push(DesignIndices {
                category,
                metric: metric.clone(),
                blocks_used: complete.len(),
                blocks_dropped: design.n as usize - complete.len(),
                runs_dropped,
                kept_range,
                noise_share: noise_share(&per_point),
                varies: y.iter().any(|v| *v != y[0]),
                result,
            });
        }
    }
    Some(out)
}

/// The design's inputs per sample point, from the runs' parameter columns.
fn design_inputs(
    sweep: &Sweep,
    design: &SampleDesign,
    sample: &[usize],
    points: usize,
) -> Vec<Vec<f64>> {
    let mut x = vec![vec![f64::NAN; design.axes.len()]; points];
    for (j, a) in design.axes.iter().enumerate() {
        let Some(col) = sweep.metric(&a.path) else {
            continue;
        };
        for (r, v) in col.iter().enumerate() {
            if let (Some(v), true) = (v, sample[r] < points) {
                x[sample[r]][j] = *v;
            }
        }
    }
    x
}

/// Mean within-point variance over the total variance of the runs, when
/// some point has two or more values.
fn noise_share(per_point: &[Vec<f64>]) -> Option<f64> {
    let var = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() as f64 - 1.0)
    };
    let within: Vec<f64> = per_point
        .iter()
        .filter(|p| p.len() > 1)
        .map(|p| var(p))
        .collect();
    if within.is_empty() {
        return None;
    }
    let all: Vec<f64> = per_point.iter().flatten().copied().collect();
    let total = var(&all);
    let noise = within.iter().sum::<f64>() / within.len() as f64;
    Some(if total > 0.0 {
        (noise / total).min(1.0)
    } else {
        0.0
    })
}

/// The per-parameter table: SALib's column names (`S1`, `S1_conf`, `ST`,
/// `ST_conf`, or `mu`, `mu_star`, `sigma`, `mu_star_conf`) with the
/// category, metric and drop counts.
pub fn frame(design: &SampleDesign, all: &[DesignIndices]) -> PolarsResult<DataFrame> {
    let names: Vec<&str> = design.axes.iter().map(|a| a.path.as_str()).collect();
    let keys: &[&str] = if design.method == "sobol" {
        &["S1", "S1_conf", "ST", "ST_conf"]
    } else {
        &["mu", "mu_star", "sigma", "mu_star_conf"]
    };
    let mut category = Vec::new();
    let mut metric = Vec::new();
    let mut parameter = Vec::new();
    let mut values: Vec<Vec<Option<f64>>> = vec![Vec::new(); keys.len()];
    let (mut used, mut dropped, mut runs, mut noise) = (vec![], vec![], vec![], vec![]);
    for d in all {
        for (j, name) in names.iter().enumerate() {
            category.push(d.category.clone());
            metric.push(d.metric.clone());
            parameter.push(name.to_string());
            let v: [Option<f64>; 4] = match &d.result {
                Ok(Indices::Sobol(s)) => [s.s1[j], s.s1_conf[j], s.st[j], s.st_conf[j]].map(Some),
                Ok(Indices::Morris(m)) => {
                    [m.mu[j], m.mu_star[j], m.sigma[j], m.mu_star_conf[j]].map(Some)
                }
                Err(_) => [None; 4],
            };
            for (col, v) in values.iter_mut().zip(v) {
                col.push(v);
            }
            used.push(d.blocks_used as i64);
            dropped.push(d.blocks_dropped as i64);
            runs.push(d.runs_dropped as i64);
            noise.push(d.noise_share);
        }
    }
    let unit = if design.method == "sobol" {
        "base_points"
    } else {
        "trajectories"
    };
    let mut cols = vec![
        Column::new("category".into(), category),
        Column::new("metric".into(), metric),
        Column::new("parameter".into(), parameter),
    ];
    for (k, v) in keys.iter().zip(values) {
        cols.push(Column::new((*k).into(), v));
    }
    cols.push(Column::new(format!("{unit}_used").into(), used));
    cols.push(Column::new(format!("{unit}_dropped").into(), dropped));
    cols.push(Column::new("runs_dropped".into(), runs));
    cols.push(Column::new("noise_share".into(), noise));
    DataFrame::new(all.len() * names.len(), cols)
}

/// The pairs' second-order indices (`S2`, `S2_conf`), when computed.
pub fn s2_frame(design: &SampleDesign, all: &[DesignIndices]) -> PolarsResult<DataFrame> {
    let names: Vec<&str> = design.axes.iter().map(|a| a.path.as_str()).collect();
    let (mut category, mut metric, mut p1, mut p2, mut s2, mut conf) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for d in all {
        let Ok(Indices::Sobol(s)) = &d.result else {
            continue;
        };
        let (Some(v), Some(c)) = (&s.s2, &s.s2_conf) else {
            continue;
        };
        for j in 0..names.len() {
            for l in j + 1..names.len() {
                category.push(d.category.clone());
                metric.push(d.metric.clone());
                p1.push(names[j].to_string());
                p2.push(names[l].to_string());
                s2.push(v[j][l]);
                conf.push(c[j][l]);
            }
        }
    }
    let n = s2.len();
    DataFrame::new(
        n,
        vec![
            Column::new("category".into(), category),
            Column::new("metric".into(), metric),
            Column::new("parameter_1".into(), p1),
            Column::new("parameter_2".into(), p2),
            Column::new("S2".into(), s2),
            Column::new("S2_conf".into(), conf),
        ],
    )
}

/// The report's section: per metric and category, the parameters by
/// importance, with what was dropped, and where the most important one
/// tips `recovered`; the metrics other than `lead` collapsed (one line
/// each in "In short" would bury the answer).
pub fn markdown(sweep: &Sweep, design: &SampleDesign, all: &[DesignIndices], lead: &str) -> String {
    let mut md = String::new();
    let what = if design.method == "sobol" {
        format!(
            "Sobol indices of a Saltelli design (N = {} base points{}), SALib's estimators: `S1` first order, `ST` total; `_conf` are 95% bootstrap half-widths ({RESAMPLES} resamples of base points).",
            design.n,
            if design.second_order {
                ", with `S2` of each pair in `design_s2.csv`"
            } else {
                ""
            }
        )
    } else {
        format!(
            "Morris screening ({} trajectories on a {}-level grid), SALib's estimators: `mu_star` the mean absolute elementary effect (in the metric's unit per grid step of delta = {:.3} of the range), `mu` its signed mean, `sigma` its spread (interactions or non-linearity); `mu_star_conf` the 95% bootstrap half-width.",
            design.n,
            design.levels,
            design.levels as f64 / (2.0 * (design.levels - 1) as f64)
        )
    };
    md.push_str(&what);
    md.push_str(" Each metric is taken as the mean over the point's replicate seeds; runs without a value (failed, or the metric undefined) are left out and counted, and a point with none drops its whole base point or trajectory. One design per combination of the categorical axes. Table: `design_indices.csv`.\n\n");
    let (first, rest): (Vec<&DesignIndices>, Vec<&DesignIndices>) =
        all.iter().partition(|d| d.metric == lead);
    md.push_str(&metrics_markdown(sweep, design, &first));
    if !rest.is_empty() {
        let metrics = rest
            .iter()
            .filter(|d| d.category == rest[0].category)
            .count();
        md.push_str(&crate::report::collapsed(
            &format!("The other {metrics} metrics' indices"),
            &metrics_markdown(sweep, design, &rest),
        ));
    }
    md
}

/// Each of `all`: its drops, its indices by importance, its tipping bins.
fn metrics_markdown(sweep: &Sweep, design: &SampleDesign, all: &[&DesignIndices]) -> String {
    let names: Vec<&str> = design.axes.iter().map(|a| a.path.as_str()).collect();
    let mut md = String::new();
    for d in all {
        let title = if d.category.is_empty() {
            format!("`{}`", d.metric)
        } else {
            format!(
                "`{}`, {}",
                d.metric,
                crate::tables::markdown_text(&d.category)
            )
        };
        md.push_str(&format!("#### {title}\n\n"));
        let unit = if design.method == "sobol" {
            "base points"
        } else {
            "trajectories"
        };
        md.push_str(&format!(
            "{} {unit} analysed, {} dropped; {} runs without a value",
            d.blocks_used, d.blocks_dropped, d.runs_dropped
        ));
        if d.blocks_used == 1 && d.result.is_ok() {
            md.push_str(if design.method == "sobol" {
                "; with one, the bootstrap has nothing to resample: no interval (`S1_conf` and `ST_conf` are NaN)"
            } else {
                "; with one, there is no spread: `sigma` and `mu_star_conf` are NaN"
            });
        }
        if let Some(n) = d.noise_share {
            md.push_str(&format!(
                "; seed noise is {:.1}% of the run-to-run variance (the indices describe the seed mean, with 1/{} of it)",
                100.0 * n,
                design.replicates
            ));
        }
        md.push_str(".\n\n");
        if let Some(note) = narrowed(design, d) {
            md.push_str(&note);
        }
        match &d.result {
            Err(e) => md.push_str(&format!("No indices: {e}.\n\n")),
            Ok(Indices::Sobol(s)) => {
                let mut order: Vec<usize> = (0..names.len()).collect();
                order.sort_by(|a, b| s.st[*b].total_cmp(&s.st[*a]));
                md.push_str(
                    "| parameter | S1 | S1_conf | ST | ST_conf |\n|---|---:|---:|---:|---:|\n",
                );
                for j in &order {
                    let j = *j;
                    md.push_str(&format!(
                        "| `{}` | {:.3} | {:.3} | {:.3} | {:.3} |\n",
                        names[j], s.s1[j], s.s1_conf[j], s.st[j], s.st_conf[j]
                    ));
                }
                md.push('\n');
                let quoted: Vec<String> = (order.iter())
                    .filter(|j| unresolved_sobol(s.s1_conf[**j], s.st[**j], s.st_conf[**j]))
                    .map(|j| format!("`{}`", names[*j]))
                    .collect();
                if !quoted.is_empty() {
                    md.push_str(&format!(
                        "Not resolved at N = {}: {} (an ST above 1, which no share of the variance can be, or an interval wider than ±{UNRESOLVED_CONF}): these figures are the estimators' noise more than the parameters' effect; a larger `[sample] n` narrows them as 1/sqrt(N).\n\n",
                        design.n,
                        quoted.join(", ")
                    ));
                }
            }
            Ok(Indices::Morris(m)) => {
                let mut order: Vec<usize> = (0..names.len()).collect();
                order.sort_by(|a, b| m.mu_star[*b].total_cmp(&m.mu_star[*a]));
                md.push_str("| parameter | mu_star | mu_star_conf | mu | sigma |\n|---|---:|---:|---:|---:|\n");
                for j in order {
                    md.push_str(&format!(
                        "| `{}` | {:.3} | {:.3} | {:.3} | {:.3} |\n",
                        names[j], m.mu_star[j], m.mu_star_conf[j], m.mu[j], m.sigma[j]
                    ));
                }
                md.push('\n');
            }
        }
        if d.metric == "recovered"
            && let Some(t) = tipping(sweep, design, d)
        {
            md.push_str(&tipping_markdown(&t));
        }
    }
    md
}

/// When the base points or trajectories dropped took part of a sampled
/// range with them: the axes whose analysed values span less than 90% of
/// it, as a sentence (the indices then describe that part only).
fn narrowed(design: &SampleDesign, d: &DesignIndices) -> Option<String> {
    if d.blocks_dropped == 0 || d.blocks_used == 0 {
        return None;
    }
    let number = crate::prim::short;
    let spans: Vec<String> = (design.axes.iter().zip(&d.kept_range))
        .filter(|(a, (lo, hi))| {
            let scale = |v: f64| if a.log { v.ln() } else { v };
            let whole = scale(a.max) - scale(a.min);
            whole > 0.0 && (scale(*hi) - scale(*lo)) < 0.9 * whole
        })
        .map(|(a, (lo, hi))| {
            format!(
                "`{}` {} to {} of the {} to {} sampled",
                a.path,
                number(*lo),
                number(*hi),
                number(a.min),
                number(a.max)
            )
        })
        .collect();
    (!spans.is_empty()).then(|| {
        format!(
            "The points dropped took part of the sampled region with them: the ones analysed span {}. The indices describe that part.\n\n",
            spans.join(", ")
        )
    })
}

/// A Sobol interval half-width beyond which an index says little: the
/// indices are shares of the variance, in [0, 1].
const UNRESOLVED_CONF: f64 = 0.5;

/// Whether a parameter's Sobol indices are too noisy to read: an ST above
/// 1 (Jansen's estimator can pass it; no share of the variance can) or an
/// interval wider than [`UNRESOLVED_CONF`].
fn unresolved_sobol(s1_conf: f64, st: f64, st_conf: f64) -> bool {
    st > 1.0 || s1_conf > UNRESOLVED_CONF || st_conf > UNRESOLVED_CONF
}

/// The share of recovered runs in equal bins of one parameter's range
/// (equal in log for a log axis), or at each level of a Morris design's
/// grid (fifths of its range left bins empty between its levels), or, for
/// an integer axis, in groups of its consecutive integers (an edge of
/// 12.8 splits no integer), the other parameters as sampled.
struct Tipping<'a> {
    axis: &'a SampledAxis,
    /// (lower edge, upper edge, recovered runs, runs) per bin; a level's
    /// two edges are the level; an integer group's, its lowest and
    /// highest integer.
    bins: Vec<(f64, f64, u64, u64)>,
    cut: Cut,
}

/// How a [`Tipping`]'s bins cut the axis.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Cut {
    /// Fifths of a continuous range, `[lo, hi)`.
    Fifths,
    /// The levels of a Morris grid.
    Levels,
    /// Groups of consecutive integers, `lo` to `hi` both included.
    Integers,
}

impl Tipping<'_> {
    /// The share recovered in bin `i`, when it has runs.
    fn share(&self, i: usize) -> Option<f64> {
        let (_, _, ok, n) = self.bins[i];
        (n > 0).then(|| ok as f64 / n as f64)
    }

    /// Where the shares of two adjacent bins differ most, when they differ
    /// at all: the edge between them, the two levels, or the two integers
    /// either side of it.
    fn steepest(&self) -> Option<String> {
        let i = (1..self.bins.len())
            .filter_map(|i| Some((i, (self.share(i - 1)? - self.share(i)?).abs())))
            .filter(|(_, step)| *step > 0.0)
            .max_by(|x, y| x.1.total_cmp(&y.1))?
            .0;
        Some(match self.cut {
            Cut::Levels => format!(
                "between {} and {}",
                edge_text(self.bins[i - 1].0),
                edge_text(self.bins[i].0)
            ),
            Cut::Integers => format!(
                "between {} and {}",
                edge_text(self.bins[i - 1].1),
                edge_text(self.bins[i].0)
            ),
            Cut::Fifths => format!("at {}", edge_text(self.bins[i].0)),
        })
    }

    /// How the bins cut the range, for a sentence.
    fn cut(&self) -> String {
        match self.cut {
            Cut::Levels => format!("at its {} levels", self.bins.len()),
            Cut::Fifths => "in fifths of its range".to_string(),
            Cut::Integers if self.bins.iter().all(|b| b.0 == b.1) => {
                format!("at each of its {} values", self.bins.len())
            }
            Cut::Integers => {
                let groups: Vec<String> = (self.bins.iter())
                    .map(|b| integers_text(b.0, b.1))
                    .collect();
                format!("over {}", groups.join(", "))
            }
        }
    }
}

/// An integer group as a person reads it: `8–12`, or `8`.
fn integers_text(lo: f64, hi: f64) -> String {
    match lo == hi {
        true => edge_text(lo),
        false => format!("{}–{}", edge_text(lo), edge_text(hi)),
    }
}

/// The integers of an integer axis in at most `bins` groups, each its
/// lowest and highest integer: one per integer when there are no more;
/// else as equal in count as they divide (every integer is equally likely
/// in a Sobol design), or, on a log axis, the integers between the edges
/// of the range's fifths in log, leaving out a fifth with none.
fn integer_bins(a: &SampledAxis, bins: usize) -> Vec<(f64, f64)> {
    let m = (a.max - a.min).round() as usize + 1;
    if m <= bins {
        return (0..m)
            .map(|i| (a.min + i as f64, a.min + i as f64))
            .collect();
    }
    if !a.log {
        return (0..bins)
            .map(|i| {
                let lo = a.min + (i * m / bins) as f64;
                (lo, a.min + ((i + 1) * m / bins) as f64 - 1.0)
            })
            .collect();
    }
    // The first integer at or above the i-th edge (a hair of rounding
    // below an integer edge is that integer).
    let first = |i: usize| match i {
        0 => a.min,
        i if i == bins => a.max + 1.0,
        _ => {
            let u = i as f64 / bins as f64;
            let edge = (a.min.ln() + u * (a.max.ln() - a.min.ln())).exp();
            (edge - 1e-9).ceil()
        }
    };
    (0..bins)
        .map(|i| (first(i), first(i + 1) - 1.0))
        .filter(|(lo, hi)| lo <= hi)
        .collect()
}

/// The bins of `recovered` along the most surely influential parameter
/// of `d` (the highest lower end of its total index's, or mu_star's, 95%
/// interval: of two alike, not the one its design could not resolve):
/// where it tips.
fn tipping<'a>(sweep: &Sweep, design: &'a SampleDesign, d: &DesignIndices) -> Option<Tipping<'a>> {
    let (key, conf): (&[f64], &[f64]) = match d.result.as_ref().ok()? {
        Indices::Sobol(s) => (&s.st, &s.st_conf),
        Indices::Morris(m) => (&m.mu_star, &m.mu_star_conf),
    };
    let a = &design.axes[most_surely_influential(key, conf)?];
    let cut = match (design.method == "morris" && design.levels >= 2, a.integer) {
        (true, _) => Cut::Levels,
        (false, true) => Cut::Integers,
        (false, false) => Cut::Fifths,
    };
    let edges = bin_edges(a, cut, design.levels as usize);
    let bins = edges.len();
    let x = sweep.metric(&a.path)?;
    let y = sweep.metric("recovered")?;
    let cats = sweep.dims.len().saturating_sub(1);
    let label = |r: usize| {
        sweep.describe_levels(sweep.positions[r][..cats].iter().copied().enumerate(), " ")
    };
    let position = |v: f64| {
        let u = if a.log {
            (v.ln() - a.min.ln()) / (a.max.ln() - a.min.ln())
        } else {
            (v - a.min) / (a.max - a.min)
        };
        match cut {
            Cut::Levels => ((u * (bins - 1) as f64).round() as usize).min(bins - 1),
            Cut::Fifths => ((u * bins as f64) as usize).min(bins - 1),
            Cut::Integers => (edges.iter())
                .position(|(_, hi)| v.round() <= *hi)
                .unwrap_or(bins - 1),
        }
    };
    let (mut ok, mut n) = (vec![0u64; bins], vec![0u64; bins]);
    for r in 0..y.len() {
        if !sweep.ok()[r] || label(r) != d.category {
            continue;
        }
        if let (Some(xv), Some(yv)) = (x[r], y[r]) {
            let b = position(xv);
            n[b] += 1;
            ok[b] += u64::from(yv > 0.5);
        }
    }
    Some(Tipping {
        axis: a,
        bins: (edges.iter().enumerate())
            .map(|(i, (lo, hi))| (*lo, *hi, ok[i], n[i]))
            .collect(),
        cut,
    })
}

/// The (lower, upper) edges of the tipping bins of axis `a`: the fifths
/// of its range, the `levels` of a Morris grid (an integer axis's rounded,
/// as its sampler rounds them), or its integers' groups.
fn bin_edges(a: &SampledAxis, cut: Cut, levels: usize) -> Vec<(f64, f64)> {
    let at = |u: f64| {
        let v = if a.log {
            (a.min.ln() + u * (a.max.ln() - a.min.ln())).exp()
        } else {
            a.min + u * (a.max - a.min)
        };
        if a.integer { v.round() } else { v }
    };
    match cut {
        Cut::Levels => (0..levels)
            .map(|i| at(i as f64 / (levels - 1) as f64))
            .map(|v| (v, v))
            .collect(),
        Cut::Fifths => (0..5)
            .map(|i| (at(i as f64 / 5.0), at((i + 1) as f64 / 5.0)))
            .collect(),
        Cut::Integers => integer_bins(a, 5),
    }
}

/// The parameter with the highest lower end of its index's 95% interval,
/// among those seen to move the metric at all when some are (an index of
/// 0 ± 0, whose lower end beats every interval that straddles 0, moves
/// nothing); of two alike, the first.
fn most_surely_influential(key: &[f64], conf: &[f64]) -> Option<usize> {
    let lower = |j: usize| key[j] - if conf[j].is_finite() { conf[j] } else { 0.0 };
    let moves = |j: &usize| key[*j] > 0.0 || key.iter().all(|k| *k <= 0.0);
    (0..key.len())
        .rev()
        .filter(moves)
        .max_by(|a, b| lower(*a).total_cmp(&lower(*b)))
}

/// The parameters' positions, most influential first (by ST, or mu_star).
fn most_influential(indices: &Indices) -> Vec<usize> {
    let key: &[f64] = match indices {
        Indices::Sobol(s) => &s.st,
        Indices::Morris(m) => &m.mu_star,
    };
    let mut order: Vec<usize> = (0..key.len()).collect();
    order.sort_by(|a, b| key[*b].total_cmp(&key[*a]));
    order
}

/// A bin's edge as a person reads it: three significant digits.
fn edge_text(v: f64) -> String {
    format!("{}", format!("{v:.3e}").parse::<f64>().unwrap_or(v))
}

/// The bins as a sentence of the design section.
fn tipping_markdown(t: &Tipping) -> String {
    let cells: Vec<String> = (0..t.bins.len())
        .map(|i| {
            let (lo, hi, _, n) = t.bins[i];
            let share = t
                .share(i)
                .map_or("-".to_string(), |s| format!("{:.0}%", 100.0 * s));
            match t.cut {
                Cut::Levels => format!("{}: {share} of {n}", edge_text(lo)),
                Cut::Integers => format!("{}: {share} of {n}", integers_text(lo, hi)),
                Cut::Fifths => format!("[{}, {}): {share} of {n}", edge_text(lo), edge_text(hi)),
            }
        })
        .collect();
    format!(
        "Where it tips: the share of runs that recovered along `{}`, the most surely influential parameter here (the highest lower end of its 95% interval; all other parameters as sampled): {}.\n\n",
        t.axis.path,
        cells.join("; ")
    )
}

/// The metric "In short" answers for: `recovered`, or without a trigger
/// the grid's first `[report]` metric (or goodput).
pub fn lead_metric(sweep: &Sweep, trigger: bool) -> &str {
    if trigger {
        "recovered"
    } else {
        sweep
            .report_metrics
            .first()
            .map_or("goodput", String::as_str)
    }
}

/// An index below this share of the variance (Sobol ST) or of the largest
/// mu_star (Morris) is a parameter that barely moves the metric.
const SMALL: f64 = 0.05;

/// A parameter that moved the metric at none of the design's base points
/// (or trajectories) has an index of 0 and a bootstrap interval of no
/// width, whatever their number; but with no change in n trials a change
/// may still come once in about 3 / n of the region (the rule of three).
/// Only from 3 / [`SMALL`] trials does "never seen" say "barely moves".
const TRIALS_FOR_NEVER_SEEN: usize = 60;

/// What a design's trials are called: base points (Sobol), trajectories
/// (Morris).
fn trials_name(indices: &Indices) -> &'static str {
    match indices {
        Indices::Sobol(_) => "base points",
        Indices::Morris(_) => "trajectories",
    }
}

/// `text` with its first letter in upper case (it starts a sentence).
fn capitalized(text: &str) -> String {
    let mut out = text.to_string();
    if let Some(first) = out.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    out
}

/// The parameters of `order` whose indices are too noisy to read
/// (`noisy`: the design section's "Not resolved", [`unresolved_sobol`]),
/// and of the others those whose index interval (`key` ± `conf`) lies
/// above `small` (they matter), at or below it (they barely move the
/// metric), across it (unresolved), and those never seen to move it by
/// fewer than [`TRIALS_FOR_NEVER_SEEN`] trials (an interval of no width
/// from no change is not evidence), each in `order`: `[matter, barely,
/// straddle, never seen, noisy]`.
fn classify(
    order: &[usize],
    key: &[f64],
    conf: &[f64],
    small: f64,
    trials: usize,
    noisy: &dyn Fn(usize) -> bool,
) -> [Vec<usize>; 5] {
    let pick = |f: &dyn Fn(usize) -> bool| order.iter().copied().filter(|j| f(*j)).collect();
    let above = |j: usize| !noisy(j) && key[j] - conf[j] > small;
    let never_seen =
        |j: usize| !noisy(j) && key[j] == 0.0 && conf[j] == 0.0 && trials < TRIALS_FOR_NEVER_SEEN;
    let below = |j: usize| !noisy(j) && key[j] + conf[j] <= small && !never_seen(j);
    [
        pick(&above),
        pick(&below),
        pick(&|j| !noisy(j) && !above(j) && !below(j) && !never_seen(j)),
        pick(&never_seen),
        pick(noisy),
    ]
}

/// Whether the parameters interact, from their first-order indices: said
/// when the sum of S1 stays below 70% over its interval (its terms'
/// intervals added, as they are not independent), and said unresolved
/// when only its estimate does. The bool: resolved.
fn interaction(s1: &[f64], s1_conf: &[f64]) -> Option<(String, bool)> {
    let first: f64 = s1.iter().sum();
    let conf: f64 = s1_conf.iter().sum();
    if first + conf < 0.7 {
        Some((
            format!(
                " The parameters interact: alone they explain {:.0}% of the variance (the sum of S1), together the rest.",
                100.0 * first.max(0.0)
            ),
            true,
        ))
    } else if first < 0.7 {
        Some((
            format!(
                " Whether the parameters interact is not resolved: the sum of S1, the share of the variance they explain alone, is {first:.2} ± {conf:.2}."
            ),
            false,
        ))
    } else {
        None
    }
}

/// "In short" of a sampled design, one line per design: how often it
/// recovered over the sampled region, which parameters it depends on (an
/// index whose 95% interval stays above [`SMALL`]), which barely move it
/// (the interval stays below), which the design is too small to tell, and
/// how the share recovered changes along the most influential. Without a
/// trigger, the same for the grid's first `[report]` metric (or goodput),
/// without the share recovered.
pub fn in_short(
    sweep: &Sweep,
    design: &SampleDesign,
    all: &[DesignIndices],
    trigger: bool,
) -> String {
    let metric = lead_metric(sweep, trigger);
    let names: Vec<&str> = design.axes.iter().map(|a| a.path.as_str()).collect();
    let quoted = |js: &[usize]| -> String {
        js.iter()
            .map(|j| format!("`{}`", names[*j]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::new();
    // Whether some parameter is not resolved, or never seen to move a
    // metric by too few trials: each has its own advice.
    let (mut unresolved, mut unseen_any) = (false, false);
    for d in all.iter().filter(|d| d.metric == metric) {
        let who = if d.category.is_empty() {
            "Over the sampled region".to_string()
        } else {
            format!("**{}**", crate::tables::markdown_text(&d.category))
        };
        out.push_str(&format!("- {who}: "));
        let tips = trigger.then(|| tipping(sweep, design, d)).flatten();
        if let Some(t) = &tips {
            let (ok, n) = t.bins.iter().fold((0, 0), |(a, b), x| (a + x.2, b + x.3));
            if n > 0 {
                out.push_str(&format!(
                    "{:.0}% of {n} runs recovered. ",
                    100.0 * ok as f64 / n as f64
                ));
            }
        }
        let what = if trigger {
            "whether a run recovers".to_string()
        } else {
            format!("`{metric}`")
        };
        let indices = match &d.result {
            Ok(i) => i,
            Err(e) => {
                out.push_str(&format!("no indices of `{metric}`: {e}.\n"));
                continue;
            }
        };
        let (key, name, conf): (&[f64], &str, &[f64]) = match indices {
            Indices::Sobol(s) => (&s.st, "ST", &s.st_conf),
            Indices::Morris(m) => (&m.mu_star, "mu_star", &m.mu_star_conf),
        };
        let order = most_influential(indices);
        let small = match indices {
            Indices::Sobol(_) => SMALL,
            Indices::Morris(_) => SMALL * key[order[0]],
        };
        if !d.varies {
            // As for a parameter never seen to move a metric that varies:
            // few trials are no evidence that none can.
            let few = if d.blocks_used < TRIALS_FOR_NEVER_SEEN {
                format!(
                    ", but {} {} are too few to say no parameter moves it (about {TRIALS_FOR_NEVER_SEEN} would)",
                    d.blocks_used,
                    trials_name(indices)
                )
            } else {
                ", so no parameter moves it".to_string()
            };
            out.push_str(&format!(
                "{}: the same in every run of the design{few}.\n",
                capitalized(&what)
            ));
            continue;
        }
        if key[order[0]] <= 0.0 {
            out.push_str(&format!(
                "{}: not the same in every run, yet no parameter changed it alone at any of the {} {}: a change too rare for this design to tell which parameter makes it.\n",
                capitalized(&what),
                d.blocks_used,
                trials_name(indices),
            ));
            unresolved = true;
            continue;
        }
        // The design section's "Not resolved": never a driver here either.
        let noisy = |j: usize| match indices {
            Indices::Sobol(s) => unresolved_sobol(s.s1_conf[j], s.st[j], s.st_conf[j]),
            Indices::Morris(_) => false,
        };
        let [matter, barely, unsure, unseen, noisy] =
            classify(&order, key, conf, small, d.blocks_used, &noisy);
        if matter.is_empty() {
            out.push_str(&format!("No parameter clearly moves {what}"));
        } else {
            // An interval of no width from few trials that all agreed is
            // no certainty.
            let interval = |j: usize| match conf[j] == 0.0 && d.blocks_used < TRIALS_FOR_NEVER_SEEN
            {
                true => format!(
                    "{name} {:.2}, alike in all {} {}: too few for an interval",
                    key[j],
                    d.blocks_used,
                    trials_name(indices)
                ),
                false => format!("{name} {:.2} ± {:.2}", key[j], conf[j]),
            };
            let listed: Vec<String> = (matter.iter())
                .map(|j| format!("`{}` ({})", names[*j], interval(*j)))
                .collect();
            out.push_str(&format!(
                "{} depends most on {}",
                capitalized(&what),
                listed.join(", ")
            ));
        }
        unresolved |= !unsure.is_empty() || !noisy.is_empty();
        if !barely.is_empty() {
            out.push_str(&format!(
                "; {} barely {} it in {} ranges",
                quoted(&barely),
                if barely.len() == 1 { "moves" } else { "move" },
                if barely.len() == 1 { "its" } else { "their" },
            ));
        }
        if !noisy.is_empty() {
            out.push_str(&format!(
                "; {}: not resolved at N = {} (an ST above 1 or an interval wider than ±{UNRESOLVED_CONF})",
                quoted(&noisy),
                design.n
            ));
        }
        if !unsure.is_empty() {
            out.push_str(&format!(
                "; {}: not resolved by this design (the 95% interval straddles {small:.2})",
                quoted(&unsure)
            ));
        }
        unseen_any |= !unseen.is_empty();
        if !unseen.is_empty() {
            out.push_str(&format!(
                "; {}: never seen to move it, but {} {} are too few to say {} barely {} (about {TRIALS_FOR_NEVER_SEEN} would)",
                quoted(&unseen),
                d.blocks_used,
                trials_name(indices),
                if unseen.len() == 1 { "it" } else { "they" },
                if unseen.len() == 1 { "does" } else { "do" },
            ));
        }
        out.push('.');
        if let Indices::Sobol(s) = indices
            && let Some((sentence, resolved)) = interaction(&s.s1, &s.s1_conf)
        {
            out.push_str(&sentence);
            unresolved |= !resolved;
        }
        if let Some(t) = &tips
            && let Some(at) = t.steepest()
        {
            let shares: Vec<String> = (0..t.bins.len())
                .map(|i| {
                    t.share(i)
                        .map_or("-".to_string(), |s| format!("{:.0}%", 100.0 * s))
                })
                .collect();
            out.push_str(&format!(
                " From `{}` = {} to {}{}, {}, the share recovered goes {}; the steepest step is {}.",
                t.axis.path,
                edge_text(t.axis.min),
                edge_text(t.axis.max),
                if t.axis.log { " (log scale)" } else { "" },
                t.cut(),
                shares.join(" → "),
                at
            ));
        }
        out.push('\n');
    }
    let enough = TRIALS_FOR_NEVER_SEEN.next_power_of_two();
    if unresolved {
        out.push_str(&format!(
            "- A parameter not resolved needs more sample points: intervals narrow as 1/sqrt(N), so `sample.n` = {} would halve them{}.\n",
            4 * design.n,
            if unseen_any && (4 * design.n as usize) < TRIALS_FOR_NEVER_SEEN {
                format!(", and {enough} would tell a parameter never seen to move the metric from one that barely does")
            } else {
                String::new()
            }
        ));
    } else if unseen_any {
        out.push_str(&format!(
            "- A parameter never seen to move a metric needs more sample points to be told from one that barely does: `sample.n` = {enough} would.\n"
        ));
    }
    if !out.is_empty() {
        out.push_str("- How these are computed, with every metric's indices: *Why: the sampled design* below.\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{
        Cut, TRIALS_FOR_NEVER_SEEN, Tipping, bin_edges, classify, integer_bins, interaction,
        most_surely_influential, narrowed, tipping_markdown, unresolved_sobol,
    };
    use crate::manifest::SampledAxis;

    /// The tipping bins go along the parameter whose interval stands
    /// highest, never one seen to move nothing (0 ± 0 has the highest
    /// lower end of intervals that all straddle 0).
    #[test]
    fn tipping_follows_the_most_surely_influential_parameter() {
        assert_eq!(
            most_surely_influential(&[1.05, 1.05], &[1.25, 0.50]),
            Some(1)
        );
        assert_eq!(
            most_surely_influential(&[0.343, 0.686, 0.0], &[0.480, 0.773, 0.0]),
            Some(1)
        );
        // None moves it: the bins still go along one (their totals are
        // the share recovered), the first.
        assert_eq!(most_surely_influential(&[0.0, 0.0], &[0.0, 0.0]), Some(0));
    }

    /// Base points dropped that took the long windows with them narrow
    /// the region the indices describe, and the report says so; a log
    /// axis is judged on its log scale; nothing dropped, nothing said.
    #[test]
    fn a_sampled_range_cut_by_the_points_dropped_is_said() {
        use crate::manifest::{SampleDesign, SampledAxis};
        let axis = |path: &str, min: f64, max: f64, log: bool| SampledAxis {
            path: path.to_string(),
            min,
            max,
            log,
            integer: false,
        };
        let design = SampleDesign {
            method: "sobol".to_string(),
            n: 16,
            axes: vec![
                axis("svc_b.slow.duration_s", 2.0, 30.0, false),
                axis("svc_b.slow.factor", 2.0, 20.0, true),
            ],
            ..SampleDesign::default()
        };
        let indices = |dropped: usize, kept_range: Vec<(f64, f64)>| super::DesignIndices {
            category: String::new(),
            metric: "recovered".to_string(),
            blocks_used: 16 - dropped,
            blocks_dropped: dropped,
            runs_dropped: 4 * dropped,
            kept_range,
            noise_share: None,
            varies: true,
            result: Err(String::new()),
        };
        // 2.5 to 21.9 of 2 to 30 is 69% of the range; 2.2 to 19 of a log
        // range from 2 to 20 is 93% of it.
        let cut = vec![(2.5, 21.9), (2.2, 19.0)];
        assert_eq!(
            narrowed(&design, &indices(4, cut.clone())).as_deref(),
            Some(
                "The points dropped took part of the sampled region with them: the ones analysed span `svc_b.slow.duration_s` 2.5 to 21.9 of the 2 to 30 sampled. The indices describe that part.\n\n"
            )
        );
        assert_eq!(narrowed(&design, &indices(0, cut)), None);
        assert_eq!(
            narrowed(&design, &indices(4, vec![(2.1, 29.5), (2.0, 20.0)])),
            None
        );
    }

    /// ST 1.05 ± 0.50 and 1.05 ± 1.25 (a short design) are noise; 0.6 ±
    /// 0.1 is read as it is.
    #[test]
    fn noisy_sobol_indices_are_said_to_be_unresolved() {
        assert!(unresolved_sobol(0.1, 1.05, 0.5));
        assert!(unresolved_sobol(0.1, 0.4, 1.25));
        assert!(unresolved_sobol(0.9, 0.4, 0.1));
        assert!(!unresolved_sobol(0.1, 0.6, 0.1));
        assert!(!unresolved_sobol(0.5, 1.0, 0.5));
    }

    /// An interaction is claimed only when the sum of S1 is below 70% at
    /// the top of its interval; S1 of ±0.92 with intervals of 2.44 (a
    /// design of 3 usable points) is unresolved.
    #[test]
    fn an_interaction_is_claimed_only_when_resolved() {
        let said = |s1: &[f64], conf: &[f64]| {
            interaction(s1, conf).map(|(t, r)| (t.trim().to_string(), r))
        };
        assert_eq!(
            said(&[0.2, 0.1], &[0.05, 0.05]),
            Some(("The parameters interact: alone they explain 30% of the variance (the sum of S1), together the rest.".to_string(), true))
        );
        assert_eq!(
            said(&[0.92, -0.92], &[2.44, 2.44]),
            Some(("Whether the parameters interact is not resolved: the sum of S1, the share of the variance they explain alone, is 0.00 ± 4.88.".to_string(), false))
        );
        assert_eq!(said(&[0.5, 0.4], &[0.1, 0.1]), None);
    }

    #[test]
    fn a_parameter_matters_only_when_its_whole_interval_is_above_small() {
        // ST 0.5 ± 0.2 matters; 0.02 ± 0.01 barely; 0.1 ± 0.2 and
        // 0.06 ± 0.02 (lower end 0.04) straddle 0.05; 0 ± 0 was never
        // seen to move the metric.
        let key = [0.5, 0.02, 0.1, 0.06, 0.0];
        let conf = [0.2, 0.01, 0.2, 0.02, 0.0];
        let order = [0, 3, 2, 1, 4];
        let none = |_: usize| false;
        let [matter, barely, unsure, unseen, _] = classify(&order, &key, &conf, 0.05, 8, &none);
        assert_eq!(matter, [0]);
        assert_eq!(barely, [1]);
        assert_eq!(unsure, [3, 2]);
        assert_eq!(
            unseen,
            [4],
            "8 base points without a change are no evidence"
        );
        // Enough trials without a change: it barely moves the metric.
        let [_, barely, _, unseen, _] =
            classify(&order, &key, &conf, 0.05, TRIALS_FOR_NEVER_SEEN, &none);
        assert_eq!((barely, unseen), (vec![1, 4], vec![]));
    }

    /// ch37-sobol, strategy=deadline, N = 64: `svc_b.slots` has ST 0.717
    /// ± 0.379 (its interval above 0.05) but S1 ± 0.595, which the design
    /// section calls not resolved; "In short" must not call it the main
    /// driver. Each parameter is in exactly one class.
    #[test]
    fn a_parameter_the_table_calls_unresolved_is_no_driver() {
        let s1_conf = [0.595, 0.067, 0.047, 0.0];
        let st = [0.717, 0.598, 0.239, 0.0];
        let st_conf = [0.379, 0.596, 0.352, 0.0];
        let noisy = |j: usize| unresolved_sobol(s1_conf[j], st[j], st_conf[j]);
        let order = [0, 1, 2, 3];
        let [matter, barely, unsure, unseen, noisy] =
            classify(&order, &st, &st_conf, 0.05, 64, &noisy);
        assert_eq!(matter, Vec::<usize>::new());
        assert_eq!(noisy, [0, 1]);
        assert_eq!(unsure, [2]);
        assert_eq!(barely, [3]);
        assert_eq!(unseen, Vec::<usize>::new());
    }

    fn int_axis(min: f64, max: f64, log: bool) -> SampledAxis {
        SampledAxis {
            path: "svc_b.slots".to_string(),
            min,
            max,
            log,
            integer: true,
        }
    }

    /// An integer axis is cut between integers: 8 to 32 in five groups of
    /// five (not at 12.8, 17.6, ...); no more integers than bins, one bin
    /// each; on a log axis, no group without an integer.
    #[test]
    fn an_integer_axis_is_binned_by_its_integers() {
        assert_eq!(
            integer_bins(&int_axis(8.0, 32.0, false), 5),
            [
                (8.0, 12.0),
                (13.0, 17.0),
                (18.0, 22.0),
                (23.0, 27.0),
                (28.0, 32.0)
            ]
        );
        assert_eq!(
            integer_bins(&int_axis(1.0, 3.0, false), 5),
            [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]
        );
        assert_eq!(
            integer_bins(&int_axis(1.0, 7.0, false), 5),
            [(1.0, 1.0), (2.0, 2.0), (3.0, 4.0), (5.0, 5.0), (6.0, 7.0)]
        );
        // Log fifths of 1 to 6: edges 1.43, 2.05, 2.93, 4.19; the third
        // fifth holds no integer.
        assert_eq!(
            integer_bins(&int_axis(1.0, 6.0, true), 5),
            [(1.0, 1.0), (2.0, 2.0), (3.0, 4.0), (5.0, 6.0)]
        );
        // A Morris grid's levels of an integer axis are the integers its
        // sampler rounds them to.
        assert_eq!(
            bin_edges(&int_axis(1.0, 6.0, false), Cut::Levels, 4),
            [(1.0, 1.0), (3.0, 3.0), (4.0, 4.0), (6.0, 6.0)]
        );
    }

    /// The steepest step of an integer axis is said between two integers,
    /// and its groups are named; a continuous axis keeps its edge.
    #[test]
    fn an_integer_threshold_is_said_at_integers() {
        let axis = int_axis(8.0, 32.0, false);
        let counts = [(78, 100), (90, 100), (100, 100), (100, 100), (100, 100)];
        let bins = |edges: Vec<(f64, f64)>| -> Vec<(f64, f64, u64, u64)> {
            (edges.iter().zip(counts))
                .map(|((lo, hi), (ok, n))| (*lo, *hi, ok, n))
                .collect()
        };
        let t = Tipping {
            axis: &axis,
            bins: bins(integer_bins(&axis, 5)),
            cut: Cut::Integers,
        };
        assert_eq!(t.steepest().as_deref(), Some("between 12 and 13"));
        assert_eq!(t.cut(), "over 8–12, 13–17, 18–22, 23–27, 28–32");
        assert!(
            tipping_markdown(&t).contains("8–12: 78% of 100; 13–17: 90% of 100;"),
            "{}",
            tipping_markdown(&t)
        );
        let float = SampledAxis {
            integer: false,
            ..axis.clone()
        };
        let t = Tipping {
            axis: &float,
            bins: bins(bin_edges(&float, Cut::Fifths, 0)),
            cut: Cut::Fifths,
        };
        assert_eq!(t.steepest().as_deref(), Some("at 12.8"));
        assert_eq!(t.cut(), "in fifths of its range");
    }
}
