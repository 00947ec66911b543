//! Scenario discovery with PRIM, the Patient Rule Induction Method
//! (Friedman and Fisher 1999), for a yes/no outcome per run: which box of
//! the parameter space holds most of the runs with the outcome (coverage)
//! and few without it (density).
//!
//! The rules are the EMA Workbench's `Prim` with its defaults (one box,
//! objective `LENIENT1`, `peel_alpha = paste_alpha = 0.05`,
//! `mass_min = 0.05`), so that its users get the same box from the same
//! runs (`ci/prim_check.py` compares the two):
//!
//! * Columns are taken in the Workbench's order: real columns, then integer
//!   columns, then categorical ones, each in the given order. A categorical
//!   column with a single category is dropped.
//! * Peeling: every candidate box removes a slice of the current one: per
//!   real column the rows below the `peel_alpha` quantile (lower limit) or
//!   above the `1 − peel_alpha` one (upper limit), the quantiles as the
//!   Workbench's `get_quantile` (the midpoint between two order
//!   statistics, moved past ties); per integer column the same with the
//!   quantile truncated to an integer and the limit set to the nearest
//!   value left; per categorical column one category. The objective of a
//!   candidate is the gain in density divided by the runs it removes; the
//!   best (then the one restricting fewer columns, then the first) is taken
//!   while its objective is positive, its mass at least `mass_min` and
//!   below the current mass.
//! * Pasting: from the peeled box, candidates widen one restricted limit
//!   again (to the `paste_alpha` quantile of the runs just outside it) or
//!   add one category; the best is taken while it raises the density and
//!   the mass. As in the Workbench, pasting is tried only when a real
//!   column is restricted.
//! * Among candidates exactly equal in objective and restricted columns,
//!   the first is taken; the categories of a column are taken in sorted
//!   order, where the Workbench takes its Python set's (hash) order, so
//!   with such ties the two can pass through different intermediate boxes.
//! * Every box of the peeling and pasting trajectory is kept with its
//!   coverage (share of all runs with the outcome that lie in the box),
//!   density (share of the box's runs with the outcome), mass (share of all
//!   runs in the box), restricted columns and, per restricted limit, a
//!   quasi-p-value (Bryant and Lempert 2010): the one-sided binomial
//!   probability of the box's density or more, were the runs drawn from the
//!   box with that limit removed.
//!
//! Which box to report is a choice PRIM leaves to its user (the
//! Workbench shows the trajectory and lets one pick);
//! [`Trajectory::chosen`] is the box with the highest harmonic mean of
//! coverage and density (the F1 score of "in the box" as a prediction of
//! the outcome: density is its precision, coverage its recall), the first
//! of equals, so that neither a box covering everything at the base rate
//! nor a tiny pure one wins.

use statrs::distribution::{Binomial, DiscreteCDF};

/// The Workbench's defaults.
pub const PEEL_ALPHA: f64 = 0.05;
pub const PASTE_ALPHA: f64 = 0.05;
pub const MASS_MIN: f64 = 0.05;

/// One parameter column of the runs table.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub values: Values,
}

/// A column's values, one per run.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Numbers; `integer` peels and pastes as the Workbench's integer
    /// columns do (limits are values of the column).
    Numeric { values: Vec<f64>, integer: bool },
    /// Labels (strategies, zip groups, `unbounded` caps).
    Categorical(Vec<String>),
}

/// Input PRIM cannot work on.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PrimError {
    #[error("no runs")]
    NoRuns,
    #[error("column `{column}` has {values} values for {runs} runs")]
    Length {
        column: String,
        values: usize,
        runs: usize,
    },
    #[error("column `{column}`, run {row}: {value} is not a finite number")]
    NotFinite {
        column: String,
        row: usize,
        value: f64,
    },
}

/// The limits of a box on one column.
#[derive(Clone, Debug, PartialEq)]
pub enum Limit {
    /// `low <= x <= high`.
    Range(f64, f64),
    /// The categories kept, as indexes into [`Column::categories`], sorted.
    Categories(Vec<usize>),
}

/// A column as PRIM uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    /// The labels of a categorical column, sorted.
    pub categories: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Real,
    Integer,
    Categorical,
}

/// A restricted column of a box and its quasi-p-values, for removing the
/// lower and the upper limit (a categorical restriction has one, in
/// `lower`); `None` for a limit that is not restricted.
#[derive(Clone, Debug, PartialEq)]
pub struct Restriction {
    pub column: usize,
    pub quasi_p: [Option<f64>; 2],
}

/// One box of the trajectory.
#[derive(Clone, Debug, PartialEq)]
pub struct PrimBox {
    /// Runs in the box, and those of them with the outcome.
    pub n: usize,
    pub k: usize,
    pub coverage: f64,
    pub density: f64,
    pub mass: f64,
    /// One per column of [`Trajectory::columns`].
    pub limits: Vec<Limit>,
    /// The columns whose limits differ from the whole space's, in column
    /// order.
    pub restricted: Vec<Restriction>,
}

