//! Which sweep axis moves a metric: variance-based (Sobol-style) indices and
//! Morris-style elementary effects, read straight off a full-factorial grid
//! with seed replicates, without any extra sampling.
//!
//! # Data
//!
//! A sweep runs every combination of the axes' levels (a *cell*) with several
//! seeds. [`analyze`] takes, for one metric, the replicate values of every
//! cell. Cells may hold different numbers of replicates (failed runs are
//! simply missing) but each must hold at least one.
//!
//! # Variance decomposition
//!
//! Every cell weighs the same (a balanced grid, i.e. a uniform distribution
//! over the level combinations), whatever its number of replicates. Let `m_c`
//! be the mean of cell `c`, `n_c` its replicate count and `C` the number of
//! cells. All variances below are population variances (divisor = number of
//! terms) over equally weighted groups.
//!
//! * Seed noise: `σ²` is the within-cell variance pooled over the cells with
//!   at least two replicates, weighted by their degrees of freedom
//!   (`Σ_c Σ_k (y_ck − m_c)² / Σ_c (n_c − 1)`). When no cell has two
//!   replicates the noise cannot be estimated and is taken as 0.
//! * `r̄ = C / Σ_c 1/n_c`, the harmonic mean of the replicate counts.
//! * Noise correction: splitting the cells into `G` equal groups and taking
//!   the variance of the group means, the seed noise adds, in expectation,
//!   exactly `σ² (G − 1) / (C r̄)` (the group-effect degrees of freedom times
//!   the noise variance of a single cell mean, `σ²/r̄`, over `C`). This is the
//!   brief's `σ²/(r̄ · C/G)` with `G` replaced by `G − 1`: the `−1` removes
//!   the share of the noise that the grand mean absorbs, which makes every
//!   corrected variance below unbiased. Every corrected variance is floored
//!   at 0.
//! * Model variance: `V = max(Var_c(m_c) − σ²(C − 1)/(C r̄), 0)`.
//! * First order, axis `i` with `L_i` levels: `M_i(l)` is the mean of `m_c`
//!   over the cells at level `l`; `V_i = max(Var_l M_i(l) − σ²(L_i − 1)/(C r̄), 0)`
//!   and `S1_i = V_i / V`.
//! * Total order: `V_~i` is the variance of the means over axis `i` (one
//!   group per combination of the other axes, `C/L_i` groups of `L_i`
//!   cells), corrected with `G = C/L_i`; `ST_i = 1 − V_~i / V`.
//! * `S1` and `ST` are clamped into `[0, 1]` after computing. When `V` is 0
//!   (a constant metric, or one whose spread is entirely seed noise) no axis
//!   explains anything and both are 0.
//! * `noise_share = σ² / (σ² + V)`: the share of the variance of a single run
//!   that is seed noise (0 when `σ² + V` is 0); `total_variance = σ² + V`;
//!   `model_variance = V`.
//!
//! # Confidence
//!
//! `S1_conf` and `ST_conf` follow SALib: 1.96 × the standard deviation of
//! the index over bootstrap replicates. Each replicate resamples, with
//! replacement, the seeds within every cell (keeping each cell's count) and
//! recomputes everything, noise included. The RNG is a SplitMix64 seeded with
//! `seed`, so results are reproducible. With fewer than 2 bootstrap
//! replicates the spread is undefined and the confidences are NaN.
//!
//! # Elementary effects
//!
//! Levels are placed on `[0, 1]` by their position in the axis (`Δ = 1/(L_i −
//! 1)` between neighbours), so categorical axes are read in the order the
//! sweep lists them and numeric axes as if their levels were evenly spaced.
//! For every pair of cells that differ only in axis `i`, at adjacent positions
//! `l` and `l + 1`, `EE = (m_{l+1} − m_l) / Δ`. `mu` is the mean EE, `mu_star`
//! the mean |EE| and `sigma` the sample standard deviation of the EEs (0 when
//! there is a single pair). They use the raw cell means: no noise correction.
//!
//! An axis with a single level moves nothing: all its indices and
//! confidences are 0.

use crate::stats;

/// A full-factorial design: axis names and level counts; cell index is mixed
/// radix with the LAST axis varying fastest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Design {
    /// Axis names, in sweep order.
    pub axes: Vec<String>,
    /// Number of levels of each axis, in the same order as `axes`.
    pub levels: Vec<usize>,
}

