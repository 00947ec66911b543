//! What one run measured: counters taken from the model itself, and the flat
//! list of named, typed metrics that `--json` prints and the `runs` table
//! stores (one column each, same names).

use crate::job::Origin;
use crate::time::{NANOS_PER_SEC, Nanos, nanos_to_secs};
use serde::Serialize;
use std::fmt::{Arguments, Write as _};
use std::hash::Hasher;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunResult {
    /// Events taken from the event queue, stale timers included: an
    /// attempt timer cancelled because its attempt was answered (never
    /// popped, see `event_queue.rs`) counts as the event it would have been.
    pub events: u64,
    pub users: u64,
    pub users_ok: u64,
    /// Failed users, the unfinished ones included.
    pub users_failed: u64,
    /// Users still in flight at the horizon (counted as failed).
    pub users_unfinished: u64,
    /// Per declared request class, in priority order (none without classes).
    pub classes: Vec<ClassStats>,
    /// Per tenant of every group with tenants (`client.tenants` > 1), in
    /// group and rank order (none without tenants).
    pub tenants: Vec<TenantStats>,
    /// By arrival time: before, during and after the trigger window.
    pub phases: [Phase; 3],
    pub window_start_s: f64,
    pub window_end_s: f64,
    pub horizon_s: f64,
    /// R2: `None` means not recovered.
    pub recovery_s: Option<f64>,
    /// The smallest recovery time this run could not observe (arrivals end
    /// too soon after it): what "not recovered" is counted as where a number
    /// is needed.
    pub recovery_censor_s: f64,
    pub success_latency_median_s: Option<f64>,
    pub success_latency_p99_s: Option<f64>,
    /// Finished failed users only (the unfinished have no latency yet).
    pub failed_latency_median_s: Option<f64>,
    /// The users' latencies, bucketed: the whole distribution, for CDFs.
    pub latency_histogram: LatencyHistogram,
    pub tiers: Vec<TierStats>,
    /// Closed-loop users' cycles of the client (none with open arrivals).
    pub closed: Option<ClosedStats>,
    /// Per client group, `client` first, when the scenario has several
    /// (empty with the client alone: the totals are its counts).
    pub groups: Vec<GroupStats>,
    pub callers: Vec<CallerStats>,
    pub series: Series,
}

/// Closed-loop users: each cycle is a think time and the response to the
/// request sent after it. Only cycles whose request ended count, so that
/// each user's cycles tile `[0, its last outcome]` and, in integer
/// nanoseconds, `span_ns == think_ns + response_ns`: the interactive
/// response time law X = users / (R + Z) holds exactly with X = users x
/// cycles / span.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClosedStats {
    pub users: u64,
    /// Requests that ended (ok or failed; unfinished ones do not count).
    pub cycles: u64,
    /// Their response times (client retries included), summed.
    pub response_ns: u128,
    /// The think times before them, summed.
    pub think_ns: u128,
    /// Per user, the time of its last outcome, summed.
    pub span_ns: u128,
}

impl ClosedStats {
    /// The cycles of two sets of closed-loop users together. The response
    /// time law still holds for them: each user's cycles fill its span.
    pub fn plus(&self, other: &ClosedStats) -> ClosedStats {
        ClosedStats {
            users: self.users + other.users,
            cycles: self.cycles + other.cycles,
            response_ns: self.response_ns + other.response_ns,
            think_ns: self.think_ns + other.think_ns,
            span_ns: self.span_ns + other.span_ns,
        }
    }

    /// R: mean response time of the cycles (seconds).
    pub fn response_mean_s(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.response_ns as f64 / 1e9 / self.cycles as f64)
    }

    /// Z: mean think time of the cycles (seconds).
    pub fn think_mean_s(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.think_ns as f64 / 1e9 / self.cycles as f64)
    }

    /// X: cycles per second of the users' mean span, users / (R + Z).
    pub fn throughput_per_s(&self) -> Option<f64> {
        (self.span_ns > 0)
            .then(|| self.users as f64 * self.cycles as f64 / (self.span_ns as f64 / 1e9))
    }
}

/// The users of one client group.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GroupStats {
    pub name: String,
    pub users: u64,
    pub users_ok: u64,
    /// The unfinished ones included.
    pub users_failed: u64,
    pub users_unfinished: u64,
    /// Its users by arrival time, as [`RunResult::phases`].
    pub phases: [Phase; 3],
    /// Its users by the request classes it declares, in its order (none
    /// if it declares none); each class's counts over the groups add up
    /// to [`RunResult::classes`].
    pub classes: Vec<ClassStats>,
    /// R2 from its own users alone, as [`RunResult::recovery_s`] (and its
    /// censored form) from all.
    pub recovery_s: Option<f64>,
    pub recovery_censor_s: f64,
    pub success_latency_median_s: Option<f64>,
    pub success_latency_p99_s: Option<f64>,
    /// Its finished failed users only, as [`RunResult::failed_latency_median_s`].
    pub failed_latency_median_s: Option<f64>,
    /// Its closed-loop users' cycles (none with open arrivals).
    pub closed: Option<ClosedStats>,
    /// Its message queue's counts (`None` without one).
    pub queue: Option<QueueStats>,
}

/// The counts a queue reports (`group_<g>_*` metrics).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QueueStats {
    pub published: u64,
    pub consumed_ok: u64,
    /// Deliveries that failed: their message went back to the backlog.
    pub redelivered: u64,
    /// Messages published when `max_backlog` were waiting.
    pub dropped: u64,
    /// Messages waiting (ready or due again later) at the horizon.
    pub backlog_end: u64,
    pub in_flight_end: u64,
    /// The most messages waiting at once.
    pub backlog_peak: u64,
    /// The first whole second from the trigger's end at which no message
    /// waited, minus the trigger's end (`None`: never by the horizon).
    pub drain_s: Option<f64>,
    /// What a backlog that never drained counts as: one second past the
    /// last instant observed, minus the trigger's end (a lower bound).
    pub drain_censor_s: f64,
}

