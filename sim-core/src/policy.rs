//! Caller-side retry policies, each a small state machine with its rule
//! tested in isolation: the gRFC A6 retry throttle and the backoff.

use crate::random::Stream;
use crate::scenario::{Balancer, RateLimitKind};
use crate::time::{Nanos, round_nanos, secs_to_nanos};

/// gRFC A6 retry throttling in integer milli-tokens, so that no float
/// rounding can move the "more than half" boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryThrottle {
    tokens: u64,
    max: u64,
    ratio: u64,
}

impl RetryThrottle {
    /// Starts full.
    pub fn new(max_tokens: f64, token_ratio: f64) -> RetryThrottle {
        let max = (max_tokens * 1000.0).round() as u64;
        RetryThrottle {
            tokens: max,
            max,
            ratio: (token_ratio * 1000.0).round() as u64,
        }
    }

    pub fn on_success(&mut self) {
        self.tokens = (self.tokens.saturating_add(self.ratio)).min(self.max);
    }

    pub fn on_failure(&mut self) {
        self.tokens = self.tokens.saturating_sub(1000);
    }

    /// Checked after the failure was recorded: more than half full
    /// (`tokens > max / 2` is `2 tokens > max` for integers, and cannot
    /// overflow).
    pub fn retry_allowed(&self) -> bool {
        self.tokens > self.max / 2
    }

    pub fn milli_tokens(&self) -> u64 {
        self.tokens
    }
}

/// Envoy's retry budget: active retries stay below a share of all
/// attempts in flight, with a floor. As in Envoy (`retries().inc()` before
/// the backoff timer), a retry is active from the decision to retry until
/// its attempt ends: a burst of failures cannot schedule more retries than
/// the budget while they wait out their backoff.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryBudget {
    percent: f64,
    min_concurrency: u64,
    /// Attempts of this caller in flight (first attempts and retries).
    active: u64,
    /// Retries of this caller decided and not yet ended: in backoff or
    /// in flight.
    active_retries: u64,
}

impl RetryBudget {
    pub fn new(percent: f64, min_concurrency: u32) -> RetryBudget {
        RetryBudget {
            percent,
            min_concurrency: min_concurrency as u64,
            active: 0,
            active_retries: 0,
        }
    }

    /// A retry is decided: it counts from now, through its backoff.
    pub fn scheduled(&mut self) {
        self.active_retries += 1;
    }

    /// A retry decided is not sent after all (refused when its backoff
    /// ended, or its job is gone).
    pub fn unsent(&mut self) {
        self.active_retries -= 1;
    }

    pub fn sent(&mut self) {
        self.active += 1;
    }

    /// An attempt sent ended (answered, timed out or cancelled).
    pub fn ended(&mut self, retry: bool) {
        self.active -= 1;
        self.active_retries -= retry as u64;
    }

    /// May one more retry be sent now?
    pub fn retry_allowed(&self) -> bool {
        let share = (self.percent / 100.0 * self.active as f64).floor() as u64;
        self.active_retries < share.max(self.min_concurrency)
    }
}

/// Adaptive client throttling: requests and accepts counted in one-second
/// buckets over a sliding window of whole seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveThrottle {
    k: f64,
    /// `(second, requests, accepts)`, indexed by `second % len`.
    buckets: Vec<(u64, u64, u64)>,
    /// The latest second seen, and the requests and accepts of the window
    /// that ends in it (kept as it slides: a call reads them, not every
    /// bucket).
    second: u64,
    requests: u64,
    accepts: u64,
}

impl AdaptiveThrottle {
    /// A window of `window_s` seconds in a run of `horizon_s`.
    pub fn new(k: f64, window_s: f64, horizon_s: f64) -> AdaptiveThrottle {
        AdaptiveThrottle {
            k,
            buckets: vec![(u64::MAX, 0, 0); Self::buckets(window_s, horizon_s)],
            second: 0,
            requests: 0,
            accepts: 0,
        }
    }

    /// Its buckets: one a second of the window, at most one for each
    /// second of the run (a longer window holds the same seconds: the whole
    /// run), so that memory follows the run and not the window.
    pub fn buckets(window_s: f64, horizon_s: f64) -> usize {
        let seconds = horizon_s.ceil() as usize + 1;
        (window_s.round() as usize).clamp(1, seconds)
    }

    /// Bytes a bucket takes.
    pub const BUCKET_BYTES: usize = std::mem::size_of::<(u64, u64, u64)>();

    /// Slides the window to end in the second of `now` (never earlier than
    /// the latest), and returns that second's bucket.
    fn bucket(&mut self, now: Nanos) -> &mut (u64, u64, u64) {
        let sec = now / crate::time::NANOS_PER_SEC;
        debug_assert!(sec >= self.second, "time runs forward");
        let len = self.buckets.len() as u64;
        // Each second entered takes the place of one that leaves the window.
        let from = self.second.max(sec.saturating_sub(len)) + 1;
        for entered in from..=sec {
            let b = &mut self.buckets[(entered % len) as usize];
            if b.0 != u64::MAX && b.0 + len > self.second {
                self.requests -= b.1;
                self.accepts -= b.2;
            }
            *b = (entered, 0, 0);
        }
        if sec > self.second {
            self.second = sec;
        }
        let b = &mut self.buckets[(sec % len) as usize];
        if b.0 != sec {
            *b = (sec, 0, 0);
        }
        b
    }

    pub fn record_request(&mut self, now: Nanos) {
        self.bucket(now).1 += 1;
        self.requests += 1;
    }

    pub fn record_accept(&mut self, now: Nanos) {
        self.bucket(now).2 += 1;
        self.accepts += 1;
    }

    /// max(0, (requests - K accepts) / (requests + 1)) over the window
    /// ending in the second of `now`.
    pub fn reject_probability(&mut self, now: Nanos) -> f64 {
        self.bucket(now);
        let (requests, accepts) = (self.requests as f64, self.accepts as f64);
        ((requests - self.k * accepts) / (requests + 1.0)).max(0.0)
    }
}

/// A circuit breaker over a sliding window of call outcomes: the last
/// `window` of them, or those of the last `window_time` when it is set.
#[derive(Clone, Debug, PartialEq)]
pub struct CircuitBreaker {
    cfg: BreakerConfig,
    state: BreakerState,
    /// The outcomes in the window: (when, failed, slow).
    outcomes: std::collections::VecDeque<(Nanos, bool, bool)>,
    /// How many of them failed, and how many were slow (kept as the
    /// window slides: a time-based window holds thousands).
    failures: usize,
    slows: usize,
    /// When it last went half open: a call sent since, while it is still
    /// half open, is one of its probes.
    half_open_since: Nanos,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BreakerConfig {
    pub window: usize,
    /// A time-based window of this length instead (0: count-based).
    pub window_time: Nanos,
    pub min_samples: usize,
    pub failure_rate: f64,
    pub slow_call_rate: f64,
    pub slow_call: Nanos,
    pub open: Nanos,
    pub open_jitter: Nanos,
    pub probes: u32,
}

/// What a breaker let a call through as: an ordinary call while closed,
/// or one of its probes while half open ([`CircuitBreaker::pass_of`]), so
/// that its end acts on the state it was let through in, not a later one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Call,
    Probe,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    Closed,
    Open {
        until: Nanos,
    },
    HalfOpen {
        sent: u32,
        done: u32,
        failed: u32,
        slow: u32,
    },
}

impl CircuitBreaker {
    pub fn new(cfg: BreakerConfig) -> CircuitBreaker {
        CircuitBreaker {
            cfg,
            state: BreakerState::Closed,
            outcomes: std::collections::VecDeque::new(),
            failures: 0,
            slows: 0,
            half_open_since: 0,
        }
    }

    pub fn state(&self) -> BreakerState {
        self.state
    }

    /// May a call be sent now? In HALF_OPEN each allowed call is a probe.
    pub fn allow(&mut self, now: Nanos) -> bool {
        if let BreakerState::Open { until } = self.state {
            if now < until {
                return false;
            }
            self.state = BreakerState::HalfOpen {
                sent: 0,
                done: 0,
                failed: 0,
                slow: 0,
            };
            self.half_open_since = now;
        }
        match &mut self.state {
            BreakerState::HalfOpen { sent, .. } if *sent < self.cfg.probes => {
                *sent += 1;
                true
            }
            BreakerState::HalfOpen { .. } => false,
            _ => true,
        }
    }

    /// What a call it let through at `sent_at` went as: a probe if sent
    /// since it went half open and it still is (no probe outlives its half
    /// open state: it closes or opens again only once every probe ended).
    pub fn pass_of(&self, sent_at: Nanos) -> Pass {
        match self.state {
            BreakerState::HalfOpen { .. } if sent_at >= self.half_open_since => Pass::Probe,
            _ => Pass::Call,
        }
    }

    /// A call let through as `pass` ends without an outcome of its own:
    /// only a probe has a place to give back (a call sent before the
    /// breaker opened would give back another call's probe).
    pub fn forget_pass(&mut self, pass: Pass) {
        if pass == Pass::Probe {
            self.forget();
        }
    }

    /// [`CircuitBreaker::record`] for a call let through as `pass`: a call
    /// sent before the breaker opened counts while it is closed, and no
    /// more while it is half open than while it is open (it is none of
    /// the probes the decision waits for).
    pub fn record_pass(
        &mut self,
        pass: Pass,
        now: Nanos,
        failed: bool,
        duration: Nanos,
        jitter: f64,
    ) {
        if pass == Pass::Call && matches!(self.state, BreakerState::HalfOpen { .. }) {
            return;
        }
        self.record(now, failed, duration, jitter);
    }

    /// Would [`CircuitBreaker::allow`] let a call through now? Asks without
    /// changing anything (no probe is taken).
    pub fn would_allow(&self, now: Nanos) -> bool {
        match self.state {
            BreakerState::Closed => true,
            BreakerState::Open { until } => now >= until,
            BreakerState::HalfOpen { sent, .. } => sent < self.cfg.probes,
        }
    }

    /// A call it allowed ends without an outcome of its own (its caller
    /// stopped waiting, or another copy answered): in HALF_OPEN the probe
    /// is given back, so that a probe never answered cannot hold it there.
    pub fn forget(&mut self) {
        if let BreakerState::HalfOpen { sent, done, .. } = &mut self.state
            && *sent > *done
        {
            *sent -= 1;
        }
    }

