//! Every accepted parameter has an effect: each catalogue line, set to a
//! value other than the one it has, in a scenario where its mechanism
//! acts, changes the run's result. A parameter that changes nothing
//! anywhere is a defect (it should be refused where it cannot act, or
//! removed), and a new catalogue line without an entry here fails.

mod common;
use sim_core::params::{self, Kind, PARAMS, Param};
use sim_core::{ConfigError, Scenario};

/// Catalogue keys with no effect on a run by design, and why.
const EXEMPT: &[(&str, &str)] = &[
    (
        "latency.per_inflight_s",
        "refused unless 0 (a service-time term that a latency cannot have)",
    ),
    (
        "closed.think.per_inflight_s",
        "refused unless 0 (a service-time term that a think time cannot have)",
    ),
    ("name", "a label of the scenario, not used by the model"),
    (
        "profile_csv",
        "read into client.profile when the scenario file is loaded (the points are checked below)",
    ),
];

/// `(base, context, path, value)`: the scenario (ch37 or a file of
/// grids/scenarios, shortened to 12 s of arrivals), the overrides that make
/// the mechanism act (`path=value` separated by spaces), and the parameter
/// set to another value than in the context.
const CASES: &[(&str, &str, &str, &str)] = &[
    ("ch37", "", "strategy", "protected"),
    ("ch37", "strategy=deadline", "dispatch", "reply_first"),
    ("ch37", "", "horizon_s", "14"),
    ("ch37", "", "max_events", "1000"),
    ("ch37", "", "series_bin_s", "0.1"),
    ("ch37", "strategy=deadline", "recovery.window_s", "1"),
    ("ch37", "strategy=deadline", "recovery.threshold", "0.5"),
    ("ch37", "", "client.rate_per_s", "300"),
    ("ch37", "", "client.arrivals", "even"),
    ("ch37", "", "client.duration_s", "10"),
    ("ch37", "", "client.deadline_s", "1.5"),
    (
        "ch37",
        "client.rate_per_s=0 client.closed.users=50 client.closed.think.mean_s=0.2",
        "client.closed.users",
        "100",
    ),
    (
        "ch37",
        "client.rate_per_s=0 client.closed.users=100 client.closed.think.mean_s=0.2",
        "client.closed.think.dist",
        "exponential",
    ),
    (
        "ch37",
        "client.rate_per_s=0 client.closed.users=100 client.closed.think.mean_s=0.2",
        "client.closed.think.mean_s",
        "0.5",
    ),
    (
        "ch37",
        "client.rate_per_s=0 client.closed.users=100 client.closed.think.mean_s=0.2 client.closed.think.dist=lognormal client.closed.think.sigma=0.5",
        "client.closed.think.sigma",
        "1.0",
    ),
    (
        "ch37",
        "client.rate_per_s=0 client.closed.users=100 client.closed.think.mean_s=0.2 client.closed.think.slow_s=1 client.closed.think.slow_p=0.1",
        "client.closed.think.slow_p",
        "0.2",
    ),
    (
        "ch37",
        "client.rate_per_s=0 client.closed.users=100 client.closed.think.mean_s=0.2 client.closed.think.slow_s=1 client.closed.think.slow_p=0.2",
        "client.closed.think.slow_s",
        "2",
    ),
    (
        "ch37",
        "client.rate_per_s=0 client.profile.0.at_s=0 client.profile.0.rate_per_s=400 client.profile.1.at_s=10 client.profile.1.rate_per_s=100",
        "client.profile.at_s",
        "5",
    ),
    (
        "ch37",
        "client.rate_per_s=0 client.profile.0.at_s=0 client.profile.0.rate_per_s=400 client.profile.1.at_s=10 client.profile.1.rate_per_s=100",
        "client.profile.rate_per_s",
        "200",
    ),
    (
        "ch37",
        "client.sinusoid.amplitude=0.25 client.sinusoid.period_s=4",
        "client.sinusoid.amplitude",
        "0.5",
    ),
    (
        "ch37",
        "client.sinusoid.period_s=4 client.sinusoid.amplitude=0.5",
        "client.sinusoid.period_s",
        "8",
    ),
    ("ch37-classes.toml", "", "client.classes.replay.share", "3"),
    ("ch37", "", "svc_a.attempt_timeout_s", "0.5"),
    ("ch37", "", "svc_a.attempt_timeouts_s", "[0.5]"),
    ("ch37", "", "svc_a.max_retries", "1"),
    ("ch37", "", "svc_a.backoff", "fixed"),
    ("ch37", "", "svc_a.backoff_base_s", "0.05"),
    ("ch37", "", "client.backoff_jitter", "0.2"),
    ("ch37", "", "svc_a.retry_on", "[\"error\"]"),
    (
        "ch37",
        "svc_a.retry_throttle=true",
        "svc_a.failure_on",
        "[\"overload\"]",
    ),
    ("limiter.toml", "", "api.reject_as", "overload"),
    (
        "ch37",
        "svc_a.backoff_base_s=0.1",
        "svc_a.backoff_cap_s",
        "0.05",
    ),
    ("ch37", "", "client.propagate_deadline", "true"),
    ("ch37", "", "svc_a.retry_throttle", "true"),
    (
        "ch37",
        "svc_a.retry_throttle=true",
        "svc_a.throttle_max_tokens",
        "20",
    ),
    (
        "ch37",
        "svc_a.retry_throttle=true",
        "svc_a.throttle_token_ratio",
        "0.5",
    ),
    (
        "ch37",
        "strategy=deadline",
        "svc_a.deadline_margin_s",
        "0.1",
    ),
    (
        "ch37",
        "strategy=deadline",
        "svc_a.budget_admission",
        "true",
    ),
    ("ch37", "", "svc_a.retry_budget", "true"),
    (
        "ch37",
        "svc_a.retry_budget=true",
        "svc_a.retry_budget_percent",
        "50",
    ),
    (
        "ch37",
        "svc_a.retry_budget=true svc_a.retry_budget_percent=1",
        "svc_a.retry_budget_min_concurrency",
        "10",
    ),
    ("ch37", "", "svc_a.adaptive_throttle", "true"),
    (
        "ch37",
        "svc_a.adaptive_throttle=true",
        "svc_a.adaptive_throttle_k",
        "1.1",
    ),
    (
        "ch37",
        "svc_b.queue_cap=16 svc_b.retry_after_s=0.2",
        "svc_a.honor_retry_after",
        "true",
    ),
    (
        "ch37",
        "svc_a.adaptive_throttle=true",
        "svc_a.adaptive_throttle_window_s",
        "2",
    ),
    ("ch37", "", "svc_a.breaker", "true"),
    ("ch37", "svc_a.breaker=true", "svc_a.breaker_window", "50"),
    ("ch37", "svc_a.breaker=true", "svc_a.breaker_window_s", "1"),
    (
        "ch37",
        "svc_a.breaker=true svc_b.replicas=4 svc_b.slow.replicas=[1] svc_b.slow.factor=50",
        "svc_a.breaker_scope",
        "replica",
    ),
    ("ch37", "", "svc_a.max_in_flight", "24"),
    (
        "ch37",
        "svc_a.max_in_flight=8 svc_b.replicas=4 svc_b.slow.replicas=[1]",
        "svc_a.bulkhead_scope",
        "replica",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.slow.replicas=[1]",
        "svc_a.balancer",
        "least_outstanding",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.slow.replicas=[1]",
        "svc_a.retry_other_replica",
        "false",
    ),
    (
        "ch37",
        "svc_b.replicas=10 svc_b.slow.replicas=[1] svc_b.slow.factor=50",
        "svc_a.outlier_ejection",
        "true",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.slow.replicas=[1] svc_a.outlier_ejection=true svc_a.outlier_max_ejection_percent=25",
        "svc_a.outlier_consecutive",
        "2",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.slow.replicas=[1] svc_b.slow.factor=50 svc_a.outlier_ejection=true svc_a.outlier_max_ejection_percent=25 svc_a.outlier_interval_s=1",
        "svc_a.outlier_base_ejection_s",
        "1",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.slow.replicas=[1] svc_b.slow.factor=50 svc_a.outlier_ejection=true svc_a.outlier_max_ejection_percent=25 svc_a.outlier_interval_s=1 svc_a.outlier_base_ejection_s=0.5",
        "svc_a.outlier_max_ejection_s",
        "0.5",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.slow.replicas=[1,2] svc_b.slow.factor=50 svc_a.outlier_ejection=true svc_a.outlier_max_ejection_percent=25",
        "svc_a.outlier_max_ejection_percent",
        "50",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.slow.replicas=[1] svc_b.slow.factor=50 svc_a.outlier_ejection=true svc_a.outlier_max_ejection_percent=25 svc_a.outlier_base_ejection_s=1",
        "svc_a.outlier_interval_s",
        "1",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.slow.replicas=[1,2] svc_b.slow.factor=50 svc_a.outlier_ejection=true svc_a.outlier_max_ejection_percent=75",
        "svc_a.outlier_panic_threshold_percent",
        "60",
    ),
    ("fan-out.toml", "", "page.fanout.recs.required", "true"),
    (
        "ch37",
        "svc_a.breaker=true svc_a.breaker_window_s=0.05",
        "svc_a.breaker_min_samples",
        "19",
    ),
    (
        "ch37",
        "svc_a.breaker=true",
        "svc_a.breaker_failure_rate",
        "0.9",
    ),
    (
        "ch37",
        "svc_a.breaker=true svc_a.breaker_slow_call_s=0.1",
        "svc_a.breaker_slow_call_rate",
        "0.5",
    ),
    (
        "ch37",
        "svc_a.breaker=true svc_a.breaker_slow_call_rate=0.5",
        "svc_a.breaker_slow_call_s",
        "0.1",
    ),
    ("ch37", "svc_a.breaker=true", "svc_a.breaker_open_s", "3"),
    (
        "ch37",
        "svc_a.breaker=true",
        "svc_a.breaker_open_jitter_s",
        "0.5",
    ),
    (
        "ch37",
        "svc_a.breaker=true",
        "svc_a.breaker_half_open_probes",
        "10",
    ),
    ("ch37", "strategy=deadline", "svc_a.budget_share", "0.2"),
    ("ch37", "", "svc_a.hedge_delay_s", "0.05"),
    (
        "ch37",
        "svc_a.hedge_delay_s=0.05",
        "svc_a.hedge_budget_percent",
        "50",
    ),
    (
        "ch37",
        "svc_a.hedge_delay_s=0.05",
        "svc_a.hedge_quantile",
        "0.5",
    ),
    ("ch37", "", "svc_a.cancel", "always"),
    (
        "ch37",
        "client.spike.0.start_s=1 client.spike.0.duration_s=2 client.spike.0.factor=2",
        "client.spike.start_s",
        "2",
    ),
    (
        "ch37",
        "client.spike.0.start_s=1 client.spike.0.duration_s=2 client.spike.0.factor=2",
        "client.spike.duration_s",
        "3",
    ),
    (
        "ch37",
        "client.spike.0.start_s=1 client.spike.0.duration_s=2 client.spike.0.factor=2",
        "client.spike.factor",
        "3",
    ),
    ("ch37", "", "svc_b.slots", "20"),
    ("ch37", "", "svc_b.replicas", "2"),
    ("ch37", "", "svc_b.queue_cap", "16"),
    // With cancel_check_s, svc_b still reads the deadline svc_a passes.
    (
        "ch37",
        "strategy=deadline svc_b.cancel_check_s=0.01",
        "svc_b.drop_expired",
        "false",
    ),
    (
        "ch37",
        "svc_b.queue_cap=16",
        "svc_b.reject_latency_s",
        "0.01",
    ),
    ("ch37", "", "svc_b.latency.mean_s", "0.001"),
    (
        "ch37",
        "svc_b.latency.mean_s=0.001",
        "svc_b.latency.dist",
        "exponential",
    ),
    (
        "ch37",
        "svc_b.latency.mean_s=0.001 svc_b.latency.dist=lognormal svc_b.latency.sigma=0.5",
        "svc_b.latency.sigma",
        "1.0",
    ),
    (
        "ch37",
        "svc_b.latency.slow_s=0.05",
        "svc_b.latency.slow_p",
        "0.1",
    ),
    (
        "ch37",
        "svc_b.latency.slow_s=0.05 svc_b.latency.slow_p=0.1",
        "svc_b.latency.slow_s",
        "0.1",
    ),
    ("ch37-classes.toml", "", "svc_b.class_slots.replay", "4"),
    ("ch37-classes.toml", "", "svc_b.shed_queue.replay", "8"),
    (
        "ch37-classes.toml",
        "",
        "svc_b.class_service_s.replay",
        "0.01",
    ),
    ("ch37", "", "svc_b.queue_order", "lifo"),
    (
        "ch37",
        "svc_b.queue_order=adaptive_lifo",
        "svc_b.lifo_threshold",
        "100",
    ),
    ("ch37", "", "svc_b.adaptive_limit", "true"),
    (
        "ch37",
        "svc_b.adaptive_limit=true",
        "svc_b.limit_algorithm",
        "gradient",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_tolerance",
        "3",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_smoothing",
        "0.5",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_long_window",
        "100",
    ),
    ("ch37", "svc_b.adaptive_limit=true", "svc_b.limit_min", "8"),
    (
        "ch37",
        "svc_b.adaptive_limit=true",
        "svc_b.limit_latency_s",
        "0.1",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true",
        "svc_b.limit_decrease",
        "0.5",
    ),
    (
        "ch37",
        "strategy=protected client.rate_per_s=30 svc_b.adaptive_limit=true svc_b.limit_latency_s=0.1",
        "svc_b.limit_increase",
        "2",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true",
        "svc_b.limit_min_samples",
        "50",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true",
        "svc_b.limit_breaches",
        "3",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true",
        "svc_b.limit_interval_s",
        "0.5",
    ),
    (
        "ch37",
        "strategy=protected client.rate_per_s=30 svc_b.adaptive_limit=true svc_b.limit_latency_s=0.1",
        "svc_b.limit_increase_percent",
        "10",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true",
        "svc_b.limit_hold_s",
        "1",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true svc_b.limit_min_samples=50",
        "svc_b.limit_sparse",
        "skip",
    ),
    (
        "ch37",
        "svc_b.adaptive_limit=true",
        "svc_b.limit_latency_from",
        "start",
    ),
    ("ch37", "", "svc_b.rate_limit_per_s", "300"),
    (
        "tenants.toml",
        "api.rate_limit_key=tenant api.rate_limit_per_s=20",
        "client.tenants",
        "5",
    ),
    (
        "tenants.toml",
        "api.rate_limit_key=tenant api.rate_limit_per_s=20",
        "client.tenant_zipf_s",
        "2",
    ),
    (
        "tenants.toml",
        "api.rate_limit_per_s=20",
        "api.rate_limit_key",
        "tenant",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.rate_limit_per_s=100",
        "svc_b.rate_limit_scope",
        "service",
    ),
    (
        "ch37",
        "svc_b.rate_limit_per_s=300",
        "svc_b.rate_limit_kind",
        "fixed_window",
    ),
    (
        "ch37",
        "svc_b.rate_limit_per_s=300 svc_b.rate_limit_kind=leaky_bucket",
        "svc_b.rate_limit_burst",
        "50",
    ),
    (
        "ch37",
        "svc_b.rate_limit_per_s=300 svc_b.rate_limit_kind=sliding_window",
        "svc_b.rate_limit_window_s",
        "0.1",
    ),
    (
        "ch37",
        "svc_b.rate_limit_per_s=300",
        "svc_b.rate_limit_burst",
        "50",
    ),
    ("ch37", "", "svc_b.codel", "true"),
    ("ch37", "svc_b.codel=true", "svc_b.codel_target_s", "0.05"),
    ("ch37", "svc_b.codel=true", "svc_b.codel_interval_s", "0.5"),
    (
        "ch37",
        "svc_b.queue_cap=16 svc_a.honor_retry_after=true",
        "svc_b.retry_after_s",
        "0.2",
    ),
    ("ch37", "strategy=deadline", "svc_b.cancel_check_s", "0.01"),
    ("ch37", "", "svc_b.service.dist", "constant"),
    ("ch37", "", "svc_b.service.mean_s", "0.03"),
    (
        "ch37",
        "svc_b.service.dist=lognormal svc_b.service.sigma=0.5",
        "svc_b.service.sigma",
        "1.0",
    ),
    (
        "ch37",
        "svc_b.service.slow_s=0.5",
        "svc_b.service.slow_p",
        "0.05",
    ),
    (
        "ch37",
        "svc_b.service.slow_p=0.05 svc_b.service.slow_s=0.5",
        "svc_b.service.slow_s",
        "1",
    ),
    ("ch37", "", "svc_b.service.per_inflight_s", "0.001"),
    (
        "mixed-clients.toml",
        "batch.duration_s=12",
        "batch.calls",
        "svc_b",
    ),
    (
        "replay.toml",
        "replay.duration_s=12",
        "replay.queue.consumers",
        "10",
    ),
    (
        "replay.toml",
        "replay.duration_s=12",
        "replay.queue.drain_rate_per_s",
        "300",
    ),
    (
        "replay.toml",
        "replay.duration_s=12",
        "replay.queue.redeliver_after_s",
        "0.3",
    ),
    (
        "replay.toml",
        "replay.duration_s=12",
        "replay.queue.max_backlog",
        "100",
    ),
    ("cold-cache.toml", "", "db.cache.hit_ratio", "0.5"),
    ("cold-cache.toml", "", "db.cache.hit_latency_s", "0.01"),
    ("cold-cache.toml", "", "db.cache.flush_start_s", "5"),
    ("cold-cache.toml", "", "db.cache.flush_duration_s", "1"),
    (
        "cold-cache.toml",
        "db.queue_cap=16",
        "db.cache.fill_keys",
        "200",
    ),
    (
        "ch37",
        "svc_b.gc.every_s=2 svc_b.gc.pause_s=0.05",
        "svc_b.gc.every_s",
        "1",
    ),
    (
        "ch37",
        "svc_b.gc.every_s=1 svc_b.gc.pause_s=0.05",
        "svc_b.gc.pause_s",
        "0.1",
    ),
    (
        "ch37",
        "svc_b.gc.every_s=1 svc_b.gc.pause_s=0.05",
        "svc_b.gc.per_queued_s",
        "0.001",
    ),
    ("ch37", "", "svc_b.slow.start_s", "2"),
    ("ch37", "", "svc_b.slow.duration_s", "2"),
    ("ch37", "", "svc_b.slow.factor", "5"),
    ("ch37", "svc_b.replicas=4", "svc_b.slow.replicas", "[1]"),
    (
        "ch37",
        "svc_b.errors.duration_s=2 svc_b.errors.p=0.5",
        "svc_b.errors.start_s",
        "5",
    ),
    (
        "ch37",
        "svc_b.errors.start_s=5 svc_b.errors.duration_s=1 svc_b.errors.p=0.5",
        "svc_b.errors.duration_s",
        "2",
    ),
    (
        "ch37",
        "svc_b.errors.start_s=5 svc_b.errors.duration_s=2",
        "svc_b.errors.p",
        "0.5",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.errors.start_s=5 svc_b.errors.duration_s=2 svc_b.errors.p=0.5",
        "svc_b.errors.replicas",
        "[1]",
    ),
    (
        "ch37",
        "svc_b.errors.start_s=5 svc_b.errors.duration_s=2 svc_b.errors.p=0.5",
        "svc_b.error_latency_s",
        "0.05",
    ),
    (
        "ch37",
        "svc_b.crash.duration_s=1",
        "svc_b.crash.start_s",
        "5",
    ),
    (
        "ch37",
        "svc_b.crash.start_s=5 svc_b.crash.duration_s=1",
        "svc_b.crash.duration_s",
        "2",
    ),
    (
        "ch37",
        "svc_b.crash.start_s=5 svc_b.crash.duration_s=1",
        "svc_b.crash.mode",
        "black_hole",
    ),
    (
        "ch37",
        "svc_b.crash.start_s=5 svc_b.crash.duration_s=1",
        "svc_b.crash.connect_latency_s",
        "0.05",
    ),
    (
        "ch37",
        "svc_b.replicas=4 svc_b.crash.start_s=5 svc_b.crash.duration_s=1",
        "svc_b.crash.replicas",
        "[1]",
    ),
];

