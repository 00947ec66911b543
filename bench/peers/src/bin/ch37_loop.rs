//! ch37 (client -> gateway -> svc_a -> svc_b, the four presets) as a
//! minimal Rust event loop beside the engine: `ch37_heapq.py` line for line,
//! with the engine's draws (`sim_core::random::Stream`, the streams named as
//! the engine names them) and a slab of jobs whose slots are reused. It keeps
//! no statistics but the events, users and successes, and cancels no timer
//! (a stale one is popped and passed over), as the Python loop does: the
//! floor of the main job, as the binary-heap loop is the M/M/1's. It takes
//! the engine's sample path: every run's events and users served ok are the
//! engine's, which the program checks (it exits 1 if they differ).
//!
//!     env -u CARGO_TARGET_DIR cargo run --release --bin ch37_loop -- --rounds 5 --reps 10
//!
//! Rounds alternate the engine and the loops (A B C, A B C, ...); each
//! figure is the median over the rounds of the CPU time of `--reps` runs
//! (seeds 1 to reps), per run.

use std::process::ExitCode;

#[path = "../../../../sim-core/tests/ch37_loop/mod.rs"]
mod ch37_loop;
use ch37_loop::Sim;
#[path = "../clock.rs"]
mod clock;
use clock::{cpu_seconds, median};

fn arg(args: &[String], name: &str, default: u64) -> Result<u64, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => (args.get(i + 1).and_then(|v| v.parse().ok()))
            .ok_or_else(|| format!("{name} takes a whole number")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (rounds, reps) = match (arg(&args, "--rounds", 5), arg(&args, "--reps", 10)) {
        (Ok(r), Ok(n)) if r > 0 && n > 0 => (r as usize, n),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!(
                "ch37_loop: {e} (usage: ch37_loop [--rounds N] [--reps N] [--only K] [--preset P])"
            );
            return ExitCode::from(2);
        }
        _ => {
            eprintln!("ch37_loop: --rounds and --reps must be at least 1");
            return ExitCode::from(2);
        }
    };
    // `--only K` (0 the engine, 1 the loop, 2 the loop with lanes) runs
    // that one only, to profile it.
    let only = (args.iter().position(|a| a == "--only"))
        .and_then(|i| args.get(i + 1)?.parse::<usize>().ok());
    println!("ch37, default window (10-30 s), fifo, seeds 1..={reps}, {rounds} rounds");
    println!(
        "{:16} {:>20} {:>20} {:>20} {:>11} {:>11}",
        "preset",
        "engine ms (events)",
        "loop ms (events)",
        "+lanes ms (events)",
        "engine/loop",
        "/+lanes"
    );
    let mut agree = true;
    // `--preset P` runs that preset only.
    let preset_only = (args.iter().position(|a| a == "--preset")).and_then(|i| args.get(i + 1));
    for preset in sim_core::CH37_STRATEGIES {
        if preset_only.is_some_and(|p| p != preset) {
            continue;
        }
        let strategy = [("strategy".to_string(), sim_core::parse_value(preset))];
        let scenario = sim_core::resolve("ch37", &strategy).expect("a preset of ch37");
        let mut scratch = sim_core::Scratch::default();
        let mut ms = [Vec::new(), Vec::new(), Vec::new()];
        // Per seed, each one's events and users served ok: the same in all.
        let mut outcomes: [Vec<(u64, u64)>; 3] = Default::default();
        for _ in 0..rounds {
            for (k, times) in ms.iter_mut().enumerate() {
                if only.is_some_and(|o| o != k) {
                    times.push(f64::NAN);
                    continue;
                }
                outcomes[k].clear();
                let t = cpu_seconds();
                for seed in 1..=reps {
                    outcomes[k].push(if k == 0 {
                        let r = sim_core::run_validated(&scenario, seed, &mut scratch);
                        let r = r.expect("run");
                        (r.events, r.users_ok)
                    } else {
                        let mut sim = Sim::new(preset, seed, k == 2);
                        sim.run();
                        (sim.events, sim.users_ok)
                    });
                }
                times.push((cpu_seconds() - t) * 1e3 / reps as f64);
            }
        }
        let ran: Vec<&Vec<(u64, u64)>> = outcomes.iter().filter(|o| !o.is_empty()).collect();
        if ran.windows(2).any(|w| w[0] != w[1]) {
            eprintln!("ch37_loop: {preset}: the engine and the loops disagree: {outcomes:?}");
            agree = false;
        }
        let events = outcomes.map(|o| o.iter().map(|(e, _)| e).sum::<u64>());
        let [e, l, ll] = ms.map(|mut m| median(&mut m));
        let cell = |ms: f64, ev: u64| format!("{ms:.2} ({:>7})", ev / reps);
        println!(
            "{:16} {:>20} {:>20} {:>20} {:>11.2} {:>11.2}",
            preset,
            cell(e, events[0]),
            cell(l, events[1]),
            cell(ll, events[2]),
            e / l,
            e / ll
        );
    }
    if agree {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
