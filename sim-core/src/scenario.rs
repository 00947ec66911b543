//! The scenario: plain serde data describing one call chain, its load and its
//! policies. Everything that varies between runs lives here or in the seed.
//!
//! Times are seconds (`f64`) here, for people; the engine converts them to
//! integer nanoseconds once, in [`crate::model`].

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use strum::VariantNames;

/// A complete, runnable description of one experiment (without the seed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name of the scenario (e.g. `ch37`); a label, not used by the model.
    pub name: String,
    /// Label of the preset last applied (see [`Scenario::presets`]); setting
    /// the `strategy` path applies that preset. In a file it is only a label.
    #[serde(default = "default_strategy")]
    pub strategy: String,
    /// Order in which a finishing server replies and refills its slots.
    #[serde(default)]
    pub dispatch: Dispatch,
    /// Simulated time at which the run stops (seconds).
    pub horizon_s: f64,
    /// Width of the bins of the tiers' sub-second arrival series (seconds,
    /// dividing 1 s); 1: per second only.
    #[serde(default = "one_second")]
    pub series_bin_s: f64,
    /// Event budget of one run; `None` derives one from the scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_events: Option<u64>,
    /// How recovery time (requirement R2) is measured.
    #[serde(default)]
    pub recovery: RecoveryRule,
    /// The load generator and its call policy towards the first tier.
    pub client: Client,
    /// Further client groups beside `client`, by name (`[clients.batch]`):
    /// each a load generator of its own (open or closed, its own profile,
    /// spikes, classes and call policy) calling the first tier. Run in name
    /// order after `client`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub clients: BTreeMap<String, Client>,
    /// The servers: `tiers[0]` is called by the client; a tier with a
    /// `call` calls the next one in the list, a tier with `fanout` calls its
    /// branches' tiers (later in the list) in parallel, and a tier with
    /// neither is a leaf. Every tier but the first is called by at least one
    /// (several callers share it: the call graph is a DAG).
    pub tiers: Vec<Tier>,
    /// Named sets of overrides (`path -> value`) selectable as `strategy`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub presets: BTreeMap<String, BTreeMap<String, toml::Value>>,
}

/// Left out of the serialized scenario only when wholly at its default:
/// a part set before the field that switches it on (a sinusoid's period
/// before its amplitude) must survive the setter's round trip.
fn is_default<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

fn default_strategy() -> String {
    "custom".to_string()
}

/// MODEL.md 2, "Dispatch discipline".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Dispatch {
    /// Strict first-come-first-served: a finishing server pops its queue
    /// before it replies, and an arrival never overtakes a queued request.
    #[default]
    Fifo,
    /// The source program's order: a finishing non-leaf server replies up the
    /// chain before it pops its queue, and an arrival takes any free slot.
    ReplyFirst,
}

/// The spacing of open arrivals at a constant rate (and its load spikes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Arrivals {
    /// A Poisson process: exponential gaps.
    #[default]
    Poisson,
    /// One arrival in the middle of every gap of 1 / rate: exactly rate x
    /// duration arrivals, as a load generator sending at a fixed rate.
    Even,
}

/// Requirement R2: the first whole second `t` at or after the trigger's end
/// such that requests arriving in `[t, t + window_s)` succeed at
/// `>= threshold`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryRule {
    pub window_s: f64,
    pub threshold: f64,
}

impl Default for RecoveryRule {
    fn default() -> Self {
        RecoveryRule {
            window_s: 3.0,
            threshold: 0.99,
        }
    }
}

/// A class of user requests (e.g. online users, replay traffic).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestClass {
    pub name: String,
    /// Relative weight among the classes' shares (they need not sum to 1).
    pub share: f64,
}

/// The source of user requests: open arrivals (Poisson at `rate_per_s`,
/// shaped by a `profile` or a `sinusoid`), or `closed` loops of users.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Client {
    /// Mean Poisson arrival rate of user requests (per second); 0 (absent)
    /// when a profile or closed-loop users set the load instead.
    #[serde(default)]
    pub rate_per_s: f64,
    /// How open arrivals are spaced at `rate_per_s`.
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Arrivals happen in `[0, duration_s)`.
    pub duration_s: f64,
    /// A user's patience: the total deadline of a user request, across all
    /// the client's attempts, from its arrival (0: none; each attempt is
    /// bounded by its timeout only).
    #[serde(default)]
    pub deadline_s: f64,
    /// Closed-loop users instead of open arrivals (off with 0 users).
    #[serde(default, skip_serializing_if = "is_default")]
    pub closed: ClosedLoop,
    /// A piecewise-linear arrival rate instead of `rate_per_s`: the rate
    /// before the first point is the first point's, after the last the last's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<ProfilePoint>,
    /// A CSV file of `time_s,rate_per_s` rows, relative to the scenario
    /// file: read into `profile` when the file is loaded ([`crate::load_base`]),
    /// so that a run never reads files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_csv: Option<String>,
    /// A diurnal cycle: the rate is `rate_per_s x (1 + amplitude sin(2 pi t / period_s))`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub sinusoid: Sinusoid,
    /// Request classes in priority order (the first is served first),
    /// each user drawn into one by the shares. Empty: one class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<RequestClass>,
    /// Tenant keys the users carry, drawn from a Zipf distribution over
    /// this many tenants (0 or 1: one key for the whole group), for
    /// per-key rate limits (`rate_limit_key = "tenant"`).
    #[serde(default)]
    pub tenants: u32,
    /// The Zipf exponent: tenant k (from 1) is drawn with probability
    /// proportional to 1 / k^s (0: uniform).
    #[serde(default = "default_zipf_s")]
    pub tenant_zipf_s: f64,
    /// Load spikes: windows in which the arrival rate is multiplied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spike: Vec<SlowWindow>,
    /// A message queue in front of this group's calls (off with 0
    /// consumers): its arrivals are messages published to a backlog, and
    /// each of its user requests is one delivery of a message.
    #[serde(default, skip_serializing_if = "is_default")]
    pub queue: Queue,
    /// The tier this group calls, by name (`None`: the first tier). A
    /// group that calls a tier further down shares it with the tier above
    /// (a batch job that reads the database directly, past the services
    /// whose protections the online users meet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<String>,
    /// The client's attempts towards the tier it calls.
    pub call: Call,
}

impl Client {
    /// The index of the tier this group calls: the first unless `calls`
    /// names another; `None` for a name that is no tier's.
    pub fn entry_tier(&self, tiers: &[Tier]) -> Option<usize> {
        match &self.calls {
            None => Some(0),
            Some(name) => tiers.iter().position(|t| &t.name == name),
        }
    }
}

/// A message queue (a broker) between a client group's producers and its
/// consumers: every arrival of the group publishes a message, always
/// accepted unless `max_backlog` messages are waiting; `consumers` take
/// waiting messages one at a time, each delivery a user request of the
/// group through its call policy; a failed delivery puts its message back,
/// to be delivered again `redeliver_after_s` later. Off with 0 consumers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Queue {
    pub consumers: u32,
    /// Deliveries start at least 1 / rate apart (0: as fast as the
    /// consumers take them).
    pub drain_rate_per_s: f64,
    pub redeliver_after_s: f64,
    /// Most messages waiting (delivered ones excluded); a message
    /// published beyond it is dropped. `None`: unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_backlog: Option<u32>,
}

impl Default for Queue {
    fn default() -> Queue {
        Queue {
            consumers: 0,
            drain_rate_per_s: 0.0,
            redeliver_after_s: 1.0,
            max_backlog: None,
        }
    }
}

impl Queue {
    pub fn is_off(&self) -> bool {
        self.consumers == 0
    }
}

