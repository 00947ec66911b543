//! A parameter of a mechanism that is off, or of another rule than the one
//! chosen, is refused when it holds a value other than its default, with
//! the reason and what would make it act; at its default it is accepted
//! (the run is the same). The rules are `validate::{TIER,CALL,CLIENT}_INERT`.

mod common;
use sim_core::params::{self, PARAMS};

/// `(context, path, value, message)`: on ch37 with the context's overrides
/// (`path=value` separated by spaces), setting `path` to `value` is
/// refused at `path` with exactly this message, and nothing else is.
const REFUSED: &[(&str, &str, &str, &str)] = &[
    (
        "svc_a.max_retries=1",
        "svc_a.attempt_timeouts_s",
        "[0.1, 0.2, 0.4]",
        "[0.1, 0.2, 0.4] has no effect: attempt_timeouts_s is the timeouts of the attempts by number, and svc_a.max_retries is 1 (2 attempts), so its entries past attempt 2 never act; set svc_a.max_retries >= 2 or give at most 2 entries, or leave attempt_timeouts_s at its default (unset)",
    ),
    (
        "svc_a.breaker=true",
        "svc_a.breaker_scope",
        "replica",
        r#""replica" has no effect: breaker_scope is whether the caller keeps one per replica of the called tier, and svc_a calls svc_b, which has one replica; set svc_b.replicas > 1, or leave breaker_scope at its default ("service")"#,
    ),
    (
        "svc_a.max_in_flight=50",
        "svc_a.bulkhead_scope",
        "replica",
        r#""replica" has no effect: bulkhead_scope is whether the caller keeps one per replica of the called tier, and svc_a calls svc_b, which has one replica; set svc_b.replicas > 1, or leave bulkhead_scope at its default ("service")"#,
    ),
    (
        "svc_b.rate_limit_per_s=300",
        "svc_b.rate_limit_scope",
        "service",
        r#""service" has no effect: rate_limit_scope is whether the replicas share the rate limit, and svc_b has one replica; set svc_b.replicas > 1, or leave rate_limit_scope at its default ("replica")"#,
    ),
    (
        "",
        "svc_b.drop_expired",
        "true",
        "true has no effect: drop_expired is what the tier does with a request's deadline, and no call to svc_b propagates a deadline, so its requests have none; set propagate_deadline = true on a call to svc_b, or leave drop_expired at its default (false)",
    ),
    (
        "client.propagate_deadline=true",
        "svc_b.cancel_check_s",
        "0.01",
        "0.01 has no effect: cancel_check_s is what the tier does with a request's deadline, and no call to svc_b propagates a deadline, so its requests have none; set propagate_deadline = true on a call to svc_b, or leave cancel_check_s at its default (0.0)",
    ),
    (
        "",
        "svc_a.propagate_deadline",
        "true",
        "true has no effect: propagate_deadline is whether the caller passes its attempt's end down as a deadline, and svc_a calls svc_b, which reads no deadline (it calls no tier, drops no expired request and checks for no cancellation); set svc_b.drop_expired = true or svc_b.cancel_check_s > 0, or leave propagate_deadline at its default (false)",
    ),
    (
        "",
        "gateway.budget_share",
        "0.5",
        "0.5 has no effect: budget_share is a rule of the caller's deadline, and no call to gateway propagates a deadline, so its requests have none; set propagate_deadline = true on a call to gateway, or leave budget_share at its default (1.0)",
    ),
    (
        "client.propagate_deadline=true",
        "svc_a.deadline_margin_s",
        "0.1",
        "0.1 has no effect: deadline_margin_s is a rule of the caller's deadline, and no call to svc_a propagates a deadline, so its requests have none; set propagate_deadline = true on a call to svc_a, or leave deadline_margin_s at its default (0.0)",
    ),
    (
        "",
        "gateway.budget_admission",
        "true",
        "true has no effect: budget_admission is a rule of the caller's deadline, and no call to gateway propagates a deadline, so its requests have none; set propagate_deadline = true on a call to gateway, or leave budget_admission at its default (false)",
    ),
    (
        "",
        "svc_a.honor_retry_after",
        "true",
        "true has no effect: honor_retry_after is whether the caller waits for a rejection's Retry-After, and svc_a calls svc_b, whose rejections carry no Retry-After; set svc_b.retry_after_s > 0, or leave honor_retry_after at its default (false)",
    ),
    (
        "svc_b.replicas=2 svc_a.max_retries=0",
        "svc_a.retry_other_replica",
        "false",
        "false has no effect: retry_other_replica is where a retry or a hedged copy goes, and svc_a.max_retries is 0 and svc_a does not hedge, so no attempt is sent a second time; set svc_a.max_retries >= 1, svc_a.hedge_delay_s > 0 or svc_a.hedge_quantile > 0, or leave retry_other_replica at its default (true)",
    ),
    (
        "",
        "svc_a.cancel",
        "hedge_losers",
        r#""hedge_losers" has no effect: cancel is what the caller cancels, and svc_a does not hedge (hedge_delay_s and hedge_quantile are 0), so there is no losing copy; set svc_a.hedge_delay_s > 0 or svc_a.hedge_quantile > 0, or cancel = "always", or leave cancel at its default ("never")"#,
    ),
    (
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_latency_s",
        "0.3",
        r#"0.3 has no effect: limit_latency_s is a setting of the AIMD adaptive limit, and svc_b.limit_algorithm is "gradient"; set svc_b.limit_algorithm = "aimd", or leave limit_latency_s at its default (0.5)"#,
    ),
    (
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_decrease",
        "0.5",
        r#"0.5 has no effect: limit_decrease is a setting of the AIMD adaptive limit, and svc_b.limit_algorithm is "gradient"; set svc_b.limit_algorithm = "aimd", or leave limit_decrease at its default (0.9)"#,
    ),
    (
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_increase",
        "2",
        r#"2 has no effect: limit_increase is a setting of the AIMD adaptive limit, and svc_b.limit_algorithm is "gradient"; set svc_b.limit_algorithm = "aimd", or leave limit_increase at its default (1)"#,
    ),
    (
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_breaches",
        "3",
        r#"3 has no effect: limit_breaches is a setting of the AIMD adaptive limit, and svc_b.limit_algorithm is "gradient"; set svc_b.limit_algorithm = "aimd", or leave limit_breaches at its default (1)"#,
    ),
    (
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_increase_percent",
        "10",
        r#"10.0 has no effect: limit_increase_percent is a setting of the AIMD adaptive limit, and svc_b.limit_algorithm is "gradient"; set svc_b.limit_algorithm = "aimd", or leave limit_increase_percent at its default (0.0)"#,
    ),
    (
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_hold_s",
        "1",
        r#"1.0 has no effect: limit_hold_s is a setting of the AIMD adaptive limit, and svc_b.limit_algorithm is "gradient"; set svc_b.limit_algorithm = "aimd", or leave limit_hold_s at its default (0.0)"#,
    ),
    (
        "svc_b.adaptive_limit=true svc_b.limit_algorithm=gradient",
        "svc_b.limit_sparse",
        "skip",
        r#""skip" has no effect: limit_sparse is a setting of the AIMD adaptive limit, and svc_b.limit_algorithm is "gradient"; set svc_b.limit_algorithm = "aimd", or leave limit_sparse at its default ("wait")"#,
    ),
    (
        "",
        "svc_b.limit_hold_s",
        "5",
        "5.0 has no effect: limit_hold_s is a setting of the AIMD adaptive limit, and svc_b.adaptive_limit is false; set svc_b.adaptive_limit = true, or leave limit_hold_s at its default (0.0)",
    ),
    (
        "",
        "svc_b.limit_tolerance",
        "3",
        r#"3.0 has no effect: limit_tolerance is a setting of the gradient adaptive limit, and svc_b.adaptive_limit is false; set svc_b.adaptive_limit = true and svc_b.limit_algorithm = "gradient", or leave limit_tolerance at its default (1.5)"#,
    ),
    (
        "",
        "svc_b.limit_algorithm",
        "gradient",
        r#""gradient" has no effect: limit_algorithm is a setting of the adaptive limit, and svc_b.adaptive_limit is off; set svc_b.adaptive_limit = true, or leave limit_algorithm at its default ("aimd")"#,
    ),
    (
        "",
        "svc_b.limit_min",
        "8",
        "8 has no effect: limit_min is a setting of the adaptive limit, and svc_b.adaptive_limit is off; set svc_b.adaptive_limit = true, or leave limit_min at its default (1)",
    ),
    (
        "",
        "svc_b.limit_min_samples",
        "50",
        "50 has no effect: limit_min_samples is a setting of the adaptive limit, and svc_b.adaptive_limit is off; set svc_b.adaptive_limit = true, or leave limit_min_samples at its default (10)",
    ),
    (
        "",
        "svc_b.limit_interval_s",
        "0.5",
        "0.5 has no effect: limit_interval_s is a setting of the adaptive limit, and svc_b.adaptive_limit is off; set svc_b.adaptive_limit = true, or leave limit_interval_s at its default (0.1)",
    ),
    (
        "",
        "svc_b.lifo_threshold",
        "100",
        r#"100 has no effect: lifo_threshold is the adaptive LIFO's threshold, and svc_b.queue_order is "fifo"; set svc_b.queue_order = "adaptive_lifo", or leave lifo_threshold at its default (0)"#,
    ),
    (
        "",
        "svc_b.codel_target_s",
        "0.05",
        "0.05 has no effect: codel_target_s is a CoDel setting, and svc_b.codel is off; set svc_b.codel = true, or leave codel_target_s at its default (0.005)",
    ),
    (
        "",
        "svc_b.codel_interval_s",
        "0.5",
        "0.5 has no effect: codel_interval_s is a CoDel setting, and svc_b.codel is off; set svc_b.codel = true, or leave codel_interval_s at its default (0.1)",
    ),
    (
        "",
        "svc_b.rate_limit_kind",
        "fixed_window",
        r#""fixed_window" has no effect: rate_limit_kind is a setting of the rate limit, and svc_b.rate_limit_per_s is 0 (no rate limit); set svc_b.rate_limit_per_s > 0, or leave rate_limit_kind at its default ("token_bucket")"#,
    ),
    (
        "",
        "svc_b.rate_limit_window_s",
        "0.1",
        "0.1 has no effect: rate_limit_window_s is the window of a fixed or sliding window limit, and svc_b.rate_limit_per_s is 0 (no rate limit); set svc_b.rate_limit_per_s > 0, or leave rate_limit_window_s at its default (1.0)",
    ),
    (
        "",
        "svc_b.error_latency_s",
        "0.05",
        "0.05 has no effect: error_latency_s is how long a request failing in an error window holds its slot, and svc_b has no error window (none with svc_b.errors.p > 0); give svc_b an error window (svc_b.errors.p > 0), or leave error_latency_s at its default (0.001)",
    ),
    (
        "",
        "svc_b.gc.pause_s",
        "0.1",
        "0.1 has no effect: gc.pause_s is a setting of the GC pauses, and svc_b.gc.every_s is 0 (no pauses); set svc_b.gc.every_s > 0, or leave gc.pause_s at its default (0.0)",
    ),
    (
        "",
        "svc_b.gc.per_queued_s",
        "0.001",
        "0.001 has no effect: gc.per_queued_s is a setting of the GC pauses, and svc_b.gc.every_s is 0 (no pauses); set svc_b.gc.every_s > 0, or leave gc.per_queued_s at its default (0.0)",
    ),
    (
        "",
        "svc_b.cache.hit_latency_s",
        "0.01",
        "0.01 has no effect: cache.hit_latency_s is a setting of the look-aside cache, and svc_b.cache.hit_ratio is 0 (no cache); set svc_b.cache.hit_ratio > 0, or leave cache.hit_latency_s at its default (0.001)",
    ),
    (
        "",
        "svc_b.cache.flush_duration_s",
        "1",
        "1.0 has no effect: cache.flush_duration_s is a setting of the look-aside cache, and svc_b.cache.hit_ratio is 0 (no cache); set svc_b.cache.hit_ratio > 0, or leave cache.flush_duration_s at its default (0.0)",
    ),
    (
        "",
        "svc_b.cache.flush_start_s",
        "5",
        "5.0 has no effect: cache.flush_start_s is a setting of the cache's flush, and svc_b.cache.hit_ratio is 0 (no cache); set svc_b.cache.hit_ratio > 0, or leave cache.flush_start_s at its default (0.0)",
    ),
    (
        "",
        "svc_b.service.sigma",
        "0.5",
        r#"0.5 has no effect: service.sigma is the lognormal's shape, and svc_b.service.dist is "exponential"; set svc_b.service.dist = "lognormal", or leave service.sigma at its default (1.0)"#,
    ),
    (
        "svc_b.latency.mean_s=0.001",
        "svc_b.latency.sigma",
        "0.5",
        r#"0.5 has no effect: latency.sigma is the lognormal's shape, and svc_b.latency.dist is "constant"; set svc_b.latency.dist = "lognormal", or leave latency.sigma at its default (1.0)"#,
    ),
    // A hop without latency draws 0 whatever the shape it is given (a
    // lognormal of mean 0 drew e^(sigma z) ns before it was refused).
    (
        "",
        "svc_b.latency.sigma",
        "0.5",
        "0.5 has no effect: latency.sigma is the lognormal's shape, and svc_b.latency.mean_s is 0 (every time it draws is 0); set svc_b.latency.mean_s > 0, or leave latency.sigma at its default (1.0)",
    ),
    (
        "",
        "svc_b.latency.dist",
        "\"lognormal\"",
        r#""lognormal" has no effect: latency.dist is the shape of the times around latency.mean_s, and svc_b.latency.mean_s is 0 (every time it draws is 0); set svc_b.latency.mean_s > 0, or leave latency.dist at its default ("constant")"#,
    ),
    (
        "",
        "svc_b.latency.slow_p",
        "0.5",
        "0.5 has no effect: latency.slow_p is the share of times that take the slow value, and svc_b.latency.mean_s and svc_b.latency.slow_s are 0 (every time it draws is 0); set svc_b.latency.mean_s or svc_b.latency.slow_s > 0, or leave latency.slow_p at its default (0.0)",
    ),
    (
        "",
        "gateway.service.dist",
        "\"lognormal\"",
        r#""lognormal" has no effect: service.dist is the shape of the times around service.mean_s, and gateway.service.mean_s is 0 (every time it draws is 0); set gateway.service.mean_s > 0, or leave service.dist at its default ("constant")"#,
    ),
    (
        "svc_b.adaptive_limit=true",
        "svc_b.limit_tolerance",
        "3",
        r#"3.0 has no effect: limit_tolerance is a setting of the gradient adaptive limit, and svc_b.limit_algorithm is "aimd"; set svc_b.limit_algorithm = "gradient", or leave limit_tolerance at its default (1.5)"#,
    ),
    (
        "svc_b.adaptive_limit=true",
        "svc_b.limit_smoothing",
        "0.5",
        r#"0.5 has no effect: limit_smoothing is a setting of the gradient adaptive limit, and svc_b.limit_algorithm is "aimd"; set svc_b.limit_algorithm = "gradient", or leave limit_smoothing at its default (0.2)"#,
    ),
    (
        "svc_b.adaptive_limit=true",
        "svc_b.limit_long_window",
        "100",
        r#"100 has no effect: limit_long_window is a setting of the gradient adaptive limit, and svc_b.limit_algorithm is "aimd"; set svc_b.limit_algorithm = "gradient", or leave limit_long_window at its default (600)"#,
    ),
    (
        "svc_b.rate_limit_per_s=300",
        "svc_b.rate_limit_window_s",
        "0.1",
        r#"0.1 has no effect: rate_limit_window_s is the window of a fixed or sliding window limit, and svc_b.rate_limit_kind is "token_bucket"; set svc_b.rate_limit_kind = "fixed_window" or "sliding_window", or leave rate_limit_window_s at its default (1.0)"#,
    ),
    (
        "svc_b.rate_limit_per_s=300 svc_b.rate_limit_kind=fixed_window",
        "svc_b.rate_limit_burst",
        "50",
        r#"50.0 has no effect: rate_limit_burst is the size of a token or leaky bucket, and svc_b.rate_limit_kind is "fixed_window"; set svc_b.rate_limit_kind = "token_bucket" or "leaky_bucket", or leave rate_limit_burst at its default (1.0)"#,
    ),
    (
        "svc_b.cache.hit_ratio=0.5",
        "svc_b.cache.fill_keys",
        "200",
        "200 has no effect: cache.fill_keys is a setting of the cache's flush, and svc_b.cache.flush_duration_s is 0 (no flush); set svc_b.cache.flush_duration_s > 0, or leave cache.fill_keys at its default (1000)",
    ),
    (
        "svc_a.max_retries=0",
        "svc_a.backoff_jitter",
        "0.2",
        "0.2 has no effect: backoff_jitter is a setting of the caller's retries, and svc_a.max_retries is 0 (no retries); set svc_a.max_retries >= 1, or leave backoff_jitter at its default (0.0)",
    ),
    (
        "svc_a.max_retries=0",
        "svc_a.retry_on",
        r#"["error"]"#,
        r#"["error"] has no effect: retry_on is a setting of the caller's retries, and svc_a.max_retries is 0 (no retries); set svc_a.max_retries >= 1, or leave retry_on at its default (unset)"#,
    ),
    (
        "svc_a.max_retries=0",
        "svc_a.backoff_cap_s",
        "0.5",
        "0.5 has no effect: backoff_cap_s is the cap of the full-jitter backoff, and svc_a.max_retries is 0 (no retries); set svc_a.max_retries >= 1, or leave backoff_cap_s at its default (1.0)",
    ),
    (
        "",
        "svc_a.throttle_max_tokens",
        "20",
        "20.0 has no effect: throttle_max_tokens is a setting of the retry throttle, and svc_a.retry_throttle is off; set svc_a.retry_throttle = true, or leave throttle_max_tokens at its default (10.0)",
    ),
    (
        "",
        "svc_a.throttle_token_ratio",
        "0.5",
        "0.5 has no effect: throttle_token_ratio is a setting of the retry throttle, and svc_a.retry_throttle is off; set svc_a.retry_throttle = true, or leave throttle_token_ratio at its default (0.1)",
    ),
    (
        "",
        "svc_a.failure_on",
        r#"["overload"]"#,
        r#"["overload"] has no effect: failure_on is what the retry throttle and the circuit breaker count as failures, and svc_a has neither a retry throttle nor a breaker; set svc_a.retry_throttle = true or svc_a.breaker = true, or leave failure_on at its default (unset)"#,
    ),
    (
        "",
        "svc_a.retry_budget_percent",
        "50",
        "50.0 has no effect: retry_budget_percent is a setting of the retry budget, and svc_a.retry_budget is off; set svc_a.retry_budget = true, or leave retry_budget_percent at its default (20.0)",
    ),
    (
        "",
        "svc_a.retry_budget_min_concurrency",
        "10",
        "10 has no effect: retry_budget_min_concurrency is a setting of the retry budget, and svc_a.retry_budget is off; set svc_a.retry_budget = true, or leave retry_budget_min_concurrency at its default (3)",
    ),
    (
        "",
        "svc_a.adaptive_throttle_k",
        "1.1",
        "1.1 has no effect: adaptive_throttle_k is a setting of the adaptive throttle, and svc_a.adaptive_throttle is off; set svc_a.adaptive_throttle = true, or leave adaptive_throttle_k at its default (2.0)",
    ),
    (
        "",
        "svc_a.adaptive_throttle_window_s",
        "2",
        "2.0 has no effect: adaptive_throttle_window_s is a setting of the adaptive throttle, and svc_a.adaptive_throttle is off; set svc_a.adaptive_throttle = true, or leave adaptive_throttle_window_s at its default (10.0)",
    ),
    (
        "",
        "svc_a.breaker_window",
        "50",
        "50 has no effect: breaker_window is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_window at its default (20)",
    ),
    (
        "",
        "svc_a.breaker_window_s",
        "1",
        "1.0 has no effect: breaker_window_s is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_window_s at its default (0.0)",
    ),
    (
        "",
        "svc_a.breaker_min_samples",
        "19",
        "19 has no effect: breaker_min_samples is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_min_samples at its default (10)",
    ),
    (
        "",
        "svc_a.breaker_failure_rate",
        "0.9",
        "0.9 has no effect: breaker_failure_rate is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_failure_rate at its default (0.5)",
    ),
    (
        "",
        "svc_a.breaker_slow_call_rate",
        "0.5",
        "0.5 has no effect: breaker_slow_call_rate is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_slow_call_rate at its default (1.0)",
    ),
    (
        "",
        "svc_a.breaker_slow_call_s",
        "0.1",
        "0.1 has no effect: breaker_slow_call_s is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_slow_call_s at its default (1.0)",
    ),
    (
        "",
        "svc_a.breaker_open_s",
        "3",
        "3.0 has no effect: breaker_open_s is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_open_s at its default (1.0)",
    ),
    (
        "",
        "svc_a.breaker_open_jitter_s",
        "0.5",
        "0.5 has no effect: breaker_open_jitter_s is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_open_jitter_s at its default (0.0)",
    ),
    (
        "",
        "svc_a.breaker_half_open_probes",
        "10",
        "10 has no effect: breaker_half_open_probes is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_half_open_probes at its default (3)",
    ),
    (
        "",
        "svc_a.breaker_scope",
        "replica",
        r#""replica" has no effect: breaker_scope is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_scope at its default ("service")"#,
    ),
    (
        "",
        "svc_a.bulkhead_scope",
        "replica",
        r#""replica" has no effect: bulkhead_scope is how the bulkhead counts, and svc_a.max_in_flight is unbounded (no bulkhead); set svc_a.max_in_flight, or leave bulkhead_scope at its default ("service")"#,
    ),
    (
        "",
        "client.backoff_cap_s",
        "0.5",
        r#"0.5 has no effect: backoff_cap_s is the cap of the full-jitter backoff, and client.backoff is "fixed"; set client.backoff = "full_jitter", or leave backoff_cap_s at its default (1.0)"#,
    ),
    (
        "client.rate_per_s=0 client.closed.users=100 client.closed.think.mean_s=0.2",
        "client.closed.think.sigma",
        "0.5",
        r#"0.5 has no effect: closed.think.sigma is the lognormal's shape, and client.closed.think.dist is "constant"; set client.closed.think.dist = "lognormal", or leave closed.think.sigma at its default (1.0)"#,
    ),
    (
        "client.rate_per_s=0 client.closed.users=100 client.closed.think.mean_s=0.2",
        "client.closed.think.slow_s",
        "1",
        "1.0 has no effect: closed.think.slow_s is the slow value of the mixture, and client.closed.think.slow_p is 0 (no request takes the slow value); set client.closed.think.slow_p > 0, or leave closed.think.slow_s at its default (0.0)",
    ),
    (
        "",
        "client.sinusoid.period_s",
        "4",
        "4.0 has no effect: sinusoid.period_s is the period of the diurnal load, and client.sinusoid.amplitude is 0 (no sinusoid); set client.sinusoid.amplitude > 0, or leave sinusoid.period_s at its default (0.0)",
    ),
    (
        "",
        "client.tenant_zipf_s",
        "2",
        "2.0 has no effect: tenant_zipf_s is the shape of the tenants' shares, and client.tenants is 0 (one key); set client.tenants > 1, or leave tenant_zipf_s at its default (1.0)",
    ),
    (
        "",
        "svc_b.service.slow_s",
        "0.5",
        r#"0.5 has no effect: service.slow_s is the slow value of the mixture, and svc_b.service.slow_p is 0 (no request takes the slow value); set svc_b.service.slow_p > 0, or leave service.slow_s at its default (0.0)"#,
    ),
    (
        "",
        "svc_b.latency.slow_s",
        "0.05",
        r#"0.05 has no effect: latency.slow_s is the slow value of the mixture, and svc_b.latency.slow_p is 0 (no request takes the slow value); set svc_b.latency.slow_p > 0, or leave latency.slow_s at its default (0.0)"#,
    ),
    (
        "svc_b.queue_cap=16",
        "svc_b.retry_after_s",
        "0.2",
        r#"0.2 has no effect: retry_after_s is the Retry-After of the tier's rejections, and no caller of svc_b retries with honor_retry_after = true; set honor_retry_after = true (and max_retries >= 1) on a call to svc_b, or leave retry_after_s at its default (0.0)"#,
    ),
    (
        "",
        "svc_b.reject_latency_s",
        "0.01",
        r#"0.01 has no effect: reject_latency_s is how long the tier takes to reject a request, and svc_b rejects nothing (its queue is unbounded, with no shed_queue, no rate limit); give svc_b a queue_cap, a shed_queue or a rate_limit_per_s > 0, or leave reject_latency_s at its default (0.0005)"#,
    ),
    (
        "svc_b.codel=true",
        "svc_b.reject_latency_s",
        "0.01",
        r#"0.01 has no effect: reject_latency_s is how long the tier takes to reject a request, and svc_b rejects nothing (its queue is unbounded, with no shed_queue, no rate limit); give svc_b a queue_cap, a shed_queue or a rate_limit_per_s > 0, or leave reject_latency_s at its default (0.0005)"#,
    ),
    (
        "",
        "svc_b.reject_as",
        "error",
        r#""error" has no effect: reject_as is how the tier answers the requests it rejects, and svc_b rejects nothing (its queue is unbounded, with no shed_queue, no rate limit, no CoDel); give svc_b a queue_cap, a shed_queue, a rate_limit_per_s > 0 or codel = true, or leave reject_as at its default ("overload")"#,
    ),
    (
        "",
        "svc_b.rate_limit_burst",
        "5",
        r#"5.0 has no effect: rate_limit_burst is the size of a token or leaky bucket, and svc_b.rate_limit_per_s is 0 (no rate limit); set svc_b.rate_limit_per_s > 0, or leave rate_limit_burst at its default (1.0)"#,
    ),
    (
        "",
        "svc_a.hedge_budget_percent",
        "5",
        r#"5.0 has no effect: hedge_budget_percent is the hedging budget, and svc_a does not hedge (hedge_delay_s and hedge_quantile are 0); set svc_a.hedge_delay_s > 0 or svc_a.hedge_quantile > 0, or leave hedge_budget_percent at its default (10.0)"#,
    ),
    (
        "svc_a.attempt_timeouts_s=[0.2,0.5] svc_a.max_retries=1",
        "svc_a.hedge_delay_s",
        "0.7",
        r#"0.7 has no effect: hedge_delay_s is the delay before a hedged copy, and every attempt of svc_a times out within 0.5 s, before a copy would be sent; set svc_a.hedge_delay_s below 0.5 or svc_a.hedge_quantile > 0, or leave hedge_delay_s at its default (0.0)"#,
    ),
    (
        "",
        "svc_a.outlier_consecutive",
        "3",
        r#"3 has no effect: outlier_consecutive is a setting of outlier ejection, and svc_a.outlier_ejection is off; set svc_a.outlier_ejection = true, or leave outlier_consecutive at its default (5)"#,
    ),
    (
        "",
        "svc_a.outlier_base_ejection_s",
        "10",
        r#"10.0 has no effect: outlier_base_ejection_s is a setting of outlier ejection, and svc_a.outlier_ejection is off; set svc_a.outlier_ejection = true, or leave outlier_base_ejection_s at its default (30.0)"#,
    ),
    (
        "",
        "svc_a.outlier_max_ejection_percent",
        "25",
        r#"25.0 has no effect: outlier_max_ejection_percent is a setting of outlier ejection, and svc_a.outlier_ejection is off; set svc_a.outlier_ejection = true, or leave outlier_max_ejection_percent at its default (10.0)"#,
    ),
    (
        "",
        "svc_a.outlier_interval_s",
        "1",
        r#"1.0 has no effect: outlier_interval_s is a setting of outlier ejection, and svc_a.outlier_ejection is off; set svc_a.outlier_ejection = true, or leave outlier_interval_s at its default (10.0)"#,
    ),
    (
        "",
        "svc_a.outlier_max_ejection_s",
        "60",
        r#"60.0 has no effect: outlier_max_ejection_s is a setting of outlier ejection, and svc_a.outlier_ejection is off; set svc_a.outlier_ejection = true, or leave outlier_max_ejection_s at its default (unset)"#,
    ),
    (
        "",
        "svc_a.outlier_panic_threshold_percent",
        "30",
        r#"30.0 has no effect: outlier_panic_threshold_percent is a setting of outlier ejection, and svc_a.outlier_ejection is off; set svc_a.outlier_ejection = true, or leave outlier_panic_threshold_percent at its default (50.0)"#,
    ),
    (
        "svc_b.replicas=4",
        "svc_a.outlier_ejection",
        "true",
        r#"true has no effect: outlier_ejection is the ejection of a replica, and one of svc_b's 4 replicas is 25% of them, more than svc_a.outlier_max_ejection_percent = 10, so none can be ejected (Envoy's rule); set svc_a.outlier_max_ejection_percent >= 25 (one replica: Envoy's always_eject_one_host), or leave outlier_ejection at its default (false)"#,
    ),
    (
        "svc_b.replicas=3 svc_a.outlier_ejection=true svc_a.outlier_max_ejection_percent=34",
        "svc_a.outlier_panic_threshold_percent",
        "60",
        r#"60.0 has no effect: outlier_panic_threshold_percent is the balancer's panic threshold, and at most 1 of svc_b's 3 replicas can be ejected at once (svc_a.outlier_max_ejection_percent = 34), so the share not ejected is 100%, 66.67%, each below 60% exactly where it is below the default 50%; choose a threshold some of those shares are below and not below 50, or raise svc_a.outlier_max_ejection_percent, or leave outlier_panic_threshold_percent at its default (50.0)"#,
    ),
    (
        "",
        "svc_a.balancer",
        "p2c",
        r#""p2c" has no effect: balancer is a choice between the called tier's replicas, and svc_a calls svc_b, which has one replica; set svc_b.replicas > 1, or leave balancer at its default ("round_robin")"#,
    ),
    (
        "",
        "svc_a.retry_other_replica",
        "false",
        r#"false has no effect: retry_other_replica is a choice between the called tier's replicas, and svc_a calls svc_b, which has one replica; set svc_b.replicas > 1, or leave retry_other_replica at its default (true)"#,
    ),
    (
        "",
        "svc_a.outlier_ejection",
        "true",
        r#"true has no effect: outlier_ejection is a choice between the called tier's replicas, and svc_a calls svc_b, which has one replica; set svc_b.replicas > 1, or leave outlier_ejection at its default (false)"#,
    ),
    (
        "",
        "client.closed.think.dist",
        "exponential",
        r#""exponential" has no effect: closed.think.dist is a setting of the closed-loop users' think time, and client.closed.users is 0 (open arrivals); set client.closed.users > 0, or leave closed.think.dist at its default ("constant")"#,
    ),
    (
        "",
        "client.closed.think.mean_s",
        "1",
        r#"1.0 has no effect: closed.think.mean_s is a setting of the closed-loop users' think time, and client.closed.users is 0 (open arrivals); set client.closed.users > 0, or leave closed.think.mean_s at its default (0.0)"#,
    ),
    (
        "",
        "client.closed.think.sigma",
        "0.5",
        r#"0.5 has no effect: closed.think.sigma is a setting of the closed-loop users' think time, and client.closed.users is 0 (open arrivals); set client.closed.users > 0, or leave closed.think.sigma at its default (1.0)"#,
    ),
    (
        "",
        "client.closed.think.slow_p",
        "0.1",
        r#"0.1 has no effect: closed.think.slow_p is a setting of the closed-loop users' think time, and client.closed.users is 0 (open arrivals); set client.closed.users > 0, or leave closed.think.slow_p at its default (0.0)"#,
    ),
    (
        "",
        "client.closed.think.slow_s",
        "1",
        r#"1.0 has no effect: closed.think.slow_s is a setting of the closed-loop users' think time, and client.closed.users is 0 (open arrivals); set client.closed.users > 0, or leave closed.think.slow_s at its default (0.0)"#,
    ),
    (
        "client.closed.users=100 client.closed.think.mean_s=1",
        "client.rate_per_s",
        "300",
        "300.0 has no effect: rate_per_s is a setting of the open arrivals, and client.closed.users is 100 (closed-loop users send at their own pace, users / (think + response)); set client.closed.users = 0, or leave rate_per_s at its default (0.0)",
    ),
];

