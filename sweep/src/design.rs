//! Sampled designs (`[sample]`): Latin hypercube, Saltelli's scheme on a
//! scrambled Sobol' sequence, and Morris trajectories, over the grid's
//! continuous axes (`{ min, max }`, `log = true`, `integer = true`).
//!
//! The design is computed once, at load, from the grid file alone (method,
//! `n`, `seed`, the ranges), so it is the same on every machine, thread
//! count and shard. It becomes the grid's last dimension: a group of
//! paths that move together, one position per sample point, in the row
//! order SALib's `analyze` functions expect. Categorical axes (lists) stay
//! dimensions of their own, so the grid runs one whole design per
//! combination of categories (full factorial over the categories).

use crate::grid::field;
use analysis::manifest::{BoundarySearch, SampleDesign, SampledAxis};
use sim_core::params::{self, Kind};
use sim_core::random::Stream;
use toml::Value;

/// The largest `n` of a Sobol design: the base sequence's length
/// (`sobol_burley` gives 2^16 points per dimension).
const SOBOL_MAX_N: u64 = 1 << 16;
/// Dimensions of the base sequence: A and B side by side (2k).
const SOBOL_MAX_DIMS: usize = 256;
/// Candidate hypercubes a maximin LHS chooses from.
const MAXIMIN_CANDIDATES: u64 = 50;
/// The most continuous axes of an adaptive boundary search: beyond them,
/// nearest neighbours stop being near, and the boundary stops being a
/// picture.
const BOUNDARY_MAX_AXES: usize = 4;
/// The largest maximin LHS (its cost grows as n^2 x candidates).
const MAXIMIN_MAX_N: u64 = 4096;

/// The most sample points a design may have: each is held in memory as
/// a row of values (2^20 rows of 7 axes take about 0.7 GB).
const MAX_POINTS: u64 = 1 << 20;

/// `[sample]`'s keys, in the order the docs give them.
const SAMPLE_KEYS: [&str; 13] = [
    "method",
    "n",
    "seed",
    "replicates",
    "second_order",
    "levels",
    "maximin",
    "threshold",
    "initial",
    "batch",
    "spacing",
    "tolerance",
    "candidates",
];

struct SampleTable {
    method: String,
    n: u64,
    seed: u64,
    replicates: u64,
    second_order: Option<bool>,
    levels: Option<u64>,
    maximin: Option<bool>,
    threshold: Option<f64>,
    initial: Option<u64>,
    batch: Option<u64>,
    spacing: Option<f64>,
    tolerance: Option<f64>,
    candidates: Option<u64>,
    /// The keys the table's unknown keys come nearest to, when not given
    /// themselves: their defaults stand in, and a problem of a default
    /// is not the user's (`levls = 2` would otherwise meet "levels = 4").
    misspelt: Vec<&'static str>,
}