/// Closed-loop users: each sends one request, waits for its outcome (with
/// the client's retries), thinks, and sends the next, until the client's
/// `duration_s`. Each user starts by thinking.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedLoop {
    /// Number of users; 0: open arrivals.
    #[serde(default)]
    pub users: u32,
    /// Think time between an outcome and the next request.
    #[serde(default)]
    pub think: Service,
}

impl ClosedLoop {
    pub fn is_off(&self) -> bool {
        self.users == 0
    }
}

/// A point of a piecewise-linear arrival rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfilePoint {
    pub at_s: f64,
    pub rate_per_s: f64,
}

/// A sinusoidal modulation of the open arrival rate (off with amplitude 0).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sinusoid {
    #[serde(default)]
    pub period_s: f64,
    /// In `[0, 1]`, so that the rate never falls below 0.
    #[serde(default)]
    pub amplitude: f64,
}

impl Sinusoid {
    pub fn is_off(&self) -> bool {
        self.amplitude == 0.0
    }
}

/// One server of the chain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    /// Unique name; the first segment of this tier's parameter paths.
    pub name: String,
    /// Concurrent requests in service. A non-leaf tier holds its slot from
    /// start to final reply, downstream waits and backoff included.
    pub slots: u32,
    /// Identical instances behind each caller's load balancer, each with
    /// its own slots, queue and protections (1: a single instance).
    #[serde(default = "one")]
    pub replicas: u32,
    /// Maximum queue length; absent means unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_cap: Option<u32>,
    /// Answer a dequeued request whose deadline has passed with an error.
    #[serde(default)]
    pub drop_expired: bool,
    /// Which queued request a freed slot takes.
    #[serde(default)]
    pub queue_order: QueueOrder,
    /// Adaptive LIFO: serve the newest while the queue is longer than this.
    #[serde(default)]
    pub lifo_threshold: u32,
    /// Bulkheads per request class: most requests of that class in service
    /// at once (a class not named: no limit).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub class_slots: BTreeMap<String, u32>,
    /// Load shedding per class: arriving requests of that class are
    /// rejected while the queue holds at least this many (not named: never).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shed_queue: BTreeMap<String, u32>,
    /// Mean service time per request class: that class's work here has
    /// the tier's distribution (and slow value) with this mean instead of
    /// `service.mean_s` (not named: the tier's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub class_service_s: BTreeMap<String, f64>,
    /// CoDel queue management at dequeue: drop by sojourn time against
    /// `codel_target_s` over `codel_interval_s`, dropping faster while it
    /// stays above (the control law interval / sqrt(count)).
    #[serde(default)]
    pub codel: bool,
    #[serde(default = "default_codel_target")]
    pub codel_target_s: f64,
    #[serde(default = "default_codel_interval")]
    pub codel_interval_s: f64,
    /// Token-bucket rate limit on arrivals (per second; 0: none). Over the
    /// limit a request is rejected like a full queue.
    #[serde(default)]
    pub rate_limit_per_s: f64,
    /// Token-bucket burst (tokens; the bucket starts full).
    #[serde(default = "default_burst")]
    pub rate_limit_burst: f64,
    /// With replicas: one bucket per replica (each at the rate, so the
    /// tier admits the rate times its replicas, and the total drifts when
    /// their number changes), or one bucket for the whole tier (a
    /// cluster-wide limit).
    #[serde(default)]
    pub rate_limit_scope: LimitScope,
    /// How the rate is counted: a token bucket (bursts up to
    /// `rate_limit_burst`), or windows of `rate_limit_window_s` admitting
    /// the rate times their length, fixed (aligned, with the boundary
    /// double burst) or sliding (the previous window weighted in).
    #[serde(default)]
    pub rate_limit_kind: RateLimitKind,
    #[serde(default = "default_rate_window")]
    pub rate_limit_window_s: f64,
    /// What the rate limit is counted by: all requests together, or each
    /// user's tenant key its own limiter at the rate (a per-key limit).
    #[serde(default)]
    pub rate_limit_key: RateLimitKey,
    /// Adaptive concurrency limit below `slots` (AIMD or gradient, by
    /// `limit_algorithm`); see the `limit_*` paths.
    #[serde(default)]
    pub adaptive_limit: bool,
    #[serde(default = "default_limit_min")]
    pub limit_min: u32,
    #[serde(default = "default_limit_latency")]
    pub limit_latency_s: f64,
    #[serde(default = "default_limit_decrease")]
    pub limit_decrease: f64,
    #[serde(default = "default_limit_increase")]
    pub limit_increase: u32,
    #[serde(default = "default_limit_samples")]
    pub limit_min_samples: u32,
    #[serde(default = "default_limit_breaches")]
    pub limit_breaches: u32,
    #[serde(default = "default_limit_interval")]
    pub limit_interval_s: f64,
    /// AIMD: growth after a clean window as a percentage of the limit, on
    /// top of `limit_increase` (0: none).
    #[serde(default)]
    pub limit_increase_percent: f64,
    /// AIMD: shortest time between two changes of the limit (0: none
    /// beyond the windows).
    #[serde(default)]
    pub limit_hold_s: f64,
    /// AIMD: what a window with fewer than `limit_min_samples` completions
    /// does when `limit_interval_s` has passed.
    #[serde(default)]
    pub limit_sparse: LimitSparse,
    /// AIMD: where a request's latency starts, for the latency target.
    #[serde(default)]
    pub limit_latency_from: LatencyFrom,
    /// How the adaptive limit moves: AIMD on a latency target, or a
    /// gradient of long-term over short-term latency.
    #[serde(default)]
    pub limit_algorithm: LimitAlgorithm,
    /// Gradient: how much slower than the long-term latency a window may be
    /// before the limit shrinks.
    #[serde(default = "default_limit_tolerance")]
    pub limit_tolerance: f64,
    /// Gradient: weight of each new estimate (1: no smoothing).
    #[serde(default = "default_limit_smoothing")]
    pub limit_smoothing: f64,
    /// Gradient: completions the long-term latency averages over.
    #[serde(default = "default_limit_long_window")]
    pub limit_long_window: u32,
    /// Delay of the reply to a request rejected because the queue is full.
    #[serde(default = "default_reject_latency")]
    pub reject_latency_s: f64,
    /// Cooperative cancellation: check the request's deadline every this
    /// many seconds of its own work and abandon the work once it has passed
    /// (0: never; started work runs to the end).
    #[serde(default)]
    pub cancel_check_s: f64,
    /// Overload signalling: a rejection for a full queue carries this
    /// Retry-After (seconds; 0: none).
    #[serde(default)]
    pub retry_after_s: f64,
    /// How the tier answers the requests it rejects (full queue, rate
    /// limit, shedding, CoDel): as overload (429/503) or as a server error
    /// (500, which carries no Retry-After).
    #[serde(default)]
    pub reject_as: RejectAs,
    /// Own work per request, done when it starts (before any downstream call).
    #[serde(default)]
    pub service: Service,
    /// One-way network latency of the hop into this tier (requests, replies
    /// and rejections each take one draw); default none.
    #[serde(default)]
    pub latency: Service,
    /// Windows in which service times are multiplied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slow: Vec<SlowWindow>,
    /// Windows in which a share of the requests that start fail fast: an
    /// error reply after `error_latency_s`, without the tier's own work or
    /// its downstream calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorWindow>,
    /// How long a request that fails fast holds its slot before the error.
    #[serde(default = "default_error_latency")]
    pub error_latency_s: f64,
    /// Windows in which replicas are down (crashed, then restarted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crash: Vec<CrashWindow>,
    /// GC-like pauses of each instance: every `gc.every_s`, its slots do
    /// no work for `gc.pause_s` plus `gc.per_queued_s` per queued request.
    #[serde(default)]
    pub gc: Gc,
    /// A look-aside cache in front of the tier (off: `hit_ratio` = 0).
    #[serde(default)]
    pub cache: Cache,
    /// This tier's calls to the next tier in the list (a chain link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<Call>,
    /// Instead of `call`: downstreams called in parallel once the tier's own
    /// work is done; it replies when every branch has ended (the critical
    /// path), with an error as soon as a required branch fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fanout: Vec<Branch>,
}

