//! Fault injection for the tests of the commit protocol: `sweep run
//! --inject-crash STEP:N` aborts the process, as `kill -9` or a power cut
//! would (no flush, no destructor), at STEP of the N-th part it commits
//! (1 is the first), so that a test can check that a resume gives the exact
//! table after a crash at every step.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The steps of committing one part, in order: each file is written to a
/// temporary name, synced and renamed; series first, runs next, then the
/// shard's index that lists the part.
pub const STEPS: &[&str] = &[
    "series-written",
    "series-synced",
    "series-renamed",
    "runs-written",
    "runs-synced",
    "runs-renamed",
    "index-written",
    "index-synced",
    "index-renamed",
];

static AT: OnceLock<(&'static str, u64)> = OnceLock::new();
static PART: AtomicU64 = AtomicU64::new(0);

/// `STEP:N` of `--inject-crash`.
pub fn parse(spec: &str) -> Result<(&'static str, u64), String> {
    let bad = || format!("expected STEP:N with STEP one of {}", STEPS.join(", "));
    let (step, n) = spec.split_once(':').ok_or_else(bad)?;
    let step = STEPS.iter().find(|s| **s == step).ok_or_else(bad)?;
    Ok((step, n.parse().map_err(|_| bad())?))
}

/// Arms the crash at `step` of part `n`.
pub fn arm(at: (&'static str, u64)) {
    let _ = AT.set(at);
}

/// A part's commit begins.
pub fn next_part() {
    PART.fetch_add(1, Ordering::SeqCst);
}

/// The commit of the current part has reached `step`.
pub fn point(step: &str) {
    if let Some((at, n)) = AT.get()
        && *at == step
        && PART.load(Ordering::SeqCst) == *n
    {
        std::process::abort();
    }
}