/// The base scenario shortened (12 s of arrivals, its trigger, a slow
/// window, a load spike, a cache flush or a crash, from 3 s to 7 s), with the
/// context applied.
fn scenario(base: &str, context: &str) -> Scenario {
    let trigger = match base {
        "fan-out.toml" => "recs.slow",
        "limiter.toml" => "client.spike",
        "cold-cache.toml" => "db.cache.flush_",
        "replay.toml" => "db.crash",
        "tenants.toml" => "api.slow",
        _ => "svc_b.slow",
    };
    let dot = if trigger.ends_with('_') { "" } else { "." };
    let (start, length) = (
        format!("{trigger}{dot}start_s"),
        format!("{trigger}{dot}duration_s"),
    );
    let mut sets = vec![
        ("client.duration_s", "12"),
        ("horizon_s", "16"),
        (start.as_str(), "3"),
        (length.as_str(), "4"),
    ];
    // `strategy` first, as on the command line; then the rest in order.
    sets.extend(context.split_whitespace().map(|kv| {
        kv.split_once('=')
            .unwrap_or_else(|| panic!("`{kv}`: path=value"))
    }));
    let mut s = common::load(base);
    common::set(&mut s, &sets);
    s
}

#[test]
fn every_parameter_changes_the_result_where_it_applies() {
    let covered: Vec<&Param> = (CASES.iter())
        .map(|(_, _, path, _)| {
            params::param_of(path).unwrap_or_else(|| panic!("`{path}` is no parameter"))
        })
        .collect();
    let missing: Vec<String> = (PARAMS.iter())
        .filter(|p| !covered.iter().any(|c| c.scope == p.scope && c.key == p.key))
        .filter(|p| !EXEMPT.iter().any(|(key, _)| *key == p.key))
        .map(|p| format!("{:?} {}", p.scope, p.key))
        .collect();
    assert!(
        missing.is_empty(),
        "parameters without a case in tests/effects.rs: {missing:?}"
    );
    let no_effect: Vec<String> = std::thread::scope(|scope| {
        let half = CASES.len() / 2;
        let workers: Vec<_> = [&CASES[..half], &CASES[half..]]
            .map(|cases| {
                scope.spawn(move || cases.iter().filter_map(no_effect).collect::<Vec<_>>())
            })
            .into_iter()
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a worker"))
            .collect()
    });
    assert!(
        no_effect.is_empty(),
        "set where they should act, these changed nothing:\n  {}",
        no_effect.join("\n  ")
    );
}