impl Design {
    /// Number of cells: the product of the level counts (1 with no axes).
    pub fn cells(&self) -> usize {
        self.levels.iter().product()
    }

    /// The index of the cell at the given level positions (one per axis).
    ///
    /// # Panics
    ///
    /// If `positions` does not have one entry per axis, or a position is not
    /// below its axis' level count.
    pub fn cell_index(&self, positions: &[usize]) -> usize {
        assert_eq!(positions.len(), self.levels.len(), "one position per axis");
        positions
            .iter()
            .zip(&self.levels)
            .fold(0, |index, (&p, &l)| {
                assert!(p < l, "position {p} out of {l} levels");
                index * l + p
            })
    }

    /// The level positions (one per axis) of cell `cell`.
    ///
    /// # Panics
    ///
    /// If `cell` is not below [`Design::cells`].
    pub fn positions(&self, cell: usize) -> Vec<usize> {
        assert!(cell < self.cells(), "cell {cell} out of {}", self.cells());
        let mut rest = cell;
        let mut positions = vec![0; self.levels.len()];
        for (p, &l) in positions.iter_mut().zip(&self.levels).rev() {
            *p = rest % l;
            rest /= l;
        }
        positions
    }

    /// Distance between the indices of two cells one level apart on `axis`:
    /// the product of the level counts of the axes after it.
    fn stride(&self, axis: usize) -> usize {
        self.levels[axis + 1..].iter().product()
    }
}

/// The sensitivity of a metric to one axis.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisIndices {
    /// Axis name.
    pub axis: String,
    /// First-order index: share of the model variance explained by this
    /// axis alone.
    pub s1: f64,
    /// Half-width of the bootstrap 95% interval of `s1`.
    pub s1_conf: f64,
    /// Total-order index: share of the model variance involving this axis,
    /// interactions included.
    pub st: f64,
    /// Half-width of the bootstrap 95% interval of `st`.
    pub st_conf: f64,
    /// Mean elementary effect (signed), per unit of scaled level position.
    pub mu: f64,
    /// Mean absolute elementary effect.
    pub mu_star: f64,
    /// Sample standard deviation of the elementary effects.
    pub sigma: f64,
}

/// The sensitivity of a metric to every axis of a design.
#[derive(Debug, Clone, PartialEq)]
pub struct Sensitivity {
    /// One entry per axis, in design order.
    pub axes: Vec<AxisIndices>,
    /// Share of the variance of single runs due to seed noise.
    pub noise_share: f64,
    /// Variance of a single run: seed noise plus model variance.
    pub total_variance: f64,
    /// Variance explained by the axes (noise removed).
    pub model_variance: f64,
}

