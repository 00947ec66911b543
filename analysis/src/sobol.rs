//! Sobol' indices from a Saltelli design, with SALib's estimators
//! (`SALib.analyze.sobol.analyze`): the outputs standardised, S1 and ST of
//! Saltelli et al. (2010) (ST is Jansen's), S2 of Saltelli (2002), each over
//! the population variance of A and B; bootstrap confidence half-widths
//! (resampling base points, normal quantile x the resamples' std). With
//! one base point every resample is that point: the half-widths are NaN
//! (no interval), where SALib would give 0 and read as certainty.

use crate::resample::Resampler;

/// The indices of k parameters. `s2[j][l]` is defined for j < l only
/// (NaN elsewhere), as SALib's matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct SobolIndices {
    pub s1: Vec<f64>,
    pub s1_conf: Vec<f64>,
    pub st: Vec<f64>,
    pub st_conf: Vec<f64>,
    pub s2: Option<Vec<Vec<f64>>>,
    pub s2_conf: Option<Vec<Vec<f64>>>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SobolError {
    #[error(
        "{len} outputs are not a whole number of Saltelli blocks of {block} (k = {k}{}); was the design sampled with the same second_order?",
        if *.second_order { ", second order" } else { "" }
    )]
    Layout {
        len: usize,
        block: usize,
        k: usize,
        second_order: bool,
    },
}

/// The outputs of one Saltelli block per base point, split as SALib does.
struct Split {
    a: Vec<f64>,
    b: Vec<f64>,
    /// `ab[j][i]`: base point i with parameter j from B.
    ab: Vec<Vec<f64>>,
    ba: Vec<Vec<f64>>,
}

/// Indices of the outputs `y` in the design's row order (k parameters),
/// with `resamples` bootstrap resamples drawn from `seed`.
pub fn analyze(
    y: &[f64],
    k: usize,
    second_order: bool,
    resamples: usize,
    seed: u64,
) -> Result<SobolIndices, SobolError> {
    let block = if second_order { 2 * k + 2 } else { k + 2 };
    if y.is_empty() || !y.len().is_multiple_of(block) {
        return Err(SobolError::Layout {
            len: y.len(),
            block,
            k,
            second_order,
        });
    }
    let n = y.len() / block;
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let sd = population_var(y).sqrt();
    // Constant outputs stay constant (SALib would divide 0 by 0); every
    // index is then 0.
    let z: Vec<f64> = y
        .iter()
        .map(|v| if sd > 0.0 { (v - mean) / sd } else { 0.0 })
        .collect();
    let s = Split {
        a: (0..n).map(|i| z[i * block]).collect(),
        b: (0..n).map(|i| z[i * block + block - 1]).collect(),
        ab: (0..k)
            .map(|j| (0..n).map(|i| z[i * block + 1 + j]).collect())
            .collect(),
        ba: if second_order {
            (0..k)
                .map(|j| (0..n).map(|i| z[i * block + 1 + k + j]).collect())
                .collect()
        } else {
            Vec::new()
        },
    };
    let draws = Resampler::new(seed).indexes(n, resamples);
    let resampled = |v: &[f64], r: &[usize]| r.iter().map(|&i| v[i]).collect::<Vec<f64>>();
    let each = |f: &dyn Fn(&[usize]) -> f64| -> Vec<f64> { draws.iter().map(|r| f(r)).collect() };
    // SALib gives no interval (0) when every resampled output is equal.
    let varies = {
        let all: Vec<f64> = draws
            .iter()
            .flat_map(|r| resampled(&s.a, r).into_iter().chain(resampled(&s.b, r)))
            .collect();
        ptp(&all) != 0.0
    };
    let conf = |v: Vec<f64>| {
        if n < 2 {
            f64::NAN
        } else if varies {
            crate::resample::Z95 * sample_std(&v)
        } else {
            0.0
        }
    };
    let mut out = SobolIndices {
        s1: Vec::new(),
        s1_conf: Vec::new(),
        st: Vec::new(),
        st_conf: Vec::new(),
        s2: None,
        s2_conf: None,
    };
    for j in 0..k {
        out.s1.push(first_order(&s.a, &s.ab[j], &s.b));
        out.st.push(total_order(&s.a, &s.ab[j], &s.b));
        out.s1_conf.push(conf(each(&|r| {
            first_order(
                &resampled(&s.a, r),
                &resampled(&s.ab[j], r),
                &resampled(&s.b, r),
            )
        })));
        out.st_conf.push(conf(each(&|r| {
            total_order(
                &resampled(&s.a, r),
                &resampled(&s.ab[j], r),
                &resampled(&s.b, r),
            )
        })));
    }
    if second_order {
        let mut s2 = vec![vec![f64::NAN; k]; k];
        let mut s2_conf = vec![vec![f64::NAN; k]; k];
        for j in 0..k {
            for l in j + 1..k {
                s2[j][l] = second(&s.a, &s.ab[j], &s.ab[l], &s.ba[j], &s.b);
                // SALib applies no constant-output rule to S2's interval.
                if n >= 2 {
                    s2_conf[j][l] = crate::resample::Z95
                        * sample_std(&each(&|r| {
                            second(
                                &resampled(&s.a, r),
                                &resampled(&s.ab[j], r),
                                &resampled(&s.ab[l], r),
                                &resampled(&s.ba[j], r),
                                &resampled(&s.b, r),
                            )
                        }));
                }
            }
        }
        out.s2 = Some(s2);
        out.s2_conf = Some(s2_conf);
    }
    Ok(out)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// numpy's `var` (ddof 0): the mean of squared deviations.
fn population_var(v: &[f64]) -> f64 {
    let m = mean(v);
    mean(&v.iter().map(|x| (x - m) * (x - m)).collect::<Vec<_>>())
}

fn sample_std(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() as f64 - 1.0)).sqrt()
}