impl SampleTable {
    /// Each key read on its own, so that every problem of the table is
    /// reported at once; `None` if a key cannot be read (as (key, reason)).
    /// Unknown keys are reported and refuse the design, but leave the
    /// values of the known ones to be checked beside them.
    fn read(sample: &Value, errors: &mut Vec<(String, String)>) -> Option<SampleTable> {
        let Value::Table(t) = sample else {
            errors.push((
                "sample".into(),
                format!("must be a table ([sample] with method and n), got {sample}"),
            ));
            return None;
        };
        let count = |v: &Value| v.as_integer().and_then(|i| u64::try_from(i).ok());
        // The bound each type error names is the one the later checks hold
        // the value to, so that mending one message does not meet another.
        let (whole, positive) = ("an integer >= 0", "an integer >= 1");
        let n = field(t, "sample", "n", positive, count, errors);
        let seed = field(t, "sample", "seed", whole, count, errors);
        let replicates = field(t, "sample", "replicates", positive, count, errors);
        let levels = field(t, "sample", "levels", "an even integer >= 2", count, errors);
        let initial = field(t, "sample", "initial", positive, count, errors);
        let batch = field(t, "sample", "batch", positive, count, errors);
        let candidates = field(t, "sample", "candidates", positive, count, errors);
        let second_order = field(
            t,
            "sample",
            "second_order",
            "true or false",
            Value::as_bool,
            errors,
        );
        let maximin = field(
            t,
            "sample",
            "maximin",
            "true or false",
            Value::as_bool,
            errors,
        );
        let number = crate::grid::finite_number;
        let threshold = field(t, "sample", "threshold", "a number", number, errors);
        let spacing = field(t, "sample", "spacing", "a number", number, errors);
        let tolerance = field(t, "sample", "tolerance", "a number", number, errors);
        let methods = "a string (lhs, sobol, morris or boundary)";
        let method = field(
            t,
            "sample",
            "method",
            methods,
            |v| v.as_str().map(str::to_string),
            errors,
        );
        let mut bad = |key: &str, reason: String| errors.push((format!("sample.{key}"), reason));
        if !t.contains_key("method") {
            bad("method", "missing: lhs, sobol, morris or boundary".into());
        }
        if !t.contains_key("n") {
            bad(
                "n",
                "missing: the design's size (base points for sobol, trajectories for morris, points for lhs and boundary)".into(),
            );
        }
        crate::grid::unknown_keys(t, "sample", &SAMPLE_KEYS, errors);
        let misspelt = (t.keys())
            .filter(|k| !SAMPLE_KEYS.contains(&k.as_str()))
            .filter_map(|k| sim_core::params::closest(k, SAMPLE_KEYS))
            .filter(|k| !t.contains_key(*k))
            .collect();
        // The other keys' problems are still told, a key whose value was
        // refused above taking its default: without a method or a size
        // there is no design to check them against.
        Some(SampleTable {
            method: method?,
            n: n?,
            seed: seed.unwrap_or(0),
            replicates: replicates.unwrap_or(1),
            second_order,
            levels,
            maximin,
            threshold,
            initial,
            batch,
            spacing,
            tolerance,
            candidates,
            misspelt,
        })
    }

    /// The design's rows (sample points) before it is generated.
    fn points(&self, k: usize) -> u64 {
        let k = k as u64;
        let per = match self.method.as_str() {
            "sobol" if self.second_order.unwrap_or(true) => 2 * k + 2,
            "sobol" => k + 2,
            "morris" => k + 1,
            _ => 1,
        };
        self.n.saturating_mul(per)
    }
}

/// A `{ min, max }` table of the grid's `[axes]`: a sampled axis.
pub fn is_sampled(t: &toml::Table) -> bool {
    t.contains_key("min") || t.contains_key("max")
}

/// A `[sample]` that makes no design: every problem as (key, reason),
/// and the sampled axes that were read, whose values are still checked.
pub struct Refused {
    pub problems: Vec<(String, String)>,
    pub axes: Vec<SampledAxis>,
}

