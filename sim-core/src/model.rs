//! A validated scenario compiled for the engine: integer nanoseconds, indexes
//! instead of names, policies as ready-made values.

use crate::backlog::QueueModel;
use crate::cache::CacheModel;
use crate::caller::Outcome;
use crate::gc::GcModel;
use crate::policy::{
    AdaptiveThrottle, AimdLimit, AimdRule, Backoff, BreakerConfig, CircuitBreaker, CoDel,
    ConcurrencyLimit, GradientLimit, LoadBalancer, OutlierRule, RateLimiter, RetryBudget,
    RetryThrottle,
};
use crate::random::Stream;
use crate::scenario::{
    CancelMode, Client, Dispatch, Dist, LatencyFrom, LimitAlgorithm, LimitScope, LimitSparse,
    OutcomeClass, RateLimitKey, RejectAs, Scenario, Service,
};
use crate::tenant::{KeyedLimits, Tenants};
use crate::time::{NANOS_PER_SEC, NEVER, Nanos, nanos_to_secs, round_nanos, secs_to_nanos};

pub struct Model {
    /// The bins of the sub-second series: their width, and how many a
    /// second (0 and 1 when the series are per second only).
    pub series_bin: Nanos,
    pub bins_per_s: usize,
    /// Per tier, the one token bucket all its replicas share
    /// (`rate_limit_scope = "service"`); `None` where each instance has its
    /// own (`ServerModel::rate_limit`) or there is no limit.
    pub tier_rate_limits: Vec<Option<RateLimiter>>,
    /// Users one run is expected to see (a bound for closed loops).
    pub expected_users: f64,
    pub dispatch: Dispatch,
    pub horizon: Nanos,
    /// The latest end of arrivals of any client group.
    pub arrivals_end: Nanos,
    /// The client groups, `client` first: group `g` calls through edge `g`.
    pub groups: Vec<GroupModel>,
    /// Request classes in priority order: every group's, in group order
    /// (a group without classes has the unnamed one).
    pub class_names: Vec<String>,
    pub max_events: u64,
    /// The trigger span `[start, end)`: the "during" phase.
    pub window: (Nanos, Nanos),
    pub recovery_window: Nanos,
    pub recovery_threshold: f64,
    /// One per call edge, in [`Scenario::edges`] order: `callers[g]` is
    /// client group `g`'s; in a plain chain with one group `callers[i]` is
    /// server `i - 1`'s.
    pub callers: Vec<CallModel>,
    /// One per server instance: first replica 0 of every tier, so that
    /// `servers[t]` is tier `t`'s first (and, without replicas, only)
    /// instance; then the further replicas, tier by tier.
    pub servers: Vec<ServerModel>,
    /// Per tier, its instances in replica order (`[t]` for one replica).
    pub tier_instances: Vec<Vec<usize>>,
    /// Some group draws a tenant key for its users (`client.tenants` > 1).
    pub tenants: bool,
}

/// One client group: where its users come from and what they carry.
pub struct GroupModel {
    pub name: String,
    /// A user's patience: a user request's deadline after its arrival
    /// (`NEVER`: none).
    pub user_deadline: Nanos,
    pub arrivals_end: Nanos,
    /// Mean gap between user arrivals at the base rate (ns, as a float).
    pub mean_gap: f64,
    /// Arrivals spaced exactly `mean_gap` apart (at the base rate) instead
    /// of exponentially.
    pub even_arrivals: bool,
    /// The arrival rate's multiplier, piecewise constant: `(start, factor)`
    /// from 0, sorted; each holds until the next start.
    pub arrival_segments: Vec<(Nanos, f64)>,
    /// A time-varying open arrival rate (profile or sinusoid), if any.
    pub profile: Option<RateProfile>,
    /// Closed-loop users instead of open arrivals, if any.
    pub closed: Option<ClosedModel>,
    /// The group's request classes as indexes into `Model::class_names`,
    /// and the cumulative shares a uniform draw is compared with (one
    /// class: no draw).
    pub classes: Vec<u8>,
    pub class_cumulative: Vec<f64>,
    /// A message queue: arrivals publish, each user request is a delivery.
    pub queue: Option<QueueModel>,
    /// Its users' tenant keys.
    pub tenants: Tenants,
}

/// Closed-loop users: how many, and their think time.
pub struct ClosedModel {
    pub users: u32,
    pub think: ServiceModel,
}

/// An open arrival rate that varies in time: a profile's piecewise-linear
/// rate or a sinusoid, times the load spikes' factor. Arrivals follow it
/// exactly by thinning a Poisson process at `envelope`, a piecewise-constant
/// rate never below it.
pub struct RateProfile {
    base: BaseRate,
    /// Load spikes' factor: `(start, factor)` segments as
    /// [`Model::arrival_segments`].
    spikes: Vec<(Nanos, f64)>,
    /// `(start, rate per second)` from 0, sorted: an upper bound of the rate
    /// on each piece, until the next start.
    pub envelope: Vec<(Nanos, f64)>,
}

enum BaseRate {
    /// `(at, rate per second)`, in time order.
    Points(Vec<(Nanos, f64)>),
    /// `rate x (1 + amplitude sin(2 pi t / period))`.
    Sinusoid {
        rate: f64,
        amplitude: f64,
        period: Nanos,
    },
}

