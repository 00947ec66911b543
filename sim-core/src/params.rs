//! Dotted parameter paths (`svc_b.queue_cap`, `client.rate_per_s`,
//! `strategy`, ...): the one vocabulary shared by `--set`, grid files and the
//! output columns.
//!
//! [`PARAMS`] is the catalogue (it generates `docs/params.md`). A path names
//! a place in the serialized scenario (`svc_a.max_retries` is
//! `tiers[1].call.max_retries`): [`set`] converts and range-checks the value
//! by its catalogue line, writes it there and deserializes the scenario
//! back, so the serde shape of [`Scenario`] is the only setter. Tests check
//! that the catalogue and the serde fields name the same keys, both ways,
//! and that every path writes exactly its own key.

use crate::scenario::{
    Arrivals, BackoffKind, Balancer, BreakerScope, BulkheadScope, CancelMode, CrashMode, Dispatch,
    Dist, LimitAlgorithm, OutcomeClass, QueueOrder, RejectAs, Scenario,
};
use crate::validate;
/// Where each parameter can act (the rules are in `validate`).
pub use crate::validate::{acts_when, inert_keys};
use strum::VariantNames;
use toml::{Table, Value};

/// The value type of a parameter, which is also its output column type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Float,
    Int,
    Bool,
    /// One of a fixed set of names (an enum's serde names).
    Choice(&'static [&'static str]),
    /// Free text or a name defined by the scenario (preset names).
    Text,
    /// A non-negative integer or `"unbounded"` (a null in columns).
    Cap,
    /// A list of 0-based indexes (`[2]`, `[0, 3]`), a string in columns.
    Indexes,
    /// A list of numbers (`[0.6, 0.15]`), a string in columns.
    Floats,
    /// A list of distinct names from a fixed set (`["timeout", "overload"]`),
    /// a string in columns.
    Choices(&'static [&'static str]),
}

impl Kind {
    pub fn describe(self) -> String {
        match self {
            Kind::Float => "number".to_string(),
            Kind::Int => "integer".to_string(),
            Kind::Bool => "true / false".to_string(),
            Kind::Choice(names) => names.join(" / "),
            Kind::Text => "string".to_string(),
            Kind::Cap => "integer or \"unbounded\"".to_string(),
            Kind::Indexes => "list of integers".to_string(),
            Kind::Floats => "list of numbers".to_string(),
            Kind::Choices(names) => format!("list of {}", names.join(" / ")),
        }
    }
}

/// Which part of the scenario a catalogued parameter belongs to; each
/// scope is one serde struct (or map), and its keys are that struct's
/// fields (nested tables joined with `.`, e.g. `service.mean_s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Top level (`Scenario`, `recovery.*`): the path is the key.
    Top,
    /// Under `client.` (`Client`).
    Client,
    /// A `Call` field under `client.`, under every tier that calls the next
    /// one, and under `<tier>.fanout.<branch>.` for every fan-out branch.
    Call,
    /// Under `<tier>.fanout.<branch>.` only (`Branch`).
    Branch,
    /// Under `client.classes.<class>.` for every request class.
    Class,
    /// `<tier>.<key>.<class>` for every tier and request class (a map).
    TierClass,
    /// Under every tier (`Tier`, `service.*`, `latency.*`).
    Tier,
    /// Under `<tier>.slow.` (first window) or `<tier>.slow.<n>.` (window n).
    Slow,
    /// Under `<tier>.errors.` (first window) or `<tier>.errors.<n>.`.
    Errors,
    /// Under `<tier>.crash.` (first window) or `<tier>.crash.<n>.`.
    Crash,
    /// Under `client.spike.` (first spike) or `client.spike.<n>.` (spike n).
    Spike,
    /// Under `client.profile.` (first point) or `client.profile.<n>.` (point n).
    Profile,
    /// Under `client.` in a scenario file only: read when the file is
    /// loaded, so refused as an override (see [`read_when_loaded`]).
    ClientFile,
}

pub struct Param {
    pub scope: Scope,
    /// The serde key within its scope (`.` for nested tables).
    pub key: &'static str,
    pub kind: Kind,
    pub doc: &'static str,
    /// Largest value of an integer (its field's type).
    pub max: u64,
    /// The numbers validation accepts (for a list, each entry); every
    /// numeric line has them, and `tests/effects.rs` checks them against
    /// validation. Rules between fields (`horizon_s >= client.duration_s`)
    /// are in the doc.
    pub bounds: Option<Bounds>,
}

/// An interval of accepted numbers, as `sweep params` shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub min: f64,
    /// `min` itself is refused.
    pub min_open: bool,
    pub max: f64,
    /// `max` itself is refused.
    pub max_open: bool,
}

impl Bounds {
    pub const NON_NEGATIVE: Bounds = Bounds::at_least(0.0);
    pub const POSITIVE: Bounds = Bounds::at_least(0.0).above_min();
    pub const SHARE: Bounds = Bounds::between(0.0, 1.0);
    pub const PERCENT: Bounds = Bounds::between(0.0, 100.0);

    pub const fn at_least(min: f64) -> Bounds {
        Bounds::between(min, f64::INFINITY)
    }

    pub const fn between(min: f64, max: f64) -> Bounds {
        Bounds {
            min,
            min_open: false,
            max,
            max_open: false,
        }
    }

    pub const fn up_to(self, max: f64) -> Bounds {
        Bounds { max, ..self }
    }

    pub const fn above_min(self) -> Bounds {
        Bounds {
            min_open: true,
            ..self
        }
    }

    pub const fn below_max(self) -> Bounds {
        Bounds {
            max_open: true,
            ..self
        }
    }

    pub fn contains(&self, x: f64) -> bool {
        let above = if self.min_open {
            x > self.min
        } else {
            x >= self.min
        };
        let below = if self.max_open {
            x < self.max
        } else {
            x <= self.max
        };
        above && below
    }

    /// `> 0`, `>= 1`, `0 to 1`, `(0, 1]`, `0 only`.
    pub fn describe(&self) -> String {
        let (min, max) = (self.min, self.max);
        if max.is_infinite() {
            return format!("{} {min}", if self.min_open { ">" } else { ">=" });
        }
        match (self.min_open, self.max_open) {
            (false, false) if min == max => format!("{min} only"),
            (false, false) => format!("{min} to {max}"),
            (lo, hi) => format!(
                "{}{min}, {max}{}",
                if lo { "(" } else { "[" },
                if hi { ")" } else { "]" }
            ),
        }
    }
}

impl Param {
    /// The values it accepts: for numbers, its [`Bounds`] (validation
    /// checks them with the rest of the scenario).
    pub fn range(&self) -> String {
        let bounds = self.bounds.map(|b| b.describe());
        match self.kind {
            Kind::Float | Kind::Int => bounds.unwrap_or_default(),
            Kind::Cap => format!("{}, \"unbounded\"", bounds.unwrap_or_default()),
            Kind::Bool => "true, false".to_string(),
            Kind::Choice(_) => "a name of the type".to_string(),
            Kind::Text => "a name".to_string(),
            Kind::Indexes => format!("[i, ...], each 0 to {}", u32::MAX),
            Kind::Floats => format!("[x, ...], each {}", bounds.unwrap_or_default()),
            Kind::Choices(_) => "[name, ...], names of the type".to_string(),
        }
    }
}

const fn p(scope: Scope, key: &'static str, kind: Kind, doc: &'static str) -> Param {
    Param {
        scope,
        key,
        kind,
        doc,
        max: u32::MAX as u64,
        bounds: None,
    }
}

impl Param {
    const fn bounds(self, bounds: Bounds) -> Param {
        Param {
            bounds: Some(bounds),
            ..self
        }
    }
}

