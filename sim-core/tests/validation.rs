//! Bad input gets a clear error naming the path and the reason, every error
//! at once, before any run.

mod common;
use common::overrides;
use sim_core::{ConfigError, RunError};

fn errors(sets: &[(&str, &str)]) -> Vec<String> {
    match sim_core::resolve("ch37", &overrides(sets)) {
        Ok(_) => vec![],
        Err(e) => e.iter().map(ConfigError::to_string).collect(),
    }
}

/// Each `(path, value, error)`: ch37 with `path = value` has exactly that
/// one error.
fn assert_single_errors(cases: &[(&str, &str, &str)]) {
    for (path, value, expected) in cases {
        assert_eq!(errors(&[(path, value)]), [*expected], "{path} = {value}");
    }
}

#[test]
fn unknown_path_suggests_the_closest() {
    assert_single_errors(&[
        (
            "svc_b.queue_cpa",
            "3",
            "svc_b.queue_cpa: unknown parameter; did you mean `svc_b.queue_cap`?",
        ),
        (
            "svc_c.slots",
            "3",
            "svc_c.slots: unknown parameter; did you mean `svc_a.slots`?",
        ),
        (
            "frobnicate",
            "1",
            "frobnicate: unknown parameter (see docs/params.md, or `sweep params`)",
        ),
    ]);
}

#[test]
fn wrong_types_are_named() {
    assert_single_errors(&[
        (
            "svc_b.slots",
            "\"many\"",
            "svc_b.slots: expected an integer, got string \"many\"",
        ),
        // Out of the field's type: said with the bounds validation applies.
        ("svc_b.slots", "-3", "svc_b.slots: must be >= 1, got -3"),
        (
            "svc_b.replicas",
            "1e10",
            "svc_b.replicas: must be 1 to 64, got 10000000000.0",
        ),
        ("max_events", "-1", "max_events: must be >= 1, got -1"),
        (
            "svc_a.drop_expired",
            "1",
            "svc_a.drop_expired: expected true or false, got integer 1",
        ),
        (
            "dispatch",
            "lifo",
            "dispatch: expected one of fifo, reply_first, got `lifo`",
        ),
        (
            "svc_b.queue_cap",
            "\"lots\"",
            "svc_b.queue_cap: expected an integer or \"unbounded\", got `lots`",
        ),
        (
            "strategy",
            "fast",
            "strategy: unknown strategy `fast`; this scenario's presets: deadline, deadline_budget, naive, protected",
        ),
        (
            "strategy",
            "protectd",
            "strategy: unknown strategy `protectd`; did you mean `protected`? This scenario's presets: deadline, deadline_budget, naive, protected",
        ),
        (
            "svc_b.max_retries",
            "2",
            "svc_b.max_retries: tier `svc_b` calls no other tier, so it has no call parameters",
        ),
    ]);
}

/// Even arrivals need a constant rate to space.
#[test]
fn even_arrivals_are_refused_where_the_load_sets_its_own_pace() {
    let refused = "client.arrivals: `even` spaces arrivals at a constant rate (and its load spikes); a profile, a sinusoid or closed-loop users set the arrivals themselves";
    let got = errors(&[
        ("client.arrivals", "even"),
        ("client.sinusoid.amplitude", "0.5"),
        ("client.sinusoid.period_s", "10"),
    ]);
    assert_eq!(got, [refused]);
}

/// The largest integer a field holds is refused with the reason (the
/// check of the attempt list once overflowed on `max_retries + 1`).
#[test]
fn the_largest_integers_are_refused_not_overflowed() {
    assert_single_errors(&[(
        "svc_a.max_retries",
        "4294967295",
        "svc_a.max_retries: must be <= 100",
    )]);
    // Past TOML's range, a number is still a number, refused for its
    // range (it read as the string "1e400", "expected a number").
    assert_single_errors(&[
        (
            "horizon_s",
            "1e400",
            "horizon_s: not a finite number (accepted: (0, 1000000])",
        ),
        (
            "svc_a.max_retries",
            "9223372036854775808",
            "svc_a.max_retries: must be 0 to 100, got 9223372036854776000.0",
        ),
    ]);
    assert_eq!(
        sim_core::parse_value("1e400x"),
        toml::Value::String("1e400x".into())
    );
    assert_eq!(
        sim_core::parse_value("-2.5e+400"),
        toml::Value::Float(f64::NEG_INFINITY)
    );
}

#[test]
fn out_of_range_values_are_all_reported_at_once() {
    let got = errors(&[
        ("svc_a.attempt_timeout_s", "-1"),
        ("svc_b.slots", "0"),
        ("horizon_s", "50"),
        ("svc_b.service.slow_p", "1.5"),
        ("recovery.threshold", "0"),
    ]);
    assert_eq!(
        got,
        [
            "horizon_s: the horizon (50.0 s) ends before the arrivals do (client.duration_s = 60.0 s): raise horizon_s or shorten client.duration_s",
            "recovery.threshold: must be in (0, 1]",
            "svc_b.slots: must be >= 1: a tier without slots can never serve, and its queue would only fill",
            "svc_b.service.slow_p: must be a probability in [0, 1]",
            "svc_a.attempt_timeout_s: must be > 0: an attempt without a timeout could wait forever",
        ]
    );
}

#[test]
fn type_errors_of_several_paths_are_all_reported() {
    let got = errors(&[
        ("svc_b.slots", "true"),
        ("nope", "1"),
        ("client.rate_per_s", "\"fast\""),
    ]);
    assert_eq!(got.len(), 3, "{got:?}");
}

#[test]
fn runaway_load_is_refused_before_running() {
    assert_single_errors(&[(
        "client.rate_per_s",
        "1e9",
        "client.rate_per_s: rate_per_s x duration_s = 60000000000 users; more than 20000000 in one run would run for hours",
    )]);
}

#[test]
fn event_budget_stops_a_run_with_an_error() {
    let s = common::ch37("naive", "fifo", &[("max_events", "10000")]);
    match sim_core::run(&s, 1) {
        Err(RunError::EventBudget { max_events, at_s }) => {
            assert_eq!(max_events, 10_000);
            assert!(at_s < 30.0);
        }
        other => panic!("expected an event-budget error, got {other:?}"),
    }
    // The derived budget lets every real ch37 run finish.
    assert!(sim_core::run(&common::ch37("naive", "fifo", &[]), 1).is_ok());
}