impl BaseRate {
    /// The rate at `t` (per second).
    fn at(&self, t: Nanos) -> f64 {
        match self {
            BaseRate::Points(points) => {
                // The first point after `t`: `t` lies between it and the one before.
                let i = points.partition_point(|(at, _)| *at <= t);
                match (i.checked_sub(1).map(|j| points[j]), points.get(i).copied()) {
                    (None, Some((_, r))) | (Some((_, r)), None) => r,
                    (Some((a0, r0)), Some((a1, r1))) => {
                        r0 + (r1 - r0) * (t - a0) as f64 / (a1 - a0) as f64
                    }
                    (None, None) => unreachable!("a profile has points"),
                }
            }
            BaseRate::Sinusoid {
                rate,
                amplitude,
                period,
            } => {
                let phase = 2.0 * std::f64::consts::PI * (t % period) as f64 / *period as f64;
                rate * (1.0 + amplitude * libm::sin(phase))
            }
        }
    }

    /// The largest rate on the piece starting at `t` that ends at the next
    /// breakpoint (a point's time): linear on it, so at most its ends' rates.
    fn bound(&self, t: Nanos) -> f64 {
        match self {
            BaseRate::Points(points) => {
                let i = points.partition_point(|(at, _)| *at <= t);
                let before = i.checked_sub(1).map(|j| points[j].1);
                let after = points.get(i).map(|p| p.1);
                before.into_iter().chain(after).fold(0.0, f64::max)
            }
            BaseRate::Sinusoid {
                rate, amplitude, ..
            } => rate * (1.0 + amplitude),
        }
    }

    /// The integral of the rate over `[a, b)`, a piece on which it is
    /// linear (points) or anywhere (sinusoid).
    fn integral(&self, a: Nanos, b: Nanos) -> f64 {
        let seconds = nanos_to_secs(b - a);
        match self {
            // A linear function's integral is its value at the midpoint.
            BaseRate::Points(_) => self.at(a + (b - a) / 2) * seconds,
            BaseRate::Sinusoid {
                rate,
                amplitude,
                period,
            } => {
                let p = nanos_to_secs(*period);
                let w = 2.0 * std::f64::consts::PI / p;
                let (ta, tb) = (nanos_to_secs(a), nanos_to_secs(b));
                rate * (seconds + amplitude / w * (libm::cos(w * ta) - libm::cos(w * tb)))
            }
        }
    }

    fn breakpoints(&self) -> Vec<Nanos> {
        match self {
            BaseRate::Points(points) => points.iter().map(|p| p.0).collect(),
            BaseRate::Sinusoid { .. } => Vec::new(),
        }
    }
}

impl RateProfile {
    /// The profile of a client group, if it has one.
    fn new(c: &Client) -> Option<RateProfile> {
        let base = if !c.profile.is_empty() {
            BaseRate::Points(
                (c.profile.iter())
                    .map(|p| (secs_to_nanos(p.at_s), p.rate_per_s))
                    .collect(),
            )
        } else if !c.sinusoid.is_off() {
            BaseRate::Sinusoid {
                rate: c.rate_per_s,
                amplitude: c.sinusoid.amplitude,
                period: secs_to_nanos(c.sinusoid.period_s).max(1),
            }
        } else {
            return None;
        };
        let end = secs_to_nanos(c.duration_s);
        let spikes = arrival_segments(&c.spike, end);
        let mut starts: Vec<Nanos> = (spikes.iter().map(|s| s.0))
            .chain(base.breakpoints())
            .filter(|b| *b == 0 || *b < end)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        let mut profile = RateProfile {
            base,
            spikes,
            envelope: Vec::new(),
        };
        profile.envelope = (starts.iter())
            .map(|&b| (b, profile.base.bound(b) * profile.spike_factor(b)))
            .collect();
        Some(profile)
    }

    fn spike_factor(&self, t: Nanos) -> f64 {
        let i = self.spikes.partition_point(|(start, _)| *start <= t);
        self.spikes[i - 1].1
    }

    /// The arrival rate at `t` (per second), spikes included.
    pub fn rate(&self, t: Nanos) -> f64 {
        self.base.at(t) * self.spike_factor(t)
    }

    /// The mean number of arrivals in `[0, end)`.
    fn expected(&self, end: Nanos) -> f64 {
        (self.envelope.iter().enumerate())
            .map(|(i, (start, _))| {
                let next = self.envelope.get(i + 1).map_or(end, |n| n.0);
                self.base.integral(*start, next) * self.spike_factor(*start)
            })
            .sum()
    }
}