/// The metrics of group `n`'s message queue: without one (`None`), its
/// counts are 0 and its drain is null, neither drained nor not.
fn queue_metrics(
    n: &str,
    queue: Option<&QueueStats>,
    put: &mut impl FnMut(Arguments<'_>, Value, &'static str, &'static str),
) {
    use Value::{Count, MaybeFlag, MaybeReal};
    let none = QueueStats::default();
    let q = queue.unwrap_or(&none);
    let counts: [(&str, u64, &'static str); 7] = [
        (
            "published",
            q.published,
            "messages its producers published to its queue",
        ),
        (
            "consumed_ok",
            q.consumed_ok,
            "messages of its queue delivered with success",
        ),
        (
            "redelivered",
            q.redelivered,
            "deliveries that failed: their message went back to the queue, to be delivered again",
        ),
        (
            "dropped",
            q.dropped,
            "messages published when queue.max_backlog were waiting, dropped",
        ),
        (
            "backlog_end",
            q.backlog_end,
            "messages waiting in its queue at the horizon",
        ),
        (
            "in_flight_end",
            q.in_flight_end,
            "messages being delivered at the horizon",
        ),
        (
            "backlog_peak",
            q.backlog_peak,
            "the most messages waiting in its queue at once",
        ),
    ];
    for (key, value, doc) in counts {
        put(format_args!("group_{n}_{key}"), Count(value), doc, "count");
    }
    put(
        format_args!("group_{n}_drained"),
        MaybeFlag(queue.map(|q| q.drain_s.is_some())),
        "no message waited in its queue at some whole second from the trigger's end",
        "bool",
    );
    put(
        format_args!("group_{n}_drain_s"),
        MaybeReal(q.drain_s),
        "time to drain: the first whole second from the trigger's end at which no message waited in its queue, minus the trigger's end (null: never by the horizon)",
        "s",
    );
    put(
        format_args!("group_{n}_drain_censored_s"),
        MaybeReal(queue.map(|q| q.drain_s.unwrap_or(q.drain_censor_s))),
        "group_<g>_drain_s, or one second past the last one observed when the queue never drained (a lower bound)",
        "s",
    );
}

/// R2, the scenario's recovery rule, for one set of users (all of them, or
/// one client group's) from their arrivals by second: one code for the
/// totals and every group, so that their recovery times compare.
#[derive(Clone, Copy, Debug)]
pub struct Recovery {
    /// End of the trigger window.
    pub window_end: Nanos,
    /// The window of arrivals that must succeed, in whole seconds.
    pub width_s: u64,
    pub threshold: f64,
    /// End of these users' arrivals: no window may reach past it.
    pub arrivals_end: Nanos,
}

impl Recovery {
    /// The first whole second `t >= window end` whose arrivals in
    /// `[t, t + width)` succeed at the threshold, with `t + width` no later
    /// than the end of arrivals; `None`: not recovered.
    pub fn time_s(&self, user_arrivals: &[u64], user_ok_by_arrival: &[u64]) -> Option<f64> {
        let first = self.window_end.div_ceil(NANOS_PER_SEC);
        let width = self.width_s;
        (first..)
            .take_while(|t| (t + width) * NANOS_PER_SEC <= self.arrivals_end)
            .find(|&t| {
                let range = t as usize..(t + width) as usize;
                let users: u64 = user_arrivals[range.clone()].iter().sum();
                let ok: u64 = user_ok_by_arrival[range].iter().sum();
                users > 0 && ok as f64 >= self.threshold * users as f64
            })
            .map(|t| nanos_to_secs(t * NANOS_PER_SEC - self.window_end))
    }

    /// One second past the last recovery time [`Recovery::time_s`] can find;
    /// 0 when it can find none: no window fits between the trigger's end
    /// and the end of arrivals, or no user arrives in any that does (a
    /// window without users is never recovered, so such a run has no
    /// verdict rather than "never recovered").
    pub fn censor_s(&self, user_arrivals: &[u64]) -> f64 {
        let first = self.window_end.div_ceil(NANOS_PER_SEC);
        let width = self.width_s;
        let judged = (first..)
            .take_while(|t| (t + width) * NANOS_PER_SEC <= self.arrivals_end)
            .any(|t| {
                user_arrivals[t as usize..(t + width) as usize]
                    .iter()
                    .any(|u| *u > 0)
            });
        if !judged {
            return 0.0;
        }
        let last_start =
            self.arrivals_end.saturating_sub(width * NANOS_PER_SEC) / NANOS_PER_SEC * NANOS_PER_SEC;
        (nanos_to_secs(last_start) - nanos_to_secs(self.window_end)).max(-1.0) + 1.0
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Phase {
    pub users: u64,
    pub ok: u64,
}

impl Phase {
    pub fn success_rate(&self) -> Option<f64> {
        ratio(self.ok, self.users)
    }
}

/// Counters of one server tier.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TierStats {
    pub name: String,
    /// Requests received (fast-rejected included).
    pub arrivals: u64,
    /// Arrivals inside the trigger window.
    pub arrivals_during: u64,
    /// Arrivals after their user request had already ended (nobody upstream
    /// can use the answer).
    pub arrivals_after_user_left: u64,
    /// Arrivals not rejected for a full queue (drops on dequeue included).
    pub admitted: u64,
    pub rejected_full: u64,
    /// Rejected by the tier's rate limit (token bucket).
    pub rate_limited: u64,
    /// Leaky bucket: requests that waited their turn in it, and those still
    /// waiting at the horizon.
    pub bucket_waited: u64,
    pub in_bucket_at_end: u64,
    /// Requests shed on arrival (the queue at their class's shedding length).
    pub shed: u64,
    pub dropped_expired: u64,
    /// Dropped at dequeue by CoDel (answered as overload).
    pub codel_dropped: u64,
    /// Requests that took a slot.
    pub started: u64,
    /// Requests that released their slot with a reply (ok or error), their
    /// own work done to the end.
    pub completed: u64,
    pub completed_ok: u64,
    /// Completions whose caller's attempt had already ended (timed out): work
    /// nobody waited for.
    pub late: u64,
    /// Crashes: requests queued or in service when their replica went down
    /// (lost, never answered), and arrivals while it was down (refused, or
    /// lost in a black hole).
    pub lost_in_crash: u64,
    pub lost_queued_in_crash: u64,
    pub refused_down: u64,
    pub black_holed: u64,
    /// Error replies of requests that failed fast in an error window
    /// (completions, not ok).
    pub errors_injected: u64,
    /// Look-aside cache: lookups answered from it, lookups sent on to the
    /// tier, and keys filled since its flush.
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub cache_fills: u64,
    /// GC-like pauses begun, their total and their longest length
    /// (seconds; a pause begun before the horizon counts whole).
    pub gc_pauses: u64,
    pub gc_paused_s: f64,
    pub gc_longest_pause_s: f64,
    /// Requests whose own work was abandoned by cooperative cancellation
    /// (answered with an error, not counted as completed).
    pub abandoned: u64,
    /// Fan-out: successful replies with an optional branch failed.
    pub degraded: u64,
    /// Admitted requests dropped before they started because their caller
    /// cancelled them (the other hedged copy had answered).
    pub cancelled: u64,
    pub queued_at_end: u64,
    /// Requests sent but still crossing the network at the horizon.
    pub in_transit_at_end: u64,
    pub busy_at_end: u64,
    /// Longest queue seen at an append.
    pub max_queue: u64,
    /// Slot-seconds held (until the horizon for requests still in service).
    pub busy_s: f64,
    /// Total queueing time of the requests that started.
    pub wait_s: f64,
    /// Integral of the queue length over the run (request-seconds).
    pub queue_s: f64,
    /// Adaptive concurrency limit: the lowest reached, and its value at the
    /// end (0 without an adaptive limit).
    pub limit_lowest: u64,
    pub limit_at_end: u64,
    /// Most arrivals here caused by one user request.
    pub max_arrivals_per_user: u64,
    /// The computable bound of that number (product of attempts above,
    /// summed over the paths from the client).
    pub arrival_bound_per_user: u64,
    /// Per replica, in order, when the tier has several (the counters above
    /// are then their sums): each replica's own counters.
    pub replicas: Vec<TierStats>,
}

impl TierStats {
    /// A tier's counters from its replicas': sums, but the longest queue
    /// and the lowest adaptive limit of any replica. One replica: its own.
    pub fn of_replicas(mut parts: Vec<TierStats>) -> TierStats {
        if parts.len() == 1 {
            return parts.pop().expect("one replica");
        }
        let mut t = TierStats {
            name: parts[0].name.clone(),
            max_arrivals_per_user: parts[0].max_arrivals_per_user,
            arrival_bound_per_user: parts[0].arrival_bound_per_user,
            limit_lowest: parts.iter().map(|p| p.limit_lowest).min().unwrap_or(0),
            ..TierStats::default()
        };
        for p in &parts {
            t.arrivals += p.arrivals;
            t.arrivals_during += p.arrivals_during;
            t.arrivals_after_user_left += p.arrivals_after_user_left;
            t.admitted += p.admitted;
            t.rejected_full += p.rejected_full;
            t.rate_limited += p.rate_limited;
            t.bucket_waited += p.bucket_waited;
            t.in_bucket_at_end += p.in_bucket_at_end;
            t.shed += p.shed;
            t.dropped_expired += p.dropped_expired;
            t.codel_dropped += p.codel_dropped;
            t.started += p.started;
            t.completed += p.completed;
            t.completed_ok += p.completed_ok;
            t.late += p.late;
            t.abandoned += p.abandoned;
            t.errors_injected += p.errors_injected;
            t.gc_pauses += p.gc_pauses;
            t.cache_hits += p.cache_hits;
            t.cache_misses += p.cache_misses;
            t.cache_fills += p.cache_fills;
            t.gc_paused_s += p.gc_paused_s;
            t.gc_longest_pause_s = t.gc_longest_pause_s.max(p.gc_longest_pause_s);
            t.lost_in_crash += p.lost_in_crash;
            t.lost_queued_in_crash += p.lost_queued_in_crash;
            t.refused_down += p.refused_down;
            t.black_holed += p.black_holed;
            t.degraded += p.degraded;
            t.cancelled += p.cancelled;
            t.queued_at_end += p.queued_at_end;
            t.in_transit_at_end += p.in_transit_at_end;
            t.busy_at_end += p.busy_at_end;
            t.max_queue = t.max_queue.max(p.max_queue);
            t.busy_s += p.busy_s;
            t.wait_s += p.wait_s;
            t.queue_s += p.queue_s;
            t.limit_at_end += p.limit_at_end;
        }
        t.replicas = parts;
        t
    }
}

impl TierSeries {
    /// A tier's series from its replicas': sums, second by second, and
    /// each replica's own in `replicas`. One replica: its own.
    pub fn of_replicas(mut parts: Vec<TierSeries>) -> TierSeries {
        if parts.len() == 1 {
            return parts.pop().expect("one replica");
        }
        let mut t = parts[0].clone();
        for p in &parts[1..] {
            let add =
                |a: &mut Vec<u64>, b: &Vec<u64>| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            add(&mut t.arrivals, &p.arrivals);
            add(&mut t.admitted, &p.admitted);
            add(&mut t.completed, &p.completed);
            add(&mut t.late, &p.late);
            add(&mut t.retries, &p.retries);
            add(&mut t.hedges, &p.hedges);
            add(&mut t.arrivals_by_bin, &p.arrivals_by_bin);
            add(&mut t.retries_by_bin, &p.retries_by_bin);
            for r in &p.retries_from {
                match t.retries_from.iter_mut().find(|x| x.edge == r.edge) {
                    Some(x) => add(&mut x.per_s, &r.per_s),
                    None => t.retries_from.push(r.clone()),
                }
            }
            t.retries_from.sort_by_key(|r| r.edge);
            add(&mut t.after_user_left, &p.after_user_left);
            add(&mut t.queue_len, &p.queue_len);
            add(&mut t.busy, &p.busy);
            add(&mut t.limit, &p.limit);
            for (x, y) in t.capacity_per_s.iter_mut().zip(&p.capacity_per_s) {
                *x = x.zip(*y).map(|(x, y)| x + y);
            }
        }
        t.replicas = parts;
        t
    }
}

/// Counters of one caller's attempts to the next tier.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CallerStats {
    pub name: String,
    /// Requests sent: first attempts, retries and hedged copies.
    pub calls: u64,
    pub calls_ok: u64,
    pub calls_timeout: u64,
    /// Rejected by a full queue downstream.
    pub calls_rejected: u64,
    /// Dropped downstream because its deadline had passed when dequeued.
    pub calls_expired: u64,
    /// Attempts refused by a replica that was down.
    pub calls_refused: u64,
    /// The callee answered with an error (it gave up itself).
    pub calls_error: u64,
    /// Attempts still waiting at the horizon.
    pub calls_pending: u64,
    /// Attempts the caller stopped waiting for because its own job was
    /// cancelled or lost (a fan-out branch after a required one failed, a
    /// request lost in a crash, a cancellation from above).
    pub calls_cancelled: u64,
    pub retries_sent: u64,
    /// Retries refused by the retry throttle.
    pub retries_throttled: u64,
    /// Gave up: attempt limit reached.
    pub giveup_limit: u64,
    /// Gave up: own deadline passed when a retry was considered.
    pub giveup_deadline: u64,
    /// Failed attempts of a class the caller does not retry (`retry_on`).
    pub giveup_not_retryable: u64,
    /// Answered "error" without calling: no time left when a retry was due.
    pub no_time_left: u64,
    /// Failed fast without calling: the deadline safety margin left no time.
    pub margin_exhausted: u64,
    /// Stopped by budget admission: backoff plus a full attempt would not fit.
    pub insufficient_deadline: u64,
    /// Retries refused by the retry budget (Envoy's ratio of active requests).
    pub retry_budget_exhausted: u64,
    /// Attempts rejected locally by adaptive throttling (never sent).
    pub rejected_locally: u64,
    /// Attempts rejected locally and fast by an open circuit breaker.
    pub breaker_rejected: u64,
    /// Attempts rejected locally and fast by this caller's bulkhead for the
    /// downstream (`max_in_flight`).
    pub bulkhead_rejected: u64,
    /// Second copies sent by hedging (counted in `calls` too), and hedges
    /// the budget refused (or, with breakers or bulkheads per replica, that
    /// no replica could take).
    pub hedges_sent: u64,
    pub hedges_refused: u64,
    /// The tier called has several replicas, balanced by this caller.
    pub balanced: bool,
    /// Outlier ejections of a replica by this caller, and the
    /// replica-seconds they kept replicas out (up to the horizon).
    pub ejections: u64,
    pub ejected_s: f64,
}

/// One request class's users.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClassStats {
    pub name: String,
    pub users: u64,
    pub users_ok: u64,
}

/// One tenant's users.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TenantStats {
    /// Its client group's index in the scenario's order of groups
    /// (`client` first, then the others by name: the order of `groups`):
    /// a name per tenant was a string copied for every one of up to
    /// 100,000 tenants a run.
    pub group: u16,
    /// 0: the group's most frequent tenant.
    pub rank: u32,
    pub users: u64,
    pub users_ok: u64,
}

