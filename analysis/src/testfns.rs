//! Test functions with known sensitivity indices, and a Saltelli design on
//! the unit cube in SALib's row order, for the estimators' known-answer
//! tests.

/// Ishigami with a = 7, b = 0.1, on x in [-pi, pi]^3.
pub fn ishigami(x: &[f64]) -> f64 {
    x[0].sin() + 7.0 * x[1].sin().powi(2) + 0.1 * x[2].powi(4) * x[0].sin()
}

/// Sobol's G-function on [0, 1]^k.
pub fn g_function(x: &[f64], a: &[f64]) -> f64 {
    x.iter()
        .zip(a)
        .map(|(x, a)| ((4.0 * x - 2.0).abs() + a) / (1.0 + a))
        .product()
}

/// The G-function's analytic S1 and ST.
pub fn g_function_indices(a: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let vj: Vec<f64> = a.iter().map(|a| 1.0 / (3.0 * (1.0 + a).powi(2))).collect();
    let v = vj.iter().map(|v| 1.0 + v).product::<f64>() - 1.0;
    let s1 = vj.iter().map(|v_j| v_j / v).collect();
    let st = (0..a.len())
        .map(|j| {
            let others: f64 = (0..a.len())
                .filter(|l| *l != j)
                .map(|l| 1.0 + vj[l])
                .product();
            vj[j] * others / v
        })
        .collect();
    (s1, st)
}

/// Rows A, AB_1..AB_k, (BA_1..BA_k), B per base point of a scrambled
/// Sobol' sequence in 2k dimensions, as `sweep` lays out a Sobol design.
pub fn saltelli_unit(n: u32, k: usize, second_order: bool) -> Vec<Vec<f64>> {
    let mut rows = Vec::new();
    for i in 0..n {
        let base: Vec<f64> = (0..2 * k as u32)
            .map(|d| f64::from(sobol_burley::sample(i, d, 0)))
            .collect();
        let (a, b) = base.split_at(k);
        rows.push(a.to_vec());
        for j in 0..k {
            let mut r = a.to_vec();
            r[j] = b[j];
            rows.push(r);
        }
        if second_order {
            for j in 0..k {
                let mut r = b.to_vec();
                r[j] = a[j];
                rows.push(r);
            }
        }
        rows.push(b.to_vec());
    }
    rows
}
