//! Grid files: parsing, validation of every point before anything runs, and
//! the fixed enumeration of runs that resuming and sharding rely on.
//!
//! Enumeration: points are the full-factorial product of the `[axes]` (in
//! file order) and the `[[zip]]` groups (each one dimension), the last
//! varying fastest; run `i` is point `i / seeds` with seed `i % seeds`.

use crate::axis_range;
use crate::design;
use crate::error::{GridError, GridErrors};
pub use analysis::manifest::ReportOptions;
use analysis::manifest::{Reference, SampleDesign};
use sha2::{Digest, Sha256};
use sim_core::params::{self, Kind, Serialized};
use sim_core::{ConfigError, Scenario, ValidScenario};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use thread_local::ThreadLocal;
use toml::Value;

/// A grid file's tables, each read on its own so that every problem of
/// the file is reported at once (serde would stop at the first).
struct GridFile {
    /// `None` when missing or not a string (already reported).
    name: Option<String>,
    scenario: Option<String>,
    seeds: Option<Seeds>,
    /// `seeds` is in the file (it may be `None` for a wrong type).
    seeds_given: bool,
    set: toml::Table,
    axes: toml::Table,
    zip: Vec<toml::Table>,
    report: ReportOptions,
    sample: Option<Value>,
}

/// The keys of a grid file, in the order the docs give them.
const GRID_KEYS: [&str; 8] = [
    "name", "scenario", "seeds", "set", "axes", "zip", "report", "sample",
];

impl GridFile {
    /// Reads each key of the document into its type; a key that is
    /// missing, unknown or of the wrong type is a problem of its own, and
    /// the others are read as if it were absent.
    fn read(mut doc: toml::Table, file: &Path) -> (GridFile, Vec<GridError>) {
        let mut errors = Vec::new();
        let mut invalid = |key: &str, reason: String| {
            errors.push(GridError::Invalid {
                file: file.to_path_buf(),
                key: key.to_string(),
                reason,
            })
        };
        for key in doc.keys().filter(|k| !GRID_KEYS.contains(&k.as_str())) {
            let hint = sim_core::params::closest(key, GRID_KEYS)
                .map(|k| format!("did you mean `{k}`? "))
                .unwrap_or_default();
            invalid(
                key,
                format!(
                    "unknown key; {hint}a grid has {} (parameters go under [set] or [axes])",
                    GRID_KEYS.join(", ")
                ),
            );
        }
        let mut take = |key: &str| -> Option<Value> { doc.remove(key) };
        fn typed<T: serde::de::DeserializeOwned>(
            key: &str,
            value: Option<Value>,
            invalid: &mut impl FnMut(&str, String),
        ) -> Option<T> {
            value.and_then(|v| {
                let shown = v.to_string();
                v.try_into()
                    .map_err(|e: toml::de::Error| {
                        // The value when it is short enough to read in a line.
                        let at = if shown.len() <= 60 {
                            format!("{key} = {shown}")
                        } else {
                            key.to_string()
                        };
                        invalid(&at, e.message().to_string())
                    })
                    .ok()
            })
        }
        let (name, scenario) = (take("name"), take("scenario"));
        let (seeds, set, axes) = (take("seeds"), take("set"), take("axes"));
        let (zip, report, sample) = (take("zip"), take("report"), take("sample"));
        let mut required = |key: &str, v: Option<Value>| {
            if v.is_none() {
                invalid(key, "missing".into());
            }
            typed::<String>(key, v, &mut invalid)
        };
        let name = required("name", name);
        let scenario = required("scenario", scenario);
        let grid = GridFile {
            name,
            scenario,
            seeds_given: seeds.is_some(),
            seeds: seeds.and_then(|v| read_seeds(v, &mut invalid)),
            set: typed("set", set, &mut invalid).map_or_else(Default::default, dotted_paths),
            axes: typed("axes", axes, &mut invalid).map_or_else(Default::default, dotted_paths),
            zip: typed::<Vec<toml::Table>>("zip", zip, &mut invalid)
                .unwrap_or_default()
                .into_iter()
                .map(dotted_paths)
                .collect(),
            report: report.map_or_else(ReportOptions::default, |r| {
                let (options, problems) = read_report(&r);
                for (key, reason) in problems {
                    invalid(&key, reason);
                }
                options
            }),
            sample,
        };
        (grid, errors)
    }
}

/// Paths written as TOML dotted keys, `svc_b.queue_cap = 10` without the
/// quotes, which TOML reads as a table `svc_b = { queue_cap = 10 }`, as
/// the paths they spell: a key that is no parameter and holds a table is
/// that table's keys under it (no parameter takes a table), unless it is
/// an axis's range or sampled interval (of a misspelt parameter, then:
/// named as written).
fn dotted_paths(table: toml::Table) -> toml::Table {
    fn under(prefix: &str, table: toml::Table, paths: &mut toml::Table) {
        for (key, value) in table {
            let path = format!("{prefix}{key}");
            match value {
                Value::Table(inner)
                    if params::param_of(&path).is_none()
                        && !design::is_sampled(&inner)
                        && !axis_range::is_range(&inner) =>
                {
                    under(&format!("{path}."), inner, paths)
                }
                value => {
                    paths.insert(path, value);
                }
            }
        }
    }
    let mut paths = toml::Table::new();
    under("", table, &mut paths);
    paths
}

/// `table.key` as `of` reads it; a value it cannot read is a problem
/// (key, reason) naming what the key takes.
pub fn field<T>(
    t: &toml::Table,
    table: &str,
    key: &str,
    takes: &str,
    of: impl Fn(&Value) -> Option<T>,
    errors: &mut Vec<(String, String)>,
) -> Option<T> {
    let v = t.get(key)?;
    let read = of(v);
    if read.is_none() {
        errors.push((
            format!("{table}.{key}"),
            format!("must be {takes}, got {v}"),
        ));
    }
    read
}

/// A TOML integer or finite float as a number.
pub fn finite_number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(x) if x.is_finite() => Some(*x),
        _ => None,
    }
}

/// The faults among `faults`, each once, joined: every key of a table
/// refused for its type, said at once rather than the first alone.
pub fn joined_faults<'a>(faults: impl IntoIterator<Item = Option<&'a String>>) -> String {
    let mut told: Vec<&str> = Vec::new();
    for fault in faults.into_iter().flatten() {
        if !told.contains(&fault.as_str()) {
            told.push(fault);
        }
    }
    told.join("; ")
}

/// Unknown keys of `table` (one of `known`) as problems (key, reason).
pub fn unknown_keys(
    t: &toml::Table,
    table: &str,
    known: &[&str],
    errors: &mut Vec<(String, String)>,
) {
    for key in t.keys().filter(|k| !known.contains(&k.as_str())) {
        let hint = sim_core::params::closest(key, known.iter().copied())
            .map(|k| format!("did you mean `{k}`? "))
            .unwrap_or_default();
        errors.push((
            format!("{table}.{key}"),
            format!("unknown key; {hint}[{table}] takes {}", known.join(", ")),
        ));
    }
}

/// `[report]`'s keys, in the order the docs give them.
const REPORT_KEYS: [&str; 9] = [
    "metrics",
    "heatmap_x",
    "heatmap_y",
    "panels",
    "slices",
    "group",
    "prim",
    "reference_source",
    "reference",
];

/// A `[[report.reference]]`'s keys.
const REFERENCE_KEYS: [&str; 4] = ["point", "metric", "published", "note"];

/// `[report]` read key by key, every problem as (key, reason); a key
/// with a problem is read as absent.
fn read_report(value: &Value) -> (ReportOptions, Vec<(String, String)>) {
    let mut errors = Vec::new();
    let Value::Table(t) = value else {
        errors.push((
            "report".into(),
            format!("must be a table ([report] with metrics, heatmap_x, ...), got {value}"),
        ));
        return (ReportOptions::default(), errors);
    };
    unknown_keys(t, "report", &REPORT_KEYS, &mut errors);
    let text = |v: &Value| v.as_str().map(str::to_string);
    let texts = |v: &Value| {
        (v.as_array()?.iter())
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<Vec<String>>>()
    };
    let string = "a string";
    let axis = "an axis's path, as a string";
    let mut options = ReportOptions {
        heatmap_x: field(t, "report", "heatmap_x", axis, text, &mut errors),
        heatmap_y: field(t, "report", "heatmap_y", axis, text, &mut errors),
        panels: field(t, "report", "panels", axis, text, &mut errors),
        group: field(
            t,
            "report",
            "group",
            "a client group's name, as a string",
            text,
            &mut errors,
        ),
        metrics: field(
            t,
            "report",
            "metrics",
            "a list of metric names (strings)",
            texts,
            &mut errors,
        )
        .unwrap_or_default(),
        slices: field(
            t,
            "report",
            "slices",
            "a list of strings, each \"path=level, path=level\"",
            texts,
            &mut errors,
        )
        .unwrap_or_default(),
        prim: field(
            t,
            "report",
            "prim",
            "an outcome, as a string (e.g. \"not recovered\")",
            text,
            &mut errors,
        ),
        reference_source: field(t, "report", "reference_source", string, text, &mut errors),
        reference: Vec::new(),
    };
    let tables = |v: &Value| {
        v.as_array()?
            .iter()
            .map(|x| x.as_table().cloned())
            .collect::<Option<Vec<_>>>()
    };
    let entries = field(
        t,
        "report",
        "reference",
        "[[report.reference]] tables",
        tables,
        &mut errors,
    );
    for (i, r) in entries.unwrap_or_default().iter().enumerate() {
        let key = format!("report.reference[{i}]");
        unknown_keys(r, &key, &REFERENCE_KEYS, &mut errors);
        let point = field(
            r,
            &key,
            "point",
            "a string \"path=level, path=level\"",
            text,
            &mut errors,
        );
        let metric = field(
            r,
            &key,
            "metric",
            "a metric's name, as a string",
            text,
            &mut errors,
        );
        let published = field(r, &key, "published", "a number", finite_number, &mut errors);
        let note = field(r, &key, "note", string, text, &mut errors);
        if let Some(reason) = (note.as_deref()).and_then(|n| unfit_label(n, "a note is a cell")) {
            errors.push((format!("{key}.note"), reason));
        }
        for required in ["point", "metric", "published"] {
            if !r.contains_key(required) {
                errors.push((format!("{key}.{required}"), "missing".into()));
            }
        }
        // Kept with its point and metric whatever else is wrong with it,
        // so that those are checked too (a grid with any problem is
        // refused, whatever its report options hold).
        if let (Some(point), Some(metric)) = (point, metric) {
            options.reference.push(Reference {
                point,
                metric,
                published: published.unwrap_or(f64::NAN),
                note: note.unwrap_or_default(),
            });
        }
    }
    (options, errors)
}

/// `seeds = [1, 2, 7]` or `seeds = { first = 1, count = 20 }`.
#[derive(Debug)]
enum Seeds {
    List(Vec<u64>),
    Range { first: u64, count: u64 },
}

/// The seeds a grid's text plans at every point: its `seeds`, or 1 to
/// `sample.replicates` for a sampled design (`None` where the text says
/// neither readably: a manifest written by another version).
pub fn planned_seeds(text: &str) -> Option<Vec<u64>> {
    let doc: toml::Table = text.parse().ok()?;
    if let Some(replicates) =
        (doc.get("sample").and_then(|s| s.get("replicates"))).and_then(Value::as_integer)
    {
        return Some((1..=u64::try_from(replicates).ok()?).collect());
    }
    match read_seeds(doc.get("seeds")?.clone(), &mut |_, _| {})? {
        Seeds::List(list) => Some(list),
        Seeds::Range { first, count } => Some((0..count).map(|i| first + i).collect()),
    }
}

