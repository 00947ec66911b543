//! `analysis`: turns a sweep's Parquet output into the tables users read.
//!
//! Reads lazily with polars (only the columns it needs), so the size of a
//! sweep is bounded by disk, not memory. Writes under `OUT_DIR/analysis/`.

pub mod boundary_section;
pub mod cart;
pub mod contour;
pub mod design_analysis;
pub mod error;
pub mod load;
pub mod manifest;
pub mod morris;
pub mod outcome;
pub mod part;
pub mod plots;
pub mod prim;
pub mod published;
pub mod report;
pub mod resample;
pub mod sensitivity;
pub mod sobol;
pub mod stats;
pub mod tables;
#[cfg(test)]
mod testfns;
pub mod why;

pub use error::{IoError, LoadError, PlotError, ReportError};
pub use part::PartError;
pub use report::{Report, write as write_report};