/// One branch of a fan-out: the tier called and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Branch {
    /// Name of the tier called (later in the list).
    pub to: String,
    /// A required branch that fails fails the caller; an optional one only
    /// degrades its reply (counted as `degraded`).
    #[serde(default = "yes")]
    pub required: bool,
    pub call: Call,
}

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

fn one_second() -> f64 {
    1.0
}

/// A call edge of the topology, as [`Scenario::edges`] lists them.
pub struct Edge<'a> {
    /// Index of the calling tier; `None` for a client group.
    pub from: Option<usize>,
    /// Index of the tier called.
    pub to: usize,
    /// The caller's name in metrics: `client` or the group's name, the
    /// tier's name for a chain link, `<tier>_to_<branch>` for a fan-out
    /// branch.
    pub name: String,
    /// Where its parameters live: `client`, `<group>`, `<tier>`,
    /// `<tier>.fanout.<branch>`.
    pub path: String,
    pub call: &'a Call,
    pub required: bool,
}

fn default_limit_min() -> u32 {
    1
}
fn default_limit_latency() -> f64 {
    0.5
}
fn default_limit_decrease() -> f64 {
    0.9
}
fn default_limit_increase() -> u32 {
    1
}
fn default_limit_samples() -> u32 {
    10
}
fn default_limit_breaches() -> u32 {
    1
}
fn default_limit_interval() -> f64 {
    0.1
}
fn default_limit_tolerance() -> f64 {
    1.5
}
fn default_limit_smoothing() -> f64 {
    0.2
}
fn default_limit_long_window() -> u32 {
    600
}

fn default_zipf_s() -> f64 {
    1.0
}

fn default_burst() -> f64 {
    1.0
}

fn default_rate_window() -> f64 {
    1.0
}

fn default_codel_target() -> f64 {
    0.005
}
fn default_codel_interval() -> f64 {
    0.1
}

fn default_reject_latency() -> f64 {
    0.0005
}

/// How a tier answers a request it rejects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RejectAs {
    /// Overload (HTTP 429 / 503, gRPC RESOURCE_EXHAUSTED / UNAVAILABLE),
    /// with the tier's Retry-After if it has one.
    #[default]
    Overload,
    /// A server error (HTTP 500): callers cannot tell it from a failure of
    /// the work, and it carries no Retry-After.
    Error,
}

/// The class of a failed attempt, as a caller chooses what to retry and
/// what counts as a failure.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, VariantNames,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum OutcomeClass {
    /// No answer before the attempt's end.
    Timeout,
    /// Rejected as overload (429 / 503, CoDel's drops).
    Overload,
    /// A server error (500): a failed reply, a tier's rejection answered as
    /// an error, a local fast failure (breaker, bulkhead, throttle).
    Error,
    /// Dropped because its deadline had passed (drop-expired).
    Expired,
    /// The connection was refused (a replica down).
    Refused,
}

fn every_class() -> Vec<OutcomeClass> {
    vec![
        OutcomeClass::Timeout,
        OutcomeClass::Overload,
        OutcomeClass::Error,
        OutcomeClass::Expired,
        OutcomeClass::Refused,
    ]
}

fn is_every_class(classes: &[OutcomeClass]) -> bool {
    classes == every_class()
}

/// When a caller cancels a request it no longer waits for (a cancelled
/// request is dropped if it has not started, stopped at once if it has).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum CancelMode {
    /// Never: the work goes on for nobody (the source program's behaviour).
    #[default]
    Never,
    /// The losing copy of a hedged attempt, once the other has answered.
    HedgeLosers,
    /// Every request it stops waiting for: an attempt that timed out, a
    /// hedge loser, and its own requests when it is cancelled itself, so
    /// that cancellation travels down through callers that also cancel.
    Always,
}

/// The rule of an adaptive concurrency limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum LimitAlgorithm {
    /// Additive increase, multiplicative decrease on a latency target.
    #[default]
    Aimd,
    /// Netflix concurrency-limits' Gradient2: the ratio of long-term to
    /// short-term latency scales the limit, plus a queue allowance.
    Gradient,
}

/// Dequeue order of a tier's queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum QueueOrder {
    /// Oldest first.
    #[default]
    Fifo,
    /// Newest first: under overload the served requests are the ones whose
    /// callers still wait.
    Lifo,
    /// Newest first only while the queue is longer than `lifo_threshold`.
    AdaptiveLifo,
}

/// Stop-the-world pauses (a garbage collector): at every multiple of
/// `every_s` an instance pauses for `pause_s + per_queued_s` x the requests
/// queued there, and its slots do no work meanwhile (off: `every_s` = 0).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Gc {
    pub every_s: f64,
    pub pause_s: f64,
    pub per_queued_s: f64,
}

impl Gc {
    pub fn is_off(&self) -> bool {
        self.every_s == 0.0
    }
}

/// A look-aside cache in front of a tier: a share `hit_ratio` of lookups
/// is answered from it after `hit_latency_s`, the rest go to the tier. A
/// flush window `[flush_start_s, flush_start_s + flush_duration_s)` answers
/// nothing and leaves it empty; after it each miss the tier answers with
/// success fills one of `fill_keys` keys, and the hit ratio is
/// `hit_ratio x filled / fill_keys` until all are filled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Cache {
    pub hit_ratio: f64,
    pub hit_latency_s: f64,
    pub flush_start_s: f64,
    pub flush_duration_s: f64,
    pub fill_keys: u32,
}

impl Default for Cache {
    fn default() -> Cache {
        Cache {
            hit_ratio: 0.0,
            hit_latency_s: 0.001,
            flush_start_s: 0.0,
            flush_duration_s: 0.0,
            fill_keys: 1000,
        }
    }
}

/// A service-time distribution, optionally mixed with a slow value. A key
/// left out takes its default (no work: constant 0), so that one path such
/// as `client.closed.think.mean_s` can be set alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Service {
    pub dist: Dist,
    /// Mean of the distribution (seconds); 0 means no own work.
    pub mean_s: f64,
    /// Shape of the lognormal (standard deviation of the log); unused otherwise.
    #[serde(default = "default_sigma")]
    pub sigma: f64,
    /// Probability that a request takes `slow_s` instead of a draw.
    #[serde(default)]
    pub slow_p: f64,
    /// The slow value of the two-point mixture (seconds).
    #[serde(default)]
    pub slow_s: f64,
    /// A tier's service only: seconds added per request in service when
    /// the work starts (itself included), so that capacity falls as
    /// concurrency grows (0: none).
    #[serde(default)]
    pub per_inflight_s: f64,
}

fn default_sigma() -> f64 {
    1.0
}