/// The peeling and pasting trajectory of one PRIM box.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    /// The columns, in the order PRIM takes them.
    pub columns: Vec<Column>,
    /// Box 0 is the whole space; then one per peel, then one per paste.
    pub boxes: Vec<PrimBox>,
    /// Boxes up to here (exclusive) come from peeling, the rest from pasting.
    pub peeled: usize,
    /// The reported box: the highest harmonic mean of coverage and density
    /// (the first of equals).
    pub chosen: usize,
    /// Runs, and runs with the outcome.
    pub runs: usize,
    pub outcomes: usize,
}

/// A column's values as ranks into its sorted distinct values (numeric)
/// or into its sorted categories.
struct Data {
    column: Column,
    /// Sorted distinct values (numeric) or 0..categories (categorical).
    distinct: Vec<f64>,
    rank: Vec<u32>,
}

impl Data {
    fn value(&self, row: usize) -> f64 {
        self.distinct[self.rank[row] as usize]
    }

    fn contains(&self, limit: &Limit, row: usize) -> bool {
        match limit {
            Limit::Range(lo, hi) => {
                let v = self.value(row);
                *lo <= v && v <= *hi
            }
            Limit::Categories(keep) => keep.binary_search(&(self.rank[row] as usize)).is_ok(),
        }
    }
}

/// Counts of runs and of runs with the outcome per distinct value.
#[derive(Clone, Default)]
struct Histogram {
    n: Vec<usize>,
    k: Vec<usize>,
}

impl Histogram {
    fn of(data: &Data, rows: impl Iterator<Item = usize>, y: &[bool]) -> Histogram {
        let mut h = Histogram {
            n: vec![0; data.distinct.len()],
            k: vec![0; data.distinct.len()],
        };
        for row in rows {
            let r = data.rank[row] as usize;
            h.n[r] += 1;
            h.k[r] += usize::from(y[row]);
        }
        h
    }

    /// Runs and outcomes over the distinct values `v` with `keep(v)`.
    fn count(&self, distinct: &[f64], keep: impl Fn(f64) -> bool) -> (usize, usize) {
        let mut out = (0, 0);
        for (i, &v) in distinct.iter().enumerate() {
            if keep(v) {
                out.0 += self.n[i];
                out.1 += self.k[i];
            }
        }
        out
    }

    /// The Workbench's `get_quantile` of the values counted (each distinct
    /// value as often as it occurs, restricted to `keep`): the mean of the
    /// order statistics at `floor` and `ceil` of `(len − 1) q`, where ties
    /// are passed towards the middle. `None` when nothing is counted.
    fn quantile(&self, distinct: &[f64], q: f64, keep: impl Fn(f64) -> bool) -> Option<f64> {
        let kept = || {
            (distinct.iter().zip(&self.n))
                .filter(|(v, n)| **n > 0 && keep(**v))
                .map(|(v, n)| (*v, *n))
        };
        let len: usize = kept().map(|(_, n)| n).sum();
        if len == 0 {
            return None;
        }
        let i = (len - 1) as f64 * q;
        let (lo, hi) = (i.floor() as usize, i.ceil() as usize);
        // The values at sorted positions lo and hi, the value before the
        // first and the value after the second.
        let (mut at_lo, mut at_hi, mut before, mut after) = (None, None, None, None);
        let (mut seen, mut last) = (0, None);
        for (v, n) in kept() {
            if at_hi.is_some() {
                after = Some(v);
                break;
            }
            seen += n;
            if at_lo.is_none() && lo < seen {
                at_lo = Some(v);
                before = last;
            }
            if hi < seen {
                at_hi = Some(v);
            }
            last = Some(v);
        }
        let (a, b) = (at_lo?, at_hi?);
        Some(if a != b {
            (a + b) / 2.0
        } else if q > 0.5 {
            // Equal: the lower index moves down past the ties, unless it
            // reaches the first value.
            before.map_or(a, |p| (p + b) / 2.0)
        } else {
            // Equal: the upper index moves up past the ties, unless it
            // reaches the last value.
            after.map_or(a, |n| (a + n) / 2.0)
        })
    }
}

/// The Workbench's default objective (`LENIENT1`): the gain in density per
/// run added or removed.
fn objective((n_old, k_old): (usize, usize), (n_new, k_new): (usize, usize)) -> f64 {
    let mean_old = k_old as f64 / n_old as f64;
    let mean_new = if n_new > 0 {
        k_new as f64 / n_new as f64
    } else {
        0.0
    };
    if mean_old == mean_new || n_old == n_new {
        return 0.0;
    }
    (mean_new - mean_old) / n_old.abs_diff(n_new) as f64
}

/// A candidate box: its limit on one column, and its runs and outcomes.
struct Candidate {
    column: usize,
    limit: Limit,
    counts: (usize, usize),
    objective: f64,
    unrestricted: usize,
}

