//! `analysis`: turns a sweep's Parquet output into the tables users read.
//!
//! Reads lazily with polars (only the columns it needs), so the size of a
//! sweep is bounded by disk, not memory. Writes under `OUT_DIR/analysis/`.

pub mod plots;
pub mod sensitivity;
pub mod stats;

use polars::prelude::*;
use std::fs::File;
use std::path::Path;

/// The metrics summarised per point, mean over the point's ok runs.
const MEANS: &[&str] = &[
    "recovery_s",
    "success_rate_before",
    "success_rate_during",
    "success_rate_after",
    "goodput",
    "wasted_share",
    "failed_latency_median_s",
    "success_latency_p99_s",
];

/// Writes `analysis/summary.{parquet,csv,md}`: one row per point (every
/// axis value), with run counts, the share that did not recover, and means
/// of the main metrics. Returns the Markdown table.
pub fn summarize(out_dir: &Path) -> Result<String, String> {
    let err = |e: PolarsError| format!("{}: {e}", out_dir.display());
    let manifest_text = std::fs::read_to_string(out_dir.join("manifest.json"))
        .map_err(|e| format!("{}/manifest.json: {e}", out_dir.display()))?;
    let manifest: serde_json::Value =
        serde_json::from_str(&manifest_text).map_err(|e| e.to_string())?;
    let axes: Vec<String> = manifest["axes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let pattern = out_dir.join("runs").join("*.parquet");
    let runs = LazyFrame::scan_parquet(
        PlRefPath::try_from_path(&pattern).map_err(err)?,
        ScanArgsParquet::default(),
    )
    .map_err(err)?;
    let schema = runs.clone().collect_schema().map_err(err)?;
    // The leaf is the last tier; its columns come last among the tiers'.
    let leaf_amplification = schema
        .iter_names()
        .filter(|n| n.ends_with("_arrivals_per_user_during"))
        .last()
        .map(|n| n.to_string());

    let mut aggs = vec![
        col("run_index").min().alias("first_run"),
        len().alias("runs"),
        col("status").eq(lit("failed")).sum().alias("failed"),
        (lit(1.0) - col("recovered").cast(DataType::Float64).mean()).alias("p_not_recovered"),
    ];
    let means = MEANS
        .iter()
        .map(|m| m.to_string())
        .chain(leaf_amplification);
    for m in means.filter(|m| schema.contains(m)) {
        aggs.push(col(m.as_str()).mean().alias(format!("{m}_mean")));
    }
    let grouped = if axes.is_empty() {
        runs.select(aggs)
    } else {
        runs.group_by(axes.iter().map(|a| col(a.as_str())).collect::<Vec<_>>())
            .agg(aggs)
    };
    let mut summary = grouped
        .sort(["first_run"], SortMultipleOptions::default())
        .drop(by_name(["first_run"], true, false))
        .collect()
        .map_err(err)?;

    let dir = out_dir.join("analysis");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let create = |name: &str| {
        File::create(dir.join(name)).map_err(|e| format!("{}/{name}: {e}", dir.display()))
    };
    ParquetWriter::new(create("summary.parquet")?)
        .finish(&mut summary)
        .map_err(err)?;
    CsvWriter::new(create("summary.csv")?)
        .finish(&mut summary)
        .map_err(err)?;
    let md = markdown(&summary);
    std::fs::write(dir.join("summary.md"), &md).map_err(|e| e.to_string())?;
    Ok(md)
}

/// A Markdown table; floats with 3 decimals, nulls as `-`.
pub fn markdown(df: &DataFrame) -> String {
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let mut out = format!(
        "| {} |\n|{}|\n",
        names.join(" | "),
        names.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for i in 0..df.height() {
        let cells: Vec<String> = df
            .columns()
            .iter()
            .map(|c| match c.get(i) {
                Ok(AnyValue::Null) | Err(_) => "-".to_string(),
                Ok(AnyValue::Float64(x)) => format!("{x:.3}"),
                Ok(AnyValue::String(s)) => s.to_string(),
                Ok(v) => v.to_string(),
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}