pub struct CallModel {
    pub name: String,
    /// The tier called, which is also the instance of its replica 0.
    pub to: usize,
    /// The tier called has a look-aside cache (its misses' successful
    /// replies fill it).
    pub cached: bool,
    /// With several replicas: their instances in replica order, and the
    /// balancer this caller starts with (`None`: one replica, no choice).
    pub replicas: Vec<usize>,
    pub balancer: Option<LoadBalancer>,
    pub retry_other_replica: bool,
    /// A fan-out branch whose failure fails the caller.
    pub required: bool,
    /// Bulkhead: attempts in flight at most (`u32::MAX`: unbounded).
    pub max_in_flight: u32,
    /// With replicas and `bulkhead_scope = "replica"`: the bulkhead per
    /// replica instead (requests in flight to it), and `max_in_flight` is
    /// unbounded (`u32::MAX`: no bulkhead per replica).
    pub replica_max_in_flight: u32,
    pub timeout: Nanos,
    /// The timeouts of the first attempts, when they differ (empty: all
    /// take `timeout`).
    pub timeouts: Vec<Nanos>,
    pub max_attempts: u32,
    pub backoff: Backoff,
    /// Jitter of each wait before a retry (0: none).
    pub backoff_jitter: f64,
    /// Which failed outcomes this caller retries, and which its retry
    /// throttle and breaker count as failures.
    pub retry_on: OutcomeSet,
    pub failure_on: OutcomeSet,
    pub propagate: bool,
    pub throttle: Option<RetryThrottle>,
    /// Deadline safety margin.
    pub margin: Nanos,
    pub budget_admission: bool,
    pub honor_retry_after: bool,
    pub retry_budget: Option<RetryBudget>,
    pub adaptive_throttle: Option<AdaptiveThrottle>,
    pub breaker: Option<CircuitBreaker>,
    /// With replicas and `breaker_scope = "replica"`: `breaker` is the one
    /// each replica starts with, instead of the edge's.
    pub breaker_per_replica: bool,
    /// Hedging delay (0: none) and budget (a fraction of calls).
    pub hedge_delay: Nanos,
    pub hedge_budget: f64,
    /// Hedge on this quantile of recent latencies (0: the fixed delay).
    pub hedge_quantile: f64,
    pub cancel: CancelMode,
    pub budget_share: f64,
}

#[derive(Clone)]
pub struct ServerModel {
    pub name: String,
    /// The tier this instance belongs to, and its replica number there.
    pub tier: usize,
    pub replica: u8,
    pub slots: u32,
    pub queue_cap: Option<u32>,
    pub drop_expired: bool,
    pub queue_order: crate::scenario::QueueOrder,
    pub lifo_threshold: usize,
    /// Per request class: most in service (`u32::MAX`: no bulkhead), and
    /// the queue length from which arrivals of the class are shed.
    pub class_slots: Vec<u32>,
    pub shed_queue: Vec<Option<usize>>,
    /// Per request class: its own service model, if it has one here.
    pub class_service: Vec<Option<ServiceModel>>,
    pub codel: Option<CoDel>,
    pub rate_limit: Option<RateLimiter>,
    /// The rate limit is a leaky bucket: requests pass it on arrival,
    /// before the tier's own admission.
    pub leaky_bucket: bool,
    pub adaptive_limit: Option<ConcurrencyLimit>,
    pub reject_latency: Nanos,
    /// Cooperative cancellation interval; 0 = off.
    pub cancel_check: Nanos,
    /// Retry-After carried by full-queue rejections.
    pub retry_after: Nanos,
    /// How rejections are answered: `Rejected` (overload) or `Error` (500).
    pub reject_outcome: Outcome,
    pub service: ServiceModel,
    /// Work added per request in service when one starts (0: none).
    pub per_inflight: Nanos,
    /// One-way latency of the hop into this server.
    pub latency: ServiceModel,
    /// The product of the slow factors of this instance's windows, by time.
    pub slow: Steps,
    /// The chance that a request passes this instance's error windows, by
    /// time, and how long a request that fails fast holds its slot.
    pub passes: Steps,
    pub error_latency: Nanos,
    /// Crash windows of this instance, in time order (they do not overlap).
    pub crashes: Vec<Crash>,
    /// GC-like pauses of this instance, when it has them.
    pub gc: Option<GcModel>,
    /// The look-aside cache in front of the tier, when it has one.
    pub cache: Option<CacheModel>,
    /// Most arrivals one user request can cause at the tier (requirement
    /// R1; its replicas together).
    pub arrival_bound_per_user: u64,
    pub downstream: Downstream,
}

/// What a server does once its own work is done.
#[derive(Clone, Debug, PartialEq)]
pub enum Downstream {
    /// Replies.
    Leaf,
    /// Calls one server through this edge (index into `Model::callers`).
    Chain(usize),
    /// Calls these edges in parallel.
    Fanout(Vec<usize>),
}

#[derive(Clone)]
pub struct ServiceModel {
    dist: Dist,
    /// Mean in nanoseconds.
    mean: f64,
    /// Lognormal location of the log, for the mean above.
    mu: f64,
    sigma: f64,
    slow_p: f64,
    slow: f64,
    /// No work at all (a pure forwarder, or a hop without latency): asked
    /// on every request and reply, so decided once.
    none: bool,
}

impl ServiceModel {
    fn new(s: &Service) -> ServiceModel {
        let mean = s.mean_s * 1e9;
        ServiceModel {
            dist: s.dist,
            mean,
            // A mean of 0 (the fast part of a mixture with no work, or a
            // hop without latency): minus infinity, so that every draw is
            // exp(-inf) = 0, not e^(sigma z) nanoseconds.
            mu: if mean > 0.0 {
                libm::log(mean) - s.sigma * s.sigma / 2.0
            } else {
                f64::NEG_INFINITY
            },
            sigma: s.sigma,
            slow_p: s.slow_p,
            slow: s.slow_s * 1e9,
            none: mean == 0.0 && s.slow_p == 0.0 && s.per_inflight_s == 0.0,
        }
    }

    /// True when the tier does no work of its own (a pure forwarder).
    #[inline]
    pub fn is_none(&self) -> bool {
        self.none
    }

