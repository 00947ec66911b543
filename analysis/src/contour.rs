//! Where P(not recovered) crosses a threshold over 2 to 4 continuous axes,
//! from the points run so far: the estimate the adaptive boundary design
//! samples by (`sweep refine` on a `[sample] method = "boundary"` grid) and
//! the contour the report draws.
//!
//! Coordinates are unit coordinates (each axis scaled to [0, 1], a log
//! axis in its logarithm), so that distances weigh every axis alike.
//!
//! The estimate at x is a k-nearest-neighbour mean: the `NEIGHBOURS`
//! points nearest to x, each point's share of runs that did not recover
//! weighted by its runs over its distance to x (plus `SMOOTHING`, so that a
//! point run exactly at x does not take all the weight). Nothing is
//! fitted: every estimate is a weighted mean of a few observed shares.

use crate::manifest::SampledAxis;

/// Points whose shares make one estimate.
pub const NEIGHBOURS: usize = 6;
/// Added to every distance (unit coordinates): a point at distance 0
/// weighs as much as 1 / SMOOTHING, not infinitely.
pub const SMOOTHING: f64 = 0.02;
/// Cells per side of the map the contour is drawn from.
pub const MAP_CELLS: usize = 60;

/// One point run: its unit coordinates, its runs and those that did not
/// recover.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub x: Vec<f64>,
    pub runs: u64,
    pub not_recovered: u64,
}

impl Observed {
    pub fn share(&self) -> f64 {
        self.not_recovered as f64 / self.runs.max(1) as f64
    }
}

/// The k-nearest-neighbour estimate of P(not recovered) at `x`; None
/// without points with runs.
pub fn estimate(points: &[Observed], x: &[f64]) -> Option<f64> {
    if points.is_empty() {
        return None;
    }
    let mut near: Vec<(f64, usize)> = points
        .iter()
        .enumerate()
        .map(|(i, p)| (distance(&p.x, x), i))
        .collect();
    // Ties by index: the same estimate whatever the order of equal distances.
    let k = NEIGHBOURS.min(near.len());
    near.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    near.truncate(k);
    near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut sum, mut weight) = (0.0, 0.0);
    for (d, i) in near {
        let w = points[i].runs as f64 / (d + SMOOTHING);
        sum += w * points[i].share();
        weight += w;
    }
    (weight > 0.0).then(|| sum / weight)
}

/// A value of a sampled axis in unit coordinates: 0 at `min`, 1 at `max`,
/// a log axis in its logarithm.
pub fn unit(a: &SampledAxis, v: f64) -> f64 {
    if a.log {
        (libm::log(v) - libm::log(a.min)) / (libm::log(a.max) - libm::log(a.min))
    } else {
        (v - a.min) / (a.max - a.min)
    }
}

/// Round values to label an axis with, inside its range: on a linear axis
/// the multiples of the largest step of 1, 2 or 5 times a power of ten
/// that fits three times; on a log axis 1 and 3 (or 1, 2 and 5 when the
/// range spans less than two decades, all of 1 to 9 under one) times each
/// power of ten. Never fewer than two: the ends when nothing round fits.
pub fn nice_ticks(a: &SampledAxis) -> Vec<f64> {
    // 12 significant digits: 3 x 0.1 is 0.3, not 0.30000000000000004.
    let round = |v: f64| format!("{v:.11e}").parse().unwrap_or(v);
    let inside = |v: f64| v >= a.min * (1.0 - 1e-9) && v <= a.max * (1.0 + 1e-9);
    let ticks: Vec<f64> = if a.log {
        let decades = (a.max / a.min).log10();
        let mantissas: &[f64] = if decades >= 2.0 {
            &[1.0, 3.0]
        } else if decades >= 1.0 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
        };
        let (lo, hi) = (a.min.log10().floor() as i32, a.max.log10().ceil() as i32);
        (lo..=hi)
            .flat_map(|e| mantissas.iter().map(move |m| round(m * 10f64.powi(e))))
            .filter(|v| inside(*v))
            .collect()
    } else {
        let span = a.max - a.min;
        let step = (-12..=12)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .filter(|s| span / s >= 3.0)
            .reduce(f64::max)
            .unwrap_or(span / 4.0);
        let first = (a.min / step).ceil() as i64;
        let last = (a.max / step).floor() as i64;
        (first..=last).map(|k| round(k as f64 * step)).collect()
    };
    if ticks.len() >= 2 {
        ticks
    } else {
        vec![a.min, a.max]
    }
}

/// The inverse of [`unit`].
pub fn value(a: &SampledAxis, u: f64) -> f64 {
    if a.log {
        libm::exp(libm::log(a.min) + u * (libm::log(a.max) - libm::log(a.min)))
    } else {
        a.min + u * (a.max - a.min)
    }
}