fn ptp(v: &[f64]) -> f64 {
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(*x), hi.max(*x))
        });
    hi - lo
}

/// Var of A and B together, or `None` when they are constant (SALib: 0).
fn var_ab(a: &[f64], b: &[f64]) -> Option<f64> {
    let y: Vec<f64> = a.iter().chain(b).copied().collect();
    (ptp(&y) != 0.0).then(|| population_var(&y))
}

/// Saltelli et al. (2010): mean(B (AB - A)) / Var.
fn first_order(a: &[f64], ab: &[f64], b: &[f64]) -> f64 {
    var_ab(a, b).map_or(0.0, |v| {
        mean(
            &(0..a.len())
                .map(|i| b[i] * (ab[i] - a[i]))
                .collect::<Vec<_>>(),
        ) / v
    })
}

/// Jansen: mean((A - AB)^2) / 2 Var.
fn total_order(a: &[f64], ab: &[f64], b: &[f64]) -> f64 {
    var_ab(a, b).map_or(0.0, |v| {
        0.5 * mean(
            &(0..a.len())
                .map(|i| (a[i] - ab[i]).powi(2))
                .collect::<Vec<_>>(),
        ) / v
    })
}

/// Saltelli (2002): mean(BA_j AB_l - A B) / Var - S1_j - S1_l.
fn second(a: &[f64], ab_j: &[f64], ab_l: &[f64], ba_j: &[f64], b: &[f64]) -> f64 {
    var_ab(a, b).map_or(0.0, |v| {
        let vjl = mean(
            &(0..a.len())
                .map(|i| ba_j[i] * ab_l[i] - a[i] * b[i])
                .collect::<Vec<_>>(),
        ) / v;
        vjl - first_order(a, ab_j, b) - first_order(a, ab_l, b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testfns::{g_function, g_function_indices, ishigami, saltelli_unit};

    #[test]
    fn ishigami_indices_match_the_known_answer() {
        let n = 4096;
        let x = saltelli_unit(n, 3, true);
        let pi = std::f64::consts::PI;
        let y: Vec<f64> = x
            .iter()
            .map(|u| {
                ishigami(
                    u.iter()
                        .map(|v| -pi + 2.0 * pi * v)
                        .collect::<Vec<_>>()
                        .as_slice(),
                )
            })
            .collect();
        let s = analyze(&y, 3, true, 100, 1).unwrap();
        for (got, want) in s.s1.iter().zip([0.314, 0.442, 0.000]) {
            assert!((got - want).abs() < 0.02, "S1 {:?}", s.s1);
        }
        for (got, want) in s.st.iter().zip([0.558, 0.442, 0.244]) {
            assert!((got - want).abs() < 0.02, "ST {:?}", s.st);
        }
        let s2 = s.s2.as_ref().unwrap();
        // S13 = ST1 - S1 = 0.244; the other pairs do not interact.
        assert!((s2[0][2] - 0.244).abs() < 0.05, "{s2:?}");
        assert!(s2[0][1].abs() < 0.05 && s2[1][2].abs() < 0.05, "{s2:?}");
        for c in s.s1_conf.iter().chain(&s.st_conf) {
            assert!(*c > 0.0 && *c < 0.1, "{:?} {:?}", s.s1_conf, s.st_conf);
        }
    }

    #[test]
    fn g_function_indices_match_the_analytic_ones() {
        let a = [0.0, 1.0, 4.5, 9.0, 99.0, 99.0];
        let x = saltelli_unit(4096, a.len(), false);
        let y: Vec<f64> = x.iter().map(|u| g_function(u, &a)).collect();
        let s = analyze(&y, a.len(), false, 100, 1).unwrap();
        let (s1, st) = g_function_indices(&a);
        for j in 0..a.len() {
            assert!((s.s1[j] - s1[j]).abs() < 0.03, "S1 {:?} vs {s1:?}", s.s1);
            assert!((s.st[j] - st[j]).abs() < 0.03, "ST {:?} vs {st:?}", s.st);
        }
        assert!(s.s2.is_none());
    }

    #[test]
    fn one_base_point_has_no_interval() {
        // One Saltelli block of k = 2, second order: A, AB1, AB2, BA1, BA2, B.
        let s = analyze(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 2, true, 100, 1).unwrap();
        assert!(s.s1.iter().chain(&s.st).all(|v| v.is_finite()), "{s:?}");
        assert!(
            s.s1_conf.iter().chain(&s.st_conf).all(|c| c.is_nan()),
            "{s:?}"
        );
        assert!(s.s2_conf.unwrap()[0][1].is_nan());
        // Two base points do have one.
        let y = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 3.0, 2.0, 0.0, 5.0, 4.0];
        let s = analyze(&y, 2, true, 100, 1).unwrap();
        assert!(s.s1_conf.iter().all(|c| c.is_finite()), "{s:?}");
    }

    #[test]
    fn constant_outputs_give_zero_indices_and_a_wrong_length_is_refused() {
        let s = analyze(&[2.0; 10], 3, false, 10, 1).unwrap();
        assert_eq!(s.s1, [0.0; 3]);
        assert_eq!(s.st_conf, [0.0; 3]);
        let e = analyze(&[1.0; 10], 3, true, 10, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "10 outputs are not a whole number of Saltelli blocks of 8 (k = 3, second order); was the design sampled with the same second_order?"
        );
    }
}
