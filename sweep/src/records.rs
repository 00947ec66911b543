//! The two output tables, `runs` and `series`, built batch by batch.
//!
//! `runs`: one row per run: identity (`run_id`, `point_id`, `seed`,
//! `run_index`), one typed column per fixed override and axis (named by its
//! path), `status`, `error`, `events`, `wall_ms`, and every metric of
//! [`sim_core::RunResult::metrics`] under its own name (null for failed runs).
//!
//! `success_latency_histogram`, `failed_latency_histogram`: the finished
//! users' latencies per bucket of [`sim_core::result::LATENCY_EDGES_NS`]
//! (a list of counts, one more than the edges).
//!
//! `series`: one row per run and simulated second (ok runs only): the
//! user-level counts, with client groups `group_<g>_user_arrivals` and
//! `group_<g>_user_ok_by_arrival` per group (and `group_<g>_backlog` per
//! further group: its queue's messages waiting), then `<tier>_<counter>` per
//! tier, and for a tier with
//! replicas somewhere in the grid, `<tier>_replica_queue_len` and
//! `<tier>_replica_busy` (a list of each replica's count).
//!
//! Counts are written as `Int64`, not `UInt64`: in a notebook the difference
//! of two counts (`users_ok - users`) is then negative, not a wrapped
//! 18446744073709551615-something.

use crate::grid::PointColumn;
use polars::prelude::*;
use sim_core::params::Kind;
use sim_core::{RunResult, Value as Metric};
use std::collections::HashMap;

/// Why a run has no result; its message is the runs table's `error`.
#[derive(Clone, Debug, thiserror::Error)]
pub enum RunFailure {
    /// The point's scenario does not validate.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<sim_core::ConfigError>),
    /// The simulation panicked (the panic's message).
    #[error("panicked: {0}")]
    Panicked(String),
    #[error("{0}")]
    Run(sim_core::RunError),
}

/// What executing one run produced.
pub struct Outcome {
    pub index: u64,
    pub run_id: String,
    pub point_id: String,
    pub seed: u64,
    pub point: Vec<(String, toml::Value)>,
    pub wall_ms: f64,
    pub result: Result<RunResult, RunFailure>,
}

/// The column layout of a sweep's tables, fixed before the first run so that
/// every part file has the same schema, failed-only batches included.
pub struct Layout {
    pub point: Vec<PointColumn>,
    /// The metrics (name, a value of each one's type, doc and unit).
    pub metrics: Vec<sim_core::Metric>,
    /// Each metric's column, by name (for runs whose metrics are not the
    /// table's in its order).
    column_of: HashMap<String, usize>,
    /// The digest of the metrics' names in their order: a run whose
    /// metrics have it gives its values without its names.
    digest: sim_core::result::NamesDigest,
    pub tiers: Vec<String>,
    /// Per tier: it has replicas at some point of the grid (several in the
    /// scenario, or `<tier>.replicas` set or swept), so the series carry
    /// each replica's queue and busy counts.
    pub replicated: Vec<bool>,
    /// Per tier: the callers above it that may retry at some point of the
    /// grid (their index in `Scenario::edges()` and metric name), so the
    /// series carry `<tier>_retries_from_<caller>`: a column per caller
    /// that can send retries, not per edge of the scenario.
    pub retry_origins: Vec<Vec<(usize, String)>>,
    /// Some point of the grid has sub-second series (`series_bin_s` under
    /// 1 in the scenario, or set or swept): the series carry each tier's
    /// `<tier>_arrivals_by_bin` and `_retries_by_bin` (lists).
    pub binned: bool,
    /// The client groups, `client` first, when the scenario has several
    /// (the series then carry each group's users by arrival).
    pub groups: Vec<String>,
}

/// What a column holds, in the `sweep.columns` metadata of every part.
#[derive(serde::Serialize)]
struct ColumnDoc {
    name: String,
    description: String,
    unit: &'static str,
}

/// The metadata key of the column descriptions (a JSON list of `name`,
/// `description`, `unit`, in column order).
pub const COLUMNS_KEY: &str = "sweep.columns";