    /// The mean service time in nanoseconds, slow requests included.
    pub fn mean_ns(&self) -> f64 {
        if self.none {
            0.0
        } else {
            (1.0 - self.slow_p) * self.mean + self.slow_p * self.slow
        }
    }

    /// One service time, multiplied by `factor` (slow windows).
    pub fn draw(&self, factor: f64, rng: &mut Stream) -> Nanos {
        if self.slow_p > 0.0 && rng.uniform() < self.slow_p {
            return round_nanos(self.slow * factor);
        }
        let x = match self.dist {
            Dist::Constant => self.mean,
            Dist::Exponential => rng.exponential(self.mean),
            Dist::Lognormal => libm::exp(self.mu + self.sigma * rng.standard_normal()),
        };
        round_nanos(x * factor)
    }
}

/// A set of failed outcomes (a caller's `retry_on` or `failure_on`), one
/// bit per `Outcome` (a test per outcome costs a shift and a mask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutcomeSet(u8);

impl OutcomeSet {
    pub fn of(classes: &[OutcomeClass]) -> OutcomeSet {
        let outcome = |c: &OutcomeClass| match c {
            OutcomeClass::Timeout => Outcome::Timeout,
            OutcomeClass::Overload => Outcome::Rejected,
            OutcomeClass::Error => Outcome::Error,
            OutcomeClass::Expired => Outcome::Expired,
            OutcomeClass::Refused => Outcome::Refused,
        };
        OutcomeSet(
            classes
                .iter()
                .fold(0, |bits, c| bits | 1 << outcome(c) as u8),
        )
    }

    /// Is `outcome` (a failure) in the set? Never for `Ok`.
    #[inline(always)]
    pub fn contains(self, outcome: Outcome) -> bool {
        self.0 & 1 << outcome as u8 != 0
    }
}

impl GroupModel {
    fn new(name: &str, c: &Client, class_names: &[String]) -> GroupModel {
        let index = |n: &str| class_names.iter().position(|c| c == n).expect("a class") as u8;
        let classes = if c.classes.is_empty() {
            vec![index("")]
        } else {
            c.classes.iter().map(|k| index(&k.name)).collect()
        };
        let total: f64 = c.classes.iter().map(|c| c.share).sum();
        let mut class_cumulative: Vec<f64> = (c.classes.iter())
            .scan(0.0, |acc, c| {
                *acc += c.share / total;
                Some(*acc)
            })
            .collect();
        if let Some(last) = class_cumulative.last_mut() {
            // Rounding must not leave a draw in no class.
            *last = f64::INFINITY;
        }
        let arrivals_end = secs_to_nanos(c.duration_s);
        GroupModel {
            name: name.to_string(),
            user_deadline: if c.deadline_s > 0.0 {
                secs_to_nanos(c.deadline_s)
            } else {
                NEVER
            },
            arrivals_end,
            mean_gap: 1e9 / c.rate_per_s,
            even_arrivals: c.arrivals == crate::scenario::Arrivals::Even,
            arrival_segments: arrival_segments(&c.spike, arrivals_end),
            profile: RateProfile::new(c),
            closed: (!c.closed.is_off()).then(|| ClosedModel {
                users: c.closed.users,
                think: ServiceModel::new(&c.closed.think),
            }),
            classes,
            class_cumulative,
            queue: QueueModel::of(&c.queue),
            tenants: Tenants::new(0, 0, 1.0),
        }
    }
}

impl CallModel {
    /// The timeout of attempt number `attempt` (1 for the first).
    #[inline]
    pub fn timeout_of(&self, attempt: u32) -> Nanos {
        (self.timeouts.get(attempt as usize - 1).copied()).unwrap_or(self.timeout)
    }

    /// May this caller send a second copy of an attempt?
    pub fn hedges(&self) -> bool {
        self.hedge_delay > 0 || self.hedge_quantile > 0.0
    }
}

impl ServerModel {
    /// The probability that a request starting at `now` fails fast:
    /// overlapping error windows fail independently.
    pub fn error_p(&self, now: Nanos) -> f64 {
        1.0 - self.passes.at(now)
    }

    pub fn slow_factor(&self, now: Nanos) -> f64 {
        self.slow.at(now)
    }
}

/// A product of windows' values as a step function of time, so that a
/// lookup costs a binary search however many windows there are.
#[derive(Clone, Debug, Default)]
pub struct Steps {
    /// The times the product changes, ascending, and its value from each.
    edges: Vec<Nanos>,
    values: Vec<f64>,
}

impl Steps {
    /// The product over `windows` `(start, end, value)` of those holding
    /// `[start, end)` a time, multiplied in list order from 1.0 (as
    /// `Iterator::product` does) so that every value keeps its bits.
    pub fn of(windows: &[(Nanos, Nanos, f64)]) -> Steps {
        let mut edges: Vec<Nanos> = (windows.iter())
            .filter(|(start, end, _)| start < end)
            .flat_map(|&(start, end, _)| [start, end])
            .collect();
        edges.sort_unstable();
        edges.dedup();
        // Windows by start, and the ones open at an edge in list order.
        let mut by_start: Vec<usize> = (0..windows.len()).collect();
        by_start.sort_by_key(|&i| windows[i].0);
        let mut next = 0;
        let mut open: Vec<usize> = Vec::new();
        let values = (edges.iter())
            .map(|&edge| {
                while next < by_start.len() && windows[by_start[next]].0 <= edge {
                    let i = by_start[next];
                    if let Err(at) = open.binary_search(&i) {
                        open.insert(at, i);
                    }
                    next += 1;
                }
                open.retain(|&i| edge < windows[i].1);
                open.iter().map(|&i| windows[i].2).product()
            })
            .collect();
        Steps { edges, values }
    }

    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// The product at `now`: 1.0 outside every window, so before the
    /// first edge and from the last (an end), where most lookups fall.
    #[inline]
    pub fn at(&self, now: Nanos) -> f64 {
        match (self.edges.first(), self.edges.last()) {
            (Some(&first), Some(&last)) if first <= now && now < last => {
                self.values[self.edges.partition_point(|&edge| edge <= now) - 1]
            }
            _ => 1.0,
        }
    }
}

