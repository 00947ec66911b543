//! `cargo bench -p sim-core`: speed and memory of one run of each ch37
//! preset (default window), single thread.
//!
//! Reports the median wall time per run over repetitions, events per
//! second, and heap use per run (allocations, bytes allocated, peak live
//! bytes) from a counting allocator installed in this binary only. The
//! runs of a preset share one `Scratch` and one validated scenario, as a
//! sweep worker's runs of a point do: the figures per run include the
//! first run's growth, not validation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Counts an allocation of `size` bytes, live from now on.
fn count_alloc(size: usize) {
    ALLOCS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size, Relaxed);
    let live = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(live, Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_alloc(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    /// Counted as the default `realloc` counts it (the new block allocated
    /// while the old one is live, then the old freed), but grown by the
    /// system allocator, as in a sweep: the default copies every growing
    /// vector, where the system's grows some in place (`naive`: 1.0 M of
    /// its 381 M instructions for two runs).
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_alloc(new_size);
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    // `cargo bench -- --quick` (or any filter argument cargo passes) is accepted; `--reps N` sets repetitions.
    let args: Vec<String> = std::env::args().collect();
    let reps = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(20usize);
    // `--preset NAME` runs that preset only (e.g. to profile it alone).
    let only = args
        .iter()
        .position(|a| a == "--preset")
        .and_then(|i| args.get(i + 1));
    // `--set PATH=VALUE` (repeatable) overrides a parameter in every case,
    // e.g. `--set client.duration_s=120 --set horizon_s=130` for memory
    // against the number of users.
    let extra: Vec<(String, toml::Value)> = (args.iter().zip(args.iter().skip(1)))
        .filter(|(flag, _)| *flag == "--set")
        .map(|(_, kv)| {
            let (k, v) = kv.split_once('=').expect("--set takes PATH=VALUE");
            (k.to_string(), sim_core::parse_value(v))
        })
        .collect();
    println!(
        "ch37, default window (10-30 s), fifo, seed 1..={reps}, one thread{}",
        (extra.iter()).fold(String::new(), |s, (k, v)| format!("{s}, {k} = {v}"))
    );
    println!(
        "{:16} {:>12} {:>14} {:>10} {:>12} {:>12} {:>12} {:>16}",
        "preset",
        "ms/run",
        "events/run",
        "Mevents/s",
        "allocs/run",
        "MB alloc/run",
        "peak MB",
        "peak KB/1k users"
    );
    // Every preset, then protected with svc_b as 16 replicas of one slot
    // behind p2c at svc_a (the same 16 slots, balanced).
    let set = |path: &str, v: &str| (path.to_string(), sim_core::parse_value(v));
    let mut cases: Vec<(String, Vec<(String, toml::Value)>)> = sim_core::CH37_STRATEGIES
        .iter()
        .map(|p| (p.to_string(), vec![set("strategy", p)]))
        .collect();
    cases.push((
        "protected_16_rep".to_string(),
        vec![
            set("strategy", "protected"),
            set("svc_b.replicas", "16"),
            set("svc_b.slots", "1"),
            set("svc_a.balancer", "p2c"),
        ],
    ));
    for (_, overrides) in &mut cases {
        overrides.extend(extra.iter().cloned());
    }
    for (preset, overrides) in &cases {
        if only.is_some_and(|p| p != preset) {
            continue;
        }
        // Validated once, as a sweep worker validates a point once for all
        // its seeds: the runs' figures leave validation out.
        let scenario = sim_core::resolve("ch37", overrides).expect("the cases are valid");
        let mut times = Vec::new();
        let (mut events, mut users) = (0, 0);
        let (a0, b0) = (ALLOCS.load(Relaxed), BYTES.load(Relaxed));
        PEAK.store(LIVE.load(Relaxed), Relaxed);
        let base = LIVE.load(Relaxed);
        // One worker's memory, kept from run to run as the sweep's workers
        // do (the peak includes what it keeps).
        let mut scratch = sim_core::Scratch::default();
        for seed in 1..=reps as u64 {
            let t = Instant::now();
            let r = sim_core::run_validated(&scenario, seed, &mut scratch).expect("run");
            times.push(t.elapsed().as_secs_f64());
            events += r.events;
            users += r.users;
            std::hint::black_box(r);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let per_run = |x: usize| x as f64 / reps as f64;
        let events_per_run = events as f64 / reps as f64;
        println!(
            "{:16} {:>12.2} {:>14.0} {:>10.2} {:>12.0} {:>12.2} {:>12.2} {:>16.1}",
            preset,
            median * 1e3,
            events_per_run,
            events_per_run / median / 1e6,
            per_run(ALLOCS.load(Relaxed) - a0),
            per_run(BYTES.load(Relaxed) - b0) / 1e6,
            (PEAK.load(Relaxed) - base) as f64 / 1e6,
            (PEAK.load(Relaxed) - base) as f64 / (users as f64 / reps as f64),
        );
    }
}
