//! One Parquet part file of a sweep (`runs/part-*.parquet` or
//! `series/part-*.parquet`) read eagerly, with its columns as their polars
//! types; every error names the file.

use polars::prelude::*;
use std::fs::File;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PartError {
    #[error("{}: {source}", path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: PolarsError },
    /// A missing column, or one of another type.
    #[error("{}: column `{column}`: {source}", path.display())]
    Column {
        path: PathBuf,
        column: String,
        source: PolarsError,
    },
    /// A key of the part's Parquet metadata that does not read as expected.
    #[error("{}: metadata `{key}`: {problem}", path.display())]
    Metadata {
        path: PathBuf,
        key: String,
        problem: String,
    },
}

/// A part's frame and where it came from.
pub struct Part {
    pub path: PathBuf,
    pub frame: DataFrame,
}

impl Part {
    /// Reads `path`, only `columns` when given.
    pub fn read(path: &Path, columns: Option<&[&str]>) -> Result<Part, PartError> {
        let file = File::open(path).map_err(|source| PartError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = ParquetReader::new(file);
        if let Some(cols) = columns {
            reader = reader.with_columns(Some(cols.iter().map(|c| c.to_string()).collect()));
        }
        let frame = reader.finish().map_err(|source| PartError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Part {
            path: path.to_path_buf(),
            frame,
        })
    }

    /// A text column, categorical ones (`status`, string axes) as their text.
    pub fn str(&self, name: &str) -> Result<StringChunked, PartError> {
        let fail = |source| PartError::Column {
            path: self.path.clone(),
            column: name.to_string(),
            source,
        };
        let c = self.frame.column(name).map_err(fail)?;
        let c = c.cast(&DataType::String).map_err(fail)?;
        c.str().cloned().map_err(fail)
    }

    pub fn lists(&self, name: &str) -> Result<&ListChunked, PartError> {
        column(&self.frame, &self.path, name, Column::list)
    }

    /// The list at `row` of list column `name` as `Int64` values (`None`
    /// where the list is null).
    pub fn i64_list(&self, name: &str, row: usize) -> Result<Option<Vec<i64>>, PartError> {
        let fail = |source| PartError::Column {
            path: self.path.clone(),
            column: name.to_string(),
            source,
        };
        let Some(list) = self.lists(name)?.get_as_series(row) else {
            return Ok(None);
        };
        Ok(Some(
            list.i64()
                .map_err(fail)?
                .iter()
                .map(|v| v.unwrap_or(0))
                .collect(),
        ))
    }

    pub fn u64(&self, name: &str) -> Result<&UInt64Chunked, PartError> {
        column(&self.frame, &self.path, name, Column::u64)
    }

    pub fn bool(&self, name: &str) -> Result<&BooleanChunked, PartError> {
        column(&self.frame, &self.path, name, Column::bool)
    }

    /// A count column (written as `Int64`; `UInt64` by earlier versions),
    /// or the series' `second` (`Int64`; `UInt32` before), as unsigned
    /// integers.
    pub fn count(&self, name: &str) -> Result<UInt64Chunked, PartError> {
        let fail = |source| PartError::Column {
            path: self.path.clone(),
            column: name.to_string(),
            source,
        };
        let c = self.frame.column(name).map_err(fail)?;
        let c = c.strict_cast(&DataType::UInt64).map_err(fail)?;
        c.u64().cloned().map_err(fail)
    }

    /// A numeric column as floats.
    pub fn f64(&self, name: &str) -> Result<Float64Chunked, PartError> {
        let fail = |source| PartError::Column {
            path: self.path.clone(),
            column: name.to_string(),
            source,
        };
        let c = self.frame.column(name).map_err(fail)?;
        let c = c.cast(&DataType::Float64).map_err(fail)?;
        c.f64().cloned().map_err(fail)
    }
}

/// Column `name` of `frame` (read from `path`) as the type `get` asks for.
pub fn column<'a, T: ?Sized>(
    frame: &'a DataFrame,
    path: &Path,
    name: &str,
    get: impl FnOnce(&'a Column) -> PolarsResult<&'a T>,
) -> Result<&'a T, PartError> {
    frame
        .column(name)
        .and_then(get)
        .map_err(|source| PartError::Column {
            path: path.to_path_buf(),
            column: name.to_string(),
            source,
        })
}

/// The series parts of the sweep in `dir` that belong to a runs part: a
/// series part is committed with its runs part (the runs part last), so
/// one without it is what a commit cut short left, not results (another
/// shard's, which a whole-grid run in the same directory did again).
pub fn series_parts(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let runs = dir.join("runs");
    let mut parts = list(&dir.join("series"), ".parquet")?;
    parts.retain(|p| p.file_name().is_some_and(|name| runs.join(name).exists()));
    Ok(parts)
}

/// The files of `dir` whose names end with `suffix`, sorted; none when the
/// directory does not exist (yet).
pub fn list(dir: &Path, suffix: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for e in entries {
                let p = e?.path();
                if p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(suffix))
                {
                    out.push(p);
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    out.sort();
    Ok(out)
}

/// The value of `key` in the Parquet key-value metadata of `path`.
pub fn metadata(path: &Path, key: &str) -> Result<Option<String>, PartError> {
    let file = File::open(path).map_err(|source| PartError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let meta = ParquetReader::new(file)
        .get_metadata()
        .map_err(|source| PartError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .clone();
    Ok(meta
        .key_value_metadata
        .iter()
        .flatten()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.clone()))
}

/// The column names of the Parquet file `path`.
pub fn column_names(path: &Path) -> Result<Vec<String>, PartError> {
    let file = File::open(path).map_err(|source| PartError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let schema = ParquetReader::new(file)
        .schema()
        .map_err(|source| PartError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(schema.iter_names().map(|n| n.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only series parts with their runs part are the sweep's.
    #[test]
    fn a_series_part_without_its_runs_part_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["runs", "series"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let touch = |p: &str| std::fs::write(dir.path().join(p), b"").unwrap();
        touch("runs/part-s0of1-000000.parquet");
        touch("series/part-s0of1-000000.parquet");
        touch("series/part-s1of2-000001.parquet");
        touch("series/part-s0of1-000001.parquet.tmp");
        assert_eq!(
            series_parts(dir.path()).unwrap(),
            [dir.path().join("series/part-s0of1-000000.parquet")]
        );
    }
}