impl Model {
    /// Compiles a scenario that has passed [`crate::validate::validate`].
    pub fn new(s: &Scenario) -> Model {
        let edges = s.edges();
        // One unnamed class for a group that declares none; a class several
        // groups name is one class.
        let group_classes = |c: &Client| -> Vec<String> {
            if c.classes.is_empty() {
                vec![String::new()]
            } else {
                c.classes.iter().map(|c| c.name.clone()).collect()
            }
        };
        let mut class_names: Vec<String> = Vec::new();
        for name in s.groups().flat_map(|(_, c)| group_classes(c)) {
            if !class_names.contains(&name) {
                class_names.push(name);
            }
        }
        let mut groups: Vec<GroupModel> = (s.groups())
            .map(|(name, c)| GroupModel::new(name, c, &class_names))
            .collect();
        // Tenant keys are numbered over the groups, one at least each.
        let mut tenant_keys = 0;
        for (g, (_, c)) in groups.iter_mut().zip(s.groups()) {
            g.tenants = Tenants::new(tenant_keys, c.tenants, c.tenant_zipf_s);
            tenant_keys += g.tenants.count();
        }
        let tenants = groups.iter().any(|g| g.tenants.draws());
        // Further replicas are numbered after every tier's first.
        let mut tier_instances: Vec<Vec<usize>> = (0..s.tiers.len()).map(|t| vec![t]).collect();
        let mut next = s.tiers.len();
        for (t, tier) in s.tiers.iter().enumerate() {
            for _ in 1..tier.replicas {
                tier_instances[t].push(next);
                next += 1;
            }
        }
        let call_model = |e: &crate::scenario::Edge| {
            let c = e.call;
            let replicas = &tier_instances[e.to];
            let balanced = replicas.len() > 1;
            let per_replica_bulkhead =
                balanced && c.bulkhead_scope == crate::scenario::BulkheadScope::Replica;
            CallModel {
                name: e.name.clone(),
                to: e.to,
                cached: s.tiers[e.to].cache.hit_ratio > 0.0,
                replicas: if balanced {
                    replicas.clone()
                } else {
                    Vec::new()
                },
                balancer: balanced.then(|| {
                    let outlier = c.outlier_ejection.then(|| OutlierRule {
                        consecutive: c.outlier_consecutive,
                        base: secs_to_nanos(c.outlier_base_ejection_s),
                        max: secs_to_nanos(c.outlier_max_ejection()),
                        max_percent: c.outlier_max_ejection_percent,
                        interval: secs_to_nanos(c.outlier_interval_s).max(1),
                        panic_percent: c.outlier_panic_threshold_percent,
                    });
                    LoadBalancer::new(c.balancer, replicas.len(), outlier)
                }),
                retry_other_replica: c.retry_other_replica,
                required: e.required,
                max_in_flight: match c.max_in_flight {
                    Some(n) if !per_replica_bulkhead => n,
                    _ => u32::MAX,
                },
                replica_max_in_flight: match c.max_in_flight {
                    Some(n) if per_replica_bulkhead => n,
                    _ => u32::MAX,
                },
                timeout: secs_to_nanos(c.attempt_timeout_s),
                timeouts: (c.attempt_timeouts_s.iter())
                    .map(|t| secs_to_nanos(*t))
                    .collect(),
                max_attempts: c.max_retries + 1,
                backoff: Backoff::new(c.backoff, c.backoff_base_s, c.backoff_cap_s),
                backoff_jitter: c.backoff_jitter,
                retry_on: OutcomeSet::of(&c.retry_on),
                failure_on: OutcomeSet::of(&c.failure_on),
                propagate: c.propagate_deadline,
                throttle: c
                    .retry_throttle
                    .then(|| RetryThrottle::new(c.throttle_max_tokens, c.throttle_token_ratio)),
                margin: secs_to_nanos(c.deadline_margin_s),
                budget_admission: c.budget_admission,
                honor_retry_after: c.honor_retry_after,
                hedge_delay: secs_to_nanos(c.hedge_delay_s),
                hedge_budget: c.hedge_budget_percent / 100.0,
                hedge_quantile: c.hedge_quantile,
                cancel: c.cancel,
                budget_share: c.budget_share,
                breaker_per_replica: c.breaker
                    && balanced
                    && c.breaker_scope == crate::scenario::BreakerScope::Replica,
                breaker: c.breaker.then(|| {
                    CircuitBreaker::new(BreakerConfig {
                        window: c.breaker_window as usize,
                        window_time: secs_to_nanos(c.breaker_window_s),
                        min_samples: c.breaker_min_samples as usize,
                        failure_rate: c.breaker_failure_rate,
                        slow_call_rate: c.breaker_slow_call_rate,
                        slow_call: secs_to_nanos(c.breaker_slow_call_s),
                        open: secs_to_nanos(c.breaker_open_s),
                        open_jitter: secs_to_nanos(c.breaker_open_jitter_s),
                        probes: c.breaker_half_open_probes,
                    })
                }),
                adaptive_throttle: c.adaptive_throttle.then(|| {
                    AdaptiveThrottle::new(
                        c.adaptive_throttle_k,
                        c.adaptive_throttle_window_s,
                        s.horizon_s,
                    )
                }),
                retry_budget: c.retry_budget.then(|| {
                    RetryBudget::new(c.retry_budget_percent, c.retry_budget_min_concurrency)
                }),
            }
        };
        let callers: Vec<CallModel> = edges.iter().map(call_model).collect();
        // Requirement R1: every edge multiplies the arrivals its caller can
        // see by its attempts (and copies: a hedged attempt sends up to two);
        // a tier with several callers sums over them, so over every path
        // from the client. Edges run in list order and call later tiers, so
        // the caller's bound is complete when its edges are.
        let mut bounds = vec![0u64; s.tiers.len()];
        for (edge, caller) in edges.iter().zip(&callers) {
            let copies = if caller.hedges() { 2 } else { 1 };
            let from = edge.from.map_or(1, |f| bounds[f]);
            let via = from.saturating_mul(caller.max_attempts as u64 * copies);
            bounds[edge.to] = bounds[edge.to].saturating_add(via);
        }
        let mut servers: Vec<ServerModel> = s
            .tiers
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let out: Vec<usize> = (0..edges.len())
                    .filter(|e| edges[*e].from == Some(i))
                    .collect();
                let downstream = match out[..] {
                    [] => Downstream::Leaf,
                    [e] if t.fanout.is_empty() => Downstream::Chain(e),
                    _ => Downstream::Fanout(out),
                };
                ServerModel {
                    name: t.name.clone(),
                    tier: i,
                    replica: 0,
                    slots: t.slots,
                    queue_cap: t.queue_cap,
                    drop_expired: t.drop_expired,
                    queue_order: t.queue_order,
                    lifo_threshold: t.lifo_threshold as usize,
                    class_slots: class_names
                        .iter()
                        .map(|c| t.class_slots.get(c).copied().unwrap_or(u32::MAX))
                        .collect(),
                    shed_queue: class_names
                        .iter()
                        .map(|c| t.shed_queue.get(c).map(|q| *q as usize))
                        .collect(),
                    class_service: class_names
                        .iter()
                        .map(|c| {
                            t.class_service_s.get(c).map(|&mean_s| {
                                ServiceModel::new(&Service {
                                    mean_s,
                                    ..t.service.clone()
                                })
                            })
                        })
                        .collect(),
                    codel: t
                        .codel
                        .then(|| CoDel::new(t.codel_target_s, t.codel_interval_s)),
                    adaptive_limit: t.adaptive_limit.then(|| match t.limit_algorithm {
                        LimitAlgorithm::Aimd => ConcurrencyLimit::Aimd(AimdLimit::new(AimdRule {
                            min: t.limit_min,
                            max: t.slots,
                            latency: secs_to_nanos(t.limit_latency_s),
                            decrease: t.limit_decrease,
                            increase: t.limit_increase,
                            increase_percent: t.limit_increase_percent,
                            min_samples: t.limit_min_samples,
                            breaches: t.limit_breaches,
                            interval: secs_to_nanos(t.limit_interval_s),
                            hold: secs_to_nanos(t.limit_hold_s),
                            skip_sparse: t.limit_sparse == LimitSparse::Skip,
                            from_start: t.limit_latency_from == LatencyFrom::Start,
                        })),
                        LimitAlgorithm::Gradient => ConcurrencyLimit::Gradient(GradientLimit::new(
                            t.limit_min,
                            t.slots,
                            t.limit_tolerance,
                            t.limit_smoothing,
                            t.limit_long_window,
                            t.limit_min_samples,
                            secs_to_nanos(t.limit_interval_s),
                        )),
                    }),
                    rate_limit: (t.rate_limit_per_s > 0.0
                        && t.rate_limit_scope == LimitScope::Replica)
                        .then(|| match t.rate_limit_key {
                            RateLimitKey::None => rate_limiter(t),
                            RateLimitKey::Tenant => RateLimiter::Keyed(Box::new(KeyedLimits::new(
                                rate_limiter(t),
                                tenant_keys as usize,
                            ))),
                        }),
                    leaky_bucket: t.rate_limit_per_s > 0.0
                        && t.rate_limit_kind == crate::scenario::RateLimitKind::LeakyBucket,
                    reject_latency: secs_to_nanos(t.reject_latency_s),
                    cancel_check: secs_to_nanos(t.cancel_check_s),
                    retry_after: secs_to_nanos(t.retry_after_s),
                    reject_outcome: match t.reject_as {
                        RejectAs::Overload => Outcome::Rejected,
                        RejectAs::Error => Outcome::Error,
                    },
                    service: ServiceModel::new(&t.service),
                    per_inflight: secs_to_nanos(t.service.per_inflight_s),
                    latency: ServiceModel::new(&t.latency),
                    slow: slow_windows(t, 0),
                    passes: error_passes(t, 0),
                    crashes: crashes(t, 0),
                    gc: GcModel::of(&t.gc),
                    cache: CacheModel::of(&t.cache),
                    error_latency: secs_to_nanos(t.error_latency_s),
                    arrival_bound_per_user: bounds[i],
                    downstream,
                }
            })
            .collect();
        // The further replicas: copies of the first, each with the slow
        // windows that name it.
        for (t, tier) in s.tiers.iter().enumerate() {
            for k in 1..tier.replicas {
                let mut replica = servers[t].clone();
                replica.replica = k as u8;
                replica.slow = slow_windows(tier, k);
                replica.passes = error_passes(tier, k);
                replica.crashes = crashes(tier, k);
                servers.push(replica);
            }
        }
        let (ws, we) = s.trigger_window_s();
        let arrivals_end = (groups.iter()).map(|g| g.arrivals_end).max();
        let expected_users = expected_users(s);
        let bounds: u64 = bounds.iter().sum();
        let tier_rate_limits = (s.tiers.iter())
            .map(|t| {
                (t.rate_limit_per_s > 0.0 && t.rate_limit_scope == LimitScope::Service)
                    .then(|| rate_limiter(t))
            })
            .collect();
        let series_bin = secs_to_nanos(s.series_bin_s);
        let binned = series_bin < NANOS_PER_SEC;
        Model {
            series_bin: if binned { series_bin } else { 0 },
            bins_per_s: if binned {
                (NANOS_PER_SEC / series_bin) as usize
            } else {
                1
            },
            tier_rate_limits,
            expected_users,
            dispatch: s.dispatch,
            horizon: secs_to_nanos(s.horizon_s),
            arrivals_end: arrivals_end.expect("the client is a group"),
            groups,
            class_names,
            max_events: s.max_events.unwrap_or_else(|| {
                default_event_budget(expected_users + redeliveries_bound(s), bounds)
            }),
            window: (secs_to_nanos(ws), secs_to_nanos(we)),
            recovery_window: secs_to_nanos(s.recovery.window_s),
            recovery_threshold: s.recovery.threshold,
            callers,
            servers,
            tier_instances,
            tenants,
        }
    }

    pub fn horizon_secs(&self) -> usize {
        nanos_to_secs(self.horizon).ceil() as usize
    }

    /// The recovery rule (R2) for users whose arrivals end at `arrivals_end`:
    /// all of them ([`Model::arrivals_end`]) or one group's.
    pub fn recovery(&self, arrivals_end: Nanos) -> crate::result::Recovery {
        crate::result::Recovery {
            window_end: self.window.1,
            width_s: self.recovery_window.div_ceil(NANOS_PER_SEC).max(1),
            threshold: self.recovery_threshold,
            arrivals_end,
        }
    }
}

