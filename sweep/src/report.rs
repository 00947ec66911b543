//! The end of a sweep (and `sweep report`): the analysis crate's report,
//! and where to find it.

use crate::error::{DirError, Error};
use crate::lock::Lock;
use analysis::ReportError;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct ReportArgs {
    /// A sweep's output directory (e.g. out/ch37).
    pub dir: PathBuf,
    /// Print the per-point table as Markdown (as in summary.md) instead of
    /// aligned columns.
    #[arg(long)]
    pub markdown: bool,
}

/// The report of `dir`, once every part in it is verified against its
/// index (and no run is written twice): a report never draws from a
/// damaged, missing or doubled part.
/// The head of the per-point table is printed aligned for a terminal, or
/// as the Markdown of `summary.md` with `markdown`.
pub fn write_report(dir: &Path, markdown: bool) -> Result<(), ReportError> {
    let report = write_report_quietly(dir)?;
    // A terminal gets the head of the table; the files have all of it.
    const SHOWN: usize = 40;
    let lines: Vec<&str> = report.headline.lines().collect();
    let head = lines[..lines.len().min(SHOWN + 2)].join("\n");
    if let Some(users) = &report.users {
        println!("\n{users}");
    }
    if markdown {
        println!("\n{head}");
    } else {
        print!("\n{}", crate::table::terminal_from_markdown(&head));
    }
    if lines.len() > SHOWN + 2 {
        println!(
            "... {} more points in {}/analysis/summary.md",
            lines.len() - SHOWN - 2,
            dir.display()
        );
    }
    if let Some(partial) = &report.partial {
        println!("partial results: {partial}; every table holds these runs only");
    }
    println!(
        "report: {} ({})",
        report.index_md.display(),
        report.index_html.display()
    );
    let tables: Vec<String> = (report.tables.iter())
        .map(|t| t.display().to_string())
        .collect();
    println!("tables: {} (and .parquet)", tables.join(", "));
    Ok(())
}

/// The report of `dir`, verified as [`write_report`]'s, printing nothing;
/// one report at a time ([`Lock::report`]).
pub fn write_report_quietly(dir: &Path) -> Result<analysis::Report, ReportError> {
    let store = crate::store::Store::new(dir);
    let refused = |e| ReportError::Refused(Box::new(e));
    store.refuse_linked_dirs().map_err(refused)?;
    store
        .committed_runs(None, crate::store::Check::All)
        .map_err(refused)?;
    // No lock file where there is no sweep: the report refuses it.
    let manifests = store.manifests().map_err(refused)?;
    (store.refuse_shards_only(&manifests)).map_err(|e| ReportError::Refused(Box::new(e)))?;
    let sweep_here = !manifests.is_empty();
    let _turn = sweep_here.then(|| Lock::report(dir)).transpose()?;
    analysis::write_report(dir)
}

pub fn report(args: &ReportArgs) -> Result<ExitCode, Error> {
    // A look at a sweep still running: its runs so far, said so.
    let writers = crate::lock::writers(&args.dir).map_err(DirError::from)?;
    if !writers.is_empty() {
        eprintln!(
            "note: {} is being written ({}): this report holds the runs written so far; a sweep that writes its report replaces it when it ends (else run `sweep report` again then)",
            args.dir.display(),
            writers.join("; ")
        );
    } else if let Ok(manifests) = crate::store::Store::new(&args.dir).manifests()
        // The report is of the whole grid: a shard killed before a whole
        // run finished its runs left a manifest that says running, and
        // nothing is left to run.
        && let Some((_, m)) = (manifests.iter())
            .find(|(_, m)| m.shard == analysis::manifest::Shard::WHOLE && m.status == "running")
    {
        // Nobody writes it, yet its manifest was never finished: killed.
        let resume = crate::runner::resume_command(m, &args.dir);
        eprintln!(
            "note: the sweep in {} stopped without finishing (killed? its manifest still says running): this report holds the runs it wrote; `{resume}` runs the rest",
            args.dir.display(),
        );
    }
    write_report(&args.dir, args.markdown)?;
    Ok(ExitCode::SUCCESS)
}