/// The R10 preferred numbers: ten steps a decade, each about 1.26 times the
/// one before, and round in every decade.
const R10: [u64; 10] = [100, 125, 160, 200, 250, 315, 400, 500, 630, 800];

/// The upper edges of the latency histogram's buckets, in nanoseconds: the
/// R10 steps from 100 µs to 1,000 s. Bucket `i` holds the latencies in
/// `(edge[i-1], edge[i]]` (bucket 0 everything up to 100 µs); one bucket
/// more holds those above 1,000 s.
pub const LATENCY_EDGES_NS: [u64; 71] = {
    let mut edges = [0; 71];
    let (mut i, mut decade) = (0, 1_000);
    while i < edges.len() {
        edges[i] = R10[i % 10] * decade;
        i += 1;
        if i % 10 == 0 {
            decade *= 10;
        }
    }
    edges
};

/// Finished users' latencies per bucket of [`LATENCY_EDGES_NS`] (one count
/// more than edges), successes and failures apart.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LatencyHistogram {
    pub ok: Vec<u64>,
    pub failed: Vec<u64>,
}

impl LatencyHistogram {
    pub fn new(ok: &[u64], failed: &[u64]) -> LatencyHistogram {
        let bucket = |latencies: &[u64]| {
            let mut counts = vec![0; LATENCY_EDGES_NS.len() + 1];
            for l in latencies {
                counts[LATENCY_EDGES_NS.partition_point(|e| e < l)] += 1;
            }
            counts
        };
        LatencyHistogram {
            ok: bucket(ok),
            failed: bucket(failed),
        }
    }
}

/// Per second of simulated time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Series {
    pub user_arrivals: Vec<u64>,
    /// Users arriving in that second who succeeded.
    pub user_ok_by_arrival: Vec<u64>,
    /// Users finishing in that second, by outcome.
    pub successes: Vec<u64>,
    pub failures: Vec<u64>,
    pub tiers: Vec<TierSeries>,
    /// Per client group, `client` first, when the scenario has several
    /// (empty with the client alone): the two user-level counts above are
    /// their sums.
    pub groups: Vec<GroupSeries>,
}