/// The per-second counters of each tier in `series` (`<tier>_<suffix>`).
const TIER_SERIES: [(&str, SeriesColumn, &str, &str); 12] = [
    (
        "arrivals",
        |x| &x.arrivals,
        "requests received by the tier in that second",
        "count",
    ),
    (
        "retries",
        |x| &x.retries,
        "arrivals that exist because of a retry or hedge sent by the tier's caller or any caller above it",
        "count",
    ),
    (
        "hedges",
        |x| &x.hedges,
        "the retries whose nearest retry or hedge in their lineage is a hedged copy (of any caller above)",
        "count",
    ),
    (
        "after_user_left",
        |x| &x.after_user_left,
        "arrivals for a user request that had already ended",
        "count",
    ),
    (
        "admitted",
        |x| &x.admitted,
        "requests admitted by the tier in that second",
        "count",
    ),
    (
        "completed",
        |x| &x.completed,
        "requests completed by the tier in that second",
        "count",
    ),
    (
        "late",
        |x| &x.late,
        "completions nobody waited for in that second",
        "count",
    ),
    (
        "queue_len",
        |x| &x.queue_len,
        "queue length at the end of the second",
        "requests",
    ),
    (
        "busy",
        |x| &x.busy,
        "busy slots at the end of the second",
        "slots",
    ),
    (
        "limit",
        |x| &x.limit,
        "the adaptive concurrency limit at the end of the second, summed over replicas (0 without one)",
        "requests",
    ),
    (
        "cache_hits",
        |x| &x.cache_hits,
        "lookups of the look-aside cache in front of the tier that hit in that second (0 without a cache)",
        "count",
    ),
    (
        "cache_misses",
        |x| &x.cache_misses,
        "lookups of the cache that missed and went to the tier in that second",
        "count",
    ),
];

/// Per tier, the callers above it that may retry at some point of a grid
/// whose point columns are `point`: `max_retries` above 0 in `scenario`
/// (its first point), in one of its presets, or set or swept, or a group
/// whose queue redelivers; a group whose `calls` is set or swept counts at
/// every tier.
fn retry_origins(
    point: &[PointColumn],
    scenario: &sim_core::Scenario,
) -> Vec<Vec<(usize, String)>> {
    let edges = scenario.edges();
    let n = scenario.tiers.len();
    // Tiers a request at each tier can lead to; edges only call later
    // tiers, so from the last one up.
    let mut reaches = vec![vec![false; n]; n];
    for u in (0..n).rev() {
        reaches[u][u] = true;
        for e in edges.iter().filter(|e| e.from == Some(u)) {
            let below = reaches[e.to].clone();
            (reaches[u].iter_mut().zip(below)).for_each(|(r, b)| *r |= b);
        }
    }
    let set = |key: &str| {
        point.iter().any(|c| c.path == key)
            || scenario.presets.values().any(|p| p.contains_key(key))
    };
    // A group's queue redelivers failed messages: retries of the group's.
    let redelivers = |e: &sim_core::scenario::Edge| {
        (e.from.is_none() && (scenario.clients.get(&e.path)).is_some_and(|c| c.queue.consumers > 0))
            || set(&format!("{}.queue.consumers", e.path))
    };
    // A group whose `calls` is set or swept may call another tier at
    // another point: it may reach any tier.
    let may_reach = |e: &sim_core::scenario::Edge, t: usize| {
        reaches[e.to][t] || (e.from.is_none() && set(&format!("{}.calls", e.path)))
    };
    let may_retry = |e: &sim_core::scenario::Edge| {
        e.call.max_retries > 0 || set(&format!("{}.max_retries", e.path)) || redelivers(e)
    };
    (0..n)
        .map(|t| {
            (edges.iter().enumerate())
                .filter(|(_, e)| may_reach(e, t) && may_retry(e))
                .map(|(i, e)| (i, e.name.clone()))
                .collect()
        })
        .collect()
}

/// The tier series that also come per replica.
const REPLICA_SERIES: [&str; 2] = ["queue_len", "busy"];