/// Every settable parameter. Defaults are those of the built-in scenario
/// (`sweep scenario show ch37`).
pub const PARAMS: &[Param] = &[
    p(
        Scope::Top,
        "strategy",
        Kind::Text,
        "Applies the scenario's preset of that name (ch37: naive, deadline, deadline_budget, protected) before every other override.",
    ),
    p(
        Scope::Top,
        "dispatch",
        Kind::Choice(Dispatch::VARIANTS),
        "fifo: strict first-come-first-served. reply_first: a finishing non-leaf server replies up the chain before it pops its queue, and an arrival takes any free slot (MODEL.md 2).",
    ),
    p(
        Scope::Top,
        "horizon_s",
        Kind::Float,
        "Simulated time at which the run stops; users unfinished by then count as failed. Must be >= client.duration_s.",
    ).bounds(Bounds::POSITIVE.up_to(validate::MAX_HORIZON_S)),
    p(
        Scope::Top,
        "series_bin_s",
        Kind::Float,
        "Width of the bins of the tiers' sub-second series (series <tier>_arrivals_by_bin, _retries_by_bin: per second, a list of its bins' counts), to see what per-second counts blur (retries every 800 ms); it must divide 1 s, at least 0.01 s. 1: per second only (the per-second series and recovery are per second either way).",
    ).bounds(Bounds::at_least(validate::MIN_SERIES_BIN_S).up_to(1.0)),
    Param {
        max: i64::MAX as u64,
        ..p(
            Scope::Top,
            "max_events",
            Kind::Int,
            "Event budget of one run: a run whose `events` exceed it fails with an error. An attempt timer cancelled because its attempt was answered counts when it is cancelled (in `events`, as the event it would have been), so the budget is reached a little earlier than the events are due. Default: derived from the load and the retry bounds.",
        ).bounds(Bounds::at_least(1.0))
    },
    p(
        Scope::Top,
        "recovery.window_s",
        Kind::Float,
        "Recovery (R2): length of the window of arrivals that must succeed at >= recovery.threshold.",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Top,
        "recovery.threshold",
        Kind::Float,
        "Recovery (R2): success rate that counts as recovered, in (0, 1].",
    ).bounds(Bounds::SHARE.above_min()),
    p(Scope::Top, "name", Kind::Text, "Label of the scenario."),
    p(
        Scope::Client,
        "rate_per_s",
        Kind::Float,
        "Mean rate of the Poisson arrivals of user requests (per second); > 0 unless the load comes from client.profile or client.closed.users (then 0).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Client,
        "arrivals",
        Kind::Choice(Arrivals::VARIANTS),
        "Spacing of the open arrivals at rate_per_s (and its load spikes). poisson (the default): exponential gaps. even: one arrival in the middle of every 1 / rate gap, so exactly rate x duration users, as a load generator sending at a fixed rate (to repeat an experiment that sent a known number of requests); refused with a profile, a sinusoid or closed-loop users.",
    ),
    p(
        Scope::Client,
        "duration_s",
        Kind::Float,
        "Users arrive during [0, duration_s).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Client,
        "deadline_s",
        Kind::Float,
        "A user's patience: the total deadline of a user request across all the client's attempts, from its arrival (0: none, the default). The client's attempts end by it (and propagate it with client.propagate_deadline), no attempt starts after it (stop: deadline / no_time_left), and client.deadline_margin_s, client.budget_admission and client.budget_share act on it; they are refused at the client without it.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Client,
        "closed.users",
        Kind::Int,
        "Closed-loop users instead of open arrivals (0: open, the default): each user starts by thinking, then sends one request, waits for its outcome (with the client's retries), thinks again and sends the next, until duration_s; the load is users / (think + response), so a slow system slows its own users. client.rate_per_s and a sinusoid cannot act with it (refused where written, unless a grid's other points use them: a closed.users axis from 0), profiles and load spikes are refused with it. At most 1000000. Metrics: closed_cycles, closed_response_mean_s, closed_think_mean_s, closed_throughput_per_s (= users / (response + think) exactly).",
    ).bounds(Bounds::between(0.0, validate::MAX_CLOSED_USERS as f64)),
    p(
        Scope::Client,
        "closed.think.dist",
        Kind::Choice(Dist::VARIANTS),
        "Closed-loop users: distribution of the think time (as service times: closed.think.sigma for a lognormal, closed.think.slow_p / closed.think.slow_s for a slow value).",
    ),
    p(
        Scope::Client,
        "closed.think.mean_s",
        Kind::Float,
        "Closed-loop users: mean think time between an outcome and the next request; must be > 0.",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Client,
        "closed.think.sigma",
        Kind::Float,
        "Closed-loop users: lognormal shape of the think time.",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Client,
        "closed.think.slow_p",
        Kind::Float,
        "Closed-loop users: probability of the long think time closed.think.slow_s.",
    ).bounds(Bounds::SHARE),
    p(
        Scope::Client,
        "closed.think.slow_s",
        Kind::Float,
        "Closed-loop users: the long think time.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Client,
        "closed.think.per_inflight_s",
        Kind::Float,
        "Not for think times (a service-time parameter: <tier>.service.per_inflight_s); refused unless 0.",
    ).bounds(Bounds::between(0.0, 0.0)),
    p(
        Scope::Profile,
        "at_s",
        Kind::Float,
        "Load profile (`[[client.profile]]` points with at_s and rate_per_s, times non-decreasing; two at the same time make a step): the open arrival rate is linear between points, the first point's before it and the last's after; arrivals are an exact non-homogeneous Poisson process (by thinning), load spikes multiply it, and client.rate_per_s must be 0. `client.profile.<key>` is the first point; `client.profile.<n>.<key>` point n, created when n is the next index.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Profile,
        "rate_per_s",
        Kind::Float,
        "Load profile: the arrival rate at this point (per second, >= 0).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::ClientFile,
        "profile_csv",
        Kind::Text,
        "Load profile from a CSV file of `time_s,rate_per_s` rows (a header line, blank lines and `#` comments allowed), its path relative to the scenario file; read into client.profile when the scenario file is loaded, so it can be given in a file but not as an override.",
    ),
    p(
        Scope::Client,
        "sinusoid.amplitude",
        Kind::Float,
        "Diurnal load: the open arrival rate is rate_per_s x (1 + amplitude x sin(2 pi t / sinusoid.period_s)), amplitude in [0, 1] (0: off); load spikes multiply it. Not with a profile or closed-loop users.",
    ).bounds(Bounds::SHARE),
    p(
        Scope::Client,
        "sinusoid.period_s",
        Kind::Float,
        "Diurnal load: period of the sinusoid (seconds, > 0 when the amplitude is not 0).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Client,
        "queue.consumers",
        Kind::Int,
        "Backlog replay: a message queue between this group's producers and its consumers (0: none, the default; not for `client`, the online users). Every arrival of the group publishes a message (always accepted, up to queue.max_backlog waiting); this many consumers each take one waiting message at a time and deliver it through the group's call (each delivery is one of the group's user requests, with its retries and timeouts); a failed delivery puts the message back, delivered again queue.redeliver_after_s later. Open arrivals only. Metrics group_<g>_published, _consumed_ok, _redelivered, _dropped, _backlog_end, _in_flight_end, _backlog_peak, _drain_s (the first whole second from the trigger's end with no message waiting); series group_<g>_backlog.",
    ).bounds(Bounds::between(0.0, validate::MAX_CONSUMERS as f64)),
    p(
        Scope::Client,
        "queue.drain_rate_per_s",
        Kind::Float,
        "Backlog replay: deliveries start at least 1 / this apart, so a backlog drains at this rate (0, the default: at full speed, as fast as the consumers take messages).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Client,
        "queue.redeliver_after_s",
        Kind::Float,
        "Backlog replay: a message whose delivery failed waits this long before it can be delivered again (1 s by default; > 0).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Client,
        "queue.max_backlog",
        Kind::Cap,
        "Backlog replay: most messages waiting (being delivered excluded); a message published when this many wait is dropped (group_<g>_dropped). Unbounded by default.",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Client,
        "calls",
        Kind::Text,
        "The tier this group calls, by name (the first tier by default): a group calling a tier further down shares it with the tier above, past the tiers (and their protections) in between, as a batch job or a cron that reads the database directly. Every tier must still be called by a group or a tier.",
    ),
    p(
        Scope::Client,
        "tenants",
        Kind::Int,
        "Tenant keys: each user carries one of this many tenants, drawn from a Zipf distribution (tenant k, from 1, with probability proportional to 1 / k^tenant_zipf_s; its own random stream, so no other draw moves); a user is one request: a closed-loop user's next request, or a message's redelivery, draws its key afresh. 0 (the default) or 1: one key for the whole group. At most 100000. For per-key rate limits (<tier>.rate_limit_key = tenant). Metrics: tenant_top_users, tenant_top_success_rate (the most frequent tenant, k = 1), tenant_rest_users, tenant_rest_success_rate (all the others); with several client groups, also each group's own (group_<g>_tenant_top_users, ...).",
    ).bounds(Bounds::between(0.0, validate::MAX_TENANTS as f64)),
    p(
        Scope::Client,
        "tenant_zipf_s",
        Kind::Float,
        "Zipf exponent of the tenants' shares (1: the default; 0: uniform; larger: one big tenant). Refused unless tenants > 1.",
    ).bounds(Bounds::between(0.0, 10.0)),
    p(
        Scope::Class,
        "share",
        Kind::Float,
        "Request classes are declared in the scenario (`[[client.classes]]` with `name` and `share`), in priority order: at every tier a freed slot takes the oldest request of the highest class waiting. Across client groups the classes rank in the order the groups are read (client first, then the others by name; a group that declares none is one class of its own at its place), and groups that share classes must list them in the same order. Each user is drawn into a class by the shares, relative weights (they need not sum to 1). Metrics: class_<class>_users, class_<class>_success_rate (a class several groups name is one class: all its users); with several client groups, also each group's own, group_<g>_class_<class>_users and group_<g>_class_<class>_success_rate.",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Call,
        "attempt_timeout_s",
        Kind::Float,
        "Timeout of one attempt to the next tier; capped at the caller's own deadline when it received one.",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Call,
        "attempt_timeouts_s",
        Kind::Floats,
        "Per-attempt timeouts: the timeouts of the first attempts in order (`[0.6, 0.15]`: 600 ms for the first attempt, 150 ms for the first retry); attempts beyond the list take attempt_timeout_s (empty, the default: all do). Budget admission reserves the timeout of the attempt it admits. At most max_retries + 1 entries, each > 0.",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Call,
        "max_retries",
        Kind::Int,
        "Attempts after the first (the client's default 2 gives 3 attempts in all).",
    ).bounds(Bounds::between(0.0, 100.0)),
    p(
        Scope::Call,
        "backoff",
        Kind::Choice(BackoffKind::VARIANTS),
        "fixed: wait backoff_base_s before each retry. full_jitter: before retry n wait uniform in [0, min(backoff_cap_s, backoff_base_s * 2^(n-1))].",
    ),
    p(
        Scope::Call,
        "backoff_base_s",
        Kind::Float,
        "The fixed wait, or the base of the full-jitter backoff.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "backoff_cap_s",
        Kind::Float,
        "Upper bound of the full-jitter backoff's exponential term.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "backoff_jitter",
        Kind::Float,
        "Jitter of each wait before a retry, in [0, 1]: the backoff (or an honoured Retry-After) times a uniform draw in [1 - j, 1 + j] (0.2: +-20%; 0: none, the default); on a full_jitter backoff it can pass backoff_cap_s by up to j.",
    ).bounds(Bounds::SHARE),
    p(
        Scope::Call,
        "retry_on",
        Kind::Choices(OutcomeClass::VARIANTS),
        "The classes of failed attempts this caller retries (default all): timeout, overload (429/503 and CoDel drops), error (500: a failed reply, a rejection answered as an error, a local fast failure), expired (dropped past its deadline), refused (the replica was down). Any other ends the job at once (stop: not_retryable, counted as giveup_not_retryable). Refused when the caller makes no retries.",
    ),
    p(
        Scope::Call,
        "failure_on",
        Kind::Choices(OutcomeClass::VARIANTS),
        "The classes of failed attempts the retry throttle and the circuit breaker count as failures (default all; gRFC A6 counts only retryable codes: set it to retry_on); the others are neither failures nor successes for them. Refused without a retry throttle or a breaker.",
    ),
    p(
        Scope::Call,
        "propagate_deadline",
        Kind::Bool,
        "Pass each attempt's end (now + timeout, capped at the caller's deadline) downstream as the callee's deadline. Refused toward a tier that reads no deadline: one that calls no tier, with drop_expired off and cancel_check_s 0.",
    ),
    p(
        Scope::Call,
        "retry_throttle",
        Kind::Bool,
        "gRFC A6 retry throttling: a token bucket per caller; failures take 1 token, successes add throttle_token_ratio; no retry, and no hedged copy (hedges_refused), while tokens <= max/2.",
    ),
    p(
        Scope::Call,
        "throttle_max_tokens",
        Kind::Float,
        "Retry throttle: bucket size (and start value).",
    ).bounds(Bounds::at_least(0.001)),
    p(
        Scope::Call,
        "throttle_token_ratio",
        Kind::Float,
        "Retry throttle: tokens added per success.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "deadline_margin_s",
        Kind::Float,
        "Deadline safety margin: each attempt ends by (deadline - margin), and that is what it propagates; when no time is left before it, the hop fails fast without calling (counted as margin_exhausted).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "budget_admission",
        Kind::Bool,
        "Send an attempt (or retry) only if its backoff plus one full attempt_timeout fit before (deadline - margin); otherwise stop with insufficient_deadline, distinct from the attempt limit.",
    ),
    p(
        Scope::Call,
        "retry_budget",
        Kind::Bool,
        "Envoy retry budget: a failed attempt is retried only while the caller's active retries are fewer than max(retry_budget_min_concurrency, retry_budget_percent % of its attempts in flight); as in Envoy, a retry is active from the decision to retry, through its backoff, until its attempt ends (refusals: retry_budget_exhausted).",
    ),
    p(
        Scope::Call,
        "retry_budget_percent",
        Kind::Float,
        "Retry budget: share of attempts in flight that may be retries, in percent (Envoy's default 20).",
    ).bounds(Bounds::PERCENT),
    p(
        Scope::Call,
        "retry_budget_min_concurrency",
        Kind::Int,
        "Retry budget: retries always allowed in flight, whatever the load (Envoy's default 3).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "adaptive_throttle",
        Kind::Bool,
        "Adaptive client throttling (SRE book, Handling Overload): reject an attempt locally with probability max(0, (requests - K x accepts) / (requests + 1)) over a sliding window, from the requests before it (as gRPC's implementation); accepts are answers other than overload (timeouts, full queues and expired drops are not accepts). Counted as rejected_locally.",
    ),
    p(
        Scope::Call,
        "adaptive_throttle_k",
        Kind::Float,
        "Adaptive throttling: K, the multiplier of accepts (2 is the usual default; larger throttles later).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Call,
        "honor_retry_after",
        Kind::Bool,
        "Before retrying a rejected attempt, wait at least the rejection's Retry-After (the backoff if longer); backoff_jitter then spreads that wait too, by up to its share either way.",
    ),
    p(
        Scope::Call,
        "adaptive_throttle_window_s",
        Kind::Float,
        "Adaptive throttling: the sliding window of requests and accepts (whole seconds).",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Call,
        "breaker",
        Kind::Bool,
        "Circuit breaker on this caller's calls: CLOSED -> OPEN when, with at least breaker_min_samples of the last breaker_window outcomes, the failure rate or the slow-call rate reaches its threshold; OPEN rejects locally and fast (breaker_rejected, apart from downstream failures) for breaker_open_s (+ uniform jitter); then HALF_OPEN lets breaker_half_open_probes calls through and, once min(breaker_min_samples, breaker_half_open_probes) of them have ended, re-opens if their failure rate or slow-call rate reaches its threshold, else closes (Resilience4j's rule).",
    ),
    p(
        Scope::Call,
        "breaker_window",
        Kind::Int,
        "Circuit breaker: outcomes in the (count-based) sliding window.",
    ).bounds(Bounds::between(1.0, 100_000.0)),
    p(
        Scope::Call,
        "breaker_window_s",
        Kind::Float,
        "Circuit breaker: a time-based sliding window instead, the outcomes of the last this many seconds (0: the count-based breaker_window).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "breaker_scope",
        Kind::Choice(BreakerScope::VARIANTS),
        "Circuit breaker: service (one breaker for this caller's calls, today's rule) or replica (one per replica of the called tier, each fed only by the answers of its replica, a timeout blaming the replica of the attempt's first copy; the balancer never picks a replica whose breaker is open, and the call is refused locally, breaker_rejected, only when all are open). Hedged copies go only to a replica whose breaker is not open, take no probe and feed no breaker. Refused with one replica (no choice to make).",
    ),
    p(
        Scope::Call,
        "max_in_flight",
        Kind::Cap,
        "Bulkhead for this downstream: at most this many of the caller's attempts in flight at once; one more fails fast locally (bulkhead_rejected) and goes to the retry decision. With fan-out, one pool per branch.",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Call,
        "bulkhead_scope",
        Kind::Choice(BulkheadScope::VARIANTS),
        "Bulkhead: service (max_in_flight counts this caller's attempts in flight to the tier, today's rule) or replica (max_in_flight per replica of the called tier, counting this caller's requests in flight to it, hedged copies included; the balancer never picks a full replica, and the call fails fast locally, bulkhead_rejected, only when every replica whose breaker lets it through is full; a hedge none can take is not sent, hedges_refused). Refused with one replica (no choice to make).",
    ),
    p(
        Scope::Call,
        "balancer",
        Kind::Choice(Balancer::VARIANTS),
        "Load balancing over the called tier's replicas, by this caller alone (its own requests in flight, cursor and draws, as a client library keeps them; callers never see each other's): round_robin (each in turn), random, least_outstanding (fewest of this caller's requests in flight; ties in turn), p2c (two distinct replicas drawn at random from the caller's own stream, the one with fewer in flight), pin_until_error (the same replica until an attempt to it fails, then the next; a hedged copy or a retry sent elsewhere, by retry_other_replica, leaves the pin). Ejected replicas are skipped, unless fewer than outlier_panic_threshold_percent of them are not ejected (then all may be chosen: Envoy's panic mode). Refused with one replica (no choice to make).",
    ),
    p(
        Scope::Call,
        "retry_other_replica",
        Kind::Bool,
        "A hedged copy goes to another replica than its attempt's first copy, and a retry to another than every copy of the attempt before it (as gRPC passes the balancer the replicas already tried), when another is available (default true).",
    ),
    p(
        Scope::Call,
        "outlier_ejection",
        Kind::Bool,
        "Outlier ejection at this caller (Envoy's consecutive failures rule): a replica whose attempts fail outlier_consecutive times in a row (timeouts, rejections, expired drops and errors; an ok resets the count) is ejected if the replicas ejected with it are at most outlier_max_ejection_percent of them; either way its count starts again. It then gets no request from this caller for outlier_base_ejection_s x its multiplier, at most outlier_max_ejection_s, and returns at the first outlier_interval_s tick (from t = 0) after that, its count at 0. The multiplier goes up by one at each ejection (while base x it is under max + base) and down by one at each tick the replica spends back after its first. Below outlier_panic_threshold_percent of the replicas not ejected, every replica may be chosen. Metrics <caller>_ejections, <caller>_ejected_s (replica-seconds). Off by default; no effect with one replica, or where one replica is more than outlier_max_ejection_percent of them (refused).",
    ),
    p(
        Scope::Call,
        "outlier_consecutive",
        Kind::Int,
        "Outlier ejection: failed attempts in a row that eject a replica (Envoy's consecutive_5xx, default 5).",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Call,
        "outlier_base_ejection_s",
        Kind::Float,
        "Outlier ejection: base ejection time, multiplied by the replica's ejection multiplier (Envoy's base_ejection_time, default 30 s).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "outlier_max_ejection_s",
        Kind::Float,
        "Outlier ejection: the longest ejection, and the cap of the multiplier's growth (Envoy's max_ejection_time; unset: 300 s, or outlier_base_ejection_s if longer); at least outlier_base_ejection_s.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "outlier_max_ejection_percent",
        Kind::Float,
        "Outlier ejection: a replica is ejected only if the replicas ejected, it included, are at most this percentage of them (Envoy's max_ejection_percent, default 10: with fewer than 10 replicas none is ejected, refused; Envoy's always_eject_one_host is this at 100 / replicas).",
    ).bounds(Bounds::PERCENT),
    p(
        Scope::Call,
        "outlier_interval_s",
        Kind::Float,
        "Outlier ejection: ejected replicas return at the first tick of this interval after their ejection time, and each tick a replica spends back after its first lowers its multiplier (Envoy's interval, default 10 s).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Call,
        "outlier_panic_threshold_percent",
        Kind::Float,
        "Outlier ejection: when fewer than this percentage of the replicas are not ejected, the balancer ignores ejection and chooses among them all (Envoy's healthy_panic_threshold, default 50; 0: only when every replica is ejected, as there is no other to choose).",
    ).bounds(Bounds::PERCENT),
    p(
        Scope::Branch,
        "required",
        Kind::Bool,
        "Fan-out: a required branch that fails fails the caller at once; an optional one only degrades its reply (<tier>_degraded). The caller replies when every branch has ended.",
    ),
    p(
        Scope::Call,
        "breaker_min_samples",
        Kind::Int,
        "Circuit breaker: outcomes needed before it may open (with the count-based window, at most breaker_window).",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Call,
        "breaker_failure_rate",
        Kind::Float,
        "Circuit breaker: failure rate that opens it (and that half-open probes must stay below, as their slow-call rate must stay below breaker_slow_call_rate); above 0, as in Resilience4j (at 0 it would open on success alone).",
    ).bounds(Bounds::SHARE.above_min()),
    p(
        Scope::Call,
        "breaker_slow_call_rate",
        Kind::Float,
        "Circuit breaker: share of slow calls that opens it (1: off unless every call is slow); above 0, as in Resilience4j.",
    ).bounds(Bounds::SHARE.above_min()),
    p(
        Scope::Call,
        "breaker_slow_call_s",
        Kind::Float,
        "Circuit breaker: a call slower than this is slow (Resilience4j: strictly longer).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "breaker_open_s",
        Kind::Float,
        "Circuit breaker: time spent OPEN before probing.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "breaker_open_jitter_s",
        Kind::Float,
        "Circuit breaker: uniform jitter added to each open time.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "breaker_half_open_probes",
        Kind::Int,
        "Circuit breaker: calls let through in HALF_OPEN.",
    ).bounds(Bounds::between(1.0, 100_000.0)),
    p(
        Scope::Call,
        "budget_share",
        Kind::Float,
        "Budget split: an attempt may use at most this share of the time left before the caller's deadline (1: every hop may use all that remains; 2/3 at the first of three hops and 1/2 at the second split the budget equally).",
    ).bounds(Bounds::SHARE.above_min()),
    p(
        Scope::Call,
        "hedge_delay_s",
        Kind::Float,
        "Hedged requests: when an attempt has no answer after this delay, send a second copy to the same tier; the first answer wins, a failure included (a copy that fails fast ends the attempt, which then retries or gives up: gRPC's rule with its default policy, where every status but OK is fatal; a policy listing non-fatal codes, on which gRPC waits for the other copy, is not modelled), and the other copy's work is wasted (0: no hedging). The R1 bound doubles.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Call,
        "hedge_budget_percent",
        Kind::Float,
        "Hedging budget: hedges at most this percentage of the calls sent so far (refused ones: hedges_refused).",
    ).bounds(Bounds::PERCENT),
    p(
        Scope::Call,
        "hedge_quantile",
        Kind::Float,
        "Hedge on a latency quantile instead of a fixed delay: the delay is this quantile (in (0, 1), e.g. 0.95) of the caller's last 100 successful attempt latencies; until 20 are known, hedge_delay_s applies (0: none). 0: off.",
    ).bounds(Bounds::SHARE.below_max()),
    p(
        Scope::Call,
        "cancel",
        Kind::Choice(CancelMode::VARIANTS),
        "Which requests this caller cancels when it stops waiting for them; a cancelled request is dropped before it starts (<tier>_cancelled) or its work stopped at once (<tier>_abandoned) instead of finishing for nobody. never (default). hedge_losers: the other copy of a hedged attempt once one has answered. always: also an attempt that timed out, and, when the caller is itself cancelled, the request it is waiting for, so cancellation travels down through every caller set to always (gRPC-style propagation).",
    ),
    p(
        Scope::Spike,
        "start_s",
        Kind::Float,
        "Start of a load spike: users arriving in [start_s, start_s + duration_s) come at factor times the rate. `client.spike.<key>` is the first spike; `client.spike.<n>.<key>` spike n.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Spike,
        "duration_s",
        Kind::Float,
        "Length of a load spike.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Spike,
        "factor",
        Kind::Float,
        "Arrival-rate multiplier inside the spike (2: twice the load). A spike of length 0 multiplies nothing: a factor other than 1 is refused there (in a grid, only where the spike has length 0 at every point).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Tier,
        "slots",
        Kind::Int,
        "Concurrent requests in service. A tier that calls another holds its slot until its final reply.",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Tier,
        "replicas",
        Kind::Int,
        "Identical instances of the tier (1 to 64, default 1), each with its own slots, queue and protections (queue cap, CoDel, limits...); each caller spreads its requests over them by its balancer. Metrics <tier>_r<k>_arrivals, _admitted, _completed_ok, _max_queue per replica (k from 0) when there are several; the tier's metrics are their sums (max_queue: the longest of its replicas', limit_lowest: the lowest).",
    ).bounds(Bounds::between(1.0, validate::MAX_REPLICAS as f64)),
    p(
        Scope::Tier,
        "queue_cap",
        Kind::Cap,
        "Longest queue; an arrival that finds all slots busy and the queue full is rejected (reply after reject_latency_s).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "drop_expired",
        Kind::Bool,
        "Answer a dequeued request whose deadline has passed with an error instead of serving it (also one leaving a leaky bucket: waiting there is queueing).",
    ),
    p(
        Scope::Tier,
        "reject_latency_s",
        Kind::Float,
        "Delay of the reply to a request the tier rejects on arrival (its queue full, shed by shed_queue, or over its rate limit).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "reject_as",
        Kind::Choice(RejectAs::VARIANTS),
        "How the tier answers the requests it rejects (full queue, rate limit, shedding, CoDel): overload (429/503, the default, with retry_after_s if set) or error (a 500: callers see a server error, with no Retry-After; refused with retry_after_s).",
    ),
    p(
        Scope::Tier,
        "error_latency_s",
        Kind::Float,
        "How long a request that fails fast in an error window (<tier>.errors) holds its slot before its error reply (default 1 ms); refused without an error window.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "latency.mean_s",
        Kind::Float,
        "Network latency of the hop into this tier, one way: requests, replies and rejections each take a draw (0: none). With latency the reply chain is no longer instantaneous, so `fifo` and `reply_first` coincide at that hop.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "latency.dist",
        Kind::Choice(Dist::VARIANTS),
        "Distribution of the latency (`constant`, `exponential`, `lognormal` with latency.sigma; latency.slow_p / latency.slow_s add a slow value).",
    ),
    p(
        Scope::Tier,
        "latency.sigma",
        Kind::Float,
        "Latency: lognormal shape.",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Tier,
        "latency.slow_p",
        Kind::Float,
        "Latency: probability of the slow value latency.slow_s.",
    ).bounds(Bounds::SHARE),
    p(
        Scope::Tier,
        "latency.slow_s",
        Kind::Float,
        "Latency: the slow value.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "latency.per_inflight_s",
        Kind::Float,
        "Not for network latency (a service-time parameter: <tier>.service.per_inflight_s); refused unless 0.",
    ).bounds(Bounds::between(0.0, 0.0)),
    p(
        Scope::TierClass,
        "class_slots",
        Kind::Cap,
        "Bulkhead for a request class: at most this many of its requests in service at once at this tier (unbounded by default).",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::TierClass,
        "shed_queue",
        Kind::Cap,
        "Load shedding of a request class: while the queue holds at least this many requests, arriving requests of that class that would wait are rejected (<tier>_shed; one a free slot takes at once is not); unbounded: never.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::TierClass,
        "class_service_s",
        Kind::Float,
        "Mean service time of a request class at this tier: its requests' work has the tier's service distribution (and slow value) with this mean instead of service.mean_s (a class not named: the tier's). For classes that cost differently (a 2 s export beside 50 ms reads).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Tier,
        "queue_order",
        Kind::Choice(QueueOrder::VARIANTS),
        "Which queued request a freed slot takes: fifo (oldest), lifo (newest: under overload the served requests are those whose callers still wait), adaptive_lifo (newest only while the queue is longer than lifo_threshold).",
    ),
    p(
        Scope::Tier,
        "lifo_threshold",
        Kind::Int,
        "Adaptive LIFO: queue length above which the newest request is served first.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "adaptive_limit",
        Kind::Bool,
        "Adaptive concurrency limit between limit_min and slots, moved by the rule of limit_algorithm (aimd by default, or gradient). AIMD: every limit_interval_s with at least limit_min_samples completions, a window whose mean latency (arrival to reply: the queue included, the source text's rule; from the start of service with limit_latency_from = start) exceeds limit_latency_s or that had an error is a breach; after limit_breaches breaching windows in a row the limit is multiplied by limit_decrease, after a clean window it grows by limit_increase plus limit_increase_percent of it, whatever the demand; changes at least limit_hold_s apart (the first at any time); a window short of limit_min_samples waits for them or is skipped (limit_sparse). Series <tier>_limit: the limit at the end of each second. With replicas, each replica has its own limit (`<tier>.limit_scope` is refused with the reason).",
    ),
    p(
        Scope::Tier,
        "limit_algorithm",
        Kind::Choice(LimitAlgorithm::VARIANTS),
        "Adaptive limit's rule. aimd: as above. gradient (Netflix concurrency-limits' Gradient2 behind its WindowedLimit): a window closes at the first completion limit_interval_s after the last one closed, and is dropped with fewer than limit_min_samples completions; its mean latency (start of service to reply, as Netflix measures from the permit) is one sample: gradient = clamp(limit_tolerance x long-term latency / the window's, 0.5, 1); new = limit x gradient + 4 (a queue allowance), smoothed by limit_smoothing, within limit_min..slots, unless the most in service at a completion of the window is under half the limit (Netflix: at each request's start). The long-term latency is the mean of the first 10 windows, then an exponential average over limit_long_window windows, cut by 5% whenever it is over twice the window's. It starts at slots (Netflix: at its initial limit, 20). Errors and limit_breaches, limit_latency_s, limit_decrease, limit_increase play no part.",
    ),
    p(
        Scope::Tier,
        "limit_tolerance",
        Kind::Float,
        "Gradient limit: how much slower than the long-term latency a window may be before the limit shrinks (1.5: 50%).",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Tier,
        "limit_smoothing",
        Kind::Float,
        "Gradient limit: weight of each new estimate, in (0, 1] (1: none).",
    ).bounds(Bounds::SHARE.above_min()),
    p(
        Scope::Tier,
        "limit_long_window",
        Kind::Int,
        "Gradient limit: windows the long-term latency averages over (each has weight 2 / (n + 1) after the first 10; Netflix's longWindow, default 600).",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Tier,
        "limit_min",
        Kind::Int,
        "Adaptive limit: the lowest concurrency.",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Tier,
        "limit_latency_s",
        Kind::Float,
        "Adaptive limit: mean latency above which a window is a breach.",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Tier,
        "limit_decrease",
        Kind::Float,
        "Adaptive limit: multiplicative decrease (0.9: -10%).",
    ).bounds(Bounds::SHARE.above_min().below_max()),
    p(
        Scope::Tier,
        "limit_increase",
        Kind::Int,
        "Adaptive limit: additive increase per clean window.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "limit_min_samples",
        Kind::Int,
        "Adaptive limit: completions a window needs before it counts.",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Tier,
        "limit_breaches",
        Kind::Int,
        "Adaptive limit: breaching windows in a row before a decrease.",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Tier,
        "limit_interval_s",
        Kind::Float,
        "Adaptive limit: length of a window: it closes at the first completion this long after the previous one closed (with AIMD, changes are at most this often unless limit_hold_s is longer). With the gradient rule a window short of limit_min_samples is dropped, so an interval in which the tier completes fewer leaves the limit where it is; 0 is refused there unless limit_min_samples = 1.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "limit_increase_percent",
        Kind::Float,
        "AIMD limit: growth after a clean window as a percentage of the limit, added to limit_increase (0: none, the default; 2: +2%, kept as a real number so that small steps add up). AIMD only: refused with the gradient rule or without adaptive_limit.",
    ).bounds(Bounds::PERCENT),
    p(
        Scope::Tier,
        "limit_hold_s",
        Kind::Float,
        "AIMD limit: shortest time between two changes of the limit (0: none, the default). A breach streak that reaches limit_breaches within it waits for it: the decrease comes at the first breaching window after. AIMD only: refused with the gradient rule or without adaptive_limit.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "limit_latency_from",
        Kind::Choice(crate::scenario::LatencyFrom::VARIANTS),
        "AIMD limit: where a request's latency starts for limit_latency_s: arrival (the default: the queue included, the source text's rule; with an unbounded queue the queue the limit itself makes reads as slow service and can hold it at limit_min) or start (the start of service, as Netflix's AIMDLimit measures from the permit). AIMD only: refused with the gradient rule or without adaptive_limit.",
    ),
    p(
        Scope::Tier,
        "limit_sparse",
        Kind::Choice(crate::scenario::LimitSparse::VARIANTS),
        "AIMD limit: a window that reaches limit_interval_s with fewer than limit_min_samples completions: wait (the default: it stays open until it has them, then counts) or skip (the minimum-sample guard: it closes without a verdict and ends a breach streak, so a quiet tier's few slow requests never move the limit). AIMD only: refused with the gradient rule or without adaptive_limit.",
    ),
    p(
        Scope::Tier,
        "rate_limit_per_s",
        Kind::Float,
        "Token-bucket rate limit on the tier's arrivals (0: none); a request finding no token is rejected like a full queue, after reject_latency_s (rate_limited).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "rate_limit_burst",
        Kind::Float,
        "Token-bucket size: how many requests may pass at once after a quiet spell (the bucket starts full). At the default of 1 the bucket is a pacer: of Poisson arrivals at rate a it admits r x a / (r + a), half at a = r, a third lost at half the rate; give the burst you mean (Guava's default is one second of the rate). Leaky bucket: how many requests may wait their turn (a whole number).",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Tier,
        "rate_limit_scope",
        Kind::Choice(crate::scenario::LimitScope::VARIANTS),
        "With replicas: replica (each replica its own bucket at rate_limit_per_s, so the tier admits that rate times its replicas) or service (one bucket for all replicas: a cluster-wide limit).",
    ),
    p(
        Scope::Tier,
        "rate_limit_kind",
        Kind::Choice(crate::scenario::RateLimitKind::VARIANTS),
        "How the rate limit counts: token_bucket (bursts up to rate_limit_burst), fixed_window (rate x rate_limit_window_s per aligned window: a burst at a window's end and another at the next one's start pass together), sliding_window (the previous window's count weighted by its share still inside the window ending now) or leaky_bucket (a queue in front of the tier drained at the rate: a request enters one interval of 1 / rate after the previous, waiting its turn while at most rate_limit_burst wait, rejected beyond; bucket_waited, in_bucket_at_end).",
    ),
    p(
        Scope::Tier,
        "rate_limit_window_s",
        Kind::Float,
        "Window length of the fixed_window and sliding_window rate limits (each admits rate_limit_per_s x this per window).",
    ).bounds(Bounds::at_least(1e-9)),
    p(
        Scope::Tier,
        "rate_limit_key",
        Kind::Choice(crate::scenario::RateLimitKey::VARIANTS),
        "What the rate limit counts by: none (the default: one limiter for all requests, per replica or for the service by rate_limit_scope) or tenant (a \"hot parameter\" limit: each tenant key, client.tenants, its own limiter of rate_limit_kind at rate_limit_per_s, so a big tenant is shed while the others pass). tenant needs rate_limit_per_s > 0 and some group with tenants > 1; not with rate_limit_scope = service or the leaky_bucket kind.",
    ),
    p(
        Scope::Tier,
        "codel",
        Kind::Bool,
        "CoDel at dequeue: once requests have waited longer than codel_target_s for a whole codel_interval_s, drop them at an increasing rate (interval / sqrt(count)) until the wait falls below target; drops are answered as overload (codel_dropped). It reads the wait of the request dequeued, the oldest under fifo (RFC 8289's queue), so it is refused with lifo and adaptive_lifo, which dequeue the newest.",
    ),
    p(
        Scope::Tier,
        "codel_target_s",
        Kind::Float,
        "CoDel: acceptable queueing delay (5 ms by default).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "codel_interval_s",
        Kind::Float,
        "CoDel: how long the delay must stay above target before dropping starts (100 ms by default).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Tier,
        "retry_after_s",
        Kind::Float,
        "Overload signalling: a rejection for a full queue carries Retry-After of this many seconds (0: none); callers with honor_retry_after wait at least that long.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "cancel_check_s",
        Kind::Float,
        "Cooperative cancellation: while working, check the request's deadline every cancel_check_s and abandon the work once it has passed (counted as abandoned; 0: started work always runs to the end).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "service.dist",
        Kind::Choice(Dist::VARIANTS),
        "Distribution of the tier's own work per request.",
    ),
    p(
        Scope::Tier,
        "service.mean_s",
        Kind::Float,
        "Mean of the own work (0: none; the tier only forwards).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "service.sigma",
        Kind::Float,
        "Lognormal shape (standard deviation of the log of the service time).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Tier,
        "service.slow_p",
        Kind::Float,
        "Two-point mixture: probability that a request takes service.slow_s instead of a draw.",
    ).bounds(Bounds::SHARE),
    p(
        Scope::Tier,
        "service.slow_s",
        Kind::Float,
        "Two-point mixture: the slow service time.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "service.per_inflight_s",
        Kind::Float,
        "Capacity that degrades under load (the collapse model of Brooker's simulators): each request's work is its draw plus this many seconds per request in service when it starts, itself included (1.0 s + 0.01 s x concurrency: mean_s = 1, per_inflight_s = 0.01). 0: none (the default).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "cache.hit_ratio",
        Kind::Float,
        "Look-aside cache in front of the tier (0: none): the share of its callers' lookups answered from the cache after cache.hit_latency_s, in [0, 1); the rest go to the tier, so a cold cache sends it 1 / (1 - hit_ratio) times the load of a warm one. Metrics <tier>_cache_hits, _cache_misses, _cache_fills; series <tier>_cache_hits, _cache_misses per second. Not with replicas.",
    ).bounds(Bounds::SHARE.below_max()),
    p(
        Scope::Tier,
        "cache.hit_latency_s",
        Kind::Float,
        "Look-aside cache: how long a hit takes to answer (1 ms by default).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "cache.flush_start_s",
        Kind::Float,
        "Look-aside cache: start of its flush window (a restart or deploy of the cache), in which every lookup misses and nothing is stored; the cache is empty at its end.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "cache.flush_duration_s",
        Kind::Float,
        "Look-aside cache: length of the flush window (0: no flush).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "cache.fill_keys",
        Kind::Int,
        "Look-aside cache: keys to refill after the flush (1000 by default). Each miss the tier answers with success after the flush fills one; the hit ratio is then hit_ratio x filled / fill_keys until all are filled, so the cache warms only as fast as the tier answers.",
    ).bounds(Bounds::at_least(1.0)),
    p(
        Scope::Tier,
        "gc.every_s",
        Kind::Float,
        "GC-like pauses (0: none): at every multiple of this many seconds each instance of the tier stops the world for gc.pause_s + gc.per_queued_s x its queue length then (a tick inside a pause is skipped). Its slots do no work while paused: work in service ends that much later, work starting in a pause begins at its end; waits on downstream calls are not paused. Metrics <tier>_gc_pauses, _gc_paused_s, _gc_longest_pause_s.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "gc.pause_s",
        Kind::Float,
        "GC-like pauses: the length of a pause with an empty queue.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Tier,
        "gc.per_queued_s",
        Kind::Float,
        "GC-like pauses: seconds added to a pause per request queued when it begins (the heap grows with queued work, so pauses lengthen under overload).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Slow,
        "start_s",
        Kind::Float,
        "Start of a slow window (a request starting service inside it takes factor times longer). `<tier>.slow.<key>` is the first window; `<tier>.slow.<n>.<key>` window n (0-based), created when n is the next index.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Slow,
        "duration_s",
        Kind::Float,
        "Length of a slow window (0: no window, but its position still splits the phases).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Slow,
        "factor",
        Kind::Float,
        "Service-time multiplier inside the window (ch37: 10, i.e. 20 ms -> 200 ms). A window of length 0 multiplies nothing: a factor other than 1 is refused there (in a grid, only where the window has length 0 at every point).",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Slow,
        "replicas",
        Kind::Indexes,
        "The replicas the window slows, 0-based (`[2]`: the third, one bad host); empty (the default): every replica.",
    ),
    p(
        Scope::Errors,
        "start_s",
        Kind::Float,
        "Start of an error window: each request that starts service inside it fails fast with probability p (an error reply after <tier>.error_latency_s, without the tier's own work or its downstream calls; counted as <tier>_errors_injected, and as completed, not ok). Overlapping windows combine as independent failures. `<tier>.errors.<key>` is the first window; `<tier>.errors.<n>.<key>` window n, created when n is the next index. An error window is a trigger, like a slow window.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Errors,
        "duration_s",
        Kind::Float,
        "Length of an error window; must be > 0 when p is. A window is a trigger, and the run's trigger span runs from the first trigger's start to the last one's end: errors all the run long (from 0 to the horizon) leave no phase before or after it, so no recovery to judge.",
    ).bounds(Bounds::POSITIVE),
    p(
        Scope::Errors,
        "p",
        Kind::Float,
        "Share of the requests starting inside the window that fail fast, in [0, 1].",
    ).bounds(Bounds::SHARE),
    p(
        Scope::Errors,
        "replicas",
        Kind::Indexes,
        "The replicas that fail, 0-based (`[1]`: one bad host); empty (the default): every replica.",
    ),
    p(
        Scope::Crash,
        "start_s",
        Kind::Float,
        "Start of a crash window: the replicas named go down; the requests they had queued, waiting in their own leaky bucket or in service are lost (never answered, so their callers wait for their timeouts; <tier>_lost_queued_in_crash, <tier>_lost_in_crash, and the calls those requests had in flight downstream are no longer waited for, <caller>_calls_cancelled: the callee cancels them only with <tier>.cancel = \"always\", else their work goes on for nobody); while down, arrivals are refused or vanish (mode); at the end they restart with empty queues. `<tier>.crash.<key>` is the first window; `<tier>.crash.<n>.<key>` window n, created when n is the next index. Windows that take down the same replica may not overlap (windows of different replicas may: staggered restarts). A trigger, like a slow window.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Crash,
        "duration_s",
        Kind::Float,
        "Length of a crash window (the time down before the restart; 0: a restart that only loses the work in progress).",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Crash,
        "mode",
        Kind::Choice(CrashMode::VARIANTS),
        "What callers see while the replica is down: refused (the connection is refused: the attempt fails fast as refused after connect_latency_s, <tier>_refused_down) or black_hole (no answer: the caller waits for its timeout, <tier>_black_holed).",
    ),
    p(
        Scope::Crash,
        "connect_latency_s",
        Kind::Float,
        "Refused mode: how long a caller takes to learn the connection was refused (default 1 ms); refused with black_hole.",
    ).bounds(Bounds::NON_NEGATIVE),
    p(
        Scope::Crash,
        "replicas",
        Kind::Indexes,
        "The replicas that crash, 0-based; empty (the default): every replica.",
    ),
];

