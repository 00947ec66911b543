//! Semantic checks of a scenario, run before any simulation. Every problem is
//! reported, each with the path a user would write to fix it.

use crate::params::{ConfigError, DEADLINE_PARAMS, needs_client_deadline};
use crate::scenario::{Arrivals, BackoffKind, Call, Dist, Scenario, Service};
use crate::time::NANOS_PER_SEC;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// Most users one run may generate; beyond it a run takes hours and
/// gigabytes, which is a typo, not an experiment.
pub const MAX_EXPECTED_USERS: f64 = 20_000_000.0;

/// Longest simulated time of one run: its per-second series grow with it.
pub const MAX_HORIZON_S: f64 = 1_000_000.0;

/// Narrowest bin of the sub-second series: 100 a second per tier.
pub const MIN_SERIES_BIN_S: f64 = 0.01;

/// Most closed-loop users: each keeps its state for the whole run.
pub const MAX_CLOSED_USERS: u32 = 1_000_000;

/// Most consumers of one message queue (a limit, not a cost: a typo
/// beyond it).
pub const MAX_CONSUMERS: u32 = 1_000_000;

/// Most tenants of one client group: each keeps a share in a table, and
/// each keyed rate limit a limiter, for the whole run.
pub const MAX_TENANTS: u32 = 100_000;
/// The most request classes a scenario may have, over all its client
/// groups: a user's class is a `u8`.
pub const MAX_CLASSES: usize = 256;

/// Most replicas of one tier, and server instances (replicas of every tier)
/// in all: a request names its instance in one byte, so that a job stays
/// one cache line.
pub const MAX_REPLICAS: u32 = 64;
pub const MAX_INSTANCES: u32 = 256;

/// Every problem of the scenario at once, a key that cannot act where it
/// is set ([`inert_settings`]) among them.
pub fn validate(s: &Scenario) -> Result<(), Vec<ConfigError>> {
    checked(s, true)
}

/// As [`validate`], but a key that cannot act in this scenario is not
/// refused: a grid refuses such a key only when it acts at none of its
/// points (a `[set]` breaker setting beside an axis that turns the breaker
/// on and off acts at half of them).
pub fn validate_settings(s: &Scenario) -> Result<(), Vec<ConfigError>> {
    checked(s, false)
}

/// The keys set to another value than their default where they cannot
/// act (their mechanism is off, or another rule is chosen), each as an
/// error with the reason and what would make it act.
pub fn inert_settings(s: &Scenario) -> Vec<ConfigError> {
    let mut errors = Vec::new();
    check_inert_all(s, &mut errors);
    errors
}

/// The keys of `s` (a base scenario with `overrides` applied) that cannot
/// act and are the overrides' to answer for: those an override writes (the
/// path itself or a table holding it), and those already idle in the base
/// (`idle_in_base`, its [`inert_settings`] paths). A value inherited from
/// the base where it acts is not refused when an override turns its
/// mechanism off: `svc_b.service.slow_p = 0` leaves the file's `slow_s`
/// idle, and the user wrote no `slow_s`. A `strategy` override writes its
/// preset's keys: a preset that sets a key where it cannot act is refused
/// as the same key given by hand would be.
pub fn inert_overrides(
    s: &Scenario,
    idle_in_base: &[String],
    overrides: &[(String, toml::Value)],
) -> Vec<ConfigError> {
    (inert_settings(s).into_iter())
        .filter(|e| idle_in_base.contains(&e.path) || overrides_write(s, overrides, &e.path))
        .collect()
}

/// Whether `overrides` write `path`: the path itself (in any spelling), a
/// table holding it, or a key of the preset a `strategy` override applies
/// (one of `s`'s presets).
pub fn overrides_write(s: &Scenario, overrides: &[(String, toml::Value)], path: &str) -> bool {
    let canonical = crate::params::canonical;
    let path = canonical(path);
    let covers = |p: &str| {
        let p = canonical(p);
        p == path || (path.strip_prefix(p.as_str())).is_some_and(|r| r.starts_with('.'))
    };
    (overrides.iter()).any(|(p, v)| {
        covers(p)
            || (p == "strategy"
                && (v.as_str().and_then(|name| s.presets.get(name)))
                    .is_some_and(|preset| preset.keys().any(|k| covers(k))))
    })
}

