//! A sweep's output read back: the manifest, the `runs` columns the
//! analysis needs (lazily, so other columns are never read), and each run's
//! position in the grid.

use crate::error::{IoError, LoadError};
use crate::manifest::Manifest;
use crate::sensitivity::Design;
use polars::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Columns every analysis needs besides the axes and the metrics.
const IDENTITY: &[&str] = &[
    "run_id",
    "run_index",
    "sample_index",
    "seed",
    "status",
    "window_start_s",
    "window_end_s",
];

/// Every tier has a `<tier>_max_queue` column: the tiers are read from it,
/// less the replicas' (`<tier>_r<k>_max_queue`, see [`is_replica`]).
const TIER_MARKER: &str = "_max_queue";

/// Whether `name` is replica `k` of one of `tiers` (`<tier>_r<k>`).
fn is_replica(name: &str, tiers: &[String]) -> bool {
    name.rsplit_once("_r").is_some_and(|(tier, k)| {
        !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) && tiers.iter().any(|t| t == tier)
    })
}

/// One dimension of the grid: an axis, or a zip group (paths moving together).
#[derive(Clone)]
pub struct Dim {
    /// The path, or the zip group's paths joined by `+`.
    pub name: String,
    pub paths: Vec<String>,
    /// Level labels, in grid order.
    pub labels: Vec<String>,
    /// The levels' values when the dimension is one numeric axis (every
    /// level a number); `None` for strings, zip groups and unbounded caps.
    pub values: Option<Vec<f64>>,
}

#[derive(Clone)]
pub struct Sweep {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub dims: Vec<Dim>,
    /// The runs, ordered by `run_index`.
    pub runs: DataFrame,
    /// For each run, its level position in each dimension.
    pub positions: Vec<Vec<usize>>,
    /// For each run, its seed: the `seed` column, or (output without one)
    /// the run's rank within its point, seeds being enumerated fastest.
    pub seeds: Vec<u64>,
    pub design: Design,
    /// Tier names, in chain order (from the metric columns).
    pub tiers: Vec<String>,
    /// The metrics the grid's `[report]` asks for besides the usual ones.
    pub report_metrics: Vec<String>,
    ok: Vec<bool>,
    /// Whether the grid has a trigger ([`Sweep::has_trigger`]), decided
    /// once at load.
    trigger: bool,
}