/// The grid's `seeds`, each wrong part named on its own (the element of a
/// list, the key of a range), which an untagged serde enum cannot do.
fn read_seeds(value: Value, invalid: &mut impl FnMut(&str, String)) -> Option<Seeds> {
    let seed = |v: &Value| v.as_integer().and_then(|i| u64::try_from(i).ok());
    match value {
        Value::Array(items) => {
            let mut list = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match seed(item) {
                    Some(s) => list.push(s),
                    None => invalid(
                        &format!("seeds[{i}]"),
                        format!("a seed is an integer >= 0, got {item}"),
                    ),
                }
            }
            (list.len() == items.len()).then_some(Seeds::List(list))
        }
        Value::Table(t) => {
            const KEYS: [&str; 2] = ["first", "count"];
            let mut ok = true;
            for key in t.keys().filter(|k| !KEYS.contains(&k.as_str())) {
                ok = false;
                let hint = sim_core::params::closest(key, KEYS)
                    .map_or(String::new(), |k| format!("did you mean `{k}`? "));
                invalid(
                    &format!("seeds.{key}"),
                    format!("unknown key; {hint}a range of seeds is {{ first = 1, count = 20 }}"),
                );
            }
            let mut get = |key: &str| {
                let got = match t.get(key) {
                    None => {
                        Err("missing: a range of seeds is { first = 1, count = 20 }".to_string())
                    }
                    Some(v) => seed(v).ok_or(format!("must be an integer >= 0, got {v}")),
                };
                got.map_err(|reason| invalid(&format!("seeds.{key}"), reason))
                    .ok()
            };
            let (first, count) = (get("first"), get("count"));
            match (first, count) {
                (Some(first), Some(count)) if ok => Some(Seeds::Range { first, count }),
                _ => None,
            }
        }
        other => {
            invalid(
                &format!("seeds = {other}"),
                "expected a list of seeds (integers >= 0, e.g. [1, 2, 7]) or { first = 1, count = 20 }".into(),
            );
            None
        }
    }
}

/// One dimension of the grid: a single axis, or a zip group whose paths
/// move together.
#[derive(Clone, Debug)]
pub struct Dimension {
    pub paths: Vec<String>,
    /// `levels[i][j]` is the value of `paths[j]` at position `i`.
    pub levels: Vec<Vec<Value>>,
}

impl Dimension {
    pub fn is_zip(&self) -> bool {
        self.paths.len() > 1
    }
}

/// The points [`Grid::validate_points`] checks: the grid's, or what is left
/// of it without the values already refused (whose point numbers are not
/// the grid's, and where a key may be idle only for want of a refused
/// value, so idle keys are not refused there).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Points {
    AsGiven,
    WithoutRefused,
}

/// A validated grid, ready to enumerate.
pub struct Grid {
    pub name: String,
    pub path: PathBuf,
    pub text: String,
    pub sha256: String,
    /// The built-in name, or the scenario file's path as resolved.
    pub scenario_ref: String,
    /// Identifies the base scenario's content: the built-in name, or the
    /// file's SHA-256 (with the load profile it reads from a CSV file).
    pub scenario_id: String,
    /// The scenario file's text (empty for a built-in), kept in the
    /// manifest so that an edit of it can be told key by key.
    pub scenario_text: String,
    /// The load profiles the scenario file reads from CSV files, as they
    /// enter its id (empty when it reads none).
    scenario_profiles: String,
    pub base: Scenario,
    pub seeds: Vec<u64>,
    pub fixed: Vec<(String, Value)>,
    pub dimensions: Vec<Dimension>,
    pub report: ReportOptions,
    /// The sampled design (`[sample]`): the last of `dimensions`, whose
    /// positions are the design's rows (`sample_index`).
    pub design: Option<SampleDesign>,
    /// How many points were resolved and validated at load (all of them,
    /// unless loaded with a sample by [`Grid::load_overridden`]).
    pub points_checked: u64,
    /// The point whose run has the largest memory estimate
    /// ([`sim_core::estimated_peak_bytes`]) among those checked, and the
    /// estimate in bytes.
    pub largest_run: (u64, u64),
    /// The metrics of the runs table: those of every point checked, in the
    /// first point's order with the others' extra ones beside their
    /// neighbours (a point with more replicas has per-replica metrics, and
    /// its callers ejection counts, that the first point may not have).
    pub metrics: Vec<sim_core::Metric>,
    /// The expected users of each point (at least 1; 1 for an invalid
    /// one), when validation built every point; else empty.
    pub point_users: Vec<f64>,
    /// Each thread's last point and its scenario, for
    /// [`Grid::with_scenario`].
    last_point: ThreadLocal<RefCell<Option<LastPoint>>>,
    /// Each thread's base scenario with a strategy's preset applied (or
    /// none), serialized, by name, for [`Grid::scenario`].
    presets: ThreadLocal<RefCell<Vec<WithPreset>>>,
}

/// The report table's metric names (`metrics`, each reference's metric,
/// the PRIM outcome) against the runs table's metrics `schema`, and each
/// reference's point and slice against the axes (`design`: the last
/// dimension is a sampled design).
fn report_errors(
    file: &Path,
    report: &ReportOptions,
    schema: &[sim_core::Metric],
    dimensions: &[Dimension],
    design: bool,
) -> Vec<GridError> {
    let invalid = |key: &str, reason: String| GridError::Invalid {
        file: file.to_path_buf(),
        key: key.to_string(),
        reason,
    };
    let mut errors = Vec::new();
    for (i, m) in report.metrics.iter().enumerate() {
        if report.metrics[..i].contains(m) {
            errors.push(invalid(
                "report.metrics",
                format!("`{m}` is listed twice: each metric has one row in the report's tables"),
            ));
        } else if !schema.iter().any(|s| s.name == *m) {
            let hint = sim_core::params::closest(m, schema.iter().map(|s| s.name.as_str()))
                .map_or(String::new(), |k| format!("; did you mean `{k}`?"));
            errors.push(invalid(
                "report.metrics",
                format!("`{m}` is not a metric of this scenario{hint}"),
            ));
        }
    }
    for (i, r) in report.reference.iter().enumerate() {
        let key = format!("report.reference[{i}]");
        if !schema.iter().any(|s| s.name == r.metric) {
            let hint = sim_core::params::closest(&r.metric, schema.iter().map(|s| s.name.as_str()))
                .map_or(String::new(), |k| format!("; did you mean `{k}`?"));
            errors.push(invalid(
                &format!("{key}.metric"),
                format!("`{}` is not a metric of this scenario{hint}", r.metric),
            ));
        }
        for reason in point_errors(&r.point, dimensions, design) {
            errors.push(invalid(&format!("{key}.point"), reason));
        }
    }
    for (i, slice) in report.slices.iter().enumerate() {
        for reason in point_errors(slice, dimensions, design) {
            errors.push(invalid(&format!("report.slices[{i}]"), reason));
        }
    }
    if let Some(g) = &report.group {
        let groups: Vec<&str> = (schema.iter())
            .filter_map(|s| s.name.strip_prefix("group_")?.strip_suffix("_recovered"))
            .collect();
        if !groups.contains(&g.as_str()) {
            let reason = if groups.is_empty() {
                format!(
                    "`{g}`: this scenario has one client group, whose users the report is about already"
                )
            } else {
                let hint = sim_core::params::closest(g, groups.iter().copied())
                    .map_or(String::new(), |k| format!("; did you mean `{k}`?"));
                format!(
                    "`{g}` is not a client group of this scenario (its groups: {}){hint}",
                    groups.join(", ")
                )
            };
            errors.push(invalid("report.group", reason));
        }
    }
    if let Some(text) = &report.prim {
        let names: Vec<&str> = schema.iter().map(|s| s.name.as_str()).collect();
        if let Err(e) = analysis::outcome::Outcome::parse(text, &names) {
            let hints: Vec<String> = match &e {
                analysis::outcome::OutcomeError::UnknownMetrics(unknown) => (unknown.iter())
                    .filter_map(|m| {
                        let k = sim_core::params::closest(m, names.iter().copied())?;
                        Some(match unknown.len() {
                            1 => format!("`{k}`"),
                            _ => format!("`{k}` for `{m}`"),
                        })
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let hint = if hints.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", hints.join(", "))
            };
            // A text too long to quote is named by its length.
            let shown = if text.chars().count() > 200 {
                format!("({} characters)", text.chars().count())
            } else {
                format!("`{text}`")
            };
            errors.push(invalid("report.prim", format!("{shown}: {e}{hint}")));
        }
    }
    errors
}

/// What validating a grid's points found, when they are valid: the
/// fields of [`Grid`] of the same names.
struct Checked {
    points: u64,
    largest_run: (u64, u64),
    metrics: Vec<sim_core::Metric>,
    /// Every point's expected users, when every point was checked.
    users: Vec<f64>,
}

/// Counts `(point, cause, points)` into `inert`, by the cause's path: the
/// first point that showed it, and at how many points.
fn count_inert(inert: &mut Vec<(u64, ConfigError, u64)>, (i, cause, n): (u64, ConfigError, u64)) {
    match inert.iter_mut().find(|(_, c, _)| c.path == cause.path) {
        Some((_, _, total)) => *total += n,
        None => inert.push((i, cause, n)),
    }
}

/// Adds to `union` the metrics of `more` it lacks, each after the metric
/// that precedes it in `more` (so that a tier's per-replica metrics join
/// the tier's), keeping `union`'s order.
fn merge_metrics(union: &mut Vec<sim_core::Metric>, more: Vec<sim_core::Metric>) {
    if union.len() == more.len() && union.iter().zip(&more).all(|(a, b)| a.name == b.name) {
        return;
    }
    let mut at = 0;
    for m in more {
        match union.iter().position(|u| u.name == m.name) {
            Some(i) => at = i + 1,
            None => {
                union.insert(at, m);
                at += 1;
            }
        }
    }
}

/// `path` as the grid document spells the same parameter in `[set]`,
/// `[axes]` or a `[[zip]]` (`svc_b.slow.0.start_s` for
/// `svc_b.slow.start_s`), so that a flag replaces it; else as given.
fn spelled_as_in(doc: &toml::Table, path: &str) -> String {
    let canonical = sim_core::params::canonical(path);
    let tables = ["set", "axes"].iter().filter_map(|t| doc.get(*t));
    let zips = doc
        .get("zip")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    (tables.chain(zips))
        .filter_map(Value::as_table)
        .flat_map(|t| t.keys())
        .find(|k| sim_core::params::canonical(k) == canonical)
        .map_or_else(|| path.to_string(), String::clone)
}

/// Whether `a` and `b`, the values of flattened grid key `key`, set the
/// same thing: a parameter's values in canonical form (`9` and `9.0` of a
/// float are one value, and one run id), any other key's as written.
fn same_setting(key: &str, a: &Value, b: &Value) -> bool {
    let path = ["set.", "axes."]
        .iter()
        .find_map(|t| key.strip_prefix(t))
        .map(|p| p.trim_matches('"'));
    let Some(path) = path else {
        return a == b;
    };
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(v, w)| canonical(path, v) == canonical(path, w))
        }
        _ => canonical(path, a) == canonical(path, b),
    }
}

/// What is wrong with a point as `[report] slices` and
/// `[[report.reference]]` name one, `path=level, path=level`: each pair
/// must name an axis and one of its levels, as the report labels them (a
/// zip group's level by its name; a sampled design's levels are not
/// named).
fn point_errors(spec: &str, dimensions: &[Dimension], design: bool) -> Vec<String> {
    let listed = &dimensions[..dimensions.len() - usize::from(design)];
    let mut errors = Vec::new();
    for pair in spec.split(',') {
        let Some((path, level)) = pair.split_once('=').map(|(p, l)| (p.trim(), l.trim())) else {
            errors.push(format!("`{}` is not `path=level`", pair.trim()));
            continue;
        };
        let Some(d) = dimensions
            .iter()
            .position(|d| d.paths.iter().any(|a| a == path))
        else {
            errors.push(format!("`{path}` is not a path of this grid's axes"));
            continue;
        };
        let Some(d) = listed.get(d) else {
            continue;
        };
        let column = match d.paths.iter().position(|p| p == "name") {
            Some(name) => name,
            None if d.paths.len() == 1 => 0,
            // Labelled by all its values together: not one path's.
            None => continue,
        };
        if d.paths[column] != path {
            errors.push(format!(
                "`{path}` is zipped with `name`: its levels are named by `name` (e.g. `name={}`)",
                level_label(path, &d.levels[0][column])
            ));
            continue;
        }
        let labels: Vec<String> = (d.levels.iter())
            .map(|l| level_label(path, &l[column]))
            .collect();
        if !labels.iter().any(|l| l == level) {
            errors.push(format!(
                "`{level}` is not a level of `{path}` (its levels: {})",
                labels.join(", ")
            ));
        }
    }
    errors
}