/// A problem with a scenario, a path or a value, located by its path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Why a [`Scope::ClientFile`] parameter is refused as an override: it names
/// a file, read only where the scenario file is loaded (runs read no files).
pub fn read_when_loaded(key: &str) -> String {
    format!(
        "`{key}` is read when the scenario file is loaded (its path relative to that file), so it can be given in the scenario file but not as an override; give the points as `client.profile.<n>.at_s` / `rate_per_s` instead"
    )
}

/// Why the adaptive concurrency limit has no scope beside `rate_limit_scope`
/// and `breaker_scope`: it is per replica only.
pub const NO_LIMIT_SCOPE: &str = "the adaptive concurrency limit is per replica only: it learns from the latencies of the requests one instance serves and holds that instance's requests in flight (as Netflix's concurrency-limits and Envoy's adaptive concurrency filter run in every instance). One limit for the whole tier would be a semaphore that every replica takes and releases on each request, a release at one replica starting a request queued at another: no adaptive limiter works so. To bound a tier's concurrency as a whole, use a bulkhead at its caller (`max_in_flight` with `bulkhead_scope = \"service\"`) or a shared rate limit (`rate_limit_scope = \"service\"`)";

/// Why a deadline parameter is refused under a client group (`client.`)
/// without its `deadline_s`: no deadline reaches its requests otherwise.
pub fn needs_client_deadline(group: &str, key: &str) -> String {
    let whose = if group == "client" {
        "the client's".to_string()
    } else {
        format!("client group `{group}`'s")
    };
    format!(
        "acts on a deadline, and {whose} requests have none unless {group}.deadline_s (a user's total patience) is set; set {group}.deadline_s, or set `{key}` on a tier that receives a deadline (`<tier>.{key}`)"
    )
}