/// Computes variance-based indices and elementary effects of one metric.
///
/// `cells[c]` holds the replicate values (one per seed) of cell c, indexed
/// as in [`Design::cell_index`]. `bootstrap` is the number of bootstrap
/// replicates behind the confidences (e.g. 200), drawn from an RNG seeded
/// with `seed`. See the module docs for the formulas.
///
/// # Errors
///
/// If the design's axes and level counts differ in length or an axis has no
/// level, if `cells` does not hold one entry per cell of the design, if a
/// cell has no replicate, or if a value is not finite.
pub fn analyze(
    design: &Design,
    cells: &[Vec<f64>],
    bootstrap: usize,
    seed: u64,
) -> Result<Sensitivity, String> {
    if design.axes.len() != design.levels.len() {
        return Err(format!(
            "design has {} axes but {} level counts",
            design.axes.len(),
            design.levels.len()
        ));
    }
    if let Some(i) = design.levels.iter().position(|&l| l == 0) {
        return Err(format!("axis {:?} has no level", design.axes[i]));
    }
    if cells.len() != design.cells() {
        return Err(format!(
            "{} cells given but the design has {}",
            cells.len(),
            design.cells()
        ));
    }
    for (c, values) in cells.iter().enumerate() {
        if values.is_empty() {
            return Err(format!(
                "cell {c} {:?} has no replicate",
                design.positions(c)
            ));
        }
        if let Some(x) = values.iter().find(|x| !x.is_finite()) {
            return Err(format!(
                "cell {c} {:?} holds a non-finite value {x}",
                design.positions(c)
            ));
        }
    }

    let summaries: Vec<CellSummary> = cells.iter().map(|v| CellSummary::of(v)).collect();
    let point = decompose(design, &summaries);

    let k = design.levels.len();
    let mut boot_s1 = vec![Vec::with_capacity(bootstrap); k];
    let mut boot_st = vec![Vec::with_capacity(bootstrap); k];
    let mut rng = SplitMix64(seed);
    let mut resampled = Vec::new();
    let mut boot_summaries = Vec::with_capacity(cells.len());
    for _ in 0..bootstrap {
        boot_summaries.clear();
        for values in cells {
            resampled.clear();
            resampled.extend((0..values.len()).map(|_| values[rng.below(values.len())]));
            boot_summaries.push(CellSummary::of(&resampled));
        }
        let b = decompose(design, &boot_summaries);
        for i in 0..k {
            boot_s1[i].push(b.s1[i]);
            boot_st[i].push(b.st[i]);
        }
    }
    let conf = |xs: &[f64]| stats::std_dev(xs).map_or(f64::NAN, |s| 1.96 * s);

    let means: Vec<f64> = summaries.iter().map(|s| s.mean).collect();
    let axes = (0..k)
        .map(|i| {
            let axis = design.axes[i].clone();
            if design.levels[i] < 2 {
                return AxisIndices {
                    axis,
                    s1: 0.0,
                    s1_conf: 0.0,
                    st: 0.0,
                    st_conf: 0.0,
                    mu: 0.0,
                    mu_star: 0.0,
                    sigma: 0.0,
                };
            }
            let effects = elementary_effects(design, &means, i);
            let abs: Vec<f64> = effects.iter().map(|e| e.abs()).collect();
            AxisIndices {
                axis,
                s1: point.s1[i],
                s1_conf: conf(&boot_s1[i]),
                st: point.st[i],
                st_conf: conf(&boot_st[i]),
                mu: stats::mean(&effects).unwrap_or(0.0),
                mu_star: stats::mean(&abs).unwrap_or(0.0),
                sigma: stats::std_dev(&effects).unwrap_or(0.0),
            }
        })
        .collect();

    let total_variance = point.noise + point.model;
    Ok(Sensitivity {
        axes,
        noise_share: if total_variance > 0.0 {
            point.noise / total_variance
        } else {
            0.0
        },
        total_variance,
        model_variance: point.model,
    })
}

/// What the decomposition needs of a cell's replicates.
struct CellSummary {
    mean: f64,
    /// Sum of squared deviations from `mean`.
    ss: f64,
    n: usize,
}

impl CellSummary {
    fn of(values: &[f64]) -> Self {
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let ss = values.iter().map(|x| (x - mean).powi(2)).sum();
        Self { mean, ss, n }
    }
}

/// Noise, model variance and per-axis indices of one set of cells.
struct Decomposition {
    noise: f64,
    model: f64,
    s1: Vec<f64>,
    st: Vec<f64>,
}

fn decompose(design: &Design, cells: &[CellSummary]) -> Decomposition {
    let c = cells.len();
    let df: usize = cells.iter().map(|s| s.n - 1).sum();
    let noise = if df > 0 {
        cells.iter().map(|s| s.ss).sum::<f64>() / df as f64
    } else {
        0.0
    };
    // σ²/(C r̄) with r̄ = C / Σ 1/n_c, times G − 1 below.
    let noise_per_df = noise * cells.iter().map(|s| 1.0 / s.n as f64).sum::<f64>() / (c * c) as f64;
    let corrected =
        |variance: f64, groups: usize| (variance - noise_per_df * (groups - 1) as f64).max(0.0);

    let means: Vec<f64> = cells.iter().map(|s| s.mean).collect();
    let model = corrected(population_variance(&means), c);
    let k = design.levels.len();
    let mut s1 = vec![0.0; k];
    let mut st = vec![0.0; k];
    if model > 0.0 {
        for i in 0..k {
            let levels = design.levels[i];
            let stride = design.stride(i);
            let by_level = group_means(&means, levels, |cell| cell / stride % levels);
            let over_axis = group_means(&means, c / levels, |cell| {
                cell / (stride * levels) * stride + cell % stride
            });
            let first = corrected(population_variance(&by_level), levels);
            let rest = corrected(population_variance(&over_axis), c / levels);
            s1[i] = (first / model).clamp(0.0, 1.0);
            st[i] = (1.0 - rest / model).clamp(0.0, 1.0);
        }
    }
    Decomposition {
        noise,
        model,
        s1,
        st,
    }
}