/// Reads `[sample]` and the sampled axes; every problem as (key, reason).
pub fn parse(sample: &Value, axes: &[(String, toml::Table)]) -> Result<SampleDesign, Refused> {
    let mut errors: Vec<(String, String)> = Vec::new();
    let table = SampleTable::read(sample, &mut errors);
    let mut parsed = Vec::new();
    for (path, t) in axes {
        let key = format!("axes.\"{path}\"");
        match sampled_axis(path, t) {
            Ok(a) => parsed.push(a),
            Err(reason) => errors.push((key, format!("{}: {reason}", Value::Table(t.clone())))),
        }
    }
    let Some(t) = table else {
        return Err(Refused {
            problems: errors,
            axes: parsed,
        });
    };
    let k = parsed.len();
    // The axes given but refused above are sampled axes too: saying none
    // was given would send the user looking for the wrong mistake.
    let given = axes.len();
    let mut bad = |key: &str, reason: String| errors.push((format!("sample.{key}"), reason));
    const METHODS: [&str; 4] = ["lhs", "sobol", "morris", "boundary"];
    if !METHODS.contains(&t.method.as_str()) {
        let hint = sim_core::params::closest(&t.method, METHODS)
            .map_or(String::new(), |m| format!("; did you mean `{m}`?"));
        bad(
            "method",
            format!(
                "`{}` is not a method: lhs, sobol, morris or boundary{hint}",
                t.method
            ),
        );
    }
    // The Sobol' scrambling seed is 32 bits: a larger seed would give the
    // design of a smaller one.
    if matches!(t.method.as_str(), "sobol" | "boundary") && t.seed > u64::from(u32::MAX) {
        bad(
            "seed",
            format!(
                "must be at most {} (the design's scrambling seed is 32 bits), got {}",
                u32::MAX,
                t.seed
            ),
        );
    }
    if given == 0 {
        errors.push((
            "axes".into(),
            "[sample] needs at least one sampled axis, e.g. \"svc_b.slow.duration_s\" = { min = 1, max = 30 }".into(),
        ));
    }
    let mut bad = |key: &str, reason: String| errors.push((format!("sample.{key}"), reason));
    if t.n == 0 {
        bad("n", "n must be at least 1".into());
    }
    if t.replicates == 0 {
        bad(
            "replicates",
            "replicates (seeds per sample point) must be at least 1".into(),
        );
    }
    // Options of one method are refused under another: they would do nothing.
    for (key, given, method) in [
        ("second_order", t.second_order.is_some(), "sobol"),
        ("levels", t.levels.is_some(), "morris"),
        ("maximin", t.maximin.is_some(), "lhs"),
        ("threshold", t.threshold.is_some(), "boundary"),
        ("initial", t.initial.is_some(), "boundary"),
        ("batch", t.batch.is_some(), "boundary"),
        ("spacing", t.spacing.is_some(), "boundary"),
        ("tolerance", t.tolerance.is_some(), "boundary"),
        ("candidates", t.candidates.is_some(), "boundary"),
    ] {
        if given && t.method != method {
            bad(
                key,
                format!(
                    "applies to method = \"{method}\" only, not \"{}\"",
                    t.method
                ),
            );
        }
    }
    let levels = t.levels.unwrap_or(4);
    match t.method.as_str() {
        "sobol" if t.n == 1 => bad(
            "n",
            "n = 1: Sobol' indices need at least 2 base points: their intervals resample the base points, and one resampled is always itself".into(),
        ),
        "morris" if t.n == 1 => bad(
            "n",
            "n = 1: Morris needs at least 2 trajectories: sigma and the intervals are spreads over trajectories".into(),
        ),
        "sobol" if t.n > SOBOL_MAX_N => bad(
            "n",
            format!(
                "n = {} is more than the {SOBOL_MAX_N} base points of the Sobol' sequence",
                t.n
            ),
        ),
        "sobol" if 2 * k > SOBOL_MAX_DIMS => bad(
            "method",
            format!(
                "sobol takes at most {} sampled axes, got {k}",
                SOBOL_MAX_DIMS / 2
            ),
        ),
        "morris" if levels < 2 || levels % 2 != 0 => bad(
            "levels",
            format!(
                "levels = {levels}: Morris needs an even number of grid levels >= 2 (SALib's rule)"
            ),
        ),
        "lhs" if t.maximin == Some(true) && t.n > MAXIMIN_MAX_N => bad(
            "maximin",
            format!(
                "a maximin LHS takes n <= {MAXIMIN_MAX_N}, got {} (its cost grows as n^2)",
                t.n
            ),
        ),
        _ => {}
    }
    // Checked before the design is made: it is held in memory.
    let points = t.points(k);
    if t.method != "boundary" && points > MAX_POINTS {
        let rows = match t.method.as_str() {
            "sobol" if t.second_order.unwrap_or(true) => "n x (2k + 2)",
            "sobol" => "n x (k + 2)",
            "morris" => "n x (k + 1)",
            _ => "n",
        };
        bad(
            "n",
            format!(
                "n = {} makes {points} sample points ({} with k = {k} axes: {rows}), more than the {MAX_POINTS} a design may have: use a smaller n, or split the axes' ranges into several grids",
                t.n, t.method
            ),
        );
    }
    if t.replicates > crate::grid::MAX_RUNS {
        bad(
            "replicates",
            format!(
                "replicates = {} is more than the {} runs a grid may have",
                t.replicates,
                crate::grid::MAX_RUNS
            ),
        );
    }
    let boundary = (t.method == "boundary").then(|| BoundarySearch {
        threshold: t.threshold.unwrap_or(0.5),
        initial: t.initial.unwrap_or(16),
        batch: t.batch.unwrap_or(8),
        spacing: t.spacing.unwrap_or(0.05),
        tolerance: t.tolerance.unwrap_or(0.02),
        candidates: t.candidates.unwrap_or(1024),
    });
    if let Some(b) = &boundary {
        check_boundary(b, t.n, k, &mut errors);
    }
    if t.method == "morris" && !t.misspelt.contains(&"levels") {
        for a in &parsed {
            if a.integer && (a.max - a.min) < (levels - 1) as f64 {
                errors.push((
                    format!("axes.\"{}\"", a.path),
                    format!(
                        "an integer axis from {} to {} has fewer than the {levels} distinct levels of the Morris grid",
                        a.min, a.max
                    ),
                ));
            }
        }
    }
    errors.retain(|(key, _)| !(t.misspelt.iter()).any(|m| key.strip_prefix("sample.") == Some(*m)));
    if !errors.is_empty() {
        return Err(Refused {
            problems: errors,
            axes: parsed,
        });
    }
    Ok(SampleDesign {
        method: t.method,
        n: t.n,
        seed: t.seed,
        replicates: t.replicates,
        second_order: t.second_order.unwrap_or(true),
        levels,
        maximin: t.maximin.unwrap_or(false),
        axes: parsed,
        boundary,
    })
}

