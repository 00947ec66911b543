//! One writer per output directory and shard. A writer holds an OS advisory
//! lock (`flock`) on a lock file in the directory; the lock belongs to the
//! open file, so the OS releases it when the process exits or dies
//! (`kill -9`, a node failure), and a second writer gets an error naming
//! the holder instead of racing it for part numbers and deleting its
//! unfinished files.
//!
//! Every writer holds `.sweep.lock` shared and its shard's
//! `.sweep-s<I>of<N>.lock` exclusive, so shards of one grid write side by
//! side; a whole-grid writer (which finishes and redoes what any shard
//! left, or with `--force` deletes every shard's files) holds `.sweep.lock`
//! exclusive.
//!
//! Reports are written under `.sweep-report.lock`, held exclusive while
//! `analysis/` is written, waiting for its holder: a report asked for
//! while a sweep runs (its runs so far) and the sweep's own at its end
//! take turns instead of mixing their files.
//!
//! A lock file is never opened through a symbolic link (a holder writes
//! its name into the file: through a link, into a file elsewhere), and
//! only a writer creates one: a look at a lock, or a merge's lock on a
//! source directory, uses the file if it is there and makes none.

use crate::store::Shard;
use analysis::IoError;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{ErrorKind, Read, Seek, Write};
use std::path::{Path, PathBuf};

const DIR_LOCK: &str = ".sweep.lock";
const REPORT_LOCK: &str = ".sweep-report.lock";

/// Held locks; dropping it releases them.
pub struct Lock {
    _files: Vec<File>,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{} is being written by another sweep ({holder}); wait for it to finish, or choose another output directory",
        dir.display()
    )]
    Held { dir: PathBuf, holder: String },
    /// A source of a merge that had no lock file (so none was held) got
    /// one while the merge copied from it: a writer started there.
    #[error(
        "{} is being written by a sweep that started while the merge copied its files (the directory had no .sweep.lock for the merge to hold, and a merge creates no file in a source): the merge stopped before its manifest; once that sweep has finished, run the merge again",
        dir.display()
    )]
    StartedDuringMerge { dir: PathBuf },
    #[error(transparent)]
    Io(#[from] IoError),
}

/// Whether `name` is one of this tool's lock files (never results).
pub fn is_lock_file(name: &str) -> bool {
    name.starts_with(".sweep") && name.ends_with(".lock")
}

impl Lock {
    /// The locks of a writer of `shard` into `root` (created if missing);
    /// `whole_dir` for one that writes or deletes other shards' runs.
    pub fn writer(root: &Path, shard: Shard, whole_dir: bool) -> Result<Lock, LockError> {
        std::fs::create_dir_all(root).map_err(IoError::at(root))?;
        let held = |holder: String| LockError::Held {
            dir: root.to_path_buf(),
            holder,
        };
        let dir = dir_lock(root, whole_dir, Create::Yes)?.expect("a lock file is created");
        let own = match take(root, &shard_lock(shard), true, Create::Yes)? {
            Taken::Locked(own) => own,
            Taken::Busy(holder) => return Err(held(holder)),
            Taken::Absent => unreachable!("a writer creates its lock file"),
        };
        // Shards of another split own other runs' indexes: beside them
        // this one would write runs they are writing. Each writer checks
        // after taking its own lock, so of two starting at once one sees
        // the other.
        if shard != Shard::WHOLE {
            for p in analysis::part::list(root, ".lock").map_err(IoError::at(root))? {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let Some(other) = shard_of_lock(name) else {
                    continue;
                };
                if other.count != shard.count
                    && let Taken::Busy(holder) = take(root, name, false, Create::No)?
                {
                    return Err(held(format!(
                        "shard {}/{} of a split into {}, not {}: {holder}",
                        other.index, other.count, other.count, shard.count
                    )));
                }
            }
        }
        Ok(Lock {
            _files: vec![dir, own],
        })
    }