impl Layout {
    /// The tables of a grid's runs: `point`, its columns; `scenario`, a
    /// point's (its tiers, groups, series); `metrics`, the metric columns,
    /// those of every point ([`crate::grid::Grid::metrics`]).
    pub fn new(
        point: Vec<PointColumn>,
        scenario: &sim_core::Scenario,
        metrics: Vec<sim_core::Metric>,
    ) -> Layout {
        // A key another point may set: an axis, a `[set]` key, or a preset
        // (a `strategy` axis applies each).
        let set = |key: &str| {
            point.iter().any(|c| c.path == key)
                || scenario.presets.values().any(|p| p.contains_key(key))
        };
        let replicated = (scenario.tiers.iter())
            .map(|t| t.replicas > 1 || set(&format!("{}.replicas", t.name)))
            .collect();
        Layout {
            retry_origins: retry_origins(&point, scenario),
            binned: scenario.series_bin_s < 1.0 || set("series_bin_s"),
            point,
            column_of: (metrics.iter().enumerate())
                .map(|(k, m)| (m.name.clone(), k))
                .collect(),
            digest: sim_core::result::NamesDigest::of(metrics.iter().map(|m| m.name.as_str())),
            metrics,
            tiers: scenario.tiers.iter().map(|t| t.name.clone()).collect(),
            replicated,
            groups: if scenario.clients.is_empty() {
                Vec::new()
            } else {
                scenario
                    .groups()
                    .map(|(name, _)| name.to_string())
                    .collect()
            },
        }
    }

