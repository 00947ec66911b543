//! Values at the edges of what validation accepts: every catalogued path
//! of every shipped scenario and ch37 preset set to a huge, a tiny, a
//! not-a-number or a negative value. Validation refuses it with an error,
//! or the run goes through without a panic and its counts in range: the
//! engine's sums of times cannot wrap around (`time::LONGEST`), nor its
//! token counts.

mod common;
use common::*;

#[test]
fn edge_values_are_refused_or_run() {
    let bases = shipped_scenarios();
    let values = ["1e300", "1e-300", "9223372036854775807", "nan", "-1"];
    let (mut valid, mut ran) = (0, 0);
    for (name, base) in &bases {
        for path in sim_core::params::paths(base) {
            for value in values {
                let label = format!("{name} with {path} = {value}");
                let mut s = base.clone();
                let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let set = [(path.clone(), sim_core::parse_value(value))];
                    sim_core::apply_all(&mut s, &set).is_ok() && sim_core::validate(&s).is_ok()
                }));
                match checked {
                    Ok(true) => valid += 1,
                    Ok(false) => continue,
                    Err(_) => panic!("{label}: setting or validating panicked"),
                }
                // A run of each base is in the other tests: only the
                // extreme values of numbers (a quarter of them) run here.
                if value == "nan" || value == "-1" || valid % 4 != 0 {
                    continue;
                }
                ran += 1;
                s.max_events = Some(300_000);
                match std::panic::catch_unwind(|| sim_core::run(&s, 1)) {
                    Err(_) => panic!("{label}: the run panicked"),
                    Ok(Ok(r)) => assert_eq!(r.users, r.users_ok + r.users_failed, "{label}"),
                    Ok(Err(_)) => {}
                }
            }
        }
    }
    assert!(ran > 100, "only {ran} runs of {valid} valid settings");
    eprintln!("{valid} edge settings valid, {ran} ran");
}