impl Default for Service {
    fn default() -> Self {
        Service {
            dist: Dist::Constant,
            mean_s: 0.0,
            sigma: default_sigma(),
            slow_p: 0.0,
            slow_s: 0.0,
            per_inflight_s: 0.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Dist {
    Exponential,
    Constant,
    Lognormal,
}

/// One trigger window (see [`Scenario::triggers`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trigger {
    pub path: String,
    pub start_s: f64,
    pub duration_s: f64,
    pub factor: Option<f64>,
}

impl Trigger {
    fn new(path: String, start_s: f64, duration_s: f64, factor: Option<f64>) -> Trigger {
        Trigger {
            path,
            start_s,
            duration_s,
            factor,
        }
    }
}

/// A window `[start_s, start_s + duration_s)` in which something is
/// multiplied by `factor`: a tier's service times (of requests that *start*
/// inside it), or the client's arrival rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlowWindow {
    pub start_s: f64,
    pub duration_s: f64,
    pub factor: f64,
    /// A tier's window: the replicas it slows (0-based); empty: all of them.
    /// A load spike has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<u32>,
}

/// A window `[start_s, start_s + duration_s)` in which a tier answers a
/// share `p` of the requests that start with a fast error (a burst of
/// 5xx; for always, from 0 to the horizon), on the replicas named (empty:
/// all of them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorWindow {
    pub start_s: f64,
    pub duration_s: f64,
    pub p: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<u32>,
}

/// A window `[start_s, start_s + duration_s)` in which the replicas named
/// (empty: all) are down: at the start their queued and in-service work is
/// lost (no reply: their callers wait for their timeouts); while down,
/// arrivals are refused or vanish, by `mode`; at the end they restart
/// empty.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrashWindow {
    pub start_s: f64,
    pub duration_s: f64,
    #[serde(default)]
    pub mode: CrashMode,
    /// `refused`: how long a caller takes to learn the connection failed.
    #[serde(default = "default_connect_latency")]
    pub connect_latency_s: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<u32>,
}

pub(crate) fn default_connect_latency() -> f64 {
    0.001
}

/// What a caller sees of a replica that is down.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum CrashMode {
    /// The connection is refused: the attempt fails fast (`refused`) after
    /// the connect latency.
    #[default]
    Refused,
    /// No answer at all: the caller waits for its timeout.
    BlackHole,
}

fn default_error_latency() -> f64 {
    0.001
}

/// How a caller (the client or a non-leaf tier) calls the next tier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    /// Timeout of one attempt; capped at the caller's own deadline if it has one.
    pub attempt_timeout_s: f64,
    /// Timeouts of the first attempts, in order (the first attempt's, the
    /// first retry's, ...); attempts beyond the list take
    /// `attempt_timeout_s`. Empty: every attempt takes `attempt_timeout_s`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempt_timeouts_s: Vec<f64>,
    /// Attempts after the first.
    pub max_retries: u32,
    pub backoff: BackoffKind,
    /// Fixed: the wait. Full jitter: the base of `base * 2^(n-1)`.
    pub backoff_base_s: f64,
    /// Full jitter: upper bound of the exponential term.
    #[serde(default = "default_backoff_cap")]
    pub backoff_cap_s: f64,
    /// Each wait before a retry (the backoff, or an honoured Retry-After)
    /// is multiplied by a uniform draw in `[1 - j, 1 + j]` (0: none).
    #[serde(default)]
    pub backoff_jitter: f64,
    /// The classes of failed attempts this caller retries (others end the
    /// job at once: `not_retryable`).
    #[serde(default = "every_class", skip_serializing_if = "is_every_class")]
    pub retry_on: Vec<OutcomeClass>,
    /// The classes of failed attempts the retry throttle and the circuit
    /// breaker count as failures (gRFC A6 counts only the retryable ones);
    /// the others are neither failures nor successes for them.
    #[serde(default = "every_class", skip_serializing_if = "is_every_class")]
    pub failure_on: Vec<OutcomeClass>,
    /// Pass this attempt's end downstream as the callee's deadline.
    #[serde(default)]
    pub propagate_deadline: bool,
    /// gRFC A6 retry throttling with a token bucket owned by this caller.
    #[serde(default)]
    pub retry_throttle: bool,
    #[serde(default = "default_max_tokens")]
    pub throttle_max_tokens: f64,
    #[serde(default = "default_token_ratio")]
    pub throttle_token_ratio: f64,
    /// Deadline safety margin: an attempt ends by `deadline - margin`, and
    /// none is sent when that is already past.
    #[serde(default)]
    pub deadline_margin_s: f64,
    /// Budget admission: send an attempt only if its backoff plus one full
    /// attempt timeout still fit before `deadline - margin`.
    #[serde(default)]
    pub budget_admission: bool,
    /// Envoy-style retry budget: a retry is decided only while this
    /// caller's active retries (from the decision, through the backoff,
    /// until the attempt ends) are fewer than `retry_budget_percent` of its
    /// attempts in flight, or than `retry_budget_min_concurrency`.
    #[serde(default)]
    pub retry_budget: bool,
    #[serde(default = "default_budget_percent")]
    pub retry_budget_percent: f64,
    #[serde(default = "default_min_retry_concurrency")]
    pub retry_budget_min_concurrency: u32,
    /// Adaptive client throttling (SRE book, "Handling Overload"): reject an
    /// attempt locally with probability max(0, (requests - K accepts) /
    /// (requests + 1)) over the last `adaptive_throttle_window_s`.
    #[serde(default)]
    pub adaptive_throttle: bool,
    #[serde(default = "default_throttle_k")]
    pub adaptive_throttle_k: f64,
    /// Wait at least the Retry-After of a rejection before retrying it.
    #[serde(default)]
    pub honor_retry_after: bool,
    #[serde(default = "default_throttle_window")]
    pub adaptive_throttle_window_s: f64,
    /// Circuit breaker on this caller's calls (see the `breaker_*` paths).
    #[serde(default)]
    pub breaker: bool,
    #[serde(default = "default_breaker_window")]
    pub breaker_window: u32,
    /// A time-based window instead: the outcomes of the last this many
    /// seconds (0: the count-based `breaker_window`).
    #[serde(default)]
    pub breaker_window_s: f64,
    #[serde(default = "default_breaker_min_samples")]
    pub breaker_min_samples: u32,
    #[serde(default = "default_breaker_failure_rate")]
    pub breaker_failure_rate: f64,
    #[serde(default = "default_breaker_slow_rate")]
    pub breaker_slow_call_rate: f64,
    #[serde(default = "default_breaker_slow_call")]
    pub breaker_slow_call_s: f64,
    #[serde(default = "default_breaker_open")]
    pub breaker_open_s: f64,
    #[serde(default)]
    pub breaker_open_jitter_s: f64,
    #[serde(default = "default_breaker_probes")]
    pub breaker_half_open_probes: u32,
    /// One breaker for the whole call edge, or one per replica of the
    /// called tier (the balancer skips replicas whose breaker is open).
    #[serde(default)]
    pub breaker_scope: BreakerScope,
    /// Hedged requests: a second copy of an attempt still unanswered after
    /// this delay (0: none); the first answer wins, the other is wasted.
    #[serde(default)]
    pub hedge_delay_s: f64,
    /// Hedging budget: hedges at most this percentage of the calls sent.
    #[serde(default = "default_hedge_budget")]
    pub hedge_budget_percent: f64,
    /// Hedge after this quantile (in (0, 1)) of the caller's recent
    /// successful attempt latencies instead of a fixed delay (0: fixed).
    #[serde(default)]
    pub hedge_quantile: f64,
    /// Which requests this caller cancels when it stops waiting for them.
    #[serde(default)]
    pub cancel: CancelMode,
    /// Budget split: an attempt may use at most this share of the time left
    /// before the deadline (1: all that remains, the time is shared; e.g.
    /// 2/3 then 1/2 on a three-hop chain gives each hop an equal third).
    #[serde(default = "default_budget_share")]
    pub budget_share: f64,
    /// Bulkhead for this downstream: at most this many of this caller's
    /// attempts in flight at once; one more fails fast locally
    /// (`bulkhead_rejected`). `None`: unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u32>,
    /// The bulkhead for the whole call edge, or one per replica of the
    /// called tier (the balancer skips replicas that are full).
    #[serde(default)]
    pub bulkhead_scope: BulkheadScope,
    /// Which replica of the called tier each request goes to (with one
    /// replica there is no choice to make).
    #[serde(default)]
    pub balancer: Balancer,
    /// A hedged copy goes to another replica than its attempt's first
    /// copy, a retry to another than every copy of the attempt before it,
    /// when another may be chosen.
    #[serde(default = "yes")]
    pub retry_other_replica: bool,
    /// Outlier ejection (Envoy's consecutive failures): a replica that fails
    /// `outlier_consecutive` attempts in a row gets no traffic from this
    /// caller for `outlier_base_ejection_s` x its ejection multiplier (at
    /// most `outlier_max_ejection_s`), returned at the next
    /// `outlier_interval_s` tick after that, if the replicas ejected with
    /// it are at most `outlier_max_ejection_percent` of them; below
    /// `outlier_panic_threshold_percent` of them not ejected, all are used.
    #[serde(default)]
    pub outlier_ejection: bool,
    #[serde(default = "default_outlier_consecutive")]
    pub outlier_consecutive: u32,
    #[serde(default = "default_outlier_base_ejection")]
    pub outlier_base_ejection_s: f64,
    /// `None`: Envoy's default, 300 s or the base ejection time if longer.
    #[serde(default)]
    pub outlier_max_ejection_s: Option<f64>,
    #[serde(default = "default_outlier_max_percent")]
    pub outlier_max_ejection_percent: f64,
    #[serde(default = "default_outlier_interval")]
    pub outlier_interval_s: f64,
    #[serde(default = "default_outlier_panic_threshold")]
    pub outlier_panic_threshold_percent: f64,
}