/// The adaptive search's own keys (every problem as (key, reason)).
fn check_boundary(b: &BoundarySearch, n: u64, k: usize, errors: &mut Vec<(String, String)>) {
    if !(2..=BOUNDARY_MAX_AXES).contains(&k) && k > 0 {
        errors.push((
            "axes".into(),
            format!(
                "method = \"boundary\" takes 2 to {BOUNDARY_MAX_AXES} sampled axes, got {k} (for one axis, `sweep refine --axis` bisects it)"
            ),
        ));
    }
    let mut bad = |key: &str, reason: String| errors.push((format!("sample.{key}"), reason));
    if !(b.threshold > 0.0 && b.threshold < 1.0) {
        bad(
            "threshold",
            format!(
                "threshold = {}: P(not recovered) at the boundary must be in (0, 1)",
                b.threshold
            ),
        );
    }
    if b.initial == 0 || b.initial > n {
        bad(
            "initial",
            format!(
                "initial = {}: the first round's points must be at least 1 and at most n = {n}",
                b.initial
            ),
        );
    }
    if b.batch == 0 {
        bad(
            "batch",
            "batch (points per round) must be at least 1".into(),
        );
    }
    if !(0.0..1.0).contains(&b.spacing) {
        bad(
            "spacing",
            format!(
                "spacing = {}: a distance in unit coordinates, from 0 to below 1",
                b.spacing
            ),
        );
    }
    if !(0.0..1.0).contains(&b.tolerance) {
        bad(
            "tolerance",
            format!(
                "tolerance = {}: a share of the candidates, from 0 (stop at the budget) to below 1",
                b.tolerance
            ),
        );
    }
    if b.candidates < n || b.candidates > SOBOL_MAX_N {
        bad(
            "candidates",
            format!(
                "candidates = {} must be at least n = {n} (the points are picked from them) and at most {SOBOL_MAX_N}",
                b.candidates
            ),
        );
    }
}