/// A level as the report labels it: the value as written, whole numbers
/// without a decimal point, `unbounded` for a cap without a bound.
fn level_label(path: &str, v: &Value) -> String {
    match v {
        Value::String(_) if canonical(path, v) == "\"unbounded\"" => {
            analysis::load::UNBOUNDED.to_string()
        }
        Value::String(s) => s.clone(),
        Value::Float(x) => analysis::load::number(*x),
        other => other.to_string(),
    }
}

/// Why `label` (a zip group's `name`, a strategy, a reference's note)
/// cannot stand in a cell of the report's Markdown tables and plot
/// legends, if it cannot: a `|` or a backtick would break a table's row,
/// a line break the table. `what` says what it is there.
fn unfit_label(label: &str, what: &str) -> Option<String> {
    let bad = label
        .chars()
        .find(|c| *c == '|' || *c == '`' || c.is_control())?;
    Some(format!(
        "{what} in the report's tables: it may not hold {}",
        match bad {
            '|' => "`|`".to_string(),
            '`' => "a backtick".to_string(),
            c => format!("a control character ({:?})", c),
        }
    ))
}

/// A point's overrides and the scenario they give.
type LastPoint = (Vec<(String, Value)>, ValidScenario);

/// A preset's name (`None`: no preset) and the base scenario with it
/// applied, serialized (`None`: refused).
type WithPreset = (Option<String>, Option<Serialized>);

/// Whether two points' overrides are the same, floats bit for bit: `==`
/// would take the levels `0.0` and `-0.0`, two points of a grid, for one.
fn same_overrides(a: &[(String, Value)], b: &[(String, Value)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((p, v), (q, w))| p == q && same_value(v, w))
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_value(v, w))
        }
        (Value::Table(x), Value::Table(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((p, v), (q, w))| p == q && same_value(v, w))
        }
        _ => a == b,
    }
}

/// Every column that identifies a point: fixed overrides, then axes.
#[derive(Clone, Debug)]
pub struct PointColumn {
    pub path: String,
    pub kind: Kind,
}

/// The most runs (points x seeds) a grid may have. Every index of the
/// enumeration is a `u64`, and a sweep keeps its shard's run indexes and
/// done run ids in memory (tens of bytes each): 10^8 runs is a few GB at
/// most and days of CPU; a larger study is several grids.
pub const MAX_RUNS: u64 = 100_000_000;

/// How many points `sweep plan` resolves and validates (spread over the
/// grid) when the grid has more; `sweep run` validates every point.
pub const PLAN_SAMPLE: u64 = 500;

/// The `runs` column (and point override, never applied to the scenario)
/// that numbers a sampled design's rows in SALib's order.
pub const SAMPLE_INDEX: &str = "sample_index";

/// Overrides of a grid on the command line (Hydra's convention): the grid
/// they give is a grid of its own, with its own fingerprint and point ids.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Overrides {
    /// Fix a parameter for every run, like the grid's [set] (replaces the
    /// path's value there, or its axis); repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Add an axis, or replace the path's axis (or [set] value), with these
    /// levels: `strategy=naive,protected`, a TOML list, or a range with an
    /// inclusive stop, `svc_a.attempt_timeout_s={start=0.5,stop=2,step=0.5}` or
    /// `client.rate_per_s={start=100,stop=1000,num=4,log=true}` (exact
    /// decimals; integer parameters stay integers); repeatable.
    #[arg(long = "axis", value_name = "PATH=A,B,...")]
    pub axes: Vec<String>,
}

impl Overrides {
    /// The flags again, shell-quoted, each with a leading space (for the
    /// commands a message suggests).
    pub fn as_args(&self) -> String {
        let quote = |s: &str| crate::slurm::shell_quote(s);
        let sets = self.sets.iter().map(|s| format!(" --set {}", quote(s)));
        let axes = self.axes.iter().map(|a| format!(" --axis {}", quote(a)));
        sets.chain(axes).collect()
    }

    /// How a flag typed `value` of `path`, where its parsed form reads
    /// otherwise: past a float's range, `1e400` parses to infinity and
    /// `1e-400` to 0, and `fastest` is the string `"fastest"`; the user
    /// should see what they typed.
    fn typed(&self, path: &str, value: &Value) -> Option<String> {
        let canonical = sim_core::params::canonical(path);
        (self.sets.iter().chain(&self.axes))
            .filter_map(|a| a.split_once('='))
            .filter(|(p, _)| sim_core::params::canonical(p.trim()) == canonical)
            .flat_map(|(_, levels)| levels.split(',').map(str::trim))
            .find(|t| sim_core::parse_value(t) == *value)
            .filter(|t| *t != sim_core::params::show(value))
            .map(str::to_string)
    }

    /// Applies the overrides to a grid document: `--set` moves the path to
    /// `[set]`, `--axis` replaces its axis in place or adds one at the end
    /// of `[axes]`. Returns which flag gave each path applied, and the
    /// problems of those that could not be.
    fn apply(&self, doc: &mut toml::Table) -> (Vec<(String, &'static str)>, Vec<GridError>) {
        let mut errors = Vec::new();
        let mut given: Vec<(String, &'static str, Value)> = Vec::new();
        let flag_error = |flag, arg: &str, reason: String| GridError::Flag {
            flag,
            arg: arg.to_string(),
            reason,
        };
        let args = self
            .sets
            .iter()
            .map(|a| ("--set", a))
            .chain(self.axes.iter().map(|a| ("--axis", a)));
        for (flag, arg) in args {
            let Some((path, value)) = arg.split_once('=').filter(|(p, _)| !p.trim().is_empty())
            else {
                let example = if flag == "--set" {
                    "PATH=VALUE (e.g. svc_b.queue_cap=32)"
                } else {
                    "PATH=A,B,... (e.g. svc_b.queue_cap=16,64,unbounded)"
                };
                errors.push(flag_error(flag, arg, format!("expected {example}")));
                continue;
            };
            let (path, value) = (spelled_as_in(doc, path.trim()), value.trim());
            let value = if flag == "--set" {
                sim_core::parse_value(value)
            } else if value.starts_with('{') {
                match sim_core::parse_value(value) {
                    Value::Table(range) if crate::axis_range::is_range(&range) => {
                        Value::Table(range)
                    }
                    _ => {
                        errors.push(flag_error(
                            flag,
                            arg,
                            "expected a range {start=A,stop=B,step=S} or {start=A,stop=B,num=N,log=true} (TOML inline table)".into(),
                        ));
                        continue;
                    }
                }
            } else if value.starts_with('[') {
                match sim_core::parse_value(value) {
                    Value::Array(levels) if !levels.is_empty() => Value::Array(levels),
                    _ => {
                        errors.push(flag_error(
                            flag,
                            arg,
                            "expected a non-empty TOML list of levels".into(),
                        ));
                        continue;
                    }
                }
            } else {
                let levels: Vec<&str> = value.split(',').map(str::trim).collect();
                if levels.iter().any(|l| l.is_empty()) {
                    errors.push(flag_error(
                        flag,
                        arg,
                        "empty level: give the levels separated by commas".into(),
                    ));
                    continue;
                }
                Value::Array(levels.into_iter().map(sim_core::parse_value).collect())
            };
            let canonical = sim_core::params::canonical(&path);
            if given
                .iter()
                .any(|(p, _, _)| sim_core::params::canonical(p) == canonical)
            {
                errors.push(flag_error(
                    flag,
                    arg,
                    format!("`{path}` is given more than once on the command line"),
                ));
                continue;
            }
            let zipped = doc.get("zip").and_then(Value::as_array).and_then(|zips| {
                zips.iter()
                    .position(|z| z.as_table().is_some_and(|t| t.contains_key(&path)))
            });
            if let Some(z) = zipped {
                errors.push(flag_error(
                    flag,
                    arg,
                    format!(
                        "`{path}` moves with other paths in the grid's zip[{z}]; change it in the grid file"
                    ),
                ));
                continue;
            }
            given.push((path, flag, value));
        }
        for (path, flag, _) in &given {
            let other = if *flag == "--set" { "axes" } else { "set" };
            if let Some(t) = doc.get_mut(other).and_then(Value::as_table_mut) {
                t.remove(path);
            }
        }
        for (path, flag, value) in &given {
            let name = if *flag == "--set" { "set" } else { "axes" };
            let t = doc
                .entry(name)
                .or_insert_with(|| Value::Table(toml::Table::new()));
            match t.as_table_mut() {
                Some(t) => {
                    t.insert(path.clone(), value.clone());
                }
                None => errors.push(flag_error(
                    flag,
                    path,
                    format!("the grid's `{name}` is not a table"),
                )),
            }
        }
        (given.into_iter().map(|(p, f, _)| (p, f)).collect(), errors)
    }
}

impl Grid {
    /// The grid of file `path` with the command line's overrides, every
    /// point validated (or at most `sample` of them, spread evenly over the
    /// grid; [`Grid::points_checked`] says how many), or every problem of
    /// both.
    pub fn load_overridden(
        path: &Path,
        sample: Option<u64>,
        overrides: &Overrides,
    ) -> Result<Grid, GridErrors> {
        Grid::load_with(path, sample, overrides)
    }

    fn load_with(
        path: &Path,
        sample: Option<u64>,
        overrides: &Overrides,
    ) -> Result<Grid, GridErrors> {
        let file = path.to_path_buf();
        let one = |e: GridError| GridErrors(vec![e]);
        let mut text = sim_core::read_input(path).map_err(|source| {
            one(GridError::Read {
                file: file.clone(),
                source,
            })
        })?;
        let original: toml::Table = text.parse().map_err(|source| {
            one(GridError::Parse {
                file: file.clone(),
                source,
            })
        })?;
        // A scenario file given for a grid: its every key would be refused
        // on its own, which tells the user nothing of the mix-up.
        let scenario_tables: Vec<&str> = [("client", "[client]"), ("tiers", "[[tiers]]")]
            .into_iter()
            .filter(|(key, _)| original.contains_key(*key))
            .map(|(_, table)| table)
            .collect();
        if !original.contains_key("scenario") && !scenario_tables.is_empty() {
            return Err(one(GridError::Invalid {
                file: file.clone(),
                key: "scenario".into(),
                reason: format!(
                    "missing, and the file has {}: this is a scenario file, not a grid; a grid names it (`scenario = \"...\"`) beside its axes, and `sweep one --scenario FILE` runs it alone",
                    scenario_tables.join(" and ")
                ),
            }));
        }
        // With overrides, the grid is the file's document with them applied,
        // written out again: its text (and so its fingerprint, and the
        // changes a resume reports) includes them.
        let mut doc = original.clone();
        let (from_flags, flag_errors) = overrides.apply(&mut doc);
        if doc != original {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            text = format!(
                "# {name} with the command line's --set and --axis overrides\n{}",
                toml::to_string(&doc).expect("a TOML table serializes")
            );
        }
        let (raw, file_errors) = GridFile::read(doc, &file);
        let flag_of = |path: &str| from_flags.iter().find(|(p, _)| p == path).map(|(_, f)| *f);
        let mut errors = flag_errors;
        errors.extend(file_errors);
        let invalid = |key: &str, reason: String| GridError::Invalid {
            file: file.clone(),
            key: key.to_string(),
            reason,
        };
        let mut err = |key: &str, msg: String| errors.push(invalid(key, msg));
        // A range given by --axis is the flag's problem, not the file's.
        let mut flag_range_errors: Vec<GridError> = Vec::new();

        // The name becomes out/<name>: no `.`, so that `.` and `..` (and
        // hidden names) cannot point the output anywhere else.
        let name_given = raw.name.is_some();
        let name = raw.name.unwrap_or_default();
        if name_given
            && (name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c)))
        {
            err(
                "name",
                format!(
                    "`{name}` must be letters, digits, `_` or `-` (it names the output directory out/<name>)"
                ),
            );
        }
        let mut seeds_refused = false;
        let mut seeds = match (raw.seeds, &raw.sample) {
            (Some(_), Some(_)) => {
                seeds_refused = true;
                err(
                    "seeds",
                    "a grid with [sample] takes its seeds from sample.replicates (seeds 1 to replicates, the same at every point): remove `seeds`".into(),
                );
                Vec::new()
            }
            // Set once the design is read.
            (None, Some(_)) => {
                seeds_refused = true;
                Vec::new()
            }
            (None, None) => {
                seeds_refused = true;
                if !raw.seeds_given {
                    err(
                        "seeds",
                        "missing: give a list (seeds = [1, 2, 3]) or { first = 1, count = 20 }"
                            .into(),
                    );
                }
                Vec::new()
            }
            (Some(seeds), None) => match seeds {
                Seeds::List(v) => v,
                Seeds::Range { count, .. } if count > MAX_RUNS => {
                    seeds_refused = true;
                    err(
                        "seeds",
                        format!("count = {count} is more than the {MAX_RUNS} runs a grid may have"),
                    );
                    Vec::new()
                }
                // A TOML integer is at most 2^63 - 1, so the last seed fits.
                Seeds::Range { first, count } => (0..count).map(|i| first + i).collect(),
            },
        };
        if seeds.is_empty() && !seeds_refused {
            err(
                "seeds",
                "no seeds: give a list or { first = 1, count = 20 }".into(),
            );
        }
        let mut sorted = seeds.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            err("seeds", format!("seed {} appears twice", w[0]));
        }