/// The slow windows of tier `t` that slow its replica `k` (those naming
/// no replica slow every one): the product of their factors.
fn slow_windows(t: &crate::scenario::Tier, k: u32) -> Steps {
    let parts = t
        .slow
        .iter()
        .map(|w| (w.start_s, w.duration_s, w.factor, &w.replicas));
    Steps::of(&replica_windows(parts, k))
}

/// The error windows of tier `t` that fail its replica `k`: the chance of
/// passing them all, as independent failures.
fn error_passes(t: &crate::scenario::Tier, k: u32) -> Steps {
    let parts = (t.errors.iter()).map(|w| (w.start_s, w.duration_s, 1.0 - w.p, &w.replicas));
    Steps::of(&replica_windows(parts, k))
}

/// A window in which a server instance is down.
#[derive(Clone, Debug)]
pub struct Crash {
    pub start: Nanos,
    pub end: Nanos,
    /// `None`: a black hole; else the delay of a refusal.
    pub refuse_after: Option<Nanos>,
}

/// Tier `t`'s rate limit, of its kind.
fn rate_limiter(t: &crate::scenario::Tier) -> RateLimiter {
    RateLimiter::new(
        t.rate_limit_kind,
        t.rate_limit_per_s,
        t.rate_limit_burst,
        secs_to_nanos(t.rate_limit_window_s),
    )
}