    /// Records the outcome of a call that was allowed and took `duration`.
    /// `jitter` is a uniform draw in [0, 1) for the next open time.
    pub fn record(&mut self, now: Nanos, failed: bool, duration: Nanos, jitter: f64) {
        let slow = duration > self.cfg.slow_call;
        match &mut self.state {
            BreakerState::Closed => {
                self.outcomes.push_back((now, failed, slow));
                self.failures += usize::from(failed);
                self.slows += usize::from(slow);
                let since = now.saturating_sub(self.cfg.window_time);
                while match self.cfg.window_time {
                    0 => self.outcomes.len() > self.cfg.window,
                    _ => self.outcomes.front().is_some_and(|o| o.0 <= since),
                } {
                    let (_, failed, slow) = self.outcomes.pop_front().expect("a full window");
                    self.failures -= usize::from(failed);
                    self.slows -= usize::from(slow);
                }
                let n = self.outcomes.len();
                if n >= self.cfg.min_samples {
                    let (failures, slows) = (self.failures as f64, self.slows as f64);
                    if failures >= self.cfg.failure_rate * n as f64
                        || slows >= self.cfg.slow_call_rate * n as f64
                    {
                        self.trip(now, jitter);
                    }
                }
            }
            // Resilience4j: once min(min_samples, probes) probes have
            // ended, either rate at its threshold opens it again, else it
            // closes.
            BreakerState::HalfOpen {
                done,
                failed: f,
                slow: s,
                ..
            } => {
                *done += 1;
                *f += failed as u32;
                *s += slow as u32;
                if *done as usize == self.cfg.min_samples.min(self.cfg.probes as usize) {
                    let n = *done as f64;
                    if (*f as f64) >= self.cfg.failure_rate * n
                        || (*s as f64) >= self.cfg.slow_call_rate * n
                    {
                        self.trip(now, jitter);
                    } else {
                        self.state = BreakerState::Closed;
                        self.outcomes.clear();
                        (self.failures, self.slows) = (0, 0);
                    }
                }
            }
            // Calls sent before it opened may still end: they do not count.
            BreakerState::Open { .. } => {}
        }
    }

    fn trip(&mut self, now: Nanos, jitter: f64) {
        let extra = round_nanos(self.cfg.open_jitter as f64 * jitter);
        self.state = BreakerState::Open {
            until: now + self.cfg.open + extra,
        };
    }
}

/// The rule of an AIMD concurrency limit.
#[derive(Clone, Debug, PartialEq)]
pub struct AimdRule {
    pub min: u32,
    pub max: u32,
    /// A window whose mean latency exceeds this is a breach.
    pub latency: Nanos,
    /// Multiplicative decrease after `breaches` breaching windows in a row.
    pub decrease: f64,
    /// Growth after a clean window: `increase` plus `increase_percent` of
    /// the limit.
    pub increase: u32,
    pub increase_percent: f64,
    pub min_samples: u32,
    pub breaches: u32,
    /// A window closes at the first completion this long after it opened.
    pub interval: Nanos,
    /// Shortest time between two changes of the limit.
    pub hold: Nanos,
    /// A window closing with fewer than `min_samples`: `false` keeps it
    /// open until it has them; `true` discards it (no verdict) and ends a
    /// breach streak.
    pub skip_sparse: bool,
    /// A request's latency runs from the start of its service, not from
    /// its arrival.
    pub from_start: bool,
}

/// An AIMD concurrency limit, adjusted on completions.
#[derive(Clone, Debug, PartialEq)]
pub struct AimdLimit {
    pub limit: u32,
    /// The limit as a real number (a percentage step grows it by less
    /// than one); `limit` is its floor.
    estimate: f64,
    rule: AimdRule,
    // The current window.
    samples: u32,
    latency_sum: u128,
    errors: u32,
    breaches: u32,
    last_adjust: Nanos,
    /// When the limit last changed (none yet: the first change may come
    /// at any time, not only `hold` into the run).
    last_change: Option<Nanos>,
    /// The lowest limit reached.
    pub lowest: u32,
}

impl AimdLimit {
    pub fn new(rule: AimdRule) -> AimdLimit {
        AimdLimit {
            limit: rule.max,
            estimate: rule.max as f64,
            lowest: rule.max,
            rule,
            samples: 0,
            latency_sum: 0,
            errors: 0,
            breaches: 0,
            last_adjust: 0,
            last_change: None,
        }
    }

    /// A request finished after `latency` (arrival to reply), `ok` or not.
    pub fn record(&mut self, now: Nanos, latency: Nanos, ok: bool) {
        self.samples += 1;
        self.latency_sum += latency as u128;
        self.errors += !ok as u32;
        let r = &self.rule;
        if now.saturating_sub(self.last_adjust) < r.interval {
            return;
        }
        if self.samples < r.min_samples {
            if r.skip_sparse {
                // No verdict, and the windows around it are no longer
                // consecutive.
                self.breaches = 0;
                self.close_window(now);
            }
            return;
        }
        let breached =
            self.errors > 0 || self.latency_sum > r.latency as u128 * self.samples as u128;
        // Changes at least `hold` apart: a breach streak waits for it.
        let may_change = (self.last_change).is_none_or(|at| now.saturating_sub(at) >= r.hold);
        let before = self.estimate;
        if breached {
            self.breaches += 1;
            if self.breaches >= r.breaches && may_change {
                self.estimate = (self.estimate * r.decrease).floor().max(r.min as f64);
                self.breaches = 0;
            }
        } else {
            self.breaches = 0;
            if may_change {
                let step = r.increase as f64 + self.estimate * r.increase_percent / 100.0;
                self.estimate = (self.estimate + step).min(r.max as f64);
            }
        }
        if self.estimate != before {
            self.last_change = Some(now);
            self.limit = self.estimate as u32;
            self.lowest = self.lowest.min(self.limit);
        }
        self.close_window(now);
    }

    fn close_window(&mut self, now: Nanos) {
        self.samples = 0;
        self.latency_sum = 0;
        self.errors = 0;
        self.last_adjust = now;
    }
}

/// A gradient concurrency limit: Netflix concurrency-limits'
/// `Gradient2Limit` behind a `WindowedLimit`. Each window of
/// `interval` is one sample, its mean latency; a window with fewer than
/// `min_samples` completions is dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct GradientLimit {
    /// The limit as a real number; the usable limit is its floor.
    estimate: f64,
    pub limit: u32,
    min: u32,
    max: u32,
    tolerance: f64,
    smoothing: f64,
    /// Weight of one window in the long-term average (`2 / (n + 1)`).
    alpha: f64,
    min_samples: u32,
    interval: Nanos,
    samples: u32,
    latency_sum: u128,
    /// The most requests in service at a completion of the window.
    most_in_flight: u32,
    last_adjust: Nanos,
    /// Long-term mean latency (ns), and the windows it has seen while it
    /// is a plain mean (`ExpAvgMeasurement`'s warm-up).
    long: f64,
    long_windows: u32,
    pub lowest: u32,
}

/// Gradient2's allowance for queueing on top of the scaled limit.
const GRADIENT_QUEUE: f64 = 4.0;
/// Windows the long-term latency is a plain mean of before it becomes an
/// exponential average (`ExpAvgMeasurement`'s warm-up window).
const GRADIENT_WARMUP: u32 = 10;

impl GradientLimit {
    pub fn new(
        min: u32,
        max: u32,
        tolerance: f64,
        smoothing: f64,
        long_window: u32,
        min_samples: u32,
        interval: Nanos,
    ) -> GradientLimit {
        GradientLimit {
            estimate: max as f64,
            limit: max,
            min,
            max,
            tolerance,
            smoothing,
            alpha: 2.0 / (long_window as f64 + 1.0),
            min_samples,
            interval,
            samples: 0,
            latency_sum: 0,
            most_in_flight: 0,
            last_adjust: 0,
            long: 0.0,
            long_windows: 0,
            lowest: max,
        }
    }

    /// A request finished after `latency` (from the start of its service),
    /// with `in_flight` requests in service when it did.
    pub fn record(&mut self, now: Nanos, latency: Nanos, in_flight: u32) {
        self.samples += 1;
        self.latency_sum += latency as u128;
        self.most_in_flight = self.most_in_flight.max(in_flight);
        if now.saturating_sub(self.last_adjust) < self.interval {
            return;
        }
        let (samples, sum, in_flight) = (self.samples, self.latency_sum, self.most_in_flight);
        self.samples = 0;
        self.latency_sum = 0;
        self.most_in_flight = 0;
        self.last_adjust = now;
        // A sparse window is dropped, not carried on (`WindowedLimit`).
        if samples < self.min_samples {
            return;
        }
        let short = sum as f64 / samples as f64;
        self.long = if self.long_windows < GRADIENT_WARMUP {
            self.long_windows += 1;
            self.long + (short - self.long) / self.long_windows as f64
        } else {
            self.long * (1.0 - self.alpha) + short * self.alpha
        };
        // After a long overload, forget the slow past faster than the
        // average would (Gradient2's rule).
        if self.long > 2.0 * short {
            self.long *= 0.95;
        }
        // A tier using less than half its limit says nothing about it.
        if (in_flight as f64) < self.estimate / 2.0 {
            return;
        }
        let gradient = if short > 0.0 {
            (self.tolerance * self.long / short).clamp(0.5, 1.0)
        } else {
            1.0
        };
        let target = self.estimate * gradient + GRADIENT_QUEUE;
        self.estimate = (self.estimate * (1.0 - self.smoothing) + target * self.smoothing)
            .clamp(self.min as f64, self.max as f64);
        self.limit = self.estimate.floor() as u32;
        self.lowest = self.lowest.min(self.limit);
    }
}

/// A tier's adaptive concurrency limit, by its rule.
#[derive(Clone, Debug, PartialEq)]
pub enum ConcurrencyLimit {
    Aimd(AimdLimit),
    Gradient(GradientLimit),
}

impl ConcurrencyLimit {
    pub fn limit(&self) -> u32 {
        match self {
            ConcurrencyLimit::Aimd(l) => l.limit,
            ConcurrencyLimit::Gradient(l) => l.limit,
        }
    }

    /// The lowest limit reached.
    pub fn lowest(&self) -> u32 {
        match self {
            ConcurrencyLimit::Aimd(l) => l.lowest,
            ConcurrencyLimit::Gradient(l) => l.lowest,
        }
    }