/// Runs PRIM on `params` (one value per run each) for the outcome `y`.
///
/// # Errors
///
/// No runs, a column whose length differs from `y`'s, or a number that is
/// not finite.
pub fn prim(params: &[Param], y: &[bool]) -> Result<Trajectory, PrimError> {
    let runs = y.len();
    if runs == 0 {
        return Err(PrimError::NoRuns);
    }
    let mut data = Vec::new();
    for kind in [Kind::Real, Kind::Integer, Kind::Categorical] {
        for p in params {
            if let Some(d) = column_data(p, kind, runs)? {
                data.push(d);
            }
        }
    }
    let init: Vec<Limit> = data
        .iter()
        .map(|d| match d.column.kind {
            Kind::Categorical => Limit::Categories((0..d.distinct.len()).collect()),
            _ => Limit::Range(d.distinct[0], d.distinct[d.distinct.len() - 1]),
        })
        .collect();
    let outcomes = y.iter().filter(|v| **v).count();
    let mut prim = Search {
        data: &data,
        y,
        init: &init,
        outcomes,
        boxes: Vec::new(),
    };
    let all: Vec<usize> = (0..runs).collect();
    prim.push(init.clone(), &all);
    let (limits, rows) = prim.peel(init.clone(), all);
    let peeled = prim.boxes.len();
    prim.paste(limits, rows);
    let boxes = prim.boxes;
    let f1 = |b: &PrimBox| {
        let sum = b.coverage + b.density;
        if sum > 0.0 {
            2.0 * b.coverage * b.density / sum
        } else {
            0.0
        }
    };
    let mut chosen = 0;
    for (i, b) in boxes.iter().enumerate() {
        if f1(b) > f1(&boxes[chosen]) {
            chosen = i;
        }
    }
    Ok(Trajectory {
        columns: data.into_iter().map(|d| d.column).collect(),
        boxes,
        peeled,
        chosen,
        runs,
        outcomes,
    })
}

/// `p` as a column of `kind`, or `None` if it is of another kind (or a
/// categorical column with a single category, which PRIM drops).
fn column_data(p: &Param, kind: Kind, runs: usize) -> Result<Option<Data>, PrimError> {
    let len = match &p.values {
        Values::Numeric { values, .. } => values.len(),
        Values::Categorical(labels) => labels.len(),
    };
    if len != runs {
        return Err(PrimError::Length {
            column: p.name.clone(),
            values: len,
            runs,
        });
    }
    let column = |categories| Column {
        name: p.name.clone(),
        kind,
        categories,
    };
    Ok(match (&p.values, kind) {
        (Values::Numeric { values, integer }, Kind::Real | Kind::Integer)
            if *integer == (kind == Kind::Integer) =>
        {
            if let Some((row, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(PrimError::NotFinite {
                    column: p.name.clone(),
                    row,
                    value,
                });
            }
            let mut distinct = values.clone();
            distinct.sort_by(f64::total_cmp);
            distinct.dedup();
            let rank = values
                .iter()
                .map(|v| distinct.partition_point(|d| d < v) as u32)
                .collect();
            Some(Data {
                column: column(Vec::new()),
                distinct,
                rank,
            })
        }
        (Values::Categorical(labels), Kind::Categorical) => {
            let mut categories = labels.clone();
            categories.sort();
            categories.dedup();
            if categories.len() < 2 {
                return Ok(None);
            }
            let rank = labels
                .iter()
                .map(|l| categories.binary_search(l).expect("listed") as u32)
                .collect();
            Some(Data {
                distinct: (0..categories.len()).map(|c| c as f64).collect(),
                column: column(categories),
                rank,
            })
        }
        _ => None,
    })
}

/// The state of one box's search.
struct Search<'a> {
    data: &'a [Data],
    y: &'a [bool],
    init: &'a [Limit],
    outcomes: usize,
    boxes: Vec<PrimBox>,
}