/// The crash windows of tier `t` that take its replica `k` down.
fn crashes(t: &crate::scenario::Tier, k: u32) -> Vec<Crash> {
    let parts = (t.crash.iter()).map(|w| (w.start_s, w.duration_s, 0.0, &w.replicas));
    let windows = replica_windows(parts, k);
    let named = (t.crash.iter()).filter(|w| w.replicas.is_empty() || w.replicas.contains(&k));
    let mut out: Vec<Crash> = (windows.into_iter().zip(named))
        .map(|((start, end, _), w)| Crash {
            start,
            end,
            refuse_after: (w.mode == crate::scenario::CrashMode::Refused)
                .then(|| secs_to_nanos(w.connect_latency_s)),
        })
        .collect();
    out.sort_by_key(|c| c.start);
    out
}

/// Windows `(start_s, duration_s, value, replicas)` that apply to replica
/// `k` (those naming no replica apply to every one), as `(start, end, value)`.
fn replica_windows<'a>(
    windows: impl Iterator<Item = (f64, f64, f64, &'a Vec<u32>)>,
    k: u32,
) -> Vec<(Nanos, Nanos, f64)> {
    windows
        .filter(|(_, _, _, replicas)| replicas.is_empty() || replicas.contains(&k))
        .map(|(start_s, duration_s, value, _)| {
            let start = secs_to_nanos(start_s);
            (
                start,
                start.saturating_add(secs_to_nanos(duration_s)),
                value,
            )
        })
        .collect()
}