#[test]
fn bad_scenario_files_are_named() {
    let e = sim_core::Scenario::from_toml("name = \"x\"\nhorizon = 3\n", "my.toml").unwrap_err();
    assert_eq!(e.len(), 4, "{e:?}");
    assert!(e[0].starts_with("my.toml: "), "{e:?}");
    assert!(e[0].contains("unknown field `horizon`"), "{e:?}");
    assert!(e[0].ends_with("did you mean `horizon_s`?"), "{e:?}");
    // Each key missing is said, the tables among them once each.
    assert!(e[1].ends_with("missing field `horizon_s`"), "{e:?}");
    assert!(e[2].ends_with("missing field `client`"), "{e:?}");
    assert!(e[3].ends_with("missing field `tiers`"), "{e:?}");
    let missing = sim_core::resolve("no/such/file.toml", &[]).unwrap_err();
    assert!(missing[0].to_string().starts_with(
        "scenario: `no/such/file.toml` is neither a built-in scenario (ch37) nor a readable file"
    ));
}

/// Every key a scenario file cannot take is said in one reading, with its
/// line; a key missing only because a bad one was set aside is not.
/// Each problem of a scenario file as its place ("line 4, column 1") and
/// its last line (what is wrong).
fn where_and_what(problems: &[String]) -> Vec<(&str, &str)> {
    (problems.iter())
        .map(|p| {
            let line = p.lines().next().unwrap();
            let line = line.split(" at ").nth(1).unwrap_or(line);
            (line, p.lines().last().unwrap())
        })
        .collect()
}

/// Every key missing from one table is said in one reading, in the file's
/// order, whatever its
/// type (a number, a name, a choice), in a table under a header, an
/// implicit one, an item of a list of tables and an inline table; a table
/// missing altogether is said once, not its keys.
#[test]
fn every_missing_key_of_a_table_is_said_at_once() {
    let text = r#"name = "x"
client.rate_per_s = 50.0

[client.call]
max_retries = 0

[[tiers]]
service = { dist = "constant", mean_s = 0.02 }
slow = [{ start_s = 1.0 }]

[[tiers]]
name = "b"
slots = 3
"#;
    let problems = sim_core::Scenario::from_toml(text, "my.toml").unwrap_err();
    assert_eq!(
        where_and_what(&problems),
        [
            ("line 2, column 1", "missing field `duration_s`"),
            ("line 4, column 1", "missing field `attempt_timeout_s`"),
            ("line 4, column 1", "missing field `backoff`"),
            ("line 4, column 1", "missing field `backoff_base_s`"),
            ("line 7, column 1", "missing field `name`"),
            ("line 7, column 1", "missing field `slots`"),
            ("line 9, column 9", "missing field `duration_s`"),
            ("line 9, column 9", "missing field `factor`"),
            // The document's own, which have no line of their own, last.
            ("line 1, column 1", "missing field `horizon_s`"),
        ],
        "{problems:#?}"
    );
    // A bad key set aside does not hide its table's missing keys, nor a
    // bad top-level key the missing tables.
    let bad_and_missing = "name = \"x\"\nhorizon_s = 10.0\n[client]\nduration_s = 5\n[client.call]\nattempt_timeout_s = 1.0\nmax_retries = -1\nbackoff_base_s = 0.05\n[[tiers]]\nname = \"a\"\nslots = 1\n";
    let problems = sim_core::Scenario::from_toml(bad_and_missing, "my.toml").unwrap_err();
    assert_eq!(
        where_and_what(&problems),
        [
            ("line 5, column 1", "missing field `backoff`"),
            (
                "line 7, column 15",
                "invalid value: integer `-1`, expected a whole number from 0 to 4294967295"
            ),
        ],
        "{problems:#?}"
    );
    let problems =
        sim_core::Scenario::from_toml("name = 3\nhorizon_s = \"x\"\n", "my.toml").unwrap_err();
    let what: Vec<&str> = where_and_what(&problems).iter().map(|(_, w)| *w).collect();
    assert_eq!(
        what,
        [
            "invalid type: integer `3`, expected a string",
            "invalid type: string \"x\", expected a number",
            "missing field `client`",
            "missing field `tiers`",
        ],
        "{problems:#?}"
    );
    // A missing table is one problem: its keys are not said.
    let no_call = "name = \"x\"\nhorizon_s = 9\n[client]\nduration_s = 5\n[[tiers]]\nname = \"a\"\nslots = 1\n";
    let problems = sim_core::Scenario::from_toml(no_call, "my.toml").unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].ends_with("missing field `call`"),
        "{problems:#?}"
    );
}

/// A user's class is one byte: more than 256 classes over the client
/// groups (a group that declares none is one) are refused, at the group
/// whose classes pass the bound, not wrapped onto the first ones.
#[test]
fn more_than_256_request_classes_are_refused() {
    let classes = |n: usize| {
        (0..n)
            .map(|i| sim_core::scenario::RequestClass {
                name: format!("c{i}"),
                share: 1.0,
            })
            .collect::<Vec<_>>()
    };
    let mut s = sim_core::ch37();
    s.client.classes = classes(256);
    assert!(sim_core::ValidScenario::new(s.clone()).is_ok(), "256 fit");
    s.client.classes = classes(257);
    let Err(errors) = sim_core::ValidScenario::new(s) else {
        panic!("257 classes accepted");
    };
    let said: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        said,
        [
            "client.classes: 257 request classes across the client groups: at most 256 (a user's class is one byte of its record)"
        ]
    );
}

/// A table written with double brackets, or the tiers with single ones,
/// is said as that, at its line, not as the type errors of its keys.
#[test]
fn a_table_written_as_a_list_is_said_as_such() {
    let text = "name = \"x\"\nhorizon_s = 9\n[[client]]\nduration_s = 5\n[client.call]\nattempt_timeout_s = 1.0\nbackoff = \"fixed\"\nbackoff_base_s = 0.0\n[tiers]\nname = \"a\"\nslots = 1\n";
    let problems = sim_core::Scenario::from_toml(text, "my.toml").unwrap_err();
    assert_eq!(
        problems,
        [
            "my.toml line 3: `client` is written as a list of tables; the client is one table: write `[client]` (further client groups are `[clients.<name>]`)",
            "my.toml line 9: `tiers` is written as one table; the tiers are a list: write `[[tiers]]` before each tier",
        ]
    );
    // The same inside: a call, a client group.
    let text = "name = \"x\"\nhorizon_s = 9\n[client]\nduration_s = 5\n[[client.call]]\nattempt_timeout_s = 1.0\n[[clients.batch]]\nduration_s = 5\n[[tiers]]\nname = \"a\"\nslots = 1\n[[tiers.call]]\nmax_retries = 1\n";
    let problems = sim_core::Scenario::from_toml(text, "my.toml").unwrap_err();
    assert_eq!(
        problems,
        [
            "my.toml line 5: `client.call` is written as a list of tables; it is one table: write it with single brackets",
            "my.toml line 7: `clients.batch` is written as a list of tables; a client group is one table: write `[clients.<name>]`",
            "my.toml line 12: `a.call` is written as a list of tables; it is one table: write it with single brackets",
        ]
    );
}