impl Search<'_> {
    fn runs(&self) -> usize {
        self.y.len()
    }

    fn unrestricted(&self, limits: &[Limit]) -> usize {
        limits.iter().zip(self.init).filter(|(a, b)| a == b).count()
    }

    /// The best candidate: the highest objective, then the fewest
    /// restricted columns, then the first (the Workbench's stable sort).
    fn best(candidates: Vec<Candidate>) -> Option<Candidate> {
        let mut best: Option<Candidate> = None;
        for c in candidates {
            let better = best.as_ref().is_none_or(|b| {
                c.objective > b.objective
                    || (c.objective == b.objective && c.unrestricted > b.unrestricted)
            });
            if better {
                best = Some(c);
            }
        }
        best
    }

    fn candidate(
        &self,
        limits: &[Limit],
        column: usize,
        limit: Limit,
        old: (usize, usize),
        counts: (usize, usize),
    ) -> Candidate {
        let mut changed = limits.to_vec();
        changed[column] = limit.clone();
        Candidate {
            column,
            limit,
            counts,
            objective: objective(old, counts),
            unrestricted: self.unrestricted(&changed),
        }
    }

    fn peel(&mut self, mut limits: Vec<Limit>, mut rows: Vec<usize>) -> (Vec<Limit>, Vec<usize>) {
        loop {
            let old = (rows.len(), rows.iter().filter(|r| self.y[**r]).count());
            let mut candidates = Vec::new();
            for (j, d) in self.data.iter().enumerate() {
                let h = Histogram::of(d, rows.iter().copied(), self.y);
                let all = |_: f64| true;
                match (&limits[j], d.column.kind) {
                    (Limit::Range(lo, hi), Kind::Real) => {
                        let (lo, hi) = (*lo, *hi);
                        let up = h
                            .quantile(&d.distinct, 1.0 - PEEL_ALPHA, all)
                            .expect("rows");
                        let down = h.quantile(&d.distinct, PEEL_ALPHA, all).expect("rows");
                        let kept_up = h.count(&d.distinct, |v| v <= up);
                        let kept_down = h.count(&d.distinct, |v| v >= down);
                        candidates.push(self.candidate(
                            &limits,
                            j,
                            Limit::Range(lo, up),
                            old,
                            kept_up,
                        ));
                        candidates.push(self.candidate(
                            &limits,
                            j,
                            Limit::Range(down, hi),
                            old,
                            kept_down,
                        ));
                    }
                    (Limit::Range(lo, hi), Kind::Integer) => {
                        let (lo, hi) = (*lo, *hi);
                        let present: Vec<f64> = (d.distinct.iter().zip(&h.n))
                            .filter(|(_, n)| **n > 0)
                            .map(|(v, _)| *v)
                            .collect();
                        let up = h
                            .quantile(&d.distinct, 1.0 - PEEL_ALPHA, all)
                            .expect("rows")
                            .trunc();
                        let keep_up = |v: f64| if up == hi { v < hi } else { v <= up };
                        let new_hi = present
                            .iter()
                            .copied()
                            .rfind(|v| keep_up(*v))
                            .unwrap_or(present[present.len() - 1]);
                        let kept = h.count(&d.distinct, keep_up);
                        candidates.push(self.candidate(
                            &limits,
                            j,
                            Limit::Range(lo, new_hi),
                            old,
                            kept,
                        ));
                        let down = h
                            .quantile(&d.distinct, PEEL_ALPHA, all)
                            .expect("rows")
                            .trunc();
                        let keep_down = |v: f64| if down == lo { v > lo } else { v >= down };
                        let new_lo = present
                            .iter()
                            .copied()
                            .find(|v| keep_down(*v))
                            .unwrap_or(present[0]);
                        let kept = h.count(&d.distinct, keep_down);
                        candidates.push(self.candidate(
                            &limits,
                            j,
                            Limit::Range(new_lo, hi),
                            old,
                            kept,
                        ));
                    }
                    (Limit::Categories(keep), _) if keep.len() > 1 => {
                        for &c in keep {
                            let rest: Vec<usize> =
                                keep.iter().copied().filter(|k| *k != c).collect();
                            let counts = (old.0 - h.n[c], old.1 - h.k[c]);
                            candidates.push(self.candidate(
                                &limits,
                                j,
                                Limit::Categories(rest),
                                old,
                                counts,
                            ));
                        }
                    }
                    _ => {}
                }
            }
            let Some(best) = Self::best(candidates) else {
                return (limits, rows);
            };
            let mass_old = old.0 as f64 / self.runs() as f64;
            let mass_new = best.counts.0 as f64 / self.runs() as f64;
            if !(mass_new >= MASS_MIN && mass_new < mass_old && best.objective > 0.0) {
                return (limits, rows);
            }
            let d = &self.data[best.column];
            rows.retain(|r| d.contains(&best.limit, *r));
            limits[best.column] = best.limit;
            self.push(limits.clone(), &rows);
        }
    }

    fn paste(&mut self, mut limits: Vec<Limit>, mut rows: Vec<usize>) {
        loop {
            let restricted: Vec<usize> = (0..self.data.len())
                .filter(|j| limits[*j] != self.init[*j])
                .collect();
            // As the Workbench: no paste unless a real column is restricted.
            if !restricted
                .iter()
                .any(|j| self.data[*j].column.kind == Kind::Real)
            {
                return;
            }
            let old = (rows.len(), rows.iter().filter(|r| self.y[**r]).count());
            // For each run, the restricted columns it lies outside of: a run
            // outside only column j is in the box once j's limit moves.
            let mut outside_only: Vec<Vec<usize>> = vec![Vec::new(); self.data.len()];
            let mut inside = Vec::new();
            for row in 0..self.runs() {
                let mut out = restricted
                    .iter()
                    .filter(|j| !self.data[**j].contains(&limits[**j], row));
                match (out.next(), out.next()) {
                    (None, _) => inside.push(row),
                    (Some(j), None) => outside_only[*j].push(row),
                    _ => {}
                }
            }
            let mut candidates = Vec::new();
            for &j in &restricted {
                let d = &self.data[j];
                // The runs in the box but for column j.
                let h = Histogram::of(d, inside.iter().chain(&outside_only[j]).copied(), self.y);
                match (&limits[j], &self.init[j]) {
                    (Limit::Range(lo, hi), Limit::Range(min, max)) => {
                        let (lo, hi, min, max) = (*lo, *hi, *min, *max);
                        let integer = d.column.kind == Kind::Integer;
                        let round = |v: f64| if integer { v.trunc() } else { v };
                        let below = h
                            .quantile(&d.distinct, 1.0 - PASTE_ALPHA, |v| v <= lo)
                            .map_or(min, round);
                        let kept = h.count(&d.distinct, |v| below <= v && v <= hi);
                        candidates.push(self.candidate(
                            &limits,
                            j,
                            Limit::Range(below, hi),
                            old,
                            kept,
                        ));
                        let above = h
                            .quantile(&d.distinct, PASTE_ALPHA, |v| v >= hi)
                            .map_or(max, round);
                        let kept = h.count(&d.distinct, |v| lo <= v && v <= above);
                        candidates.push(self.candidate(
                            &limits,
                            j,
                            Limit::Range(lo, above),
                            old,
                            kept,
                        ));
                    }
                    (Limit::Categories(keep), Limit::Categories(every)) => {
                        for &c in every.iter().filter(|c| !keep.contains(c)) {
                            let mut wider = keep.clone();
                            wider.push(c);
                            wider.sort_unstable();
                            let counts = (old.0 + h.n[c], old.1 + h.k[c]);
                            candidates.push(self.candidate(
                                &limits,
                                j,
                                Limit::Categories(wider),
                                old,
                                counts,
                            ));
                        }
                    }
                    _ => unreachable!("a column keeps its kind of limit"),
                }
            }
            let Some(best) = Self::best(candidates) else {
                return;
            };
            let mass_old = old.0 as f64 / self.runs() as f64;
            let mass_new = best.counts.0 as f64 / self.runs() as f64;
            let denser = best.counts.1 as f64 / best.counts.0 as f64 > old.1 as f64 / old.0 as f64;
            if !(mass_new >= MASS_MIN && mass_new > mass_old && best.objective > 0.0 && denser) {
                return;
            }
            limits[best.column] = best.limit;
            let d = &self.data[best.column];
            rows.extend(
                outside_only[best.column]
                    .iter()
                    .filter(|r| d.contains(&limits[best.column], **r)),
            );
            rows.sort_unstable();
            self.push(limits.clone(), &rows);
        }
    }

    /// Adds a box of the trajectory, with its statistics and quasi-p-values.
    fn push(&mut self, limits: Vec<Limit>, rows: &[usize]) {
        let n = rows.len();
        let k = rows.iter().filter(|r| self.y[**r]).count();
        let restricted: Vec<usize> = (0..self.data.len())
            .filter(|j| limits[*j] != self.init[*j])
            .collect();
        // Each restricted limit as (column, side), and the runs inside the
        // box once that limit alone is removed: those outside it only.
        let sides: Vec<(usize, usize)> = restricted
            .iter()
            .flat_map(|&j| match (&limits[j], &self.init[j]) {
                (Limit::Range(lo, hi), Limit::Range(min, max)) => {
                    let mut s = Vec::new();
                    if lo != min {
                        s.push((j, 0));
                    }
                    if hi != max {
                        s.push((j, 1));
                    }
                    s
                }
                _ => vec![(j, 0)],
            })
            .collect();
        let mut without = vec![(0usize, 0usize); sides.len()];
        for row in 0..self.runs() {
            let mut out = sides.iter().enumerate().filter(|(_, (j, side))| {
                let d = &self.data[*j];
                match &limits[*j] {
                    Limit::Range(lo, hi) => {
                        let v = d.value(row);
                        if *side == 0 { v < *lo } else { v > *hi }
                    }
                    keep => !d.contains(keep, row),
                }
            });
            let yes = usize::from(self.y[row]);
            match (out.next(), out.next()) {
                (None, _) => {
                    for w in without.iter_mut() {
                        w.0 += 1;
                        w.1 += yes;
                    }
                }
                (Some((i, _)), None) => {
                    without[i].0 += 1;
                    without[i].1 += yes;
                }
                _ => {}
            }
        }
        let restricted = restricted
            .into_iter()
            .map(|j| {
                let mut quasi_p = [None, None];
                for (i, (column, side)) in sides.iter().enumerate() {
                    if *column == j {
                        quasi_p[*side] = Some(quasi_p_value(k, n, without[i]));
                    }
                }
                Restriction { column: j, quasi_p }
            })
            .collect();
        self.boxes.push(PrimBox {
            n,
            k,
            coverage: k as f64 / self.outcomes.max(1) as f64,
            density: k as f64 / n as f64,
            mass: n as f64 / self.runs() as f64,
            limits,
            restricted,
        });
    }
}