fn sampled_axis(path: &str, t: &toml::Table) -> Result<SampledAxis, String> {
    if let Some(k) = t
        .keys()
        .find(|k| !["min", "max", "log", "integer"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown key `{k}` in a sampled axis (it takes min, max, log, integer)"
        ));
    }
    let number = |key: &str| match t.get(key) {
        Some(Value::Integer(i)) => Ok(*i as f64),
        Some(Value::Float(x)) if x.is_finite() => Ok(*x),
        Some(other) => Err(format!("`{key}` must be a number, got {other}")),
        None => Err("a sampled axis needs both `min` and `max`".to_string()),
    };
    let flag = |key: &str| match t.get(key) {
        None => Ok(None),
        Some(Value::Boolean(b)) => Ok(Some(*b)),
        Some(other) => Err(format!("`{key}` must be true or false, got {other}")),
    };
    // Each key's type is told at once, not the first fault alone.
    let (min, max, log, integer) = (number("min"), number("max"), flag("log"), flag("integer"));
    let faults = crate::grid::joined_faults([
        min.as_ref().err(),
        max.as_ref().err(),
        log.as_ref().err(),
        integer.as_ref().err(),
    ]);
    let (Ok(min), Ok(max), Ok(log), Ok(integer)) = (min, max, log, integer) else {
        return Err(faults);
    };
    let log = log.unwrap_or(false);
    let kind = params::param_of(path).map(|p| p.kind);
    let integer = match (kind, integer) {
        (Some(Kind::Int | Kind::Cap), Some(false)) => {
            return Err("the parameter takes integers: integer = false cannot apply".into());
        }
        (Some(Kind::Int | Kind::Cap), _) => true,
        (Some(Kind::Float), i) => i.unwrap_or(false),
        // Unknown paths are reported by the value check with their own message.
        (None, i) => i.unwrap_or(false),
        (Some(k), _) => {
            return Err(format!(
                "the parameter takes {}: sample it as a categorical axis (a list of its levels)",
                k.describe()
            ));
        }
    };
    if min >= max {
        return Err(format!("min = {min} must be below max = {max}"));
    }
    if log && min <= 0.0 {
        return Err(format!("log = true needs min > 0, got {min}"));
    }
    if integer && (min.fract() != 0.0 || max.fract() != 0.0) {
        return Err("an integer axis needs integer min and max".into());
    }
    Ok(SampledAxis {
        path: path.to_string(),
        min,
        max,
        log,
        integer,
    })
}

/// What a valid design spends for less than it could, said before it runs
/// (SALib warns of the first too).
pub fn notes(spec: &SampleDesign) -> Vec<String> {
    let mut notes = Vec::new();
    if spec.method == "sobol" && !spec.n.is_power_of_two() {
        notes.push(format!(
            "note: sample.n = {} is not a power of two: a Sobol' sequence is balanced at 2^m points, so the indices converge more slowly than at n = {}",
            spec.n,
            spec.n.next_power_of_two()
        ));
    }
    if spec.method == "sobol" && spec.second_order && spec.axes.len() == 1 {
        notes.push(
            "note: with one sampled axis there are no second-order terms, and second_order = true repeats every point: second_order = false halves the runs".to_string(),
        );
    }
    notes
}

/// The design's points for `spec`, one row per point in SALib's order and
/// one value per axis of `spec.axes`; deterministic in `spec` alone.
pub fn generate(spec: &SampleDesign) -> Vec<Vec<Value>> {
    let unit = match spec.method.as_str() {
        "sobol" => saltelli(spec),
        "morris" => morris(spec),
        "boundary" => candidates(spec),
        _ => lhs(spec),
    };
    unit.iter()
        .map(|u| {
            spec.axes
                .iter()
                .zip(u)
                .map(|(a, x)| scale(a, *x, spec.method == "morris"))
                .collect()
        })
        .collect()
}

/// A unit coordinate to the axis's value. Integers: equal-width bins (each
/// integer equally likely), or, on the Morris grid whose levels include both
/// ends, the nearest integer. Log-scaled integers: the bins are equal in
/// log, integer k's from k - 1/2 to k + 1/2 (Optuna's rule for a log
/// integer), or the Morris grid's log-spaced levels rounded.
fn scale(a: &SampledAxis, u: f64, grid_levels: bool) -> Value {
    let log_between = |lo: f64, hi: f64| {
        let (lo, hi) = (libm::log(lo), libm::log(hi));
        libm::exp(lo + u * (hi - lo))
    };
    if a.integer {
        let v = match (a.log, grid_levels) {
            (false, true) => (a.min + u * (a.max - a.min)).round(),
            (false, false) => (a.min + (u * (a.max - a.min + 1.0)).floor()).min(a.max),
            (true, true) => log_between(a.min, a.max).round(),
            (true, false) => log_between(a.min - 0.5, a.max + 0.5).round(),
        };
        return Value::Integer(v.clamp(a.min, a.max) as i64);
    }
    let x = if a.log {
        log_between(a.min, a.max).clamp(a.min, a.max)
    } else {
        a.min + u * (a.max - a.min)
    };
    // Ten significant digits: far finer than any parameter needs, and
    // values a person can read in the runs table.
    Value::Float(format!("{x:.9e}").parse().expect("a float"))
}

