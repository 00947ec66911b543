//! The end of a sweep (and `sweep report`): the analysis crate's report,
//! and where to find it.

use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct ReportArgs {
    /// A sweep's output directory (e.g. out/ch37).
    pub dir: PathBuf,
}

pub fn write_report(dir: &Path) -> Result<(), String> {
    let report = analysis::write_report(dir)?;
    println!("\n{}", report.headline);
    println!(
        "report: {} ({})",
        report.index_md.display(),
        report.index_html.display()
    );
    println!(
        "tables: {0}/analysis/summary.csv, {0}/analysis/sensitivity.csv, {0}/analysis/main_effects.csv (and .parquet)",
        dir.display()
    );
    Ok(())
}

pub fn report(args: &ReportArgs) -> ExitCode {
    match write_report(&args.dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::fail_all("report", &[e]),
    }
}