#[test]
fn every_bad_key_of_a_scenario_file_is_said_at_once() {
    let text = r#"name = "x"
horizon_s = "long"

[client]
rate_per_s = 50.0
duration_s = 30.0
rate_pers = 3

[client.call]
attempt_timeout_s = 1.0
max_retries = -1
backoff = "fixed"
backoff_base_s = 0.05
retry_on = ["timeout", "bogus"]

[[tiers]]
slots = 5000000000
service = { dist = "weibull", mean_s = 0.02 }
"#;
    let problems = sim_core::Scenario::from_toml(text, "my.toml").unwrap_err();
    assert_eq!(
        where_and_what(&problems),
        [
            (
                "line 2, column 13",
                "invalid type: string \"long\", expected a number"
            ),
            ("line 7, column 1", "did you mean `rate_per_s`?"),
            (
                "line 11, column 15",
                "invalid value: integer `-1`, expected a whole number from 0 to 4294967295"
            ),
            (
                "line 14, column 24",
                "unknown variant `bogus`, expected one of `timeout`, `overload`, `error`, `expired`, `refused`"
            ),
            ("line 16, column 1", "missing field `name`"),
            (
                "line 17, column 9",
                "invalid value: integer `5000000000`, expected a whole number from 0 to 4294967295"
            ),
            (
                "line 18, column 20",
                "unknown variant `weibull`, expected one of `exponential`, `constant`, `lognormal`"
            ),
        ],
        "{problems:#?}"
    );
    // One bad key alone is said alone, and a file without any reads.
    let fixed = text
        .replace("\"long\"", "40.0")
        .replace("rate_pers = 3\n", "")
        .replace("-1", "1")
        .replace(", \"bogus\"", "")
        .replace("weibull", "constant")
        .replace("5000000000", "10")
        .replace("[[tiers]]\n", "[[tiers]]\nname = \"a\"\n");
    assert!(sim_core::Scenario::from_toml(&fixed, "my.toml").is_ok());
    let one = fixed.replace("slots = 10", "slots = 10.5");
    let problems = sim_core::Scenario::from_toml(&one, "my.toml").unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("line 17, column 9"), "{problems:#?}");
}

/// A scenario file's presets are checked when it is read, every problem
/// of every preset, the ones no grid uses too: a mistake in one would
/// otherwise surface only in the sweep that first picks it, one at a time.
#[test]
fn every_problem_of_every_preset_is_said_when_the_file_is_read() {
    let text = sim_core::resolve("ch37", &[]).unwrap().to_toml();
    let bad = text
        .replace(
            "[presets.deadline]\n",
            "[presets.deadline]\n\"svc_b.slots\" = -3\n",
        )
        .replace(
            "[presets.naive]\n",
            "[presets.naive]\n\"client.propagate_deadlin\" = false\n\"svc_b.slots\" = \"many\"\n",
        );
    assert_ne!(bad, text);
    let problems = sim_core::Scenario::from_toml(&bad, "my.toml").unwrap_err();
    assert_eq!(
        problems,
        [
            "my.toml: presets.deadline.\"svc_b.slots\" = -3: must be >= 1, got -3",
            "my.toml: presets.naive.\"client.propagate_deadlin\" = false: unknown parameter; did you mean `client.propagate_deadline`?",
            "my.toml: presets.naive.\"svc_b.slots\" = \"many\": expected an integer, got string \"many\"",
        ]
    );
    assert!(sim_core::Scenario::from_toml(&text, "my.toml").is_ok());
}

/// A rule between fields broken by a value a preset gives names the
/// preset, not the scenario file, as where the value comes from.
#[test]
fn a_cross_field_error_names_the_preset_that_gave_the_value() {
    let text = sim_core::resolve("ch37", &[]).unwrap().to_toml().replace(
        "[presets.protected]\n",
        "[presets.protected]\n\"svc_b.gc.every_s\" = 1.0\n\"svc_b.gc.pause_s\" = 0.1\n\"svc_b.cancel_check_s\" = 0.01\n",
    );
    let scenario = sim_core::Scenario::from_toml(&text, "my.toml").unwrap();
    let message = |strategy: &str| {
        let errors =
            sim_core::apply_validated(scenario.clone(), &overrides(&[("strategy", strategy)]));
        (errors.err().unwrap_or_default().iter())
            .map(ConfigError::to_string)
            .collect::<Vec<_>>()
    };
    let rule = "svc_b.gc.every_s: not with cancel_check_s: cooperative cancellation's deadline checks are not modelled across a pause";
    assert_eq!(
        message("protected"),
        [format!("{rule} (preset `protected` sets 1.0)")]
    );
    assert!(message("naive").is_empty());
}

#[test]
fn chain_shape_is_checked() {
    let mut s = common::load("ch37");
    s.tiers[2].call = s.tiers[1].call.clone();
    s.tiers[0].call = None;
    s.tiers[1].name = "svc_b".into();
    let got = problems(&s);
    assert_eq!(
        got,
        [
            "tiers.svc_b: duplicate tier name",
            "svc_b.call: the last tier has no next tier to call; remove its [tiers.call]",
            "svc_b.call: no tier calls this one: give the tier before it a [tiers.call], name it in a [[tiers.fanout]], or in a client group's `calls`",
        ]
    );
}

#[test]
fn fan_out_topology_is_checked() {
    let text = |fanout: &str, extra: &str| {
        format!(
            r#"
name = "fan"
horizon_s = 10
[client]
rate_per_s = 10
duration_s = 5
[client.call]
attempt_timeout_s = 1
max_retries = 0
backoff = "fixed"
backoff_base_s = 0
[[tiers]]
name = "agg"
slots = 10
{extra}
{fanout}
[[tiers]]
name = "x"
slots = 10
[[tiers]]
name = "y"
slots = 10
"#
        )
    };
    let branch = |to: &str| {
        format!(
            "[[tiers.fanout]]\nto = \"{to}\"\ncall = {{ attempt_timeout_s = 0.5, max_retries = 0, backoff = \"fixed\", backoff_base_s = 0 }}\n"
        )
    };
    let errors = |t: &str| -> Vec<String> {
        match sim_core::Scenario::from_toml(t, "fan.toml") {
            Ok(s) => problems(&s),
            Err(e) => e,
        }
    };
    // A good fan-out: agg calls x and y.
    assert_eq!(
        errors(&text(&(branch("x") + &branch("y")), "")),
        Vec::<String>::new()
    );
    // An unknown branch, and y then called by nobody.
    assert_eq!(
        errors(&text(&(branch("x") + &branch("z")), "")),
        [
            "agg.fanout.z: no tier is named `z` (tiers: agg, x, y)",
            "y.call: no tier calls this one: give the tier before it a [tiers.call], name it in a [[tiers.fanout]], or in a client group's `calls`",
        ]
    );
    // Both a call and a fan-out.
    let call = "[tiers.call]\nattempt_timeout_s = 1\nmax_retries = 0\nbackoff = \"fixed\"\nbackoff_base_s = 0\n";
    let got = errors(&text(&(branch("x") + &branch("y")), call));
    assert_eq!(
        got,
        [
            "agg.fanout: a tier either calls the next tier ([tiers.call]) or fans out ([[tiers.fanout]]), not both"
        ]
    );
    // Call parameters of a fan-out tier live under its branches.
    let mut s = common::from_toml(&text(&(branch("x") + &branch("y")), ""), "fan.toml", &[]);
    let e = sim_core::params::set(&mut s, "agg.attempt_timeout_s", &toml::Value::Float(0.2))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("under `agg.fanout.<branch>.` (x, y)"),
        "{e}"
    );
    common::set(
        &mut s,
        &[
            ("agg.fanout.y.attempt_timeout_s", "0.2"),
            ("agg.fanout.y.required", "false"),
        ],
    );
    assert_eq!(s.tiers[0].fanout[1].call.attempt_timeout_s, 0.2);
    assert!(!s.tiers[0].fanout[1].required);
    let e = sim_core::params::set(
        &mut s,
        "agg.fanout.w.required",
        &toml::Value::Boolean(false),
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown parameter"), "{e}");
}