fn default_outlier_consecutive() -> u32 {
    5
}
fn default_outlier_base_ejection() -> f64 {
    30.0
}
fn default_outlier_max_percent() -> f64 {
    10.0
}
fn default_outlier_interval() -> f64 {
    10.0
}
fn default_outlier_panic_threshold() -> f64 {
    50.0
}

/// What one circuit breaker of a caller covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum BreakerScope {
    /// One breaker for the call edge: every replica's outcomes together.
    #[default]
    Service,
    /// One breaker per replica of the called tier, fed by that replica's
    /// answers: one bad host opens its own, and the balancer sends to the
    /// others; the call is refused locally only when every one is open.
    Replica,
}

/// How a tier's rate limit counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RateLimitKind {
    #[default]
    TokenBucket,
    FixedWindow,
    SlidingWindow,
    /// A queue drained at the rate: requests wait their turn (at most
    /// `rate_limit_burst` of them) and enter one every 1 / rate.
    LeakyBucket,
}

/// What an adaptive limit's window with too few completions does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum LimitSparse {
    /// It stays open until it has them.
    #[default]
    Wait,
    /// It closes and gives no verdict (the minimum-sample guard).
    Skip,
}

/// Where the AIMD limit measures a request's latency from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum LatencyFrom {
    /// Its arrival at the tier: the queue included (the source text's rule).
    #[default]
    Arrival,
    /// The start of its service: as Netflix's AIMDLimit, from the permit.
    Start,
}

/// What a tier's rate limit is counted by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RateLimitKey {
    /// One limiter for every request (per replica or service, by scope).
    #[default]
    None,
    /// One limiter per tenant key (`client.tenants`).
    Tenant,
}

/// What a tier's rate limit covers when it has replicas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum LimitScope {
    /// Each replica has its own bucket at the full rate.
    #[default]
    Replica,
    /// One bucket for all the replicas together.
    Service,
}

/// What a caller's bulkhead (`max_in_flight`) covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum BulkheadScope {
    /// The caller's attempts in flight to the tier, all replicas together.
    #[default]
    Service,
    /// The caller's requests in flight to each replica (hedged copies
    /// included): a full replica is skipped, and the call fails fast
    /// locally only when every one is full.
    Replica,
}

/// How a caller picks the replica of the called tier for each request. The
/// state is the caller's own (its requests in flight, its cursor, its
/// draws), as in client-side load balancing: no caller sees another's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Balancer {
    /// Each replica in turn.
    #[default]
    RoundRobin,
    /// Uniformly at random.
    Random,
    /// The replica with the fewest of this caller's requests in flight.
    LeastOutstanding,
    /// Power of two choices: two distinct replicas at random, the one with
    /// fewer of this caller's requests in flight.
    P2c,
    /// The same replica until an attempt to it fails, then the next.
    PinUntilError,
}

fn default_budget_share() -> f64 {
    1.0
}

fn default_hedge_budget() -> f64 {
    10.0
}

fn default_breaker_window() -> u32 {
    20
}
fn default_breaker_min_samples() -> u32 {
    10
}
fn default_breaker_failure_rate() -> f64 {
    0.5
}
fn default_breaker_slow_rate() -> f64 {
    1.0
}
fn default_breaker_slow_call() -> f64 {
    1.0
}
fn default_breaker_open() -> f64 {
    1.0
}
fn default_breaker_probes() -> u32 {
    3
}

fn default_throttle_k() -> f64 {
    2.0
}
fn default_throttle_window() -> f64 {
    10.0
}

fn default_budget_percent() -> f64 {
    20.0
}
fn default_min_retry_concurrency() -> u32 {
    3
}