        // A scenario path is relative to the grid file.
        let (base, scenario_ref, scenario_id, scenario_text, scenario_profiles) = if let Some(s) =
            raw.scenario.as_deref()
            && sim_core::builtin(s).is_some()
        {
            let none = String::new;
            (
                sim_core::builtin(s),
                s.to_string(),
                s.to_string(),
                none(),
                none(),
            )
        } else if let Some(scenario) = &raw.scenario {
            let p = path.parent().unwrap_or(Path::new(".")).join(scenario);
            match sim_core::read_input(&p) {
                Ok(t) => match load_scenario_file(&t, &p) {
                    Ok((s, profiles)) => {
                        let id = scenario_file_id(&t, &profiles);
                        (Some(s), p.display().to_string(), id, t, profiles)
                    }
                    Err(problems) => {
                        for problem in problems {
                            err("scenario", problem);
                        }
                        Default::default()
                    }
                },
                Err(e) => {
                    err(
                        "scenario",
                        format!(
                            "`{}` is neither a built-in scenario ({}) nor a readable file ({}: {e})",
                            scenario,
                            sim_core::BUILTIN_SCENARIOS.join(", "),
                            p.display()
                        ),
                    );
                    Default::default()
                }
            }
        } else {
            Default::default()
        };

        let mut fixed = Vec::new();
        for (k, v) in raw.set {
            fixed.push((k, v));
        }
        let mut dimensions = Vec::new();
        let mut sampled: Vec<(String, toml::Table)> = Vec::new();
        for (k, v) in raw.axes {
            match v {
                Value::Array(levels) if levels.is_empty() => err(
                    &format!("axes.\"{k}\""),
                    "empty axis: give at least one level".into(),
                ),
                Value::Array(levels) if k == "name" && levels.len() > 1 => err(
                    "axes.\"name\"",
                    "`name` labels the scenario and changes nothing it runs: its levels would run the same model; to label levels of other parameters, zip them with it ([[zip]])".into(),
                ),
                Value::Array(levels) => {
                    if k == "strategy" {
                        for label in levels.iter().filter_map(Value::as_str) {
                            if let Some(reason) = unfit_label(label, "a strategy labels its level")
                            {
                                err("axes.strategy", format!("{label:?}: {reason}"));
                            }
                        }
                    }
                    dimensions.push(Dimension {
                        paths: vec![k],
                        levels: levels.into_iter().map(|l| vec![l]).collect(),
                    })
                }
                Value::Table(t) if design::is_sampled(&t) => sampled.push((k, t)),
                Value::Table(t) if axis_range::is_range(&t) => match axis_range::expand(&k, &t) {
                    Ok(levels) => dimensions.push(Dimension {
                        paths: vec![k],
                        levels: levels.into_iter().map(|l| vec![l]).collect(),
                    }),
                    Err(reason) => match flag_of(&k) {
                        Some(flag) => flag_range_errors.push(GridError::Flag {
                            flag,
                            arg: format!("{k}={}", Value::Table(t)),
                            reason,
                        }),
                        None => err(
                            &format!("axes.\"{k}\""),
                            format!("{}: {reason}", Value::Table(t)),
                        ),
                    },
                },
                other => err(
                    &format!("axes.\"{k}\""),
                    format!(
                        "an axis is a list of levels or a range {{ start, stop, step }} / {{ start, stop, num, log = true }}, got {other}"
                    ),
                ),
            }
        }
        // A zip group's lists of unequal length make no dimension; their
        // values are still checked, each on its own.
        let mut unpaired: Vec<(String, Vec<Value>)> = Vec::new();
        // The dimension each zip group became, to name it (`zip[z]`).
        let mut zip_of: Vec<(usize, String)> = Vec::new();
        for (z, group) in raw.zip.into_iter().enumerate() {
            let key = format!("zip[{z}]");
            let mut lists = Vec::new();
            for (k, v) in group {
                match v {
                    Value::Array(levels) => {
                        let what = match k.as_str() {
                            "name" => Some("a zip group's name labels its level"),
                            "strategy" => Some("a strategy labels its level"),
                            _ => None,
                        };
                        for label in levels.iter().filter_map(Value::as_str) {
                            if let Some(reason) = what.and_then(|w| unfit_label(label, w)) {
                                err(&format!("{key}.\"{k}\""), format!("{label:?}: {reason}"));
                            }
                        }
                        lists.push((k, levels))
                    }
                    other => err(
                        &format!("{key}.\"{k}\""),
                        format!("a zipped axis is a list of levels, got {other}"),
                    ),
                }
            }
            // The report labels a group's level by its name: two levels
            // of one name would be pooled as one point.
            if let Some((_, names)) = lists.iter().find(|(k, _)| k == "name") {
                for (i, n) in names.iter().enumerate() {
                    if n.as_str().is_some_and(|n| n.trim().is_empty()) {
                        err(
                            &format!("{key}.\"name\""),
                            format!(
                                "{n} is a blank name: the report would show its level as an empty cell"
                            ),
                        );
                    } else if names[..i].contains(n) {
                        err(
                            &format!("{key}.\"name\""),
                            format!(
                                "{n} names two levels: each level of a zip group needs a name of its own (the report tells the levels apart by it)"
                            ),
                        );
                    }
                }
            }
            let lens: Vec<usize> = lists.iter().map(|(_, l)| l.len()).collect();
            if !lists.is_empty() && lists.iter().all(|(k, _)| k == "name") {
                err(
                    &key,
                    "a zip group of `name` alone varies nothing (`name` labels the scenario): its levels would run the same model; zip the parameters the name stands for with it".into(),
                );
            } else if lists.is_empty() {
                err(&key, "empty zip group".into());
            } else if lens.contains(&0) {
                err(&key, "empty axis in a zip group".into());
            } else if lens.iter().any(|l| *l != lens[0]) {
                let desc: Vec<String> = lists
                    .iter()
                    .map(|(k, l)| format!("\"{k}\" has {}", l.len()))
                    .collect();
                err(
                    &key,
                    format!("zipped lists must have equal length: {}", desc.join(", ")),
                );
                unpaired.extend(lists);
            } else {
                zip_of.push((dimensions.len(), key));
                dimensions.push(Dimension {
                    paths: lists.iter().map(|(k, _)| k.clone()).collect(),
                    levels: (0..lens[0])
                        .map(|i| lists.iter().map(|(_, l)| l[i].clone()).collect())
                        .collect(),
                });
            }
        }

        // The sampled design is the last dimension: its rows vary fastest
        // (after the seeds), so each combination of categories holds one
        // whole design in SALib's row order.
        let mut sample_design = None;
        let mut axes_without_design = Vec::new();
        match raw.sample {
            None if !sampled.is_empty() => {
                for (k, t) in &sampled {
                    err(
                        &format!("axes.\"{k}\""),
                        format!(
                            "{}: a {{ min, max }} axis is sampled, and needs a [sample] table (method = \"lhs\" | \"sobol\" | \"morris\" | \"boundary\", n = ...); for levels from a range use {{ start, stop, step }}",
                            Value::Table(t.clone())
                        ),
                    );
                }
            }
            None => {}
            Some(sample) => match design::parse(&sample, &sampled) {
                Ok(spec) => {
                    seeds = (1..=spec.replicates).collect();
                    seeds_refused = false;
                    dimensions.push(Dimension {
                        paths: spec.axes.iter().map(|a| a.path.clone()).collect(),
                        levels: design::generate(&spec),
                    });
                    sample_design = Some(spec);
                }
                Err(refused) => {
                    for (key, reason) in refused.problems {
                        err(&key, reason);
                    }
                    axes_without_design = refused.axes;
                }
            },
        }