/// P(X >= k) for X ~ Binomial(n, p), p the density of the box with one
/// limit removed (`(runs, outcomes)` of that box): scipy's
/// `binomtest(k, n, p, alternative="greater")`.
fn quasi_p_value(k: usize, n: usize, (runs, outcomes): (usize, usize)) -> f64 {
    let p = outcomes as f64 / runs as f64;
    if k == 0 || p >= 1.0 {
        return 1.0;
    }
    if p <= 0.0 {
        return 0.0;
    }
    Binomial::new(p, n as u64).map_or(f64::NAN, |b| b.sf(k as u64 - 1))
}

impl Trajectory {
    /// The reported box.
    pub fn chosen_box(&self) -> &PrimBox {
        &self.boxes[self.chosen]
    }

    /// A restriction in words: `` `x` >= 6.2 ``, `` `x` <= 3 ``,
    /// `` `x` in [2, 5] ``, `` `strategy` in {naive, deadline} ``.
    pub fn describe(&self, b: &PrimBox, r: &Restriction) -> String {
        self.describe_with(b, r, str::to_string)
    }

    /// [`describe`](Self::describe) for Markdown: the categories, a
    /// user's text, escaped.
    pub fn describe_md(&self, b: &PrimBox, r: &Restriction) -> String {
        self.describe_with(b, r, crate::tables::markdown_text)
    }