fn default_backoff_cap() -> f64 {
    1.0
}
fn default_max_tokens() -> f64 {
    10.0
}
fn default_token_ratio() -> f64 {
    0.1
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum BackoffKind {
    /// Wait exactly `backoff_base_s`, no jitter.
    Fixed,
    /// Before retry n, wait uniform in `[0, min(cap, base * 2^(n-1))]`.
    FullJitter,
}

/// The points of a load profile from CSV text: `time_s,rate_per_s` rows;
/// blank lines, `#` comments and a header line (a first row whose time is
/// not a number) are skipped. `file` names the source in errors, with the
/// line number.
pub fn profile_from_csv(text: &str, file: &str) -> Result<Vec<ProfilePoint>, Vec<String>> {
    let mut points: Vec<ProfilePoint> = Vec::new();
    let mut problems = Vec::new();
    let mut first = true;
    // The time of the row above, refused or not.
    let mut before: Option<f64> = None;
    for (n, line) in text.lines().enumerate() {
        let row = line.trim();
        if row.is_empty() || row.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = row.split(',').map(str::trim).collect();
        let header = first && fields[0].parse::<f64>().is_err();
        first = false;
        if header {
            continue;
        }
        let at = |what: String| format!("`{file}` line {}: {what}", n + 1);
        let point = match fields[..] {
            [at_s, rate] => at_s.parse::<f64>().ok().zip(rate.parse::<f64>().ok()),
            _ => None,
        };
        let Some((at_s, rate_per_s)) = point else {
            problems.push(at(format!(
                "expected `time_s,rate_per_s` (two numbers), got `{row}`"
            )));
            continue;
        };
        // Each rule of the points' validation, said at the line.
        let above = std::mem::replace(&mut before, Some(at_s).filter(|t| t.is_finite()));
        let problem = if !at_s.is_finite() || !rate_per_s.is_finite() {
            Some(format!("`{row}`: not a finite number"))
        } else if at_s < 0.0 {
            Some(format!("time {at_s} s: must be >= 0"))
        } else if rate_per_s < 0.0 {
            Some(format!("rate {rate_per_s} /s: must be >= 0"))
        } else {
            above.filter(|a| at_s < *a).map(|above| {
                format!(
                    "time {at_s} s: before the row above's {above} s (rows must be in time order)"
                )
            })
        };
        match problem {
            Some(p) => problems.push(at(p)),
            None => points.push(ProfilePoint { at_s, rate_per_s }),
        }
    }
    if points.is_empty() && problems.is_empty() {
        problems.push(format!("`{file}`: no `time_s,rate_per_s` rows"));
    }
    if problems.is_empty() {
        Ok(points)
    } else {
        Err(problems)
    }
}

impl Tier {
    /// A tier with every optional parameter at its default: the serde
    /// defaults, so that a file and the code agree by construction.
    pub fn new(name: &str, slots: u32) -> Tier {
        toml::from_str(&format!("name = {name:?}\nslots = {slots}"))
            .expect("a tier's defaults deserialize")
    }
}

impl Call {
    /// A call policy with every optional parameter at its default.
    pub fn new(
        attempt_timeout_s: f64,
        max_retries: u32,
        backoff: BackoffKind,
        backoff_base_s: f64,
    ) -> Call {
        let text = format!(
            "attempt_timeout_s = {attempt_timeout_s:?}\nmax_retries = {max_retries}\nbackoff = \"fixed\"\nbackoff_base_s = {backoff_base_s:?}"
        );
        let call: Call = toml::from_str(&text).expect("a call's defaults deserialize");
        Call { backoff, ..call }
    }

    /// The longest ejection, in seconds: as set, or Envoy's default (300 s,
    /// or the base ejection time if that is longer).
    pub fn outlier_max_ejection(&self) -> f64 {
        (self.outlier_max_ejection_s).unwrap_or(self.outlier_base_ejection_s.max(300.0))
    }
}

impl Scenario {
    /// Parses a scenario from TOML text; `origin` names the source in
    /// errors. Every key the scenario cannot take (an unknown key, a value
    /// of the wrong type or outside its field's range, an unknown name, a
    /// missing key) is said at once, each with its line, in the file's
    /// order: serde stops at the
    /// first, so the offending key is taken out of the parsed document, or
    /// a missing key given a stand-in value its field takes (a number, a
    /// listed variant, a string, an empty table...), and the rest read
    /// again. A key found missing only because it was taken out, or inside
    /// a stand-in table, gets a stand-in unsaid; when no stand-in fits, its
    /// table is taken out. A syntax error is said alone: nothing after it
    /// is reliable.
    pub fn from_toml(text: &str, origin: &str) -> Result<Scenario, Vec<String>> {
        let said = |mut e: toml::de::Error| {
            let hint = unknown_key_hint(e.message());
            e.set_input(Some(text));
            let told = e.to_string();
            let told = told.trim_end();
            // The message ends the text, after the quoted lines.
            let told = match told.rfind(e.message()) {
                Some(at) => format!("{}{}", &told[..at], in_plain_words(e.message())),
                None => told.to_string(),
            };
            format!("{origin}: {told}{hint}")
        };
        let mut root = toml::de::DeTable::parse(text).map_err(|e| vec![said(e)])?;
        // A grid file given for a scenario: each of its keys would be
        // refused on its own, which tells the user nothing of the mix-up.
        let top = |key: &str| (root.get_ref().iter()).find(|(k, _)| k.get_ref() == key);
        if top("tiers").is_none()
            && let Some((_, value)) = top("scenario")
            && let toml::de::DeValue::String(scenario) = value.get_ref()
        {
            return Err(vec![format!(
                "{origin}: this is a grid file, not a scenario (it has no [[tiers]] and names its scenario, `{scenario}`): run the grid with `sweep run {origin}`, or give its scenario"
            )]);
        }
        // A table written as a list of tables, or the other way round:
        // read as it is written, each of its keys would be refused with a
        // message about types that does not say the brackets are wrong.
        let shapes = table_shape_problems(root.get_ref(), text, origin);
        if !shapes.is_empty() {
            return Err(shapes);
        }
        // Each problem with where it is, to be said in the file's order.
        let mut problems: Vec<(usize, String)> = Vec::new();
        let document = root.span();
        // The keys taken out, by the span of the table they were in.
        let mut taken: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        // The stand-ins put for missing keys, each spanned past the end of
        // the text, so that an error of one is told from the file's.
        let mut stand_ins: Vec<StandIn> = Vec::new();
        loop {
            let e = match Scenario::deserialize(toml::de::Deserializer::from(root.clone())) {
                Ok(scenario) if problems.is_empty() => {
                    let presets = crate::params::preset_errors(&scenario);
                    return match presets.is_empty() {
                        true => Ok(scenario),
                        false => Err(presets.iter().map(|e| format!("{origin}: {e}")).collect()),
                    };
                }
                Ok(_) => return Err(in_file_order(problems)),
                Err(e) => e,
            };
            let Some(span) = e.span() else {
                problems.push((usize::MAX, said(e)));
                return Err(in_file_order(problems));
            };
            let missing = missing_field(e.message());
            if let Some(i) = stand_ins.iter().position(|s| s.span == span) {
                // A stand-in table misses a key too: a stand-in, unsaid.
                if let Some(key) = missing {
                    let put = StandIn::put(&mut root, &span, key, text.len() + 1 + stand_ins.len());
                    stand_ins.extend(put);
                    continue;
                }
                // The field refused its stand-in: the next kind of value,
                // or, when none fits, the table of the file it stands in
                // is taken out, as if the stand-ins had never been.
                stand_ins[i].tries += 1;
                if stand_ins[i].tries < STAND_INS
                    && let Some(value) = stand_in_value(e.message())
                    && let Some(t) = table_at(&mut root, &stand_ins[i].table)
                {
                    let s = &stand_ins[i];
                    t.insert(s.key(), toml::Spanned::new(s.span.clone(), value));
                    continue;
                }
                let mut out = i;
                while let Some(up) = stand_ins
                    .iter()
                    .position(|s| s.span == stand_ins[out].table)
                {
                    out = up;
                }
                let table = stand_ins[out].table.clone();
                match take_at(&mut root, &table) {
                    Some(key) => taken.extend(key),
                    None => return Err(in_file_order(problems)),
                }
                continue;
            }
            let ours = missing.as_ref().is_some_and(|missing| {
                taken
                    .iter()
                    .any(|(table, key)| *table == span && key == missing)
            });
            if !ours {
                // The document's own missing keys have no place: last.
                let at = if span == document {
                    usize::MAX
                } else {
                    span.start
                };
                problems.push((at, said(e)));
            }
            // A missing key gets a stand-in, so that the rest of its table
            // (its other missing keys among them) is read; so does a key
            // taken out, unsaid: taking its table out instead hid the
            // table's own missing keys.
            if let Some(key) = missing
                && let Some(put) =
                    StandIn::put(&mut root, &span, key, text.len() + 1 + stand_ins.len())
            {
                stand_ins.push(put);
                continue;
            }
            match take_at(&mut root, &span) {
                Some(key) => taken.extend(key),
                None => return Err(in_file_order(problems)),
            }
        }
    }

    /// Every call edge: the client groups' first (`client`'s at 0), then each tier's in list order
    /// (its chain link, or its branches in the order given). A branch to an
    /// unknown tier is left out here; validation reports it.
    pub fn edges(&self) -> Vec<Edge<'_>> {
        // The client groups' edges first, so that the bound of every tier's
        // callers is complete before its own edges are reached.
        let mut edges: Vec<Edge> = (self.groups())
            .map(|(name, client)| Edge {
                from: None,
                // Validation refuses a name that is no tier's.
                to: client.entry_tier(&self.tiers).unwrap_or(0),
                name: name.to_string(),
                path: name.to_string(),
                call: &client.call,
                required: true,
            })
            .collect();
        for (i, t) in self.tiers.iter().enumerate() {
            if let Some(call) = &t.call {
                edges.push(Edge {
                    from: Some(i),
                    to: i + 1,
                    name: t.name.clone(),
                    path: t.name.clone(),
                    call,
                    required: true,
                });
            }
            for b in &t.fanout {
                if let Some(to) = self.tiers.iter().position(|x| x.name == b.to) {
                    edges.push(Edge {
                        from: Some(i),
                        to,
                        name: format!("{}_to_{}", t.name, b.to),
                        path: format!("{}.fanout.{}", t.name, b.to),
                        call: &b.call,
                        required: b.required,
                    });
                }
            }
        }
        edges
    }

    /// The scenario as TOML, readable back by [`Scenario::from_toml`].
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a scenario always serializes")
    }

    /// The client groups, `client` first, each with its name (the first
    /// segment of its parameter paths and its caller's name).
    pub fn groups(&self) -> impl Iterator<Item = (&str, &Client)> {
        std::iter::once(("client", &self.client))
            .chain(self.clients.iter().map(|(n, c)| (n.as_str(), c)))
    }

    pub fn groups_mut(&mut self) -> impl Iterator<Item = (&str, &mut Client)> {
        std::iter::once(("client", &mut self.client))
            .chain(self.clients.iter_mut().map(|(n, c)| (n.as_str(), c)))
    }

    pub fn tier(&self, name: &str) -> Option<&Tier> {
        self.tiers.iter().find(|t| t.name == name)
    }

    /// Every trigger window of the scenario: its parameters' path prefix
    /// (`svc_b.slow`, `svc_b.slow.1` for a tier's second, `client.spike`,
    /// `db.crash`, `db.cache` for a flush), its start and length, and the
    /// factor of a slow window or spike (1: a window that changes nothing).
    /// The phases come from them, and a report shades one that no column
    /// of the runs names as what it is.
    pub fn triggers(&self) -> Vec<Trigger> {
        let path = |name: &str, list: &str, i: usize| match i {
            0 => format!("{name}.{list}"),
            _ => format!("{name}.{list}.{i}"),
        };
        let mut out = Vec::new();
        for (g, c) in self.groups() {
            for (i, w) in c.spike.iter().enumerate() {
                out.push(Trigger::new(
                    path(g, "spike", i),
                    w.start_s,
                    w.duration_s,
                    Some(w.factor),
                ));
            }
        }
        for t in &self.tiers {
            for (i, w) in t.slow.iter().enumerate() {
                out.push(Trigger::new(
                    path(&t.name, "slow", i),
                    w.start_s,
                    w.duration_s,
                    Some(w.factor),
                ));
            }
            for (i, w) in t.errors.iter().enumerate() {
                out.push(Trigger::new(
                    path(&t.name, "errors", i),
                    w.start_s,
                    w.duration_s,
                    None,
                ));
            }
            for (i, w) in t.crash.iter().enumerate() {
                out.push(Trigger::new(
                    path(&t.name, "crash", i),
                    w.start_s,
                    w.duration_s,
                    None,
                ));
            }
            if t.cache.hit_ratio > 0.0 && t.cache.flush_duration_s > 0.0 {
                out.push(Trigger::new(
                    format!("{}.cache", t.name),
                    t.cache.flush_start_s,
                    t.cache.flush_duration_s,
                    None,
                ));
            }
        }
        out
    }

    /// The span covering every trigger (slow, error and crash windows and
    /// cache flushes of every tier, load spikes of the client): the "during" phase.
    /// `[0, 0)` when the scenario has no window.
    pub fn trigger_window_s(&self) -> (f64, f64) {
        let mut span: Option<(f64, f64)> = None;
        for t in self.triggers() {
            let (s, e) = (t.start_s, t.start_s + t.duration_s);
            span = Some(match span {
                None => (s, e),
                Some((a, b)) => (a.min(s), b.max(e)),
            });
        }
        span.unwrap_or((0.0, 0.0))
    }
}

