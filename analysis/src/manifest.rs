//! `manifest.json`: a sweep's provenance and counts, written by `sweep`
//! (one per shard, `manifest-s<I>of<N>.json`) and read back here for the
//! grid's dimensions, `[report]` options and the report's header.
//!
//! The JSON field names are the on-disk format: a manifest written by an
//! older `sweep` (without `dimensions` or `report`, say) still reads, its
//! missing fields taking their defaults.

use serde::{Deserialize, Serialize};

/// Which runs of the enumeration a process owns: run `i` belongs to shard
/// `i % count` (round-robin, so every shard gets a fair mix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn owns(&self, run: u64) -> bool {
        run % self.count == self.index
    }
}

impl Default for Shard {
    fn default() -> Self {
        Shard::WHOLE
    }
}

/// How the report draws a grid (the grid's `[report]` table): which axes
/// the heatmap of P(not recovered) uses and which one makes its panels.
/// Each names an axis path (for a zip group, any of its paths). Default:
/// the two axes with the most levels besides `strategy`, panels by
/// `strategy`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heatmap_x: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heatmap_y: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub panels: Option<String>,
    /// The client group whose users the report's recovery, success rates,
    /// user latencies and success-rate plots are about (default: every
    /// group's users together); see [`GROUP_VIEW`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Metrics (`runs` columns) the grid is about, summarised and ranked
    /// besides the usual ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<String>,
    /// Combinations of the other axes to draw time plots of, each as
    /// `"path=level, path=level"` (every named pair must match; axes not
    /// named may take any level), before those the report picks itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<String>,
    /// The outcome scenario discovery looks for, as a boolean expression
    /// over metrics ([`crate::outcome`]); default `not recovered`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prim: Option<String>,
    /// Where the `reference` figures were published, in a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_source: Option<String>,
    /// Published figures of the experiment the grid repeats, shown beside
    /// the model's (`[[report.reference]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference: Vec<Reference>,
}

/// The user-level metrics a scenario with several client groups has per
/// group too (`group_<g>_<name>`): with `[report] group`, the report reads
/// the group's in their place.
pub const GROUP_VIEW: &[&str] = &[
    "users",
    "users_ok",
    "users_failed",
    "success_rate",
    "users_before",
    "users_during",
    "users_after",
    "success_rate_before",
    "success_rate_during",
    "success_rate_after",
    "recovered",
    "recovery_s",
    "recovery_censored_s",
    "success_latency_median_s",
    "success_latency_p99_s",
    "failed_latency_median_s",
    "users_unfinished",
];

impl ReportOptions {
    /// The path of the duration of the arrivals the report's recovery is
    /// judged on: its group's (`client` by default).
    pub fn duration_path(&self) -> String {
        format!("{}.duration_s", self.group.as_deref().unwrap_or("client"))
    }

    /// The runs column the report reads for metric `name`: with
    /// `[report] group`, the group's own for a user-level metric
    /// ([`GROUP_VIEW`]), else `name`.
    pub fn column_of(&self, name: &str) -> String {
        self.group_column(GROUP_VIEW, name)
    }

    /// The series column the report reads for `name`: with
    /// `[report] group`, the group's own for a users' series
    /// ([`GROUP_SERIES`]), else `name`.
    pub fn series_of(&self, name: &str) -> String {
        self.group_column(GROUP_SERIES, name)
    }

    fn group_column(&self, per_group: &[&str], name: &str) -> String {
        match &self.group {
            Some(g) if per_group.contains(&name) => format!("group_{g}_{name}"),
            _ => name.to_string(),
        }
    }
}

/// The per-second series of users a group has too (`group_<g>_<name>`).
pub const GROUP_SERIES: &[&str] = &["user_arrivals", "user_ok_by_arrival"];

/// One published figure: the value of `metric` at the grid point `point`
/// (`"path=level, path=level"`), and why the model's differs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub point: String,
    pub metric: String,
    pub published: f64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// A sampled design (the grid's `[sample]`), for the analyses that read it:
/// the design is the grid's last dimension, its paths `axes` in order, and
/// the runs table's `sample_index` is the row of the design (SALib's order).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleDesign {
    /// `lhs`, `sobol`, `morris` or `boundary`.
    pub method: String,
    /// Base points (sobol), trajectories (morris) or points (lhs).
    pub n: u64,
    pub seed: u64,
    /// Seeds per sample point.
    pub replicates: u64,
    /// Sobol: the design has the BA rows of second-order terms.
    pub second_order: bool,
    /// Morris: the levels of its grid.
    pub levels: u64,
    /// LHS: chosen for the largest smallest distance between points.
    pub maximin: bool,
    pub axes: Vec<SampledAxis>,
    /// `boundary`: how the adaptive search picks its points (`n` is its
    /// budget of points per combination of categories; the design's rows
    /// are the candidates it picks from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boundary: Option<BoundarySearch>,
}

/// The rules of an adaptive boundary search (`[sample] method = "boundary"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BoundarySearch {
    /// P(not recovered) that marks the boundary.
    pub threshold: f64,
    /// Points of the first round (the candidates' first, space-filling).
    pub initial: u64,
    /// Points per later round.
    pub batch: u64,
    /// Smallest distance (unit coordinates) between two points of a round.
    pub spacing: f64,
    /// Stop once two rounds in a row move the boundary by less than this:
    /// the share of candidates whose predicted side of the threshold changed.
    pub tolerance: f64,
    /// Candidate points (the first of a scrambled Sobol' sequence).
    pub candidates: u64,
}

/// One continuous (or integer) axis of a sampled design.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampledAxis {
    pub path: String,
    pub min: f64,
    pub max: f64,
    pub log: bool,
    pub integer: bool,
}

/// A trigger window of the scenario: its parameters' path prefix
/// (`svc_b.slow`, `db.crash`, `client.spike`, `db.cache` for a flush).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriggerWindow {
    pub path: String,
    pub start_s: f64,
    pub duration_s: f64,
    /// A slow window's or spike's factor (1: it changes nothing).
    pub factor: Option<f64>,
}

/// Provenance and counts, written beside the data (and as file metadata).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    pub tool: String,
    pub git_commit: String,
    pub grid_name: String,
    pub grid_file: String,
    pub grid_sha256: String,
    pub grid_text: String,
    pub scenario: String,
    pub scenario_id: String,
    /// The scenario file's text (empty for a built-in scenario, and in
    /// manifests written before it), so that an edit can be told by key.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub scenario_text: String,
    /// Grid and scenario content; a directory is resumed only by the same.
    pub fingerprint: String,
    pub shard: Shard,
    pub host: String,
    pub threads: usize,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// `running`, `complete`, `interrupted`, or `merged`.
    pub status: String,
    /// The grid's axis paths (columns of the runs table that vary), in order.
    pub axes: Vec<String>,
    /// The grid's dimensions: one axis, or the paths of one zip group.
    /// Manifests written before zip groups have none (see
    /// [`Manifest::dimension_paths`]).
    pub dimensions: Vec<Vec<String>>,
    /// The fixed overrides' paths (columns that do not vary).
    pub fixed: Vec<String>,
    /// The scenario's own trigger windows, before the grid's overrides: a
    /// report shades one that no column of the runs names as what it is
    /// (a crash set in the scenario file, not the grid). Manifests written
    /// before it have none.
    pub triggers: Vec<TriggerWindow>,
    /// The base scenario's recovery threshold (the share of users that
    /// must succeed, R2), where no grid key sets it per point; manifests
    /// written before it have none (the default, 0.99, is meant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_threshold: Option<f64>,
    /// The grid's `[report]` options.
    pub report: ReportOptions,
    /// The sampled design, when the grid has `[sample]` (its last dimension).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub design: Option<SampleDesign>,
    /// Runs this manifest covers (the shard's, or the whole grid's).
    pub planned: u64,
    /// Of the planned runs, those this manifest's writer ran (`ok`,
    /// `failed`) and, in a complete shard, those it found written by
    /// shards of another split before it (`reused`): planned = ok + failed
    /// + reused.
    pub ok: u64,
    pub failed: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub reused: u64,
    pub events_total: u64,
    pub command: Vec<String>,
    /// The `--set` and `--axis` flags the grid was run with, as they are
    /// typed again (shell-quoted, each after a space; empty: none): a
    /// resume must give the same. `None` in manifests written before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<String>,
    /// The command that finishes these results, around its `--out`: what
    /// every message and report that says how to resume prints
    /// ([`Manifest::resume_command`]). `None` in manifests written before
    /// it, and in merged results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
    /// The versions (`tool (commit)`) that wrote parts of these results
    /// before the one named above, when a resume was allowed to change it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub earlier_versions: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A tool and commit as a person reads them: `sweep 0.1.0 (commit abc1234)`.