/// The case described if setting its parameter changes nothing.
fn no_effect(&(base, context, path, value): &(&str, &str, &str, &str)) -> Option<String> {
    let before = scenario(base, context);
    let mut after = before.clone();
    common::set(&mut after, &[(path, value)]);
    let case = format!("{path} = {value} on {base} with `{context}`");
    // The context may hold keys that only the parameter makes act (as a
    // grid's [set] beside an axis that turns them on): before it, they
    // are idle, as a grid point's; after it, nothing may be.
    type Check = fn(&Scenario) -> Result<(), Vec<ConfigError>>;
    let checks: [(&Scenario, Check); 2] = [
        (&before, sim_core::validate_settings),
        (&after, sim_core::validate),
    ];
    for (s, check) in checks {
        if let Err(e) = check(s) {
            let e: Vec<String> = e.iter().map(ToString::to_string).collect();
            return Some(format!("{case}: invalid: {}", e.join("; ")));
        }
    }
    if before == after {
        return Some(format!("{case}: the value is the one it had"));
    }
    let same = sim_core::run(&before, 1) == sim_core::run(&after, 1);
    same.then_some(case)
}

/// Cases whose edge value is refused by a rule between fields, not by the
/// parameter's bounds (the rule is in its doc).
const EDGE_REFUSED: &[(&str, &str)] = &[
    ("horizon_s", "must be >= client.duration_s"),
    (
        "client.duration_s",
        "the base scenario's trigger starts after 1 s of arrivals",
    ),
    (
        "client.profile.at_s",
        "a profile point must lie within client.duration_s",
    ),
    (
        "client.rate_per_s",
        "0 only with closed-loop users or a load profile",
    ),
    (
        "client.closed.users",
        "users x (1 + duration_s / think mean) is at most 20000000",
    ),
    (
        "svc_a.outlier_max_ejection_s",
        "must be >= outlier_base_ejection_s",
    ),
    (
        "svc_b.rate_limit_window_s",
        "a window admits whole requests: rate_limit_per_s x rate_limit_window_s at least 1",
    ),
];