/// The call parameters that act only on a deadline: refused at the client
/// without `client.deadline_s` ([`needs_client_deadline`]).
pub const DEADLINE_PARAMS: &[&str] = &["deadline_margin_s", "budget_admission", "budget_share"];

/// Every concrete path of `scenario`, in catalogue order.
pub fn paths(scenario: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    let edges = scenario.edges();
    for param in PARAMS {
        let key = param.key;
        match param.scope {
            Scope::Top => out.push(key.to_string()),
            Scope::Client => out.extend(scenario.groups().map(|(g, _)| format!("{g}.{key}"))),
            Scope::Call => out.extend(edges.iter().map(|e| format!("{}.{key}", e.path))),
            Scope::Branch => out.extend(
                edges
                    .iter()
                    .filter(|e| e.path.contains(".fanout."))
                    .map(|e| format!("{}.{key}", e.path)),
            ),
            Scope::Class => {
                for (g, c) in scenario.groups() {
                    out.extend((c.classes.iter()).map(|c| format!("{g}.classes.{}.{key}", c.name)));
                }
            }
            Scope::TierClass => {
                let classes = class_names(scenario);
                for t in &scenario.tiers {
                    for c in &classes {
                        out.push(format!("{}.{key}.{c}", t.name));
                    }
                }
            }
            Scope::Tier => out.extend(scenario.tiers.iter().map(|t| format!("{}.{key}", t.name))),
            Scope::Slow => out.extend(
                scenario
                    .tiers
                    .iter()
                    .map(|t| format!("{}.slow.{key}", t.name)),
            ),
            Scope::Errors => {
                out.extend((scenario.tiers.iter()).map(|t| format!("{}.errors.{key}", t.name)))
            }
            Scope::Crash => {
                out.extend((scenario.tiers.iter()).map(|t| format!("{}.crash.{key}", t.name)))
            }
            Scope::Spike => out.extend(scenario.groups().map(|(g, _)| format!("{g}.spike.{key}"))),
            Scope::Profile => {
                out.extend(scenario.groups().map(|(g, _)| format!("{g}.profile.{key}")))
            }
            // Not settable by a path: see `read_when_loaded`.
            Scope::ClientFile => {}
        }
    }
    out
}