    fn describe_with(&self, b: &PrimBox, r: &Restriction, category: fn(&str) -> String) -> String {
        let c = &self.columns[r.column];
        match &b.limits[r.column] {
            Limit::Range(lo, hi) => match r.quasi_p {
                [Some(_), None] => format!("`{}` >= {}", c.name, short(*lo)),
                [None, Some(_)] => format!("`{}` <= {}", c.name, short(*hi)),
                _ => format!("`{}` in [{}, {}]", c.name, short(*lo), short(*hi)),
            },
            Limit::Categories(keep) => {
                let names: Vec<String> = keep.iter().map(|k| category(&c.categories[*k])).collect();
                if names.len() == 1 {
                    format!("`{}` = {}", c.name, names[0])
                } else {
                    format!("`{}` in {{{}}}", c.name, names.join(", "))
                }
            }
        }
    }
}

/// A limit as a person reads it: four significant digits at most.
pub fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::SplitMix64;

    fn real(name: &str, values: Vec<f64>) -> Param {
        Param {
            name: name.to_string(),
            values: Values::Numeric {
                values,
                integer: false,
            },
        }
    }

    fn labels(name: &str, values: Vec<&str>) -> Param {
        Param {
            name: name.to_string(),
            values: Values::Categorical(values.into_iter().map(str::to_string).collect()),
        }
    }

    #[test]
    fn quantiles_are_the_workbench_s() {
        // Expected values from the Workbench's `get_quantile`.
        let cases: [(Vec<f64>, f64, f64); 5] = [
            ([2.0, 5.0, 10.0, 20.0, 30.0].repeat(4), 3.5, 25.0),
            (vec![1.0, 1.0, 1.0, 1.0, 2.0, 3.0], 1.5, 2.5),
            (vec![7.0; 5], 7.0, 7.0),
            ((1..=21).map(f64::from).collect(), 2.5, 19.5),
            ([vec![3.0; 3], vec![9.0; 19]].concat(), 6.0, 6.0),
        ];
        for (values, low, high) in cases {
            let p = real("x", values.clone());
            let d = column_data(&p, Kind::Real, values.len()).unwrap().unwrap();
            let h = Histogram::of(&d, 0..values.len(), &vec![false; values.len()]);
            let all = |_: f64| true;
            assert_eq!(
                h.quantile(&d.distinct, PEEL_ALPHA, all),
                Some(low),
                "{values:?}"
            );
            assert_eq!(
                h.quantile(&d.distinct, 1.0 - PEEL_ALPHA, all),
                Some(high),
                "{values:?}"
            );
        }
    }

    #[test]
    fn quasi_p_is_the_one_sided_binomial_tail() {
        // P(X >= 8), X ~ Binomial(10, 1/2) = 56/1024.
        assert!((quasi_p_value(8, 10, (40, 20)) - 56.0 / 1024.0).abs() < 1e-12);
        assert_eq!(quasi_p_value(0, 10, (40, 20)), 1.0);
        assert_eq!(quasi_p_value(3, 10, (40, 40)), 1.0);
    }

    /// A 10 x 10 x 3 grid, 4 runs per point, y exactly when x >= 5 and
    /// the strategy is not `c`; `z` does nothing.
    fn noiseless() -> (Vec<Param>, Vec<bool>) {
        let (mut x, mut z, mut s, mut y) = (vec![], vec![], vec![], vec![]);
        for xi in 0..10 {
            for zi in 0..10 {
                for si in ["a", "b", "c"] {
                    for _ in 0..4 {
                        x.push(xi as f64);
                        z.push(zi as f64);
                        s.push(si);
                        y.push(xi >= 5 && si != "c");
                    }
                }
            }
        }
        (vec![real("x", x), real("z", z), labels("s", s)], y)
    }

    #[test]
    fn finds_a_box_without_noise_exactly() {
        let (params, y) = noiseless();
        let t = prim(&params, &y).unwrap();
        let b = t.chosen_box();
        assert_eq!((b.coverage, b.density), (1.0, 1.0), "{b:?}");
        let words: Vec<String> = b.restricted.iter().map(|r| t.describe(b, r)).collect();
        assert_eq!(words, ["`x` >= 4.5", "`s` in {a, b}"]);
        assert_eq!(b.limits[1], Limit::Range(0.0, 9.0), "z is not restricted");
        // Every box of the trajectory counts its runs from the data.
        for b in &t.boxes {
            let inside: Vec<usize> = (0..y.len())
                .filter(|&r| {
                    let x = r / 120;
                    let s = r / 4 % 3;
                    let keep_x = match b.limits[0] {
                        Limit::Range(lo, hi) => lo <= x as f64 && x as f64 <= hi,
                        _ => unreachable!(),
                    };
                    let z = r / 12 % 10;
                    let keep_z = match b.limits[1] {
                        Limit::Range(lo, hi) => lo <= z as f64 && z as f64 <= hi,
                        _ => unreachable!(),
                    };
                    let keep_s = match &b.limits[2] {
                        Limit::Categories(k) => k.contains(&s),
                        _ => unreachable!(),
                    };
                    keep_x && keep_z && keep_s
                })
                .collect();
            let k = inside.iter().filter(|r| y[**r]).count();
            assert_eq!((b.n, b.k), (inside.len(), k), "{b:?}");
            assert_eq!(b.coverage, k as f64 / t.outcomes as f64);
            assert_eq!(b.mass, b.n as f64 / 1200.0);
        }
    }

    /// A 5 x 3 x 4 x 4 factorial, 5 runs per point, y drawn from a linear
    /// congruential generator (the same in Python) with P = 0.95 inside
    /// `w >= 10, r >= 300, k >= 1, s in {naive, deadline}`, 0.3 at
    /// `w >= 20` outside `protected`, 0.02 elsewhere.
    fn factorial() -> (Vec<Param>, Vec<bool>) {
        let mut state: u64 = 12345;
        let mut lcg = || {
            state = (1_664_525 * state + 1_013_904_223) % (1 << 32);
            state as f64 / (1u64 << 32) as f64
        };
        let (mut w, mut r, mut k, mut s, mut y) = (vec![], vec![], vec![], vec![], vec![]);
        for wi in [2.0, 5.0, 10.0, 20.0, 30.0] {
            for ri in [200.0, 300.0, 400.0] {
                for ki in 0..4 {
                    for si in ["naive", "deadline", "protected", "deadline_budget"] {
                        for _ in 0..5 {
                            let inside = wi >= 10.0
                                && ri >= 300.0
                                && (si == "naive" || si == "deadline")
                                && ki >= 1;
                            let p = if inside {
                                0.95
                            } else if wi >= 20.0 && si != "protected" {
                                0.3
                            } else {
                                0.02
                            };
                            w.push(wi);
                            r.push(ri);
                            k.push(f64::from(ki));
                            s.push(si);
                            y.push(lcg() < p);
                        }
                    }
                }
            }
        }
        let k = Param {
            name: "k".to_string(),
            values: Values::Numeric {
                values: k,
                integer: true,
            },
        };
        (vec![real("w", w), real("r", r), k, labels("s", s)], y)
    }

    #[test]
    fn the_trajectory_is_the_workbench_s() {
        // ema_workbench 2.5.3, Prim(x, y, threshold=1e-6).find_box() on the
        // same table (k as int32): coverage, density and mass of each box,
        // and the last box's limits.
        let expected = [
            (1.000000, 0.220000, 1.000),
            (0.958333, 0.281111, 0.750),
            (0.939394, 0.344444, 0.600),
            (0.928030, 0.453704, 0.450),
            (0.795455, 0.583333, 0.300),
            (0.693182, 0.762500, 0.200),
            (0.647727, 0.950000, 0.150),
            (0.329545, 0.966667, 0.075),
        ];
        let (params, y) = factorial();
        let t = prim(&params, &y).unwrap();
        assert_eq!(t.boxes.len(), expected.len());
        for (b, (c, d, m)) in t.boxes.iter().zip(expected) {
            assert!(
                (b.coverage - c).abs() < 1e-6 && (b.density - d).abs() < 1e-6,
                "{b:?}"
            );
            assert!((b.mass - m).abs() < 1e-12, "{b:?}");
        }
        let last = &t.boxes[7];
        let words: Vec<String> = last
            .restricted
            .iter()
            .map(|r| t.describe(last, r))
            .collect();
        assert_eq!(
            words,
            ["`w` >= 7.5", "`r` >= 250", "`k` >= 1", "`s` = naive"]
        );
        // Its quasi-p-values, the Workbench's to 1e-9 relative.
        let qp: Vec<f64> = last
            .restricted
            .iter()
            .map(|r| r.quasi_p[0].unwrap())
            .collect();
        let theirs = [
            2.3907880153204778e-17,
            4.0515207500917646e-10,
            1.527959649218054e-07,
            3.40086225135753e-20,
        ];
        for (a, b) in qp.iter().zip(theirs) {
            assert!(((a - b) / b).abs() < 1e-9, "{qp:?}");
        }
        // The reported box: the highest harmonic mean of coverage and density.
        assert_eq!(t.chosen, 6);
    }

    #[test]
    fn peeling_stops_at_the_minimum_mass_and_each_peel_gains_density() {
        let mut rng = SplitMix64(3);
        let mut u = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let n = 2000;
        let a: Vec<f64> = (0..n).map(|_| u()).collect();
        let b: Vec<f64> = (0..n).map(|_| u()).collect();
        let y: Vec<bool> = (0..n)
            .map(|i| u() < if a[i] > 0.6 && b[i] < 0.5 { 0.9 } else { 0.1 })
            .collect();
        let t = prim(&[real("a", a), real("b", b)], &y).unwrap();
        for w in t.boxes[..t.peeled].windows(2) {
            assert!(w[1].mass < w[0].mass && w[1].density > w[0].density);
        }
        assert!(t.boxes.iter().all(|b| b.mass >= MASS_MIN));
        let b = t.chosen_box();
        assert!(b.density > 0.8 && b.coverage > 0.6, "{b:?}");
        let words: Vec<String> = b.restricted.iter().map(|r| t.describe(b, r)).collect();
        assert_eq!(words.len(), 2, "{words:?}");
        eprintln!("{words:?} {b:?}");
        assert!(words[0].starts_with("`a` >= 0.5") || words[0].starts_with("`a` >= 0.6"));
        assert!(words[1].starts_with("`b` <= 0.5") || words[1].starts_with("`b` <= 0.4"));
    }

    #[test]
    fn bad_input_is_refused_and_one_category_dropped() {
        assert_eq!(prim(&[], &[]), Err(PrimError::NoRuns));
        let err = prim(&[real("x", vec![1.0])], &[true, false]).unwrap_err();
        assert_eq!(err.to_string(), "column `x` has 1 values for 2 runs");
        let err = prim(&[real("x", vec![1.0, f64::NAN])], &[true, false]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "column `x`, run 1: NaN is not a finite number"
        );
        let t = prim(&[labels("s", vec!["a", "a"])], &[true, false]).unwrap();
        assert!(t.columns.is_empty() && t.boxes.len() == 1);
    }

    #[test]
    fn limits_read_short() {
        assert_eq!(short(7.5), "7.5");
        assert_eq!(short(344.13), "344.1");
        assert_eq!(short(0.274999), "0.275");
        assert_eq!(short(1200.0), "1200");
    }
}

