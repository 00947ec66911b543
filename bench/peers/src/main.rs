//! M/M/c at utilisation 0.9 in the project's engine and in other
//! discrete-event engines, with the same draws in every one: the arrival gaps
//! and service times come from `sim_core::random::Stream` (ChaCha8 and libm),
//! the streams named as the project names them, rounded to nanoseconds as the
//! project rounds them. So every engine simulates the same sample path: the
//! same events and the same completions, which the program checks.
//!
//! Engines: the project (`sim_core::run` on a one-tier scenario, as a user
//! runs it: validation, model and result included), DesCartes
//! (`descartes-core`), NeXosim (one thread), and a minimal loop over a binary
//! heap of `(time, insertion number)`. Rounds alternate the engines
//! (A B C D, A B C D, ...); each figure is the median over the rounds of the
//! process CPU time of one run.

mod clock;
mod engines;

use clock::{cpu_seconds, median};
use engines::{Outcome, Spec};
use std::process::ExitCode;

type Engine = (&'static str, fn(&Spec) -> Outcome);

const ENGINES: [Engine; 4] = [
    ("project (sim-core)", engines::project),
    ("DesCartes 0.1.1", engines::descartes),
    ("NeXosim 1.0, 1 thread", engines::nexosim),
    ("binary-heap loop", engines::heap),
];

fn arg(args: &[String], name: &str, default: f64) -> Result<f64, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} takes a number")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let parsed = (|| {
        Ok::<_, String>((
            arg(&args, "--rounds", 5.0)? as usize,
            arg(&args, "--duration-s", 15_000.0)?,
        ))
    })();
    let (rounds, duration_s) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("peers: {e} (usage: peers [--rounds N] [--duration-s S] [--engine N])");
            return ExitCode::from(2);
        }
    };
    // `--engine N` (0 the project, 1 DesCartes, ...) runs that one only, to profile it.
    let only = args
        .iter()
        .position(|a| a == "--engine")
        .and_then(|i| args.get(i + 1)?.parse::<usize>().ok());
    let mut ok = true;
    for c in [1, 16] {
        // Service rate 100/s per slot, arrivals at 0.9 of capacity.
        let spec = Spec {
            c,
            lambda: 0.9 * 100.0 * c as f64,
            mean_s: 0.01,
            duration_s: duration_s / c as f64,
            seed: 1,
        };
        println!(
            "M/M/{c} at rho 0.9: lambda {} /s, mean service {} s, {} s simulated, seed {}, {rounds} rounds",
            spec.lambda, spec.mean_s, spec.duration_s, spec.seed
        );
        let mut times = vec![Vec::new(); ENGINES.len()];
        let mut outcomes: Vec<Option<Outcome>> = vec![None; ENGINES.len()];
        for _ in 0..rounds {
            for (i, (_, run)) in ENGINES.iter().enumerate() {
                if only.is_some_and(|o| o != i) {
                    continue;
                }
                let t = cpu_seconds();
                let outcome = std::hint::black_box(run(&spec));
                times[i].push(cpu_seconds() - t);
                outcomes[i] = Some(outcome);
            }
        }
        if let Some(o) = only {
            let (name, _) = ENGINES[o];
            let outcome = outcomes[o].expect("at least one round");
            println!("  {name}: {outcome:?}, CPU s/run {:.3}", median(&mut times[o]));
            continue;
        }
        let reference = outcomes[0].expect("at least one round");
        let project_s = median(&mut times[0].clone());
        println!(
            "  {:24} {:>10} {:>10} {:>12} {:>10} {:>16}",
            "engine", "events", "completed", "CPU ms/run", "Mevents/s", "time / project"
        );
        for (i, (name, _)) in ENGINES.iter().enumerate() {
            let o = outcomes[i].expect("at least one round");
            let s = median(&mut times[i]);
            println!(
                "  {:24} {:>10} {:>10} {:>12.1} {:>10.2} {:>16.2}",
                name,
                o.events,
                o.completed,
                s * 1e3,
                o.events as f64 / s / 1e6,
                s / project_s
            );
            if o != reference {
                eprintln!(
                    "  {name}: {} events, {} completed; the project: {} and {}: not the same sample path",
                    o.events, o.completed, reference.events, reference.completed
                );
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