/// The tables of a scenario file written with double brackets (`[[client]]`,
/// `[[client.call]]`, `[[clients.batch]]`, `[[tiers.call]]`), and the tiers
/// written with single ones: one problem each, at its line, with the fix.
fn table_shape_problems(root: &toml::de::DeTable, text: &str, origin: &str) -> Vec<String> {
    use toml::de::DeValue;
    const ONE_TABLE: &str = "it is one table: write it with single brackets";
    // Each problem: where its key starts, its path, whether it is written
    // as a list, and the fix.
    let mut found: Vec<(usize, String, bool, &str)> = Vec::new();
    // A table's `call`, which must be one table.
    let call_of = |table: &toml::de::DeTable, at: &str, found: &mut Vec<_>| {
        for (key, value) in table {
            if key.get_ref() == "call" && matches!(value.get_ref(), DeValue::Array(_)) {
                found.push((key.span().start, format!("{at}.call"), true, ONE_TABLE));
            }
        }
    };
    for (key, value) in root {
        let (at, name) = (key.span().start, key.get_ref().to_string());
        match (name.as_str(), value.get_ref()) {
            ("client", DeValue::Array(_)) => found.push((
                at,
                name,
                true,
                "the client is one table: write `[client]` (further client groups are `[clients.<name>]`)",
            )),
            ("client", DeValue::Table(client)) => call_of(client, &name, &mut found),
            ("clients" | "recovery" | "presets", DeValue::Array(_)) => {
                found.push((at, name, true, ONE_TABLE))
            }
            ("clients", DeValue::Table(groups)) => {
                for (group, value) in groups {
                    let path = format!("clients.{}", group.get_ref());
                    match value.get_ref() {
                        DeValue::Array(_) => found.push((
                            group.span().start,
                            path,
                            true,
                            "a client group is one table: write `[clients.<name>]`",
                        )),
                        DeValue::Table(g) => call_of(g, &path, &mut found),
                        _ => {}
                    }
                }
            }
            ("tiers", DeValue::Table(_)) => found.push((
                at,
                name,
                false,
                "the tiers are a list: write `[[tiers]]` before each tier",
            )),
            ("tiers", DeValue::Array(tiers)) => {
                for tier in tiers {
                    if let DeValue::Table(t) = tier.get_ref() {
                        // Named as the parameters name it, by the tier's name.
                        let named = (t.iter()).find(|(k, _)| k.get_ref() == "name");
                        let at = match named.map(|(_, v)| v.get_ref()) {
                            Some(DeValue::String(n)) => n.to_string(),
                            _ => "tiers".to_string(),
                        };
                        call_of(t, &at, &mut found);
                    }
                }
            }
            _ => {}
        }
    }
    (found.into_iter())
        .map(|(at, path, list, fix)| {
            let line = text[..at.min(text.len())].matches('\n').count() + 1;
            let written = if list {
                "a list of tables"
            } else {
                "one table"
            };
            format!("{origin} line {line}: `{path}` is written as {written}; {fix}")
        })
        .collect()
}

/// serde's message with the kinds of value a scenario's user knows
/// ("expected a whole number from 0 to 4294967295", not "expected u32").
fn in_plain_words(message: &str) -> String {
    let (told, expected) = match message.rsplit_once(", expected ") {
        Some((told, expected)) => (told, Some(expected)),
        None => (message, None),
    };
    let told = told.replace("invalid type: sequence", "invalid type: list");
    let told = told.replace("invalid type: map", "invalid type: table");
    let Some(expected) = expected else {
        return told;
    };
    let expected = match expected {
        // With its bounds: a number too large is refused too.
        "u8" => "a whole number from 0 to 255",
        "u16" => "a whole number from 0 to 65535",
        "u32" => "a whole number from 0 to 4294967295",
        "u64" | "usize" => "a whole number from 0 to 18446744073709551615",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a sequence" => "a list",
        "a map" => "a table",
        other => other,
    };
    format!("{told}, expected {expected}")
}