impl Sweep {
    pub fn load(dir: &Path) -> Result<Sweep, LoadError> {
        let err = |source: PolarsError| LoadError::Runs {
            dir: dir.to_path_buf(),
            source,
        };
        let manifest_path = dir.join("manifest.json");
        let text =
            std::fs::read_to_string(&manifest_path).map_err(|source| LoadError::ReadManifest {
                path: manifest_path.clone(),
                source,
            })?;
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|source| LoadError::ParseManifest {
                path: manifest_path.clone(),
                source,
            })?;
        let dim_paths = manifest.dimension_paths();
        // The committed parts themselves, not a pattern: `[`, `*` or `?` in
        // the directory's name would make a pattern match another's files.
        let runs = dir.join("runs");
        let parts = crate::part::list(&runs, ".parquet")
            .map_err(IoError::at(&runs))
            .map_err(LoadError::ListRuns)?;
        if parts.is_empty() {
            return Err(LoadError::NoRuns { dir: runs });
        }
        let paths = (parts.iter().map(|p| PlRefPath::try_from_path(p)))
            .collect::<PolarsResult<Vec<_>>>()
            .map_err(err)?;
        let args = ScanArgsParquet {
            glob: false,
            ..ScanArgsParquet::default()
        };
        let lazy = LazyFrame::scan_parquet_files(paths.into_iter().collect(), args).map_err(err)?;
        let schema = lazy.clone().collect_schema().map_err(err)?;
        let marked: Vec<String> = schema
            .iter_names()
            .filter_map(|n| n.strip_suffix(TIER_MARKER).map(str::to_string))
            .collect();
        let tiers: Vec<String> = (marked.iter())
            .filter(|n| !is_replica(n, &marked))
            .cloned()
            .collect();
        // Only what the report uses: a million runs stay small in memory.
        let axis_paths: Vec<&String> = dim_paths.iter().flatten().collect();
        let mut report_metrics = manifest.report.metrics.clone();
        // The metrics of the outcome PRIM looks for (validated by the grid).
        let names: Vec<&str> = schema.iter_names().map(|n| n.as_str()).collect();
        if let Some(Ok(outcome)) =
            (manifest.report.prim.as_ref()).map(|text| crate::outcome::Outcome::parse(text, &names))
        {
            report_metrics.extend(outcome.metrics().into_iter().map(str::to_string));
        }
        let metrics = crate::tables::metric_names(&tiers);
        let wanted = |n: &str| {
            IDENTITY.contains(&n)
                || metrics.iter().any(|m| m.as_str() == n)
                || axis_paths.iter().any(|p| p.as_str() == n)
                || report_metrics.iter().any(|m| m.as_str() == n)
                || manifest.report.reference.iter().any(|r| r.metric == n)
                || trigger_key(n).is_some()
                || n == "recovery_s"
                // Whether a run that did not recover was failing before its
                // trigger already (the why-not-recovered diagnosis).
                || n == "success_rate_before"
                || n == "recovery.threshold"
                // Whether the trigger cost any users at all ("In short").
                || n == "users_failed"
                // Whether a tier's adaptive limit acts (its plot over time).
                || (n.strip_suffix("_limit_lowest")).is_some_and(|t| tiers.iter().any(|x| x == t))
        };
        // Categorical columns (`status`, string axes) are read as their
        // text; with `[report] group`, the group's user-level metrics are
        // read under the run-wide names.
        let mut cols: Vec<Expr> = Vec::new();
        for (n, t) in schema.iter().filter(|(n, _)| wanted(n)) {
            let column = manifest.report.column_of(n);
            cols.push(match t {
                DataType::Categorical(..) => col(n.as_str()).cast(DataType::String),
                _ if column == n.as_str() => col(n.as_str()),
                _ if schema.contains(&column) => col(column).alias(n.as_str()),
                _ => {
                    return Err(LoadError::GroupColumn {
                        dir: dir.to_path_buf(),
                        group: manifest.report.group.clone().unwrap_or_default(),
                        column,
                    });
                }
            });
        }
        let runs = lazy
            .select(cols)
            .sort(["run_index"], SortMultipleOptions::default())
            .collect()
            .map_err(err)?;