/// Every client group's request classes, each once, in group order.
pub fn class_names(scenario: &Scenario) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for (_, c) in scenario.groups() {
        for class in &c.classes {
            if !out.contains(&class.name.as_str()) {
                out.push(&class.name);
            }
        }
    }
    out
}

/// The catalogue entry of a concrete path, if the path is well-formed.
pub fn param_of(path: &str) -> Option<&'static Param> {
    params_of(path).next()
}

/// What the catalogue alone says is wrong with `value` at `path`, with no
/// scenario to read (a grid whose scenario file does not load): a value
/// of another type, or a number outside the parameter's bounds. Only a
/// value every catalogue line of the path's shape refuses is refused, in
/// the first one's words; a path of no line is not judged (it may name a
/// tier the scenario lacks, which the scenario tells).
pub fn catalogue_problem(path: &str, value: &Value) -> Option<String> {
    let problem = |param: &Param| {
        if let Err(e) = convert(param, value) {
            return Some(e);
        }
        let outside = outside_bounds(param, value)?;
        // Without the value, which its key shows: the same problem at
        // consecutive levels of an axis is then said once.
        let every = if param.kind == Kind::Floats {
            "every entry "
        } else {
            ""
        };
        Some(format!("{every}must be {}", outside.bounds.describe()))
    };
    if path == "strategy" {
        // A preset of the scenario's, named.
        return text(value).err();
    }
    // `client` is the client group's, never a tier's name: its paths are
    // of the client's scopes only (`client.slots` is no parameter).
    let client_side = |p: &&Param| {
        !path.starts_with("client.")
            || matches!(
                p.scope,
                Scope::Client
                    | Scope::Call
                    | Scope::ClientFile
                    | Scope::Class
                    | Scope::Spike
                    | Scope::Profile
            )
    };
    let problems: Option<Vec<String>> = params_of(path).filter(client_side).map(problem).collect();
    problems.and_then(|p| p.into_iter().next())
}