        // Each path at most once across [set], [axes] and [[zip]].
        // Two spellings of one parameter (`svc_b.slow.start_s` and
        // `svc_b.slow.0.start_s`) are one path.
        let mut seen: Vec<(&str, String)> = Vec::new();
        let all_paths = fixed.iter().map(|(k, _)| k.as_str()).chain(
            dimensions
                .iter()
                .flat_map(|d| d.paths.iter().map(String::as_str)),
        );
        for p in all_paths {
            let canonical = sim_core::params::canonical(p);
            match seen.iter().find(|(_, c)| *c == canonical) {
                Some((q, _)) if *q == p => err(&format!("\"{p}\""), "duplicate axis: the path is given more than once across [set], [axes] and [[zip]]".into()),
                Some((q, _)) => err(&format!("\"{p}\""), format!("duplicate axis: the same parameter as `{q}` (both are `{canonical}`), given more than once across [set], [axes] and [[zip]]")),
                None => {}
            }
            seen.push((p, canonical));
        }
        // Levels are compared in canonical form: `2` and `2.0` of a float
        // parameter are one point (one run id), so the second is refused.
        // A design's rows may repeat (Morris trajectories, integer axes):
        // their sample_index tells them apart.
        let listed = dimensions.len() - usize::from(sample_design.is_some());
        for (n, d) in dimensions[..listed].iter().enumerate() {
            let canon: Vec<Vec<String>> = d
                .levels
                .iter()
                .map(|l| {
                    d.paths
                        .iter()
                        .zip(l)
                        // -0.0 is 0.0 to every parameter (and to the
                        // report's labels), though not to a point's id.
                        .map(|(p, v)| match v {
                            Value::Float(x) if *x == 0.0 => canonical(p, &Value::Float(0.0)),
                            v => canonical(p, v),
                        })
                        .collect()
                })
                .collect();
            for (i, a) in d.levels.iter().enumerate() {
                if let Some(j) = canon[..i].iter().position(|c| *c == canon[i]) {
                    let show = |l: &[Value]| {
                        l.iter()
                            .map(Value::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    let same = if show(&d.levels[j]) == show(a) {
                        String::new()
                    } else {
                        format!(" (the same value as {})", show(&d.levels[j]))
                    };
                    let reason = format!("duplicate level: level {} appears twice{same}", show(a));
                    // An axis the command line gave is the flag's mistake.
                    match (d.paths.as_slice(), d.paths.first().and_then(|p| flag_of(p))) {
                        ([path], Some(flag)) => flag_range_errors.push(GridError::Flag {
                            flag,
                            arg: format!(
                                "{path}={}",
                                d.levels
                                    .iter()
                                    .map(|l| show(l))
                                    .collect::<Vec<_>>()
                                    .join(",")
                            ),
                            reason,
                        }),
                        _ => match zip_of.iter().find(|(i, _)| *i == n) {
                            Some((_, zip)) => err(zip, reason),
                            None => err(&format!("axes.\"{}\"", d.paths.join("\"+\"")), reason),
                        },
                    }
                }
            }
        }

        // Checked arithmetic: the enumeration's indexes are u64.
        let points = dimensions
            .iter()
            .try_fold(1u64, |acc, d| acc.checked_mul(d.levels.len() as u64));
        if !seeds_refused {
            let size = match points.map(|p| (p, p.checked_mul(seeds.len() as u64))) {
                None => Some("more than 2^64 points".to_string()),
                Some((p, None)) => Some(format!(
                    "{p} points x {} seeds: more than 2^64 runs",
                    seeds.len()
                )),
                Some((p, Some(r))) if r > MAX_RUNS => {
                    Some(format!("{p} points x {} seeds = {r} runs", seeds.len()))
                }
                Some(_) => None,
            };
            if let Some(size) = size {
                err(
                    "axes",
                    format!(
                        "{size}, more than the {MAX_RUNS} runs a grid may have: use fewer levels or seeds, or split it into several grids"
                    ),
                );
            }
        }

        for (key, axis) in [
            ("heatmap_x", &raw.report.heatmap_x),
            ("heatmap_y", &raw.report.heatmap_y),
            ("panels", &raw.report.panels),
        ] {
            if let Some(a) = axis
                && !dimensions.iter().any(|d| d.paths.contains(a))
            {
                errors.push(invalid(
                    &format!("report.{key}"),
                    format!("`{a}` is not an axis of this grid"),
                ));
            }
        }
        // The heatmap's two sides and its panels are three different axes.
        let (x, y, panels) = (
            &raw.report.heatmap_x,
            &raw.report.heatmap_y,
            &raw.report.panels,
        );
        for (key, axis, others) in [
            ("heatmap_y", y, [("heatmap_x", x)].as_slice()),
            (
                "panels",
                panels,
                [("heatmap_x", x), ("heatmap_y", y)].as_slice(),
            ),
        ] {
            let Some(a) = axis else { continue };
            if let Some((other, _)) = others.iter().find(|(_, o)| o.as_ref() == Some(a)) {
                errors.push(invalid(
                    &format!("report.{key}"),
                    format!("`{a}` is {other} too: the heatmap's sides and its panels are three different axes"),
                ));
            }
        }
        errors.append(&mut flag_range_errors);
        // Every value of every path on its own: unknown paths and types.
        // The fixed overrides build on each other (a window or profile point
        // `n` needs the ones before it), and every level builds on them.
        // Problems of the grid's shape: with any, the points left are not
        // the grid's.
        let shape_errors = errors.len();
        let mut probe_errors: Vec<GridError> = Vec::new();
        let mut with_set = base.clone();
        let mut last_refused = false;
        let mut probe = |table: &'static str,
                         path: &str,
                         value: &Value,
                         on: &mut Option<Scenario>| {
            let refused = match on {
                // Without a scenario (its file did not load), what the
                // catalogue alone tells, so that it is not told only once
                // the file loads.
                None => params::catalogue_problem(path, value).map(|m| ConfigError::new(path, m)),
                // A value outside its bounds is refused at every point:
                // said here, beside the other values' problems, with
                // validation's reason (not the field type's limits, nor a
                // mechanism's being off).
                Some(on) => match (
                    // Before the value is set: the path as it was.
                    params::out_of_bounds(on, path, value),
                    params::set(on, path, value),
                ) {
                    (None, Err(cause)) => Some(cause),
                    (Some(outside), Err(_)) => Some(ConfigError::new(path, outside.to_string())),
                    (None, Ok(())) => None,
                    (Some(outside), Ok(())) => {
                        let canonical = params::canonical(path);
                        let errors = sim_core::validate_settings(on).err().unwrap_or_default();
                        Some(
                            (errors.into_iter())
                                .find(|e| outside.finite && params::canonical(&e.path) == canonical)
                                .unwrap_or_else(|| ConfigError::new(path, outside.to_string())),
                        )
                    }
                },
            };
            let follows_refused = std::mem::replace(&mut last_refused, refused.is_some());
            let Some(cause) = refused else {
                return true;
            };
            // The same problem at consecutive levels of one path is said
            // once, naming the first and the last.
            match probe_errors.last_mut().filter(|_| follows_refused) {
                Some(
                    GridError::Value {
                        path: p,
                        through_level,
                        cause: c,
                        ..
                    }
                    | GridError::FlagValue {
                        path: p,
                        through_level,
                        cause: c,
                        ..
                    },
                ) if p == path && *c == cause => {
                    let n = through_level.as_ref().map_or(1, |(_, n)| *n);
                    *through_level = Some((value.clone(), n + 1));
                }
                _ => probe_errors.push(match flag_of(path) {
                    Some(flag) => GridError::FlagValue {
                        flag,
                        path: path.to_string(),
                        value: value.clone(),
                        typed: overrides.typed(path, value),
                        through_level: None,
                        cause,
                    },
                    None => GridError::Value {
                        file: file.clone(),
                        table,
                        path: path.to_string(),
                        value: value.clone(),
                        through_level: None,
                        cause,
                    },
                }),
            }
            false
        };
        // Which values were taken: the grid without the others is still
        // checked below, so that no problem waits for another's fix.
        let mut fixed_taken = Vec::with_capacity(fixed.len());
        for (k, v) in &fixed {
            let mut next = with_set.clone();
            let taken = probe("set", k, v, &mut next);
            if taken {
                with_set = next;
            }
            fixed_taken.push(taken);
        }
        let mut levels_taken: Vec<Vec<bool>> = Vec::with_capacity(listed);
        for d in &dimensions[..listed] {
            let table = if d.is_zip() { "zip" } else { "axes" };
            let mut taken = vec![true; d.levels.len()];
            for (j, p) in d.paths.iter().enumerate() {
                for (level, taken) in d.levels.iter().zip(&mut taken) {
                    *taken &= probe(table, p, &level[j], &mut with_set.clone());
                }
            }
            levels_taken.push(taken);
        }
        for (p, levels) in &unpaired {
            for level in levels {
                probe("zip", p, level, &mut with_set.clone());
            }
        }
        // A sampled axis at its two ends (every point is validated below),
        // with or without a design.
        let mut design_taken = true;
        for a in (sample_design.iter().flat_map(|s| &s.axes)).chain(&axes_without_design) {
            for end in [a.min, a.max] {
                let v = if a.integer {
                    Value::Integer(end as i64)
                } else {
                    Value::Float(end)
                };
                design_taken &= probe("axes", &a.path, &v, &mut with_set.clone());
            }
        }
        // A sampled axis refused at an end is said as the grid gives it
        // (`{ min = 0, max = 5 }`), not as the numbers probed (`0.0 and
        // 5.0`, which read as two levels).
        for e in &mut probe_errors {
            if let GridError::Value {
                table: "axes",
                path,
                value,
                through_level,
                ..
            } = e
                && let Some((_, written)) = sampled.iter().find(|(k, _)| k == path)
            {
                *value = Value::Table(written.clone());
                *through_level = None;
            }
        }
        errors.extend(probe_errors);
        let Some(base) = base else {
            return Err(GridErrors(errors));
        };
        let mut grid = Grid {
            name,
            path: path.to_path_buf(),
            sha256: sha256_hex(text.as_bytes()),
            text,
            scenario_ref,
            scenario_id,
            scenario_text,
            scenario_profiles,
            base,
            seeds,
            fixed,
            dimensions,
            report: raw.report,
            design: sample_design,
            points_checked: 0,
            largest_run: (0, 0),
            metrics: Vec::new(),
            point_users: Vec::new(),
            last_point: ThreadLocal::new(),
            presets: ThreadLocal::new(),
        };
        if !errors.is_empty() {
            // The points cannot be built: the base scenario's metrics.
            let schema = sim_core::result::metric_schema(&grid.base);
            errors.extend(report_errors(
                &file,
                &grid.report,
                &schema,
                &grid.dimensions,
                grid.design.is_some(),
            ));
            // The points' own problems (rules between fields), at the
            // points left without the levels refused above: points of the
            // grid as they are when its shape, its fixed values, its design
            // and some level of every axis stand (else a refused value's
            // default would speak for it; a path the scenario does not
            // have, misspelt, has none); a spread of them, so that a large
            // grid fails at once.
            let base = &grid.base;
            // Every path of it: a zip group's other paths have levels of
            // their own, refused or not.
            let missing = |d: &Dimension| d.paths.iter().all(|p| !params::exists(base, p));
            let whole = shape_errors == 0
                && (fixed_taken.iter().zip(&grid.fixed))
                    .all(|(taken, (k, _))| *taken || !params::exists(base, k))
                && design_taken
                && (levels_taken.iter().zip(&grid.dimensions))
                    .all(|(t, d)| t.contains(&true) || missing(d));
            if whole {
                grid.fixed.retain(|(k, _)| params::exists(base, k));
                for (d, taken) in grid.dimensions.iter_mut().zip(&levels_taken) {
                    let mut taken = taken.iter();
                    d.levels
                        .retain(|_| *taken.next().expect("a flag per level"));
                }
                // An axis of a path the scenario lacks is no axis of it.
                grid.dimensions.retain(|d| !d.levels.is_empty());
                const SPREAD: u64 = 1000;
                let spread = Some(sample.unwrap_or(SPREAD).min(SPREAD));
                if let Err(more) =
                    grid.validate_points(&file, spread, &from_flags, Points::WithoutRefused)
                {
                    errors.extend(more.0);
                }
            }
            return Err(GridErrors(errors));
        }
        let checked = (grid.validate_points(&file, sample, &from_flags, Points::AsGiven)).map_err(
            |mut e| {
                let schema = sim_core::result::metric_schema(&grid.base);
                (e.0).extend(report_errors(
                    &file,
                    &grid.report,
                    &schema,
                    &grid.dimensions,
                    grid.design.is_some(),
                ));
                e
            },
        )?;
        // Against every point's metrics: a replicas axis adds some.
        let report = report_errors(
            &file,
            &grid.report,
            &checked.metrics,
            &grid.dimensions,
            grid.design.is_some(),
        );
        if !report.is_empty() {
            return Err(GridErrors(report));
        }
        (grid.points_checked, grid.largest_run, grid.metrics) =
            (checked.points, checked.largest_run, checked.metrics);
        grid.point_users = checked.users;
        Ok(grid)
    }

    /// Resolves and validates every point (or `sample` of them, spread
    /// evenly), on every core; distinct problems are reported once each,
    /// with the first point that shows them. A key that cannot act at a
    /// point is refused only when it acts at none of the points, every
    /// one checked and valid: a `[set]` breaker setting beside a `breaker = [false, true]`
    /// axis acts at half of them. Returns how many were checked, the
    /// point of the largest memory estimate with its bytes, and the metrics
    /// of all the points checked ([`Grid::metrics`]).
    fn validate_points(
        &self,
        file: &Path,
        sample: Option<u64>,
        flags: &[(String, &'static str)],
        points: Points,
    ) -> Result<Checked, GridErrors> {
        use rayon::prelude::*;
        let n = self.points();
        let checked = sample.map_or(n, |s| s.min(n));
        // Point `j` of the `checked` ones (all of them when not sampling).
        let index = |j: u64| {
            if checked == n {
                j
            } else {
                (j as u128 * n as u128 / checked as u128) as u64
            }
        };
        let idle_in_base: Vec<String> = (sim_core::inert_settings(&self.base).into_iter())
            .map(|e| e.path)
            .collect();
        const CHUNK: u64 = 1024;
        /// Per chunk of points: the problems and their first points, the
        /// keys that cannot act with their first point and how many points
        /// refuse them, how many points were valid, and the largest run.
        struct Found {
            errors: Vec<(u64, ConfigError)>,
            inert: Vec<(u64, ConfigError, u64)>,
            valid: u64,
            largest: (u64, u64),
            metrics: Vec<sim_core::Metric>,
            users: Vec<f64>,
        }
        let mut chunks: Vec<Found> = (0..checked.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let mut found: Vec<(u64, ConfigError)> = Vec::new();
                let mut inert: Vec<(u64, ConfigError, u64)> = Vec::new();
                let mut valid = 0;
                let mut largest = (0, 0);
                let mut metrics = Vec::new();
                let mut shapes = std::collections::HashSet::new();
                let mut users = Vec::new();
                for j in c * CHUNK..((c + 1) * CHUNK).min(checked) {
                    let i = index(j);
                    let point = self.point(i);
                    let scenario = self.scenario(&point);
                    users.push(
                        (scenario.as_ref()).map_or(1.0, |s| sim_core::expected_users(s).max(1.0)),
                    );
                    match scenario {
                        Ok(s) => {
                            valid += 1;
                            // Points of one shape share their metrics: the
                            // names are written out once per shape.
                            let schema = sim_core::result::schema_result(&s);
                            if shapes.insert(schema.metric_values().1) {
                                merge_metrics(&mut metrics, schema.metrics());
                            }
                            let bytes = sim_core::estimated_peak_bytes(&s);
                            if bytes > largest.1 {
                                largest = (i, bytes);
                            }
                            // A value inherited from the scenario file is
                            // not the grid's to refuse ([`sim_core::inert_overrides`]).
                            for cause in sim_core::inert_overrides(&s, &idle_in_base, &point) {
                                count_inert(&mut inert, (i, cause, 1));
                            }
                        }
                        Err(es) => {
                            for cause in es {
                                if !found.iter().any(|(_, c)| *c == cause) {
                                    found.push((i, cause));
                                }
                            }
                        }
                    }
                }
                Found {
                    errors: found,
                    inert,
                    valid,
                    largest,
                    metrics,
                    users,
                }
            })
            .collect();
        // The first point of the largest estimate.
        let largest = chunks
            .iter()
            .map(|f| f.largest)
            .fold((0, 0), |a, b| if b.1 > a.1 { b } else { a });
        let valid: u64 = chunks.iter().map(|f| f.valid).sum();
        let users: Vec<f64> = match checked == n {
            true => chunks
                .iter_mut()
                .flat_map(|f| std::mem::take(&mut f.users))
                .collect(),
            false => Vec::new(),
        };
        let mut metrics = Vec::new();
        for f in &mut chunks {
            merge_metrics(&mut metrics, std::mem::take(&mut f.metrics));
        }
        // Per key that cannot act somewhere: its first point (chunks are in
        // point order) and at how many points.
        let mut inert: Vec<(u64, ConfigError, u64)> = Vec::new();
        for found in chunks.iter().flat_map(|f| f.inert.iter().cloned()) {
            count_inert(&mut inert, found);
        }
        let problems: Vec<(u64, ConfigError)> = chunks.into_iter().flat_map(|f| f.errors).collect();
        // The points that set a key: every point for a key of `[set]`, an
        // axis or the scenario file; those of its strategy for a preset's.
        let setting = |path: &str| {
            (0..n)
                .filter(|&i| sim_core::overrides_write(&self.base, &self.point(i), path))
                .count() as u64
        };
        let acting_nowhere: Vec<(u64, ConfigError)> = (inert.into_iter())
            .filter(|(_, cause, idle)| {
                // Where some points are invalid, a key may act at them once
                // they are mended; where some were not checked (a plan's
                // spread), it may act at those.
                points == Points::AsGiven
                    && problems.is_empty()
                    && checked == n
                    && (*idle == valid || *idle == setting(&cause.path))
            })
            .map(|(i, mut cause, idle)| {
                if idle == valid && valid > 1 {
                    cause.message = format!("{} (at each of the {valid} points)", cause.message);
                } else if idle < valid {
                    let what = if idle == 1 {
                        "the point"
                    } else {
                        "each of the points"
                    };
                    cause.message = format!("{} (at {what} whose strategy sets it)", cause.message);
                }
                (i, cause)
            })
            .collect();
        // An idle key's message starts with its value; the others' get it
        // from the point.
        let problems = (problems.into_iter().map(|(i, c)| (i, c, true)))
            .chain(acting_nowhere.into_iter().map(|(i, c)| (i, c, false)));
        let mut errors: Vec<GridError> = Vec::new();
        let mut seen: Vec<sim_core::ConfigError> = Vec::new();
        // A problem the scenario file has on its own, at a path the grid
        // does not set, is the file's to fix: said at the file.
        let scenario_file = sim_core::builtin(&self.scenario_ref).is_none();
        let of_the_file = match self.scenario(&[]) {
            Err(own) if scenario_file => own,
            _ => Vec::new(),
        };
        for (i, cause, with_value) in problems {
            if !seen.contains(&cause) {
                seen.push(cause.clone());
                let overrides = self.point(i);
                let canonical = params::canonical(&cause.path);
                let given = (overrides.iter())
                    .filter(|_| with_value)
                    .find(|(p, _)| params::canonical(p) == canonical);
                let flag = |p: &str| flags.iter().find(|(f, _)| f == p).map(|(_, flag)| *flag);
                let setting = match given {
                    Some((p, v)) => match flag(p) {
                        Some(flag) => format!("{flag} {p}={}", params::show(v)),
                        None => format!("{p} = {}", params::show(v)),
                    },
                    // An idle key's message starts with its value.
                    None => match flag(&cause.path) {
                        Some(flag) => format!("{flag} {}", cause.path),
                        None => cause.path.clone(),
                    },
                };
                let files = given.is_none() && with_value && of_the_file.contains(&cause);
                errors.push(GridError::Point {
                    file: match files {
                        true => PathBuf::from(&self.scenario_ref),
                        false => file.to_path_buf(),
                    },
                    index: (points == Points::AsGiven && !files).then_some(i),
                    point: match files {
                        true => String::new(),
                        false => describe(&overrides[self.fixed.len()..]),
                    },
                    setting,
                    cause,
                });
            }
        }
        if errors.is_empty() {
            Ok(Checked {
                points: checked,
                largest_run: largest,
                metrics,
                users,
            })
        } else {
            Err(GridErrors(errors))
        }
    }

    pub fn points(&self) -> u64 {
        self.points_of(&self.all_dimensions())
    }

    /// The indexes of every dimension, in order.
    pub fn all_dimensions(&self) -> Vec<usize> {
        (0..self.dimensions.len()).collect()
    }

    /// How many combinations of levels the dimensions `dims` have.
    pub fn points_of(&self, dims: &[usize]) -> u64 {
        dims.iter()
            .map(|d| self.dimensions[*d].levels.len() as u64)
            .product()
    }

    /// `sweep run` and `sweep slurm` run a fixed list of runs; an adaptive
    /// design picks each round's from the outcomes of the last.
    pub fn refuse_adaptive(&self) -> Result<(), GridErrors> {
        if self.design.as_ref().is_some_and(|d| d.boundary.is_some()) {
            return Err(GridErrors(vec![GridError::Invalid {
                file: self.path.clone(),
                key: "sample.method".into(),
                reason: format!(
                    "\"boundary\" is adaptive (each round's points depend on the outcomes of the rounds before): run it with `sweep refine {}`",
                    self.path.display()
                ),
            }]));
        }
        Ok(())
    }

    pub fn runs(&self) -> u64 {
        self.points() * self.seeds.len() as u64
    }

    /// The overrides of point `i`: fixed ones, then one per axis path.
    pub fn point(&self, i: u64) -> Vec<(String, Value)> {
        self.point_of(&self.all_dimensions(), i)
    }

    /// The fixed overrides and those of the dimensions `dims` at their
    /// combination `i`, in the enumeration's mixed radix (the last of
    /// `dims` varies fastest).
    pub fn point_of(&self, dims: &[usize], mut i: u64) -> Vec<(String, Value)> {
        let mut positions = vec![0usize; dims.len()];
        for (pos, d) in positions.iter_mut().zip(dims).rev() {
            let n = self.dimensions[*d].levels.len() as u64;
            *pos = (i % n) as usize;
            i /= n;
        }
        let mut out = self.fixed.clone();
        let design_dim = self.design.as_ref().map(|_| self.dimensions.len() - 1);
        for (d, pos) in dims.iter().zip(positions) {
            let dim = &self.dimensions[*d];
            for (p, v) in dim.paths.iter().zip(&dim.levels[pos]) {
                out.push((p.clone(), v.clone()));
            }
            if Some(*d) == design_dim {
                out.push((SAMPLE_INDEX.to_string(), Value::Integer(pos as i64)));
            }
        }
        out
    }

    /// The run of enumeration index `i`: its point's overrides and its seed.
    pub fn run(&self, i: u64) -> (u64, Vec<(String, Value)>, u64) {
        let n = self.seeds.len() as u64;
        let point = i / n;
        (point, self.point(point), self.seeds[(i % n) as usize])
    }

    /// The scenario of a point, validated.
    pub fn scenario(
        &self,
        overrides: &[(String, Value)],
    ) -> Result<ValidScenario, Vec<ConfigError>> {
        let params = (overrides.iter()).filter(|(k, _)| self.design.is_none() || k != SAMPLE_INDEX);
        let (strategy, rest): (Vec<_>, Vec<_>) =
            params.cloned().partition(|(k, _)| k == "strategy");
        // A preset is applied as `apply_all` would, first; a point's
        // strategy comes from the base with it already applied, and
        // serialized, which cuts the cost of building a point (a round trip
        // through the scenario's serde tree) by more than half.
        let from_base = match strategy.as_slice() {
            [] => self.with_preset(None, |base| base.with(&rest)),
            [(_, Value::String(name))] => self.with_preset(Some(name), |base| base.with(&rest)),
            _ => None,
        };
        let s = match from_base {
            Some(s) => s?,
            None => {
                let mut s = self.base.clone();
                sim_core::apply_all(&mut s, &[strategy, rest].concat())?;
                s
            }
        };
        ValidScenario::point(s, overrides)
    }

    /// `f` of the base scenario with preset `name` applied (`None`: the
    /// base itself), as this thread built and serialized it first; `None`
    /// if the preset is refused.
    fn with_preset<R>(&self, name: Option<&str>, f: impl FnOnce(&Serialized) -> R) -> Option<R> {
        let mut presets = self.presets.get_or_default().borrow_mut();
        let at = match presets.iter().position(|(n, _)| n.as_deref() == name) {
            Some(at) => at,
            None => {
                let mut s = self.base.clone();
                let strategy: Vec<(String, Value)> = (name.into_iter())
                    .map(|n| ("strategy".to_string(), Value::String(n.to_string())))
                    .collect();
                let applied = sim_core::apply_all(&mut s, &strategy).ok();
                presets.push((
                    name.map(str::to_string),
                    applied.map(|()| Serialized::new(s)),
                ));
                presets.len() - 1
            }
        };
        presets[at].1.as_ref().map(f)
    }

    /// Calls `f` with the scenario of a point: the one this thread built
    /// last when it was of the same point, else built and validated now. A
    /// sweep's runs of one point (its seeds) follow each other, and
    /// building a scenario (overrides applied through its serde tree, then
    /// validated) costs about 14% of the instructions of a short run (ch37
    /// with a 5 s horizon). The base scenario does not change after load, so the
    /// scenario is the same either way; an invalid point is not kept, and
    /// each of its runs reports its errors.
    pub fn with_scenario<R>(
        &self,
        overrides: &[(String, Value)],
        f: impl FnOnce(&ValidScenario) -> R,
    ) -> Result<R, Vec<ConfigError>> {
        let mut last = self.last_point.get_or_default().borrow_mut();
        match &*last {
            Some((point, scenario)) if same_overrides(point, overrides) => Ok(f(scenario)),
            _ => {
                let (_, scenario) = last.insert((overrides.to_vec(), self.scenario(overrides)?));
                Ok(f(scenario))
            }
        }
    }

    /// The point's columns, in the order of [`Grid::point`].
    pub fn point_columns(&self) -> Vec<PointColumn> {
        self.point(0)
            .into_iter()
            .map(|(path, _)| PointColumn {
                kind: if path == SAMPLE_INDEX {
                    Kind::Int
                } else {
                    params::param_of(&path).map_or(Kind::Text, |p| p.kind)
                },
                path,
            })
            .collect()
    }

    /// What differs between the grid that wrote `m` and this one, in the
    /// grid's own keys (`axes."svc_b.queue_cap": [16, 64] -> [16, 128]`),
    /// when it is an edited version of the same grid.
    pub fn changes_since(&self, m: &analysis::manifest::Manifest) -> Option<Vec<String>> {
        let written = GridWritten {
            name: &self.name,
            text: &self.text,
            dimensions: self.dimensions.iter().map(|d| d.paths.clone()).collect(),
            fixed: self.fixed.iter().map(|(k, _)| k.clone()).collect(),
            scenario_id: &self.scenario_id,
            scenario_text: &self.scenario_text,
            scenario_profiles: Some(&self.scenario_profiles),
            scenario: &self.scenario_ref,
        };
        written.changes_since(m)
    }

    /// Carries on as the texts that wrote a directory's results when that
    /// grid, and its scenario file, are these in another layout (comments
    /// and spacing aside, the same keys and values in the same order: no
    /// change, yet another text), so that its fingerprint and run ids, and
    /// every shard's and refinement's built on them, stay theirs.
    /// `manifests` are the directory's.
    pub fn keep_layout_of(&mut self, manifests: &[(PathBuf, analysis::manifest::Manifest)]) {
        let relaid = manifests.iter().find(|(_, m)| {
            (m.grid_text != self.text || m.scenario_id != self.scenario_id)
                && self.changes_since(m).is_some_and(|c| c.is_empty())
        });
        if let Some((_, m)) = relaid {
            self.text = m.grid_text.clone();
            self.sha256 = sha256_hex(self.text.as_bytes());
            self.scenario_id = m.scenario_id.clone();
            self.scenario_text = m.scenario_text.clone();
        }
    }

    /// Identifies the grid's content: a different fingerprint is a different
    /// sweep, and its output directory is not resumed. A design is part of
    /// it by its points too, not only the text that asks for them (a new
    /// sampling algorithm is a new sweep).
    pub fn fingerprint(&self) -> String {
        let mut text = format!("{}\n{}", self.sha256, self.scenario_id);
        if self.design.is_some()
            && let Some(d) = self.dimensions.last()
        {
            let mut h = Sha256::new();
            for row in &d.levels {
                for (p, v) in d.paths.iter().zip(row) {
                    h.update(canonical(p, v).as_bytes());
                    h.update(b"\n");
                }
            }
            let digest: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            text.push_str(&format!("\ndesign={digest}"));
        }
        sha256_hex(text.as_bytes())[..16].to_string()
    }

    /// Stable hash of the point (base scenario and every override, in
    /// canonical form): the same point has the same id in any grid.
    pub fn point_id(&self, overrides: &[(String, Value)]) -> String {
        let mut pairs: Vec<String> = overrides
            .iter()
            .map(|(k, v)| format!("{k}={}", canonical(k, v)))
            .collect();
        pairs.sort();
        let text = format!("scenario={}\n{}", self.scenario_id, pairs.join("\n"));
        sha256_hex(text.as_bytes())[..16].to_string()
    }

    pub fn run_id(point_id: &str, seed: u64) -> String {
        sha256_hex(format!("{point_id}\nseed={seed}").as_bytes())[..16].to_string()
    }
}

/// A value written the same way whatever its spelling in the file (`2` and
/// `2.0` for a float parameter are one point).
pub fn canonical(path: &str, v: &Value) -> String {
    let kind = params::param_of(path).map(|p| p.kind);
    match (kind, v) {
        (Some(Kind::Float), Value::Integer(i)) => format!("{:?}", *i as f64),
        (Some(Kind::Float), Value::Float(x)) => format!("{x:?}"),
        (Some(Kind::Int | Kind::Cap), Value::Float(x)) if x.fract() == 0.0 => {
            format!("{}", *x as i64)
        }
        (Some(Kind::Cap), Value::String(s)) if s == "none" => "\"unbounded\"".to_string(),
        _ => v.to_string(),
    }
}

/// What identifies the grid that wrote some results: a grid's, or
/// another directory's manifest's.
struct GridWritten<'a> {
    name: &'a str,
    text: &'a str,
    dimensions: Vec<Vec<String>>,
    fixed: Vec<String>,
    scenario_id: &'a str,
    scenario_text: &'a str,
    /// The load profiles the scenario reads from CSV files, when known
    /// (a grid's; a manifest does not keep them).
    scenario_profiles: Option<&'a str>,
    /// How the scenario is named, for the message.
    scenario: &'a str,
}

impl GridWritten<'_> {
    /// How the scenario file changed since it wrote `m`, whose id differs
    /// from this one's; `None` when it is the same file in another layout
    /// (its comments and spacing aside, the same keys and values): the
    /// sweep then carries on under the id its results were written with.
    fn scenario_change(&self, m: &analysis::manifest::Manifest) -> Option<String> {
        let scenario = self.scenario;
        // Told key by key where the manifest keeps the text that wrote it
        // (manifests written before it do not).
        if m.scenario_text.is_empty() || self.scenario_text.is_empty() {
            return Some(format!("the scenario {scenario} changed"));
        }
        let keys = key_changes(&m.scenario_text, self.scenario_text, true, |_, a, b| a == b);
        if !keys.is_empty() {
            return Some(format!(
                "the scenario {scenario} changed: {}",
                keys.join(", ")
            ));
        }
        let profile = "the load profile it reads from a CSV file";
        if m.scenario_text == self.scenario_text {
            return Some(format!("the scenario {scenario} changed in {profile}"));
        }
        match self.scenario_profiles {
            Some(p) if scenario_file_id(&m.scenario_text, p) == m.scenario_id => None,
            Some(_) => Some(format!(
                "the scenario {scenario} changed in {profile} (and in its comments or layout)"
            )),
            None => Some(format!(
                "the scenario {scenario} has the same keys and values in another layout, but another id (the hash of its text and of {profile}, if any), which names every run"
            )),
        }
    }