        let mut dims = Vec::new();
        let mut positions = vec![Vec::new(); runs.height()];
        for paths in dim_paths {
            // A zip group labelled by `name` is known by its labels.
            let shown: Vec<String> = if paths.len() > 1 && paths.iter().any(|p| p == "name") {
                vec!["name".to_string()]
            } else {
                paths.clone()
            };
            let columns: Vec<&Column> = shown
                .iter()
                .map(|p| {
                    runs.column(p).map_err(|source| LoadError::AxisColumn {
                        dir: dir.to_path_buf(),
                        column: p.clone(),
                        source,
                    })
                })
                .collect::<Result<_, _>>()?;
            // A sampled design is one dimension with a level per design
            // row: the lookup must not grow with the number of levels.
            let mut labels: Vec<String> = Vec::new();
            let mut level_of: HashMap<String, usize> = HashMap::new();
            for (i, pos) in positions.iter_mut().enumerate() {
                let label = columns
                    .iter()
                    .map(|c| label(c, i))
                    .collect::<Vec<_>>()
                    .join(", ");
                let at = *level_of.entry(label).or_insert_with_key(|label| {
                    labels.push(label.clone());
                    labels.len() - 1
                });
                pos.push(at);
            }
            let values = match columns.as_slice() {
                [c] if c.dtype().is_primitive_numeric() => {
                    let mut v: Vec<Option<f64>> = vec![None; labels.len()];
                    let floats = c.cast(&DataType::Float64).ok();
                    if let Some(f) = floats.as_ref().and_then(|f| f.f64().ok()) {
                        for (row, pos) in positions.iter().enumerate() {
                            let at = pos[pos.len() - 1];
                            if v[at].is_none() {
                                v[at] = f.get(row);
                            }
                        }
                    }
                    v.into_iter().collect::<Option<Vec<f64>>>()
                }
                _ => None,
            };
            dims.push(Dim {
                name: shown.join("+"),
                paths,
                labels,
                values,
            });
        }
        let design = Design {
            axes: dims.iter().map(|d| d.name.clone()).collect(),
            levels: dims.iter().map(|d| d.labels.len()).collect(),
            values: dims.iter().map(|d| d.values.clone()).collect(),
        };
        let seeds = match runs
            .column("seed")
            .ok()
            .and_then(|c| c.cast(&DataType::UInt64).ok())
        {
            Some(c) if c.null_count() == 0 => c.u64().map_or_else(
                |_| Vec::new(),
                |s| s.iter().map(|v| v.unwrap_or(0)).collect(),
            ),
            _ => Vec::new(),
        };
        let seeds = if seeds.len() == runs.height() {
            seeds
        } else {
            let mut rank = vec![0u64; design.cells()];
            positions
                .iter()
                .map(|p| {
                    let c = design.cell_index(p);
                    rank[c] += 1;
                    rank[c] - 1
                })
                .collect()
        };
        let ok = match runs
            .column("status")
            .ok()
            .and_then(|c| c.str().ok().cloned())
        {
            Some(s) => s.iter().map(|v| v == Some("ok")).collect(),
            None => vec![false; runs.height()],
        };
        let mut sweep = Sweep {
            dir: dir.to_path_buf(),
            manifest,
            dims,
            runs,
            positions,
            seeds,
            design,
            tiers,
            report_metrics,
            ok,
            trigger: false,
        };
        sweep.trigger = sweep.any_trigger();
        Ok(sweep)
    }

    /// A metric per run as floats (`true` = 1); `None` for failed runs and
    /// undefined values; `None` overall when there is no such column.
    /// A metric's value in each run (null where the run has none). A run
    /// that cannot show recovery ([`Sweep::without_verdict`]) has no
    /// `recovered` and no `recovery_censored_s`: it neither recovered nor
    /// failed to.
    pub fn metric(&self, name: &str) -> Option<Vec<Option<f64>>> {
        let mut values = self.column(name)?;
        if matches!(name, "recovered" | "recovery_censored_s") {
            // Without a trigger there is nothing to recover from.
            if !self.has_trigger() {
                return Some(vec![None; values.len()]);
            }
            for run in self.without_verdict() {
                values[run] = None;
            }
        }
        Some(values)
    }

    /// Whether the grid has a trigger (a slow window, a load spike, an
    /// error or crash window) at all: some ok run's trigger span is not the
    /// `[0, 0)` of a scenario without one. Without one, recovery means
    /// nothing: no run has a verdict.
    pub fn has_trigger(&self) -> bool {
        self.trigger
    }

    fn any_trigger(&self) -> bool {
        let (Some(a), Some(b)) = (self.column("window_start_s"), self.column("window_end_s"))
        else {
            return false;
        };
        a.iter()
            .zip(&b)
            .zip(self.ok())
            .any(|((a, b), ok)| *ok && (a.unwrap_or(0.0) != 0.0 || b.unwrap_or(0.0) != 0.0))
    }

    /// What a plot title adds to say whose users it shows: the
    /// `[report] group`'s (`, group g's users`), or nothing.
    pub fn of_users(&self) -> String {
        (self.manifest.report.group.as_ref())
            .map_or(String::new(), |g| format!(", group {g}'s users"))
    }

    fn column(&self, name: &str) -> Option<Vec<Option<f64>>> {
        let c = self.runs.column(name).ok()?.cast(&DataType::Float64).ok()?;
        Some(c.f64().ok()?.iter().collect())
    }

    /// The runs that cannot show recovery ([`cannot_show_recovery`];
    /// failed runs have no metrics).
    pub fn without_verdict(&self) -> Vec<usize> {
        let (Some(recovered), Some(censored)) =
            (self.column("recovered"), self.column("recovery_censored_s"))
        else {
            return Vec::new();
        };
        (0..recovered.len())
            .filter(|&run| {
                (recovered[run].zip(censored[run]))
                    .is_some_and(|(r, c)| cannot_show_recovery(r != 0.0, c))
            })
            .collect()
    }

    pub fn cell(&self, run: usize) -> usize {
        self.design.cell_index(&self.positions[run])
    }

    /// The dimension that sets `path`.
    pub fn dim_of(&self, path: &str) -> Option<usize> {
        self.dims
            .iter()
            .position(|d| d.paths.iter().any(|p| p == path))
    }

    /// The levels a point spec names, `"path=level, path=level"` (as
    /// `[report] slices` and `[[report.reference]]` write them), as
    /// `(dimension, level)`; `None` if a pair names no axis or level.
    pub fn levels_of(&self, spec: &str) -> Option<Vec<(usize, usize)>> {
        spec.split(',')
            .map(|pair| {
                let (path, level) = pair.split_once('=')?;
                let d = self.dim_of(path.trim())?;
                let l = self.dims[d].labels.iter().position(|l| l == level.trim())?;
                Some((d, l))
            })
            .collect()
    }

    /// The sampled design's dimension (the grid's last), if it has `[sample]`.
    pub fn design_dim(&self) -> Option<usize> {
        self.manifest
            .design
            .as_ref()
            .and_then(|_| self.dims.len().checked_sub(1))
    }

    /// The sweep with its sampled design's dimension taken out: what the
    /// factorial sections read, each combination of the categorical axes
    /// being one point whose runs are its whole design (the sampled region).
    /// A design has a level per row (thousands): as a categorical axis it
    /// would make thousands of table rows, plot lines and index levels that
    /// say nothing the design's own indices do not. `None` without a design.
    pub fn without_design(&self) -> Option<Sweep> {
        let d = self.design_dim()?;
        let mut out = self.clone();
        out.dims.remove(d);
        for p in &mut out.positions {
            p.remove(d);
        }
        out.design = Design {
            axes: out.dims.iter().map(|d| d.name.clone()).collect(),
            levels: out.dims.iter().map(|d| d.labels.len()).collect(),
            values: out.dims.iter().map(|d| d.values.clone()).collect(),
        };
        Some(out)
    }

    /// Index of the dimension called `strategy`, if the grid varies it.
    pub fn strategy_dim(&self) -> Option<usize> {
        self.dims.iter().position(|d| d.name == "strategy")
    }

    /// `dim=label` for each (dimension, level position) pair, joined by `sep`.
    pub fn describe_levels(
        &self,
        levels: impl IntoIterator<Item = (usize, usize)>,
        sep: &str,
    ) -> String {
        levels
            .into_iter()
            .map(|(d, l)| format!("{}={}", self.dims[d].name, self.dims[d].labels[l]))
            .collect::<Vec<_>>()
            .join(sep)
    }

    /// Grid cell `cell` as `dim=label` for every dimension.
    pub fn describe_cell(&self, cell: usize) -> String {
        self.describe_levels(self.design.positions(cell).into_iter().enumerate(), " ")
    }

    /// Which runs ended with status `ok`.
    pub fn ok(&self) -> &[bool] {
        &self.ok
    }

    /// Each run's recovery threshold: the grid's, per point, or the
    /// scenario's (0.99 where neither says, as in manifests before it).
    pub fn recovery_thresholds(&self) -> Vec<f64> {
        let per_point = self.metric("recovery.threshold");
        (0..self.ok.len())
            .map(|run| {
                (per_point.as_ref())
                    .and_then(|t| t[run])
                    .or(self.manifest.recovery_threshold)
                    .unwrap_or(0.99)
            })
            .collect()
    }
}