    /// A request that arrived at `arrived` and took its slot at `started`
    /// finished at `now`, `ok` or not, with `in_flight` requests in
    /// service. AIMD's latency is from its arrival (the source text's
    /// rule); the gradient's from its start, as Netflix's limiter measures
    /// from the permit's acquisition, so that the queue its own limit
    /// makes does not read as a slower service.
    pub fn record(&mut self, now: Nanos, arrived: Nanos, started: Nanos, ok: bool, in_flight: u32) {
        match self {
            ConcurrencyLimit::Aimd(l) => {
                let from = if l.rule.from_start { started } else { arrived };
                l.record(now, now - from, ok)
            }
            ConcurrencyLimit::Gradient(l) => l.record(now, now - started, in_flight),
        }
    }
}

/// A token bucket: `rate` tokens per second up to `burst`; each admitted
/// request takes one.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    rate_per_ns: f64,
    burst: f64,
    tokens: f64,
    last: Nanos,
}

impl TokenBucket {
    /// Starts full.
    pub fn new(rate_per_s: f64, burst: f64) -> TokenBucket {
        TokenBucket {
            rate_per_ns: rate_per_s / 1e9,
            burst,
            tokens: burst,
            last: 0,
        }
    }

    /// Takes a token if there is one.
    pub fn try_take(&mut self, now: Nanos) -> bool {
        self.tokens = (self.tokens + (now - self.last) as f64 * self.rate_per_ns).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// A tier's rate limit, by kind: each admits a request or not, in time
/// order.
#[derive(Clone, Debug, PartialEq)]
pub enum RateLimiter {
    Token(TokenBucket),
    Fixed(FixedWindow),
    Sliding(SlidingWindow),
    Leaky(LeakyBucket),
    /// One limiter per tenant key (`rate_limit_key = "tenant"`).
    Keyed(Box<crate::tenant::KeyedLimits>),
}

impl RateLimiter {
    /// `rate_per_s` as the kind spells it: a token bucket of `burst`, or a
    /// window of `window` admitting `rate_per_s` x its length.
    pub fn new(kind: RateLimitKind, rate_per_s: f64, burst: f64, window: Nanos) -> RateLimiter {
        let limit = (rate_per_s * window as f64 / 1e9).round().max(1.0) as u64;
        match kind {
            RateLimitKind::TokenBucket => RateLimiter::Token(TokenBucket::new(rate_per_s, burst)),
            RateLimitKind::FixedWindow => RateLimiter::Fixed(FixedWindow::new(limit, window)),
            RateLimitKind::SlidingWindow => RateLimiter::Sliding(SlidingWindow::new(limit, window)),
            RateLimitKind::LeakyBucket => {
                RateLimiter::Leaky(LeakyBucket::new(rate_per_s, burst.round() as u64))
            }
        }
    }

    /// Admits one request of tenant `key` at `now`, or not (only a keyed
    /// limiter reads the key). A leaky bucket has admitted it already, on
    /// its way into the tier (`LeakyBucket::admit_at`).
    #[inline]
    pub fn try_take(&mut self, now: Nanos, key: u32) -> bool {
        match self {
            RateLimiter::Token(b) => b.try_take(now),
            RateLimiter::Fixed(w) => w.try_take(now),
            RateLimiter::Sliding(w) => w.try_take(now),
            RateLimiter::Leaky(_) => true,
            RateLimiter::Keyed(k) => k.try_take(key, now),
        }
    }
}

/// The leaky bucket as a queue (nginx's `limit_req` with a `burst` and no
/// `nodelay`): requests leave it into the tier one every `interval`
/// exactly; one that arrives after the previous has left passes at once,
/// others wait their turn while at most `size` wait, and beyond that are
/// rejected. Only the instant the next may leave is kept: the requests
/// waiting are those whose turns, `interval` apart, are still ahead.
#[derive(Clone, Debug, PartialEq)]
pub struct LeakyBucket {
    interval: Nanos,
    size: u64,
    next: Nanos,
}

impl LeakyBucket {
    pub fn new(rate_per_s: f64, size: u64) -> LeakyBucket {
        LeakyBucket {
            interval: (1e9 / rate_per_s).round().max(1.0) as Nanos,
            size,
            next: 0,
        }
    }

    /// When a request arriving at `now` leaves the bucket into the tier
    /// (`now` itself if none is ahead of it), or `None` if the bucket is
    /// full.
    pub fn admit_at(&mut self, now: Nanos) -> Option<Nanos> {
        let at = now.max(self.next);
        // Itself and those ahead of it: their turns are in (now, at].
        if at > now && (at - now).div_ceil(self.interval) > self.size {
            return None;
        }
        self.next = at + self.interval;
        Some(at)
    }

    /// Nobody waits in it any more: the next request enters at once.
    pub fn empty(&mut self) {
        self.next = 0;
    }
}

/// At most `limit` requests per window aligned on multiples of its length:
/// a burst at the end of one window and another at the start of the next
/// pass together (the boundary double burst).
#[derive(Clone, Debug, PartialEq)]
pub struct FixedWindow {
    limit: u64,
    window: Nanos,
    start: Nanos,
    count: u64,
}

impl FixedWindow {
    pub fn new(limit: u64, window: Nanos) -> FixedWindow {
        FixedWindow {
            limit,
            window,
            start: 0,
            count: 0,
        }
    }

    pub fn try_take(&mut self, now: Nanos) -> bool {
        let start = now / self.window * self.window;
        if start != self.start {
            (self.start, self.count) = (start, 0);
        }
        let ok = self.count < self.limit;
        self.count += ok as u64;
        ok
    }
}

/// The sliding-window counter: the count of the current window plus the
/// previous window's, weighted by the share of it still inside the window
/// that ends now, must stay below `limit`. It smooths the fixed window's
/// boundary burst with two counters (no log of request times).
#[derive(Clone, Debug, PartialEq)]
pub struct SlidingWindow {
    limit: u64,
    window: Nanos,
    start: Nanos,
    count: u64,
    previous: u64,
}

impl SlidingWindow {
    pub fn new(limit: u64, window: Nanos) -> SlidingWindow {
        SlidingWindow {
            limit,
            window,
            start: 0,
            count: 0,
            previous: 0,
        }
    }

    pub fn try_take(&mut self, now: Nanos) -> bool {
        let start = now / self.window * self.window;
        if start != self.start {
            self.previous = if start == self.start + self.window {
                self.count
            } else {
                0
            };
            (self.start, self.count) = (start, 0);
        }
        let left = 1.0 - (now - start) as f64 / self.window as f64;
        let ok = self.previous as f64 * left + (self.count as f64) < self.limit as f64;
        self.count += ok as u64;
        ok
    }
}

/// CoDel's dequeue decision (RFC 8289), in integer nanoseconds but for
/// the control law's square root.
#[derive(Clone, Debug, PartialEq)]
pub struct CoDel {
    target: Nanos,
    interval: Nanos,
    /// When the sojourn time has been above target for an interval; 0: not above.
    first_above: Nanos,
    dropping: bool,
    drop_next: Nanos,
    count: u32,
    last_count: u32,
}

impl CoDel {
    pub fn new(target_s: f64, interval_s: f64) -> CoDel {
        CoDel {
            target: secs_to_nanos(target_s),
            interval: secs_to_nanos(interval_s),
            first_above: 0,
            dropping: false,
            drop_next: 0,
            count: 0,
            last_count: 0,
        }
    }

    fn control_law(&self, t: Nanos) -> Nanos {
        t + round_nanos(self.interval as f64 / libm::sqrt(self.count as f64))
    }

    /// Should the request just dequeued, after `sojourn` in the queue, be
    /// dropped? `queue_empty`: nothing is left behind it.
    pub fn should_drop(&mut self, now: Nanos, sojourn: Nanos, queue_empty: bool) -> bool {
        let ok_to_drop = if sojourn < self.target || queue_empty {
            self.first_above = 0;
            false
        } else if self.first_above == 0 {
            self.first_above = now + self.interval;
            false
        } else {
            now >= self.first_above
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
                return false;
            }
            if now >= self.drop_next {
                self.count += 1;
                self.drop_next = self.control_law(self.drop_next);
                return true;
            }
            false
        } else if ok_to_drop {
            self.dropping = true;
            // Resume near the previous drop rate if dropping stopped recently.
            let delta = self.count.saturating_sub(self.last_count);
            self.count = if delta > 1 && now.saturating_sub(self.drop_next) < 16 * self.interval {
                delta
            } else {
                1
            };
            self.last_count = self.count;
            self.drop_next = self.control_law(now);
            true
        } else {
            false
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    Fixed(Nanos),
    FullJitter { base: Nanos, cap: Nanos },
}

impl Backoff {
    pub fn new(kind: crate::scenario::BackoffKind, base_s: f64, cap_s: f64) -> Backoff {
        match kind {
            crate::scenario::BackoffKind::Fixed => Backoff::Fixed(secs_to_nanos(base_s)),
            crate::scenario::BackoffKind::FullJitter => Backoff::FullJitter {
                base: secs_to_nanos(base_s),
                cap: secs_to_nanos(cap_s),
            },
        }
    }

    /// The largest wait before retry `n` (1-based).
    pub fn ceiling(&self, n: u32) -> Nanos {
        match *self {
            Backoff::Fixed(d) => d,
            Backoff::FullJitter { base, cap } => {
                let doubled = base
                    .checked_shl(n.saturating_sub(1))
                    .filter(|d| d >> n.saturating_sub(1) == base);
                doubled.unwrap_or(Nanos::MAX).min(cap)
            }
        }
    }

    /// The wait before retry `n` (1-based). A fixed backoff draws nothing.
    pub fn delay(&self, n: u32, rng: &mut Stream) -> Nanos {
        match self {
            Backoff::Fixed(d) => *d,
            Backoff::FullJitter { .. } => rng.below_or_eq(self.ceiling(n)),
        }
    }
}

/// Outlier ejection's parameters (Envoy's consecutive failures rule).
#[derive(Clone, Copy, Debug)]
pub struct OutlierRule {
    /// Failed attempts in a row that eject a replica.
    pub consecutive: u32,
    /// Ejection time per unit of the replica's multiplier.
    pub base: Nanos,
    /// The longest ejection (`max_ejection_time`).
    pub max: Nanos,
    /// Most replicas ejected at once, the new one included, in percent.
    pub max_percent: f64,
    /// Ejected replicas return at a tick of this interval; each tick a
    /// replica spends back after its first lowers its multiplier.
    pub interval: Nanos,
    /// Below this percentage of replicas not ejected, all are chosen from.
    pub panic_percent: f64,
}

/// One caller's client-side load balancing over the replicas of the tier
/// it calls, with outlier ejection: everything here is this caller's own
/// view (its requests in flight, its cursor), never another caller's.
#[derive(Clone, Debug)]
pub struct LoadBalancer {
    rule: Balancer,
    /// This caller's requests in flight, per replica.
    outstanding: Vec<u32>,
    /// Where the next round starts (round robin, and least outstanding's
    /// ties), or the pinned replica (pin until error).
    cursor: usize,
    outlier: Option<OutlierRule>,
    /// Per replica: failed attempts in a row, times ejected, its ejection
    /// multiplier as of its last ejection, and the end of its ejection (in
    /// the past when it is not ejected).
    failures: Vec<u32>,
    ejections: Vec<u32>,
    multiplier: Vec<u32>,
    ejected_until: Vec<Nanos>,
    /// The ends of the ejections not yet over, earliest first: the
    /// replicas ejected now are counted without a look at each (a pick
    /// while any is out counts them), and none is when it is empty.
    returns: Vec<Nanos>,
    /// Replica-nanoseconds of the ejections so far, to their ends.
    ejected_ns: u128,
    /// Scratch space for the replicas a pick may choose, reused.
    candidates: Vec<usize>,
}

impl LoadBalancer {
    pub fn new(rule: Balancer, replicas: usize, outlier: Option<OutlierRule>) -> LoadBalancer {
        LoadBalancer {
            rule,
            outstanding: vec![0; replicas],
            cursor: 0,
            outlier,
            failures: vec![0; replicas],
            ejections: vec![0; replicas],
            multiplier: vec![0; replicas],
            ejected_until: vec![0; replicas],
            returns: Vec::new(),
            ejected_ns: 0,
            candidates: Vec::with_capacity(replicas),
        }
    }

    /// The number of replicas it balances over.
    pub fn replicas(&self) -> usize {
        self.outstanding.len()
    }

    pub fn outstanding(&self, replica: usize) -> u32 {
        self.outstanding[replica]
    }

    pub fn is_ejected(&self, replica: usize, now: Nanos) -> bool {
        now < self.ejected_until[replica]
    }

    /// The number of replicas ejected at `now`, forgetting the ejections
    /// over by then (time only moves forward).
    fn ejected_now(&mut self, now: Nanos) -> usize {
        // Most picks find none over (or none ejected at all): nothing to drop.
        if self.returns.first().is_some_and(|&until| until <= now) {
            let over = self.returns.partition_point(|&until| until <= now);
            self.returns.drain(..over);
        }
        self.returns.len()
    }

    /// The replica for a request sent at `now`, other than those in
    /// `avoid` when another may be chosen. Ejected replicas are skipped,
    /// unless fewer than the panic threshold's share are not (then all may
    /// be chosen: Envoy's panic mode).
    pub fn pick(&mut self, now: Nanos, avoid: &[usize], rng: &mut Stream) -> usize {
        self.pick_among(now, avoid, &[], rng)
    }

    /// [`LoadBalancer::pick`] among the replicas `allowed` lets through (a
    /// replica whose own circuit breaker is open is never chosen, ejected
    /// or not; empty: all are allowed). At least one must be allowed.
    pub fn pick_among(
        &mut self,
        now: Nanos,
        avoid: &[usize],
        allowed: &[bool],
        rng: &mut Stream,
    ) -> usize {
        let all_allowed = allowed.iter().all(|&a| a);
        let chosen = if all_allowed && avoid.len() < 2 && self.ejected_now(now) == 0 {
            self.pick_from_all(avoid.first().copied(), rng)
        } else {
            self.pick_from_candidates(now, avoid, allowed, rng)
        };
        self.cursor = match self.rule {
            // The pin stays where it is until an error moves it (or it
            // cannot be chosen): a hedge or a retry sent elsewhere leaves it.
            Balancer::PinUntilError if avoid.contains(&self.cursor) => self.cursor,
            Balancer::PinUntilError => chosen,
            _ => (chosen + 1) % self.outstanding.len(),
        };
        chosen
    }

    /// The pick when every replica may be chosen but `avoid`: the same
    /// choice and draws as [`Self::pick_from_candidates`] would make from
    /// the list of them, without building it (a pick per request, over
    /// every replica).
    fn pick_from_all(&self, avoid: Option<usize>, rng: &mut Stream) -> usize {
        let n = self.outstanding.len();
        // With one replica, avoiding it would leave none: it is chosen.
        let skip = avoid.filter(|_| n > 1);
        let len = n - usize::from(skip.is_some());
        // The `i`-th candidate in replica order.
        let at = |i: usize| i + usize::from(skip.is_some_and(|x| i >= x));
        match self.rule {
            Balancer::RoundRobin | Balancer::PinUntilError => match skip {
                Some(x) if x == self.cursor => (x + 1) % n,
                _ => self.cursor,
            },
            Balancer::Random => at(rng.below_or_eq(len as u64 - 1) as usize),
            // The first in turn of the fewest outstanding: replicas in
            // turn from the cursor, a later one only if strictly fewer (no
            // key computed per replica), and none can beat none at all.
            Balancer::LeastOutstanding => {
                let mut best: Option<(usize, u32)> = None;
                for r in (self.cursor..n).chain(0..self.cursor) {
                    let o = self.outstanding[r];
                    if Some(r) == skip || best.is_some_and(|(_, b)| o >= b) {
                        continue;
                    }
                    best = Some((r, o));
                    if o == 0 {
                        break;
                    }
                }
                best.expect("a replica").0
            }
            Balancer::P2c if len == 1 => at(0),
            Balancer::P2c => {
                let a = rng.below_or_eq(len as u64 - 1) as usize;
                let mut b = rng.below_or_eq(len as u64 - 2) as usize;
                b += (b >= a) as usize;
                let (a, b) = (at(a), at(b));
                if self.outstanding[b] < self.outstanding[a] {
                    b
                } else {
                    a
                }
            }
        }
    }

    /// The pick among the replicas `allowed` lets through that are not
    /// ejected (unless in panic mode), other than those in `avoid` if
    /// possible.
    fn pick_from_candidates(
        &mut self,
        now: Nanos,
        avoid: &[usize],
        allowed: &[bool],
        rng: &mut Stream,
    ) -> usize {
        let n = self.outstanding.len();
        let ok = |r: usize| allowed.is_empty() || allowed[r];
        let healthy = n - self.ejected_now(now);
        let panic = (self.outlier.as_ref())
            .is_some_and(|rule| 100.0 * healthy as f64 / (n as f64) < rule.panic_percent);
        let mut c = std::mem::take(&mut self.candidates);
        let out = |r: usize| !panic && self.is_ejected(r, now);
        c.clear();
        // A plain loop: as a filter, each test was a call per replica.
        for r in 0..n {
            if ok(r) && !out(r) && !avoid.contains(&r) {
                c.push(r);
            }
        }
        if c.is_empty() {
            c.extend((0..n).filter(|&r| ok(r) && !out(r)));
        }
        if c.is_empty() {
            c.extend((0..n).filter(|&r| ok(r)));
        }
        assert!(!c.is_empty(), "a pick with no replica allowed");
        // Candidates in turn from the cursor: round robin's order.
        let in_turn = |r: usize| (r + n - self.cursor) % n;
        let chosen = match self.rule {
            // Pin until error: the pin, or the next one after it.
            Balancer::RoundRobin | Balancer::PinUntilError => (c.iter().copied())
                .min_by_key(|r| in_turn(*r))
                .expect("a candidate"),
            Balancer::Random => c[rng.below_or_eq(c.len() as u64 - 1) as usize],
            Balancer::LeastOutstanding => (c.iter().copied())
                .min_by_key(|r| (self.outstanding[*r], in_turn(*r)))
                .expect("a candidate"),
            Balancer::P2c if c.len() == 1 => c[0],
            Balancer::P2c => {
                let a = rng.below_or_eq(c.len() as u64 - 1) as usize;
                let mut b = rng.below_or_eq(c.len() as u64 - 2) as usize;
                b += (b >= a) as usize;
                let (a, b) = (c[a], c[b]);
                if self.outstanding[b] < self.outstanding[a] {
                    b
                } else {
                    a
                }
            }
        };
        self.candidates = c;
        chosen
    }

    /// A request to `replica` leaves.
    pub fn sent(&mut self, replica: usize) {
        self.outstanding[replica] += 1;
    }

    /// A request to `replica` is no longer waited for (answered, timed out
    /// or cancelled).
    pub fn released(&mut self, replica: usize) {
        self.outstanding[replica] -= 1;
    }

    /// An attempt to `replica` ended at `now`, `failed` or not. Returns the
    /// end of the ejection it causes, if it causes one: at the first
    /// interval tick at or after `now + base x multiplier` (at most `max`).
    pub fn record(&mut self, replica: usize, failed: bool, now: Nanos) -> Option<Nanos> {
        if !failed {
            self.failures[replica] = 0;
            return None;
        }
        if self.rule == Balancer::PinUntilError && replica == self.cursor {
            self.cursor = (replica + 1) % self.outstanding.len();
        }
        let rule = self.outlier?;
        // Envoy counts on while a replica is ejected, but fires only on
        // reaching the count and starts it again when the replica returns:
        // failures while it is out change nothing.
        if self.is_ejected(replica, now) {
            return None;
        }
        self.failures[replica] += 1;
        if self.failures[replica] < rule.consecutive {
            return None;
        }
        // Started again whether or not it is ejected: a refused ejection
        // takes another run of failures to be tried again.
        self.failures[replica] = 0;
        let n = self.outstanding.len();
        let ejected = self.ejected_now(now);
        let share = 100.0 * (ejected + 1) as f64 / n as f64;
        if share > rule.max_percent {
            return None;
        }
        // The multiplier went down by one at each tick after the first
        // that the replica spent back (ticks at the instant of this
        // failure come first), and goes up by one while base x it is
        // under max + base.
        let mut multiplier = self.multiplier[replica];
        if self.ejections[replica] > 0 {
            let back = self.ejected_until[replica];
            let ticks = (now - back) / rule.interval;
            multiplier = multiplier.saturating_sub(u32::try_from(ticks).unwrap_or(u32::MAX));
        }
        if u128::from(multiplier) * u128::from(rule.base)
            < u128::from(rule.max) + u128::from(rule.base)
        {
            multiplier += 1;
        }
        self.multiplier[replica] = multiplier;
        self.ejections[replica] += 1;
        let time = rule
            .base
            .saturating_mul(Nanos::from(multiplier))
            .min(rule.max);
        let until = now
            .saturating_add(time)
            .div_ceil(rule.interval)
            .saturating_mul(rule.interval);
        self.ejected_until[replica] = until;
        let at = self.returns.partition_point(|&end| end <= until);
        self.returns.insert(at, until);
        self.ejected_ns += (until - now) as u128;
        Some(until)
    }

    /// Replica-nanoseconds spent ejected up to `horizon`.
    pub fn ejected_ns(&self, horizon: Nanos) -> u128 {
        let beyond: u128 = (self.ejected_until.iter())
            .map(|u| u.saturating_sub(horizon) as u128)
            .sum();
        self.ejected_ns - beyond
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::BackoffKind;

    fn balancer(rule: Balancer, n: usize) -> (LoadBalancer, Stream) {
        (LoadBalancer::new(rule, n, None), Stream::new(1, "test"))
    }

    #[test]
    fn round_robin_cycles_and_skips_what_it_must_avoid() {
        let (mut lb, mut rng) = balancer(Balancer::RoundRobin, 3);
        let picks: Vec<usize> = (0..6).map(|_| lb.pick(0, &[], &mut rng)).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2]);
        assert_eq!(lb.pick(0, &[0], &mut rng), 1, "0 is avoided");
        assert_eq!(lb.pick(0, &[2], &mut rng), 0, "2 is avoided");
        assert_eq!(lb.pick(0, &[1, 2], &mut rng), 0, "1 and 2 are avoided");
        assert_eq!(lb.pick(0, &[0, 1, 2], &mut rng), 1, "none is left: in turn");
    }

    #[test]
    fn least_outstanding_never_picks_a_busier_replica() {
        let (mut lb, mut rng) = balancer(Balancer::LeastOutstanding, 4);
        for (r, n) in [(0, 3), (1, 1), (2, 2), (3, 1)] {
            (0..n).for_each(|_| lb.sent(r));
        }
        for _ in 0..20 {
            let r = lb.pick(0, &[], &mut rng);
            let least = (0..4).map(|x| lb.outstanding(x)).min().unwrap();
            assert_eq!(lb.outstanding(r), least, "picked {r}");
            lb.sent(r);
        }
        // Ties go in turn, not always to the lowest index.
        let (mut lb, mut rng) = balancer(Balancer::LeastOutstanding, 3);
        let picks: Vec<usize> = (0..3).map(|_| lb.pick(0, &[], &mut rng)).collect();
        assert_eq!(picks, [0, 1, 2]);
    }

    #[test]
    fn p2c_picks_the_less_loaded_of_two_distinct_replicas() {
        let (mut lb, mut rng) = balancer(Balancer::P2c, 2);
        (0..5).for_each(|_| lb.sent(0));
        // With two replicas both are drawn: always the idle one.
        for _ in 0..50 {
            assert_eq!(lb.pick(0, &[], &mut rng), 1);
        }
        // With three, the busiest can never win a pair.
        let (mut lb, mut rng) = balancer(Balancer::P2c, 3);
        (0..5).for_each(|_| lb.sent(2));
        lb.sent(1);
        let picks: Vec<usize> = (0..200).map(|_| lb.pick(0, &[], &mut rng)).collect();
        assert!(!picks.contains(&2));
        assert!(
            picks.contains(&0) && picks.contains(&1),
            "1 wins its pair with 2"
        );
    }

    /// The pick over every replica, without a list of candidates, makes
    /// the list's choice with the same draws, whatever the rule, the
    /// replica avoided, the loads and the cursor.
    #[test]
    fn a_pick_over_every_replica_is_the_pick_from_their_list() {
        let rules = [
            Balancer::RoundRobin,
            Balancer::Random,
            Balancer::LeastOutstanding,
            Balancer::P2c,
            Balancer::PinUntilError,
        ];
        let mut setup = Stream::new(7, "setup");
        for rule in rules {
            for n in 1..=6 {
                let (mut lb, _) = balancer(rule, n);
                for case in 0..200 {
                    for r in 0..n {
                        lb.outstanding[r] = setup.below_or_eq(3) as u32;
                    }
                    lb.cursor = setup.below_or_eq(n as u64 - 1) as usize;
                    let avoid = (case % 3 > 0).then(|| setup.below_or_eq(n as u64 - 1) as usize);
                    let (mut fast, mut listed) = (Stream::new(case, "p"), Stream::new(case, "p"));
                    let picked = lb.pick_from_all(avoid, &mut fast);
                    let avoided: Vec<usize> = avoid.into_iter().collect();
                    let from_list = lb.pick_from_candidates(0, &avoided, &[], &mut listed);
                    assert_eq!(picked, from_list, "{rule:?}, {n} replicas, avoid {avoid:?}");
                    assert_eq!(fast.uniform(), listed.uniform(), "the same draws");
                }
            }
        }
    }

    #[test]
    fn pin_until_error_moves_on_an_error_only() {
        let (mut lb, mut rng) = balancer(Balancer::PinUntilError, 3);
        assert!((0..5).all(|_| lb.pick(0, &[], &mut rng) == 0));
        lb.record(0, false, 0);
        assert_eq!(lb.pick(0, &[], &mut rng), 0, "a success keeps the pin");
        lb.record(0, true, 0);
        assert!((0..5).all(|_| lb.pick(0, &[], &mut rng) == 1));
        lb.record(0, true, 0);
        assert_eq!(
            lb.pick(0, &[], &mut rng),
            1,
            "an old replica's error does not move it"
        );
        // A hedge (or a retry) sent elsewhere leaves the pin.
        assert_eq!(lb.pick(0, &[1], &mut rng), 2);
        assert_eq!(lb.pick(0, &[], &mut rng), 1, "still pinned");
    }

    fn outlier(max_percent: f64) -> OutlierRule {
        OutlierRule {
            consecutive: 3,
            base: 30 * SEC,
            max: 300 * SEC,
            max_percent,
            interval: 10 * SEC,
            panic_percent: 50.0,
        }
    }

    const SEC: Nanos = 1_000_000_000;

    /// Three failures in a row at `at`: the end of the ejection they cause.
    fn fail(lb: &mut LoadBalancer, r: usize, at: Nanos) -> Option<Nanos> {
        (0..3).filter_map(|_| lb.record(r, true, at)).last()
    }

    #[test]
    fn ejection_follows_consecutive_failures_and_lasts_base_times_its_multiplier() {
        let mut lb = LoadBalancer::new(Balancer::RoundRobin, 4, Some(outlier(25.0)));
        let mut rng = Stream::new(1, "test");
        assert_eq!(lb.record(1, true, SEC), None);
        assert_eq!(lb.record(1, false, SEC), None, "an ok resets the count");
        assert_eq!(lb.record(1, true, SEC), None);
        assert_eq!(lb.record(1, true, SEC), None);
        // Third in a row at 5 s: back at 35 s, the next 10 s tick is 40 s.
        assert_eq!(lb.record(1, true, 5 * SEC), Some(40 * SEC));
        assert!(lb.is_ejected(1, 39 * SEC) && !lb.is_ejected(1, 40 * SEC));
        let picks: Vec<usize> = (0..6).map(|_| lb.pick(20 * SEC, &[], &mut rng)).collect();
        assert!(!picks.contains(&1), "no traffic while ejected: {picks:?}");
        // Failures while it is out change nothing, and its count starts
        // again when it returns.
        assert_eq!(fail(&mut lb, 1, 30 * SEC), None);
        assert_eq!(lb.record(1, true, 40 * SEC), None);
        assert_eq!(lb.record(1, true, 40 * SEC), None);
        // Back at 40 s, ejected again at 49 s (no tick since its return):
        // multiplier 2, 49 + 60 = 109 -> 110 s.
        assert_eq!(lb.record(1, true, 49 * SEC), Some(110 * SEC));
        // Back at 110 s; the ticks at 120, 130 and 140 s lower the
        // multiplier by two (the first one after its return does not):
        // 0, then 1 at this ejection: 140 + 30 -> 170 s.
        assert_eq!(fail(&mut lb, 1, 140 * SEC), Some(170 * SEC));
        // Without ticks between, the multiplier climbs while 30 s x it is
        // under max + base (90 s), to 3, and the ejection stays at max.
        let mut lb = LoadBalancer::new(
            Balancer::RoundRobin,
            4,
            Some(OutlierRule {
                max: 60 * SEC,
                ..outlier(25.0)
            }),
        );
        let mut at = 0;
        let mut lengths = Vec::new();
        for _ in 0..5 {
            let until = fail(&mut lb, 1, at).expect("ejected");
            lengths.push((until - at) / SEC);
            at = until;
        }
        assert_eq!(lengths, [30, 60, 60, 60, 60]);
        assert_eq!(lb.multiplier[1], 3);
    }

    #[test]
    fn at_most_the_max_share_is_ejected_the_new_one_included() {
        // 10% of 4 replicas: one would be 25%, so none is ejected.
        let mut lb = LoadBalancer::new(Balancer::RoundRobin, 4, Some(outlier(10.0)));
        assert_eq!(fail(&mut lb, 0, 0), None);
        // 25%: one, not a second (50%).
        let mut lb = LoadBalancer::new(Balancer::RoundRobin, 4, Some(outlier(25.0)));
        assert!(fail(&mut lb, 0, 0).is_some());
        assert_eq!(fail(&mut lb, 1, 0), None, "25% already ejected");
        // 50% of 4: two may be ejected, not three.
        let mut lb = LoadBalancer::new(Balancer::RoundRobin, 4, Some(outlier(50.0)));
        assert!(fail(&mut lb, 0, 0).is_some());
        assert!(fail(&mut lb, 1, 0).is_some());
        assert_eq!(fail(&mut lb, 2, 0), None);
        assert!(!lb.is_ejected(2, 0));
        // A refused ejection starts the count again: two more failures do
        // not try again, the third does (and is refused again).
        assert_eq!(lb.record(2, true, 0), None);
        assert_eq!(lb.record(2, true, 0), None);
        assert_eq!(lb.failures[2], 2);
        assert_eq!(lb.record(2, true, 0), None);
        assert_eq!(lb.failures[2], 0);
    }

    #[test]
    fn below_the_panic_threshold_every_replica_is_chosen() {
        let mut rng = Stream::new(1, "test");
        // Two of four ejected: half are not, which is not below 50%.
        let mut lb = LoadBalancer::new(Balancer::RoundRobin, 4, Some(outlier(75.0)));
        assert!(fail(&mut lb, 0, 0).is_some() && fail(&mut lb, 1, 0).is_some());
        let picks: Vec<usize> = (0..4).map(|_| lb.pick(0, &[], &mut rng)).collect();
        assert_eq!(picks, [2, 3, 2, 3]);
        // Three of four: a quarter are not, and every replica is chosen.
        assert!(fail(&mut lb, 2, 0).is_some());
        let picks: Vec<usize> = (0..4).map(|_| lb.pick(0, &[], &mut rng)).collect();
        assert_eq!(picks, [0, 1, 2, 3]);
        // A threshold of 0: never, while one is left.
        let rule = OutlierRule {
            panic_percent: 0.0,
            ..outlier(75.0)
        };
        let mut lb = LoadBalancer::new(Balancer::RoundRobin, 4, Some(rule));
        for r in 0..3 {
            assert!(fail(&mut lb, r, 0).is_some());
        }
        let picks: Vec<usize> = (0..3).map(|_| lb.pick(0, &[], &mut rng)).collect();
        assert_eq!(picks, [3, 3, 3]);
    }

    /// The count of the replicas ejected now, kept from the ejections'
    /// ends, is the count of those whose ejection has not ended, at every
    /// step of a random run of failures, successes and picks.
    #[test]
    fn the_ejected_count_kept_is_the_count_of_replicas_out() {
        let mut steps = Stream::new(3, "steps");
        let mut lb = LoadBalancer::new(Balancer::P2c, 8, Some(outlier(60.0)));
        let mut now = 0;
        for _ in 0..20_000 {
            now += steps.below_or_eq(SEC / 2);
            let r = steps.below_or_eq(7) as usize;
            lb.record(r, steps.uniform() < 0.7, now);
            lb.pick(now, &[], &mut steps);
            let out = (0..8).filter(|&r| lb.is_ejected(r, now)).count();
            assert_eq!(lb.ejected_now(now), out, "at {now}");
        }
        assert!(lb.ejections.iter().sum::<u32>() > 100);
    }

    #[test]
    fn throttle_follows_grfc_a6_in_milli_tokens() {
        let mut t = RetryThrottle::new(10.0, 0.1);
        assert_eq!(t.milli_tokens(), 10_000);
        // 4 failures: 6000 > 5000, retries still allowed.
        for _ in 0..4 {
            t.on_failure();
        }
        assert!(t.retry_allowed());
        // The fifth brings it to exactly half: no retry (strictly more than half needed).
        t.on_failure();
        assert_eq!(t.milli_tokens(), 5_000);
        assert!(!t.retry_allowed());
        // One success adds 0.1 token: 5100 > 5000.
        t.on_success();
        assert_eq!(t.milli_tokens(), 5_100);
        assert!(t.retry_allowed());
        // Floored at 0, capped at max.
        for _ in 0..20 {
            t.on_failure();
        }
        assert_eq!(t.milli_tokens(), 0);
        for _ in 0..200 {
            t.on_success();
        }
        assert_eq!(t.milli_tokens(), 10_000);
    }

    #[test]
    fn full_jitter_stays_within_its_doubling_ceiling() {
        let b = Backoff::new(BackoffKind::FullJitter, 0.025, 1.0);
        assert_eq!(b.ceiling(1), 25_000_000);
        assert_eq!(b.ceiling(2), 50_000_000);
        assert_eq!(b.ceiling(3), 100_000_000);
        assert_eq!(b.ceiling(7), 1_000_000_000, "capped");
        assert_eq!(b.ceiling(200), 1_000_000_000, "no overflow");
        let mut rng = Stream::new(1, "backoff");
        for n in 1..=4 {
            let draws: Vec<Nanos> = (0..5000).map(|_| b.delay(n, &mut rng)).collect();
            let max = *draws.iter().max().unwrap();
            assert!(max <= b.ceiling(n));
            // Uniform: the mean is half the ceiling, and the top decile is reached.
            let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
            assert!(
                (mean / b.ceiling(n) as f64 - 0.5).abs() < 0.02,
                "n={n} mean={mean}"
            );
            assert!(max as f64 > 0.9 * b.ceiling(n) as f64);
        }
    }

    #[test]
    fn retry_budget_follows_envoy_rule() {
        let mut b = RetryBudget::new(20.0, 3);
        // A retry counts from its decision, through its backoff: three
        // decided at once fill the floor before any is sent.
        for _ in 0..3 {
            assert!(b.retry_allowed());
            b.scheduled();
        }
        assert!(!b.retry_allowed(), "3 retries in backoff, floor 3");
        for _ in 0..3 {
            b.sent();
        }
        assert!(!b.retry_allowed(), "3 of 3 in flight are retries");
        // With 20 first attempts in flight too: 20% of 23 = 4 (floor).
        for _ in 0..20 {
            b.sent();
        }
        assert!(b.retry_allowed());
        b.scheduled();
        assert!(
            !b.retry_allowed(),
            "4 retries of 23 in flight, one in backoff"
        );
        // One not sent after all frees its place, as an attempt ending does.
        b.unsent();
        assert!(b.retry_allowed());
        b.scheduled();
        b.sent();
        b.ended(true);
        assert!(b.retry_allowed());
        for _ in 0..20 {
            b.ended(false);
        }
        assert!(!b.retry_allowed(), "3 retries in flight, floor 3");
        let mut none = RetryBudget::new(0.0, 0);
        none.sent();
        assert!(!none.retry_allowed());
    }

    #[test]
    fn adaptive_throttle_follows_the_sre_formula_over_its_window() {
        let s = crate::time::NANOS_PER_SEC;
        let mut t = AdaptiveThrottle::new(2.0, 3.0, 10.0);
        assert_eq!(t.reject_probability(0), 0.0);
        // 10 requests, 2 accepts: (10 - 4) / 11.
        for _ in 0..10 {
            t.record_request(s / 2);
        }
        t.record_accept(s / 2);
        t.record_accept(s / 2);
        assert!((t.reject_probability(s / 2) - 6.0 / 11.0).abs() < 1e-12);
        // Enough accepts: never negative.
        for _ in 0..5 {
            t.record_accept(s);
        }
        assert_eq!(t.reject_probability(s), 0.0);
        // Three seconds later the first second has left the window.
        for _ in 0..4 {
            t.record_request(3 * s);
        }
        // Seconds 1 to 3: 4 requests, 5 accepts.
        assert_eq!(t.reject_probability(3 * s), 0.0);
        assert!((t.reject_probability(4 * s) - 4.0 / 5.0).abs() < 1e-12);
        assert_eq!(t.reject_probability(7 * s), 0.0);
    }

    /// The window's totals, kept as it slides, are the sums over the
    /// buckets of its seconds, through gaps shorter and longer than it.
    #[test]
    fn an_adaptive_throttle_keeps_its_window_totals() {
        let s = crate::time::NANOS_PER_SEC;
        let mut draws = Stream::new(5, "throttle");
        for window_s in [1.0, 3.0, 10.0] {
            let mut t = AdaptiveThrottle::new(2.0, window_s, 1000.0);
            let mut now = 0;
            for _ in 0..5_000 {
                let gap = if draws.uniform() < 0.05 {
                    15 * s
                } else {
                    s / 3
                };
                now += draws.below_or_eq(gap);
                match draws.below_or_eq(2) {
                    0 => t.record_request(now),
                    1 => t.record_accept(now),
                    _ => {
                        t.reject_probability(now);
                    }
                }
                let (sec, len) = (now / s, t.buckets.len() as u64);
                let in_window = (t.buckets.iter()).filter(|b| b.0 <= sec && b.0 + len > sec);
                let sums = in_window.fold((0, 0), |(r, a), b| (r + b.1, a + b.2));
                assert_eq!(
                    (t.requests, t.accepts),
                    sums,
                    "window {window_s} s at {now}"
                );
            }
        }
    }

    #[test]
    fn an_adaptive_throttle_window_past_the_run_holds_the_whole_run_in_its_memory() {
        let s = crate::time::NANOS_PER_SEC;
        // 1e300 s: as long as the run (10 s), in one bucket per second.
        let mut past = AdaptiveThrottle::new(2.0, 1e300, 10.0);
        let mut run_long = AdaptiveThrottle::new(2.0, 11.0, 10.0);
        assert!(past.buckets.len() <= 11);
        for sec in 0..10 {
            for t in [&mut past, &mut run_long] {
                for _ in 0..=sec {
                    t.record_request(sec * s + s / 2);
                }
                t.record_accept(sec * s + s / 2);
            }
            let now = sec * s + s / 2;
            assert_eq!(
                past.reject_probability(now),
                run_long.reject_probability(now)
            );
        }
        // Every second of the run is still in the window: 55 requests, 10 accepts.
        assert_eq!(past.reject_probability(9 * s), 35.0 / 56.0);
    }

    #[test]
    fn codel_drops_only_after_a_whole_interval_above_target_and_then_faster() {
        let ms = 1_000_000;
        let mut c = CoDel::new(0.005, 0.1);
        // Below target: never.
        assert!(!c.should_drop(10 * ms, 4 * ms, false));
        // Above target from t = 20 ms: not before 120 ms.
        assert!(!c.should_drop(20 * ms, 50 * ms, false));
        assert!(!c.should_drop(119 * ms, 50 * ms, false));
        assert!(c.should_drop(120 * ms, 50 * ms, false), "first drop");
        // Next drop interval / sqrt(1) = 100 ms later, then 100 / sqrt(2).
        assert!(!c.should_drop(219 * ms, 50 * ms, false));
        assert!(c.should_drop(220 * ms, 50 * ms, false));
        assert!(!c.should_drop(290 * ms, 50 * ms, false));
        assert!(
            c.should_drop(291 * ms, 50 * ms, false),
            "100 / sqrt(2) = 70.7 ms"
        );
        // Back below target: dropping stops.
        assert!(!c.should_drop(300 * ms, ms, false));
        assert!(!c.should_drop(400 * ms, 50 * ms, false));
        // An empty queue behind the request: no drop whatever the sojourn.
        assert!(!c.should_drop(900 * ms, 500 * ms, true));
    }

    #[test]
    fn token_bucket_passes_its_burst_then_its_rate() {
        let s = crate::time::NANOS_PER_SEC;
        let mut b = TokenBucket::new(10.0, 3.0);
        // The burst passes at once, the fourth waits for a token.
        assert!((0..3).all(|_| b.try_take(0)));
        assert!(!b.try_take(0));
        // 10/s: one token every 100 ms.
        assert!(!b.try_take(s / 10 - 1));
        assert!(b.try_take(s / 10));
        assert!(!b.try_take(s / 10));
        // A long pause refills to the burst, not beyond.
        let passed = (0..10).filter(|_| b.try_take(100 * s)).count();
        assert_eq!(passed, 3);
    }

    /// 10 a second, a bucket of 2: of 5 requests at once the first passes,
    /// 2 wait for 100 and 200 ms, 2 are rejected; at 150 ms one has left,
    /// so one more waits (until 300 ms); after a quiet spell one passes at
    /// once, and the next waits a whole interval from it.
    #[test]
    fn a_leaky_bucket_admits_exactly_one_per_interval_and_holds_its_size() {
        let ms = crate::time::NANOS_PER_SEC / 1000;
        let mut b = LeakyBucket::new(10.0, 2);
        let at = |b: &mut LeakyBucket, t: Nanos| b.admit_at(t * ms).map(|a| a / ms);
        let burst: Vec<_> = (0..5).map(|_| at(&mut b, 0)).collect();
        assert_eq!(burst, [Some(0), Some(100), Some(200), None, None]);
        assert_eq!(at(&mut b, 150), Some(300));
        assert_eq!(at(&mut b, 150), None);
        assert_eq!(at(&mut b, 1000), Some(1000));
        assert_eq!(at(&mut b, 1001), Some(1100));
        // A bucket of 0 only spaces requests: none waits.
        let mut spacer = LeakyBucket::new(10.0, 0);
        assert_eq!(at(&mut spacer, 0), Some(0));
        assert_eq!(at(&mut spacer, 50), None);
        assert_eq!(at(&mut spacer, 100), Some(100));
    }

    /// 10 a second: the fixed window passes 10 in the last 10 ms of one
    /// window and 10 more in the first 10 ms of the next (20 in 20 ms);
    /// the sliding window passes one of the second burst: its estimate of
    /// the window ending at 1.01 s is 99% of the previous window's 10.
    #[test]
    fn a_fixed_window_passes_a_double_burst_at_its_boundary_and_a_sliding_one_does_not() {
        let ms = crate::time::NANOS_PER_SEC / 1000;
        let burst = |l: &mut RateLimiter, at: Nanos| (0..15).filter(|_| l.try_take(at, 0)).count();
        let s = crate::time::NANOS_PER_SEC;
        let mut fixed = RateLimiter::new(RateLimitKind::FixedWindow, 10.0, 1.0, s);
        assert_eq!(
            (burst(&mut fixed, 990 * ms), burst(&mut fixed, 1010 * ms)),
            (10, 10)
        );
        let mut sliding = RateLimiter::new(RateLimitKind::SlidingWindow, 10.0, 1.0, s);
        assert_eq!(
            (
                burst(&mut sliding, 990 * ms),
                burst(&mut sliding, 1010 * ms)
            ),
            (10, 1)
        );
        // Half a window later half of the first burst has slid out: 5 of
        // it and the 1 already taken leave room for 4.
        assert_eq!(burst(&mut sliding, 1500 * ms), 4);
        // After a quiet window the previous count is forgotten.
        assert_eq!(burst(&mut sliding, 3100 * ms), 10);
        // The fixed window starts afresh at each multiple of its length.
        assert_eq!(burst(&mut fixed, 1999 * ms), 0);
        assert_eq!(burst(&mut fixed, 2000 * ms), 10);
    }

    #[test]
    fn circuit_breaker_opens_probes_and_closes_by_its_rules() {
        let s = crate::time::NANOS_PER_SEC;
        let mut b = CircuitBreaker::new(BreakerConfig {
            window: 4,
            window_time: 0,
            min_samples: 4,
            failure_rate: 0.5,
            slow_call_rate: 1.0,
            slow_call: s,
            open: s,
            open_jitter: 0,
            probes: 2,
        });
        // Three failures of three: not enough samples yet.
        for _ in 0..3 {
            assert!(b.allow(0));
            b.record(0, true, 0, 0.0);
        }
        assert_eq!(b.state(), BreakerState::Closed);
        // The fourth sample: 4 failures of 4 >= 50%: open for 1 s.
        b.record(10, false, 0, 0.0);
        assert_eq!(b.state(), BreakerState::Open { until: 10 + s });
        assert!(!b.allow(s));
        // After the wait, two probes and no third call.
        assert!(b.allow(10 + s));
        assert!(b.allow(10 + s));
        assert!(!b.allow(10 + s));
        // One of two probes failed: 1 >= 50% of 2: re-open.
        b.record(2 * s, true, 0, 0.0);
        b.record(2 * s, false, 0, 0.0);
        assert_eq!(b.state(), BreakerState::Open { until: 3 * s });
        // Both probes succeed: closed, with a fresh window.
        assert!(b.allow(3 * s) && b.allow(3 * s));
        b.record(3 * s, false, 0, 0.0);
        b.record(3 * s, false, 0, 0.0);
        assert_eq!(b.state(), BreakerState::Closed);
        // Slow calls trip it too; a call of exactly the threshold is not
        // slow (Resilience4j: strictly longer).
        let mut slow = b.clone();
        slow.cfg.slow_call_rate = 0.75;
        for _ in 0..4 {
            slow.record(4 * s, false, s, 0.0);
        }
        assert_eq!(slow.state(), BreakerState::Closed);
        for _ in 0..4 {
            slow.record(4 * s, false, s + 1, 0.0);
        }
        assert!(matches!(slow.state(), BreakerState::Open { .. }));
    }

    /// Half open, as Resilience4j: slow probes re-open it too, and the
    /// decision comes once min(min_samples, probes) probes have ended.
    #[test]
    fn half_open_probes_decide_on_both_rates_after_the_minimum() {
        let s = crate::time::NANOS_PER_SEC;
        let cfg = BreakerConfig {
            window: 4,
            window_time: 0,
            min_samples: 2,
            failure_rate: 0.5,
            slow_call_rate: 0.5,
            slow_call: s,
            open: s,
            open_jitter: 0,
            probes: 5,
        };
        let half_open = |cfg: BreakerConfig| {
            let mut b = CircuitBreaker::new(cfg);
            b.record(0, true, 0, 0.0);
            b.record(0, true, 0, 0.0);
            assert!(matches!(b.state(), BreakerState::Open { .. }));
            assert!(b.allow(s));
            b
        };
        // Two probes of five, both fast and ok: closed at the second.
        let mut b = half_open(cfg.clone());
        b.record(s, false, 0, 0.0);
        assert!(matches!(b.state(), BreakerState::HalfOpen { .. }));
        b.record(s, false, 0, 0.0);
        assert_eq!(b.state(), BreakerState::Closed);
        // Ok but slow: open again.
        let mut b = half_open(cfg);
        b.record(s, false, 2 * s, 0.0);
        b.record(s, false, 2 * s, 0.0);
        assert!(matches!(b.state(), BreakerState::Open { .. }));
    }

    #[test]
    fn a_call_passed_before_the_breaker_opened_is_none_of_its_probes() {
        let s = crate::time::NANOS_PER_SEC;
        let mut b = CircuitBreaker::new(BreakerConfig {
            window: 2,
            window_time: 0,
            min_samples: 2,
            failure_rate: 0.5,
            slow_call_rate: 1.0,
            slow_call: s,
            open: s,
            open_jitter: 0,
            probes: 1,
        });
        assert!(b.allow(0));
        b.record(0, true, 0, 0.0);
        b.record(0, true, 0, 0.0);
        assert!(b.allow(s));
        // A call sent at 0 was none of its probes; one sent at s is one.
        let old = b.pass_of(0);
        assert_eq!((old, b.pass_of(s)), (Pass::Call, Pass::Probe));
        let out = BreakerState::HalfOpen {
            sent: 1,
            done: 0,
            failed: 0,
            slow: 0,
        };
        // The old call ends without an outcome, or with one: the probe is
        // still the one out, and no second one passes.
        b.forget_pass(old);
        assert_eq!(b.state(), out);
        b.record_pass(old, s, false, 0, 0.0);
        assert_eq!(b.state(), out);
        assert!(!b.allow(s));
        // The probe's own end decides: given back, another may go.
        b.forget_pass(Pass::Probe);
        assert!(b.allow(s));
        b.record_pass(Pass::Probe, s, false, 0, 0.0);
        assert_eq!(b.state(), BreakerState::Closed);
        // Closed, an old call counts again.
        b.record_pass(old, s, true, 0, 0.0);
        b.record_pass(old, s, true, 0, 0.0);
        assert!(matches!(b.state(), BreakerState::Open { .. }));
    }

    /// The window's failure and slow counts, kept as it slides, are the
    /// counts of the outcomes it holds, after every outcome of a long
    /// random run through every state, for both kinds of window.
    #[test]
    fn a_breaker_window_keeps_its_counts() {
        let ms = 1_000_000;
        let mut draws = Stream::new(3, "breaker");
        for window_time in [0, 500 * ms] {
            let mut b = CircuitBreaker::new(BreakerConfig {
                window: 20,
                window_time,
                min_samples: 10,
                failure_rate: 0.5,
                slow_call_rate: 0.8,
                slow_call: 50 * ms,
                open: 100 * ms,
                open_jitter: 0,
                probes: 3,
            });
            let (mut now, mut opened) = (0, 0);
            for _ in 0..20_000 {
                now += draws.below_or_eq(20 * ms);
                if b.allow(now) {
                    let failed = draws.uniform() < 0.4;
                    b.record(now, failed, draws.below_or_eq(100 * ms), 0.0);
                }
                opened += u32::from(matches!(b.state(), BreakerState::Open { .. }));
                let count = |f: fn(&(Nanos, bool, bool)) -> bool| {
                    b.outcomes.iter().filter(|o| f(o)).count()
                };
                assert_eq!((b.failures, b.slows), (count(|o| o.1), count(|o| o.2)));
            }
            assert!(opened > 0, "the run opens it");
        }
    }

    #[test]
    fn time_based_breaker_window_forgets_old_outcomes() {
        let s = crate::time::NANOS_PER_SEC;
        let mut b = CircuitBreaker::new(BreakerConfig {
            window: 1,
            window_time: 2 * s,
            min_samples: 3,
            failure_rate: 0.5,
            slow_call_rate: 1.0,
            slow_call: s,
            open: s,
            open_jitter: 0,
            probes: 1,
        });
        // Two failures at 0 s and 1 s, then one at 2 s: the first has left
        // the 2 s window, so only two samples remain, too few to open.
        b.record(0, true, 0, 0.0);
        b.record(s, true, 0, 0.0);
        b.record(2 * s, true, 0, 0.0);
        assert_eq!(b.state(), BreakerState::Closed);
        // A third outcome inside the window (a success): 2 failures of 3.
        b.record(2 * s + 1, false, 0, 0.0);
        assert_eq!(b.state(), BreakerState::Open { until: 3 * s + 1 });
        // A count-based window of 1 would have kept one sample only.
        let mut count = b.clone();
        count.cfg.window_time = 0;
        count.state = BreakerState::Closed;
        count.outcomes.clear();
        (count.failures, count.slows) = (0, 0);
        for t in 0..4 {
            count.record(t, true, 0, 0.0);
        }
        assert_eq!(count.state(), BreakerState::Closed);
    }

    #[test]
    fn gradient_limit_follows_the_latency_ratio() {
        let ms = 1_000_000;
        // 2..100, tolerance 1.5, no smoothing, windows of 1 ms that count
        // with at least 10 completions.
        let mut l = GradientLimit::new(2, 100, 1.5, 1.0, 600, 10, ms);
        // Window `k` (ms): `n` completions, the last one closing it.
        let window = |l: &mut GradientLimit, k: Nanos, n: u32, latency: Nanos, in_flight: u32| {
            for _ in 1..n {
                l.record(k * ms - ms / 2, latency, in_flight);
            }
            l.record(k * ms, latency, in_flight);
        };
        // Ten windows set the long-term latency, a plain mean while it
        // warms up: gradient 1, the limit stays at its maximum.
        for k in 1..=10 {
            window(&mut l, k, 10, 10 * ms, 100);
        }
        assert_eq!((l.limit, l.long), (100, 10.0 * ms as f64));
        // Five times slower: 1.5 x ~10 ms / 50 ms is under 0.5, so the
        // gradient is 0.5: 100 x 0.5 + 4 = 54, then 31, then 19.
        window(&mut l, 11, 10, 50 * ms, 100);
        assert_eq!(l.limit, 54);
        // One window is one sample of the long-term average: it moved by
        // 2 / 601 of the step, not by ten completions' worth.
        let moved = (l.long - 10.0 * ms as f64) / (40.0 * ms as f64);
        assert!((moved - 2.0 / 601.0).abs() < 1e-9, "{moved}");
        window(&mut l, 12, 10, 50 * ms, 100);
        assert_eq!(l.limit, 31);
        // A window short of 10 completions is dropped, whatever it saw,
        // and the next one starts empty.
        let before = l.clone();
        window(&mut l, 13, 9, 5000 * ms, 100);
        assert_eq!((l.limit, l.long), (before.limit, before.long));
        window(&mut l, 14, 10, 50 * ms, 100);
        assert_eq!(l.limit, 19);
        // A tier using less than half its limit leaves it alone: the most
        // in service at a completion of the window counts.
        window(&mut l, 15, 10, 50 * ms, 5);
        assert_eq!(l.limit, 19);
        l.record(16 * ms - ms / 2, 50 * ms, 12);
        window(&mut l, 16, 9, 50 * ms, 5);
        assert!(l.limit < 19, "{}", l.limit);
        // The long-term average catches up with the new latency; the
        // gradient returns to 1 and the limit grows by 4 per window.
        for k in 17..3000 {
            window(&mut l, k, 10, 50 * ms, 100);
        }
        assert_eq!(l.limit, 100);
        // On the way down it nears 8, the fixed point of x = x / 2 + 4,
        // before the rising long-term average lifts the gradient.
        assert!((8..19).contains(&l.lowest), "{}", l.lowest);
    }

    #[test]
    fn aimd_limit_decreases_on_breaches_and_grows_when_clean() {
        let ms = 1_000_000;
        // 10..100, 100 ms latency target, x0.5, +1, 2 samples, 2 breaches, 10 ms apart.
        let mut l = AimdLimit::new(aimd(10 * ms));
        // One slow window: not yet (2 breaches needed).
        l.record(20 * ms, 300 * ms, true);
        l.record(20 * ms, 300 * ms, true);
        assert_eq!(l.limit, 100);
        // Too soon after the last adjustment: the window keeps filling.
        l.record(25 * ms, 300 * ms, true);
        l.record(25 * ms, 300 * ms, true);
        assert_eq!(l.limit, 100);
        // Second breaching window: halve.
        l.record(31 * ms, 300 * ms, true);
        assert_eq!(l.limit, 50);
        // An error breaches too; two in a row halve again, floored at 10.
        for t in [50, 60] {
            l.record(t * ms, ms, false);
            l.record(t * ms, ms, true);
        }
        assert_eq!(l.limit, 25);
        for t in [70, 80, 90, 100] {
            l.record(t * ms, ms, false);
            l.record(t * ms, ms, false);
        }
        assert_eq!((l.limit, l.lowest), (10, 10));
        // Clean windows: +1 each, up to the max.
        l.record(200 * ms, ms, true);
        l.record(200 * ms, ms, true);
        assert_eq!(l.limit, 11);
    }

    fn aimd(interval: Nanos) -> AimdRule {
        AimdRule {
            min: 10,
            max: 100,
            latency: 100_000_000,
            decrease: 0.5,
            increase: 1,
            increase_percent: 0.0,
            min_samples: 2,
            breaches: 2,
            interval,
            hold: 0,
            skip_sparse: false,
            from_start: false,
        }
    }

    /// AIMD's latency runs from arrival (the queue included) or from the
    /// start of service (Netflix: from the permit): 50 ms of work after
    /// 500 ms in the queue breaches a 100 ms target only from arrival.
    #[test]
    fn aimd_measures_latency_from_arrival_or_from_the_start_of_service() {
        let ms = 1_000_000;
        let limit_after = |from_start: bool| {
            let mut l = ConcurrencyLimit::Aimd(AimdLimit::new(AimdRule {
                breaches: 1,
                from_start,
                ..aimd(1000 * ms)
            }));
            for k in 1..=4 {
                let now = (1000 + k * 300) * ms;
                l.record(now, now - 550 * ms, now - 50 * ms, true, 1);
            }
            l.limit()
        };
        assert_eq!(limit_after(false), 50, "a breach: halved from 100");
        assert_eq!(limit_after(true), 100, "clean: grows, at its maximum");
    }

    #[test]
    fn aimd_steps_by_percent_at_most_once_per_hold_and_skips_sparse_windows() {
        let s = 1_000_000_000;
        // The source text's rule: 1 s windows of at least 20, 5 breaching
        // windows in a row, -5%, +2%, 60..320, changes 5 s apart.
        let rule = AimdRule {
            min: 60,
            max: 320,
            latency: 800_000_000,
            decrease: 0.95,
            increase: 0,
            increase_percent: 2.0,
            min_samples: 20,
            breaches: 5,
            interval: s,
            hold: 5 * s,
            skip_sparse: true,
            from_start: false,
        };
        // One slow completion a second: every window is sparse, skipped.
        let mut guarded = AimdLimit::new(rule.clone());
        for t in 1..=600 {
            guarded.record(t * s, 2 * s, true);
        }
        assert_eq!(guarded.limit, 320, "no verdict on fewer than 20");
        // Without the guard, each one is a breach: -5% every 5 s, not
        // every 5 windows' streak alone (the hold), floored at 60.
        let mut bare = AimdLimit::new(AimdRule {
            min_samples: 1,
            ..rule.clone()
        });
        for t in 1..=5 {
            bare.record(t * s, 2 * s, true);
        }
        assert_eq!(bare.limit, 304, "5 breaches at 5 s: 320 x 0.95");
        bare.record(6 * s, 2 * s, true);
        assert_eq!(bare.limit, 304, "the next only 5 s after");
        for t in 7..=10 {
            bare.record(t * s, 2 * s, true);
        }
        assert_eq!(bare.limit, 288, "floor(304 x 0.95)");
        for t in 11..=400 {
            bare.record(t * s, 2 * s, true);
        }
        assert_eq!((bare.limit, bare.lowest), (60, 60));
        // Clean windows: +2% every 5 s, kept as a real number; 60 -> 320
        // takes 85 steps (60 x 1.02^85 = 323), the first at once (the last
        // change was long before), then one every 5 s: 1 + 84 x 5 = 421 s.
        let mut t = 400;
        while bare.limit < 320 {
            t += 1;
            bare.record(t * s, s / 10, true);
        }
        assert_eq!(t - 400, 421);
        // The hold runs from the last change, not from the run's start:
        // the first change may come in the first seconds.
        let mut early = AimdLimit::new(AimdRule {
            min_samples: 1,
            breaches: 1,
            ..rule.clone()
        });
        early.record(s, 2 * s, true);
        assert_eq!(early.limit, 304, "the first breach, at 1 s");
        early.record(2 * s, 2 * s, true);
        assert_eq!(early.limit, 304, "the next only 5 s after it");
        // Without skipping, a sparse window stays open until it has its
        // samples: 20 slow completions make one breach.
        let mut waiting = AimdLimit::new(AimdRule {
            skip_sparse: false,
            breaches: 1,
            hold: 0,
            ..rule.clone()
        });
        for t in 1..=19 {
            waiting.record(t * s, 2 * s, true);
        }
        assert_eq!(waiting.limit, 320);
        waiting.record(20 * s, 2 * s, true);
        assert_eq!(waiting.limit, 304);
        // A skipped window ends a breach streak: two full breaching
        // windows with a sparse one between are not two in a row. A
        // window closes at its first completion 1 s after the last close.
        let mut streak = AimdLimit::new(AimdRule {
            breaches: 2,
            hold: 0,
            ..rule
        });
        let slow =
            |l: &mut AimdLimit, t: Nanos, n: u32| (0..n).for_each(|_| l.record(t, 2 * s, true));
        slow(&mut streak, s / 2, 19);
        slow(&mut streak, s, 1); // 20: a breach
        slow(&mut streak, 2 * s, 1); // 1: skipped
        slow(&mut streak, 5 * s / 2, 19);
        slow(&mut streak, 3 * s, 1); // 20: a breach, the first in a row
        assert_eq!(streak.limit, 320);
        slow(&mut streak, 7 * s / 2, 19);
        slow(&mut streak, 4 * s, 1); // the second in a row
        assert_eq!(streak.limit, 304);
    }

    #[test]
    fn fixed_backoff_is_exact() {
        let b = Backoff::new(BackoffKind::Fixed, 0.05, 1.0);
        let mut rng = Stream::new(1, "backoff");
        assert_eq!(b.delay(1, &mut rng), 50_000_000);
        assert_eq!(b.delay(3, &mut rng), 50_000_000);
    }
}