/// For serde's "unknown field `queue_cpa`, expected one of `name`, ...":
/// the known key nearest to the one given, if one is near.
fn unknown_key_hint(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return String::new();
    };
    let mut quoted = rest.split('`').step_by(2);
    let given = quoted.next().unwrap_or_default();
    crate::params::closest(given, quoted)
        .map_or(String::new(), |k| format!("\ndid you mean `{k}`?"))
}

/// The problems of a scenario file in the order of their places in it
/// (found in the order of the structs' fields).
fn in_file_order(mut problems: Vec<(usize, String)>) -> Vec<String> {
    problems.sort_by_key(|(at, _)| *at);
    problems.into_iter().map(|(_, p)| p).collect()
}

/// The key serde's "missing field `slots`" names.
fn missing_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next().map(str::to_string)
}

/// How many values a stand-in for a missing key is given before its table
/// is taken out instead.
const STAND_INS: usize = 4;

/// A value put for a missing key of a scenario file, so that the rest of
/// the file is read and every missing key is said at once.
struct StandIn {
    /// Its own span, past the end of the text: its key's and its value's.
    span: std::ops::Range<usize>,
    /// The span of the table it is in.
    table: std::ops::Range<usize>,
    key: String,
    /// The values it has been given.
    tries: usize,
}

impl StandIn {
    /// Puts a stand-in for `key` in the table spanned `table`, spanned at
    /// `at` (past the text); its first value is the number 1, which any
    /// numeric field takes. None if no table has that span.
    fn put(
        root: &mut toml::Spanned<toml::de::DeTable<'_>>,
        table: &std::ops::Range<usize>,
        key: String,
        at: usize,
    ) -> Option<StandIn> {
        let t = table_at(root, table)?;
        // A number is made only by parsing one.
        let one = toml::de::DeTable::parse("one = 1").expect("TOML");
        let (_, one) = one.into_inner().into_iter().next().expect("a value");
        let s = StandIn {
            span: at..at,
            table: table.clone(),
            key,
            tries: 0,
        };
        t.insert(
            s.key(),
            toml::Spanned::new(s.span.clone(), one.into_inner()),
        );
        Some(s)
    }

    fn key(&self) -> toml::Spanned<Cow<'static, str>> {
        toml::Spanned::new(self.span.clone(), Cow::Owned(self.key.clone()))
    }
}

/// The next value for a stand-in whose field refused the last with
/// `message`: a variant the message lists, a boolean, an empty table or
/// list, or a string; none for a value the field refuses for its range.
fn stand_in_value(message: &str) -> Option<toml::de::DeValue<'static>> {
    use toml::de::{DeArray, DeTable, DeValue};
    let variant = (message.split_once("expected one of `"))
        .or_else(|| message.split_once("expected `"))
        .and_then(|(_, listed)| listed.split('`').next());
    if let Some(first) = variant {
        return Some(DeValue::String(Cow::Owned(first.to_string())));
    }
    if message.ends_with("expected a boolean") {
        return Some(DeValue::Boolean(true));
    }
    if message.contains("expected struct") || message.ends_with("expected a map") {
        return Some(DeValue::Table(DeTable::new()));
    }
    if message.ends_with("expected a sequence") {
        return Some(DeValue::Array(DeArray::new()));
    }
    let a_name =
        message == "wanted string or table" || message.starts_with("invalid type: integer");
    a_name.then(|| DeValue::String(Cow::Borrowed("")))
}

/// The deepest table of `root` spanned `span` (`root` itself, a table under
/// it, or an item of a list of tables): a table made implicit by a
/// `[client.call]` header has that header's span, as a list of tables has
/// its first table's.
fn table_at<'a, 'i>(
    root: &'a mut toml::Spanned<toml::de::DeTable<'i>>,
    span: &std::ops::Range<usize>,
) -> Option<&'a mut toml::de::DeTable<'i>> {
    use toml::de::{DeTable, DeValue};
    fn holds(value: &toml::Spanned<DeValue<'_>>, at: &std::ops::Range<usize>) -> bool {
        match value.get_ref() {
            DeValue::Table(t) => &value.span() == at || t.iter().any(|(_, v)| holds(v, at)),
            DeValue::Array(items) => items.iter().any(|v| holds(v, at)),
            _ => false,
        }
    }
    fn within<'a, 'i>(
        table: &'a mut DeTable<'i>,
        at: &std::ops::Range<usize>,
    ) -> Option<&'a mut DeTable<'i>> {
        table.iter_mut().find_map(|(_, v)| in_value(v, at))
    }
    fn in_value<'a, 'i>(
        value: &'a mut toml::Spanned<DeValue<'i>>,
        at: &std::ops::Range<usize>,
    ) -> Option<&'a mut DeTable<'i>> {
        let here = &value.span() == at;
        match value.get_mut() {
            DeValue::Table(t) => match here && !t.iter().any(|(_, v)| holds(v, at)) {
                true => Some(t),
                false => within(t, at),
            },
            DeValue::Array(items) => items.as_mut().iter_mut().find_map(|v| in_value(v, at)),
            _ => None,
        }
    }
    let here = &root.span() == span;
    let root = root.get_mut();
    match here && !root.iter().any(|(_, v)| holds(v, span)) {
        true => Some(root),
        false => within(root, span),
    }
}

/// Takes out of `root` the deepest entry that holds `at` (an error's
/// span): a key whose name or value holds it, or an item of an array.
/// None if nothing holds it (the document itself); else the span of the
/// table the key was in and its name (None for an array's item).
fn take_at(
    root: &mut toml::Spanned<toml::de::DeTable<'_>>,
    at: &std::ops::Range<usize>,
) -> Option<Option<(std::ops::Range<usize>, String)>> {
    use toml::de::{DeTable, DeValue};
    type Taken = Option<Option<(std::ops::Range<usize>, String)>>;
    fn holds(outer: std::ops::Range<usize>, at: &std::ops::Range<usize>) -> bool {
        outer.start <= at.start && at.end <= outer.end
    }
    fn in_value(value: &mut toml::Spanned<DeValue<'_>>, at: &std::ops::Range<usize>) -> Taken {
        let span = value.span();
        match value.get_mut() {
            DeValue::Table(table) => in_table(table, span, at),
            DeValue::Array(items) => {
                for i in 0..items.len() {
                    let item = &mut items.as_mut()[i];
                    if let Some(taken) = in_value(item, at) {
                        return Some(taken);
                    }
                    if holds(item.span(), at) {
                        let mut rest = toml::de::DeArray::new();
                        let others = items.iter().enumerate().filter(|(j, _)| *j != i);
                        others.for_each(|(_, item)| rest.push(item.clone()));
                        *items = rest;
                        return Some(None);
                    }
                }
                None
            }
            _ => None,
        }
    }
    // Tables under a header have only the header's span, so every table is
    // searched, not only those whose span holds `at`.
    fn in_table(
        table: &mut DeTable<'_>,
        span: std::ops::Range<usize>,
        at: &std::ops::Range<usize>,
    ) -> Taken {
        let mut found = None;
        for (key, value) in table.iter_mut() {
            if let Some(taken) = in_value(value, at) {
                return Some(taken);
            }
            if holds(key.span(), at) || holds(value.span(), at) {
                found = Some(key.get_ref().to_string());
                break;
            }
        }
        let name = found?;
        table.remove(name.as_str());
        Some(Some((span, name)))
    }
    let span = root.span();
    in_table(root.get_mut(), span, at)
}