fn refusals(context: &str, path: &str, value: &str) -> Vec<String> {
    let mut sets: Vec<(&str, &str)> = (context.split_whitespace())
        .map(|kv| kv.split_once('=').expect("path=value"))
        .collect();
    sets.push((path, value));
    let mut s = common::load("ch37");
    common::set(&mut s, &sets);
    match sim_core::validate(&s) {
        Ok(()) => Vec::new(),
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn each_parameter_is_refused_where_it_cannot_act_with_the_reason() {
    let mut wrong = Vec::new();
    for (context, path, value, message) in REFUSED {
        let got = refusals(context, path, value);
        let want = vec![format!("{path}: {message}")];
        if got != want {
            wrong.push(format!("{path} = {value} with `{context}`: {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// At its default a parameter is accepted where it cannot act: the run is
/// the same. The refused values of the table, put back to the default the
/// message names, validate again.
#[test]
fn each_parameter_at_its_default_is_accepted_where_it_cannot_act() {
    for (context, path, _, message) in REFUSED {
        let default = (message.rsplit_once("at its default ("))
            .and_then(|(_, d)| d.strip_suffix(')'))
            .expect("the message names the default");
        // A list left out when it holds its default; an unset number
        // cannot be written back (`set` takes numbers).
        let default = match default {
            "unset" if path.ends_with("outlier_max_ejection_s") => continue,
            "unset" if path.ends_with("attempt_timeouts_s") => "[]",
            "unset" => "[\"timeout\", \"overload\", \"error\", \"expired\", \"refused\"]",
            _ => default,
        };
        assert_eq!(
            refusals(context, path, default),
            Vec::<String>::new(),
            "{path} = {default}"
        );
    }
}

/// No think time's parameter: refused unless 0 with open arrivals too,
/// as with closed-loop users.
#[test]
fn a_think_time_s_load_term_is_refused_whatever_the_arrivals() {
    let why = "client.closed.think.per_inflight_s: a think time does not depend on the requests in service; the term belongs to a tier's service (<tier>.service.per_inflight_s)";
    for context in [
        "",
        "client.rate_per_s=0 client.closed.users=100 client.closed.think.mean_s=1",
    ] {
        let path = "client.closed.think.per_inflight_s";
        assert_eq!(refusals(context, path, "-5"), [why], "with `{context}`");
        assert_eq!(refusals(context, path, "0"), Vec::<String>::new());
    }
}

/// A scenario file may list every default: ch37-classes.toml does, with
/// the mechanisms of those keys off.
#[test]
fn a_file_listing_the_defaults_is_accepted() {
    common::valid(&common::load("ch37-classes.toml"));
}

/// Every key a rule names is a catalogue key of its scope, and shows its
/// condition in docs/params.md.
#[test]
fn every_rule_names_a_catalogued_key() {
    for (scope, key) in params::inert_keys() {
        assert!(
            PARAMS.iter().any(|p| p.scope == scope && p.key == key),
            "{scope:?} {key}: not in the catalogue"
        );
        assert!(!params::acts_when(scope, key).is_empty());
    }
}

/// Overrides that turn off a mechanism of the base file (three-hop.toml's
/// slow mixture at c) leave its other keys idle as the file wrote them:
/// accepted, as `sweep one --set` does. An override that writes one of
/// them is refused, and a base whose own key cannot act is refused too.
#[test]
fn an_idle_key_inherited_from_the_base_is_refused_only_where_written() {
    let apply = |base: sim_core::Scenario, sets: &[(&str, &str)]| -> Vec<String> {
        match sim_core::apply_validated(base, &common::overrides(sets)) {
            Ok(_) => Vec::new(),
            Err(e) => e.iter().map(ToString::to_string).collect(),
        }
    };
    let three_hop = common::load("three-hop.toml");
    let c = three_hop.tiers.iter().find(|t| t.name == "c").unwrap();
    assert_eq!((c.service.slow_p, c.service.slow_s), (0.1, 1.5));
    assert_eq!(
        apply(three_hop.clone(), &[("c.service.slow_p", "0")]),
        Vec::<String>::new()
    );
    let refused = "c.service.slow_s: 2.0 has no effect: service.slow_s is the slow value of the mixture, and c.service.slow_p is 0 (no request takes the slow value); set c.service.slow_p > 0, or leave service.slow_s at its default (0.0)";
    assert_eq!(
        apply(
            three_hop.clone(),
            &[("c.service.slow_p", "0"), ("c.service.slow_s", "2")]
        ),
        [refused]
    );
    let mut idle_base = three_hop;
    common::set(
        &mut idle_base,
        &[("c.service.slow_p", "0"), ("c.service.slow_s", "2")],
    );
    assert_eq!(apply(idle_base, &[]), [refused]);
}

/// A preset writes its keys as the overrides it stands for: a key it sets
/// where it cannot act is refused when the preset is applied, as the same
/// key given by hand is, and not when another preset is.
#[test]
fn a_preset_setting_a_key_where_it_cannot_act_is_refused_where_applied() {
    let mut base = sim_core::load_base("ch37").unwrap();
    base.presets
        .get_mut("naive")
        .unwrap()
        .insert("svc_a.breaker_window".into(), toml::Value::Integer(37));
    let apply = |preset: &str| -> Vec<String> {
        let sets = [("strategy".to_string(), toml::Value::String(preset.into()))];
        match sim_core::apply_validated(base.clone(), &sets) {
            Ok(_) => Vec::new(),
            Err(e) => e.iter().map(ToString::to_string).collect(),
        }
    };
    assert_eq!(
        apply("naive"),
        [
            "svc_a.breaker_window: 37 has no effect: breaker_window is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_window at its default (20)"
        ]
    );
    assert_eq!(apply("protected"), Vec::<String>::new());
}

/// A trigger window that starts at or after the horizon holds no instant
/// of the run, whatever its kind or length: refused at its start with the
/// horizon; one that starts before the horizon and runs past it acts.
#[test]
fn a_window_starting_at_or_after_the_horizon_is_refused() {
    let message = |path: &str, start: &str| {
        format!(
            "{path}: {start} has no effect: the window starts at or after the horizon (70 s), so no instant of the run falls inside it; start it before horizon_s or raise horizon_s"
        )
    };
    for (context, path, value, shown) in [
        ("", "svc_b.slow.start_s", "70", "70.0"),
        ("", "svc_b.slow.start_s", "1e300", "1e300"),
        (
            "svc_a.errors.duration_s=5 svc_a.errors.p=0.5",
            "svc_a.errors.start_s",
            "100",
            "100.0",
        ),
        (
            "svc_b.crash.duration_s=5",
            "svc_b.crash.start_s",
            "80",
            "80.0",
        ),
        (
            "client.spike.duration_s=5 client.spike.factor=2",
            "client.spike.start_s",
            "70",
            "70.0",
        ),
    ] {
        assert_eq!(
            refusals(context, path, value),
            [message(path, shown)],
            "{path} = {value} with `{context}`"
        );
    }
    assert_eq!(
        refusals("", "svc_b.slow.start_s", "69.9"),
        Vec::<String>::new()
    );
}

/// A slow window's or load spike's factor multiplies nothing on a window
/// of length 0 (such a window only marks where recovery is measured
/// from): refused with its path, whether the window is a tier's or the
/// client's, the first or a later one; a factor of 1 is accepted.
#[test]
fn a_factor_on_a_window_of_length_0_is_refused() {
    let message = |path: &str, shown: &str| {
        format!(
            "{path}.factor: {shown} has no effect: the window's length is 0 ({path}.duration_s), so no instant falls inside it; give {path}.duration_s > 0, or leave factor at its default (1.0)"
        )
    };
    assert_eq!(
        refusals("", "client.spike.factor", "3"),
        [message("client.spike", "3.0")]
    );
    assert_eq!(
        refusals("svc_b.slow.duration_s=0", "svc_b.slow.factor", "5"),
        [message("svc_b.slow", "5.0")]
    );
    assert_eq!(
        refusals(
            "svc_b.slow.1.start_s=40 svc_b.slow.1.duration_s=0",
            "svc_b.slow.1.factor",
            "0.5"
        ),
        [message("svc_b.slow.1", "0.5")]
    );
    assert_eq!(
        refusals("svc_b.slow.duration_s=0", "svc_b.slow.factor", "1"),
        Vec::<String>::new()
    );
    assert_eq!(
        refusals("", "client.spike.start_s", "12"),
        Vec::<String>::new()
    );
}

/// With `retry_on` empty no failed attempt is retried, so the number of
/// retries cannot act: refused at `max_retries` with the reason, and
/// `retry_on = []` beside no retries is refused as a setting of retries.
#[test]
fn retries_with_nothing_to_retry_are_refused() {
    assert_eq!(
        refusals("svc_a.retry_on=[]", "svc_a.max_retries", "3"),
        [
            "svc_a.max_retries: 3 has no effect: max_retries is the number of retries, and svc_a.retry_on is empty (no failed attempt is retried); name the classes to retry in svc_a.retry_on, or leave max_retries at its default (0)"
        ]
    );
    assert_eq!(
        refusals("svc_a.max_retries=0", "svc_a.retry_on", "[]"),
        [
            "svc_a.retry_on: [] has no effect: retry_on is a setting of the caller's retries, and svc_a.max_retries is 0 (no retries); set svc_a.max_retries >= 1, or leave retry_on at its default (unset)"
        ]
    );
}