    /// The key-value metadata of the `runs` and `series` parts: `common`,
    /// and each column's description and unit under [`COLUMNS_KEY`] (the
    /// metrics' from `sim_core`'s list, the parameters' from the catalogue).
    pub fn metadata(&self, common: &[(String, String)]) -> PartMetadata {
        let doc = |name: &str, description: &str, unit: &'static str| ColumnDoc {
            name: name.to_string(),
            description: description.to_string(),
            unit,
        };
        let mut runs = vec![
            doc("run_id", "the run's id: SHA-256 of its point and seed", ""),
            doc(
                "point_id",
                "the point's id: SHA-256 of its parameter values",
                "",
            ),
            doc("seed", "the seed of the run's random streams", ""),
            doc(
                "run_index",
                "the run's position in the grid's enumeration",
                "",
            ),
        ];
        for pc in &self.point {
            let about = match pc.path.as_str() {
                crate::grid::SAMPLE_INDEX => {
                    "the sampled design's row (point) of the run, in the design's order".to_string()
                }
                // A zip group's `name` labels its levels (`[set] name` the scenario).
                "name" => "label: the zip group's name of the run's level, or the scenario's label"
                    .to_string(),
                path => format!(
                    "parameter: {}",
                    sim_core::params::param_of(path).map_or("", |p| p.doc)
                ),
            };
            runs.push(doc(&pc.path, &about, unit_of_path(&pc.path)));
        }
        runs.extend([
            doc("status", "ok, or failed (then the metrics are null)", ""),
            doc("error", "why a failed run failed (null for ok runs)", ""),
            doc("wall_ms", "wall-clock time of the run on its worker", "ms"),
        ]);
        runs.extend(self.metrics.iter().map(|m| doc(&m.name, m.doc, m.unit)));
        runs.extend([
            doc(
                "success_latency_histogram",
                "successful users' latencies per bucket of sweep.latency_edges_s (a list, one more than the edges)",
                "count",
            ),
            doc(
                "failed_latency_histogram",
                "failed users' latencies per bucket of sweep.latency_edges_s (a list, one more than the edges)",
                "count",
            ),
        ]);
        let mut series = vec![
            doc("run_id", "the run (see runs.run_id)", ""),
            doc("second", "simulated second", "s"),
            doc("user_arrivals", "users arriving in that second", "count"),
            doc(
                "user_ok_by_arrival",
                "users arriving in that second who succeeded",
                "count",
            ),
            doc(
                "success_rate",
                "user_ok_by_arrival / user_arrivals",
                "share (0-1)",
            ),
            doc(
                "successes",
                "users finishing in that second with success",
                "count",
            ),
            doc(
                "failures",
                "users finishing in that second with a failure",
                "count",
            ),
        ];
        for g in &self.groups {
            series.extend([
                doc(
                    &format!("group_{g}_user_arrivals"),
                    "users of this client group arriving in that second",
                    "count",
                ),
                doc(
                    &format!("group_{g}_user_ok_by_arrival"),
                    "users of this client group arriving in that second who succeeded",
                    "count",
                ),
            ]);
        }
        // Every further group's (`client` has no queue), as its metrics.
        for g in self.groups.iter().skip(1) {
            series.push(doc(
                &format!("group_{g}_backlog"),
                "messages waiting in this group's queue at the end of that second (0 without one)",
                "count",
            ));
        }
        for (i, (t, replicated)) in self.tiers.iter().zip(&self.replicated).enumerate() {
            series.extend(
                TIER_SERIES
                    .iter()
                    .map(|(suffix, _, about, unit)| doc(&format!("{t}_{suffix}"), about, unit)),
            );
            series.extend(self.retry_origins[i].iter().map(|(_, caller)| {
                doc(
                    &format!("{t}_retries_from_{caller}"),
                    &format!("the retries whose nearest retry in their lineage was sent by {caller} (its own retries, or a first try for one of them)"),
                    "count",
                )
            }));
            if *replicated {
                series.extend(
                    (TIER_SERIES.iter())
                        .filter(|c| REPLICA_SERIES.contains(&c.0))
                        .map(|(suffix, _, about, unit)| {
                            let about = format!("per replica (a list, replica 0 first; empty with one instance): {about}");
                            doc(&format!("{t}_replica_{suffix}"), &about, unit)
                        }),
                );
            }
            if self.binned {
                for what in ["arrivals", "retries"] {
                    series.push(doc(
                        &format!("{t}_{what}_by_bin"),
                        &format!("the second's {what} per bin of series_bin_s (a list, the second's first bin first; empty without bins): they add up to {t}_{what}"),
                        "count",
                    ));
                }
            }
            series.push(doc(
                &format!("{t}_capacity_per_s"),
                "slots / mean service time, slowed by the slow windows in force, 0 while crashed, summed over replicas (null: no work of its own)",
                "per s",
            ));
        }
        let with = |docs: Vec<ColumnDoc>| {
            let mut kv = common.to_vec();
            kv.push((
                COLUMNS_KEY.to_string(),
                serde_json::to_string(&docs).expect("column docs serialize"),
            ));
            kv
        };
        PartMetadata {
            runs: with(runs),
            series: with(series),
        }
    }

    pub fn runs_frame(&self, batch: &[Outcome]) -> PolarsResult<DataFrame> {
        let n = batch.len();
        let mut cols: Vec<Column> = vec![
            Column::new(
                "run_id".into(),
                batch.iter().map(|o| o.run_id.as_str()).collect::<Vec<_>>(),
            ),
            Column::new(
                "point_id".into(),
                batch
                    .iter()
                    .map(|o| o.point_id.as_str())
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "seed".into(),
                batch.iter().map(|o| o.seed).collect::<Vec<_>>(),
            ),
            Column::new(
                "run_index".into(),
                batch.iter().map(|o| o.index).collect::<Vec<_>>(),
            ),
        ];
        for (j, pc) in self.point.iter().enumerate() {
            let values = batch.iter().map(|o| &o.point[j].1);
            cols.push(point_column(&pc.path, pc.kind, values)?);
        }
        cols.push(categorical(Column::new(
            "status".into(),
            batch
                .iter()
                .map(|o| if o.result.is_ok() { "ok" } else { "failed" })
                .collect::<Vec<_>>(),
        ))?);
        cols.push(Column::new(
            "error".into(),
            batch
                .iter()
                .map(|o| o.result.as_ref().err().map(ToString::to_string))
                .collect::<Vec<_>>(),
        ));
        cols.push(Column::new(
            "wall_ms".into(),
            batch.iter().map(|o| o.wall_ms).collect::<Vec<_>>(),
        ));
        let metrics: Vec<Option<Vec<Option<sim_core::Value>>>> = batch
            .iter()
            .map(|o| match &o.result {
                Ok(r) => self.columns_of(&o.run_id, r).map(Some),
                Err(_) => Ok(None),
            })
            .collect::<PolarsResult<_>>()?;
        for (k, m) in self.metrics.iter().enumerate() {
            let name = &m.name;
            let at = |i: usize| metrics[i].as_ref().and_then(|m| m[k]);
            let col = match m.value {
                Metric::Count(_) => Column::new(
                    name.into(),
                    (0..n).map(|i| at(i).map(as_count)).collect::<Vec<_>>(),
                ),
                Metric::Flag(_) | Metric::MaybeFlag(_) => Column::new(
                    name.into(),
                    (0..n).map(|i| at(i).and_then(as_bool)).collect::<Vec<_>>(),
                ),
                Metric::Real(_) | Metric::MaybeReal(_) => Column::new(
                    name.into(),
                    (0..n).map(|i| at(i).and_then(as_f64)).collect::<Vec<_>>(),
                ),
            };
            cols.push(col);
        }
        type Histogram = fn(&sim_core::result::LatencyHistogram) -> &Vec<u64>;
        let histograms: [(&str, Histogram); 2] = [
            ("success_latency_histogram", |h| &h.ok),
            ("failed_latency_histogram", |h| &h.failed),
        ];
        for (name, get) in histograms {
            let buckets = sim_core::result::LATENCY_EDGES_NS.len() + 1;
            let mut list = ListPrimitiveChunkedBuilder::<Int64Type>::new(
                name.into(),
                n,
                n * buckets,
                DataType::Int64,
            );
            for o in batch {
                match &o.result {
                    Ok(r) => {
                        let counts: Vec<i64> = get(&r.latency_histogram)
                            .iter()
                            .map(|c| count(*c))
                            .collect();
                        list.append_slice(&counts);
                    }
                    Err(_) => list.append_null(),
                }
            }
            cols.push(list.finish().into_column());
        }
        DataFrame::new(n, cols)
    }

    /// A run's metric values in the order of the table's metric columns:
    /// null where the run has no such metric (a point with fewer replicas
    /// than another). A metric the table has no column for is an error,
    /// never a value dropped or written under another name.
    fn columns_of(
        &self,
        run_id: &str,
        run: &RunResult,
    ) -> PolarsResult<Vec<Option<sim_core::Value>>> {
        let (same, digest) = run.metric_values();
        if digest == self.digest {
            return Ok(same.into_iter().map(Some).collect());
        }
        let mut values = vec![None; self.metrics.len()];
        for m in run.metrics() {
            let Some(&k) = self.column_of.get(&m.name) else {
                polars_bail!(ComputeError: "run {run_id}: metric `{}` has no column in the runs table (a point the grid did not check at load has metrics the checked ones lack)", m.name);
            };
            values[k] = Some(m.value);
        }
        Ok(values)
    }

    pub fn series_frame(&self, batch: &[Outcome]) -> PolarsResult<DataFrame> {
        let ok: Vec<(&str, &RunResult)> = batch
            .iter()
            .filter_map(|o| o.result.as_ref().ok().map(|r| (o.run_id.as_str(), r)))
            .collect();
        let rows: usize = ok.iter().map(|(_, r)| r.series.seconds()).sum();
        let flat = |f: &dyn Fn(&RunResult, usize) -> u64| -> Vec<i64> {
            ok.iter()
                .flat_map(|(_, r)| (0..r.series.seconds()).map(move |s| count(f(r, s))))
                .collect()
        };
        let mut cols = vec![
            Column::new(
                "run_id".into(),
                ok.iter()
                    .flat_map(|(id, r)| std::iter::repeat_n(*id, r.series.seconds()))
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "second".into(),
                ok.iter()
                    .flat_map(|(_, r)| 0..r.series.seconds() as i64)
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "user_arrivals".into(),
                flat(&|r, s| r.series.user_arrivals[s]),
            ),
            Column::new(
                "user_ok_by_arrival".into(),
                flat(&|r, s| r.series.user_ok_by_arrival[s]),
            ),
            Column::new(
                "success_rate".into(),
                ok.iter()
                    .flat_map(|(_, r)| {
                        (0..r.series.seconds()).map(move |s| r.series.success_rate(s))
                    })
                    .collect::<Vec<_>>(),
            ),
            Column::new("successes".into(), flat(&|r, s| r.series.successes[s])),
            Column::new("failures".into(), flat(&|r, s| r.series.failures[s])),
        ];
        for (g, name) in self.groups.iter().enumerate() {
            cols.push(Column::new(
                format!("group_{name}_user_arrivals").into(),
                flat(&|r, s| r.series.groups[g].user_arrivals[s]),
            ));
            cols.push(Column::new(
                format!("group_{name}_user_ok_by_arrival").into(),
                flat(&|r, s| r.series.groups[g].user_ok_by_arrival[s]),
            ));
        }
        for (g, name) in self.groups.iter().enumerate().skip(1) {
            cols.push(Column::new(
                format!("group_{name}_backlog").into(),
                flat(&|r, s| r.series.groups[g].backlog[s]),
            ));
        }
        for (t, name) in self.tiers.iter().enumerate() {
            for (suffix, get, _, _) in TIER_SERIES {
                cols.push(Column::new(
                    format!("{name}_{suffix}").into(),
                    flat(&|r, s| get(&r.series.tiers[t])[s]),
                ));
            }
            for (edge, caller) in &self.retry_origins[t] {
                let from = |r: &RunResult, s: usize| {
                    (r.series.tiers[t].retries_from.iter())
                        .find(|f| f.edge == *edge)
                        .map_or(0, |f| f.per_s[s])
                };
                cols.push(Column::new(
                    format!("{name}_retries_from_{caller}").into(),
                    flat(&from),
                ));
            }
            if self.replicated[t] {
                for (suffix, get, _, _) in
                    TIER_SERIES.iter().filter(|c| REPLICA_SERIES.contains(&c.0))
                {
                    cols.push(replica_column(
                        &format!("{name}_replica_{suffix}"),
                        &ok,
                        t,
                        *get,
                    ));
                }
            }
            if self.binned {
                type Bins = fn(&sim_core::result::TierSeries) -> &Vec<u64>;
                let kinds: [(&str, Bins); 2] = [
                    ("arrivals", |x| &x.arrivals_by_bin),
                    ("retries", |x| &x.retries_by_bin),
                ];
                for (what, get) in kinds {
                    cols.push(bin_column(&format!("{name}_{what}_by_bin"), &ok, t, get));
                }
            }
            cols.push(Column::new(
                format!("{name}_capacity_per_s").into(),
                ok.iter()
                    .flat_map(|(_, r)| r.series.tiers[t].capacity_per_s.iter().copied())
                    .collect::<Vec<_>>(),
            ));
        }
        DataFrame::new(rows, cols)
    }
}

