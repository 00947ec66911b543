//! The main job's rules written a second time, as a minimal event loop
//! (`ch37_loop`), agree with the engine run for run: on every preset, the
//! same events, users and users served ok, with the loop's timeouts in its
//! heap and in lanes.

mod ch37_loop;

#[test]
fn a_minimal_loop_of_ch37_takes_the_engine_s_sample_path() {
    let mut scratch = sim_core::Scratch::default();
    for preset in sim_core::CH37_STRATEGIES {
        let strategy = [("strategy".to_string(), sim_core::parse_value(preset))];
        let scenario = sim_core::resolve("ch37", &strategy).expect("a preset of ch37");
        for seed in 1..=2 {
            let r = sim_core::run_validated(&scenario, seed, &mut scratch).expect("the run");
            for lanes in [false, true] {
                let mut sim = ch37_loop::Sim::new(preset, seed, lanes);
                sim.run();
                assert_eq!(
                    (sim.events, sim.users, sim.users_ok),
                    (r.events, r.users, r.users_ok),
                    "{preset}, seed {seed}, timeouts in lanes: {lanes}"
                );
            }
        }
    }
}