#[cfg(test)]
mod speed {
    use super::*;
    use crate::stats::SplitMix64;

    /// 100,000 runs of 8 continuous parameters and a strategy, the outcome
    /// in a box of two of them and three strategies (90% inside, 10%
    /// outside). `cargo test --release -p analysis --lib prim_on_100000 --
    /// --ignored --nocapture` prints the time.
    #[test]
    #[ignore = "timing: run in release"]
    fn prim_on_100000_runs() {
        let mut rng = SplitMix64(11);
        let mut u = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let runs = 100_000;
        let mut params: Vec<Param> = (0..8)
            .map(|i| Param {
                name: format!("x{i}"),
                values: Values::Numeric {
                    values: Vec::with_capacity(runs),
                    integer: false,
                },
            })
            .collect();
        let strategies = ["naive", "deadline", "deadline_budget", "protected"];
        let mut strategy = Vec::with_capacity(runs);
        let mut y = Vec::with_capacity(runs);
        for _ in 0..runs {
            let x: Vec<f64> = (0..8).map(|_| u()).collect();
            let s = strategies[(u() * 4.0) as usize];
            for (p, v) in params.iter_mut().zip(&x) {
                if let Values::Numeric { values, .. } = &mut p.values {
                    values.push(*v);
                }
            }
            strategy.push(s.to_string());
            let inside = x[0] > 0.4 && x[1] < 0.7 && s != "protected";
            y.push(u() < if inside { 0.9 } else { 0.1 });
        }
        params.push(Param {
            name: "strategy".to_string(),
            values: Values::Categorical(strategy),
        });
        let start = std::time::Instant::now();
        let t = prim(&params, &y).unwrap();
        let elapsed = start.elapsed();
        eprintln!(
            "PRIM on {runs} runs, 9 parameters: {elapsed:?}, {} boxes",
            t.boxes.len()
        );
        assert!(elapsed.as_secs_f64() < 10.0, "{elapsed:?}");
    }
}