/// Saltelli's scheme in SALib's row order (`SALib.sample.sobol.sample`):
/// for each base point i, A_i, then AB_i^j for each axis j (A with column
/// j from B), then (with second-order terms) BA_i^j (B with column j from
/// A), then B_i. A and B are the two halves of one 2k-dimensional
/// Owen-scrambled Sobol' sequence.
fn saltelli(spec: &SampleDesign) -> Vec<Vec<f64>> {
    let k = spec.axes.len();
    let seed = u32::try_from(spec.seed).expect("sample.seed is checked to fit 32 bits");
    let per = if spec.second_order { 2 * k + 2 } else { k + 2 };
    let mut rows = Vec::with_capacity(spec.n as usize * per);
    for i in 0..spec.n as u32 {
        let base: Vec<f64> = (0..2 * k as u32)
            .map(|d| f64::from(sobol_burley::sample(i, d, seed)))
            .collect();
        let (a, b) = base.split_at(k);
        rows.push(a.to_vec());
        for j in 0..k {
            let mut r = a.to_vec();
            r[j] = b[j];
            rows.push(r);
        }
        if spec.second_order {
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

/// The adaptive search's candidates: the first points of a k-dimensional
/// Owen-scrambled Sobol' sequence (any prefix of it is spread evenly, so
/// the first round, the first `initial`, covers the space).
fn candidates(spec: &SampleDesign) -> Vec<Vec<f64>> {
    let k = spec.axes.len() as u32;
    let seed = u32::try_from(spec.seed).expect("sample.seed is checked to fit 32 bits");
    let n = spec.boundary.as_ref().map_or(0, |b| b.candidates) as u32;
    (0..n)
        .map(|i| {
            (0..k)
                .map(|d| f64::from(sobol_burley::sample(i, d, seed)))
                .collect()
        })
        .collect()
}

/// `n` trajectories of k + 1 points on the p-level grid (SALib's
/// `morris.sample` without trajectory optimisation): a random start from
/// the lower half of the grid, then each axis in a random order moves by
/// delta = p / (2 (p - 1)), up or down by a random sign.
fn morris(spec: &SampleDesign) -> Vec<Vec<f64>> {
    let k = spec.axes.len();
    let p = spec.levels;
    let delta = p as f64 / (2.0 * (p - 1) as f64);
    let mut rng = Stream::new(spec.seed, "design.morris");
    let mut rows = Vec::with_capacity(spec.n as usize * (k + 1));
    for _ in 0..spec.n {
        // x* from linspace(0, 1 - delta, p / 2).
        let half = p / 2;
        let start: Vec<f64> = (0..k)
            .map(|_| {
                let l = rng.below_or_eq(half - 1);
                if half == 1 {
                    0.0
                } else {
                    l as f64 * (1.0 - delta) / (half - 1) as f64
                }
            })
            .collect();
        let up: Vec<bool> = (0..k).map(|_| rng.below_or_eq(1) == 1).collect();
        let order = permutation(&mut rng, k);
        // A variable moving down starts at x* + delta and ends at x*.
        let mut x: Vec<f64> = (0..k)
            .map(|j| if up[j] { start[j] } else { start[j] + delta })
            .collect();
        rows.push(x.clone());
        for &j in &order {
            x[j] = if up[j] { start[j] + delta } else { start[j] };
            rows.push(x.clone());
        }
    }
    rows
}

/// Latin hypercube: each axis cut in n equal strata, one point per stratum
/// and axis, uniform within it; with `maximin`, the candidate of the
/// largest smallest distance between two points.
fn lhs(spec: &SampleDesign) -> Vec<Vec<f64>> {
    let candidates = if spec.maximin { MAXIMIN_CANDIDATES } else { 1 };
    let mut rng = Stream::new(spec.seed, "design.lhs");
    let mut best: Option<(f64, Vec<Vec<f64>>)> = None;
    for _ in 0..candidates {
        let d = one_hypercube(&mut rng, spec.n as usize, spec.axes.len());
        let score = if spec.maximin { min_distance(&d) } else { 0.0 };
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, d));
        }
    }
    best.expect("at least one candidate").1
}