    /// The lock of a reader that must see no writer in `root` while it
    /// reads (a merge, its source directories): `.sweep.lock` exclusive,
    /// which every writer holds at least shared. The reader creates no
    /// file there (a source is outside the merge's output directory):
    /// `None` where there is no lock file (no writer is running: every
    /// writer creates it before it looks at the directory; see
    /// [`has_dir_lock`] to tell one that starts later), and where this
    /// user cannot open it for writing (a read-only copy of results: no
    /// writer of this user can run there either).
    pub fn reader(root: &Path) -> Result<Option<Lock>, LockError> {
        match dir_lock(root, true, Create::No) {
            Ok(file) => Ok(file.map(|file| Lock { _files: vec![file] })),
            Err(LockError::Io(e))
                if matches!(
                    e.source.kind(),
                    ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The lock of a report's writer, once the report being written now (if
    /// any) is done: reports take a second or two.
    pub fn report(root: &Path) -> Result<Lock, IoError> {
        let path = root.join(REPORT_LOCK);
        let file = open_lock(&path, Create::Yes)?.expect("a lock file is created");
        file.lock().map_err(IoError::at(&path))?;
        Ok(Lock { _files: vec![file] })
    }
}

/// Who is writing runs into `root` now (each shard's writer, or the
/// whole grid's), by a look at each writer's lock.
pub fn writers(root: &Path) -> Result<Vec<String>, LockError> {
    let mut holders = Vec::new();
    for p in analysis::part::list(root, ".lock").map_err(IoError::at(root))? {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(shard) = shard_of_lock(name) else {
            continue;
        };
        if let Taken::Busy(holder) = take(root, name, false, Create::No)? {
            holders.push(if shard == Shard::WHOLE {
                holder
            } else {
                format!("shard {}/{}: {holder}", shard.index, shard.count)
            });
        }
    }
    Ok(holders)
}

/// Whether `shard`'s writer is running in `root` now.
pub fn is_being_written(root: &Path, shard: Shard) -> Result<bool, IoError> {
    let name = shard_lock(shard);
    // No lock file, no writer ever: none is made for a look.
    Ok(matches!(
        take(root, &name, false, Create::No)?,
        Taken::Busy(_)
    ))
}

/// Whether `root` has a `.sweep.lock` (a link counts: it is refused when
/// opened). A reader that found none ([`Lock::reader`]) sees by it
/// whether a writer started there since.
pub fn has_dir_lock(root: &Path) -> bool {
    std::fs::symlink_metadata(root.join(DIR_LOCK)).is_ok()
}

/// `root`'s `.sweep.lock`, shared (a shard's writer) or exclusive (one that
/// must have the directory to itself); refused naming who holds it. `None`
/// where there is none and `create` is `No`.
fn dir_lock(root: &Path, exclusive: bool, create: Create) -> Result<Option<File>, LockError> {
    let holder = match take(root, DIR_LOCK, exclusive, create)? {
        Taken::Locked(f) => return Ok(Some(f)),
        Taken::Absent => return Ok(None),
        // Shards hold it shared: they are the writers to name.
        Taken::Busy(_) if exclusive => shard_holders(root)?,
        Taken::Busy(holder) => holder,
    };
    Err(LockError::Held {
        dir: root.to_path_buf(),
        holder,
    })
}

/// The shard whose writer's lock file `name` is ([`shard_lock`]).
fn shard_of_lock(name: &str) -> Option<Shard> {
    let tag = name.strip_prefix(".sweep-s")?.strip_suffix(".lock")?;
    let (i, n) = tag.split_once("of")?;
    Some(Shard {
        index: i.parse().ok()?,
        count: n.parse().ok()?,
    })
}

/// The lock file of `shard`'s writer.
fn shard_lock(shard: Shard) -> String {
    format!(".sweep-s{}of{}.lock", shard.index, shard.count)
}

enum Taken {
    Locked(File),
    /// Someone holds it; what the last exclusive holder wrote into it.
    Busy(String),
    /// No such lock file, and none was to be created: nobody holds it.
    Absent,
}

/// Whether a lock file missing is created: only by a writer (a look or a
/// reader makes no file).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Create {
    Yes,
    No,
}

/// Opens the lock file `path` for reading and writing, never through a
/// symbolic link (refused, naming it and its target); `None` where it is
/// missing and `create` is `No`.
fn open_lock(path: &Path, create: Create) -> Result<Option<File>, IoError> {
    crate::store::refuse_link(path)?;
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(create == Create::Yes)
        .truncate(false);
    match crate::store::no_follow(&mut options).open(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if create == Create::No && e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(crate::store::open_error(path, e)),
    }
}

/// Locks `root/name` (exclusive or shared) without waiting; an exclusive
/// holder writes who it is into the file, for the next one's error.
fn take(root: &Path, name: &str, exclusive: bool, create: Create) -> Result<Taken, IoError> {
    let path = root.join(name);
    let io = |e| IoError::at(&path)(e);
    let Some(mut file) = open_lock(&path, create)? else {
        return Ok(Taken::Absent);
    };
    let taken = if exclusive {
        try_lock_past_probes(&file)
    } else {
        file.try_lock_shared()
    };
    match taken {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            // Between its lock and its name the file is empty (or, for a
            // shared lock, it holds nobody's name).
            let holder = match holder.trim() {
                "" => "a writer that has just started and not yet named itself".to_string(),
                named => named.to_string(),
            };
            return Ok(Taken::Busy(holder));
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    if exclusive {
        let me = format!(
            "host {}, pid {}, since {}",
            crate::runner::hostname(),
            std::process::id(),
            crate::runner::now_rfc3339()
        );
        file.set_len(0).map_err(&io)?;
        file.rewind().map_err(&io)?;
        file.write_all(me.as_bytes()).map_err(&io)?;
    }
    Ok(Taken::Locked(file))
}

/// Another writer looks at a lock file by taking it shared for a moment
/// (`take`, to see whether a shard of another split, or any shard, is
/// running); a writer holds its lock for its whole sweep. So an exclusive
/// lock is tried again for a while before it is called held: a writer
/// starting in the microseconds of someone's look would be refused.
fn try_lock_past_probes(file: &File) -> Result<(), TryLockError> {
    for _ in 0..PROBE_WAITS {
        match file.try_lock() {
            Err(TryLockError::WouldBlock) => std::thread::sleep(PROBE_WAIT),
            taken => return taken,
        }
    }
    file.try_lock()
}

/// How often, and how long apart, an exclusive lock is tried again
/// ([`try_lock_past_probes`]): 100 ms in all, thousands of times as long
/// as a look.
const PROBE_WAITS: u32 = 10;
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// The writers now running in `root` (shards, or another whole-grid
/// writer), for a whole-grid writer that must wait for them.
fn shard_holders(root: &Path) -> Result<String, LockError> {
    let holders = writers(root)?;
    Ok(if holders.is_empty() {
        // It holds `.sweep.lock` but no shard's lock: it has just taken
        // the one, or just released the other.
        "a writer that is starting or finishing".to_string()
    } else {
        holders.join("; ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELD: &str = "is being written by another sweep";
    const ADVICE: &str = "wait for it to finish, or choose another output directory";

    /// Another writer's look at a shard's lock (a shared lock held for a
    /// moment) does not refuse the shard's own writer starting then.
    #[test]
    fn a_look_at_a_lock_does_not_refuse_its_writer() {
        let root = tempfile::tempdir().unwrap();
        let shard = Shard { index: 0, count: 2 };
        let look = File::create(root.path().join(shard_lock(shard))).unwrap();
        look.lock_shared().unwrap();
        let looking = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            drop(look);
        });
        assert!(Lock::writer(root.path(), shard, false).is_ok());
        looking.join().unwrap();
    }

    /// Reports take turns: a second waits for the first's lock to go.
    #[test]
    fn a_report_waits_for_the_one_being_written() {
        let root = tempfile::tempdir().unwrap();
        let first = Lock::report(root.path()).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = root.path().to_path_buf();
        let second = std::thread::spawn(move || {
            let _turn = Lock::report(&dir).unwrap();
            tx.send(()).unwrap();
        });
        let wait = std::time::Duration::from_millis(200);
        assert!(
            rx.recv_timeout(wait).is_err(),
            "the second report did not wait"
        );
        drop(first);
        assert!(rx.recv_timeout(wait * 25).is_ok());
        second.join().unwrap();
    }

    /// A writer that holds `.sweep.lock` but has not written its name
    /// into it yet is still described, to a shard and to a whole-grid
    /// writer (which looks for the shards' holders and finds none).
    #[test]
    fn a_writer_not_yet_named_is_still_described() {
        let root = tempfile::tempdir().unwrap();
        let file = File::create(root.path().join(DIR_LOCK)).unwrap();
        file.lock().unwrap();
        let refused = |shard, whole_dir| {
            let err = Lock::writer(root.path(), shard, whole_dir).err().unwrap();
            err.to_string()
        };
        let dir = root.path().display();
        assert_eq!(
            refused(Shard { index: 0, count: 2 }, false),
            format!(
                "{dir} {HELD} (a writer that has just started and not yet named itself); {ADVICE}"
            )
        );
        assert_eq!(
            refused(Shard::WHOLE, true),
            format!("{dir} {HELD} (a writer that is starting or finishing); {ADVICE}")
        );
    }
}