/// A trigger's parameter column: `<tier>.slow[.<n>].<key>`,
/// `<tier>.errors[.<n>].<key>`, `<tier>.crash[.<n>].<key>`,
/// `<tier>.cache.flush_<key>` (capacity down or work up) or
/// `client.spike[.<n>].<key>` (load up) -> (the trigger's path prefix, is a
/// spike, key), for `key` one of `start_s`, `duration_s`, `factor`.
pub fn trigger_key(column: &str) -> Option<(&str, bool, &str)> {
    let (prefix, key) = column.rsplit_once('.')?;
    if let Some(key) = key.strip_prefix("flush_") {
        let tier_cache = prefix.strip_suffix(".cache").is_some_and(|t| !t.is_empty());
        return (tier_cache && ["start_s", "duration_s"].contains(&key))
            .then_some((prefix, false, key));
    }
    if !["start_s", "duration_s", "factor"].contains(&key) {
        return None;
    }
    let base = match prefix.rsplit_once('.') {
        Some((b, n)) if n.parse::<u32>().is_ok() => b,
        _ => prefix,
    };
    let window = [".slow", ".errors", ".crash"]
        .iter()
        .any(|w| base.ends_with(w) && base.len() > w.len());
    if base == "client.spike" {
        Some((prefix, true, key))
    } else if window {
        Some((prefix, false, key))
    } else {
        None
    }
}

