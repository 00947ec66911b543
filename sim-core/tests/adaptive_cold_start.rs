//! The source text's adaptive-limiter incident (grids/adaptive-cold-
//! start.toml): without the minimum-sample guard, the night's few normal
//! requests that waited behind two exports drive api's limit to its
//! floor, and the morning's load is turned away while it climbs back 2%
//! every 5 s; with the guard, or with the exports apart, nothing is.

mod common;
use sim_core::RunResult;

fn run(sets: &[(&str, &str)]) -> RunResult {
    let mut all = vec![("db.class_slots.export", "2")];
    all.extend_from_slice(sets);
    let s = common::scenario("adaptive-cold-start.toml", &all);
    common::run(&s, 1)
}

/// api's limit at the end of each second, and its rejections each second.
fn api(r: &RunResult) -> (Vec<u64>, Vec<u64>) {
    let t = &r.series.tiers[0];
    assert_eq!(t.name, "api");
    let rejected = (t.arrivals.iter().zip(&t.admitted))
        .map(|(a, b)| a - b)
        .collect();
    (t.limit.clone(), rejected)
}

fn first(xs: &[u64], from: usize, rule: impl Fn(u64) -> bool) -> Option<usize> {
    (from..xs.len()).find(|&s| rule(xs[s]))
}

#[test]
fn without_the_guard_the_night_floors_the_limit_and_the_morning_is_turned_away() {
    let bare = run(&[("api.limit_min_samples", "1")]);
    let (limit, rejected) = api(&bare);
    let floor = first(&limit, 0, |l| l == 60).expect("the floor");
    let night: u64 = rejected[..500].iter().sum();
    let morning: u64 = rejected[500..].iter().sum();
    let back_200 = first(&limit, 500, |l| l >= 200).expect("200 again");
    let back_320 = first(&limit, 500, |l| l == 320).expect("320 again");
    let last_rejection = (0..rejected.len()).rfind(|&s| rejected[s] > 0).unwrap();
    let per_minute: Vec<u64> = (500..1000)
        .step_by(60)
        .map(|s| rejected[s..(s + 60).min(1000)].iter().sum())
        .collect();
    println!(
        "no guard: floor at {floor} s, limit at 500 s {}, 200 again at {back_200} s, 320 at {back_320} s; \
         rejected at night {night}, in the morning {morning} (last at {last_rejection} s), per minute from 500 s {per_minute:?}",
        limit[499]
    );
    assert_eq!(night, 0, "at 5/s the limit never binds");
    assert!(
        floor < 500 && limit[499] == 60,
        "floored before the morning"
    );
    assert_eq!(morning, bare.tiers[0].rejected_full);
    let client = &bare.groups[0];
    assert_eq!(client.name, "client");
    assert!(
        morning * 5 > client.users,
        "over a fifth of the normal users"
    );
    // Climbing 2% per 5 s from 60: 200 (the morning's 200 in service on
    // average) takes 61 steps, about 5 minutes; the rejections end within
    // a minute of it, once the limit is above the load's peaks too.
    assert!((790..830).contains(&back_200), "{back_200}");
    assert!(last_rejection < back_200 + 60, "{last_rejection}");

    for (what, sets) in [
        ("guard", vec![("api.limit_min_samples", "20")]),
        (
            "exports apart",
            vec![("api.limit_min_samples", "1"), ("db.slots", "4")],
        ),
    ] {
        let r = run(&sets);
        let (limit, rejected) = api(&r);
        let lowest = limit.iter().min().unwrap();
        println!(
            "{what}: lowest limit {lowest}, rejected {}",
            r.tiers[0].rejected_full
        );
        assert_eq!(rejected.iter().sum::<u64>(), 0, "{what}");
        assert_eq!(*lowest, 320, "{what}");
    }
}

#[test]
fn the_aimd_steps_are_refused_where_no_aimd_limit_acts() {
    let errors = |sets: &[(&str, &str)]| -> Vec<String> {
        let mut s = common::load("ch37");
        common::set(&mut s, sets);
        match sim_core::validate(&s) {
            Ok(()) => vec![],
            Err(e) => e.iter().map(sim_core::ConfigError::to_string).collect(),
        }
    };
    assert_eq!(
        errors(&[("svc_b.limit_hold_s", "5"), ("svc_b.limit_sparse", "skip")]),
        [
            "svc_b.limit_hold_s: 5.0 has no effect: limit_hold_s is a setting of the AIMD adaptive limit, and svc_b.adaptive_limit is false; set svc_b.adaptive_limit = true, or leave limit_hold_s at its default (0.0)",
            "svc_b.limit_sparse: \"skip\" has no effect: limit_sparse is a setting of the AIMD adaptive limit, and svc_b.adaptive_limit is false; set svc_b.adaptive_limit = true, or leave limit_sparse at its default (\"wait\")",
        ]
    );
    assert_eq!(
        errors(&[
            ("svc_b.adaptive_limit", "true"),
            ("svc_b.limit_algorithm", "gradient"),
            ("svc_b.limit_increase_percent", "2"),
        ]),
        [
            "svc_b.limit_increase_percent: 2.0 has no effect: limit_increase_percent is a setting of the AIMD adaptive limit, and svc_b.limit_algorithm is \"gradient\"; set svc_b.limit_algorithm = \"aimd\", or leave limit_increase_percent at its default (0.0)"
        ]
    );
    assert_eq!(
        errors(&[
            ("svc_b.adaptive_limit", "true"),
            ("svc_b.limit_increase_percent", "101"),
        ]),
        ["svc_b.limit_increase_percent: must be between 0 and 100"]
    );
}