#[test]
fn a_scenario_round_trips_through_toml() {
    let s = common::ch37(
        "protected",
        "reply_first",
        &[("svc_b.slow.1.start_s", "40")],
    );
    let back = sim_core::Scenario::from_toml(&s.to_toml(), "shown").unwrap();
    assert_eq!(s, back);
}

#[test]
fn request_classes_are_checked() {
    let mut s = common::load("ch37");
    common::with_classes(&mut s, &[("online", 1.0), ("online", 2.0), ("Batch", 0.0)]);
    s.tiers[2].class_slots.insert("replay".into(), 4);
    s.tiers[2].class_slots.insert("online".into(), 0);
    s.tiers[2].class_service_s.insert("export".into(), 2.0);
    s.tiers[2].class_service_s.insert("online".into(), 0.0);
    let got = problems(&s);
    assert_eq!(
        got,
        [
            "client.classes.online: duplicate class name",
            "client.classes.Batch: a class name is made of a-z, 0-9 and _ (it names metric columns)",
            "client.classes.Batch.share: must be > 0 (shares are relative weights)",
            "svc_b.class_slots.replay: no request class is named `replay` (classes: online, Batch)",
            "svc_b.class_service_s.export: no request class is named `export` (classes: online, Batch)",
            "svc_b.class_slots.online: must be >= 1 (or \"unbounded\")",
            "svc_b.class_service_s.online: must be > 0 seconds (a class without work here: leave it out)",
        ]
    );
    // A class path needs a declared class.
    let e = sim_core::params::set(
        &mut common::load("ch37"),
        "client.classes.online.share",
        &toml::Value::Float(0.5),
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown parameter"), "{e}");
}

/// Every validation problem of `s`, as a user reads it (none when valid).
fn problems(s: &sim_core::Scenario) -> Vec<String> {
    sim_core::validate(s)
        .err()
        .unwrap_or_default()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_run_too_large_to_finish_is_refused_before_it_starts() {
    // 18 million users: under the cap; a 2x spike for 10 s adds 3 million.
    let mut s = sim_core::ch37();
    s.client.rate_per_s = 300_000.0;
    assert!(problems(&s).is_empty(), "{:?}", problems(&s));
    s.client.spike = vec![sim_core::scenario::SlowWindow {
        start_s: 20.0,
        duration_s: 10.0,
        factor: 2.0,
        replicas: Vec::new(),
    }];
    assert_eq!(
        problems(&s),
        [
            "client.rate_per_s: rate_per_s x duration_s with its load spikes = 21000000 users; more than 20000000 in one run would run for hours"
        ]
    );
    let mut s = sim_core::ch37();
    s.horizon_s = 2e6;
    assert_eq!(
        problems(&s),
        ["horizon_s: must be at most 1000000 s (11.6 days): every run keeps per-second series"]
    );
}

#[test]
fn closed_loop_users_refuse_what_cannot_act_on_them() {
    let closed = [
        ("client.closed.users", "100"),
        ("client.closed.think.mean_s", "1"),
    ];
    // A spike and a sinusoid on ch37; its 400/s is the file's, idle
    // under closed-loop users and not refused, but a rate written with
    // them is.
    let mut sets = closed.to_vec();
    sets.extend([
        ("client.spike.factor", "2"),
        ("client.sinusoid.amplitude", "0.5"),
        ("client.sinusoid.period_s", "10"),
    ]);
    let why = "closed-loop users send at their own pace (users / (think + response)), so";
    let idle = |key: &str, value: &str, default: &str| {
        format!(
            "client.{key}: {value} has no effect: {key} is a setting of the open arrivals, and client.closed.users is 100 (closed-loop users send at their own pace, users / (think + response)); set client.closed.users = 0, or leave {key} at its default ({default})"
        )
    };
    assert_eq!(
        errors(&sets),
        [
            format!("client.spike: {why} a load spike has no arrival rate to multiply"),
            idle("sinusoid.amplitude", "0.5", "0.0"),
        ]
    );
    assert_eq!(
        errors(&[closed[0], closed[1], ("client.rate_per_s", "300")]),
        [idle("rate_per_s", "300.0", "0.0")]
    );
    let mut sets = closed.to_vec();
    sets.extend([
        ("client.rate_per_s", "0"),
        ("client.profile.at_s", "0"),
        ("client.profile.rate_per_s", "10"),
        ("client.closed.think.mean_s", "0"),
    ]);
    assert_eq!(
        errors(&sets),
        [
            format!("client.profile: {why} a load profile has no arrival rate to shape"),
            "client.closed.think.mean_s: must be > 0 (0.0 is its default): without thinking, a user whose requests are answered at once would send forever at one instant".to_string(),
        ]
    );
    // A negative think time breaks one rule, said once (not also the
    // service times' `>= 0`).
    assert_eq!(
        errors(&[
            ("client.rate_per_s", "0"),
            closed[0],
            ("client.closed.think.mean_s", "-1"),
        ]),
        [
            "client.closed.think.mean_s: must be > 0 (0.0 is its default): without thinking, a user whose requests are answered at once would send forever at one instant"
        ]
    );
    // The user cap counts the requests closed-loop users can make.
    assert_eq!(
        errors(&[
            ("client.rate_per_s", "0"),
            ("client.closed.users", "1000000"),
            ("client.closed.think.mean_s", "0.001"),
        ]),
        [
            "client.closed.users: users x (1 + duration_s / think mean), a bound of the requests they can make, = 60001000000 users; more than 20000000 in one run would run for hours"
        ]
    );
    assert_eq!(
        errors(&[
            ("client.rate_per_s", "0"),
            ("client.closed.users", "1000001"),
            ("client.closed.think.mean_s", "100"),
        ]),
        ["client.closed.users: must be at most 1000000"]
    );
}

#[test]
fn load_profiles_are_checked_point_by_point() {
    let ramp = [
        ("client.profile.0.at_s", "10"),
        ("client.profile.0.rate_per_s", "100"),
        ("client.profile.1.at_s", "5"),
        ("client.profile.1.rate_per_s", "-1"),
        ("client.sinusoid.amplitude", "0.5"),
    ];
    assert_eq!(
        errors(&ramp),
        [
            "client.rate_per_s: a load profile gives the arrival rate itself; remove client.rate_per_s (or set it to 0) (the scenario has 400.0)",
            "client.sinusoid.amplitude: a sinusoid modulates client.rate_per_s, which a load profile replaces; put the cycle into the profile's points",
            "client.profile.1.at_s: profile points must be in time order: this one is before point 0's 10.0 s",
            "client.profile.1.rate_per_s: must be >= 0",
        ]
    );
    assert_eq!(
        errors(&[
            ("client.rate_per_s", "0"),
            ("client.profile.rate_per_s", "0")
        ]),
        ["client.profile: every point's rate is 0: no user would arrive"]
    );
    // A rate above 0 only after the arrivals end (ch37's duration_s is 60).
    assert_eq!(
        errors(&[
            ("client.rate_per_s", "0"),
            ("client.profile.rate_per_s", "0"),
            ("client.profile.1.at_s", "60"),
            ("client.profile.1.rate_per_s", "0"),
            ("client.profile.2.at_s", "65"),
            ("client.profile.2.rate_per_s", "100"),
        ]),
        [
            "client.profile: the rate is 0 over the whole arrival interval [0, 60) s (client.duration_s): no user would arrive; its rates above 0 come after the arrivals end"
        ]
    );
    // A value out of range for not being finite is told once, not again
    // by its rule under the point's other spelling (`client.profile.0`
    // is `client.profile`).
    assert_eq!(
        errors(&[
            ("client.rate_per_s", "0"),
            ("client.profile.0.rate_per_s", "inf")
        ]),
        ["client.profile.0.rate_per_s: not a finite number (accepted: >= 0)"]
    );
    // A rate near the largest number overflows the integral (through the
    // difference of two rates, to minus infinity): refused all the same.
    assert_eq!(
        errors(&[
            ("client.rate_per_s", "0"),
            ("client.profile.0.rate_per_s", "1e300"),
            ("client.profile.1.at_s", "2"),
            ("client.profile.1.rate_per_s", "50"),
        ]),
        [
            "client.profile: the profile's rate over duration_s = beyond any number of users; more than 20000000 in one run would run for hours"
        ]
    );
    // The user cap counts the profile's integral: 1e6/s for 60 s.
    assert_eq!(
        errors(&[
            ("client.rate_per_s", "0"),
            ("client.profile.rate_per_s", "1e6")
        ]),
        [
            "client.profile: the profile's rate over duration_s = 60000000 users; more than 20000000 in one run would run for hours"
        ]
    );
    assert_eq!(
        errors(&[("client.sinusoid.amplitude", "1.5")]),
        [
            "client.sinusoid.amplitude: must be in [0, 1]: the rate must not fall below 0",
            "client.sinusoid.period_s: must be > 0 (the scenario has 0.0)",
        ]
    );
}

/// A scenario file with `client` lines, next to a CSV file `load.csv`
/// holding `csv`, in a fresh directory; loaded by `load_base`.
fn load_with_csv(name: &str, csv: Option<&str>) -> Result<sim_core::Scenario, Vec<String>> {
    let dir = std::env::temp_dir().join(format!("sim-core-csv-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(common::scenario_file("single-queue.toml"))
        .unwrap()
        .replace("rate_per_s = 80.0", "profile_csv = \"load.csv\"");
    let file = dir.join("scenario.toml");
    std::fs::write(&file, text).unwrap();
    if let Some(csv) = csv {
        std::fs::write(dir.join("load.csv"), csv).unwrap();
    }
    let loaded = sim_core::load_base(file.to_str().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
    loaded.map_err(|e| e.iter().map(ConfigError::to_string).collect())
}

#[test]
fn a_csv_profile_is_read_when_its_scenario_file_is_loaded() {
    let s = load_with_csv("ok", Some("time_s,rate_per_s\n# ramp\n0, 10\n\n20,90\n")).unwrap();
    let points: Vec<(f64, f64)> = s
        .client
        .profile
        .iter()
        .map(|p| (p.at_s, p.rate_per_s))
        .collect();
    assert_eq!(points, [(0.0, 10.0), (20.0, 90.0)]);
    assert_eq!(s.client.profile_csv, None);
    sim_core::validate(&s).unwrap();
    let errors = load_with_csv("garbled", Some("time_s,rate_per_s\n0,10\n5;20\n")).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("client.profile_csv: `")
            && errors[0].ends_with(
                "load.csv` line 3: expected `time_s,rate_per_s` (two numbers), got `5;20`"
            ),
        "{errors:?}"
    );
    // Every bad row at once, each by its line, with the rule it breaks.
    let rows = "time_s,rate_per_s\n0,100\n2,abc\n3,-5\n1,50\n4,1e400\n5,nan\n-1,2\n";
    let errors = load_with_csv("every", Some(rows)).unwrap_err();
    let tails: Vec<&str> = (errors.iter())
        .map(|e| e.split_once("load.csv` ").unwrap().1)
        .collect();
    assert_eq!(
        tails,
        [
            "line 3: expected `time_s,rate_per_s` (two numbers), got `2,abc`",
            "line 4: rate -5 /s: must be >= 0",
            "line 5: time 1 s: before the row above's 3 s (rows must be in time order)",
            "line 6: `4,1e400`: not a finite number",
            "line 7: `5,nan`: not a finite number",
            "line 8: time -1 s: must be >= 0",
        ]
    );
    let errors = load_with_csv("missing", None).unwrap_err();
    assert!(
        errors[0].starts_with("client.profile_csv: cannot read `")
            && errors[0].contains("load.csv`: "),
        "{errors:?}"
    );
    // Not as an override: a run reads no files.
    assert_eq!(
        self::errors(&[("client.profile_csv", "\"load.csv\"")]),
        [
            "client.profile_csv: `profile_csv` is read when the scenario file is loaded (its path relative to that file), so it can be given in the scenario file but not as an override; give the points as `client.profile.<n>.at_s` / `rate_per_s` instead"
        ]
    );
}

/// A tier may be shared by several callers (a DAG), but a branch that
/// calls back up is refused, naming the cycle it would close.
#[test]
fn shared_tiers_are_allowed_and_cycles_are_named() {
    let call =
        "{ attempt_timeout_s = 0.5, max_retries = 0, backoff = \"fixed\", backoff_base_s = 0 }";
    let text = |db_fanout: &str| {
        format!(
            r#"
name = "diamond"
horizon_s = 5
[client]
rate_per_s = 10
duration_s = 5
[client.call]
attempt_timeout_s = 1
max_retries = 0
backoff = "fixed"
backoff_base_s = 0
[[tiers]]
name = "a"
slots = 10
fanout = [{{ to = "b", call = {call} }}, {{ to = "c", call = {call} }}]
[[tiers]]
name = "b"
slots = 10
fanout = [{{ to = "db", call = {call} }}]
[[tiers]]
name = "c"
slots = 10
fanout = [{{ to = "db", call = {call} }}]
[[tiers]]
name = "db"
slots = 10
{db_fanout}
"#
        )
    };
    let errors = |t: &str| problems(&sim_core::Scenario::from_toml(t, "diamond.toml").unwrap());
    assert_eq!(errors(&text("")), Vec::<String>::new(), "b and c share db");
    assert_eq!(
        errors(&text(&format!(
            "fanout = [{{ to = \"b\", call = {call} }}]"
        ))),
        [
            "db.fanout.b: this branch would close the cycle b -> db -> b; a branch must call a tier listed after its caller (no cycles)"
        ]
    );
    // Listed before, but no cycle: the fix is the order.
    let mut s = sim_core::Scenario::from_toml(&text(""), "diamond.toml").unwrap();
    s.tiers[2].fanout[0].to = "b".into();
    let got = problems(&s);
    assert!(
        got.contains(&"c.fanout.b: `b` is listed before `c`; a branch must call a tier listed after its caller (no cycles): move `b` after `c`".to_string()),
        "{got:?}"
    );
}

#[test]
fn replicas_and_their_slow_windows_are_checked() {
    let mut s = sim_core::ch37();
    common::set(
        &mut s,
        &[("svc_b.replicas", "4"), ("svc_b.slow.replicas", "[1, 4]")],
    );
    assert_eq!(
        problems(&s),
        ["svc_b.slow.replicas: no replica 4: `svc_b` has 4 (replicas are numbered from 0)"]
    );
    common::set(&mut s, &[("svc_b.slow.replicas", "[2, 1, 2, 2]")]);
    assert_eq!(
        problems(&s),
        ["svc_b.slow.replicas: replica 2 is listed twice"]
    );
    common::set(
        &mut s,
        &[("svc_b.replicas", "0"), ("svc_b.slow.replicas", "[]")],
    );
    assert_eq!(problems(&s), ["svc_b.replicas: must be between 1 and 64"]);
    common::set(
        &mut s,
        &[("svc_b.replicas", "2"), ("client.outlier_consecutive", "0")],
    );
    assert_eq!(problems(&s), ["client.outlier_consecutive: must be >= 1"]);
    let e =
        sim_core::params::set(&mut s, "svc_b.slow.replicas", &toml::Value::Integer(2)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "svc_b.slow.replicas: expected a list of integers (`[2]`), got integer 2"
    );
}

#[test]
fn a_per_replica_scope_without_its_mechanism_is_refused() {
    let mut s = sim_core::ch37();
    s.tiers[1].call.as_mut().unwrap().breaker_scope = sim_core::scenario::BreakerScope::Replica;
    s.tiers[1].call.as_mut().unwrap().bulkhead_scope = sim_core::scenario::BulkheadScope::Replica;
    assert_eq!(
        problems(&s),
        [
            "svc_a.breaker_scope: \"replica\" has no effect: breaker_scope is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_scope at its default (\"service\")",
            "svc_a.bulkhead_scope: \"replica\" has no effect: bulkhead_scope is how the bulkhead counts, and svc_a.max_in_flight is unbounded (no bulkhead); set svc_a.max_in_flight, or leave bulkhead_scope at its default (\"service\")",
        ]
    );
}

#[test]
fn a_leaky_bucket_holds_whole_requests() {
    assert_eq!(
        errors(&[
            ("svc_b.rate_limit_per_s", "50"),
            ("svc_b.rate_limit_kind", "leaky_bucket"),
            ("svc_b.rate_limit_burst", "2.5"),
        ]),
        ["svc_b.rate_limit_burst: a leaky bucket holds whole requests: give a whole number"]
    );
}

#[test]
fn a_rate_limit_window_shorter_than_the_clock_step_is_refused() {
    // 1e-10 s rounds to 0 ns, a window holding no instant (it divided by
    // zero); 1 ns is the shortest.
    let window = |rate: &str, w: &str| {
        errors(&[
            ("svc_b.rate_limit_per_s", rate),
            ("svc_b.rate_limit_kind", "sliding_window"),
            ("svc_b.rate_limit_window_s", w),
        ])
    };
    assert_eq!(
        window("50", "1e-10"),
        [
            "svc_b.rate_limit_window_s: must be at least 1e-9 (1 ns): the clock counts whole nanoseconds, and a shorter window would be none"
        ]
    );
    assert!(window("1e9", "1e-9").is_empty());
}

/// A fixed or sliding window admits whole requests, rate x window of them:
/// 15/s in windows of 0.1 s would admit 2 a window, 20/s, where it was
/// rounded.
#[test]
fn a_rate_limit_window_holds_a_whole_number_of_requests() {
    for kind in ["fixed_window", "sliding_window"] {
        let window = |rate: &str, w: &str| {
            errors(&[
                ("svc_b.rate_limit_per_s", rate),
                ("svc_b.rate_limit_kind", kind),
                ("svc_b.rate_limit_window_s", w),
            ])
        };
        assert_eq!(
            window("15", "0.1"),
            [
                "svc_b.rate_limit_window_s: a window admits whole requests, rate_limit_per_s x rate_limit_window_s of them, and 15 x 0.1 = 1.5 is not a whole number of at least 1: give a rate and a window whose product is"
            ]
        );
        assert_eq!(window("5", "0.1").len(), 1, "0.5 a window");
        assert!(window("20", "0.1").is_empty());
        assert!(window("300", "0.1").is_empty());
    }
}

/// CoDel reads the wait of the request it dequeues: under LIFO the
/// newest, so it would never see the standing queue.
#[test]
fn codel_is_refused_with_a_lifo_queue() {
    for order in ["lifo", "adaptive_lifo"] {
        assert_eq!(
            errors(&[("svc_b.codel", "true"), ("svc_b.queue_order", order)]),
            [
                "svc_b.codel: CoDel reads the wait of the request dequeued, which lifo and adaptive_lifo take from the newest end: it would never see the standing queue (RFC 8289 assumes a FIFO queue); use queue_order = \"fifo\" with it"
            ]
        );
    }
}

/// Breaker thresholds of 0 would open it on successes alone (Resilience4j
/// refuses them); a time-based window's minimum is not bounded by the
/// count-based window it does not use.
#[test]
fn breaker_thresholds_are_above_0_and_a_time_window_takes_any_minimum() {
    assert_eq!(
        errors(&[
            ("svc_a.breaker", "true"),
            ("svc_a.breaker_failure_rate", "0")
        ]),
        [
            "svc_a.breaker_failure_rate: must be in (0, 1]: at 0 the breaker would open on successes alone"
        ]
    );
    assert_eq!(
        errors(&[
            ("svc_a.breaker", "true"),
            ("svc_a.breaker_window_s", "10"),
            ("svc_a.breaker_min_samples", "500"),
        ]),
        Vec::<String>::new()
    );
}

#[test]
fn a_cache_is_checked() {
    assert_eq!(
        errors(&[
            ("svc_b.cache.hit_ratio", "1"),
            ("svc_a.cache.flush_duration_s", "2"),
            ("gateway.cache.flush_start_s", "3"),
            ("gateway.cache.fill_keys", "0"),
        ]),
        [
            "gateway.cache.fill_keys: must be >= 1",
            "svc_b.cache.hit_ratio: must be in [0, 1) (0: no cache)",
            "gateway.cache.flush_start_s: 3.0 has no effect: cache.flush_start_s is a setting of the cache's flush, and gateway.cache.hit_ratio is 0 (no cache); set gateway.cache.hit_ratio > 0, or leave cache.flush_start_s at its default (0.0)",
            "svc_a.cache.flush_duration_s: 2.0 has no effect: cache.flush_duration_s is a setting of the look-aside cache, and svc_a.cache.hit_ratio is 0 (no cache); set svc_a.cache.hit_ratio > 0, or leave cache.flush_duration_s at its default (0.0)",
        ]
    );
    assert_eq!(
        errors(&[("svc_b.replicas", "2"), ("svc_b.cache.hit_ratio", "0.5")]),
        [
            "svc_b.cache.hit_ratio: not with replicas: a cache hit is answered by no replica, which the balancers, breakers and outlier ejection of its callers do not model"
        ]
    );
}

#[test]
fn gc_pauses_are_checked() {
    assert_single_errors(&[
        (
            "svc_b.gc.pause_s",
            "0.1",
            "svc_b.gc.pause_s: 0.1 has no effect: gc.pause_s is a setting of the GC pauses, and svc_b.gc.every_s is 0 (no pauses); set svc_b.gc.every_s > 0, or leave gc.pause_s at its default (0.0)",
        ),
        (
            "svc_b.gc.every_s",
            "1",
            "svc_b.gc.every_s: pauses of no length: set gc.pause_s or gc.per_queued_s > 0",
        ),
        (
            "svc_b.gc.every_s",
            "-1",
            "svc_b.gc.every_s: must be >= 0 (0: no pauses)",
        ),
    ]);
    assert_eq!(
        errors(&[
            ("svc_a.gc.every_s", "1"),
            ("svc_a.gc.per_queued_s", "-0.1"),
            ("svc_b.gc.every_s", "1"),
            ("svc_b.gc.pause_s", "0.1"),
            ("svc_a.propagate_deadline", "true"),
            ("svc_b.cancel_check_s", "0.01"),
        ]),
        [
            "svc_a.gc.per_queued_s: must be >= 0",
            "svc_a.gc.every_s: a pause freezes the tier's own work, and this tier has none (service.mean_s = 0)",
            "svc_b.gc.every_s: not with cancel_check_s: cooperative cancellation's deadline checks are not modelled across a pause",
        ]
    );
}

#[test]
fn a_shared_rate_limit_needs_a_rate_limit() {
    assert_single_errors(&[(
        "svc_b.rate_limit_scope",
        "service",
        "svc_b.rate_limit_scope: a shared rate limit needs `rate_limit_per_s` > 0 at this tier",
    )]);
    assert_eq!(
        errors(&[
            ("svc_b.rate_limit_scope", "service"),
            ("svc_b.rate_limit_per_s", "50"),
            ("svc_b.replicas", "2"),
        ]),
        Vec::<String>::new()
    );
}

#[test]
fn the_adaptive_limit_has_no_service_scope_and_says_why() {
    let mut s = common::load("ch37");
    for value in ["service", "replica"] {
        let e = sim_core::params::set(&mut s, "svc_b.limit_scope", &common::v(value)).unwrap_err();
        assert_eq!(e.path, "svc_b.limit_scope");
        assert_eq!(e.message, sim_core::params::NO_LIMIT_SCOPE);
    }
    assert!(sim_core::params::NO_LIMIT_SCOPE.starts_with(
        "the adaptive concurrency limit is per replica only: it learns from the latencies"
    ));
    // A tier without the key is left as it was.
    assert_eq!(s, common::load("ch37"));
}

/// Names that run together into the same metric column are refused at the
/// tier that makes the clash: tier `svc_a` with two replicas writes
/// `svc_a_r0_arrivals`, and so would a tier named `svc_a_r0`.
#[test]
fn metric_names_that_would_clash_are_refused() {
    let mut s = common::load("ch37");
    s.tiers[1].replicas = 2;
    s.tiers[2].name = "svc_a_r0".into();
    let got = problems(&s);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with(
            "tiers.svc_a_r0: two metric columns would be named `svc_a_r0_arrivals` (and "
        ),
        "{got:?}"
    );
    assert!(
        got[0].ends_with("more): tier, replica, edge, client group and class names are joined with `_` in metric names; rename this one"),
        "{got:?}"
    );
    s.tiers[2].name = "svc_b".into();
    assert_eq!(problems(&s), Vec::<String>::new());
}

#[test]
fn how_a_tier_rejects_is_refused_where_nothing_rejects() {
    assert_eq!(
        errors(&[
            ("svc_b.reject_latency_s", "0.01"),
            ("svc_b.reject_as", "error"),
        ]),
        [
            "svc_b.reject_latency_s: 0.01 has no effect: reject_latency_s is how long the tier takes to reject a request, and svc_b rejects nothing (its queue is unbounded, with no shed_queue, no rate limit); give svc_b a queue_cap, a shed_queue or a rate_limit_per_s > 0, or leave reject_latency_s at its default (0.0005)",
            "svc_b.reject_as: \"error\" has no effect: reject_as is how the tier answers the requests it rejects, and svc_b rejects nothing (its queue is unbounded, with no shed_queue, no rate limit, no CoDel); give svc_b a queue_cap, a shed_queue, a rate_limit_per_s > 0 or codel = true, or leave reject_as at its default (\"overload\")",
        ]
    );
    // Each mechanism that rejects gives them an effect; CoDel's drops are
    // answered as rejections at once, so it gives reject_as one only.
    for (key, value) in [("svc_b.queue_cap", "16"), ("svc_b.rate_limit_per_s", "50")] {
        let sets = [(key, value), ("svc_b.reject_latency_s", "0.01")];
        assert_eq!(errors(&sets), Vec::<String>::new(), "{key}");
    }
    // A Retry-After rides on rejections: heeded by a caller, it still
    // needs something that rejects.
    let heeded = [
        ("svc_a.honor_retry_after", "true"),
        ("svc_a.max_retries", "2"),
        ("svc_b.retry_after_s", "0.2"),
    ];
    assert_eq!(
        errors(&heeded),
        [
            "svc_b.retry_after_s: 0.2 has no effect: retry_after_s is how the tier answers the requests it rejects, and svc_b rejects nothing (its queue is unbounded, with no shed_queue, no rate limit, no CoDel); give svc_b a queue_cap, a shed_queue, a rate_limit_per_s > 0 or codel = true, or leave retry_after_s at its default (0.0)"
        ]
    );
    let mut capped = heeded.to_vec();
    capped.push(("svc_b.queue_cap", "16"));
    assert_eq!(errors(&capped), Vec::<String>::new());
    let codel = [("svc_b.codel", "true"), ("svc_b.reject_as", "error")];
    assert_eq!(errors(&codel), Vec::<String>::new());
    let codel = [("svc_b.codel", "true"), ("svc_b.reject_latency_s", "0.01")];
    assert_eq!(errors(&codel).len(), 1, "{:?}", errors(&codel));
}

/// A value refused in the scenario file itself is told with the value, as
/// an override's is (by its flag or grid key), and an overridden one is
/// left to the caller to tell.
#[test]
fn a_scenario_file_s_refused_value_is_told() {
    let text = include_str!("../../grids/scenarios/single-queue.toml")
        .replace("rate_per_s = 80.0", "rate_per_s = -2.0");
    let base = sim_core::Scenario::from_toml(&text, "mine.toml").unwrap();
    let told = |sets: &[(&str, &str)]| -> Vec<String> {
        match sim_core::apply_validated(base.clone(), &overrides(sets)) {
            Ok(_) => vec![],
            Err(e) => e.iter().map(ConfigError::to_string).collect(),
        }
    };
    assert_eq!(
        told(&[]),
        [
            "client.rate_per_s: must be > 0: at rate 0 no user arrives (a load profile or a closed loop gives the load otherwise) (the scenario has -2.0)"
        ]
    );
    assert_eq!(
        told(&[("client.rate_per_s", "-3")]),
        [
            "client.rate_per_s: must be > 0: at rate 0 no user arrives (a load profile or a closed loop gives the load otherwise)"
        ]
    );
    assert_eq!(told(&[("client.rate_per_s", "3")]), Vec::<String>::new());
    // Two tiers of one name: the value the path reads is the first one's,
    // so none is told for the second's error.
    let text = include_str!("../../grids/scenarios/single-queue.toml").to_string()
        + "\n[[tiers]]\nname = \"server\"\nslots = 0\n";
    let base = sim_core::Scenario::from_toml(&text, "mine.toml").unwrap();
    let errors = sim_core::apply_validated(base, &[]).unwrap_err();
    let said: Vec<String> = errors.iter().map(ConfigError::to_string).collect();
    assert!(
        said.contains(&"tiers.server: duplicate tier name".to_string()),
        "{said:?}"
    );
    assert!(
        said.contains(&"server.slots: must be >= 1: a tier without slots can never serve, and its queue would only fill".to_string()),
        "{said:?}"
    );
}

/// A gradient limit whose every window would be one completion, short of
/// limit_min_samples and so dropped, would never move: refused, with the
/// fix; one sample a window is a window.
#[test]
fn a_gradient_limit_that_could_never_move_is_refused() {
    let gradient = [
        ("svc_b.adaptive_limit", "true"),
        ("svc_b.limit_algorithm", "gradient"),
        ("svc_b.limit_interval_s", "0"),
    ];
    assert_eq!(
        errors(&gradient),
        [
            "svc_b.limit_interval_s: 0 with the gradient rule makes each completion a window of its own, short of limit_min_samples (10), and a short window is dropped: the limit would never move; give a window (Netflix's are at least 0.1 s), or limit_min_samples = 1"
        ]
    );
    let one = [&gradient[..], &[("svc_b.limit_min_samples", "1")]].concat();
    assert_eq!(errors(&one), Vec::<String>::new());
}

/// A class several client groups name has one rank at every tier: two
/// groups that list their shared classes in opposite orders are refused
/// (the later group's order was silently overruled), and the same order
/// is accepted.
#[test]
fn groups_list_their_shared_classes_in_one_order() {
    let mut s = sim_core::ch37();
    common::with_classes(&mut s, &[("online", 3.0), ("replay", 1.0)]);
    let mut batch = s.client.clone();
    batch.classes.reverse();
    s.clients.insert("batch".to_string(), batch.clone());
    assert_eq!(
        problems(&s),
        [
            "batch.classes.replay: listed above `online`, which `client.classes` ranks above it: a class has one rank at every tier, so groups list the classes they share in the same order"
        ]
    );
    batch.classes.reverse();
    s.clients.insert("batch".to_string(), batch);
    assert!(problems(&s).is_empty(), "{:?}", problems(&s));
}

/// At a latency target of 0 every window of the AIMD limit would breach:
/// refused, with the reason.
#[test]
fn an_aimd_latency_target_of_zero_is_refused() {
    let mut s = sim_core::ch37();
    s.tiers[2].adaptive_limit = true;
    s.tiers[2].limit_latency_s = 0.0;
    assert_eq!(
        problems(&s),
        [
            "svc_b.limit_latency_s: must be > 0 (at 0 every window would breach, and the limit fall to limit_min)"
        ]
    );
}

/// Staggered restarts: crash windows of different replicas may overlap;
/// two that take one replica down twice at once may not.
#[test]
fn crash_windows_overlap_only_on_different_replicas() {
    let windows = |second: &str| {
        errors(&[
            ("svc_b.replicas", "3"),
            ("svc_b.crash.start_s", "12"),
            ("svc_b.crash.duration_s", "4"),
            ("svc_b.crash.replicas", "[2]"),
            ("svc_b.crash.1.start_s", "13"),
            ("svc_b.crash.1.duration_s", "4"),
            ("svc_b.crash.1.replicas", second),
        ])
    };
    assert_eq!(windows("[1]"), Vec::<String>::new());
    let refused = "svc_b.crash.start_s: overlaps crash window 1 of `svc_b`, which takes down a replica it does too: a replica's crash windows may not overlap";
    assert_eq!(windows("[1, 2]"), [refused]);
    assert_eq!(windows("[]"), [refused], "every replica, 2 included");
}

/// A load spike multiplies arrivals: one that starts after the group's
/// arrivals end changes nothing, and would still be the trigger.
#[test]
fn a_spike_after_the_arrivals_end_is_refused() {
    let spike = |start: &str| {
        errors(&[
            ("client.spike.start_s", start),
            ("client.spike.duration_s", "3"),
            ("client.spike.factor", "2"),
        ])
    };
    assert_eq!(spike("57"), Vec::<String>::new());
    assert_eq!(
        spike("60"),
        [
            "client.spike.start_s: 60.0 has no effect: client's arrivals end at 60 s (client.duration_s), so the spike multiplies none; start it before then or raise client.duration_s"
        ]
    );
}