/// Every catalogue line a concrete path's shape matches (one, but for a
/// key two scopes share).
fn params_of(path: &str) -> impl Iterator<Item = &'static Param> {
    let segs: Vec<&str> = path.split('.').collect();
    // The path past its owner, and past `<owner>.fanout.<to>`: built once,
    // not once per catalogue line.
    let key_after = |n: usize| (segs.len() > n).then(|| segs[n..].join("."));
    let (after_owner, after_branch) = (key_after(1), key_after(3));
    let is = |key: &Option<String>, p: &Param| key.as_deref() == Some(p.key);
    PARAMS.iter().filter(move |p| match p.scope {
        Scope::Top => p.key == path,
        Scope::Client => is(&after_owner, p),
        Scope::Call => {
            is(&after_owner, p)
                || (after_branch.is_some() && segs[1] == "fanout" && is(&after_branch, p))
        }
        Scope::Branch => segs.len() == 4 && segs[1] == "fanout" && segs[3] == p.key,
        Scope::Class => segs.len() == 4 && segs[1] == "classes" && segs[3] == p.key,
        Scope::TierClass => segs.len() == 3 && segs[1] == p.key,
        Scope::Tier => is(&after_owner, p),
        Scope::ClientFile => segs.len() == 2 && segs[1] == p.key,
        Scope::Slow | Scope::Errors | Scope::Crash | Scope::Spike | Scope::Profile => {
            let window = match p.scope {
                Scope::Slow => "slow",
                Scope::Errors => "errors",
                Scope::Crash => "crash",
                Scope::Spike => "spike",
                _ => "profile",
            };
            (segs.len() == 3 && segs[1] == window && segs[2] == p.key)
                || (segs.len() == 4
                    && segs[1] == window
                    && segs[2].parse::<usize>().is_ok()
                    && segs[3] == p.key)
        }
    })
}

/// One spelling per parameter: a window's key with its index, as a
/// number (`svc_b.slow.start_s` and `svc_b.slow.00.start_s` are
/// `svc_b.slow.0.start_s`), so that two spellings of one parameter are
/// found to be one. Other paths are their own.
pub fn canonical(path: &str) -> String {
    let windowed = param_of(path).is_some_and(|p| {
        matches!(
            p.scope,
            Scope::Slow | Scope::Errors | Scope::Crash | Scope::Spike | Scope::Profile
        )
    });
    let segs: Vec<&str> = path.split('.').collect();
    match segs.as_slice() {
        [owner, window, key] if windowed => format!("{owner}.{window}.0.{key}"),
        [owner, window, n, key] if windowed => match n.parse::<usize>() {
            Ok(n) => format!("{owner}.{window}.{n}.{key}"),
            Err(_) => path.to_string(),
        },
        _ => path.to_string(),
    }
}

/// A value as an error message shows it: as TOML writes it, but a number
/// in its shortest form (`1e300`, not its 301 digits).
pub fn show(v: &Value) -> String {
    match v {
        Value::Float(x) => format!("{x:?}"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

/// Parses a command-line value: TOML syntax (`32`, `0.3`, `true`, `"x"`),
/// falling back to a bare string (`naive`).
pub fn parse_value(text: &str) -> Value {
    let doc = format!("v = {text}");
    match doc.parse::<Table>() {
        Ok(mut t) => t.remove("v").expect("the key just written"),
        // A number past TOML's range (`1e400`, an integer past 2^63 - 1)
        // is a number still: its range is what is wrong with it.
        Err(_) if is_decimal(text) => Value::Float(text.parse().expect("a decimal number")),
        Err(_) => Value::String(text.to_string()),
    }
}

/// `text` is a decimal number as written by hand: digits, with a sign, a
/// fraction or an exponent.
fn is_decimal(text: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['+', '-']).unwrap_or(e))),
        None => (unsigned, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((i, f)) => digits(i) && (f.is_empty() || digits(f)),
        None => digits(mantissa),
    };
    mantissa_ok && exponent.is_none_or(digits)
}

/// Applies overrides in the documented order: `strategy` first (it expands to
/// its preset), then the rest as given. Reports every error, not the first;
/// the overrides that apply are applied whatever the others.
pub fn apply_all(
    scenario: &mut Scenario,
    overrides: &[(String, Value)],
) -> Result<(), Vec<ConfigError>> {
    let mut errors = Vec::new();
    let (strategy, rest): (Vec<_>, Vec<_>) = overrides.iter().partition(|(k, _)| k == "strategy");
    for (_, value) in strategy {
        if let Err(e) = apply_preset(scenario, value) {
            errors.push(e);
        }
    }
    let rest: Vec<(&str, &Value)> = rest.iter().map(|(k, v)| (k.as_str(), v)).collect();
    if let Err(e) = write_all(scenario, &rest) {
        errors.extend(e);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// A scenario kept with its serialized tree, to which many sets of
/// overrides are applied (a design's points to one base): applying
/// overrides is a round trip through that tree, and its first half, the
/// serialization, is done once here rather than once per set.
pub struct Serialized {
    scenario: Scenario,
    tree: Table,
}

impl Serialized {
    pub fn new(scenario: Scenario) -> Serialized {
        let mut tree = Table::try_from(&scenario).expect("a scenario always serializes");
        // No override writes a preset: they are copied, not written out
        // and read back with every set of overrides.
        tree.remove("presets");
        Serialized { scenario, tree }
    }

    /// The scenario with `overrides` applied, as [`apply_all`] applies
    /// them to a copy of it.
    pub fn with(&self, overrides: &[(String, Value)]) -> Result<Scenario, Vec<ConfigError>> {
        let mut scenario = self.scenario.clone();
        if overrides.iter().any(|(k, _)| k == "strategy") {
            apply_all(&mut scenario, overrides)?;
            return Ok(scenario);
        }
        let overrides: Vec<(&str, &Value)> =
            overrides.iter().map(|(k, v)| (k.as_str(), v)).collect();
        write_all_into(&mut scenario, self.tree.clone(), &overrides)?;
        scenario.presets.clone_from(&self.scenario.presets);
        Ok(scenario)
    }
}

/// Sets one path. Type errors and unknown paths are reported here; ranges and
/// cross-field rules by [`crate::validate`].
pub fn set(scenario: &mut Scenario, path: &str, value: &Value) -> Result<(), ConfigError> {
    if path == "strategy" {
        return apply_preset(scenario, value);
    }
    write_all(scenario, &[(path, value)]).map_err(|mut e| e.remove(0))
}

/// A value outside its parameter's bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutOfBounds {
    pub bounds: Bounds,
    /// Every number of the value is finite (`inf` and `nan` are outside
    /// any bounds, for another reason).
    pub finite: bool,
}

impl std::fmt::Display for OutOfBounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bounds = self.bounds.describe();
        if self.finite {
            write!(f, "must be {bounds}")
        } else {
            write!(f, "not a finite number (accepted: {bounds})")
        }
    }
}

/// Whether `value` lies outside the bounds of `path`'s catalogue line in
/// `scenario` (a number outside them, a list entry outside them, or a float
/// that is not finite): validation refuses such a value at its path
/// whatever the other fields hold. Values of another type are [`set`]'s
/// to refuse.
pub fn out_of_bounds(scenario: &Scenario, path: &str, value: &Value) -> Option<OutOfBounds> {
    let tree = Table::try_from(scenario).expect("a scenario always serializes");
    let segs: Vec<&str> = path.split('.').collect();
    let (_, param) = locate(scenario, &tree, &segs).ok()??;
    outside_bounds(param, value)
}

/// Whether `value` lies outside `param`'s bounds: a number, or a list
/// entry, outside them, or a float that is not finite.
fn outside_bounds(param: &Param, value: &Value) -> Option<OutOfBounds> {
    let bounds = param.bounds?;
    let numbers = match (param.kind, value) {
        (Kind::Floats, Value::Array(entries)) => entries.as_slice(),
        (Kind::Float | Kind::Int | Kind::Cap, v) => std::slice::from_ref(v),
        _ => &[],
    };
    let number = |v: &Value| match v {
        Value::Float(x) => Some(*x),
        Value::Integer(i) => Some(*i as f64),
        _ => None,
    };
    let finite = numbers.iter().filter_map(number).all(f64::is_finite);
    let outside = numbers
        .iter()
        .filter_map(number)
        .any(|x| !x.is_finite() || !bounds.contains(x));
    outside.then_some(OutOfBounds { bounds, finite })
}

fn apply_preset(scenario: &mut Scenario, value: &Value) -> Result<(), ConfigError> {
    let name = text(value).map_err(|m| ConfigError::new("strategy", m))?;
    let Some(preset) = scenario.presets.get(&name).cloned() else {
        let known: Vec<&str> = scenario.presets.keys().map(String::as_str).collect();
        let message = match closest(&name, known.iter().copied()) {
            _ if known.is_empty() => {
                format!("unknown strategy `{name}`: this scenario defines no presets")
            }
            Some(near) => format!(
                "unknown strategy `{name}`; did you mean `{near}`? This scenario's presets: {}",
                known.join(", ")
            ),
            None => format!(
                "unknown strategy `{name}`; this scenario's presets: {}",
                known.join(", ")
            ),
        };
        return Err(ConfigError::new("strategy", message));
    };
    let overrides: Vec<(&str, &Value)> = preset.iter().map(|(k, v)| (k.as_str(), v)).collect();
    write_all(scenario, &overrides)
        .map_err(|e| ConfigError::new("strategy", format!("preset `{name}`: {}", e[0])))?;
    scenario.strategy = name;
    Ok(())
}