pub fn version(tool: &str, git_commit: &str) -> String {
    format!("{tool} (commit {git_commit})")
}

/// A command that finishes a sweep, without its directory (which may have
/// moved since): `{command} --out DIR{then}`, every word shell-quoted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resume {
    /// `sweep run GRID` and its `--set`/`--axis` flags, or `sweep refine
    /// GRID` and the refinement's flags.
    pub command: String,
    /// What follows `--out DIR`: ` --resume` and a shard's `--shard i/n`
    /// for a run, nothing for a refinement (it always reuses its runs).
    pub then: String,
}

impl Manifest {
    /// The command that finishes these results in the directory
    /// `quoted_dir` (already quoted as the text it goes into needs).
    pub fn resume_command(&self, quoted_dir: &str) -> Option<String> {
        (self.resume.as_ref()).map(|r| format!("{} --out {quoted_dir}{}", r.command, r.then))
    }

    /// The tool and commit that wrote it, as a person reads them.
    pub fn version(&self) -> String {
        version(&self.tool, &self.git_commit)
    }

    /// The paths of each dimension: `dimensions`, or one per axis for a
    /// manifest that predates zip groups.
    pub fn dimension_paths(&self) -> Vec<Vec<String>> {
        if self.dimensions.is_empty() {
            self.axes.iter().map(|a| vec![a.clone()]).collect()
        } else {
            self.dimensions.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_old_manifest_without_dimensions_or_report_reads() {
        let m: Manifest = serde_json::from_str(
            r#"{"grid_name": "old", "axes": ["strategy", "x"], "shard": {"index": 1, "count": 2},
                "planned": 8, "finished_at": null, "status": "complete"}"#,
        )
        .unwrap();
        assert_eq!(m.grid_name, "old");
        assert_eq!(m.shard, Shard { index: 1, count: 2 });
        assert_eq!(m.dimension_paths(), [["strategy"], ["x"]]);
        assert_eq!(m.report, ReportOptions::default());
        assert_eq!(m.finished_at, None);
    }

    #[test]
    fn a_manifest_round_trips_with_its_field_names() {
        let m = Manifest {
            grid_name: "g".into(),
            dimensions: vec![vec!["a".into(), "b".into()]],
            report: ReportOptions {
                panels: Some("a".into()),
                ..ReportOptions::default()
            },
            ..Manifest::default()
        };
        let json: serde_json::Value = serde_json::to_value(&m).unwrap();
        for key in [
            "grid_name",
            "fingerprint",
            "shard",
            "dimensions",
            "report",
            "events_total",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
        assert_eq!(json["report"], serde_json::json!({"panels": "a"}));
        let back: Manifest = serde_json::from_value(json).unwrap();
        assert_eq!(back.dimension_paths(), [["a", "b"]]);
    }
}