    /// What differs from the grid that wrote `m`, in the grid's own keys;
    /// `None` for another grid (another name).
    fn changes_since(&self, m: &analysis::manifest::Manifest) -> Option<Vec<String>> {
        if m.grid_name != self.name {
            return None;
        }
        let mut changes = key_changes(&m.grid_text, self.text, false, same_setting);
        // The same keys and values in another order: the dimensions' order
        // numbers the points and runs, and the fixed keys' order is the
        // runs table's columns'; any other order is layout.
        let (dimensions, fixed) = (&self.dimensions, &self.fixed);
        if changes.is_empty() && m.dimensions != *dimensions {
            changes.push(format!(
                "the order of the axes changed, which numbers the points and runs: {} -> {}; put them back in their order",
                m.dimensions.iter().map(|d| d.join("+")).collect::<Vec<_>>().join(", "),
                dimensions.iter().map(|d| d.join("+")).collect::<Vec<_>>().join(", ")
            ));
        }
        if changes.is_empty() && m.fixed != *fixed {
            changes.push(format!(
                "the order of [set] changed, which orders the runs table's columns: {} -> {}; put it back in its order",
                m.fixed.join(", "),
                fixed.join(", ")
            ));
        }
        if m.scenario_id != *self.scenario_id
            && let Some(change) = self.scenario_change(m)
        {
            changes.push(change);
        }
        Some(changes)
    }
}