/// The spelling of "no limit" wherever a person reads it (a null cap).
pub const UNBOUNDED: &str = "unbounded";

/// A number as a person reads it: integers without a decimal point
/// (`200`, not `200.0`), others as short as they are exact.
pub fn number(v: f64) -> String {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        exponent_form(v).unwrap_or_else(|| format!("{v}"))
    }
}

/// An extreme number in exponent form (`1e308`, `1e-320`), where the
/// plain form writes every digit (309 for 1e308); `None` for the others.
pub fn exponent_form(v: f64) -> Option<String> {
    (v != 0.0 && (v.abs() >= 1e15 || v.abs() < 1e-9)).then(|| format!("{v:e}"))
}

/// A level's label: the value as written, `unbounded` for a null cap.
pub(crate) fn label(c: &Column, row: usize) -> String {
    match c.get(row) {
        Ok(AnyValue::Null) => UNBOUNDED.to_string(),
        Ok(AnyValue::Float64(v)) => number(v),
        Ok(AnyValue::Float32(v)) => number(v as f64),
        Ok(AnyValue::String(s)) => s.to_string(),
        Ok(AnyValue::StringOwned(s)) => s.to_string(),
        Ok(v) => v.to_string(),
        Err(_) => "?".to_string(),
    }
}

/// Whether a run with this `recovered` and `recovery_censored_s` could
/// not show recovery: its trigger ends less than a recovery window before
/// its arrivals end, or no user arrives in any window after it, so no
/// window is judged (R2). The censored time of a run not recovered is the
/// last window start minus the trigger's end, plus 1 s, clamped at 0: at
/// least 1 s exactly when a window with users fits (0 without one).
pub fn cannot_show_recovery(recovered: bool, censored_s: f64) -> bool {
    !recovered && censored_s < 1.0
}

#[cfg(test)]
mod tests {
    use super::{number, trigger_key};

    /// Whole numbers without a point, others as short as exact, and the
    /// extremes in exponent form, not hundreds of digits.
    #[test]
    fn numbers_read_as_written() {
        let shown: Vec<String> = [200.0, 0.25, 1e-7, 1e308, 1e-320, -2.5e20, f64::INFINITY]
            .into_iter()
            .map(number)
            .collect();
        assert_eq!(
            shown,
            [
                "200",
                "0.25",
                "0.0000001",
                "1e308",
                "1e-320",
                "-2.5e20",
                "inf"
            ]
        );
    }

    #[test]
    fn every_kind_of_trigger_window_is_known_by_its_columns() {
        let cases = [
            (
                "svc_b.slow.duration_s",
                Some(("svc_b.slow", false, "duration_s")),
            ),
            (
                "svc_b.slow.1.start_s",
                Some(("svc_b.slow.1", false, "start_s")),
            ),
            (
                "db.errors.duration_s",
                Some(("db.errors", false, "duration_s")),
            ),
            ("db.crash.2.start_s", Some(("db.crash.2", false, "start_s"))),
            (
                "db.cache.flush_duration_s",
                Some(("db.cache", false, "duration_s")),
            ),
            (
                "client.spike.factor",
                Some(("client.spike", true, "factor")),
            ),
            ("db.cache.hit_latency_s", None),
            ("db.cache.flush_p", None),
            (".slow.duration_s", None),
            ("svc_b.service.mean_s", None),
        ];
        for (column, want) in cases {
            assert_eq!(trigger_key(column), want, "{column}");
        }
    }
}