/// One client group's users per second of arrival.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GroupSeries {
    pub name: String,
    pub user_arrivals: Vec<u64>,
    pub user_ok_by_arrival: Vec<u64>,
    /// Messages waiting in its queue at the end of each second (all 0
    /// without one).
    pub backlog: Vec<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TierSeries {
    pub name: String,
    pub arrivals: Vec<u64>,
    /// Arrivals that exist because of a retry or a hedged copy, sent by the
    /// tier's caller or by any caller above it (a first try of a request
    /// that serves a retry counts): `arrivals - retries` are the users'
    /// first tries, the load without amplification.
    pub retries: Vec<u64>,
    /// `retries` split by what sent the nearest retry or hedged copy in
    /// their lineage: per caller (an edge, by its metric name: `client`,
    /// `<tier>`, `<tier>_to_<branch>`) its retries, only for the callers
    /// that sent any (in edge order), and the hedged copies of all callers
    /// in `hedges`; they add up to `retries`.
    pub retries_from: Vec<CallerRetries>,
    pub hedges: Vec<u64>,
    /// With `series_bin_s` under 1 s, `arrivals` and `retries` per bin of
    /// that width (`bins_per_s` a second, second 0's first): what the
    /// per-second counts blur, such as retries every 800 ms. Empty without.
    pub arrivals_by_bin: Vec<u64>,
    pub retries_by_bin: Vec<u64>,
    /// Arrivals for a user request that had already ended (given up or
    /// answered): work nobody waits for.
    pub after_user_left: Vec<u64>,
    pub admitted: Vec<u64>,
    pub completed: Vec<u64>,
    pub late: Vec<u64>,
    /// Sampled at the end of the second.
    pub queue_len: Vec<u64>,
    pub busy: Vec<u64>,
    /// The adaptive concurrency limit at the end of the second, summed
    /// over replicas (0 without one).
    pub limit: Vec<u64>,
    /// Requests per second the tier's slots can serve from its own work:
    /// slots / mean service time, slowed by the slow windows in force at
    /// mid-second, 0 while crashed (summed over replicas); with
    /// `per_inflight_s`, at low concurrency. Time spent waiting for its own
    /// calls is not counted, so for a tier that calls others it is an upper
    /// bound. `None` for a tier that does no work of its own.
    pub capacity_per_s: Vec<Option<f64>>,
    /// Lookups of the tier's look-aside cache in that second that hit, and
    /// that missed (went to the tier); 0 without a cache.
    pub cache_hits: Vec<u64>,
    pub cache_misses: Vec<u64>,
    /// With replicas, each replica's own series (replica 0 first); empty
    /// without.
    pub replicas: Vec<TierSeries>,
}

/// A tier's arrivals per second that exist because of a retry sent by
/// `caller`, the nearest retry or hedge in their lineage (see
/// [`TierSeries::retries_from`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CallerRetries {
    pub caller: String,
    /// The caller's index in `Scenario::edges()`.
    pub edge: usize,
    pub per_s: Vec<u64>,
}

/// While a run goes on, a server's arrivals per sub-second bin of width
/// `width`, and those that are retries (see [`TierSeries::arrivals_by_bin`]).
#[derive(Clone, Debug)]
pub struct Bins {
    width: Nanos,
    pub arrivals: Vec<u64>,
    pub retries: Vec<u64>,
}

impl Bins {
    /// `bins` bins of `width`.
    pub fn new(width: Nanos, bins: usize) -> Bins {
        Bins {
            width,
            arrivals: vec![0; bins],
            retries: vec![0; bins],
        }
    }

    /// An arrival at `now`, a retry or not.
    pub fn count(&mut self, now: Nanos, retry: bool) {
        let bin = (now / self.width) as usize;
        self.arrivals[bin] += 1;
        self.retries[bin] += retry as u64;
    }
}

/// While a run goes on, a server's arrivals by [`Origin`], per second: a
/// row of counts a second indexed by the origin itself, as wide as the
/// largest origin seen (made on the first retry: a run without retries
/// allocates nothing, and an arrival pays one branch).
#[derive(Clone, Debug)]
pub struct RetryOrigins {
    secs: usize,
    width: usize,
    counts: Vec<u64>,
}

impl RetryOrigins {
    pub fn new(secs: usize) -> RetryOrigins {
        RetryOrigins {
            secs,
            width: 0,
            counts: Vec::new(),
        }
    }

    /// An arrival in second `sec` that exists because of `origin`.
    #[inline]
    pub fn count(&mut self, sec: usize, origin: Origin) {
        let slot = origin.0 as usize;
        if slot >= self.width {
            self.widen(slot + 1);
        }
        self.counts[sec * self.width + slot] += 1;
    }

    #[cold]
    #[inline(never)]
    fn widen(&mut self, width: usize) {
        let mut counts = vec![0; self.secs * width];
        if self.width > 0 {
            for (new, old) in counts.chunks_mut(width).zip(self.counts.chunks(self.width)) {
                new[..self.width].copy_from_slice(old);
            }
        }
        self.counts = counts;
        self.width = width;
    }

    /// The series' `retries_from` (named by `callers`, the edges' metric
    /// names) and `hedges`.
    pub fn into_series(self, callers: &[String]) -> (Vec<CallerRetries>, Vec<u64>) {
        let column = |slot: usize| -> Vec<u64> {
            match slot < self.width {
                true => (self.counts.iter().skip(slot).step_by(self.width).copied()).collect(),
                false => vec![0; self.secs],
            }
        };
        let from = (2..self.width)
            .map(|slot| (Origin(slot as u16), column(slot)))
            .filter(|(_, per_s)| per_s.iter().any(|c| *c > 0))
            .map(|(origin, per_s)| CallerRetries {
                caller: callers[origin.edge()].clone(),
                edge: origin.edge(),
                per_s,
            })
            .collect();
        (from, column(Origin::HEDGE.0 as usize))
    }
}

impl Series {
    pub fn seconds(&self) -> usize {
        self.user_arrivals.len()
    }

    /// Success rate of the users arriving in second `s`.
    pub fn success_rate(&self, s: usize) -> Option<f64> {
        ratio(self.user_ok_by_arrival[s], self.user_arrivals[s])
    }
}

/// A metric's value; the variant is the column type.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Count(u64),
    Real(f64),
    /// Absent when undefined (a rate over no users, "not recovered").
    MaybeReal(Option<f64>),
    Flag(bool),
    /// Absent when undefined (a group without a message queue).
    MaybeFlag(Option<bool>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    pub name: String,
    pub value: Value,
    /// What it measures, in a few words (the column's description).
    pub doc: &'static str,
    /// Its unit: `count`, `s`, `share (0-1)`, `ratio`, ...
    pub unit: &'static str,
}

/// The digest of a list of metric names in their order: two lists with
/// the same digest are the same list (barring a 64-bit hash collision
/// between lists of the same length). Never written anywhere: only
/// compared within one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NamesDigest {
    hash: u64,
    names: usize,
}

impl NamesDigest {
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> NamesDigest {
        let mut digest = Digest::default();
        for name in names {
            digest.name(format_args!("{name}"));
        }
        digest.finish()
    }
}

/// Hashes names as they are formatted, piece by piece. FNV-1a reads one
/// byte at a time, so that a name hashes the same in pieces or whole, and
/// costs little on the short pieces names are made of.
#[derive(Default)]
struct Digest {
    hash: fnv::FnvHasher,
    names: usize,
}

impl Digest {
    fn name(&mut self, name: Arguments<'_>) {
        self.write_fmt(name).expect("hashing cannot fail");
        // Not in any UTF-8 text: ends the name.
        self.hash.write_u8(0xff);
        self.names += 1;
    }

    fn finish(&self) -> NamesDigest {
        NamesDigest {
            hash: self.hash.finish(),
            names: self.names,
        }
    }
}

impl std::fmt::Write for Digest {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.hash.write(s.as_bytes());
        Ok(())
    }
}