/// What differs between the grids that wrote two manifests (`a` the
/// earlier), as [`Grid::changes_since`] says it: empty when they differ in
/// comments and layout only; `None` for two grids of other names.
pub fn changes_between(
    a: &analysis::manifest::Manifest,
    b: &analysis::manifest::Manifest,
) -> Option<Vec<String>> {
    GridWritten {
        name: &b.grid_name,
        text: &b.grid_text,
        dimensions: b.dimension_paths(),
        fixed: b.fixed.clone(),
        scenario_id: &b.scenario_id,
        scenario_text: &b.scenario_text,
        scenario_profiles: None,
        scenario: &b.scenario,
    }
    .changes_since(a)
}

/// `a=1 b="x"`, for messages and sample points.
pub fn describe(overrides: &[(String, Value)]) -> String {
    overrides
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A scenario file and its identity: the SHA-256 of its text, and of the
/// load profile it reads from a CSV file (so that editing the CSV is a
/// change of scenario too).
/// The scenario file at `path`, whose text is `text`, with the load
/// profiles it reads from CSV files, as they enter its id (empty when it
/// reads none).
fn load_scenario_file(text: &str, path: &Path) -> Result<(Scenario, String), Vec<String>> {
    let mut s = Scenario::from_toml(text, &path.display().to_string())?;
    let reads_csv = s.groups().any(|(_, c)| c.profile_csv.is_some());
    let dir = path.parent().unwrap_or(Path::new("."));
    sim_core::read_profile_csv(&mut s, dir)
        .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>())?;
    let profiles = if reads_csv {
        // The client's profile alone as before groups, so that ids stay.
        (s.groups())
            .map(|(_, c)| serde_json::to_string(&c.profile).expect("points serialize"))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        String::new()
    };
    Ok((s, profiles))
}

/// A scenario file's id: the SHA-256 of its text, and of the load
/// profiles it reads from CSV files if any.
fn scenario_file_id(text: &str, profiles: &str) -> String {
    if profiles.is_empty() {
        sha256_hex(text.as_bytes())
    } else {
        sha256_hex(format!("{text}\n{profiles}").as_bytes())
    }
}

