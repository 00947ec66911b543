//! Morris elementary effects (`SALib.analyze.morris.analyze`): per
//! trajectory of k + 1 points, the change of the output where one
//! parameter moved, signed by the direction it moved and divided by the
//! grid's step delta = p / (2 (p - 1)) (in unit-cube terms, as SALib does);
//! mu, mu_star (mean absolute effect), sigma (ddof 1), and mu_star_conf
//! by resampling trajectories. With one trajectory sigma and
//! mu_star_conf are NaN: a spread needs two (SALib's sigma is NaN there
//! too, its mu_star_conf 0).

use crate::resample::{Resampler, Z95};

#[derive(Debug, Clone, PartialEq)]
pub struct MorrisIndices {
    pub mu: Vec<f64>,
    pub mu_star: Vec<f64>,
    pub sigma: Vec<f64>,
    pub mu_star_conf: Vec<f64>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MorrisError {
    #[error("{rows} rows are not a whole number of trajectories of {size} (k = {k})")]
    Layout { rows: usize, size: usize, k: usize },
    #[error(
        "trajectory {trajectory}, step {step}: {moved} parameters moved at once (a Morris step moves exactly one)"
    )]
    Step {
        trajectory: usize,
        step: usize,
        moved: usize,
    },
}

/// Indices from the inputs `x` (one row per design point, any monotone
/// scaling of the unit grid) and outputs `y`, in trajectory order.
pub fn analyze(
    x: &[Vec<f64>],
    y: &[f64],
    levels: u64,
    resamples: usize,
    seed: u64,
) -> Result<MorrisIndices, MorrisError> {
    let k = x.first().map_or(0, Vec::len);
    let size = k + 1;
    if x.is_empty() || !x.len().is_multiple_of(size) || y.len() != x.len() {
        return Err(MorrisError::Layout {
            rows: x.len(),
            size,
            k,
        });
    }
    let delta = levels as f64 / (2.0 * (levels - 1) as f64);
    let r = x.len() / size;
    // ee[j][t]: the effect of parameter j in trajectory t.
    let mut ee = vec![vec![0.0; r]; k];
    #[allow(clippy::needless_range_loop)] // t indexes both x's rows and ee's columns
    for t in 0..r {
        for s in 0..k {
            let (i0, i1) = (t * size + s, t * size + s + 1);
            let moved: Vec<usize> = (0..k).filter(|&j| x[i1][j] != x[i0][j]).collect();
            let [j] = moved[..] else {
                return Err(MorrisError::Step {
                    trajectory: t,
                    step: s,
                    moved: moved.len(),
                });
            };
            let up = x[i1][j] > x[i0][j];
            let dy = if up { y[i1] - y[i0] } else { y[i0] - y[i1] };
            ee[j][t] = dy / delta;
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let std1 = |v: &[f64]| {
        let m = mean(v);
        (v.iter().map(|e| (e - m) * (e - m)).sum::<f64>() / (v.len() as f64 - 1.0)).sqrt()
    };
    let abs = |v: &[f64]| v.iter().map(|e| e.abs()).collect::<Vec<_>>();
    // The same resampled trajectories for every parameter, as SALib draws them.
    let draws = Resampler::new(seed).indexes(r, resamples);
    Ok(MorrisIndices {
        mu: ee.iter().map(|e| mean(e)).collect(),
        mu_star: ee.iter().map(|e| mean(&abs(e))).collect(),
        sigma: ee.iter().map(|e| std1(e)).collect(),
        mu_star_conf: ee
            .iter()
            .map(|e| {
                let means: Vec<f64> = draws
                    .iter()
                    .map(|d| mean(&d.iter().map(|&i| e[i].abs()).collect::<Vec<_>>()))
                    .collect();
                if r < 2 { f64::NAN } else { Z95 * std1(&means) }
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two trajectories of f(x) = 3 x0 - 2 x1 + x0 x2 on the 4-level grid.
    fn linear() -> (Vec<Vec<f64>>, Vec<f64>) {
        let d = 2.0 / 3.0;
        let x = vec![
            vec![0.0, 0.0, 1.0 / 3.0],
            vec![d, 0.0, 1.0 / 3.0],
            vec![d, 0.0, 1.0],
            vec![d, d, 1.0],
            // Second: x1 moves down first, then x2 up, then x0 down.
            vec![1.0, 1.0, 0.0],
            vec![1.0, 1.0 / 3.0, 0.0],
            vec![1.0, 1.0 / 3.0, d],
            vec![1.0 / 3.0, 1.0 / 3.0, d],
        ];
        let y = x
            .iter()
            .map(|v| 3.0 * v[0] - 2.0 * v[1] + v[0] * v[2])
            .collect();
        (x, y)
    }

    #[test]
    fn effects_are_signed_by_the_direction_of_the_step() {
        let (x, y) = linear();
        let m = analyze(&x, &y, 4, 50, 1).unwrap();
        // x0: 3 + x2 at x2 = 1/3 and at x2 = 2/3; x1: -2 both times;
        // x2: x0 = 2/3 and x0 = 1.
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(a, b)| (a - b).abs() < 1e-12);
        assert!(close(&m.mu, &[3.5, -2.0, 5.0 / 6.0]), "{:?}", m.mu);
        assert!(close(&m.mu_star, &[3.5, 2.0, 5.0 / 6.0]), "{:?}", m.mu_star);
        let s = (2.0f64 * (1.0f64 / 6.0).powi(2)).sqrt();
        assert!(close(&m.sigma, &[s, 0.0, s]), "{:?}", m.sigma);
        assert!(
            m.mu_star_conf[1].abs() < 1e-12,
            "a constant effect has no spread"
        );
        assert!(m.mu_star_conf[0] > 0.0);
    }

    #[test]
    fn one_trajectory_has_effects_but_no_spread() {
        let (x, y) = linear();
        let m = analyze(&x[..4], &y[..4], 4, 50, 1).unwrap();
        assert!(m.mu_star.iter().all(|v| v.is_finite()), "{m:?}");
        assert!(
            m.sigma.iter().chain(&m.mu_star_conf).all(|v| v.is_nan()),
            "{m:?}"
        );
    }

    #[test]
    fn a_step_that_moves_two_parameters_is_refused() {
        let (mut x, y) = linear();
        x[1][1] = 0.5;
        let e = analyze(&x, &y, 4, 10, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "trajectory 0, step 0: 2 parameters moved at once (a Morris step moves exactly one)"
        );
    }
}