pub fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt()
}

/// How much each axis moves the estimate: over `at` (points spread over
/// the space, e.g. the candidate pool), the estimates averaged in ten bins
/// of the axis, highest bin mean minus lowest.
pub fn influence(points: &[Observed], at: &[Vec<f64>], axes: usize) -> Vec<f64> {
    let p: Vec<f64> = at
        .iter()
        .map(|x| estimate(points, x).unwrap_or(0.0))
        .collect();
    (0..axes)
        .map(|j| {
            let mut bins = [(0.0, 0usize); 10];
            for (x, p) in at.iter().zip(&p) {
                let b = ((x[j] * 10.0) as usize).min(9);
                bins[b].0 += p;
                bins[b].1 += 1;
            }
            let means: Vec<f64> = (bins.iter())
                .filter(|b| b.1 > 0)
                .map(|b| b.0 / b.1 as f64)
                .collect();
            let hi = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
            if means.is_empty() { 0.0 } else { hi - lo }
        })
        .collect()
}

/// The estimate on a plane of the unit cube: axes `x` and `y` vary over
/// `MAP_CELLS + 1` values each, every other axis is held at `rest[j]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Map {
    pub x: usize,
    pub y: usize,
    /// `values[i][j]` at unit coordinates (i / MAP_CELLS, j / MAP_CELLS).
    pub values: Vec<Vec<f64>>,
}

pub fn map(points: &[Observed], x: usize, y: usize, rest: &[f64]) -> Map {
    let n = MAP_CELLS;
    let values = (0..=n)
        .map(|i| {
            (0..=n)
                .map(|j| {
                    let mut at = rest.to_vec();
                    at[x] = i as f64 / n as f64;
                    at[y] = j as f64 / n as f64;
                    estimate(points, &at).unwrap_or(0.0)
                })
                .collect()
        })
        .collect();
    Map { x, y, values }
}

/// A piece of the contour, between two points of the plane (unit
/// coordinates of the map's x and y).
pub type Segment = [(f64, f64); 2];