fn one_hypercube(rng: &mut Stream, n: usize, k: usize) -> Vec<Vec<f64>> {
    let mut rows = vec![vec![0.0; k]; n];
    for j in 0..k {
        let strata = permutation(rng, n);
        for (row, s) in rows.iter_mut().zip(strata) {
            row[j] = (s as f64 + rng.uniform()) / n as f64;
        }
    }
    rows
}

fn min_distance(d: &[Vec<f64>]) -> f64 {
    let mut best = f64::INFINITY;
    for (i, a) in d.iter().enumerate() {
        for b in &d[i + 1..] {
            let s: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
            best = best.min(s);
        }
    }
    best.sqrt()
}

/// Fisher-Yates.
fn permutation(rng: &mut Stream, n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below_or_eq(i as u64) as usize;
        v.swap(i, j);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(method: &str, n: u64, k: usize) -> SampleDesign {
        SampleDesign {
            method: method.into(),
            n,
            seed: 7,
            replicates: 1,
            second_order: true,
            levels: 4,
            maximin: false,
            boundary: None,
            axes: (0..k)
                .map(|j| SampledAxis {
                    path: format!("x{j}"),
                    min: 0.0,
                    max: 1.0,
                    log: false,
                    integer: false,
                })
                .collect(),
        }
    }

    /// Through the design generator and the estimator together: on a
    /// linear function every elementary effect is its coefficient, so
    /// `mu` is exact and `sigma` 0 only if the generator's step and the
    /// estimator's agree (a wrong step in either scales every effect).
    #[test]
    fn morris_design_and_estimator_recover_a_linear_function_exactly() {
        for levels in [4, 6, 8] {
            let mut s = spec("morris", 20, 3);
            s.levels = levels;
            let rows = morris(&s);
            let a = [3.0, -2.0, 0.5];
            let y: Vec<f64> = (rows.iter())
                .map(|x| x.iter().zip(a).map(|(x, a)| x * a).sum())
                .collect();
            let m = analysis::morris::analyze(&rows, &y, levels, 10, 1).unwrap();
            for ((mu, sigma), a) in m.mu.iter().zip(&m.sigma).zip(a) {
                assert!((mu - a).abs() < 1e-9, "levels {levels}: mu {:?}", m.mu);
                assert!(sigma.abs() < 1e-9, "levels {levels}: sigma {:?}", m.sigma);
            }
        }
    }

    #[test]
    fn saltelli_rows_follow_salib_order() {
        let s = spec("sobol", 8, 3);
        let rows = saltelli(&s);
        assert_eq!(rows.len(), 8 * (2 * 3 + 2));
        for i in 0..8 {
            let blk = &rows[i * 8..(i + 1) * 8];
            let (a, b) = (&blk[0], &blk[7]);
            for j in 0..3 {
                // AB_j: A with column j of B; BA_j: B with column j of A.
                for c in 0..3 {
                    assert_eq!(blk[1 + j][c], if c == j { b[c] } else { a[c] });
                    assert_eq!(blk[4 + j][c], if c == j { a[c] } else { b[c] });
                }
            }
        }
        let first = saltelli(&SampleDesign {
            second_order: false,
            ..spec("sobol", 8, 3)
        });
        assert_eq!(first.len(), 8 * (3 + 2));
        // The A and B of both layouts are the same base points.
        assert_eq!(first[0], rows[0]);
        assert_eq!(first[4], rows[7]);
    }

    #[test]
    fn a_sobol_base_is_stratified_in_every_dimension() {
        let rows = saltelli(&spec("sobol", 64, 2));
        for j in 0..2 {
            let mut bins = [0; 64];
            for i in 0..64 {
                bins[(rows[i * 6][j] * 64.0) as usize] += 1;
            }
            assert!(bins.iter().all(|b| *b == 1), "dimension {j}: {bins:?}");
        }
    }

    #[test]
    fn a_morris_trajectory_moves_one_axis_by_delta_per_step() {
        let s = spec("morris", 20, 4);
        let rows = morris(&s);
        let delta = 4.0 / 6.0;
        assert_eq!(rows.len(), 20 * 5);
        let grid = [0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0];
        for t in rows.chunks(5) {
            let mut moved = Vec::new();
            for w in t.windows(2) {
                let changed: Vec<usize> = (0..4).filter(|&j| w[0][j] != w[1][j]).collect();
                assert_eq!(changed.len(), 1, "{w:?}");
                let j = changed[0];
                assert!(((w[1][j] - w[0][j]).abs() - delta).abs() < 1e-12);
                moved.push(j);
            }
            moved.sort_unstable();
            assert_eq!(moved, [0, 1, 2, 3], "every axis moves once");
            for x in t.iter().flatten() {
                assert!(
                    grid.iter().any(|g| (g - x).abs() < 1e-12),
                    "{x} off the grid"
                );
            }
        }
    }

    #[test]
    fn an_lhs_has_one_point_per_stratum_and_maximin_spreads_them() {
        let rows = lhs(&spec("lhs", 50, 3));
        for j in 0..3 {
            let mut strata: Vec<usize> = rows.iter().map(|r| (r[j] * 50.0) as usize).collect();
            strata.sort_unstable();
            assert_eq!(strata, (0..50).collect::<Vec<_>>());
        }
        let plain = min_distance(&rows);
        let spread = min_distance(&lhs(&SampleDesign {
            maximin: true,
            ..spec("lhs", 50, 3)
        }));
        assert!(spread > plain, "{spread} <= {plain}");
    }

    #[test]
    fn the_design_depends_on_the_seed_alone() {
        for m in ["lhs", "sobol", "morris"] {
            let a = generate(&spec(m, 16, 3));
            assert_eq!(a, generate(&spec(m, 16, 3)), "{m}");
            let other = generate(&SampleDesign {
                seed: 8,
                ..spec(m, 16, 3)
            });
            assert_ne!(a, other, "{m}");
        }
    }

    #[test]
    fn scaling_respects_log_and_integer_axes() {
        let log = SampledAxis {
            path: "x".into(),
            min: 1.0,
            max: 100.0,
            log: true,
            integer: false,
        };
        assert_eq!(
            scale(&log, 0.5, false)
                .as_float()
                .map(|x| (x * 1e9).round()),
            Some(10e9)
        );
        let int = SampledAxis {
            integer: true,
            log: false,
            min: 1.0,
            max: 3.0,
            path: "x".into(),
        };
        let got: Vec<i64> = [0.0, 0.34, 0.67, 0.999]
            .iter()
            .map(|u| scale(&int, *u, false).as_integer().unwrap())
            .collect();
        assert_eq!(got, [1, 2, 3, 3]);
        // Log and integer: each integer's share of the unit interval is
        // its bin's share in log: from 1 to 1000, ln(9.5 / 0.5) / ln(1000.5
        // / 0.5) = 39% of the draws are below 10 (a linear spread: 0.9%).
        let log_int = SampledAxis {
            log: true,
            min: 1.0,
            max: 1000.0,
            ..int
        };
        let draws: Vec<i64> = (0..3000)
            .map(|i| scale(&log_int, (i as f64 + 0.5) / 3000.0, false))
            .map(|v| v.as_integer().unwrap())
            .collect();
        let below_10 = draws.iter().filter(|v| **v < 10).count();
        assert!(
            (1150..1175).contains(&below_10),
            "{below_10} of 3000 below 10"
        );
        // The ends are each as likely as their bins: 1 takes ln(1.5 / 0.5)
        // / ln(1000.5 / 0.5) = 14%, 1000 takes 0.001%.
        assert_eq!(draws.iter().filter(|v| **v == 1).count(), 434);
        assert_eq!(scale(&log_int, 0.999_999_9, false).as_integer(), Some(1000));
        // 1/2 of log(1000.5 / 0.5) above 0.5 is sqrt(1000.5 * 0.5) = 22.4.
        assert_eq!(scale(&log_int, 0.5, false).as_integer(), Some(22));
        // The Morris grid's ends are the axis's ends, its middle the
        // geometric mean rounded.
        let levels: Vec<i64> = [0.0, 0.5, 1.0]
            .iter()
            .map(|u| scale(&log_int, *u, true).as_integer().unwrap())
            .collect();
        assert_eq!(levels, [1, 32, 1000]);
    }
}