fn checked(s: &Scenario, refuse_inert: bool) -> Result<(), Vec<ConfigError>> {
    let mut errors = Vec::new();
    let mut check = |ok: bool, path: String, message: &str| {
        if !ok {
            errors.push(ConfigError::new(path, message));
        }
    };
    let positive = |x: f64| x.is_finite() && x > 0.0;
    let non_negative = |x: f64| x.is_finite() && x >= 0.0;

    check(
        positive(s.horizon_s),
        "horizon_s".into(),
        "must be a positive number of seconds",
    );
    check(
        !s.clients.contains_key("client"),
        "clients.client".into(),
        "`client` is the scenario's own client ([client]); name the other groups otherwise",
    );
    for (g, c) in s.groups() {
        check_group(s, g, c, &mut check);
    }
    check_class_order(s, &mut check);
    check(
        !positive(s.horizon_s) || s.horizon_s <= MAX_HORIZON_S,
        "horizon_s".into(),
        &format!(
            "must be at most {MAX_HORIZON_S:.0} s (11.6 days): every run keeps per-second series"
        ),
    );
    check(s.max_events != Some(0), "max_events".into(), "must be >= 1");
    let bin_ns = (s.series_bin_s * NANOS_PER_SEC as f64).round();
    check(
        s.series_bin_s.is_finite()
            && (MIN_SERIES_BIN_S..=1.0).contains(&s.series_bin_s)
            && NANOS_PER_SEC.is_multiple_of(bin_ns as u64),
        "series_bin_s".into(),
        &format!(
            "must divide 1 s evenly (0.5, 0.25, 0.2, 0.1, 0.05, ...) and be at least {MIN_SERIES_BIN_S} s; got {}",
            s.series_bin_s
        ),
    );
    let classes = crate::params::class_names(s);
    // The groups that declare none are one class more, of their own.
    let unnamed = s.groups().any(|(_, c)| c.classes.is_empty());
    let count = classes.len() + usize::from(unnamed);
    if count > MAX_CLASSES {
        // Said at the group that declares the first class past the bound
        // (`class_names` lists them in the groups' order).
        let first_over = classes[MAX_CLASSES - usize::from(unnamed)];
        let (g, _) = (s.groups())
            .find(|(_, c)| c.classes.iter().any(|k| k.name == first_over))
            .expect("a group declares it");
        check(
            false,
            format!("{g}.classes"),
            &format!(
                "{count} request classes across the client groups{}: at most {MAX_CLASSES} (a user's class is one byte of its record)",
                if unnamed {
                    ", one of them the groups that declare none"
                } else {
                    ""
                }
            ),
        );
    }
    let known = if classes.is_empty() {
        "none declared; see [[client.classes]]".to_string()
    } else {
        classes.join(", ")
    };
    for t in &s.tiers {
        for (key, named) in [
            ("class_slots", t.class_slots.keys().collect::<Vec<_>>()),
            ("shed_queue", t.shed_queue.keys().collect()),
            ("class_service_s", t.class_service_s.keys().collect()),
        ] {
            for class in named {
                check(
                    classes.contains(&class.as_str()),
                    format!("{}.{key}.{class}", t.name),
                    &format!("no request class is named `{class}` (classes: {known})"),
                );
            }
        }
        for (class, n) in &t.class_slots {
            check(
                *n >= 1,
                format!("{}.class_slots.{class}", t.name),
                "must be >= 1 (or \"unbounded\")",
            );
        }
        for (class, mean) in &t.class_service_s {
            check(
                positive(*mean),
                format!("{}.class_service_s.{class}", t.name),
                "must be > 0 seconds (a class without work here: leave it out)",
            );
        }
    }
    check(
        positive(s.recovery.window_s),
        "recovery.window_s".into(),
        "must be > 0",
    );
    check(
        s.recovery.threshold > 0.0 && s.recovery.threshold <= 1.0,
        "recovery.threshold".into(),
        "must be in (0, 1]",
    );
    check(
        !s.tiers.is_empty(),
        "tiers".into(),
        "the chain needs at least one tier",
    );
    check(s.tiers.len() <= 64, "tiers".into(), "at most 64 tiers");

    let mut seen = BTreeSet::new();
    for t in &s.tiers {
        let path = |k: &str| format!("{}.{k}", t.name);
        let valid_name = !t.name.is_empty()
            && t.name != "client"
            && t.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        check(
            valid_name,
            format!("tiers.{}", t.name),
            "a tier name is lowercase letters, digits and `_`, and not `client`",
        );
        check(
            seen.insert(t.name.clone()),
            format!("tiers.{}", t.name),
            "duplicate tier name",
        );
        check(
            (1..=MAX_REPLICAS).contains(&t.replicas),
            path("replicas"),
            &format!("must be between 1 and {MAX_REPLICAS}"),
        );
        check(
            t.slots >= 1,
            path("slots"),
            "must be >= 1: a tier without slots can never serve, and its queue would only fill",
        );
        check(
            non_negative(t.reject_latency_s),
            path("reject_latency_s"),
            "must be >= 0",
        );
        check(
            t.limit_min >= 1 && t.limit_min <= t.slots.max(1),
            path("limit_min"),
            "must be between 1 and slots",
        );
        check(
            t.limit_decrease > 0.0 && t.limit_decrease < 1.0,
            path("limit_decrease"),
            "must be in (0, 1)",
        );
        check(
            positive(t.limit_latency_s),
            path("limit_latency_s"),
            "must be > 0 (at 0 every window would breach, and the limit fall to limit_min)",
        );
        check(
            non_negative(t.limit_interval_s),
            path("limit_interval_s"),
            "must be >= 0",
        );
        check(
            t.limit_min_samples >= 1,
            path("limit_min_samples"),
            "must be >= 1",
        );
        check(
            !(t.adaptive_limit
                && t.limit_algorithm == LimitAlgorithm::Gradient
                && t.limit_interval_s == 0.0
                && t.limit_min_samples > 1),
            path("limit_interval_s"),
            &format!(
                "0 with the gradient rule makes each completion a window of its own, short of limit_min_samples ({}), and a short window is dropped: the limit would never move; give a window (Netflix's are at least 0.1 s), or limit_min_samples = 1",
                t.limit_min_samples
            ),
        );
        check(
            t.limit_breaches >= 1,
            path("limit_breaches"),
            "must be >= 1",
        );
        check(
            t.limit_tolerance.is_finite() && t.limit_tolerance >= 1.0,
            path("limit_tolerance"),
            "must be >= 1",
        );
        check(
            t.limit_smoothing > 0.0 && t.limit_smoothing <= 1.0,
            path("limit_smoothing"),
            "must be in (0, 1]",
        );
        check(
            t.limit_long_window >= 1,
            path("limit_long_window"),
            "must be >= 1",
        );
        check(
            non_negative(t.rate_limit_per_s),
            path("rate_limit_per_s"),
            "must be >= 0",
        );
        check(
            t.rate_limit_burst.is_finite() && t.rate_limit_burst >= 1.0,
            path("rate_limit_burst"),
            "must be at least 1 token",
        );
        check(
            t.rate_limit_kind != crate::scenario::RateLimitKind::LeakyBucket
                || t.rate_limit_burst.fract() == 0.0,
            path("rate_limit_burst"),
            "a leaky bucket holds whole requests: give a whole number",
        );
        // A window admits whole requests: `rate x window` of them.
        let per_window = t.rate_limit_per_s * t.rate_limit_window_s;
        check(
            !(t.rate_limit_per_s > 0.0
                && t.rate_limit_window_s >= 1e-9
                && matches!(
                    t.rate_limit_kind,
                    crate::scenario::RateLimitKind::FixedWindow
                        | crate::scenario::RateLimitKind::SlidingWindow
                )
                && (per_window < 1.0 - 1e-9 || (per_window - per_window.round()).abs() > 1e-9)),
            path("rate_limit_window_s"),
            &format!(
                "a window admits whole requests, rate_limit_per_s x rate_limit_window_s of them, and {} x {} = {} is not a whole number of at least 1: give a rate and a window whose product is",
                t.rate_limit_per_s,
                t.rate_limit_window_s,
                (per_window * 1e6).round() / 1e6
            ),
        );
        check(
            !(t.codel
                && matches!(
                    t.queue_order,
                    crate::scenario::QueueOrder::Lifo | crate::scenario::QueueOrder::AdaptiveLifo
                )),
            path("codel"),
            "CoDel reads the wait of the request dequeued, which lifo and adaptive_lifo take from the newest end: it would never see the standing queue (RFC 8289 assumes a FIFO queue); use queue_order = \"fifo\" with it",
        );
        check(
            t.rate_limit_window_s.is_finite() && t.rate_limit_window_s >= 1e-9,
            path("rate_limit_window_s"),
            "must be at least 1e-9 (1 ns): the clock counts whole nanoseconds, and a shorter window would be none",
        );
        check(
            t.rate_limit_scope == crate::scenario::LimitScope::Replica || t.rate_limit_per_s > 0.0,
            path("rate_limit_scope"),
            "a shared rate limit needs `rate_limit_per_s` > 0 at this tier",
        );
        check_aimd_only(t, &mut check);
        if t.rate_limit_key == crate::scenario::RateLimitKey::Tenant {
            check_tenant_key(s, t, &mut check);
        }
        check(
            non_negative(t.codel_target_s),
            path("codel_target_s"),
            "must be >= 0",
        );
        check(
            t.codel_interval_s.is_finite() && t.codel_interval_s > 0.0,
            path("codel_interval_s"),
            "must be > 0",
        );
        check(
            non_negative(t.retry_after_s),
            path("retry_after_s"),
            "must be >= 0",
        );
        check(
            non_negative(t.cancel_check_s),
            path("cancel_check_s"),
            "must be >= 0",
        );
        for (what, d) in [("service", &t.service), ("latency", &t.latency)] {
            check_dist(&path(what), d, Mean::NonNegative, &mut check);
        }
        check(
            non_negative(t.service.per_inflight_s),
            path("service.per_inflight_s"),
            "must be >= 0",
        );
        check_gc(t, &mut check);
        check_cache(t, &mut check);
        check(
            t.latency.per_inflight_s == 0.0,
            path("latency.per_inflight_s"),
            "network latency does not depend on the requests in service; the term belongs to the tier's service (service.per_inflight_s)",
        );
    }
    let instances: u64 = s.tiers.iter().map(|t| t.replicas as u64).sum();
    check(
        instances <= MAX_INSTANCES as u64,
        "tiers".into(),
        &format!(
            "{instances} replicas in all (every tier's replicas summed); at most {MAX_INSTANCES}"
        ),
    );
    for t in &s.tiers {
        for (i, w) in t.slow.iter().enumerate() {
            check_replicas(
                t,
                &w.replicas,
                window_path(&t.name, "slow", i, "replicas"),
                &mut check,
            );
        }
    }
    // Slow windows of every tier and load spikes of the client.
    let windows = s
        .tiers
        .iter()
        .map(|t| (format!("{}.slow", t.name), &t.slow))
        .chain(s.groups().map(|(g, c)| (format!("{g}.spike"), &c.spike)));
    for (prefix, list) in windows {
        for (i, w) in list.iter().enumerate() {
            let path = |k: &str| {
                if i == 0 {
                    format!("{prefix}.{k}")
                } else {
                    format!("{prefix}.{i}.{k}")
                }
            };
            check(non_negative(w.start_s), path("start_s"), "must be >= 0");
            check(
                non_negative(w.duration_s),
                path("duration_s"),
                "must be >= 0",
            );
            check(positive(w.factor), path("factor"), "must be > 0");
        }
    }
    for t in &s.tiers {
        for (i, w) in t.errors.iter().enumerate() {
            let path = |k: &str| window_path(&t.name, "errors", i, k);
            check(non_negative(w.start_s), path("start_s"), "must be >= 0");
            check(
                non_negative(w.duration_s),
                path("duration_s"),
                "must be >= 0",
            );
            check(
                (0.0..=1.0).contains(&w.p),
                path("p"),
                "must be a probability in [0, 1]",
            );
            check(
                w.p == 0.0 || w.duration_s > 0.0,
                path("duration_s"),
                "a window of length 0 fails nothing; give its length (for errors all the time, the horizon)",
            );
            check_replicas(t, &w.replicas, path("replicas"), &mut check);
        }
        for (i, w) in t.crash.iter().enumerate() {
            let path = |k: &str| window_path(&t.name, "crash", i, k);
            check(non_negative(w.start_s), path("start_s"), "must be >= 0");
            check(
                non_negative(w.duration_s),
                path("duration_s"),
                "must be >= 0",
            );
            check(
                non_negative(w.connect_latency_s),
                path("connect_latency_s"),
                "must be >= 0",
            );
            check(
                w.mode == crate::scenario::CrashMode::Refused
                    || w.connect_latency_s == crate::scenario::default_connect_latency(),
                path("connect_latency_s"),
                "a black hole refuses no connection (mode = \"refused\" has a connect latency)",
            );
            check_replicas(t, &w.replicas, path("replicas"), &mut check);
            let end = w.start_s + w.duration_s;
            // Windows of different replicas may overlap (staggered restarts).
            let shared = |o: &crate::scenario::CrashWindow| {
                w.replicas.is_empty()
                    || o.replicas.is_empty()
                    || w.replicas.iter().any(|r| o.replicas.contains(r))
            };
            for (j, o) in t.crash.iter().enumerate().skip(i + 1) {
                // The message made only for a pair that overlaps: the
                // pairs are quadratic in the windows.
                if end <= o.start_s || o.start_s + o.duration_s <= w.start_s || !shared(o) {
                    continue;
                }
                check(
                    false,
                    path("start_s"),
                    &format!(
                        "overlaps crash window {j} of `{}`, which takes down a replica it does too: a replica's crash windows may not overlap",
                        t.name
                    ),
                );
            }
        }
        check(
            t.reject_as == crate::scenario::RejectAs::Overload || t.retry_after_s == 0.0,
            format!("{}.retry_after_s", t.name),
            "the tier answers its rejections as errors (reject_as = \"error\", a 500), which carry no Retry-After",
        );
        check(
            non_negative(t.error_latency_s),
            format!("{}.error_latency_s", t.name),
            "must be >= 0",
        );
    }
    check_topology(s, &mut errors);
    for edge in s.edges() {
        check_call(&edge.path, edge.call, &mut errors);
    }
    if refuse_inert {
        check_inert_all(s, &mut errors);
    }
    if errors.is_empty() {
        check_metric_names(s, &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Every metric column has its own name: tier, replica, edge, group and
/// class names run together with `_` (tier `a` with replicas writes
/// `a_r0_arrivals`, and so would a tier named `a_r0`). A clash is named at
/// the tier, group or class whose name is the longest prefix of the column.
fn check_metric_names(s: &Scenario, errors: &mut Vec<ConfigError>) {
    // Most scenarios have no clash: told without writing the names out.
    if crate::result::schema_result(s).names_surely_distinct() {
        return;
    }
    let mut seen = BTreeSet::new();
    let mut clashes: std::collections::BTreeMap<String, (String, usize)> = Default::default();
    for m in crate::result::metric_schema(s) {
        if seen.insert(m.name.clone()) {
            continue;
        }
        let tiers = s
            .tiers
            .iter()
            .map(|t| (format!("{}_", t.name), format!("tiers.{}", t.name)));
        let groups = s
            .clients
            .keys()
            .map(|g| (format!("group_{g}_"), format!("clients.{g}")));
        let classes = (s.groups()).flat_map(|(g, c)| {
            (c.classes.iter()).map(move |k| {
                (
                    format!("class_{}_", k.name),
                    format!("{g}.classes.{}", k.name),
                )
            })
        });
        let path = (tiers.chain(groups).chain(classes))
            .filter(|(prefix, _)| m.name.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map_or_else(|| "tiers".to_string(), |(_, path)| path);
        clashes.entry(path).or_insert((m.name, 0)).1 += 1;
    }
    for (path, (first, count)) in clashes {
        let more = if count > 1 {
            format!(" (and {} more)", count - 1)
        } else {
            String::new()
        };
        errors.push(ConfigError::new(
            path,
            format!(
                "two metric columns would be named `{first}`{more}: tier, replica, edge, client group and class names are joined with `_` in metric names; rename this one"
            ),
        ));
    }
}

/// The checks of one client group (`client`, or a named group `g`), each
/// with the path under its name.
fn check_group(
    s: &Scenario,
    g: &str,
    c: &crate::scenario::Client,
    check: &mut impl FnMut(bool, String, &str),
) {
    let positive = |x: f64| x.is_finite() && x > 0.0;
    let non_negative = |x: f64| x.is_finite() && x >= 0.0;
    if g != "client" {
        let tier = s.tier(g).is_some();
        check(
            !g.is_empty()
                && g.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
                && !tier,
            format!("clients.{g}"),
            if tier {
                "a client group and a tier share this name, which begins both their parameter paths"
            } else {
                "a client group name is made of a-z, 0-9 and _ (it begins its parameter paths and names metric columns)"
            },
        );
    }
    check_load(g, c, check);
    check_queue(g, c, check);
    check(
        positive(c.duration_s),
        format!("{g}.duration_s"),
        "must be > 0",
    );
    check(
        non_negative(c.deadline_s),
        format!("{g}.deadline_s"),
        "must be >= 0 (0: no total deadline)",
    );
    check(
        !(positive(s.horizon_s) && s.horizon_s < c.duration_s),
        "horizon_s".into(),
        &format!(
            "the horizon ({:?} s) ends before the arrivals do ({g}.duration_s = {:?} s): raise horizon_s or shorten {g}.duration_s",
            s.horizon_s, c.duration_s
        ),
    );
    // Load spikes and profiles count: a factor of 10 for the whole run is
    // ten times the users.
    let open = c.closed.is_off();
    let countable = positive(c.duration_s)
        && c.duration_s <= MAX_HORIZON_S
        && c.spike
            .iter()
            .all(|w| non_negative(w.start_s) && non_negative(w.duration_s) && positive(w.factor))
        && c.profile
            .iter()
            .all(|p| non_negative(p.at_s) && non_negative(p.rate_per_s))
        && (c.sinusoid.is_off() || positive(c.sinusoid.period_s))
        && (open && non_negative(c.rate_per_s) || !open && positive(c.closed.think.mean_s));
    if countable {
        let users = crate::model::expected_group_users(c);
        let (path, how) = if !open {
            (
                format!("{g}.closed.users"),
                "users x (1 + duration_s / think mean), a bound of the requests they can make,",
            )
        } else if !c.profile.is_empty() {
            (format!("{g}.profile"), "the profile's rate over duration_s")
        } else if !c.sinusoid.is_off() {
            (
                format!("{g}.rate_per_s"),
                "rate_per_s x duration_s with its sinusoid",
            )
        } else if !c.spike.is_empty() {
            (
                format!("{g}.rate_per_s"),
                "rate_per_s x duration_s with its load spikes",
            )
        } else {
            (format!("{g}.rate_per_s"), "rate_per_s x duration_s")
        };
        // A rate near the largest number overflows the estimate (to
        // infinity, or through a difference of rates to minus infinity).
        let count = if !users.is_finite() {
            "beyond any number of users".to_string()
        } else if users < 1e15 {
            format!("{users:.0} users")
        } else {
            format!("{users:.2e} users")
        };
        check(
            users.is_finite() && users <= MAX_EXPECTED_USERS,
            path,
            &format!(
                "{how} = {count}; more than {MAX_EXPECTED_USERS:.0} in one run would run for hours"
            ),
        );
    }
    let classes: Vec<&str> = c.classes.iter().map(|c| c.name.as_str()).collect();
    for (i, class) in c.classes.iter().enumerate() {
        let path = format!("{g}.classes.{}", class.name);
        check(
            !class.name.is_empty()
                && class
                    .name
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'),
            path.clone(),
            "a class name is made of a-z, 0-9 and _ (it names metric columns)",
        );
        check(
            !classes[..i].contains(&class.name.as_str()),
            path.clone(),
            "duplicate class name",
        );
        check(
            class.share.is_finite() && class.share > 0.0,
            format!("{path}.share"),
            "must be > 0 (shares are relative weights)",
        );
    }
    check(
        c.tenants <= MAX_TENANTS,
        format!("{g}.tenants"),
        &format!("must be at most {MAX_TENANTS}"),
    );
    check(
        c.tenant_zipf_s.is_finite() && (0.0..=10.0).contains(&c.tenant_zipf_s),
        format!("{g}.tenant_zipf_s"),
        "must be between 0 and 10",
    );
    for (i, w) in c.spike.iter().enumerate() {
        let path = if i == 0 {
            format!("{g}.spike.replicas")
        } else {
            format!("{g}.spike.{i}.replicas")
        };
        check(
            w.replicas.is_empty(),
            path,
            "a load spike multiplies the client's arrival rate; it has no replicas to choose",
        );
    }
}

/// A message queue: on a further group with open arrivals only (the
/// producers), a positive redelivery delay, and no knob of it without
/// consumers.
/// A class several groups name is one class with one rank at every
/// tier: the groups must list the classes they share in the same order.
/// Classes rank in the order the groups are read (`client` first, then the
/// others by name), so a later group that lists them the other way round
/// would be silently overruled.
fn check_class_order(s: &Scenario, check: &mut impl FnMut(bool, String, &str)) {
    let mut ranked: Vec<(&str, &str)> = Vec::new(); // (class, the group that ranked it)
    for (g, c) in s.groups() {
        for (i, class) in c.classes.iter().enumerate() {
            let rank = |name: &str| ranked.iter().position(|(k, _)| *k == name);
            let above = (c.classes[i + 1..].iter())
                .filter_map(|later| rank(&later.name).map(|r| (r, later.name.as_str())))
                .find(|(r, _)| rank(&class.name).is_some_and(|mine| *r < mine));
            if let Some((r, later)) = above {
                let by = ranked[r].1;
                check(
                    false,
                    format!("{g}.classes.{}", class.name),
                    &format!(
                        "listed above `{later}`, which `{by}.classes` ranks above it: a class has one rank at every tier, so groups list the classes they share in the same order"
                    ),
                );
            }
        }
        for class in &c.classes {
            if !ranked.iter().any(|(k, _)| *k == class.name) {
                ranked.push((class.name.as_str(), g));
            }
        }
    }
}

fn check_queue(g: &str, c: &crate::scenario::Client, check: &mut impl FnMut(bool, String, &str)) {
    let q = &c.queue;
    let path = |k: &str| format!("{g}.queue.{k}");
    check(
        q.consumers <= MAX_CONSUMERS,
        path("consumers"),
        &format!("must be at most {MAX_CONSUMERS}"),
    );
    check(
        q.drain_rate_per_s.is_finite() && q.drain_rate_per_s >= 0.0,
        path("drain_rate_per_s"),
        "must be >= 0 (0: at full speed)",
    );
    check(
        q.redeliver_after_s.is_finite() && q.redeliver_after_s > 0.0,
        path("redeliver_after_s"),
        "must be > 0: a message redelivered at once to a dependency that fails at once would be delivered forever at one instant",
    );
    check(
        q.max_backlog.is_none_or(|m| m >= 1),
        path("max_backlog"),
        "must be >= 1 (or \"unbounded\"): 0 would drop every message",
    );
    let not_client = "`client` is the online users, who wait for their own answers; a queue's consumers are a client group of their own: declare [clients.<name>] with queue.consumers";
    // A further group without consumers: its queue's keys are the inert
    // rules' (CLIENT_INERT), so that a grid may turn the queue on and off.
    if q.is_off() && g == "client" {
        let defaults = crate::scenario::Queue::default();
        let off = not_client;
        check(
            q.drain_rate_per_s == defaults.drain_rate_per_s,
            path("drain_rate_per_s"),
            off,
        );
        check(
            q.redeliver_after_s == defaults.redeliver_after_s,
            path("redeliver_after_s"),
            off,
        );
        check(q.max_backlog.is_none(), path("max_backlog"), off);
        return;
    }
    if q.is_off() {
        return;
    }
    check(g != "client", path("consumers"), not_client);
    check(
        c.closed.is_off(),
        path("consumers"),
        "a queue's producers are the group's open arrivals; closed-loop users wait for their own outcome, which a published message does not",
    );
}

/// The AIMD limit's own steps: refused where no AIMD limit acts.
fn check_aimd_only(t: &crate::scenario::Tier, check: &mut impl FnMut(bool, String, &str)) {
    let path = |k: &str| format!("{}.{k}", t.name);
    check(
        (0.0..=100.0).contains(&t.limit_increase_percent),
        path("limit_increase_percent"),
        "must be between 0 and 100",
    );
    check(
        t.limit_hold_s.is_finite() && t.limit_hold_s >= 0.0,
        path("limit_hold_s"),
        "must be >= 0",
    );
}

/// A per-tenant rate limit: a limit to key, keys to count by, and a
/// limiter that can be split by key.
fn check_tenant_key(
    s: &Scenario,
    t: &crate::scenario::Tier,
    check: &mut impl FnMut(bool, String, &str),
) {
    let path = format!("{}.rate_limit_key", t.name);
    check(
        t.rate_limit_per_s > 0.0,
        path.clone(),
        "a per-tenant rate limit needs `rate_limit_per_s` > 0 at this tier",
    );
    check(
        s.groups().any(|(_, c)| c.tenants > 1),
        path.clone(),
        "no user carries a tenant key: set `client.tenants` (or a group's) > 1",
    );
    check(
        t.rate_limit_scope == crate::scenario::LimitScope::Replica,
        path.clone(),
        "per-tenant limiters shared by the replicas (`rate_limit_scope = \"service\"`) are not modelled: each replica keeps its own per tenant",
    );
    check(
        t.rate_limit_kind != crate::scenario::RateLimitKind::LeakyBucket,
        path,
        "a leaky bucket is one queue in front of the tier, not one per tenant: use token_bucket, fixed_window or sliding_window",
    );
}

/// GC pauses: non-negative lengths, and no length without a period; a
/// pause freezes the tier's own work, so it needs some, and cooperative
/// cancellation's deadline checks are not modelled across a pause.
fn check_gc(t: &crate::scenario::Tier, check: &mut impl FnMut(bool, String, &str)) {
    let path = |k: &str| format!("{}.gc.{k}", t.name);
    let gc = &t.gc;
    let non_negative = |x: f64| x.is_finite() && x >= 0.0;
    check(
        non_negative(gc.every_s),
        path("every_s"),
        "must be >= 0 (0: no pauses)",
    );
    for (key, x) in [("pause_s", gc.pause_s), ("per_queued_s", gc.per_queued_s)] {
        check(non_negative(x), path(key), "must be >= 0");
    }
    if gc.every_s > 0.0 {
        check(
            gc.pause_s != 0.0 || gc.per_queued_s != 0.0,
            path("every_s"),
            "pauses of no length: set gc.pause_s or gc.per_queued_s > 0",
        );
        check(
            t.service.mean_s > 0.0,
            path("every_s"),
            "a pause freezes the tier's own work, and this tier has none (service.mean_s = 0)",
        );
        check(
            t.cancel_check_s == 0.0,
            path("every_s"),
            "not with cancel_check_s: cooperative cancellation's deadline checks are not modelled across a pause",
        );
    }
}

/// A look-aside cache: a ratio below 1, a flush only on a cache, and
/// replicas refused (a hit is answered by no replica, and the model keeps
/// the cache with the tier's only instance).
fn check_cache(t: &crate::scenario::Tier, check: &mut impl FnMut(bool, String, &str)) {
    let path = |k: &str| format!("{}.cache.{k}", t.name);
    let c = &t.cache;
    let non_negative = |x: f64| x.is_finite() && x >= 0.0;
    check(
        (0.0..1.0).contains(&c.hit_ratio),
        path("hit_ratio"),
        "must be in [0, 1) (0: no cache)",
    );
    check(
        non_negative(c.hit_latency_s),
        path("hit_latency_s"),
        "must be >= 0",
    );
    check(
        non_negative(c.flush_start_s),
        path("flush_start_s"),
        "must be >= 0",
    );
    check(
        non_negative(c.flush_duration_s),
        path("flush_duration_s"),
        "must be >= 0",
    );
    check(c.fill_keys >= 1, path("fill_keys"), "must be >= 1");
    check(
        c.hit_ratio == 0.0 || t.replicas == 1,
        path("hit_ratio"),
        "not with replicas: a cache hit is answered by no replica, which the balancers, breakers and outlier ejection of its callers do not model",
    );
}

/// The path of `key` in window `i` of a tier's list `list` (`slow`,
/// `errors`, `crash`): `<tier>.<list>.<key>` for the first, else
/// `<tier>.<list>.<i>.<key>`.
fn window_path(tier: &str, list: &str, i: usize, key: &str) -> String {
    if i == 0 {
        format!("{tier}.{list}.{key}")
    } else {
        format!("{tier}.{list}.{i}.{key}")
    }
}

/// Every replica a window of tier `t` names that the tier does not have.
fn check_replicas(
    t: &crate::scenario::Tier,
    replicas: &[u32],
    path: String,
    check: &mut impl FnMut(bool, String, &str),
) {
    for r in replicas.iter().filter(|r| **r >= t.replicas) {
        check(
            false,
            path.clone(),
            &format!(
                "no replica {r}: `{}` has {} (replicas are numbered from 0)",
                t.name, t.replicas
            ),
        );
    }
    // As `retry_on` refuses a repeated name: a repeat is a typo (said
    // once, at its first repeat).
    for (i, r) in replicas.iter().enumerate() {
        if replicas[..i].iter().filter(|x| *x == r).count() == 1 {
            check(false, path.clone(), &format!("replica {r} is listed twice"));
        }
    }
}

/// Where the load comes from: open arrivals at `rate_per_s`, shaped by a
/// sinusoid, or given by a profile; or closed-loop users. Each of these
/// refuses the parameters that cannot act with it.
fn check_load(g: &str, c: &crate::scenario::Client, check: &mut impl FnMut(bool, String, &str)) {
    let rate_given = c.rate_per_s != 0.0;
    // Refused with open arrivals too: it is no think time's parameter.
    check(
        c.closed.think.per_inflight_s == 0.0,
        format!("{g}.closed.think.per_inflight_s"),
        "a think time does not depend on the requests in service; the term belongs to a tier's service (<tier>.service.per_inflight_s)",
    );
    check(
        c.arrivals == Arrivals::Poisson
            || (c.closed.is_off() && c.profile.is_empty() && c.sinusoid.is_off()),
        format!("{g}.arrivals"),
        "`even` spaces arrivals at a constant rate (and its load spikes); a profile, a sinusoid or closed-loop users set the arrivals themselves",
    );
    check(
        c.profile_csv.is_none(),
        format!("{g}.profile_csv"),
        &format!(
            "`{}` was not read: {}",
            c.profile_csv.as_deref().unwrap_or_default(),
            crate::params::read_when_loaded("profile_csv")
        ),
    );
    if !c.closed.is_off() {
        // The arrival rate and a sinusoid are idle here (CLIENT_INERT); a
        // spike is not: it is the trigger whose window the recovery is
        // judged after.
        let why = "closed-loop users send at their own pace (users / (think + response)), so";
        check(
            c.profile.is_empty(),
            format!("{g}.profile"),
            &format!("{why} a load profile has no arrival rate to shape"),
        );
        check(
            c.spike.is_empty(),
            format!("{g}.spike"),
            &format!("{why} a load spike has no arrival rate to multiply"),
        );
        check(
            c.closed.users <= MAX_CLOSED_USERS,
            format!("{g}.closed.users"),
            &format!("must be at most {MAX_CLOSED_USERS}"),
        );
        let think = &c.closed.think;
        // 0, the default, is what a closed loop given only its users has.
        check(
            think.mean_s.is_finite() && think.mean_s > 0.0,
            format!("{g}.closed.think.mean_s"),
            "must be > 0 (0.0 is its default): without thinking, a user whose requests are answered at once would send forever at one instant",
        );
        check_dist(&format!("{g}.closed.think"), think, Mean::Checked, check);
        return;
    }
    if !c.profile.is_empty() {
        check(
            !rate_given,
            format!("{g}.rate_per_s"),
            &format!(
                "a load profile gives the arrival rate itself; remove {g}.rate_per_s (or set it to 0)"
            ),
        );
        check(
            c.sinusoid.is_off(),
            format!("{g}.sinusoid.amplitude"),
            &format!(
                "a sinusoid modulates {g}.rate_per_s, which a load profile replaces; put the cycle into the profile's points"
            ),
        );
        // Whether every point passes the checks below.
        let mut well_formed = true;
        for (i, p) in c.profile.iter().enumerate() {
            let path = |k: &str| {
                if i == 0 {
                    format!("{g}.profile.{k}")
                } else {
                    format!("{g}.profile.{i}.{k}")
                }
            };
            let mut check = |ok: bool, path: String, reason: &str| {
                well_formed &= ok;
                check(ok, path, reason);
            };
            check(
                p.at_s.is_finite() && p.at_s >= 0.0,
                path("at_s"),
                "must be >= 0",
            );
            if i > 0 {
                // Named with the point before, which may be the one set.
                let before = c.profile[i - 1].at_s;
                check(
                    p.at_s >= before,
                    path("at_s"),
                    &format!(
                        "profile points must be in time order: this one is before point {}'s {before:?} s",
                        i - 1
                    ),
                );
            }
            check(
                p.rate_per_s.is_finite() && p.rate_per_s >= 0.0,
                path("rate_per_s"),
                "must be >= 0",
            );
        }
        let some_rate = c.profile.iter().any(|p| p.rate_per_s > 0.0);
        check(
            some_rate,
            format!("{g}.profile"),
            "every point's rate is 0: no user would arrive",
        );
        // Points past the arrivals' end shape no arrival: the rate must be
        // above 0 somewhere in [0, duration_s).
        if some_rate && well_formed && c.duration_s.is_finite() && c.duration_s > 0.0 {
            check(
                // (Not `> 0`: an estimate past any number is refused by the users' cap.)
                crate::model::expected_group_users(c) != 0.0,
                format!("{g}.profile"),
                &format!(
                    "the rate is 0 over the whole arrival interval [0, {}) s ({g}.duration_s): no user would arrive; its rates above 0 come after the arrivals end",
                    c.duration_s
                ),
            );
        }
        return;
    }
    check(
        c.rate_per_s.is_finite() && c.rate_per_s > 0.0,
        format!("{g}.rate_per_s"),
        "must be > 0: at rate 0 no user arrives (a load profile or a closed loop gives the load otherwise)",
    );
    if !c.sinusoid.is_off() {
        check(
            (0.0..=1.0).contains(&c.sinusoid.amplitude),
            format!("{g}.sinusoid.amplitude"),
            "must be in [0, 1]: the rate must not fall below 0",
        );
        check(
            c.sinusoid.period_s.is_finite() && c.sinusoid.period_s > 0.0,
            format!("{g}.sinusoid.period_s"),
            "must be > 0",
        );
    }
}

/// The rule for a distribution's mean: `>= 0` (a service or latency of 0
/// is none), or one its caller checks with its own reason.
#[derive(PartialEq)]
enum Mean {
    NonNegative,
    Checked,
}

/// A distribution's parameters (service and latency of a tier, think time).
fn check_dist(prefix: &str, d: &Service, mean: Mean, check: &mut impl FnMut(bool, String, &str)) {
    let key = |k: &str| format!("{prefix}.{k}");
    let non_negative = |x: f64| x.is_finite() && x >= 0.0;
    if mean == Mean::NonNegative {
        check(non_negative(d.mean_s), key("mean_s"), "must be >= 0");
    }
    check(
        d.dist != Dist::Lognormal || (d.sigma.is_finite() && d.sigma > 0.0),
        key("sigma"),
        "must be > 0 for a lognormal",
    );
    check(
        (0.0..=1.0).contains(&d.slow_p),
        key("slow_p"),
        "must be a probability in [0, 1]",
    );
    check(non_negative(d.slow_s), key("slow_s"), "must be >= 0");
}

fn check_call(name: &str, c: &Call, errors: &mut Vec<ConfigError>) {
    let mut check = |ok: bool, key: &str, message: &str| {
        if !ok {
            errors.push(ConfigError::new(format!("{name}.{key}"), message));
        }
    };
    let non_negative = |x: f64| x.is_finite() && x >= 0.0;
    check(
        c.attempt_timeout_s.is_finite() && c.attempt_timeout_s > 0.0,
        "attempt_timeout_s",
        "must be > 0: an attempt without a timeout could wait forever",
    );
    check(c.max_retries <= 100, "max_retries", "must be <= 100");
    check(
        (0.0..=1.0).contains(&c.backoff_jitter),
        "backoff_jitter",
        "must be in [0, 1]: a wait cannot fall below 0",
    );
    check(
        (c.attempt_timeouts_s.iter()).all(|t| t.is_finite() && *t > 0.0),
        "attempt_timeouts_s",
        "every entry must be > 0: an attempt without a timeout could wait forever",
    );
    check(
        non_negative(c.backoff_base_s),
        "backoff_base_s",
        "must be >= 0",
    );
    check(
        non_negative(c.backoff_cap_s),
        "backoff_cap_s",
        "must be >= 0",
    );
    check(
        c.throttle_max_tokens.is_finite() && c.throttle_max_tokens >= 0.001,
        "throttle_max_tokens",
        "must be >= 0.001 (the bucket counts in thousandths)",
    );
    check(
        (1..=100_000).contains(&c.breaker_window),
        "breaker_window",
        "must be between 1 and 100000",
    );
    check(
        non_negative(c.breaker_window_s),
        "breaker_window_s",
        "must be >= 0",
    );
    check(
        c.max_in_flight != Some(0),
        "max_in_flight",
        "must be >= 1 (or \"unbounded\")",
    );
    check(
        non_negative(c.hedge_delay_s),
        "hedge_delay_s",
        "must be >= 0",
    );
    check(
        (0.0..1.0).contains(&c.hedge_quantile),
        "hedge_quantile",
        "must be in [0, 1) (0: a fixed hedge_delay_s)",
    );
    check(
        (0.0..=100.0).contains(&c.hedge_budget_percent),
        "hedge_budget_percent",
        "must be a percentage in [0, 100]",
    );
    // A time-based window holds however many outcomes its seconds see.
    check(
        c.breaker_min_samples >= 1
            && (c.breaker_window_s > 0.0 || c.breaker_min_samples <= c.breaker_window),
        "breaker_min_samples",
        "must be between 1 and breaker_window",
    );
    check(
        c.breaker_failure_rate > 0.0 && c.breaker_failure_rate <= 1.0,
        "breaker_failure_rate",
        "must be in (0, 1]: at 0 the breaker would open on successes alone",
    );
    check(
        c.breaker_slow_call_rate > 0.0 && c.breaker_slow_call_rate <= 1.0,
        "breaker_slow_call_rate",
        "must be in (0, 1]: at 0 the breaker would open on fast calls alone",
    );
    check(
        non_negative(c.breaker_slow_call_s),
        "breaker_slow_call_s",
        "must be >= 0",
    );
    check(
        non_negative(c.breaker_open_s),
        "breaker_open_s",
        "must be >= 0",
    );
    check(
        non_negative(c.breaker_open_jitter_s),
        "breaker_open_jitter_s",
        "must be >= 0",
    );
    check(
        (1..=100_000).contains(&c.breaker_half_open_probes),
        "breaker_half_open_probes",
        "must be between 1 and 100000",
    );
    check(
        c.budget_share > 0.0 && c.budget_share <= 1.0,
        "budget_share",
        "must be in (0, 1]",
    );
    check(
        c.adaptive_throttle_k.is_finite() && c.adaptive_throttle_k > 0.0,
        "adaptive_throttle_k",
        "must be > 0",
    );
    check(
        c.adaptive_throttle_window_s.is_finite() && c.adaptive_throttle_window_s >= 1.0,
        "adaptive_throttle_window_s",
        "must be at least 1 second",
    );
    check(
        (0.0..=100.0).contains(&c.retry_budget_percent),
        "retry_budget_percent",
        "must be a percentage in [0, 100]",
    );
    check(
        non_negative(c.deadline_margin_s),
        "deadline_margin_s",
        "must be >= 0",
    );
    check(
        non_negative(c.throttle_token_ratio),
        "throttle_token_ratio",
        "must be >= 0",
    );
    check(
        c.outlier_consecutive >= 1,
        "outlier_consecutive",
        "must be >= 1",
    );
    check(
        non_negative(c.outlier_base_ejection_s),
        "outlier_base_ejection_s",
        "must be >= 0",
    );
    check(
        (0.0..=100.0).contains(&c.outlier_max_ejection_percent),
        "outlier_max_ejection_percent",
        "must be a percentage in [0, 100]",
    );
    check(
        c.outlier_interval_s.is_finite() && c.outlier_interval_s > 0.0,
        "outlier_interval_s",
        "must be > 0",
    );
    check(
        (0.0..=100.0).contains(&c.outlier_panic_threshold_percent),
        "outlier_panic_threshold_percent",
        "must be a percentage in [0, 100]",
    );
    if let Some(max) = c.outlier_max_ejection_s {
        check(
            non_negative(max) && max >= c.outlier_base_ejection_s,
            "outlier_max_ejection_s",
            &format!(
                "must be >= outlier_base_ejection_s ({}): the longest ejection cannot be shorter than the first",
                c.outlier_base_ejection_s
            ),
        );
    }
}

/// The deadline parameters ([`DEADLINE_PARAMS`]) have nothing to act on at
/// the client without a total deadline (`client.deadline_s`): a value other
/// than the default there is refused, not ignored; in a grid, only where it
/// acts at none of the points (an axis may set `client.deadline_s`).
fn check_client_call(g: &str, c: &crate::scenario::Client, errors: &mut Vec<ConfigError>) {
    if c.deadline_s > 0.0 {
        return;
    }
    let given = toml::Table::try_from(&c.call).expect("a call serializes");
    let default = toml::Table::try_from(Call::new(1.0, 0, BackoffKind::Fixed, 0.0))
        .expect("a call serializes");
    for key in DEADLINE_PARAMS {
        if given.get(*key) != default.get(*key) {
            errors.push(ConfigError::new(
                format!("{g}.{key}"),
                needs_client_deadline(g, key),
            ));
        }
    }
}

/// The tiers form a DAG entered by the client groups (each calls the
/// first tier, or the one it names): a `call` reaches the next tier in the
/// list, a fan-out branch a later one by name (so that no call can come
/// back: no cycles), and every tier is reached at least once; a tier
/// reached several times is shared by its callers.
fn check_topology(s: &Scenario, errors: &mut Vec<ConfigError>) {
    let mut callers: Vec<Vec<String>> = vec![Vec::new(); s.tiers.len()];
    for (g, client) in s.groups() {
        match client.entry_tier(&s.tiers) {
            Some(to) => callers[to].push(format!("{g} (a client group)")),
            None => errors.push(ConfigError::new(
                format!("{g}.calls"),
                format!(
                    "no tier is named `{}` (tiers: {})",
                    client.calls.as_deref().unwrap_or_default(),
                    tier_names(s)
                ),
            )),
        }
    }
    // The forward calls, to name the cycle a backward branch would close.
    let mut calls: Vec<Vec<usize>> = vec![Vec::new(); s.tiers.len()];
    for (i, t) in s.tiers.iter().enumerate() {
        if t.call.is_some() && i + 1 < s.tiers.len() {
            calls[i].push(i + 1);
        }
        for b in &t.fanout {
            if let Some(to) = s.tiers.iter().position(|x| x.name == b.to)
                && to > i
            {
                calls[i].push(to);
            }
        }
    }
    for (i, t) in s.tiers.iter().enumerate() {
        let path = |k: &str| format!("{}.{k}", t.name);
        if t.call.is_some() && !t.fanout.is_empty() {
            errors.push(ConfigError::new(
                path("fanout"),
                "a tier either calls the next tier ([tiers.call]) or fans out ([[tiers.fanout]]), not both",
            ));
        }
        if t.call.is_some() {
            match callers.get_mut(i + 1) {
                Some(c) => c.push(format!("{} (its [tiers.call])", t.name)),
                None => errors.push(ConfigError::new(
                    path("call"),
                    "the last tier has no next tier to call; remove its [tiers.call]",
                )),
            }
        }
        for (k, b) in t.fanout.iter().enumerate() {
            if t.fanout[..k].iter().any(|x| x.to == b.to) {
                errors.push(ConfigError::new(
                    path(&format!("fanout.{}", b.to)),
                    "the same tier appears twice in this fan-out",
                ));
                continue;
            }
            match s.tiers.iter().position(|x| x.name == b.to) {
                Some(to) if to > i => {
                    callers[to].push(format!("{} (fan-out)", t.name));
                }
                Some(to) => {
                    let names: Vec<&str> = (path_between(&calls, to, i).into_iter())
                        .map(|x| s.tiers[x].name.as_str())
                        .collect();
                    let why = if names.is_empty() {
                        format!(
                            "`{}` is listed before `{}`; a branch must call a tier listed after its caller (no cycles): move `{}` after `{}`",
                            b.to, t.name, b.to, t.name
                        )
                    } else {
                        format!(
                            "this branch would close the cycle {} -> {}; a branch must call a tier listed after its caller (no cycles)",
                            names.join(" -> "),
                            b.to
                        )
                    };
                    errors.push(ConfigError::new(path(&format!("fanout.{}", b.to)), why));
                }
                None => errors.push(ConfigError::new(
                    path(&format!("fanout.{}", b.to)),
                    format!("no tier is named `{}` (tiers: {})", b.to, tier_names(s)),
                )),
            }
        }
    }
    for (i, (t, by)) in s.tiers.iter().zip(&callers).enumerate() {
        if by.is_empty() && i == 0 {
            errors.push(ConfigError::new(
                format!("{}.call", t.name),
                "nothing calls the first tier: every client group names another in `calls`; let one call it (`calls` unset)",
            ));
        } else if by.is_empty() {
            errors.push(ConfigError::new(
                format!("{}.call", t.name),
                "no tier calls this one: give the tier before it a [tiers.call], name it in a [[tiers.fanout]], or in a client group's `calls`",
            ));
        }
    }
}

fn tier_names(s: &Scenario) -> String {
    let names: Vec<&str> = s.tiers.iter().map(|x| x.name.as_str()).collect();
    names.join(", ")
}

/// The tiers of a path of forward calls from `from` to `to` (both
/// included), if there is one: a depth-first search that visits each tier
/// once.
fn path_between(calls: &[Vec<usize>], from: usize, to: usize) -> Vec<usize> {
    fn search(calls: &[Vec<usize>], at: usize, to: usize, seen: &mut [bool]) -> Option<Vec<usize>> {
        if at == to {
            return Some(vec![to]);
        }
        if std::mem::replace(&mut seen[at], true) {
            return None;
        }
        let mut rest = calls[at].iter().find_map(|&n| search(calls, n, to, seen))?;
        rest.insert(0, at);
        Some(rest)
    }
    search(calls, from, to, &mut vec![false; calls.len()]).unwrap_or_default()
}

/// Where a parameter cannot act: the keys of one scope that act only
/// under one condition, and what keeps them from acting. A key holding
/// its default is accepted either way (the run is the same), so that a
/// file may list the defaults; any other value is refused with the
/// reason. `docs/params.md` shows `acts` beside each key, so the rule a
/// user reads is the one validation applies.
pub struct Inert<A, B> {
    pub keys: &'static [&'static str],
    /// When they act, as `docs/params.md` says it.
    pub acts: &'static str,
    /// What the keys are, for the message (`a CoDel setting`).
    what: &'static str,
    /// `None` where they act; else why not and what would make them act,
    /// given the owner and its context (a tier: the scenario and its
    /// index; a call: the call and the tier it calls) and the owner's path
    /// (`svc_b`).
    idle: fn(&A, &B, &str) -> Option<Idle>,
}

/// Why a mechanism's keys cannot act here, and the fix.
pub struct Idle {
    state: String,
    fix: String,
}

fn idle(state: String, fix: String) -> Option<Idle> {
    Some(Idle { state, fix })
}

use crate::scenario::{LimitAlgorithm, QueueOrder, RateLimitKind};

fn adaptive(t: &crate::scenario::Tier, p: &str, rule: LimitAlgorithm) -> Option<Idle> {
    let name = |a: LimitAlgorithm| match a {
        LimitAlgorithm::Aimd => "aimd",
        LimitAlgorithm::Gradient => "gradient",
    };
    if !t.adaptive_limit {
        let with = if rule == LimitAlgorithm::default() {
            String::new()
        } else {
            format!(" and {p}.limit_algorithm = \"{}\"", name(rule))
        };
        return idle(
            format!("{p}.adaptive_limit is false"),
            format!("set {p}.adaptive_limit = true{with}"),
        );
    }
    (t.limit_algorithm != rule).then(|| Idle {
        state: format!("{p}.limit_algorithm is \"{}\"", name(t.limit_algorithm)),
        fix: format!("set {p}.limit_algorithm = \"{}\"", name(rule)),
    })
}

fn no_rate_limit(t: &crate::scenario::Tier, p: &str) -> Option<Idle> {
    (t.rate_limit_per_s == 0.0).then(|| Idle {
        state: format!("{p}.rate_limit_per_s is 0 (no rate limit)"),
        fix: format!("set {p}.rate_limit_per_s > 0"),
    })
}

fn kind_name(k: RateLimitKind) -> &'static str {
    match k {
        RateLimitKind::TokenBucket => "token_bucket",
        RateLimitKind::FixedWindow => "fixed_window",
        RateLimitKind::SlidingWindow => "sliding_window",
        RateLimitKind::LeakyBucket => "leaky_bucket",
    }
}

fn no_retries(c: &Call, p: &str) -> Option<Idle> {
    (c.max_retries == 0).then(|| Idle {
        state: format!("{p}.max_retries is 0 (no retries)"),
        fix: format!("set {p}.max_retries >= 1"),
    })
}

fn off(on: bool, p: &str, key: &str, fix: &str) -> Option<Idle> {
    (!on).then(|| Idle {
        state: format!("{p}.{key} is off"),
        fix: format!("set {p}.{fix}"),
    })
}

/// A tier's keys: the context is the scenario (its callers' settings
/// matter to `retry_after_s`) and the tier's index.
pub const TIER_INERT: &[Inert<Scenario, usize>] = &[
    Inert {
        keys: &[
            "limit_latency_s",
            "limit_decrease",
            "limit_increase",
            "limit_breaches",
            "limit_increase_percent",
            "limit_hold_s",
            "limit_sparse",
            "limit_latency_from",
        ],
        acts: "adaptive_limit = true, limit_algorithm = aimd",
        what: "a setting of the AIMD adaptive limit",
        idle: |s, i, p| adaptive(&s.tiers[*i], p, LimitAlgorithm::Aimd),
    },
    Inert {
        keys: &["limit_tolerance", "limit_smoothing", "limit_long_window"],
        acts: "adaptive_limit = true, limit_algorithm = gradient",
        what: "a setting of the gradient adaptive limit",
        idle: |s, i, p| adaptive(&s.tiers[*i], p, LimitAlgorithm::Gradient),
    },
    Inert {
        keys: &[
            "limit_algorithm",
            "limit_min",
            "limit_min_samples",
            "limit_interval_s",
        ],
        acts: "adaptive_limit = true",
        what: "a setting of the adaptive limit",
        idle: |s, i, p| {
            off(
                s.tiers[*i].adaptive_limit,
                p,
                "adaptive_limit",
                "adaptive_limit = true",
            )
        },
    },
    Inert {
        keys: &["lifo_threshold"],
        acts: "queue_order = adaptive_lifo",
        what: "the adaptive LIFO's threshold",
        idle: |s, i, p| {
            let order = s.tiers[*i].queue_order;
            (order != QueueOrder::AdaptiveLifo).then(|| Idle {
                state: format!(
                    "{p}.queue_order is \"{}\"",
                    if order == QueueOrder::Fifo {
                        "fifo"
                    } else {
                        "lifo"
                    }
                ),
                fix: format!("set {p}.queue_order = \"adaptive_lifo\""),
            })
        },
    },
    Inert {
        keys: &["codel_target_s", "codel_interval_s"],
        acts: "codel = true",
        what: "a CoDel setting",
        idle: |s, i, p| off(s.tiers[*i].codel, p, "codel", "codel = true"),
    },
    Inert {
        keys: &["rate_limit_kind"],
        acts: "rate_limit_per_s > 0",
        what: "a setting of the rate limit",
        idle: |s, i, p| no_rate_limit(&s.tiers[*i], p),
    },
    Inert {
        keys: &["rate_limit_burst"],
        acts: "rate_limit_per_s > 0, rate_limit_kind = token_bucket or leaky_bucket",
        what: "the size of a token or leaky bucket",
        idle: |s, i, p| {
            let t = &s.tiers[*i];
            if let Some(none) = no_rate_limit(t, p) {
                return Some(none);
            }
            matches!(
                t.rate_limit_kind,
                RateLimitKind::FixedWindow | RateLimitKind::SlidingWindow
            )
            .then(|| Idle {
                state: format!(
                    "{p}.rate_limit_kind is \"{}\"",
                    kind_name(t.rate_limit_kind)
                ),
                fix: format!("set {p}.rate_limit_kind = \"token_bucket\" or \"leaky_bucket\""),
            })
        },
    },
    Inert {
        keys: &["rate_limit_window_s"],
        acts: "rate_limit_per_s > 0, rate_limit_kind = fixed_window or sliding_window",
        what: "the window of a fixed or sliding window limit",
        idle: |s, i, p| {
            let t = &s.tiers[*i];
            no_rate_limit(t, p).or_else(|| {
                matches!(
                    t.rate_limit_kind,
                    RateLimitKind::TokenBucket | RateLimitKind::LeakyBucket
                )
                .then(|| Idle {
                    state: format!(
                        "{p}.rate_limit_kind is \"{}\"",
                        kind_name(t.rate_limit_kind)
                    ),
                    fix: format!(
                        "set {p}.rate_limit_kind = \"fixed_window\" or \"sliding_window\""
                    ),
                })
            })
        },
    },
    Inert {
        keys: &["error_latency_s"],
        acts: "an error window with p > 0 (<tier>.errors)",
        what: "how long a request failing in an error window holds its slot",
        idle: |s, i, p| {
            let errors = s.tiers[*i].errors.iter().any(|w| w.p > 0.0);
            (!errors).then(|| Idle {
                state: format!("{p} has no error window (none with {p}.errors.p > 0)"),
                fix: format!("give {p} an error window ({p}.errors.p > 0)"),
            })
        },
    },
    Inert {
        keys: &["gc.pause_s", "gc.per_queued_s"],
        acts: "gc.every_s > 0",
        what: "a setting of the GC pauses",
        idle: |s, i, p| {
            (s.tiers[*i].gc.is_off()).then(|| Idle {
                state: format!("{p}.gc.every_s is 0 (no pauses)"),
                fix: format!("set {p}.gc.every_s > 0"),
            })
        },
    },
    Inert {
        keys: &["cache.hit_latency_s", "cache.flush_duration_s"],
        acts: "cache.hit_ratio > 0",
        what: "a setting of the look-aside cache",
        idle: |s, i, p| no_cache(&s.tiers[*i], p),
    },
    Inert {
        keys: &["cache.flush_start_s", "cache.fill_keys"],
        acts: "cache.hit_ratio > 0, cache.flush_duration_s > 0",
        what: "a setting of the cache's flush",
        idle: |s, i, p| {
            no_cache(&s.tiers[*i], p).or_else(|| {
                (s.tiers[*i].cache.flush_duration_s == 0.0).then(|| Idle {
                    state: format!("{p}.cache.flush_duration_s is 0 (no flush)"),
                    fix: format!("set {p}.cache.flush_duration_s > 0"),
                })
            })
        },
    },
    Inert {
        keys: &["service.dist"],
        acts: "service.mean_s > 0",
        what: "the shape of the times around service.mean_s",
        idle: |s, i, p| no_mean(&s.tiers[*i].service, &format!("{p}.service")),
    },
    Inert {
        keys: &["latency.dist"],
        acts: "latency.mean_s > 0",
        what: "the shape of the times around latency.mean_s",
        idle: |s, i, p| no_mean(&s.tiers[*i].latency, &format!("{p}.latency")),
    },
    Inert {
        keys: &["service.sigma"],
        acts: "service.mean_s > 0, service.dist = lognormal",
        what: "the lognormal's shape",
        idle: |s, i, p| {
            let d = &s.tiers[*i].service;
            let p = format!("{p}.service");
            no_mean(d, &p).or_else(|| not_lognormal(d, &p))
        },
    },
    Inert {
        keys: &["latency.sigma"],
        acts: "latency.mean_s > 0, latency.dist = lognormal",
        what: "the lognormal's shape",
        idle: |s, i, p| {
            let d = &s.tiers[*i].latency;
            let p = format!("{p}.latency");
            no_mean(d, &p).or_else(|| not_lognormal(d, &p))
        },
    },
    Inert {
        keys: &["service.slow_p"],
        acts: "service.mean_s > 0 or service.slow_s > 0",
        what: "the share of times that take the slow value",
        idle: |s, i, p| no_time(&s.tiers[*i].service, &format!("{p}.service")),
    },
    Inert {
        keys: &["latency.slow_p"],
        acts: "latency.mean_s > 0 or latency.slow_s > 0",
        what: "the share of times that take the slow value",
        idle: |s, i, p| no_time(&s.tiers[*i].latency, &format!("{p}.latency")),
    },
    Inert {
        keys: &["service.slow_s"],
        acts: "service.slow_p > 0",
        what: "the slow value of the mixture",
        idle: |s, i, p| no_slow(&s.tiers[*i].service, &format!("{p}.service")),
    },
    Inert {
        keys: &["latency.slow_s"],
        acts: "latency.slow_p > 0",
        what: "the slow value of the mixture",
        idle: |s, i, p| no_slow(&s.tiers[*i].latency, &format!("{p}.latency")),
    },
    Inert {
        keys: &["drop_expired", "cancel_check_s"],
        acts: "a call to the tier has propagate_deadline = true",
        what: "what the tier does with a request's deadline",
        idle: |s, i, p| no_deadline_received(s, *i, p),
    },
    Inert {
        keys: &["rate_limit_scope"],
        acts: "rate_limit_per_s > 0, replicas > 1",
        what: "whether the replicas share the rate limit",
        idle: |s, i, p| {
            let t = &s.tiers[*i];
            no_rate_limit(t, p).or_else(|| {
                (t.replicas <= 1).then(|| Idle {
                    state: format!("{p} has one replica"),
                    fix: format!("set {p}.replicas > 1"),
                })
            })
        },
    },
    Inert {
        keys: &["reject_latency_s"],
        acts: "queue_cap, shed_queue or rate_limit_per_s > 0 (something that rejects)",
        what: "how long the tier takes to reject a request",
        idle: |s, i, p| nothing_rejects(&s.tiers[*i], p, false),
    },
    Inert {
        keys: &["reject_as", "retry_after_s"],
        acts: "queue_cap, shed_queue, rate_limit_per_s > 0 or codel = true (something that rejects)",
        what: "how the tier answers the requests it rejects",
        idle: |s, i, p| nothing_rejects(&s.tiers[*i], p, true),
    },
    Inert {
        keys: &["retry_after_s"],
        acts: "a caller of the tier has honor_retry_after = true and max_retries >= 1",
        what: "the Retry-After of the tier's rejections",
        idle: |s, i, p| {
            let heeded = (s.edges().iter())
                .any(|e| e.to == *i && e.call.honor_retry_after && e.call.max_retries >= 1);
            (!heeded).then(|| Idle {
                state: format!("no caller of {p} retries with honor_retry_after = true"),
                fix: format!(
                    "set honor_retry_after = true (and max_retries >= 1) on a call to {p}"
                ),
            })
        },
    },
];

/// Tier `t` rejects nothing: its queue is unbounded, it sheds no class and
/// has no rate limit (and, where `codel` counts, no CoDel, whose drops are
/// answered as rejections, at once rather than after reject_latency_s).
fn nothing_rejects(t: &crate::scenario::Tier, p: &str, codel: bool) -> Option<Idle> {
    let rejects = t.queue_cap.is_some()
        || !t.shed_queue.is_empty()
        || t.rate_limit_per_s > 0.0
        || (codel && t.codel);
    (!rejects).then(|| match codel {
        true => Idle {
            state: format!("{p} rejects nothing (its queue is unbounded, with no shed_queue, no rate limit, no CoDel)"),
            fix: format!("give {p} a queue_cap, a shed_queue, a rate_limit_per_s > 0 or codel = true"),
        },
        false => Idle {
            state: format!("{p} rejects nothing (its queue is unbounded, with no shed_queue, no rate limit)"),
            fix: format!("give {p} a queue_cap, a shed_queue or a rate_limit_per_s > 0"),
        },
    })
}

/// Tier `i` receives no deadline: no call to it propagates one (a request
/// carries a deadline only from a caller with propagate_deadline).
fn no_deadline_received(s: &Scenario, i: usize, p: &str) -> Option<Idle> {
    let received = (s.edges().iter()).any(|e| e.to == i && e.call.propagate_deadline);
    if received { None } else { no_deadline(p) }
}

/// Why a deadline setting cannot act at tier `p`: no deadline reaches it.
fn no_deadline(p: &str) -> Option<Idle> {
    idle(
        format!("no call to {p} propagates a deadline, so its requests have none"),
        format!("set propagate_deadline = true on a call to {p}"),
    )
}

fn no_cache(t: &crate::scenario::Tier, p: &str) -> Option<Idle> {
    (t.cache.hit_ratio == 0.0).then(|| Idle {
        state: format!("{p}.cache.hit_ratio is 0 (no cache)"),
        fix: format!("set {p}.cache.hit_ratio > 0"),
    })
}

/// A distribution of mean 0: every time it draws is 0, whatever its shape.
fn no_mean(d: &Service, p: &str) -> Option<Idle> {
    (d.mean_s == 0.0).then(|| Idle {
        state: format!("{p}.mean_s is 0 (every time it draws is 0)"),
        fix: format!("set {p}.mean_s > 0"),
    })
}

/// A mixture both of whose values are 0.
fn no_time(d: &Service, p: &str) -> Option<Idle> {
    (d.mean_s == 0.0 && d.slow_s == 0.0).then(|| Idle {
        state: format!("{p}.mean_s and {p}.slow_s are 0 (every time it draws is 0)"),
        fix: format!("set {p}.mean_s or {p}.slow_s > 0"),
    })
}

fn not_lognormal(d: &Service, p: &str) -> Option<Idle> {
    (d.dist != Dist::Lognormal).then(|| Idle {
        state: format!(
            "{p}.dist is \"{}\"",
            if d.dist == Dist::Constant {
                "constant"
            } else {
                "exponential"
            }
        ),
        fix: format!("set {p}.dist = \"lognormal\""),
    })
}

fn no_slow(d: &Service, p: &str) -> Option<Idle> {
    (d.slow_p == 0.0).then(|| Idle {
        state: format!("{p}.slow_p is 0 (no request takes the slow value)"),
        fix: format!("set {p}.slow_p > 0"),
    })
}

/// What a call's rules look at besides the call: the tier it calls, and
/// the tier that makes it.
pub struct CallSite {
    /// The called tier's name, replicas and Retry-After, and whether it
    /// reads a request's deadline (it calls a tier, drops expired requests
    /// or checks for cancellation).
    to: String,
    to_replicas: u32,
    to_retry_after: bool,
    to_reads_deadline: bool,
    /// The calling tier's name and whether a call to it propagates a
    /// deadline; `None` for a client group, whose deadline parameters
    /// `check_client_call` refuses without `deadline_s`.
    from: Option<(String, bool)>,
}

/// A call's keys, with where it stands ([`CallSite`]).
pub const CALL_INERT: &[Inert<Call, CallSite>] = &[
    Inert {
        // Not the switches retry_throttle, retry_budget, honor_retry_after,
        // nor backoff and backoff_base_s, which every call states: presets
        // bundle them, scenario files give them beside max_retries = 0,
        // and a grid that samples max_retries down to 0 under such a
        // preset is a fair question.
        keys: &["backoff_jitter", "retry_on"],
        acts: "max_retries >= 1",
        what: "a setting of the caller's retries",
        idle: |c, _, p| no_retries(c, p),
    },
    Inert {
        keys: &["max_retries"],
        acts: "retry_on names a class",
        what: "the number of retries",
        idle: |c, _, p| {
            c.retry_on.is_empty().then(|| Idle {
                state: format!("{p}.retry_on is empty (no failed attempt is retried)"),
                fix: format!("name the classes to retry in {p}.retry_on"),
            })
        },
    },
    Inert {
        // Idle in part (its entries past the last attempt), refused as a
        // whole; in a grid that samples max_retries, only where no point
        // makes the attempts its entries number.
        keys: &["attempt_timeouts_s"],
        acts: "as many attempts as entries: max_retries + 1 >= its length",
        what: "the timeouts of the attempts by number",
        idle: |c, _, p| {
            let attempts = u64::from(c.max_retries) + 1;
            (c.attempt_timeouts_s.len() as u64 > attempts).then(|| Idle {
                state: format!(
                    "{p}.max_retries is {} ({attempts} attempt{}), so its entries past attempt {attempts} never act",
                    c.max_retries,
                    if attempts == 1 { "" } else { "s" }
                ),
                fix: format!(
                    "set {p}.max_retries >= {} or give at most {attempts} entries",
                    c.attempt_timeouts_s.len() - 1
                ),
            })
        },
    },
    Inert {
        keys: &["backoff_cap_s"],
        acts: "max_retries >= 1, backoff = full_jitter",
        what: "the cap of the full-jitter backoff",
        idle: |c, _, p| {
            no_retries(c, p).or_else(|| {
                (c.backoff == BackoffKind::Fixed).then(|| Idle {
                    state: format!("{p}.backoff is \"fixed\""),
                    fix: format!("set {p}.backoff = \"full_jitter\""),
                })
            })
        },
    },
    Inert {
        keys: &["throttle_max_tokens", "throttle_token_ratio"],
        acts: "retry_throttle = true",
        what: "a setting of the retry throttle",
        idle: |c, _, p| {
            off(
                c.retry_throttle,
                p,
                "retry_throttle",
                "retry_throttle = true",
            )
        },
    },
    Inert {
        keys: &["failure_on"],
        acts: "retry_throttle = true or breaker = true",
        what: "what the retry throttle and the circuit breaker count as failures",
        idle: |c, _, p| {
            (!c.retry_throttle && !c.breaker).then(|| Idle {
                state: format!("{p} has neither a retry throttle nor a breaker"),
                fix: format!("set {p}.retry_throttle = true or {p}.breaker = true"),
            })
        },
    },
    Inert {
        keys: &["retry_budget_percent", "retry_budget_min_concurrency"],
        acts: "retry_budget = true",
        what: "a setting of the retry budget",
        idle: |c, _, p| off(c.retry_budget, p, "retry_budget", "retry_budget = true"),
    },
    Inert {
        keys: &["adaptive_throttle_k", "adaptive_throttle_window_s"],
        acts: "adaptive_throttle = true",
        what: "a setting of the adaptive throttle",
        idle: |c, _, p| {
            off(
                c.adaptive_throttle,
                p,
                "adaptive_throttle",
                "adaptive_throttle = true",
            )
        },
    },
    Inert {
        keys: &[
            "breaker_window",
            "breaker_window_s",
            "breaker_min_samples",
            "breaker_failure_rate",
            "breaker_slow_call_rate",
            "breaker_slow_call_s",
            "breaker_open_s",
            "breaker_open_jitter_s",
            "breaker_half_open_probes",
            "breaker_scope",
        ],
        acts: "breaker = true",
        what: "a setting of the circuit breaker",
        idle: |c, _, p| off(c.breaker, p, "breaker", "breaker = true"),
    },
    Inert {
        keys: &["hedge_budget_percent"],
        acts: "hedge_delay_s > 0 or hedge_quantile > 0",
        what: "the hedging budget",
        idle: |c, _, p| {
            (c.hedge_delay_s == 0.0 && c.hedge_quantile == 0.0).then(|| Idle {
                state: format!("{p} does not hedge (hedge_delay_s and hedge_quantile are 0)"),
                fix: format!("set {p}.hedge_delay_s > 0 or {p}.hedge_quantile > 0"),
            })
        },
    },
    Inert {
        keys: &["hedge_delay_s"],
        acts: "hedge_quantile > 0, or hedge_delay_s under the longest attempt timeout",
        what: "the delay before a hedged copy",
        idle: |c, _, p| {
            // Attempt k's timeout: the list's k-th, past its end the one for all.
            let longest = (0..=c.max_retries as usize)
                .map(|k| {
                    (c.attempt_timeouts_s.get(k))
                        .copied()
                        .unwrap_or(c.attempt_timeout_s)
                })
                .fold(0.0, f64::max);
            (c.hedge_quantile == 0.0 && c.hedge_delay_s >= longest).then(|| Idle {
                state: format!(
                    "every attempt of {p} times out within {longest} s, before a copy would be sent"
                ),
                fix: format!("set {p}.hedge_delay_s below {longest} or {p}.hedge_quantile > 0"),
            })
        },
    },
    Inert {
        keys: &[
            "outlier_consecutive",
            "outlier_base_ejection_s",
            "outlier_max_ejection_s",
            "outlier_max_ejection_percent",
            "outlier_interval_s",
            "outlier_panic_threshold_percent",
        ],
        acts: "outlier_ejection = true",
        what: "a setting of outlier ejection",
        idle: |c, _, p| {
            off(
                c.outlier_ejection,
                p,
                "outlier_ejection",
                "outlier_ejection = true",
            )
        },
    },
    Inert {
        keys: &["balancer", "retry_other_replica", "outlier_ejection"],
        acts: "the called tier has replicas > 1",
        what: "a choice between the called tier's replicas",
        idle: |_, site, p| one_replica(site, p),
    },
    Inert {
        // After the replicas' rule: with one replica, none is ejected.
        keys: &["outlier_ejection"],
        acts: "100 / the called tier's replicas <= outlier_max_ejection_percent",
        what: "the ejection of a replica",
        idle: |c, site, p| {
            let share = 100.0 / site.to_replicas as f64;
            (share > c.outlier_max_ejection_percent).then(|| Idle {
                state: format!(
                    "one of {}'s {} replicas is {}% of them, more than {p}.outlier_max_ejection_percent = {}, so none can be ejected (Envoy's rule)",
                    site.to,
                    site.to_replicas,
                    (share * 100.0).round() / 100.0,
                    c.outlier_max_ejection_percent,
                ),
                // Rounded up: the value shown must let one be ejected.
                fix: format!(
                    "set {p}.outlier_max_ejection_percent >= {} (one replica: Envoy's always_eject_one_host)",
                    (share * 100.0).ceil() / 100.0
                ),
            })
        },
    },
    Inert {
        keys: &["outlier_panic_threshold_percent"],
        acts: "some share of the replicas not ejected that outlier_max_ejection_percent allows is below it and not below 50, or the reverse",
        what: "the balancer's panic threshold",
        idle: |c, site, p| {
            let n = site.to_replicas;
            // Envoy's rule: k ejected at once while 100 k / n <= max.
            let most = (0..=n)
                .filter(|k| 100.0 * *k as f64 / n as f64 <= c.outlier_max_ejection_percent)
                .max()
                .unwrap_or(0);
            let shares: Vec<f64> = (0..=most)
                .map(|k| 100.0 * (n - k) as f64 / n as f64)
                .collect();
            let (v, default) = (c.outlier_panic_threshold_percent, 50.0);
            let same = shares.iter().all(|h| (*h < v) == (*h < default));
            same.then(|| Idle {
                state: format!(
                    "at most {most} of {}'s {n} replicas can be ejected at once ({p}.outlier_max_ejection_percent = {}), so the share not ejected is {}%, each below {v}% exactly where it is below the default 50%",
                    site.to,
                    c.outlier_max_ejection_percent,
                    (shares.iter())
                        .map(|h| format!("{}", (h * 100.0).round() / 100.0))
                        .collect::<Vec<_>>()
                        .join("%, "),
                ),
                fix: format!(
                    "choose a threshold some of those shares are below and not below 50, or raise {p}.outlier_max_ejection_percent"
                ),
            })
        },
    },
    Inert {
        // After the replicas' rule: with one replica there is no other.
        keys: &["retry_other_replica"],
        acts: "max_retries >= 1, or hedge_delay_s > 0 or hedge_quantile > 0",
        what: "where a retry or a hedged copy goes",
        idle: |c, _, p| {
            (c.max_retries == 0 && c.hedge_delay_s == 0.0 && c.hedge_quantile == 0.0).then(|| {
                Idle {
                    state: format!(
                        "{p}.max_retries is 0 and {p} does not hedge, so no attempt is sent a second time"
                    ),
                    fix: format!(
                        "set {p}.max_retries >= 1, {p}.hedge_delay_s > 0 or {p}.hedge_quantile > 0"
                    ),
                }
            })
        },
    },
    Inert {
        keys: &["bulkhead_scope"],
        acts: "max_in_flight set",
        what: "how the bulkhead counts",
        idle: |c, _, p| {
            (c.max_in_flight.is_none()).then(|| Idle {
                state: format!("{p}.max_in_flight is unbounded (no bulkhead)"),
                fix: format!("set {p}.max_in_flight"),
            })
        },
    },
    Inert {
        // After the breaker's and the bulkhead's own rules: a scope is
        // first said to need its mechanism.
        keys: &["breaker_scope", "bulkhead_scope"],
        acts: "the called tier has replicas > 1",
        what: "whether the caller keeps one per replica of the called tier",
        idle: |_, site, p| one_replica(site, p),
    },
    Inert {
        keys: DEADLINE_PARAMS,
        acts: "the calling tier receives a deadline (a call to it has propagate_deadline = true); at a client group, deadline_s > 0",
        what: "a rule of the caller's deadline",
        idle: |_, site, _| {
            let (from, false) = site.from.as_ref()? else {
                return None;
            };
            no_deadline(from)
        },
    },
    Inert {
        keys: &["propagate_deadline"],
        acts: "the called tier reads a deadline: it calls a tier, or has drop_expired = true or cancel_check_s > 0",
        what: "whether the caller passes its attempt's end down as a deadline",
        idle: |_, site, p| {
            let to = &site.to;
            (!site.to_reads_deadline).then(|| Idle {
                state: format!(
                    "{p} calls {to}, which reads no deadline (it calls no tier, drops no expired request and checks for no cancellation)"
                ),
                fix: format!("set {to}.drop_expired = true or {to}.cancel_check_s > 0"),
            })
        },
    },
    Inert {
        keys: &["honor_retry_after"],
        acts: "the called tier has retry_after_s > 0",
        what: "whether the caller waits for a rejection's Retry-After",
        idle: |_, site, p| {
            (!site.to_retry_after).then(|| Idle {
                state: format!(
                    "{p} calls {}, whose rejections carry no Retry-After",
                    site.to
                ),
                fix: format!("set {}.retry_after_s > 0", site.to),
            })
        },
    },
    Inert {
        keys: &["cancel"],
        acts: "cancel = hedge_losers: hedge_delay_s > 0 or hedge_quantile > 0",
        what: "what the caller cancels",
        idle: |c, _, p| {
            let hedges = c.hedge_delay_s > 0.0 || c.hedge_quantile > 0.0;
            (c.cancel == crate::scenario::CancelMode::HedgeLosers && !hedges).then(|| Idle {
                state: format!("{p} does not hedge (hedge_delay_s and hedge_quantile are 0), so there is no losing copy"),
                fix: format!("set {p}.hedge_delay_s > 0 or {p}.hedge_quantile > 0, or cancel = \"always\""),
            })
        },
    },
];

fn one_replica(site: &CallSite, p: &str) -> Option<Idle> {
    (site.to_replicas <= 1).then(|| Idle {
        state: format!("{p} calls {}, which has one replica", site.to),
        fix: format!("set {}.replicas > 1", site.to),
    })
}

pub const CLIENT_INERT: &[Inert<crate::scenario::Client, ()>] = &[
    Inert {
        keys: &["rate_per_s", "sinusoid.amplitude"],
        acts: "closed.users = 0 (open arrivals)",
        what: "a setting of the open arrivals",
        idle: |c, _, p| {
            (!c.closed.is_off()).then(|| Idle {
                state: format!(
                    "{p}.closed.users is {} (closed-loop users send at their own pace, users / (think + response))",
                    c.closed.users
                ),
                fix: format!("set {p}.closed.users = 0"),
            })
        },
    },
    Inert {
        keys: &[
            "closed.think.dist",
            "closed.think.mean_s",
            "closed.think.sigma",
            "closed.think.slow_p",
            "closed.think.slow_s",
        ],
        acts: "closed.users > 0",
        what: "a setting of the closed-loop users' think time",
        idle: |c, _, p| {
            (c.closed.is_off()).then(|| Idle {
                state: format!("{p}.closed.users is 0 (open arrivals)"),
                fix: format!("set {p}.closed.users > 0"),
            })
        },
    },
    Inert {
        keys: &["closed.think.sigma"],
        acts: "closed.think.dist = lognormal",
        what: "the lognormal's shape",
        idle: |c, _, p| {
            if c.closed.is_off() {
                return None;
            }
            not_lognormal(&c.closed.think, &format!("{p}.closed.think"))
        },
    },
    Inert {
        keys: &["closed.think.slow_s"],
        acts: "closed.think.slow_p > 0",
        what: "the slow value of the mixture",
        idle: |c, _, p| {
            if c.closed.is_off() {
                return None;
            }
            no_slow(&c.closed.think, &format!("{p}.closed.think"))
        },
    },
    Inert {
        keys: &[
            "queue.drain_rate_per_s",
            "queue.redeliver_after_s",
            "queue.max_backlog",
        ],
        acts: "queue.consumers > 0 (a further client group)",
        what: "a setting of the group's message queue",
        // The online users' queue keys are refused outright (check_queue).
        idle: |c, _, p| {
            (p != "client" && c.queue.is_off()).then(|| Idle {
                state: format!("{p}.queue.consumers is 0 (no queue)"),
                fix: format!("set {p}.queue.consumers >= 1"),
            })
        },
    },
    Inert {
        keys: &["sinusoid.period_s"],
        acts: "sinusoid.amplitude > 0",
        what: "the period of the diurnal load",
        idle: |c, _, p| {
            (c.sinusoid.is_off()).then(|| Idle {
                state: format!("{p}.sinusoid.amplitude is 0 (no sinusoid)"),
                fix: format!("set {p}.sinusoid.amplitude > 0"),
            })
        },
    },
    Inert {
        keys: &["tenant_zipf_s"],
        acts: "tenants > 1",
        what: "the shape of the tenants' shares",
        idle: |c, _, p| {
            (c.tenants <= 1).then(|| Idle {
                state: format!("{p}.tenants is {} (one key)", c.tenants),
                fix: format!("set {p}.tenants > 1"),
            })
        },
    },
];

/// The value at a dotted key of a serialized table.
fn at<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let (first, rest) = key
        .split_once('.')
        .map_or((key, None), |(a, b)| (a, Some(b)));
    let v = table.get(first)?;
    match rest {
        None => Some(v),
        Some(rest) => at(v.as_table()?, rest),
    }
}

/// Every key of `rules` holding a value other than its default where it
/// cannot act, as an error at `{p}.{key}`.
fn check_inert<A, B>(
    rules: &[Inert<A, B>],
    owner: &A,
    context: &B,
    p: &str,
    given: &toml::Table,
    default: &toml::Table,
    errors: &mut Vec<ConfigError>,
) {
    // A key under several conditions is refused once, for the first unmet.
    let mut refused: Vec<&str> = Vec::new();
    for rule in rules {
        // Most keys hold their default: decided before the rule is asked
        // (its reason is written out) and before any path is built.
        let set = |key: &str| at(given, key) != at(default, key);
        if !rule.keys.iter().any(|k| set(k)) {
            continue;
        }
        let Some(why) = (rule.idle)(owner, context, p) else {
            continue;
        };
        for key in rule.keys.iter().filter(|k| set(k)) {
            let value = at(given, key);
            if refused.contains(key) {
                continue;
            }
            let path = format!("{p}.{key}");
            // A value already refused for its range is not told twice.
            if errors.iter().any(|e| e.path == path) {
                continue;
            }
            refused.push(key);
            let shown =
                |v: Option<&toml::Value>| v.map_or("unset".to_string(), crate::params::show);
            errors.push(ConfigError::new(
                path,
                format!(
                    "{} has no effect: {key} is {}, and {}; {}, or leave {key} at its default ({})",
                    shown(value),
                    rule.what,
                    why.state,
                    why.fix,
                    shown(at(default, key))
                ),
            ));
        }
    }
}

/// The parameters of every tier, call edge and client group that cannot
/// act where they are set ([`TIER_INERT`], [`CALL_INERT`], [`CLIENT_INERT`]).
fn check_inert_all(s: &Scenario, errors: &mut Vec<ConfigError>) {
    // The defaults, serialized once per process: a tier's name and slots,
    // which every tier sets, are no rule's keys.
    static TIER: LazyLock<toml::Table> = LazyLock::new(|| {
        toml::Table::try_from(crate::scenario::Tier::new("t", 1)).expect("a tier serializes")
    });
    static CALL: LazyLock<toml::Table> = LazyLock::new(|| {
        toml::Table::try_from(Call::new(1.0, 0, BackoffKind::Fixed, 0.0))
            .expect("a call serializes")
    });
    static CLIENT: LazyLock<toml::Table> = LazyLock::new(|| {
        let default: crate::scenario::Client = toml::from_str(
            "duration_s = 1.0\n[call]\nattempt_timeout_s = 1.0\nmax_retries = 0\nbackoff = \"fixed\"\nbackoff_base_s = 0.0",
        )
        .expect("a client's defaults deserialize");
        client_table(&default)
    });
    for (index, t) in s.tiers.iter().enumerate() {
        let given = toml::Table::try_from(t).expect("a tier serializes");
        check_inert(TIER_INERT, s, &index, &t.name, &given, &TIER, errors);
    }
    let edges = s.edges();
    for edge in &edges {
        let given = toml::Table::try_from(edge.call).expect("a call serializes");
        let Some(to) = s.tiers.get(edge.to) else {
            continue; // a call past the last tier, refused by the topology
        };
        let site = CallSite {
            to: to.name.clone(),
            to_replicas: to.replicas,
            to_retry_after: to.retry_after_s > 0.0,
            to_reads_deadline: to.call.is_some()
                || !to.fanout.is_empty()
                || to.drop_expired
                || to.cancel_check_s > 0.0,
            from: edge.from.map(|f| {
                let received = (edges.iter()).any(|e| e.to == f && e.call.propagate_deadline);
                (s.tiers[f].name.clone(), received)
            }),
        };
        check_inert(
            CALL_INERT, edge.call, &site, &edge.path, &given, &CALL, errors,
        );
    }
    for (g, c) in s.groups() {
        let given = client_table(c);
        check_inert(CLIENT_INERT, c, &(), g, &given, &CLIENT, errors);
        check_client_call(g, c, errors);
    }
    check_windows_in_run(s, errors);
}

/// A trigger window (slow, error or crash window, load spike, cache
/// flush) that starts at or after the horizon holds no instant of the
/// run, and a slow window's or spike's factor on a window of length 0
/// multiplies nothing: both are refused as any setting that cannot act,
/// so that a grid refuses them only where they act at none of its points
/// (an axis of `duration_s` from 0).
fn check_windows_in_run(s: &Scenario, errors: &mut Vec<ConfigError>) {
    let horizon = s.horizon_s;
    if !(horizon.is_finite() && horizon > 0.0) {
        return; // refused by its own check
    }
    for w in s.triggers() {
        // A window of length 0 marks where recovery is measured from; a
        // factor other than 1 multiplies nothing there. (A spike of
        // closed-loop users is refused whole by their own check.)
        let spiked = (s.groups())
            .find(|(g, _)| (w.path.strip_prefix(g)).is_some_and(|r| r.starts_with(".spike")));
        let closed_spike = spiked.is_some_and(|(_, c)| !c.closed.is_off());
        if let Some(factor) = w.factor
            && w.duration_s == 0.0
            && factor != 1.0
            && factor.is_finite()
            && factor > 0.0
            && !closed_spike
        {
            errors.push(ConfigError::new(
                format!("{}.factor", w.path),
                format!(
                    "{factor:?} has no effect: the window's length is 0 ({}.duration_s), so no instant falls inside it; give {}.duration_s > 0, or leave factor at its default (1.0)",
                    w.path, w.path
                ),
            ));
        }
        // A spike multiplies arrivals, which end with the group's duration.
        if let Some((g, c)) = spiked
            && !closed_spike
            && w.duration_s > 0.0
            && w.start_s.is_finite()
            && w.start_s < horizon
            && w.start_s >= c.duration_s
        {
            errors.push(ConfigError::new(
                format!("{}.start_s", w.path),
                format!(
                    "{:?} has no effect: {g}'s arrivals end at {} s ({g}.duration_s), so the spike multiplies none; start it before then or raise {g}.duration_s",
                    w.start_s, c.duration_s
                ),
            ));
        }
        if w.duration_s > 0.0 && w.start_s.is_finite() && w.start_s >= horizon {
            let key = if w.path.ends_with(".cache") {
                "flush_start_s"
            } else {
                "start_s"
            };
            errors.push(ConfigError::new(
                format!("{}.{key}", w.path),
                format!(
                    "{:?} has no effect: the window starts at or after the horizon ({horizon} s), so no instant of the run falls inside it; start it before horizon_s or raise horizon_s",
                    w.start_s
                ),
            ));
        }
    }
}

/// A client group serialized with its closed loop and sinusoid, which a
/// group leaves out while they are at their defaults, so that a key under
/// them compares with its own default.
fn client_table(c: &crate::scenario::Client) -> toml::Table {
    let mut t = toml::Table::try_from(c).expect("a client serializes");
    let mut fill = |key: &str, part: toml::Table| {
        t.entry(key).or_insert(toml::Value::Table(part));
    };
    fill(
        "closed",
        toml::Table::try_from(crate::scenario::ClosedLoop::default()).expect("serializes"),
    );
    fill(
        "sinusoid",
        toml::Table::try_from(crate::scenario::Sinusoid::default()).expect("serializes"),
    );
    fill(
        "queue",
        toml::Table::try_from(crate::scenario::Queue::default()).expect("serializes"),
    );
    t
}

/// Every key the rules name, with its scope (a test checks each against
/// the catalogue, so that a renamed key cannot leave a rule behind).
pub fn inert_keys() -> Vec<(crate::params::Scope, &'static str)> {
    use crate::params::Scope;
    fn of<A, B>(rules: &[Inert<A, B>], scope: Scope) -> Vec<(Scope, &'static str)> {
        (rules.iter())
            .flat_map(|r| r.keys.iter().map(move |k| (scope, *k)))
            .collect()
    }
    let mut keys = of(TIER_INERT, Scope::Tier);
    keys.extend(of(CALL_INERT, Scope::Call));
    keys.extend(of(CLIENT_INERT, Scope::Client));
    keys
}

/// When a catalogue key of `scope` acts, the conditions (none: wherever
/// it is set), for `docs/params.md`.
pub fn acts_when(scope: crate::params::Scope, key: &str) -> Vec<&'static str> {
    use crate::params::Scope;
    fn of<A, B>(rules: &[Inert<A, B>], key: &str) -> Vec<&'static str> {
        (rules.iter())
            .filter(|r| r.keys.contains(&key))
            .map(|r| r.acts)
            .collect()
    }
    match scope {
        Scope::Tier => of(TIER_INERT, key),
        Scope::Call => of(CALL_INERT, key),
        Scope::Client => of(CLIENT_INERT, key),
        _ => Vec::new(),
    }
}
