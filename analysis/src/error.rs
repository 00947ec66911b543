//! What can go wrong while reading a sweep and writing its report. Every
//! error about a file names the file; the source error is kept.

use crate::part::PartError;
use polars::prelude::PolarsError;
use std::path::PathBuf;

/// An I/O error on a file or a directory, with its path.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct IoError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl IoError {
    /// For `map_err`: the error of an operation on `path`.
    pub fn at(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> IoError {
        let path = path.into();
        move |source| IoError { path, source }
    }
}

/// Reading a sweep's output back ([`crate::load::Sweep::load`]).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: {source}", path.display())]
    ReadManifest {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    ParseManifest {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// The lazy scan of the runs parts (`dir` is the sweep's directory).
    #[error("{}: {source}", dir.display())]
    Runs { dir: PathBuf, source: PolarsError },
    /// Listing the runs parts.
    #[error(transparent)]
    ListRuns(IoError),
    /// No part committed yet (a sweep that has just begun, or none).
    #[error(
        "{}: no runs written yet: a sweep writes its first part after its first runs (`sweep run` writes the report itself when it ends)",
        dir.display()
    )]
    NoRuns { dir: PathBuf },
    #[error("{}: axis column `{column}`: {source}", dir.display())]
    AxisColumn {
        dir: PathBuf,
        column: String,
        source: PolarsError,
    },
    #[error(
        "{}: the grid's `[report] group = \"{group}\"` reads column `{column}`, which the runs do not have (no client group `{group}` in their scenario)",
        dir.display()
    )]
    GroupColumn {
        dir: PathBuf,
        group: String,
        column: String,
    },
}

/// Drawing one plot ([`crate::plots`]).
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("cannot register DejaVu Sans ({style}) font")]
    Font { style: &'static str },
    #[error("empty output path")]
    EmptyPath,
    #[error("{}: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The input cannot be drawn (no file is written).
    #[error("{title}: {problem}")]
    Input { title: String, problem: String },
    #[error("drawing failed: {0}")]
    Draw(String),
    /// Writing the finished SVG or PNG.
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Writing the report ([`crate::write_report`]).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Part(#[from] PartError),
    /// Writing a table as Parquet or CSV.
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: PolarsError },
    /// Building a table in memory (no file involved).
    #[error("{what}: {source}")]
    Table {
        what: &'static str,
        source: PolarsError,
    },
    /// Scenario discovery on the runs table.
    #[error("scenario discovery (PRIM): {0}")]
    Prim(#[from] crate::prim::PrimError),
    /// The caller's check of the output directory before the report (a
    /// part not committed, damaged, missing, or a run written twice).
    #[error(transparent)]
    Refused(Box<dyn std::error::Error + Send + Sync>),
}

impl ReportError {
    pub(crate) fn table(what: &'static str) -> impl FnOnce(PolarsError) -> ReportError {
        move |source| ReportError::Table { what, source }
    }
}