/// One per-second counter of a tier.
type SeriesColumn = fn(&sim_core::result::TierSeries) -> &Vec<u64>;

/// Per run and second, counter `get` of each replica of tier `t` (replica
/// 0 first) as a list; an empty list at a point where the tier has one
/// instance.
fn replica_column(name: &str, ok: &[(&str, &RunResult)], t: usize, get: SeriesColumn) -> Column {
    let rows: usize = ok.iter().map(|(_, r)| r.series.seconds()).sum();
    let replicas = ok
        .iter()
        .map(|(_, r)| r.series.tiers[t].replicas.len())
        .max()
        .unwrap_or(0);
    let mut list = ListPrimitiveChunkedBuilder::<Int64Type>::new(
        name.into(),
        rows,
        rows * replicas,
        DataType::Int64,
    );
    for (_, r) in ok {
        let tier = &r.series.tiers[t];
        for sec in 0..r.series.seconds() {
            let values: Vec<i64> = tier.replicas.iter().map(|p| count(get(p)[sec])).collect();
            list.append_slice(&values);
        }
    }
    list.finish().into_column()
}

/// Per run and second, the sub-second counts `get` of tier `t` in that
/// second as a list (`bins` of them); an empty list at a point without bins.
fn bin_column(name: &str, ok: &[(&str, &RunResult)], t: usize, get: SeriesColumn) -> Column {
    let rows: usize = ok.iter().map(|(_, r)| r.series.seconds()).sum();
    let mut list =
        ListPrimitiveChunkedBuilder::<Int64Type>::new(name.into(), rows, rows, DataType::Int64);
    for (_, r) in ok {
        let bins = get(&r.series.tiers[t]);
        let per_s = bins.len() / r.series.seconds().max(1);
        for sec in 0..r.series.seconds() {
            let values: Vec<i64> = (bins.iter().skip(sec * per_s).take(per_s))
                .map(|c| count(*c))
                .collect();
            list.append_slice(&values);
        }
    }
    list.finish().into_column()
}