/// The mean number of users of one run: the arrival rate integrated over
/// `[0, duration_s)`, load spikes and profiles included. Closed-loop users
/// send at most one request per think time, plus their first (a bound:
/// responses only lengthen a cycle).
pub fn expected_users(s: &Scenario) -> f64 {
    s.groups().map(|(_, c)| expected_group_users(c)).sum()
}

/// [`expected_users`] of one client group.
pub fn expected_group_users(c: &Client) -> f64 {
    if !c.closed.is_off() {
        return c.closed.users as f64 * (1.0 + c.duration_s / c.closed.think.mean_s);
    }
    let end = secs_to_nanos(c.duration_s);
    if let Some(profile) = RateProfile::new(c) {
        return profile.expected(end);
    }
    let segments = arrival_segments(&c.spike, end);
    let seconds: f64 = (segments.iter().enumerate())
        .map(|(i, (start, factor))| {
            let next = segments.get(i + 1).map_or(end, |n| n.0);
            nanos_to_secs(next.saturating_sub(*start)) * factor
        })
        .sum();
    c.rate_per_s * seconds
}

/// The arrival-rate multiplier as `(start, factor)` segments covering
/// `[0, end)`: a new segment wherever a spike starts or ends. The first
/// starts at 0 even when `end` is 0 (a duration under half a nanosecond):
/// the arrivals' loop looks for the segment an instant falls in.
fn arrival_segments(spikes: &[crate::scenario::SlowWindow], end: Nanos) -> Vec<(Nanos, f64)> {
    let windows: Vec<(Nanos, Nanos, f64)> = spikes
        .iter()
        .map(|w| {
            let start = secs_to_nanos(w.start_s);
            (
                start,
                start.saturating_add(secs_to_nanos(w.duration_s)),
                w.factor,
            )
        })
        .collect();
    let mut bounds: Vec<Nanos> = std::iter::once(0)
        .chain(windows.iter().flat_map(|(s, e, _)| [*s, *e]))
        .filter(|b| *b == 0 || *b < end)
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    bounds
        .into_iter()
        .map(|b| {
            let factor = windows
                .iter()
                .filter(|(s, e, _)| *s <= b && b < *e)
                .map(|(_, _, f)| *f)
                .product();
            (b, factor)
        })
        .collect()
}

/// The most deliveries beyond the first that the message queues can make
/// in one run: each message at most once per redelivery delay until the
/// horizon.
fn redeliveries_bound(s: &Scenario) -> f64 {
    (s.clients.values())
        .filter(|c| !c.queue.is_off())
        .map(|c| expected_group_users(c) * s.horizon_s / c.queue.redeliver_after_s)
        .sum()
}

/// A run does a handful of events per request it causes (arrival, start,
/// completion, timer); 20 per possible request is far above any real run,
/// yet stops a runaway within seconds.
fn default_event_budget(expected_users: f64, arrival_bounds: u64) -> u64 {
    let per_user = 20.0 * (1 + arrival_bounds) as f64;
    (expected_users * 1.2 * per_user + 100_000.0).min(1e12) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Stream;

    /// The step function gives, bit for bit, the product over the windows
    /// holding each time in list order, at and around every edge:
    /// overlapping, nested, touching, empty and repeated windows.
    #[test]
    fn steps_are_the_product_of_the_windows_holding_a_time() {
        let mut rng = Stream::new(7, "steps");
        for case in 0..200 {
            let windows: Vec<(Nanos, Nanos, f64)> = (0..rng.below_or_eq(12))
                .map(|_| {
                    let start = rng.below_or_eq(20) * 10;
                    let end = start + rng.below_or_eq(5) * 10;
                    (start, end, 0.3 + 2.0 * rng.uniform())
                })
                .collect();
            let steps = Steps::of(&windows);
            for now in 0..260 {
                let product: f64 = (windows.iter())
                    .filter(|(start, end, _)| *start <= now && now < *end)
                    .map(|(_, _, x)| *x)
                    .product();
                assert_eq!(
                    steps.at(now).to_bits(),
                    product.to_bits(),
                    "case {case} at {now}: {windows:?}"
                );
            }
            let any_open = windows.iter().any(|(start, end, _)| start < end);
            assert_eq!(steps.is_empty(), !any_open, "case {case}");
        }
    }

    /// A mixture whose fast part has mean 0 draws 0 for it whatever its
    /// shape: a lognormal of mean 0 drew e^(sigma z) nanoseconds (up to
    /// seconds at sigma 6).
    #[test]
    fn a_mean_of_zero_draws_zero_whatever_the_shape() {
        let mut rng = Stream::new(1, "t");
        for dist in [Dist::Constant, Dist::Exponential, Dist::Lognormal] {
            let model = ServiceModel::new(&Service {
                dist,
                sigma: 6.0,
                slow_p: 0.5,
                slow_s: 0.0,
                ..Service::default()
            });
            assert!(
                (0..1000).all(|_| model.draw(1.0, &mut rng) == 0),
                "{dist:?}"
            );
        }
    }
}