/// Means of `values` over `groups` equal-sized groups, `group(index)` naming
/// the group of each value.
fn group_means(values: &[f64], groups: usize, group: impl Fn(usize) -> usize) -> Vec<f64> {
    let mut sums = vec![0.0; groups];
    for (index, v) in values.iter().enumerate() {
        sums[group(index)] += v;
    }
    let size = (values.len() / groups) as f64;
    sums.iter().map(|s| s / size).collect()
}

fn population_variance(xs: &[f64]) -> f64 {
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64
}

/// Elementary effects of `axis` (which has at least two levels) between
/// every pair of cells adjacent on it.
fn elementary_effects(design: &Design, means: &[f64], axis: usize) -> Vec<f64> {
    let levels = design.levels[axis];
    let stride = design.stride(axis);
    let scale = (levels - 1) as f64;
    (0..means.len())
        .filter(|cell| cell / stride % levels + 1 < levels)
        .map(|cell| (means[cell + stride] - means[cell]) * scale)
        .collect()
}

/// SplitMix64 (Steele, Lea and Flood 2014): tiny, fast and good enough to
/// pick bootstrap resamples, without another crate.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (> 0); the multiply-shift bias is below
    /// n/2⁶⁴, far under anything a bootstrap could notice.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform in (0, 1], never 0 so that its logarithm is finite.
    fn uniform(rng: &mut SplitMix64) -> f64 {
        ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal by Box-Muller.
    fn normal(rng: &mut SplitMix64) -> f64 {
        let (u, v) = (uniform(rng), uniform(rng));
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    fn design(axes: &[(&str, usize)]) -> Design {
        Design {
            axes: axes.iter().map(|(a, _)| a.to_string()).collect(),
            levels: axes.iter().map(|&(_, l)| l).collect(),
        }
    }

    /// Fills every cell with `y(positions)` plus N(0, noise²) for `seeds`
    /// seeds, minus `missing(cell)` of them (failed runs).
    fn simulate(
        design: &Design,
        seeds: usize,
        noise: f64,
        missing: impl Fn(usize) -> usize,
        y: impl Fn(&[usize]) -> f64,
    ) -> Vec<Vec<f64>> {
        let mut rng = SplitMix64(42);
        (0..design.cells())
            .map(|c| {
                let value = y(&design.positions(c));
                (0..seeds - missing(c))
                    .map(|_| value + noise * normal(&mut rng))
                    .collect()
            })
            .collect()
    }

    fn close(actual: f64, expected: f64, tol: f64) -> bool {
        (actual - expected).abs() <= tol
    }

    #[test]
    fn additive_shares_and_noise_are_recovered() {
        let d = design(&[("a", 5), ("b", 4)]);
        // Population variances over the levels: Var(f) = 3, Var(g) = 1.
        let f = |p: usize| (1.5f64).sqrt() * (p as f64 - 2.0);
        let g = |p: usize| (0.2f64).sqrt() * (2.0 * p as f64 - 3.0);
        let cells = simulate(&d, 30, 0.5, |c| c % 6, |p| f(p[0]) + g(p[1]));
        let s = analyze(&d, &cells, 200, 7).unwrap();
        let (a, b) = (&s.axes[0], &s.axes[1]);
        assert!(close(a.s1, 0.75, 0.03), "{a:?}");
        assert!(close(b.s1, 0.25, 0.03), "{b:?}");
        assert!(close(a.st, a.s1, 0.03), "{a:?}");
        assert!(close(b.st, b.s1, 0.03), "{b:?}");
        assert!(close(s.model_variance, 4.0, 0.2), "{s:?}");
        assert!(close(s.noise_share, 0.25 / 4.25, 0.01), "{s:?}");
        assert!(close(
            s.total_variance,
            s.model_variance / (1.0 - s.noise_share),
            1e-9
        ));
        for x in [a.s1_conf, a.st_conf, b.s1_conf, b.st_conf] {
            assert!(x > 0.0 && x < 0.05, "{s:?}");
        }
    }

    #[test]
    fn pure_interaction_has_no_first_order_effect() {
        let d = design(&[("a", 4), ("b", 2)]);
        let h = |p: usize| if p.is_multiple_of(2) { 1.0 } else { -1.0 };
        let cells = simulate(&d, 10, 0.1, |_| 0, |p| h(p[0]) * h(p[1]));
        let s = analyze(&d, &cells, 100, 1).unwrap();
        for axis in &s.axes {
            assert!(axis.s1 < 0.02, "{axis:?}");
            assert!(axis.st > 0.98, "{axis:?}");
        }
        assert!(s.noise_share < 0.02, "{s:?}");
    }

    #[test]
    fn axes_that_do_nothing_get_nothing() {
        let d = design(&[("a", 3), ("b", 4), ("c", 2)]);
        let cells = simulate(&d, 20, 0.3, |_| 0, |p| [0.0, 2.0, 1.0, 3.0][p[1]]);
        let s = analyze(&d, &cells, 100, 3).unwrap();
        for (i, axis) in s.axes.iter().enumerate() {
            let expected = if i == 1 { 1.0 } else { 0.0 };
            assert!(close(axis.s1, expected, 0.02), "{axis:?}");
            assert!(close(axis.st, expected, 0.02), "{axis:?}");
        }
    }

    #[test]
    fn noise_is_not_mistaken_for_an_effect() {
        // Few seeds and strong noise: uncorrected, the noise of the cell
        // means would give b an S1 near 0.08 and an ST near 0.16, and a an
        // S1 near 0.84.
        let d = design(&[("a", 2), ("b", 20)]);
        let cells = simulate(&d, 5, 1.0, |_| 0, |p| [1.0, -1.0][p[0]]);
        let s = analyze(&d, &cells, 0, 0).unwrap();
        let (a, b) = (&s.axes[0], &s.axes[1]);
        assert!(a.s1 > 0.95, "{a:?}");
        assert!(b.s1 < 0.04 && b.st < 0.04, "{b:?}");
    }

    #[test]
    fn noise_correction_is_unbiased() {
        // Two cells of two seeds, σ² = 4: the cell means' variance carries
        // 1 of noise on top of the true 16. The correction must remove that
        // 1, not the 2 that σ²/r̄ alone would remove. The cells are far
        // enough apart that the floor at 0 (itself a bias) almost never bites.
        let d = design(&[("a", 2)]);
        let mut rng = SplitMix64(9);
        let runs = 10_000;
        let mut sum = 0.0;
        for _ in 0..runs {
            let cells: Vec<Vec<f64>> = [4.0, -4.0]
                .iter()
                .map(|f| vec![f + 2.0 * normal(&mut rng), f + 2.0 * normal(&mut rng)])
                .collect();
            sum += analyze(&d, &cells, 0, 0).unwrap().model_variance;
        }
        let mean = sum / runs as f64;
        assert!(close(mean, 16.0, 0.3), "{mean}");
    }

    #[test]
    fn seed_noise_alone_explains_everything() {
        let d = design(&[("a", 3), ("b", 3)]);
        let cells = simulate(&d, 30, 1.0, |_| 0, |_| 5.0);
        let s = analyze(&d, &cells, 50, 3).unwrap();
        assert!(s.noise_share > 0.95, "{s:?}");
    }

    #[test]
    fn constant_metric_has_zero_indices() {
        let d = design(&[("a", 3), ("b", 2)]);
        let cells = vec![vec![1.0, 1.0]; 6];
        let s = analyze(&d, &cells, 10, 3).unwrap();
        assert_eq!(
            (s.total_variance, s.model_variance, s.noise_share),
            (0.0, 0.0, 0.0)
        );
        for axis in &s.axes {
            assert_eq!(
                (axis.s1, axis.st, axis.s1_conf, axis.st_conf),
                (0.0, 0.0, 0.0, 0.0)
            );
        }
    }

    #[test]
    fn without_bootstrap_confidences_are_nan() {
        let d = design(&[("a", 3)]);
        let cells = vec![vec![0.0, 0.1], vec![1.0], vec![2.0, 2.2]];
        let s = analyze(&d, &cells, 0, 3).unwrap();
        assert!(s.axes[0].s1_conf.is_nan() && s.axes[0].st_conf.is_nan());
        assert!(s.axes[0].s1 > 0.9, "{s:?}");
    }

    #[test]
    fn single_level_axis_is_all_zero() {
        let d = design(&[("a", 3), ("fixed", 1)]);
        let cells = simulate(&d, 5, 0.1, |_| 0, |p| p[0] as f64);
        let s = analyze(&d, &cells, 20, 3).unwrap();
        let fixed = &s.axes[1];
        let zeros = [fixed.s1, fixed.s1_conf, fixed.st, fixed.st_conf];
        assert_eq!(zeros, [0.0; 4]);
        assert_eq!([fixed.mu, fixed.mu_star, fixed.sigma], [0.0; 3]);
        assert!(s.axes[0].s1 > 0.95, "{s:?}");
    }

    #[test]
    fn morris_linear_effect_is_exact() {
        let d = design(&[("a", 3), ("b", 2)]);
        let cells = simulate(&d, 3, 0.0, |_| 0, |p| 2.0 * p[0] as f64 + p[1] as f64);
        let s = analyze(&d, &cells, 0, 0).unwrap();
        let (a, b) = (&s.axes[0], &s.axes[1]);
        // Δ = 1/2: EE = 2 / 0.5 = 4 for each of the 4 pairs.
        assert_eq!((a.mu, a.mu_star, a.sigma), (4.0, 4.0, 0.0));
        // Δ = 1: EE = 1 for each of the 3 pairs.
        assert_eq!((b.mu, b.mu_star, b.sigma), (1.0, 1.0, 0.0));
    }

    #[test]
    fn morris_non_monotone_effect_cancels_in_mu_only() {
        let d = design(&[("a", 3), ("b", 2)]);
        let cells = simulate(&d, 1, 0.0, |_| 0, |p| [0.0, 1.0, 0.0][p[0]]);
        let s = analyze(&d, &cells, 0, 0).unwrap();
        let a = &s.axes[0];
        // EEs: +2, −2 for each level of b.
        assert_eq!((a.mu, a.mu_star), (0.0, 2.0));
        assert!(a.mu_star > a.mu.abs());
        assert!(close(a.sigma, (16.0f64 / 3.0).sqrt(), 1e-12), "{a:?}");
    }

    #[test]
    fn malformed_input_is_rejected() {
        let d = design(&[("a", 2), ("b", 2)]);
        let err = analyze(&d, &vec![vec![1.0]; 3], 0, 0).unwrap_err();
        assert!(err.contains("3 cells given but the design has 4"), "{err}");
        let mut cells = vec![vec![1.0]; 4];
        cells[2].clear();
        let err = analyze(&d, &cells, 0, 0).unwrap_err();
        assert!(err.contains("cell 2 [1, 0] has no replicate"), "{err}");
        cells[2].push(f64::NAN);
        let err = analyze(&d, &cells, 0, 0).unwrap_err();
        assert!(err.contains("non-finite"), "{err}");
        let bad = Design {
            axes: vec!["a".into()],
            levels: vec![2, 2],
        };
        assert!(
            analyze(&bad, &cells, 0, 0)
                .unwrap_err()
                .contains("level counts")
        );
        let empty_axis = design(&[("a", 0)]);
        assert!(
            analyze(&empty_axis, &[], 0, 0)
                .unwrap_err()
                .contains("no level")
        );
    }

    #[test]
    fn design_indexing_round_trips_with_last_axis_fastest() {
        let d = design(&[("a", 2), ("b", 3), ("c", 4)]);
        assert_eq!(d.cells(), 24);
        assert_eq!(d.cell_index(&[0, 0, 1]), 1);
        assert_eq!(d.cell_index(&[0, 1, 0]), 4);
        assert_eq!(d.cell_index(&[1, 0, 0]), 12);
        assert_eq!(d.positions(23), vec![1, 2, 3]);
        for c in 0..d.cells() {
            assert_eq!(d.cell_index(&d.positions(c)), c);
        }
        let none = design(&[]);
        assert_eq!(
            (none.cells(), none.cell_index(&[]), none.positions(0)),
            (1, 0, vec![])
        );
    }
}