/// The key-value metadata of each table's parts.
pub struct PartMetadata {
    pub runs: Vec<(String, String)>,
    pub series: Vec<(String, String)>,
}

/// A parameter's unit, by the naming convention of the catalogue's paths
/// (`_s`: seconds, `_per_s`: per second).
fn unit_of_path(path: &str) -> &'static str {
    // The one `_s` key that is not a time: a Zipf exponent.
    if path.ends_with("tenant_zipf_s") {
        ""
    } else if path.ends_with("_per_s") {
        "per s"
    } else if path.ends_with("_s") {
        "s"
    } else {
        ""
    }
}

/// An override column typed by its parameter's kind; `"unbounded"` caps are null.
fn point_column<'a>(
    path: &str,
    kind: Kind,
    values: impl Iterator<Item = &'a toml::Value>,
) -> PolarsResult<Column> {
    let name: PlSmallStr = path.into();
    Ok(match kind {
        Kind::Float => Column::new(
            name,
            values
                .map(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
                .collect::<Vec<_>>(),
        ),
        Kind::Int | Kind::Cap => Column::new(
            name,
            values
                .map(|v| {
                    v.as_integer()
                        .or(v.as_float().filter(|x| x.fract() == 0.0).map(|x| x as i64))
                })
                .collect::<Vec<_>>(),
        ),
        Kind::Bool => Column::new(name, values.map(toml::Value::as_bool).collect::<Vec<_>>()),
        // A list (of indexes, numbers or names) is written as its TOML text (`[2]`).
        Kind::Choice(_) | Kind::Text | Kind::Indexes | Kind::Floats | Kind::Choices(_) => {
            return categorical(Column::new(
                name,
                values
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect::<Vec<_>>(),
            ));
        }
    })
}

/// A column of few distinct strings as a categorical: dictionary-encoded
/// in Parquet, a `category` in pandas and a `Categorical` in polars.
fn categorical(c: Column) -> PolarsResult<Column> {
    c.cast(&DataType::from_categories(Categories::global()))
}

/// A count as written (`Int64`); no simulation counts to 2^63.
fn count(c: u64) -> i64 {
    i64::try_from(c).expect("a count below 2^63")
}
fn as_count(v: Metric) -> i64 {
    match v {
        Metric::Count(c) => count(c),
        other => unreachable!("count column got {other:?}"),
    }
}
fn as_bool(v: Metric) -> Option<bool> {
    match v {
        Metric::Flag(b) => Some(b),
        Metric::MaybeFlag(b) => b,
        other => unreachable!("flag column got {other:?}"),
    }
}
fn as_f64(v: Metric) -> Option<f64> {
    match v {
        Metric::Real(x) => Some(x),
        Metric::MaybeReal(x) => x,
        other => unreachable!("real column got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_parameter_column_has_the_unit_of_its_key() {
        assert_eq!(super::unit_of_path("svc_a.attempt_timeout_s"), "s");
        assert_eq!(super::unit_of_path("client.rate_per_s"), "per s");
        // A Zipf exponent, not a time.
        assert_eq!(super::unit_of_path("client.tenant_zipf_s"), "");
        assert_eq!(super::unit_of_path("svc_b.slots"), "");
    }
}