/// The bounds `sweep params` shows are the ones validation enforces: in
/// each case's scenario, the values just outside are refused at the
/// parameter's path, and the edges inside are accepted.
#[test]
fn every_numeric_parameter_has_the_bounds_validation_enforces() {
    let numeric = |p: &Param| matches!(p.kind, Kind::Float | Kind::Int | Kind::Cap | Kind::Floats);
    let unbounded: Vec<&str> = (PARAMS.iter())
        .filter(|p| numeric(p) && p.bounds.is_none())
        .map(|p| p.key)
        .collect();
    assert!(
        unbounded.is_empty(),
        "numeric parameters without bounds: {unbounded:?}"
    );
    let mut wrong = Vec::new();
    for &(base, context, path, _) in CASES {
        let param = params::param_of(path).expect("a parameter");
        let Some(b) = param.bounds.filter(|_| param.kind != Kind::Floats) else {
            continue;
        };
        let int = param.kind != Kind::Float;
        let step = if int {
            1.0
        } else {
            1e-6_f64.max(b.min.abs() * 1e-6)
        };
        let mut probes = vec![(b.min - step, false), (b.min, !b.min_open)];
        if b.min_open {
            probes.push((b.min + step, true));
        }
        if b.max.is_finite() {
            let step = if int {
                1.0
            } else {
                1e-6_f64.max(b.max.abs() * 1e-6)
            };
            probes.extend([(b.max + step, false), (b.max, !b.max_open)]);
            if b.max_open {
                probes.push((b.max - step, true));
            }
        }
        for (x, accepted) in probes {
            if accepted && EDGE_REFUSED.iter().any(|(p, _)| *p == path) {
                continue;
            }
            assert_eq!(b.contains(x), accepted, "{path}: {x}");
            let value = if int {
                format!("{}", x as i64)
            } else {
                format!("{x:?}")
            };
            if int && x < 0.0 {
                continue; // refused by the type: `set` cannot write it
            }
            let mut s = scenario(base, context);
            let refused = match sim_core::apply_all(&mut s, &common::overrides(&[(path, &value)])) {
                Err(_) => true,
                Ok(()) => sim_core::validate(&s)
                    .is_err_and(|errors| errors.iter().any(|e| same_path(&e.path, path))),
            };
            if refused == accepted {
                let said = if accepted { "refused" } else { "accepted" };
                wrong.push(format!(
                    "{path} = {value}: {said}, but its bounds are {}",
                    b.describe()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "bounds that validation does not enforce:\n  {}",
        wrong.join("\n  ")
    );
}

/// Paths equal once window and point indexes are dropped
/// (`svc_b.slow.0.duration_s` is `svc_b.slow.duration_s`).
fn same_path(a: &str, b: &str) -> bool {
    let plain = |p: &str| -> Vec<String> {
        (p.split('.'))
            .filter(|part| part.parse::<u32>().is_err())
            .map(str::to_string)
            .collect()
    };
    plain(a) == plain(b)
}