/// Every problem of the scenario's presets, used or not, each naming its
/// preset, path and value: a scenario file's presets are checked when it
/// is read, as the rest of the file is, and not first when a grid picks one.
pub fn preset_errors(scenario: &Scenario) -> Vec<ConfigError> {
    let mut errors = Vec::new();
    for (name, preset) in &scenario.presets {
        let overrides: Vec<(&str, &Value)> = preset.iter().map(|(k, v)| (k.as_str(), v)).collect();
        if let Err(problems) = write_all(&mut scenario.clone(), &overrides) {
            errors.extend(problems.into_iter().map(|e| {
                let value = preset
                    .get(&e.path)
                    .map_or(String::new(), |v| format!(" = {v}"));
                ConfigError::new(format!("presets.{name}.\"{}\"{value}", e.path), e.message)
            }));
        }
    }
    errors
}

/// Writes every valid override into the serialized scenario, then
/// deserializes it back; returns the others' problems. The valid ones are
/// written all the same, so that a caller reporting every problem checks
/// the scenario they give (a caller that fails on any drops it).
/// Whether `path` names a parameter of `scenario`, whatever its value:
/// not a misspelt path, a tier it lacks or a window beyond the next.
pub fn exists(scenario: &Scenario, path: &str) -> bool {
    if path == "strategy" {
        return true;
    }
    let tree = Table::try_from(scenario).expect("a scenario always serializes");
    let segs: Vec<&str> = path.split('.').collect();
    matches!(locate(scenario, &tree, &segs), Ok(Some(_)))
}

fn write_all(
    scenario: &mut Scenario,
    overrides: &[(&str, &Value)],
) -> Result<(), Vec<ConfigError>> {
    let tree = Table::try_from(&*scenario).expect("a scenario always serializes");
    write_all_into(scenario, tree, overrides)
}

/// [`write_all`] with `scenario` already serialized as `tree`.
fn write_all_into(
    scenario: &mut Scenario,
    mut tree: Table,
    overrides: &[(&str, &Value)],
) -> Result<(), Vec<ConfigError>> {
    let mut errors = Vec::new();
    for (path, value) in overrides {
        if let Err(message) = write(scenario, &mut tree, path, value) {
            errors.push(ConfigError::new(*path, message));
        }
    }
    if errors.len() < overrides.len() {
        // Values are converted to their field's type before they are
        // written, so this fails only if a catalogue line and its field
        // disagree (a test sets every path to catch that).
        *scenario = Value::Table(tree)
            .try_into()
            .map_err(|e| vec![ConfigError::new(overrides[0].0, e.to_string())])?;
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The value at `path` in `scenario`, as its file would write it; `None`
/// for a path that names nothing there (or a value left unset).
pub fn get(scenario: &Scenario, path: &str) -> Option<Value> {
    let tree = Table::try_from(scenario).expect("a scenario always serializes");
    let segs: Vec<&str> = path.split('.').collect();
    let (steps, _) = locate(scenario, &tree, &segs).ok()??;
    let mut here = tree.get(match steps.first()? {
        Step::Key(k) => k.as_str(),
        _ => return None,
    })?;
    for step in &steps[1..] {
        here = match step {
            Step::Key(k) => here.get(k.as_str())?,
            Step::Index(n) => here.get(*n)?,
            Step::NewElement(_) => return None,
        };
    }
    Some(here.clone())
}

/// One step from a table of the serialized scenario towards a value.
enum Step {
    Key(String),
    /// An element of an array (tiers, fan-out branches, classes, windows).
    Index(usize),
    /// A new last element of an absent or shorter array: a window (or a
    /// profile point) created by naming the next free index.
    NewElement(Table),
}

fn write(scenario: &Scenario, tree: &mut Table, path: &str, value: &Value) -> Result<(), String> {
    let segs: Vec<&str> = path.split('.').collect();
    let (steps, param) = locate(scenario, tree, &segs)?.ok_or_else(|| unknown(scenario, path))?;
    let value = convert(param, value)?;
    put(tree, &steps, value);
    Ok(())
}

fn keys(parts: &[&str]) -> Vec<Step> {
    parts.iter().map(|k| Step::Key(k.to_string())).collect()
}

fn key_steps(key: &str) -> Vec<Step> {
    keys(&key.split('.').collect::<Vec<_>>())
}

fn find(scope: Scope, key: &str) -> Option<&'static Param> {
    PARAMS.iter().find(|p| p.scope == scope && p.key == key)
}

/// Where `segs` lives in the serialized scenario, and its catalogue line:
/// `Ok(None)` for a path that names nothing, `Err` for one that names a
/// parameter that cannot be set there (with the reason).
fn locate(
    scenario: &Scenario,
    tree: &Table,
    segs: &[&str],
) -> Result<Option<(Vec<Step>, &'static Param)>, String> {
    let whole = segs.join(".");
    if let Some(p) = find(Scope::Top, &whole).filter(|p| p.key != "strategy") {
        return Ok(Some((key_steps(p.key), p)));
    }
    if let [first, rest @ ..] = segs
        && let Some((client, steps, node)) = group(scenario, tree, first)
    {
        return locate_in_group(first, client, steps, node, rest);
    }
    match segs {
        [name, rest @ ..] => {
            let Some(i) = scenario.tiers.iter().position(|t| t.name == *name) else {
                return Ok(None);
            };
            let tier = &scenario.tiers[i];
            let mut steps = vec![Step::Key("tiers".to_string()), Step::Index(i)];
            let found = match rest {
                ["slow", rest @ ..] => {
                    steps.push(Step::Key("slow".to_string()));
                    let slow = tree["tiers"][i].get("slow");
                    return window(slow, steps, rest, Scope::Slow, name);
                }
                ["errors", rest @ ..] => {
                    steps.push(Step::Key("errors".to_string()));
                    let errors = tree["tiers"][i].get("errors");
                    return window(errors, steps, rest, Scope::Errors, name);
                }
                ["crash", rest @ ..] => {
                    steps.push(Step::Key("crash".to_string()));
                    let crash = tree["tiers"][i].get("crash");
                    return window(crash, steps, rest, Scope::Crash, name);
                }
                ["fanout", to, key @ ..] => {
                    let Some(j) = tier.fanout.iter().position(|b| b.to == *to) else {
                        return Ok(None);
                    };
                    let key = key.join(".");
                    steps.extend([Step::Key("fanout".to_string()), Step::Index(j)]);
                    find(Scope::Branch, &key)
                        .map(|p| (key_steps(&key), p))
                        .or_else(|| call_param(&key).map(|p| (keys(&["call", &key]), p)))
                }
                [map, class] if find(Scope::TierClass, map).is_some() => {
                    find(Scope::TierClass, map).map(|p| (keys(&[map, class]), p))
                }
                ["limit_scope"] => return Err(NO_LIMIT_SCOPE.to_string()),
                _ => {
                    let key = rest.join(".");
                    if let Some(p) = find(Scope::Tier, &key) {
                        Some((key_steps(&key), p))
                    } else if let Some(p) = call_param(&key) {
                        if tier.call.is_none() {
                            return Err(no_call_here(tier));
                        }
                        Some((keys(&["call", &key]), p))
                    } else {
                        None
                    }
                }
            };
            Ok(found.map(|(more, p)| {
                steps.extend(more);
                (steps, p)
            }))
        }
        [] => Ok(None),
    }
}

/// Client group `name` (`client`, or one of `clients`): its scenario
/// part, the steps to its table and that table in the serialized scenario.
fn group<'a>(
    scenario: &'a Scenario,
    tree: &'a Table,
    name: &str,
) -> Option<(&'a crate::scenario::Client, Vec<Step>, &'a Value)> {
    if name == "client" {
        return Some((&scenario.client, keys(&["client"]), &tree["client"]));
    }
    let client = scenario.clients.get(name)?;
    Some((client, keys(&["clients", name]), &tree["clients"][name]))
}

/// A path under client group `name`, after its name.
fn locate_in_group(
    name: &str,
    client: &crate::scenario::Client,
    mut steps: Vec<Step>,
    node: &Value,
    segs: &[&str],
) -> Result<Option<(Vec<Step>, &'static Param)>, String> {
    match segs {
        ["classes", class, key] => {
            let found = client.classes.iter().position(|c| c.name == *class);
            Ok(found.zip(find(Scope::Class, key)).map(|(i, p)| {
                steps.extend([
                    Step::Key("classes".to_string()),
                    Step::Index(i),
                    Step::Key(key.to_string()),
                ]);
                (steps, p)
            }))
        }
        ["spike", rest @ ..] => {
            steps.push(Step::Key("spike".to_string()));
            window(node.get("spike"), steps, rest, Scope::Spike, name)
        }
        ["profile", rest @ ..] => {
            steps.push(Step::Key("profile".to_string()));
            window(node.get("profile"), steps, rest, Scope::Profile, name)
        }
        rest => {
            let key = rest.join(".");
            if find(Scope::ClientFile, &key).is_some() {
                return Err(read_when_loaded(&key));
            }
            if let Some(p) = find(Scope::Client, &key) {
                steps.extend(key_steps(&key));
                return Ok(Some((steps, p)));
            }
            Ok(find(Scope::Call, &key).map(|p| {
                steps.extend(keys(&["call", &key]));
                (steps, p)
            }))
        }
    }
}

fn call_param(key: &str) -> Option<&'static Param> {
    find(Scope::Call, key)
}

fn no_call_here(tier: &crate::scenario::Tier) -> String {
    if tier.fanout.is_empty() {
        return format!(
            "tier `{}` calls no other tier, so it has no call parameters",
            tier.name
        );
    }
    let branches: Vec<&str> = tier.fanout.iter().map(|b| b.to.as_str()).collect();
    format!(
        "tier `{}` fans out: its call parameters are under `{}.fanout.<branch>.` ({})",
        tier.name,
        tier.name,
        branches.join(", ")
    )
}

/// A key of window `n` of `windows` (`[key]` is window 0); the next free
/// index creates a window.
fn window(
    windows: Option<&Value>,
    mut steps: Vec<Step>,
    segs: &[&str],
    scope: Scope,
    owner: &str,
) -> Result<Option<(Vec<Step>, &'static Param)>, String> {
    let (index, key) = match segs {
        [key] => (0, *key),
        [n, key] => match n.parse::<usize>() {
            Ok(n) => (n, *key),
            Err(_) => return Ok(None),
        },
        _ => return Ok(None),
    };
    let Some(param) = find(scope, key) else {
        return Ok(None);
    };
    let len = windows.and_then(Value::as_array).map_or(0, Vec::len);
    let what = match scope {
        Scope::Slow => "slow window(s)",
        Scope::Errors => "error window(s)",
        Scope::Crash => "crash window(s)",
        Scope::Spike => "spike window(s)",
        _ => "profile point(s)",
    };
    if index > len {
        return Err(format!(
            "`{owner}` has {len} {what}; the next one is index {len}"
        ));
    }
    steps.push(if index == len {
        Step::NewElement(new_element(scope))
    } else {
        Step::Index(index)
    });
    steps.push(Step::Key(key.to_string()));
    Ok(Some((steps, param)))
}