pub fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl RunResult {
    pub fn success_rate(&self) -> Option<f64> {
        ratio(self.users_ok, self.users)
    }

    pub fn leaf(&self) -> &TierStats {
        self.tiers.last().expect("a chain has at least one tier")
    }

    /// Successful users per leaf completion.
    pub fn goodput(&self) -> Option<f64> {
        ratio(self.users_ok, self.leaf().completed)
    }

    /// Share of leaf completions nobody waited for.
    pub fn wasted_share(&self) -> Option<f64> {
        ratio(self.leaf().late, self.leaf().completed)
    }

    /// All metrics, flat, in a stable order. Names: chain-level first, then
    /// `<tier>_<counter>` per tier and `<caller>_<counter>` per caller.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut out = Vec::new();
        self.each_metric(&mut |name, value, doc, unit| {
            out.push(Metric {
                name: name.to_string(),
                value,
                doc,
                unit,
            })
        });
        out
    }

    /// The values of [`RunResult::metrics`] in their order, and the digest
    /// of their names, without writing the names out: a run's hundreds of
    /// names cost more to format than its values to compute, and a table
    /// whose columns have the same digest takes the values as they are.
    pub fn metric_values(&self) -> (Vec<Value>, NamesDigest) {
        let (mut values, mut digest) = (Vec::new(), Digest::default());
        self.each_metric(&mut |name, value, _, _| {
            digest.name(name);
            values.push(value);
        });
        (values, digest.finish())
    }

    /// Whether the metrics' names are surely distinct: each name's own
    /// digest differs from the others'. `false` says only that two names
    /// may be the same (or their digests collide); the names then tell.
    pub fn names_surely_distinct(&self) -> bool {
        let mut digests = Vec::new();
        self.each_metric(&mut |name, _, _, _| {
            let mut one = Digest::default();
            one.name(name);
            digests.push(one.finish().hash);
        });
        digests.sort_unstable();
        digests.windows(2).all(|w| w[0] != w[1])
    }

    /// Each metric in the order of [`RunResult::metrics`], its name not
    /// yet formatted, with what it measures and its unit: the `runs`
    /// table's column descriptions come from here.
    fn each_metric(&self, put: &mut impl FnMut(Arguments<'_>, Value, &'static str, &'static str)) {
        use Value::{Count, Flag, MaybeReal, Real};
        const N: &str = "count";
        const S: &str = "s";
        const SHARE: &str = "share (0-1)";
        let [before, during, after] = self.phases;
        put(
            format_args!("events"),
            Count(self.events),
            "events taken from the event queue, each attempt timer whose attempt was answered first included (cancelled, it counts as the event it would have been)",
            N,
        );
        put(
            format_args!("users"),
            Count(self.users),
            "user requests that arrived",
            N,
        );
        put(
            format_args!("users_ok"),
            Count(self.users_ok),
            "user requests that succeeded",
            N,
        );
        put(
            format_args!("users_failed"),
            Count(self.users_failed),
            "user requests that failed (unfinished ones included)",
            N,
        );
        put(
            format_args!("users_unfinished"),
            Count(self.users_unfinished),
            "user requests still in flight at the horizon",
            N,
        );
        put(
            format_args!("success_rate"),
            MaybeReal(self.success_rate()),
            "users_ok / users (null without users)",
            SHARE,
        );
        let tenants = (!self.tenants.is_empty()).then(|| tenant_split(&self.tenants));
        split_metrics("", &self.classes, tenants, put);
        for (name, p, users, rate) in [
            (
                "before",
                before,
                "users arriving before the trigger window",
                "success rate of the users arriving before the trigger window",
            ),
            (
                "during",
                during,
                "users arriving during the trigger window",
                "success rate of the users arriving during the trigger window",
            ),
            (
                "after",
                after,
                "users arriving after the trigger window",
                "success rate of the users arriving after the trigger window",
            ),
        ] {
            put(format_args!("users_{name}"), Count(p.users), users, N);
            put(
                format_args!("success_rate_{name}"),
                MaybeReal(p.success_rate()),
                rate,
                SHARE,
            );
        }
        put(
            format_args!("window_start_s"),
            Real(self.window_start_s),
            "start of the trigger window (slow window or spike)",
            S,
        );
        put(
            format_args!("window_end_s"),
            Real(self.window_end_s),
            "end of the trigger window",
            S,
        );
        put(
            format_args!("recovered"),
            Flag(self.recovery_s.is_some()),
            "the success rate came back after the trigger window",
            "bool",
        );
        put(
            format_args!("recovery_s"),
            MaybeReal(self.recovery_s),
            "time from the end of the trigger window to recovery (null: never)",
            S,
        );
        put(
            format_args!("recovery_censored_s"),
            Real(self.recovery_s.unwrap_or(self.recovery_censor_s)),
            "recovery_s, or the smallest time this run could not observe when it did not recover (a lower bound)",
            S,
        );
        put(
            format_args!("goodput"),
            MaybeReal(self.goodput()),
            "successful users per completion at the last tier",
            "ratio",
        );
        put(
            format_args!("wasted_share"),
            MaybeReal(self.wasted_share()),
            "share of the last tier's completions nobody waited for",
            SHARE,
        );
        put(
            format_args!("success_latency_median_s"),
            MaybeReal(self.success_latency_median_s),
            "median latency of the successful users",
            S,
        );
        put(
            format_args!("success_latency_p99_s"),
            MaybeReal(self.success_latency_p99_s),
            "99th percentile latency of the successful users",
            S,
        );
        put(
            format_args!("failed_latency_median_s"),
            MaybeReal(self.failed_latency_median_s),
            "median latency of the finished failed users",
            S,
        );
        let closed = self.closed.clone().unwrap_or_default();
        put(
            format_args!("closed_cycles"),
            Count(closed.cycles),
            "closed-loop users' requests that ended (every closed client group's together)",
            N,
        );
        put(
            format_args!("closed_response_mean_s"),
            MaybeReal(closed.response_mean_s()),
            "closed loop (every closed client group's users together): mean response time R",
            S,
        );
        put(
            format_args!("closed_think_mean_s"),
            MaybeReal(closed.think_mean_s()),
            "closed loop (every closed client group's users together): mean think time Z",
            S,
        );
        put(
            format_args!("closed_throughput_per_s"),
            MaybeReal(closed.throughput_per_s()),
            "closed loop (every closed client group's users together): throughput X = users / (R + Z), over the requests that ended (a user stuck at the horizon adds nothing)",
            "per s",
        );
        for (i, g) in self.groups.iter().enumerate() {
            let n = &g.name;
            put(
                format_args!("group_{n}_users"),
                Count(g.users),
                "user requests of this client group",
                N,
            );
            put(
                format_args!("group_{n}_users_ok"),
                Count(g.users_ok),
                "user requests of this client group that succeeded",
                N,
            );
            put(
                format_args!("group_{n}_users_failed"),
                Count(g.users_failed),
                "user requests of this client group that failed (unfinished ones included)",
                N,
            );
            put(
                format_args!("group_{n}_users_unfinished"),
                Count(g.users_unfinished),
                "user requests of this client group still in flight at the horizon",
                N,
            );
            put(
                format_args!("group_{n}_success_rate"),
                MaybeReal(ratio(g.users_ok, g.users)),
                "success rate of this client group's users",
                SHARE,
            );
            for (k, (name, users, rate)) in [
                (
                    "before",
                    "users of this client group arriving before the trigger window",
                    "success rate of this client group's users arriving before the trigger window",
                ),
                (
                    "during",
                    "users of this client group arriving during the trigger window",
                    "success rate of this client group's users arriving during the trigger window",
                ),
                (
                    "after",
                    "users of this client group arriving after the trigger window",
                    "success rate of this client group's users arriving after the trigger window",
                ),
            ]
            .into_iter()
            .enumerate()
            {
                put(
                    format_args!("group_{n}_users_{name}"),
                    Count(g.phases[k].users),
                    users,
                    N,
                );
                put(
                    format_args!("group_{n}_success_rate_{name}"),
                    MaybeReal(g.phases[k].success_rate()),
                    rate,
                    SHARE,
                );
            }
            // In group order: this group's are one run of them.
            let group = i as u16;
            let from = self.tenants.partition_point(|t| t.group < group);
            let to = self.tenants.partition_point(|t| t.group <= group);
            let tenants = (from < to).then(|| tenant_split(&self.tenants[from..to]));
            split_metrics(&format!("group_{n}_"), &g.classes, tenants, put);
            put(
                format_args!("group_{n}_recovered"),
                Flag(g.recovery_s.is_some()),
                "this client group's users' success rate came back after the trigger window",
                "bool",
            );
            put(
                format_args!("group_{n}_recovery_s"),
                MaybeReal(g.recovery_s),
                "time from the end of the trigger window to this client group's recovery, from its own users (null: never)",
                S,
            );
            put(
                format_args!("group_{n}_recovery_censored_s"),
                Real(g.recovery_s.unwrap_or(g.recovery_censor_s)),
                "group_<g>_recovery_s, or the smallest time this run could not observe for the group when it did not recover (a lower bound)",
                S,
            );
            put(
                format_args!("group_{n}_success_latency_median_s"),
                MaybeReal(g.success_latency_median_s),
                "median latency of this client group's successful users",
                S,
            );
            put(
                format_args!("group_{n}_success_latency_p99_s"),
                MaybeReal(g.success_latency_p99_s),
                "99th percentile latency of this client group's successful users",
                S,
            );
            put(
                format_args!("group_{n}_failed_latency_median_s"),
                MaybeReal(g.failed_latency_median_s),
                "median latency of this client group's finished failed users",
                S,
            );
            // Null for an open group, so that the columns do not depend on
            // whether a point's group is closed.
            let c = g.closed.clone().unwrap_or_default();
            put(
                format_args!("group_{n}_closed_response_mean_s"),
                MaybeReal(c.response_mean_s()),
                "this group's closed loop: mean response time R",
                S,
            );
            put(
                format_args!("group_{n}_closed_throughput_per_s"),
                MaybeReal(c.throughput_per_s()),
                "this group's closed loop: throughput X = users / (R + Z)",
                "per s",
            );
            // Every further group's, so that the columns do not depend on
            // whether a point's group has consumers (`client` never has).
            if i > 0 {
                queue_metrics(n, g.queue.as_ref(), put);
            }
        }
        let sum_t = |f: fn(&TierStats) -> u64| self.tiers.iter().map(f).sum::<u64>();
        let sum_c = |f: fn(&CallerStats) -> u64| self.callers.iter().map(f).sum::<u64>();
        let totals: [(&str, u64, &'static str); 10] = [
            (
                "rejected_full",
                sum_t(|t| t.rejected_full),
                "requests rejected by a full queue, all tiers",
            ),
            (
                "dropped_expired",
                sum_t(|t| t.dropped_expired),
                "requests dropped at dequeue past their deadline, all tiers",
            ),
            (
                "abandoned",
                sum_t(|t| t.abandoned),
                "requests whose work was abandoned by cancellation, all tiers",
            ),
            (
                "retries_sent",
                sum_c(|c| c.retries_sent),
                "retries sent, all callers",
            ),
            (
                "retries_throttled",
                sum_c(|c| c.retries_throttled),
                "retries refused by the retry throttle, all callers",
            ),
            (
                "no_time_left",
                sum_c(|c| c.no_time_left),
                "retries not sent for lack of time, all callers",
            ),
            (
                "margin_exhausted",
                sum_c(|c| c.margin_exhausted),
                "calls failed fast by the deadline safety margin, all callers",
            ),
            (
                "insufficient_deadline",
                sum_c(|c| c.insufficient_deadline),
                "calls stopped by budget admission, all callers",
            ),
            (
                "retry_budget_exhausted",
                sum_c(|c| c.retry_budget_exhausted),
                "retries refused by the retry budget, all callers",
            ),
            (
                "rejected_locally",
                sum_c(|c| c.rejected_locally),
                "attempts rejected by adaptive throttling, all callers",
            ),
        ];
        for (name, n, doc) in totals {
            put(format_args!("{name}"), Count(n), doc, N);
        }
        for t in &self.tiers {
            let n = &t.name;
            put(
                format_args!("{n}_arrivals"),
                Count(t.arrivals),
                "requests received by the tier (fast-rejected included)",
                N,
            );
            put(
                format_args!("{n}_arrivals_per_user"),
                MaybeReal(ratio(t.arrivals, self.users)),
                "requests received by the tier per user request",
                "ratio",
            );
            put(
                format_args!("{n}_arrivals_during"),
                Count(t.arrivals_during),
                "requests received by the tier inside the trigger window",
                N,
            );
            put(
                format_args!("{n}_arrivals_per_user_during"),
                MaybeReal(ratio(t.arrivals_during, during.users)),
                "requests received by the tier in the window per user arriving in it",
                "ratio",
            );
            let counters: [(&str, u64, &'static str); 30] = [
                (
                    "arrivals_after_user_left",
                    t.arrivals_after_user_left,
                    "requests received after their user request had ended",
                ),
                (
                    "admitted",
                    t.admitted,
                    "requests not rejected for a full queue",
                ),
                (
                    "rejected_full",
                    t.rejected_full,
                    "requests rejected by a full queue",
                ),
                (
                    "rate_limited",
                    t.rate_limited,
                    "requests rejected by the tier's rate limit",
                ),
                (
                    "shed",
                    t.shed,
                    "requests shed on arrival by their class's shedding length",
                ),
                (
                    "dropped_expired",
                    t.dropped_expired,
                    "requests dropped at dequeue past their deadline",
                ),
                (
                    "codel_dropped",
                    t.codel_dropped,
                    "requests dropped at dequeue by CoDel",
                ),
                (
                    "limit_lowest",
                    t.limit_lowest,
                    "lowest adaptive concurrency limit reached (0 without one)",
                ),
                (
                    "limit_at_end",
                    t.limit_at_end,
                    "adaptive concurrency limit at the end (0 without one)",
                ),
                ("started", t.started, "requests that took a slot"),
                (
                    "completed",
                    t.completed,
                    "requests that released their slot with a reply",
                ),
                (
                    "completed_ok",
                    t.completed_ok,
                    "requests completed with a successful reply",
                ),
                (
                    "late",
                    t.late,
                    "completions whose caller had stopped waiting (wasted work)",
                ),
                (
                    "abandoned",
                    t.abandoned,
                    "requests whose work was abandoned by cancellation",
                ),
                (
                    "errors_injected",
                    t.errors_injected,
                    "error replies of requests that failed fast in an error window",
                ),
                (
                    "gc_pauses",
                    t.gc_pauses,
                    "GC-like pauses begun (a tick that pauses 0 s is none)",
                ),
                (
                    "cache_hits",
                    t.cache_hits,
                    "lookups answered by the look-aside cache in front of the tier",
                ),
                (
                    "cache_misses",
                    t.cache_misses,
                    "lookups that missed the cache and went to the tier",
                ),
                (
                    "cache_fills",
                    t.cache_fills,
                    "cache keys filled by misses answered after the flush",
                ),
                (
                    "bucket_waited",
                    t.bucket_waited,
                    "requests that waited their turn in the leaky bucket",
                ),
                (
                    "in_bucket_at_end",
                    t.in_bucket_at_end,
                    "requests waiting in the leaky bucket at the horizon",
                ),
                (
                    "lost_in_crash",
                    t.lost_in_crash,
                    "requests in service when their replica crashed (never answered)",
                ),
                (
                    "lost_queued_in_crash",
                    t.lost_queued_in_crash,
                    "requests queued, or waiting in its own leaky bucket, when their replica crashed (never answered)",
                ),
                (
                    "refused_down",
                    t.refused_down,
                    "arrivals refused while the replica was down",
                ),
                (
                    "black_holed",
                    t.black_holed,
                    "arrivals lost in a black hole while the replica was down",
                ),
                (
                    "degraded",
                    t.degraded,
                    "fan-out replies that succeeded with an optional branch failed",
                ),
                (
                    "cancelled",
                    t.cancelled,
                    "admitted requests dropped before starting because their caller cancelled them",
                ),
                (
                    "queued_at_end",
                    t.queued_at_end,
                    "requests queued at the horizon",
                ),
                (
                    "in_transit_at_end",
                    t.in_transit_at_end,
                    "requests on the network at the horizon",
                ),
                ("busy_at_end", t.busy_at_end, "slots busy at the horizon"),
            ];
            for (suffix, c, doc) in counters {
                put(format_args!("{n}_{suffix}"), Count(c), doc, N);
            }
            put(
                format_args!("{n}_max_queue"),
                Count(t.max_queue),
                "longest queue seen",
                "requests",
            );
            put(
                format_args!("{n}_busy_s"),
                Real(t.busy_s),
                "slot-seconds held",
                "slot-s",
            );
            put(
                format_args!("{n}_gc_paused_s"),
                Real(t.gc_paused_s),
                "total length of the GC-like pauses begun (its replicas' summed)",
                S,
            );
            put(
                format_args!("{n}_gc_longest_pause_s"),
                Real(t.gc_longest_pause_s),
                "longest GC-like pause",
                S,
            );
            put(
                format_args!("{n}_mean_wait_s"),
                MaybeReal(t.started.gt(&0).then(|| t.wait_s / t.started as f64)),
                "mean queueing time of the requests that started",
                S,
            );
            put(
                format_args!("{n}_mean_queue"),
                Real(t.queue_s / self.horizon_s),
                "time-averaged queue length",
                "requests",
            );
            put(
                format_args!("{n}_max_arrivals_per_user"),
                Count(t.max_arrivals_per_user),
                "most requests received by the tier for one user request",
                N,
            );
            put(
                format_args!("{n}_arrival_bound_per_user"),
                Count(t.arrival_bound_per_user),
                "the bound of that number from the attempts allowed above",
                N,
            );
            for (k, r) in t.replicas.iter().enumerate() {
                put(
                    format_args!("{n}_r{k}_arrivals"),
                    Count(r.arrivals),
                    "requests received by this replica",
                    N,
                );
                put(
                    format_args!("{n}_r{k}_admitted"),
                    Count(r.admitted),
                    "requests admitted by this replica",
                    N,
                );
                put(
                    format_args!("{n}_r{k}_completed_ok"),
                    Count(r.completed_ok),
                    "successful completions of this replica",
                    N,
                );
                put(
                    format_args!("{n}_r{k}_max_queue"),
                    Count(r.max_queue),
                    "longest queue of this replica",
                    "requests",
                );
            }
        }
        for c in &self.callers {
            let n = &c.name;
            let counters: [(&str, u64, &'static str); 23] = [
                (
                    "calls",
                    c.calls,
                    "attempts sent on this edge: first tries, retries and hedged copies; a hedged attempt ends once, so calls - hedges_sent = the calls_* outcomes summed",
                ),
                ("calls_ok", c.calls_ok, "attempts answered successfully"),
                ("calls_timeout", c.calls_timeout, "attempts that timed out"),
                (
                    "calls_rejected",
                    c.calls_rejected,
                    "attempts rejected by a full queue downstream",
                ),
                (
                    "calls_expired",
                    c.calls_expired,
                    "attempts dropped downstream past their deadline",
                ),
                (
                    "calls_refused",
                    c.calls_refused,
                    "attempts refused by a replica that was down",
                ),
                (
                    "calls_error",
                    c.calls_error,
                    "attempts answered with an error",
                ),
                (
                    "calls_pending",
                    c.calls_pending,
                    "attempts still waiting at the horizon",
                ),
                (
                    "calls_cancelled",
                    c.calls_cancelled,
                    "attempts no longer waited for because their own job was cancelled or lost: a fan-out branch after a required one failed, a request lost in a crash, a caller cancelled from above",
                ),
                ("retries_sent", c.retries_sent, "retries sent"),
                (
                    "retries_throttled",
                    c.retries_throttled,
                    "retries refused by the retry throttle",
                ),
                (
                    "giveup_limit",
                    c.giveup_limit,
                    "gave up: attempt limit reached",
                ),
                (
                    "giveup_deadline",
                    c.giveup_deadline,
                    "gave up: own deadline passed",
                ),
                (
                    "giveup_not_retryable",
                    c.giveup_not_retryable,
                    "gave up: a failure of a class the caller does not retry",
                ),
                (
                    "no_time_left",
                    c.no_time_left,
                    "retries not sent: no time left",
                ),
                (
                    "margin_exhausted",
                    c.margin_exhausted,
                    "failed fast: the deadline safety margin left no time",
                ),
                (
                    "insufficient_deadline",
                    c.insufficient_deadline,
                    "stopped by budget admission",
                ),
                (
                    "retry_budget_exhausted",
                    c.retry_budget_exhausted,
                    "retries refused by the retry budget",
                ),
                (
                    "rejected_locally",
                    c.rejected_locally,
                    "attempts rejected locally by adaptive throttling",
                ),
                (
                    "breaker_rejected",
                    c.breaker_rejected,
                    "attempts rejected by an open circuit breaker",
                ),
                (
                    "bulkhead_rejected",
                    c.bulkhead_rejected,
                    "attempts rejected by the bulkhead (max_in_flight)",
                ),
                ("hedges_sent", c.hedges_sent, "hedged second copies sent"),
                (
                    "hedges_refused",
                    c.hedges_refused,
                    "hedges refused by their budget or by every replica",
                ),
            ];
            for (suffix, v, doc) in counters {
                put(format_args!("{n}_{suffix}"), Count(v), doc, N);
            }
            if c.balanced {
                put(
                    format_args!("{n}_ejections"),
                    Count(c.ejections),
                    "outlier ejections of a replica",
                    N,
                );
                put(
                    format_args!("{n}_ejected_s"),
                    Real(c.ejected_s),
                    "replica-seconds kept out by ejection",
                    "replica-s",
                );
            }
        }
    }

    /// One metric by name.
    pub fn metric(&self, name: &str) -> Option<Value> {
        self.metrics()
            .into_iter()
            .find(|m| m.name == name)
            .map(|m| m.value)
    }
}

/// The columns of the users by request class (`<prefix>class_<c>_*`) and
/// by tenant (`<prefix>tenant_top_*`, `<prefix>tenant_rest_*`, from
/// [`tenant_split`]): the run's (prefix "") or a client group's
/// (`group_<g>_`).
fn split_metrics(
    prefix: &str,
    classes: &[ClassStats],
    tenants: Option<[TenantStats; 2]>,
    put: &mut impl FnMut(Arguments<'_>, Value, &'static str, &'static str),
) {
    use Value::{Count, MaybeReal};
    let group = !prefix.is_empty();
    let doc = |run: &'static str, of_group: &'static str| if group { of_group } else { run };
    for c in classes {
        put(
            format_args!("{prefix}class_{}_users", c.name),
            Count(c.users),
            doc(
                "user requests of this class",
                "user requests of this client group and class",
            ),
            "count",
        );
        put(
            format_args!("{prefix}class_{}_success_rate", c.name),
            MaybeReal(ratio(c.users_ok, c.users)),
            doc(
                "success rate of this class's users",
                "success rate of this client group's users of this class",
            ),
            "share (0-1)",
        );
    }
    let Some([top, rest]) = tenants else {
        return;
    };
    let sides = [
        (
            "top",
            top,
            doc(
                "users of the most frequent tenant (of each group with tenants)",
                "users of this client group's most frequent tenant",
            ),
            doc(
                "success rate of the most frequent tenant's users",
                "success rate of this client group's most frequent tenant's users",
            ),
        ),
        (
            "rest",
            rest,
            doc(
                "users of every other tenant",
                "users of this client group's other tenants",
            ),
            doc(
                "success rate of the other tenants' users",
                "success rate of this client group's other tenants' users",
            ),
        ),
    ];
    for (side, t, users, rate) in sides {
        put(
            format_args!("{prefix}tenant_{side}_users"),
            Count(t.users),
            users,
            "count",
        );
        put(
            format_args!("{prefix}tenant_{side}_success_rate"),
            MaybeReal(ratio(t.users_ok, t.users)),
            rate,
            "share (0-1)",
        );
    }
}

/// The big tenant against the others: the users of `tenants` of rank 1
/// (of each group) and of every other rank, two columns whatever the
/// number of tenants.
fn tenant_split<'a>(tenants: impl IntoIterator<Item = &'a TenantStats>) -> [TenantStats; 2] {
    let mut split = [TenantStats::default(), TenantStats::default()];
    for t in tenants {
        let side = &mut split[usize::from(t.rank != 0)];
        side.users += t.users;
        side.users_ok += t.users_ok;
    }
    split
}

/// The metrics a run of `scenario` reports, with zero values: their names
/// and types, known before any run (a table's schema).
pub fn metric_schema(scenario: &crate::Scenario) -> Vec<Metric> {
    schema_result(scenario).metrics()
}

/// A result of a run of `scenario` that counted nothing: its metrics are
/// every run's of the scenario, by name, type and order.
pub fn schema_result(scenario: &crate::Scenario) -> RunResult {
    let tier = |t: &crate::scenario::Tier| {
        let one = TierStats {
            name: t.name.clone(),
            ..TierStats::default()
        };
        TierStats::of_replicas(vec![one; t.replicas.max(1) as usize])
    };
    let caller = |e: &crate::scenario::Edge| CallerStats {
        name: e.name.clone(),
        balanced: scenario.tiers[e.to].replicas > 1,
        ..CallerStats::default()
    };
    RunResult {
        horizon_s: scenario.horizon_s,
        tiers: scenario.tiers.iter().map(tier).collect(),
        callers: scenario.edges().iter().map(caller).collect(),
        classes: (crate::params::class_names(scenario).into_iter())
            .map(|name| ClassStats {
                name: name.to_string(),
                ..ClassStats::default()
            })
            .collect(),
        tenants: (scenario.groups().enumerate())
            .filter(|(_, (_, c))| c.tenants > 1)
            .map(|(i, _)| TenantStats {
                group: i as u16,
                ..TenantStats::default()
            })
            .collect(),
        groups: if scenario.clients.is_empty() {
            Vec::new()
        } else {
            (scenario.groups())
                .map(|(name, c)| GroupStats {
                    name: name.to_string(),
                    classes: (c.classes.iter())
                        .map(|k| ClassStats {
                            name: k.name.clone(),
                            ..ClassStats::default()
                        })
                        .collect(),
                    ..GroupStats::default()
                })
                .collect()
        },
        ..RunResult::default()
    }
}

/// Nearest-rank percentile (`p` in (0, 1]) of unsorted values; sorts them.
pub fn nearest_rank(values: &mut [u64], p: f64) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    let (_, v, _) = values.select_nth_unstable(rank(values.len(), p) - 1);
    Some(*v)
}

/// Nearest-rank percentile (`p` in (0, 1]) of values in ascending order,
/// at least one.
pub fn nearest_rank_of_sorted(sorted: &[u64], p: f64) -> u64 {
    sorted[rank(sorted.len(), p) - 1]
}

/// The nearest rank (1-based) of percentile `p` among `n > 0` values.
fn rank(n: usize, p: f64) -> usize {
    ((p * n as f64).ceil() as usize).clamp(1, n)
}

#[cfg(test)]
mod tests {

    /// The values without names are the metrics' values, and their digest
    /// the digest of the names written out, with names formatted in pieces
    /// (replicas, callers) and whole; another list has another digest.
    #[test]
    fn metric_values_are_the_metrics_and_their_digest_the_names() {
        use super::NamesDigest;
        let mut s = crate::builtin::builtin("ch37").expect("a built-in scenario");
        let overrides = [
            ("svc_b.replicas", 3),
            ("horizon_s", 5),
            ("client.duration_s", 5),
            ("svc_b.slow.start_s", 1),
        ];
        for (path, value) in overrides {
            crate::params::set(&mut s, path, &toml::Value::Integer(value)).expect("a parameter");
        }
        let r = crate::run(&s, 1).expect("a run");
        let metrics = r.metrics();
        assert!(metrics.iter().any(|m| m.name == "svc_b_r2_arrivals"));
        let (values, digest) = r.metric_values();
        let named: Vec<_> = metrics.iter().map(|m| m.value).collect();
        assert_eq!(values, named);
        assert_eq!(
            digest,
            NamesDigest::of(metrics.iter().map(|m| m.name.as_str()))
        );
        let fewer = NamesDigest::of(metrics[1..].iter().map(|m| m.name.as_str()));
        assert_ne!(digest, fewer);
        // The same names run together differently are another list.
        let joined = [format!("{}{}", metrics[0].name, metrics[1].name)];
        let rest = metrics[2..].iter().map(|m| m.name.as_str());
        assert_ne!(
            digest,
            NamesDigest::of(joined.iter().map(String::as_str).chain(rest))
        );
        assert!(r.names_surely_distinct());
        // Two tiers of one name write the same columns.
        let mut twice = r.clone();
        twice.tiers.push(twice.tiers[0].clone());
        assert!(!twice.names_surely_distinct());
    }

    /// No window after the trigger with a user: nothing to judge (0, no
    /// verdict), not "never recovered"; one user in one window is enough.
    #[test]
    fn recovery_is_censored_at_0_without_users_after_the_trigger() {
        use super::Recovery;
        use crate::time::NANOS_PER_SEC;
        let r = Recovery {
            window_end: 10 * NANOS_PER_SEC,
            width_s: 3,
            threshold: 0.99,
            arrivals_end: 20 * NANOS_PER_SEC,
        };
        let mut arrivals = vec![5u64; 25];
        arrivals[10..].fill(0);
        assert_eq!(r.time_s(&arrivals, &arrivals), None);
        assert_eq!(r.censor_s(&arrivals), 0.0);
        arrivals[19] = 1;
        assert_eq!(r.censor_s(&arrivals), 8.0);
        // A user past the arrivals' end is in no window.
        arrivals[19] = 0;
        arrivals[21] = 1;
        assert_eq!(r.censor_s(&arrivals), 0.0);
    }

    use super::{LATENCY_EDGES_NS, LatencyHistogram, nearest_rank, nearest_rank_of_sorted};

    #[test]
    fn latency_edges_are_the_r10_steps_from_100_us_to_1000_s() {
        assert_eq!(LATENCY_EDGES_NS[0], 100_000);
        assert_eq!(LATENCY_EDGES_NS[5], 315_000);
        assert_eq!(LATENCY_EDGES_NS[10], 1_000_000);
        assert_eq!(LATENCY_EDGES_NS[70], 1_000_000_000_000);
        assert!(LATENCY_EDGES_NS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_latency_on_an_edge_falls_in_the_bucket_it_closes() {
        let ms = 1_000_000;
        let h = LatencyHistogram::new(&[0, 100_000, 100_001, ms, 2_000 * 1_000 * ms], &[125_000]);
        assert_eq!(h.ok.len(), 72);
        assert_eq!(&h.ok[..2], &[2, 1]);
        assert_eq!(h.ok[10], 1, "1 ms closes bucket 10");
        assert_eq!(h.ok[71], 1, "above 1,000 s: the last bucket");
        assert_eq!(h.ok.iter().sum::<u64>(), 5);
        assert_eq!(h.failed[1], 1);
    }

    #[test]
    fn nearest_rank_matches_the_definition() {
        assert_eq!(nearest_rank(&mut [], 0.5), None);
        assert_eq!(nearest_rank(&mut [7], 0.99), Some(7));
        // n = 4: median rank ceil(2) = 2 -> second smallest.
        assert_eq!(nearest_rank(&mut [40, 10, 30, 20], 0.5), Some(20));
        // n = 100: p99 rank 99.
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(nearest_rank(&mut v, 0.99), Some(99));
        assert_eq!(nearest_rank(&mut v, 1.0), Some(100));
        v.sort_unstable();
        assert_eq!(nearest_rank_of_sorted(&v, 0.99), 99);
        assert_eq!(nearest_rank_of_sorted(&[10, 20, 30, 40], 0.5), 20);
    }
}