/// The contour of `map` at `threshold` by marching squares: in each cell,
/// where the estimate crosses the threshold along the cell's edges
/// (linearly between its corners), joined in pairs. A cell whose corners
/// alternate (a saddle) joins them as its centre's side says.
pub fn contour(map: &Map, threshold: f64) -> Vec<Segment> {
    let v = &map.values;
    let n = v.len() - 1;
    let step = 1.0 / n as f64;
    let mut out = Vec::new();
    for i in 0..n {
        for j in 0..n {
            // Corners counter-clockwise from the lower left.
            let c = [
                (i, j, v[i][j]),
                (i + 1, j, v[i + 1][j]),
                (i + 1, j + 1, v[i + 1][j + 1]),
                (i, j + 1, v[i][j + 1]),
            ];
            let mut cut: Vec<(f64, f64)> = Vec::new();
            for e in 0..4 {
                let (a, b) = (c[e], c[(e + 1) % 4]);
                if (a.2 >= threshold) != (b.2 >= threshold) {
                    let t = (threshold - a.2) / (b.2 - a.2);
                    let at = |p: usize, q: usize| p as f64 + t * (q as f64 - p as f64);
                    cut.push((at(a.0, b.0) * step, at(a.1, b.1) * step));
                }
            }
            match cut.len() {
                2 => out.push([cut[0], cut[1]]),
                4 => {
                    // Edges 0-1 and 2-3 meet at the corners 1 and 3: the
                    // pairing that keeps the centre on the side it is on.
                    let centre = c.iter().map(|c| c.2).sum::<f64>() / 4.0;
                    if (centre >= threshold) == (c[1].2 >= threshold) {
                        out.push([cut[0], cut[3]]);
                        out.push([cut[1], cut[2]]);
                    } else {
                        out.push([cut[0], cut[1]]);
                        out.push([cut[2], cut[3]]);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(x: &[f64], runs: u64, not_recovered: u64) -> Observed {
        Observed {
            x: x.to_vec(),
            runs,
            not_recovered,
        }
    }

    fn axis(min: f64, max: f64, log: bool) -> SampledAxis {
        SampledAxis {
            path: "a".into(),
            min,
            max,
            log,
            integer: false,
        }
    }

    /// Ticks sit on round values inside the range: ch37-boundary's log
    /// axis of 1 to 30 reads 1, 2, 5, 10, 20 (it read 1, 5.4772, 30).
    #[test]
    fn ticks_are_round_values_inside_the_range() {
        assert_eq!(
            nice_ticks(&axis(1.0, 30.0, true)),
            [1.0, 2.0, 5.0, 10.0, 20.0]
        );
        assert_eq!(
            nice_ticks(&axis(0.01, 10.0, true)),
            [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
        );
        assert_eq!(nice_ticks(&axis(2.0, 6.0, true)), [2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(
            nice_ticks(&axis(100.0, 400.0, false)),
            [100.0, 200.0, 300.0, 400.0]
        );
        assert_eq!(
            nice_ticks(&axis(0.0, 1.0, false)),
            [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        );
        assert_eq!(nice_ticks(&axis(1.3, 1.31, true)), [1.3, 1.31]);
    }

    /// The estimate is the weighted mean of the nearest shares: a point's
    /// runs and nearness weigh; far points beyond the neighbours do not.
    #[test]
    fn the_estimate_weighs_the_nearest_points_by_runs_over_distance() {
        let points = [obs(&[0.0, 0.0], 4, 4), obs(&[1.0, 0.0], 4, 0)];
        let mid = estimate(&points, &[0.5, 0.0]).unwrap();
        assert!((mid - 0.5).abs() < 1e-12, "{mid}");
        // At 0.25 the weights are 4 / 0.27 and 4 / 0.77.
        let q = estimate(&points, &[0.25, 0.0]).unwrap();
        let (a, b) = (4.0 / 0.27, 4.0 / 0.77);
        assert!((q - a / (a + b)).abs() < 1e-12, "{q}");
        // More runs weigh more.
        let heavy = [obs(&[0.0, 0.0], 12, 12), obs(&[1.0, 0.0], 4, 0)];
        assert!((estimate(&heavy, &[0.5, 0.0]).unwrap() - 0.75).abs() < 1e-12);
        // A seventh point, farther than six others, changes nothing.
        let mut many: Vec<Observed> = (0..6).map(|i| obs(&[0.1 * i as f64, 0.0], 1, 1)).collect();
        let six = estimate(&many, &[0.0, 0.0]).unwrap();
        many.push(obs(&[1.0, 1.0], 100, 0));
        assert_eq!(estimate(&many, &[0.0, 0.0]).unwrap(), six);
        assert_eq!(six, 1.0);
        assert_eq!(estimate(&[], &[0.0, 0.0]), None);
    }

    /// A map that crosses the threshold along x = 0.5 has its contour
    /// exactly there, one segment per cell row, and none elsewhere.
    #[test]
    fn marching_squares_finds_a_straight_crossing_where_it_is() {
        let n = MAP_CELLS;
        let values = (0..=n).map(|i| vec![i as f64 / n as f64; n + 1]).collect();
        let m = Map { x: 0, y: 1, values };
        let segs = contour(&m, 0.5);
        assert_eq!(segs.len(), n);
        for s in &segs {
            for (x, _) in s {
                assert!((x - 0.5).abs() < 1e-12, "{s:?}");
            }
            assert!(((s[0].1 - s[1].1).abs() - 1.0 / n as f64).abs() < 1e-12);
        }
        // A map below the threshold everywhere has no contour.
        let flat = Map {
            x: 0,
            y: 1,
            values: vec![vec![0.2; n + 1]; n + 1],
        };
        assert!(contour(&flat, 0.5).is_empty());
    }

    /// A circle's contour lies on the circle (linear interpolation of a
    /// smooth function: within a fraction of a cell).
    #[test]
    fn a_circle_s_contour_lies_on_the_circle() {
        let n = MAP_CELLS;
        let f = |x: f64, y: f64| ((x - 0.5).powi(2) + (y - 0.5).powi(2)).sqrt();
        let values = (0..=n)
            .map(|i| {
                (0..=n)
                    .map(|j| f(i as f64 / n as f64, j as f64 / n as f64))
                    .collect()
            })
            .collect();
        let segs = contour(&Map { x: 0, y: 1, values }, 0.3);
        assert!(segs.len() > 50, "{}", segs.len());
        for p in segs.iter().flatten() {
            assert!((f(p.0, p.1) - 0.3).abs() < 0.002, "{p:?}");
        }
    }

    /// The axis the shares change along has the influence; the other none.
    #[test]
    fn influence_ranks_the_axis_that_moves_the_estimate() {
        let points: Vec<Observed> = (0..=10)
            .flat_map(|i| {
                (0..=10).map(move |j| {
                    let (x, y) = (i as f64 / 10.0, j as f64 / 10.0);
                    obs(&[x, y], 1, u64::from(x > 0.5))
                })
            })
            .collect();
        let at: Vec<Vec<f64>> = points.iter().map(|p| p.x.clone()).collect();
        let inf = influence(&points, &at, 2);
        assert!(inf[0] > 0.9, "{inf:?}");
        assert!(inf[1] < 0.05, "{inf:?}");
    }
}