/// Writes `value` at the end of `steps` (`None` removes the key: an
/// unbounded cap).
fn put(tree: &mut Table, steps: &[Step], value: Option<Value>) {
    let (Some(Step::Key(key)), path) = (steps.last(), &steps[..steps.len() - 1]) else {
        unreachable!("a location ends with a key")
    };
    let mut root = Value::Table(std::mem::take(tree));
    let mut here = &mut root;
    for (i, step) in path.iter().enumerate() {
        here = match step {
            Step::Key(k) => {
                let empty = match path.get(i + 1) {
                    Some(Step::NewElement(_)) => Value::Array(Vec::new()),
                    _ => Value::Table(Table::new()),
                };
                let table = here.as_table_mut().expect("a key of a table");
                table.entry(k.clone()).or_insert(empty)
            }
            Step::Index(n) => &mut here.as_array_mut().expect("an index of an array")[*n],
            Step::NewElement(element) => {
                let list = here.as_array_mut().expect("a list of windows or points");
                list.push(Value::Table(element.clone()));
                list.last_mut().expect("just pushed")
            }
        };
    }
    let table = here.as_table_mut().expect("a key of a table");
    match value {
        Some(v) => table.insert(key.clone(), v),
        None => table.remove(key),
    };
    let Value::Table(t) = root else {
        unreachable!("the root is a table")
    };
    *tree = t;
}

/// A window or profile point created by a path: a window does nothing
/// until its keys are set (an error window's p is 0); a point's rate is 0
/// until set.
fn new_element(scope: Scope) -> Table {
    if scope == Scope::Profile {
        let point = crate::scenario::ProfilePoint {
            at_s: 0.0,
            rate_per_s: 0.0,
        };
        return Table::try_from(point).expect("a point serializes");
    }
    if scope == Scope::Crash {
        let window = crate::scenario::CrashWindow {
            start_s: 0.0,
            duration_s: 0.0,
            mode: CrashMode::Refused,
            connect_latency_s: 0.001,
            replicas: Vec::new(),
        };
        return Table::try_from(window).expect("a window serializes");
    }
    if scope == Scope::Errors {
        let window = crate::scenario::ErrorWindow {
            start_s: 0.0,
            duration_s: 0.0,
            p: 0.0,
            replicas: Vec::new(),
        };
        return Table::try_from(window).expect("a window serializes");
    }
    let window = crate::scenario::SlowWindow {
        start_s: 0.0,
        duration_s: 0.0,
        factor: 1.0,
        replicas: Vec::new(),
    };
    Table::try_from(window).expect("a window serializes")
}

/// The value to write for `param`: converted to its field's type and
/// range-checked (`None`: remove the key, an unbounded cap).
fn convert(param: &Param, v: &Value) -> Result<Option<Value>, String> {
    Ok(Some(match param.kind {
        Kind::Float => Value::Float(float(v)?),
        // Out of the field's type: said with the bounds validation applies
        // (`replicas = 1e10` must be 1 to 64, not <= 4294967295).
        Kind::Int => Value::Integer(uint(v, param.max).map_err(|e| in_bounds(param, v, e))? as i64),
        Kind::Bool => Value::Boolean(boolean(v)?),
        Kind::Text => Value::String(text(v)?),
        Kind::Choice(names) => Value::String(choice(v, names)?),
        Kind::Cap => {
            return (cap(v).map_err(|e| in_bounds(param, v, e)))
                .map(|c| c.map(|n| Value::Integer(n as i64)));
        }
        Kind::Indexes => Value::Array(indexes(v)?),
        Kind::Floats => Value::Array(floats(v)?),
        Kind::Choices(names) => Value::Array(choices(v, names)?),
    }))
}

/// The known name closest to a misspelt one, if it is close enough to be
/// the one meant (for "did you mean" hints).
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| (strsim::levenshtein(k, name), k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, _)| *d <= (name.len() / 3).max(2))
        .map(|(_, k)| k)
}

fn unknown(scenario: &Scenario, path: &str) -> String {
    let known = paths(scenario);
    match closest(path, known.iter().map(String::as_str)) {
        Some(k) => format!("unknown parameter; did you mean `{k}`?"),
        None => "unknown parameter (see docs/params.md, or `sweep params`)".to_string(),
    }
}

fn float(v: &Value) -> Result<f64, String> {
    match v {
        Value::Float(x) => Ok(*x),
        Value::Integer(i) => Ok(*i as f64),
        other => Err(format!(
            "expected a number, got {} {other}",
            other.type_str()
        )),
    }
}

/// A range error of `param`'s field type (`must be >= 0`) said with the
/// bounds validation applies, when the catalogue has them.
fn in_bounds(param: &Param, v: &Value, e: String) -> String {
    let x = match v {
        Value::Integer(i) => *i as f64,
        Value::Float(x) => *x,
        _ => return e,
    };
    match param.bounds {
        // Only where the bounds refuse it too: past the type's largest, an
        // unbounded line's "must be >= 0" would not say why.
        Some(b) if e.starts_with("must be") && (x < b.min || x > b.max) => {
            format!("must be {}, got {v}", b.describe())
        }
        _ => e,
    }
}

fn uint(v: &Value, max: u64) -> Result<u64, String> {
    let as_int = match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(x) if x.fract() == 0.0 => Some(*x),
        _ => None,
    };
    match as_int {
        Some(x) if x < 0.0 => Err(format!("must be >= 0, got {v}")),
        Some(x) if x > max as f64 => Err(format!("must be <= {max}, got {v}")),
        Some(x) => Ok(x as u64),
        None => Err(format!("expected an integer, got {} {v}", v.type_str())),
    }
}

fn boolean(v: &Value) -> Result<bool, String> {
    match v {
        Value::Boolean(b) => Ok(*b),
        other => Err(format!(
            "expected true or false, got {} {other}",
            other.type_str()
        )),
    }
}

fn text(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        other => Err(format!(
            "expected a string, got {} {other}",
            other.type_str()
        )),
    }
}

fn choice(v: &Value, names: &[&str]) -> Result<String, String> {
    let s = text(v).map_err(|_| format!("expected one of {}, got {v}", names.join(", ")))?;
    if names.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(format!("expected one of {}, got `{s}`", names.join(", ")))
    }
}

fn indexes(v: &Value) -> Result<Vec<Value>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "expected a list of integers (`[2]`), got {} {v}",
            v.type_str()
        ));
    };
    (items.iter())
        .map(|i| uint(i, u32::MAX as u64).map(|n| Value::Integer(n as i64)))
        .collect()
}

fn choices(v: &Value, names: &[&str]) -> Result<Vec<Value>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "expected a list of {} (`[\"{}\"]`), got {} {v}",
            names.join(", "),
            names[0],
            v.type_str()
        ));
    };
    let mut seen: Vec<String> = Vec::new();
    for item in items {
        let name = choice(item, names)?;
        if seen.contains(&name) {
            return Err(format!("`{name}` is listed twice"));
        }
        seen.push(name);
    }
    Ok(seen.into_iter().map(Value::String).collect())
}

fn floats(v: &Value) -> Result<Vec<Value>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "expected a list of numbers (`[0.6, 0.15]`), got {} {v}",
            v.type_str()
        ));
    };
    items.iter().map(|x| float(x).map(Value::Float)).collect()
}

fn cap(v: &Value) -> Result<Option<u32>, String> {
    match v {
        Value::String(s) if s == "unbounded" || s == "none" => Ok(None),
        Value::String(s) => Err(format!("expected an integer or \"unbounded\", got `{s}`")),
        other => uint(other, u32::MAX as u64).map(|x| Some(x as u32)),
    }
}

/// `docs/params.md`, generated from [`PARAMS`].
pub fn markdown() -> String {
    let mut s = String::from(
        "# Parameter paths\n\n\
         Generated by `sweep params --markdown` from `sim-core/src/params.rs`; a test checks that\n\
         this file is current. The same paths serve `sweep one --set PATH=VALUE`, the `[set]`,\n\
         `[axes]` and `[[zip]]` tables of grid files, and the columns of the `runs` table.\n\n\
         `<tier>` is a tier's name (ch37: `gateway`, `svc_a`, `svc_b`); call parameters exist\n\
         under `client` and under every tier that calls the next (ch37: `gateway`, `svc_a`),\n\
         and for a tier that fans out, under `<tier>.fanout.<branch>` for each branch (named by\n\
         the tier it calls), e.g. `agg.fanout.search.attempt_timeout_s`. The deadline parameters\n\
         `deadline_margin_s`, `budget_admission` and `budget_share` act at the client only with\n\
         `client.deadline_s` (a user's total patience): without it they are refused there.\n\
         A scenario's further client groups (`[clients.<group>]`) have every `client.` path\n\
         under their own name: `<group>.rate_per_s`, `<group>.closed.users`,\n\
         `<group>.max_retries`, `<group>.spike.factor`, `<group>.classes.<class>.share`.\n\
         `strategy` is applied first, whatever the order of the overrides.\n\n\
         `acts when` is the condition under which a parameter can act at all (the mechanism it\n\
         belongs to is on, or its rule is the one chosen); where it does not hold, a value other\n\
         than the default is refused with the reason, and the default is accepted. In a grid, a\n\
         key is refused only when it acts at none of the grid's points: a `[set]` breaker setting\n\
         beside an axis `breaker = [false, true]` acts where the breaker is on.\n\n\
         | path | type | accepted | acts when | meaning |\n|---|---|---|---|---|\n",
    );
    for param in PARAMS {
        let path = match param.scope {
            Scope::Top => param.key.to_string(),
            Scope::Client => format!("client.{}", param.key),
            Scope::Call => format!("client.{k}, <tier>.{k}", k = param.key),
            Scope::Branch => format!("<tier>.fanout.<branch>.{}", param.key),
            Scope::Class => format!("client.classes.<class>.{}", param.key),
            Scope::TierClass => format!("<tier>.{}.<class>", param.key),
            Scope::Tier => format!("<tier>.{}", param.key),
            Scope::Slow => format!("<tier>.slow.{k}, <tier>.slow.<n>.{k}", k = param.key),
            Scope::Errors => format!("<tier>.errors.{k}, <tier>.errors.<n>.{k}", k = param.key),
            Scope::Crash => format!("<tier>.crash.{k}, <tier>.crash.<n>.{k}", k = param.key),
            Scope::Spike => format!("client.spike.{k}, client.spike.<n>.{k}", k = param.key),
            Scope::Profile => {
                format!("client.profile.{k}, client.profile.<n>.{k}", k = param.key)
            }
            Scope::ClientFile => format!("client.{}", param.key),
        };
        let path = path
            .split(", ")
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ");
        s.push_str(&format!(
            "| {path} | {} | {} | {} | {} |\n",
            param.kind.describe(),
            param.range(),
            validate::acts_when(param.scope, param.key).join("; "),
            param.doc
        ));
    }
    s
}