/// The keys whose values differ between two TOML texts (`same` says
/// which values are one setting), as `key: a -> b`, `key = a removed` and
/// `key = b added`, by [`flatten`]'s keys.
fn key_changes(
    before: &str,
    after: &str,
    tables_in_arrays: bool,
    same: impl Fn(&str, &Value, &Value) -> bool,
) -> Vec<String> {
    let flat = |text: &str| {
        let mut out = std::collections::BTreeMap::new();
        if let Ok(t) = text.parse::<toml::Table>() {
            flatten("", &Value::Table(t), tables_in_arrays, &mut out);
        }
        out
    };
    let (before, after) = (flat(before), flat(after));
    (before.keys().chain(after.keys()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter_map(|k| match (before.get(k), after.get(k)) {
            (Some(a), Some(b)) if !same(k, a, b) => Some(format!("{k}: {a} -> {b}")),
            (Some(a), None) => Some(format!("{k} = {a} removed")),
            (None, Some(b)) => Some(format!("{k} = {b} added")),
            _ => None,
        })
        .collect()
}

/// The leaves of a TOML table by dotted key (`axes."svc_b.queue_cap"`);
/// arrays are leaves, except, with `tables_in_arrays`, an array of tables
/// (a scenario's `[[tiers]]`), by its items' keys: `tiers[2].service.mean_s`.
fn flatten(
    prefix: &str,
    v: &Value,
    tables_in_arrays: bool,
    out: &mut std::collections::BTreeMap<String, Value>,
) {
    match v {
        Value::Array(items)
            if tables_in_arrays && !items.is_empty() && items.iter().all(Value::is_table) =>
        {
            for (i, item) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), item, true, out);
            }
        }
        Value::Table(t) => {
            for (k, v) in t {
                let key = if k.contains('.') {
                    format!("{k:?}")
                } else {
                    k.clone()
                };
                let key = if prefix.is_empty() {
                    key
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&key, v, tables_in_arrays, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(file: &str, text: &str) -> Grid {
        let dir = std::env::temp_dir().join(format!("grid-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        Grid::load_overridden(&path, None, &Overrides::default()).unwrap()
    }

    /// A point built from the base with its strategy's preset already
    /// applied is the point `apply_all` builds from the base, for every
    /// preset and in any order of the points; and validation keeps each
    /// point's expected users, for the progress' ETA.
    #[test]
    fn a_point_from_its_preset_is_the_point_built_from_the_base() {
        let g = grid(
            "presets.toml",
            "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
             [axes]\n\"svc_b.queue_cap\" = [16, 64]\n\
             strategy = [\"naive\", \"protected\", \"deadline\"]\n\
             \"client.rate_per_s\" = [200, 300]\n",
        );
        assert_eq!(g.point_users.len() as u64, g.points());
        for p in [5, 0, 11, 3, 0, 7, 5] {
            let point = g.point(p);
            let mut s = g.base.clone();
            sim_core::apply_all(&mut s, &point).unwrap();
            let built = ValidScenario::point(s, &point).unwrap();
            assert_eq!(*g.scenario(&point).unwrap(), *built, "point {p}");
            let users = sim_core::expected_users(&built);
            assert_eq!(g.point_users[p as usize], users, "point {p}");
        }
    }

    /// The scenario kept from a thread's last point is that point's only:
    /// the next point gets its own, and going back to a point gives the
    /// scenario it had, each equal to one built from scratch.
    #[test]
    fn with_scenario_gives_each_point_its_own_scenario() {
        let g = grid(
            "each.toml",
            "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1, 2]\n\
             [axes]\n\"svc_b.queue_cap\" = [16, 64]\n",
        );
        let svc_b = |s: &Scenario| {
            s.tiers
                .iter()
                .find(|t| t.name == "svc_b")
                .unwrap()
                .queue_cap
        };
        let cap = |p: u64| {
            let point = g.point(p);
            let fresh = g.scenario(&point).unwrap();
            let kept = g
                .with_scenario(&point, |s| {
                    assert_eq!(**s, *fresh);
                    svc_b(s)
                })
                .unwrap();
            assert_eq!(kept, svc_b(&fresh));
            kept
        };
        assert_eq!(
            [cap(0), cap(0), cap(1), cap(1), cap(0)],
            [16, 16, 64, 64, 16].map(Some)
        );
    }

    /// `0.0` and `-0.0` are two levels, so two points, each with its own
    /// scenario.
    #[test]
    fn a_negative_zero_is_another_point() {
        let z = |v: f64| vec![("svc_b.slow.start_s".to_string(), Value::Float(v))];
        assert!(same_overrides(&z(0.0), &z(0.0)));
        assert!(!same_overrides(&z(0.0), &z(-0.0)));
        let nested = |v: f64| vec![("p".to_string(), Value::Array(vec![Value::Float(v)]))];
        assert!(!same_overrides(&nested(0.0), &nested(-0.0)));
        assert!(!same_overrides(&z(0.0), &[]));
    }

    fn load_err(file: &str, text: &str) -> String {
        let dir = std::env::temp_dir().join(format!("grid-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let Err(err) = Grid::load_overridden(&path, None, &Overrides::default()) else {
            panic!("{file} loads");
        };
        err.to_string()
            .replace(&format!("{}", path.display()), file)
    }

    /// Consecutive levels of one axis refused for one reason are one line
    /// (a range of a thousand bad levels is not a thousand lines); levels
    /// apart are said apart.
    #[test]
    fn consecutive_levels_refused_alike_are_said_once() {
        let err = load_err(
            "range.toml",
            "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
             [axes]\n\"client.rate_per_s\" = { start = -999, stop = -1, step = 1 }\n\
             \"svc_a.max_retries\" = [-1, 2, -3, -4]\n",
        );
        assert_eq!(
            err,
            "range.toml: axes.\"client.rate_per_s\" = -999, ..., -1 (999 levels): must be > 0: at rate 0 no user arrives (a load profile or a closed loop gives the load otherwise)\n\
             range.toml: axes.\"svc_a.max_retries\" = -1: must be 0 to 100\n\
             range.toml: axes.\"svc_a.max_retries\" = -3 and -4: must be 0 to 100"
        );
    }

    /// A plan checks a spread of a large grid's points: a key idle at each
    /// of them may act at another, so it is refused only by the run, which
    /// checks them all.
    #[test]
    fn a_key_idle_at_the_points_a_plan_checks_is_left_to_the_run() {
        let text = "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
             [set]\n\"svc_a.breaker_open_s\" = 2.0\n\
             [axes]\n\"client.rate_per_s\" = { start = 100, stop = 299, step = 0.25 }\n";
        let dir = std::env::temp_dir().join(format!("grid-unit-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("spread.toml");
        std::fs::write(&path, text).unwrap();
        let grid = Grid::load_overridden(&path, Some(PLAN_SAMPLE), &Overrides::default())
            .expect("a plan's spread does not refuse it");
        assert_eq!((grid.points_checked, grid.points()), (500, 797));
        let err = load_err("spread.toml", text);
        assert!(err.ends_with("(at each of the 797 points)"), "{err}");
    }

    /// A `[set]` key of a mechanism that an axis turns on and off acts at
    /// the points where it is on: the grid is accepted, and where the
    /// mechanism is off the key changes nothing (the run is the run
    /// without it).
    #[test]
    fn a_key_that_acts_at_some_points_is_accepted_and_idle_at_the_others() {
        let short = "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
                     [set]\nhorizon_s = 10\n\"client.duration_s\" = 10\n\
                     \"svc_b.slow.start_s\" = 1.0\n\"svc_b.slow.duration_s\" = 4.0\n\
                     \"svc_a.breaker_failure_rate\" = 0.2\n";
        let g = grid(
            "some.toml",
            &format!(
                "{short}\"svc_a.breaker_open_s\" = 2.0\n\
                 [axes]\n\"svc_a.breaker\" = [false, true]\n"
            ),
        );
        let without = grid(
            "without.toml",
            &format!("{short}[axes]\n\"svc_a.breaker\" = [false, true]\n"),
        );
        let run = |g: &Grid, p: u64| {
            let s = g.scenario(&g.point(p)).unwrap();
            sim_core::run_validated(&s, 1, &mut sim_core::Scratch::default()).unwrap()
        };
        assert_eq!(run(&g, 0), run(&without, 0), "breaker off: no effect");
        assert_ne!(run(&g, 1), run(&without, 1), "breaker on: it acts");
        let open_s = |g: &Grid, p: u64| {
            let s = g.scenario(&g.point(p)).unwrap();
            let svc_a = s.tiers.iter().find(|t| t.name == "svc_a").unwrap();
            svc_a.call.as_ref().unwrap().breaker_open_s
        };
        assert_eq!((open_s(&g, 1), open_s(&without, 1)), (2.0, 1.0));
    }

    /// Per-attempt timeouts beside an axis of max_retries from 0: they act
    /// where the caller makes the attempts they number, so the grid is
    /// accepted (they were refused at the point of one attempt).
    #[test]
    fn per_attempt_timeouts_are_accepted_beside_retries_swept_from_0() {
        let g = grid(
            "timeouts.toml",
            "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
             [set]\n\"svc_a.attempt_timeouts_s\" = [0.1, 0.2]\n\
             [axes]\n\"svc_a.max_retries\" = [0, 3]\n",
        );
        assert_eq!(g.points(), 2);
    }

    /// A slow window's factor beside an axis of its length from 0 acts at
    /// the points of a length above 0: accepted, from the file or `[set]`.
    #[test]
    fn a_window_factor_is_accepted_beside_its_length_swept_from_0() {
        for set in ["", "\"svc_b.slow.factor\" = 5.0\n"] {
            let g = grid(
                "length.toml",
                &format!(
                    "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
                     [set]\n{set}[axes]\n\"svc_b.slow.duration_s\" = [0.0, 20.0]\n"
                ),
            );
            assert_eq!(g.points(), 2, "with `{set}`");
        }
    }

    /// A key that acts at none of a grid's points is refused once, at its
    /// first point, with the reason and how many points there are.
    #[test]
    fn a_key_that_acts_at_no_point_is_refused_once() {
        let err = load_err(
            "none.toml",
            "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
             [set]\n\"svc_a.breaker_open_s\" = 2.0\n\
             [axes]\n\"svc_a.max_retries\" = [1, 2]\n",
        );
        assert_eq!(
            err,
            "none.toml: point 0 (svc_a.max_retries=1): svc_a.breaker_open_s: \
             2.0 has no effect: breaker_open_s is a setting of the circuit breaker, and \
             svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_open_s at its \
             default (1.0) (at each of the 2 points)"
        );
    }

    /// The client's deadline parameters act where an axis gives the client
    /// a deadline: accepted beside `client.deadline_s = [0, 2]`, refused
    /// once without it.
    #[test]
    fn a_client_deadline_parameter_is_accepted_where_an_axis_sets_the_deadline() {
        let text = "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
                    [set]\n\"client.budget_share\" = 0.5\n[axes]\n";
        let g = grid(
            "deadline-axis.toml",
            &format!("{text}\"client.deadline_s\" = [0.0, 2.0]\n"),
        );
        assert_eq!(g.points(), 2);
        assert_eq!(
            load_err(
                "no-deadline.toml",
                &format!("{text}\"svc_b.queue_cap\" = [8, 16]\n")
            ),
            "no-deadline.toml: point 0 (svc_b.queue_cap=8): client.budget_share: acts on a \
             deadline, and the client's requests have none unless client.deadline_s (a user's \
             total patience) is set; set client.deadline_s, or set `budget_share` on a tier \
             that receives a deadline (`<tier>.budget_share`) (at each of the 2 points)"
        );
    }

    /// Open arrivals against closed-loop users in one axis: the rate acts
    /// where `closed.users` is 0, the think time where it is not; each is
    /// idle at the others' points, and the grid is accepted.
    #[test]
    fn open_and_closed_points_share_one_set_of_settings() {
        let g = grid(
            "open-closed.toml",
            "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
             [set]\n\"client.rate_per_s\" = 300.0\n\"client.closed.think.mean_s\" = 1.0\n\
             [axes]\n\"client.closed.users\" = [0, 100]\n",
        );
        let (open, closed) = (
            g.scenario(&g.point(0)).unwrap(),
            g.scenario(&g.point(1)).unwrap(),
        );
        assert_eq!(
            (open.client.closed.users, open.client.rate_per_s),
            (0, 300.0)
        );
        assert_eq!(
            (
                closed.client.closed.users,
                closed.client.closed.think.mean_s
            ),
            (100, 1.0)
        );
    }

    /// A grid that turns off a mechanism its scenario file uses (the slow
    /// mixture, `slow_p = 0`) leaves the file's `slow_s` idle without
    /// having written it: accepted. Written by the grid too, it is refused.
    #[test]
    fn an_idle_key_inherited_from_the_scenario_file_is_the_files_not_the_grids() {
        let mut base = sim_core::builtin("ch37").unwrap();
        let svc_b = base.tiers.iter_mut().find(|t| t.name == "svc_b").unwrap();
        (svc_b.service.slow_p, svc_b.service.slow_s) = (0.1, 2.0);
        let dir = std::env::temp_dir().join(format!("grid-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("slow-base.toml"), toml::to_string(&base).unwrap()).unwrap();
        let text = "name = \"unit\"\nscenario = \"slow-base.toml\"\nseeds = [1]\n\
                    [set]\n\"svc_b.service.slow_p\" = 0.0\n";
        let g = grid(
            "inherits.toml",
            &format!("{text}[axes]\n\"svc_b.queue_cap\" = [8, 16]\n"),
        );
        let s = g.scenario(&g.point(0)).unwrap();
        let svc_b = s.tiers.iter().find(|t| t.name == "svc_b").unwrap();
        assert_eq!((svc_b.service.slow_p, svc_b.service.slow_s), (0.0, 2.0));
        assert_eq!(
            load_err(
                "writes.toml",
                &format!(
                    "{text}\"svc_b.service.slow_s\" = 3.0\n[axes]\n\"svc_b.queue_cap\" = [8, 16]\n"
                )
            ),
            "writes.toml: point 0 (svc_b.queue_cap=8): svc_b.service.slow_s: 3.0 has no effect: \
             service.slow_s is the slow value of the mixture, and svc_b.service.slow_p is 0 (no \
             request takes the slow value); set svc_b.service.slow_p > 0, or leave service.slow_s \
             at its default (0.0) (at each of the 2 points)"
        );
    }

    /// The report may name a metric of some points only (a replica's, in
    /// a replicas sweep from 1); one of no point is refused.
    #[test]
    fn the_report_names_metrics_of_any_point() {
        let text = |metric: &str| {
            format!(
                "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
                 [axes]\n\"svc_b.replicas\" = [1, 4]\n\
                 [report]\nmetrics = [\"{metric}\"]\n"
            )
        };
        let g = grid("replica-metric.toml", &text("svc_b_r3_arrivals"));
        assert!(g.metrics.iter().any(|m| m.name == "svc_b_r3_arrivals"));
        assert_eq!(
            load_err("no-such-replica.toml", &text("svc_b_r4_arrivals")),
            "no-such-replica.toml: report.metrics: `svc_b_r4_arrivals` is not a metric of \
             this scenario; did you mean `svc_b_r0_arrivals`?"
        );
    }

    /// A point that does not validate gives its errors on every call, as
    /// building its scenario does.
    #[test]
    fn with_scenario_reports_an_invalid_point_each_time() {
        let g = grid(
            "invalid.toml",
            "name = \"unit\"\nscenario = \"ch37\"\nseeds = [1]\n\
             [axes]\n\"svc_b.queue_cap\" = [16, 64]\n",
        );
        let bad = vec![("horizon_s".to_string(), Value::Float(5.0))];
        let expected = g.scenario(&bad).unwrap_err();
        for _ in 0..2 {
            assert_eq!(g.with_scenario(&bad, |_| ()).unwrap_err(), expected);
        }
    }
}
