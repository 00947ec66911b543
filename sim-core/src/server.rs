//! The server side of a tier: its slots and class queues, the protections
//! an arriving request meets (admission) and the rules that pick, or drop,
//! the next queued request a freed slot takes, with the tier's counters.
//! The engine decides when a hook runs; a hook counts its own reason.

use crate::cache::CacheState;
use crate::caller::Outcome;
use crate::gc::Pauses;
use crate::job::{Job, JobRef, Jobs, Origin};
use crate::model::ServerModel;
use crate::policy::{CoDel, ConcurrencyLimit, RateLimiter};
use crate::random::Stream;
use crate::result::{Bins, RetryOrigins, TierSeries, TierStats};
use crate::scenario::QueueOrder;
use crate::time::{NANOS_PER_SEC, NEVER, Nanos};
use std::collections::VecDeque;

/// Why an arriving request is rejected at once (answered `rejected`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The queue is at its class's shedding length.
    Shed,
    /// The tier's rate limit has no token.
    RateLimited,
    QueueFull,
}

impl Rejection {
    /// As a trace names it.
    pub fn name(self) -> &'static str {
        match self {
            Rejection::Shed => "rejected: shed",
            Rejection::RateLimited => "rejected: rate_limited",
            Rejection::QueueFull => "rejected: queue_full",
        }
    }

    #[inline]
    fn counter(self, stats: &mut TierStats) -> &mut u64 {
        match self {
            Rejection::Shed => &mut stats.shed,
            Rejection::RateLimited => &mut stats.rate_limited,
            Rejection::QueueFull => &mut stats.rejected_full,
        }
    }
}

/// Why an admitted request is dropped when it would start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// Its caller cancelled it.
    Cancelled,
    /// Drop-expired: its deadline has passed.
    Expired,
    /// CoDel: the queue has stood above its target for too long.
    CoDel,
}

impl Dropped {
    /// As a trace names it.
    pub fn name(self) -> &'static str {
        match self {
            Dropped::Cancelled => "dropped: cancelled",
            Dropped::Expired => "dropped: expired",
            Dropped::CoDel => "dropped: codel",
        }
    }

    #[inline]
    fn counter(self, stats: &mut TierStats) -> &mut u64 {
        match self {
            Dropped::Cancelled => &mut stats.cancelled,
            Dropped::Expired => &mut stats.dropped_expired,
            Dropped::CoDel => &mut stats.codel_dropped,
        }
    }

    /// What the caller is answered (nobody waits for a cancelled request):
    /// a CoDel drop is a rejection, answered as the tier answers those.
    #[inline]
    pub fn answer(self, rejection: Outcome) -> Option<Outcome> {
        match self {
            Dropped::Cancelled => None,
            Dropped::Expired => Some(Outcome::Expired),
            Dropped::CoDel => Some(rejection),
        }
    }
}

/// Where an admitted request goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Start,
    Queue,
}

/// With cooperative cancellation (checks every `check` from `start`), the
/// first check that finds the deadline passed, if it comes before the work
/// of length `work` is done.
#[inline]
pub fn abandon_at(start: Nanos, work: Nanos, deadline: Nanos, check: Nanos) -> Option<Nanos> {
    if check == 0 || deadline == NEVER {
        return None;
    }
    let checks = deadline.saturating_sub(start).div_ceil(check).max(1);
    let at = start.saturating_add(checks.saturating_mul(check));
    (at < start + work).then_some(at)
}

/// A tier's queue: one queue per request class in priority order, each in
/// arrival order; a freed slot serves the highest class it may.
pub struct ClassQueue {
    classes: Vec<VecDeque<JobRef>>,
    len: usize,
}

impl ClassQueue {
    fn new(classes: usize) -> ClassQueue {
        ClassQueue {
            classes: vec![VecDeque::new(); classes],
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// No request of class `class` or above that `allowed` lets start
    /// (its bulkhead has room) is waiting: one its bulkhead holds back
    /// does not hold back a request of another class.
    #[inline]
    fn none_startable_at_or_above(&self, class: usize, allowed: impl Fn(usize) -> bool) -> bool {
        // Most arrivals find the queue empty: the count answers at once.
        self.len == 0
            || (self.classes[..=class].iter().enumerate()).all(|(c, q)| q.is_empty() || !allowed(c))
    }

    #[inline]
    fn push(&mut self, job: JobRef, class: usize) {
        self.classes[class].push_back(job);
        self.len += 1;
    }

    /// The next request to serve: from the highest class that `allowed`
    /// lets in (its bulkhead has room). `newest_first` for LIFO.
    #[inline]
    fn pop(&mut self, newest_first: bool, allowed: impl Fn(usize) -> bool) -> Option<JobRef> {
        // One class (most tiers): no search over the classes (-0.6% of
        // the instructions of ch37's presets that queue).
        if let [q] = self.classes.as_mut_slice() {
            if !allowed(0) {
                return None;
            }
            let job = if newest_first {
                q.pop_back()
            } else {
                q.pop_front()
            };
            self.len -= job.is_some() as usize;
            return job;
        }
        let (class, q) = self
            .classes
            .iter_mut()
            .enumerate()
            .find(|(c, q)| !q.is_empty() && allowed(*c))?;
        let job = if newest_first {
            q.pop_back()
        } else {
            q.pop_front()
        };
        debug_assert!(job.is_some(), "class {class} was not empty");
        self.len -= 1;
        job
    }

    /// The request `pop` would most likely serve next (the first waiting
    /// class's, whatever its bulkhead): worth bringing into cache.
    #[inline]
    fn likely_next(&self, newest_first: bool) -> Option<JobRef> {
        let q = match self.classes.as_slice() {
            [q] => q,
            _ => self.classes.iter().find(|q| !q.is_empty())?,
        };
        if newest_first { q.back() } else { q.front() }.copied()
    }
}

/// What a tier instance has of the mechanisms most scenarios leave off,
/// decided once per run: the hot path skips the checks of the others (as
/// it skips the work of a tier without any, `ServiceModel::is_none`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Has {
    pub errors: bool,
    pub crashes: bool,
    pub slow: bool,
    pub per_inflight: bool,
    /// A rate limit shared by the tier's replicas (`rate_limit_scope`).
    pub shared_rate_limit: bool,
    /// A request taken from the queue may be dropped instead of started
    /// (cancelled by its caller, expired, or by CoDel): without, the job
    /// record, often cold by then, is not read at dequeue.
    pub drops_at_start: bool,
    /// A leaky bucket requests wait in before admission.
    pub leaky_bucket: bool,
    /// A request class with a service model of its own here.
    pub class_service: bool,
    /// GC-like pauses that freeze work in service.
    pub gc_pauses: bool,
    /// Sub-second series (`series_bin_s`) count its arrivals per bin: a
    /// choice of the run, which the engine sets (`of` leaves it off).
    pub bins: bool,
}

impl Has {
    /// `cancels`: some caller of the run may cancel a request it sent.
    pub fn of(model: &ServerModel, shared_rate_limit: bool, cancels: bool) -> Has {
        Has {
            errors: !model.passes.is_empty(),
            crashes: !model.crashes.is_empty(),
            slow: !model.slow.is_empty(),
            per_inflight: model.per_inflight > 0,
            shared_rate_limit,
            drops_at_start: cancels || model.drop_expired || model.codel.is_some(),
            leaky_bucket: model.leaky_bucket,
            class_service: model.class_service.iter().any(Option::is_some),
            gc_pauses: model.gc.is_some(),
            bins: false,
        }
    }
}

pub struct Server {
    pub has: Has,
    /// Down in a crash window: `Some(refusal delay)` refuses arrivals,
    /// `Some(None)` is a black hole; `None`: up.
    pub down: Option<Option<Nanos>>,
    pub busy: u32,
    /// Requests in service per class (for the class bulkheads).
    busy_by_class: Vec<u32>,
    pub queue: ClassQueue,
    /// Set while the engine refills the slots, so that a nested completion
    /// does not start a second refill.
    pub filling: bool,
    /// Service-time draws.
    pub rng: Stream,
    pub latency_rng: Stream,
    /// Draws of fast failures in error windows (only inside one).
    error_rng: Stream,
    codel: Option<CoDel>,
    rate_limit: Option<RateLimiter>,
    /// GC-like pauses, when the tier has them.
    pub pauses: Option<Pauses>,
    /// Requests waiting in the leaky bucket of the rate limit.
    in_bucket: u64,
    /// The look-aside cache in front of the tier (its only instance).
    pub cache: Option<CacheState>,
    /// The adaptive concurrency limit, when the tier has one, and each
    /// change of it `(when, new limit)`: the per-second series comes from
    /// them at the end, so that the event loop's sampling stays as it was.
    limit: Option<ConcurrencyLimit>,
    limit_changes: Vec<(Nanos, u32)>,
    pub stats: TierStats,
    /// The per-second counters, one record a second: an event touches one
    /// cache line and pays one bounds check for all of them.
    pub seconds: Vec<Second>,
    /// The `retries` of `seconds` by what sent them.
    retry_origins: RetryOrigins,
    /// Arrivals per sub-second bin, in runs with `series_bin_s` under 1 s
    /// (the engine makes them).
    pub bins: Option<Bins>,
    pub busy_ns: u128,
    /// Total time requests spent queued before they started.
    wait_ns: u128,
    /// Integral of the queue length over time, up to `queue_since`.
    queue_area_ns: u128,
    queue_since: Nanos,
}

/// One second of a server's counters (see [`TierSeries`]).
#[derive(Clone, Copy, Default)]
pub struct Second {
    pub arrivals: u64,
    pub retries: u64,
    pub after_user_left: u64,
    pub admitted: u64,
    pub completed: u64,
    pub late: u64,
    /// Sampled at the end of the second.
    pub queue_len: u64,
    pub busy: u64,
}

impl Server {
    /// Server `model` of a run with `classes` request classes over `secs`
    /// seconds.
    pub fn new(model: &ServerModel, classes: usize, secs: usize, seed: u64) -> Server {
        // Replica 0 keeps the tier's names, so that its draws do not move
        // when replicas are added.
        let id = match model.replica {
            0 => model.name.clone(),
            k => format!("{}.r{k}", model.name),
        };
        Server {
            // In isolation, every check is on; the engine knows the run's.
            has: Has::of(model, false, true),
            down: None,
            busy: 0,
            busy_by_class: vec![0; classes],
            queue: ClassQueue::new(classes),
            filling: false,
            rng: Stream::new(seed, &format!("service.{id}")),
            latency_rng: Stream::new(seed, &format!("latency.{id}")),
            error_rng: Stream::new(seed, &format!("errors.{id}")),
            codel: model.codel.clone(),
            rate_limit: model.rate_limit.clone(),
            pauses: model.gc.as_ref().map(Pauses::new),
            in_bucket: 0,
            cache: (model.cache.as_ref()).map(|c| CacheState::new(c, seed, &model.name, secs)),
            limit: model.adaptive_limit.clone(),
            limit_changes: Vec::new(),
            stats: TierStats {
                name: model.name.clone(),
                arrival_bound_per_user: model.arrival_bound_per_user,
                ..TierStats::default()
            },
            seconds: vec![Second::default(); secs],
            retry_origins: RetryOrigins::new(secs),
            bins: None,
            busy_ns: 0,
            wait_ns: 0,
            queue_area_ns: 0,
            queue_since: 0,
        }
    }

    /// Requests that may be in service now: the slots, or fewer under an
    /// adaptive limit.
    #[inline]
    fn capacity(&self, slots: u32) -> u32 {
        self.limit.as_ref().map_or(slots, |l| l.limit().min(slots))
    }

    /// Adds the queue's length times the time since the last change.
    #[inline]
    fn account_queue(&mut self, now: Nanos) {
        self.queue_area_ns += self.queue.len() as u128 * (now - self.queue_since) as u128;
        self.queue_since = now;
    }

    /// A request arrives in second `sec`, `during` the trigger window or
    /// not, after its user request has `ended` or not (the engine counts it
    /// for its user and tier).
    #[inline]
    pub fn on_arrival(&mut self, sec: usize, during: bool, ended: bool, origin: Origin) {
        self.stats.arrivals += 1;
        let second = &mut self.seconds[sec];
        second.arrivals += 1;
        if origin.by_retry() {
            second.retries += 1;
            self.retry_origins.count(sec, origin);
        }
        second.after_user_left += ended as u64;
        self.stats.arrivals_during += during as u64;
        self.stats.arrivals_after_user_left += ended as u64;
    }

    /// Is the rate limit counted per tenant key (the engine then passes
    /// the request's key to `admit`)?
    #[inline]
    pub fn keys_rate_limit(&self) -> bool {
        matches!(self.rate_limit, Some(RateLimiter::Keyed(_)))
    }

    /// Admission of a request of `class` and tenant `key` arriving at `now`
    /// (second `sec`), against the tier's shared rate limit when it has one:
    /// it starts if a slot is free to it, else it queues, unless a
    /// protection rejects it (counted). Under FIFO a request never
    /// overtakes one of its class or above; `reply_first` lets it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn admit(
        &mut self,
        model: &ServerModel,
        now: Nanos,
        sec: usize,
        class: usize,
        key: u32,
        reply_first: bool,
        shared_limit: Option<&mut RateLimiter>,
    ) -> Result<Admission, Rejection> {
        let busy = &self.busy_by_class;
        let can_start = self.busy < self.capacity(model.slots)
            && busy[class] < model.class_slots[class]
            && (reply_first
                || (self.queue)
                    .none_startable_at_or_above(class, |c| busy[c] < model.class_slots[c]));
        let queued = self.queue.len();
        // Shedding, like a full queue, turns away only a request that would
        // wait: one a free slot takes at once is never shed.
        let rejection = if !can_start && model.shed_queue[class].is_some_and(|q| queued >= q) {
            Some(Rejection::Shed)
        } else if !can_start && model.queue_cap.is_some_and(|cap| queued >= cap as usize) {
            Some(Rejection::QueueFull)
        } else if (shared_limit.or(self.rate_limit.as_mut())).is_some_and(|b| !b.try_take(now, key))
        {
            // Only a request that would be admitted takes a token.
            Some(Rejection::RateLimited)
        } else {
            None
        };
        if let Some(r) = rejection {
            *r.counter(&mut self.stats) += 1;
            return Err(r);
        }
        self.stats.admitted += 1;
        self.seconds[sec].admitted += 1;
        Ok(if can_start {
            Admission::Start
        } else {
            Admission::Queue
        })
    }

    /// When a request arriving at `now` leaves the tier's leaky bucket
    /// (the shared one when the tier has one): `now` without a leaky
    /// bucket, a later instant if it waits its turn (counted), or a
    /// rejection if the bucket is full (counted).
    #[inline]
    pub fn leave_bucket(
        &mut self,
        now: Nanos,
        shared_limit: Option<&mut RateLimiter>,
    ) -> Result<Nanos, Rejection> {
        let Some(RateLimiter::Leaky(bucket)) = shared_limit.or(self.rate_limit.as_mut()) else {
            return Ok(now);
        };
        match bucket.admit_at(now) {
            None => {
                self.stats.rate_limited += 1;
                Err(Rejection::RateLimited)
            }
            Some(at) => {
                if at > now {
                    self.stats.bucket_waited += 1;
                    self.in_bucket += 1;
                }
                Ok(at)
            }
        }
    }

    /// A request that waited in the leaky bucket leaves it.
    pub fn left_bucket(&mut self) {
        self.in_bucket -= 1;
    }

    /// A request leaves the leaky bucket, in second `sec`, past its
    /// deadline: admitted (waiting there is queueing), then dropped as
    /// expired, as a queued one would be.
    pub fn expired_in_bucket(&mut self, sec: usize) {
        self.stats.admitted += 1;
        self.seconds[sec].admitted += 1;
        self.count_drop(Dropped::Expired);
    }

    /// An admitted request of `class` waits.
    #[inline]
    pub fn enqueue(&mut self, job: JobRef, class: usize, now: Nanos) {
        self.account_queue(now);
        self.queue.push(job, class);
        self.stats.max_queue = self.stats.max_queue.max(self.queue.len() as u64);
    }

    /// The next queued request a free slot takes, with the reason it is
    /// dropped instead, if any (counted); `None` while no slot is free or
    /// no waiting class may start. The order: the highest class its
    /// bulkhead lets in, then queue order; then the drops: cancelled,
    /// expired, CoDel.
    #[inline]
    pub fn next_to_start(
        &mut self,
        model: &ServerModel,
        now: Nanos,
        jobs: &Jobs,
    ) -> Option<(JobRef, Option<Dropped>)> {
        if self.busy >= self.capacity(model.slots) {
            return None;
        }
        self.account_queue(now);
        let newest_first = match model.queue_order {
            QueueOrder::Fifo => false,
            QueueOrder::Lifo => true,
            QueueOrder::AdaptiveLifo => self.queue.len() > model.lifo_threshold,
        };
        let busy = &self.busy_by_class;
        let job = self
            .queue
            .pop(newest_first, |c| busy[c] < model.class_slots[c])?;
        if let Some(next) = self.queue.likely_next(newest_first) {
            jobs.prefetch(next);
        }
        if !self.has.drops_at_start {
            return Some((job, None));
        }
        let j = jobs.get_live(job);
        let dropped = if j.cancelled() {
            Some(Dropped::Cancelled)
        } else if model.drop_expired && now >= j.deadline {
            Some(Dropped::Expired)
        } else if self
            .codel
            .as_mut()
            .is_some_and(|c| c.should_drop(now, now - j.arrived, self.queue.is_empty()))
        {
            Some(Dropped::CoDel)
        } else {
            None
        };
        if let Some(d) = dropped {
            self.count_drop(d);
        }
        Some((job, dropped))
    }

    #[inline]
    pub fn count_drop(&mut self, why: Dropped) {
        *why.counter(&mut self.stats) += 1;
    }

    /// Does a request starting at `now` fail fast (an error window)?
    /// Drawn only inside a window, so that other runs keep their draws.
    /// Out of line: the engine asks only a tier with error windows.
    #[inline(never)]
    pub fn fails_fast(&mut self, model: &ServerModel, now: Nanos) -> bool {
        let p = model.error_p(now);
        p > 0.0 && self.error_rng.uniform() < p
    }

    /// The instance goes down at `now`: its queue is emptied (the requests
    /// returned are lost, counted).
    pub fn crash(&mut self, now: Nanos, refuse_after: Option<Nanos>) -> Vec<JobRef> {
        self.account_queue(now);
        self.down = Some(refuse_after);
        let lost: Vec<JobRef> = (self.queue.classes.iter_mut())
            .flat_map(|q| q.drain(..))
            .collect();
        self.queue.len = 0;
        self.stats.lost_queued_in_crash += lost.len() as u64;
        lost
    }

    /// The instance's own leaky bucket (none shared by the tier) is lost
    /// in its crash, with the requests waiting in it, which entered it in
    /// the seconds `entered`: admitted then (waiting there is queueing; in
    /// the second of the crash, the series would show a burst let in as
    /// they are destroyed), and lost as queued ones are. It restarts empty.
    pub fn lose_bucket(&mut self, entered: &[usize]) {
        if let Some(RateLimiter::Leaky(bucket)) = self.rate_limit.as_mut() {
            bucket.empty();
        }
        let n = entered.len() as u64;
        self.in_bucket -= n;
        self.stats.admitted += n;
        for &sec in entered {
            self.seconds[sec].admitted += 1;
        }
        self.stats.lost_queued_in_crash += n;
    }

    /// A request of `class` in service since `started` is lost in a crash
    /// at `now`: its slot is free, its work counted as held until now.
    pub fn lose_in_service(&mut self, class: usize, started: Nanos, now: Nanos) {
        self.busy -= 1;
        self.busy_by_class[class] -= 1;
        self.busy_ns += (now - started) as u128;
        self.stats.lost_in_crash += 1;
    }

    /// A request of `class` that `waited` in the queue takes a slot.
    #[inline]
    pub fn on_start(&mut self, class: usize, waited: Nanos) {
        self.busy += 1;
        self.stats.started += 1;
        self.busy_by_class[class] += 1;
        self.wait_ns += waited as u128;
    }

    /// Request `j` of `class` releases its slot at `now` (second `sec`)
    /// with a reply, `ok` or not; `late` if its caller no longer waits.
    #[inline]
    pub fn on_reply(
        &mut self,
        now: Nanos,
        sec: usize,
        class: usize,
        j: &Job,
        ok: bool,
        late: bool,
    ) {
        self.busy -= 1;
        self.busy_by_class[class] -= 1;
        self.busy_ns += (now - j.started) as u128;
        // Abandoned work is not a completion: the limit learns nothing from
        // it (a cancelled hedge's loser counted as an error, and brought
        // AIMD down to its floor without one real failure).
        if let Some(l) = self.limit.as_mut().filter(|_| !j.abandoned()) {
            let before = l.limit();
            l.record(now, j.arrived, j.started, ok, self.busy + 1);
            if l.limit() != before {
                self.limit_changes.push((now, l.limit()));
            }
        }
        if j.abandoned() {
            // Not a completion: the work stopped before its end.
            self.stats.abandoned += 1;
        } else {
            self.stats.completed += 1;
            self.stats.completed_ok += ok as u64;
            self.seconds[sec].completed += 1;
            if late {
                self.stats.late += 1;
                self.seconds[sec].late += 1;
            }
        }
    }

    /// The adaptive limit at the end of each of `secs` seconds, as the
    /// engine samples the rest (after the events before the second's end);
    /// 0 without a limit.
    fn limit_by_second(&self, model: &ServerModel, secs: usize) -> Vec<u64> {
        let Some(first) = &model.adaptive_limit else {
            return vec![0; secs];
        };
        let mut limit = first.limit();
        let mut changes = self.limit_changes.iter().peekable();
        (1..=secs as Nanos)
            .map(|end| {
                while let Some(&&(at, l)) = changes.peek() {
                    if at >= end * NANOS_PER_SEC {
                        break;
                    }
                    limit = l;
                    changes.next();
                }
                limit as u64
            })
            .collect()
    }

    /// The tier's counters and series at the end of the run (`now`);
    /// `callers`: the metric names of the scenario's edges.
    pub fn into_result(
        mut self,
        model: &ServerModel,
        now: Nanos,
        callers: &[String],
    ) -> (TierStats, TierSeries) {
        self.account_queue(now);
        let limit = self.limit_by_second(model, self.seconds.len());

        let secs = |ns: u128| ns as f64 / NANOS_PER_SEC as f64;
        let mut t = self.stats;
        t.wait_s = secs(self.wait_ns);
        t.queue_s = secs(self.queue_area_ns);
        t.queued_at_end = self.queue.len() as u64;
        t.in_bucket_at_end = self.in_bucket;
        t.busy_at_end = self.busy as u64;
        t.busy_s = secs(self.busy_ns);
        if let Some(c) = &self.cache {
            t.cache_hits = c.hits;
            t.cache_misses = c.misses;
            t.cache_fills = c.filled() as u64;
        }
        if let Some(p) = &self.pauses {
            t.gc_pauses = p.count();
            t.gc_paused_s = secs(p.total() as u128);
            t.gc_longest_pause_s = secs(p.longest() as u128);
        }
        if let Some(l) = &self.limit {
            t.limit_lowest = l.lowest() as u64;
            t.limit_at_end = l.limit() as u64;
        }
        let capacity_per_s = (0..self.seconds.len() as u64)
            .map(|sec| {
                let mid = sec * NANOS_PER_SEC + NANOS_PER_SEC / 2;
                let mean_s = model.service.mean_ns() * model.slow_factor(mid) / 1e9;
                let down = (model.crashes.iter()).any(|c| c.start <= mid && mid < c.end);
                (mean_s > 0.0).then(|| {
                    if down {
                        0.0
                    } else {
                        model.slots as f64 / mean_s
                    }
                })
            })
            .collect();
        let column = |get: fn(&Second) -> u64| self.seconds.iter().map(get).collect();
        let secs_n = self.seconds.len();
        let (retries_from, hedges) = self.retry_origins.into_series(callers);
        let series = TierSeries {
            name: model.name.clone(),
            arrivals: column(|c| c.arrivals),
            retries: column(|c| c.retries),
            retries_from,
            hedges,
            arrivals_by_bin: self
                .bins
                .as_ref()
                .map_or_else(Vec::new, |b| b.arrivals.clone()),
            retries_by_bin: self
                .bins
                .as_ref()
                .map_or_else(Vec::new, |b| b.retries.clone()),
            after_user_left: column(|c| c.after_user_left),
            admitted: column(|c| c.admitted),
            completed: column(|c| c.completed),
            late: column(|c| c.late),
            queue_len: column(|c| c.queue_len),
            busy: column(|c| c.busy),
            limit,
            capacity_per_s,
            cache_hits: (self.cache.as_ref())
                .map_or_else(|| vec![0; secs_n], |c| c.hits_per_s.clone()),
            cache_misses: (self.cache.as_ref())
                .map_or_else(|| vec![0; secs_n], |c| c.misses_per_s.clone()),
            replicas: Vec::new(),
        };
        (t, series)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Job, NO_EDGE, NO_JOB};

    const MS: Nanos = 1_000_000;

    /// ch37's leaf with one slot, a queue of one, no protection: each test
    /// sets what it looks at.
    fn leaf() -> ServerModel {
        let s = crate::builtin("ch37").expect("ch37 is built in");
        let mut m = crate::model::Model::new(&s).servers.pop().unwrap();
        m.slots = 1;
        m.queue_cap = Some(1);
        m.queue_order = QueueOrder::Fifo;
        m.drop_expired = false;
        m.shed_queue = vec![None];
        m.class_slots = vec![u32::MAX];
        m.codel = None;
        m.rate_limit = None;
        m.adaptive_limit = None;
        m
    }

    fn server(m: &ServerModel) -> Server {
        Server::new(m, 1, 1, 1)
    }

    fn request(jobs: &mut Jobs, deadline: Nanos, cancelled: bool) -> JobRef {
        let mut job = Job {
            arrived: 0,
            ..Job::request(0, NO_EDGE, NO_JOB, 1, deadline, 0)
        };
        if cancelled {
            job.set_cancelled();
        }
        jobs.alloc(job)
    }

    #[test]
    fn admission_starts_queues_then_rejects_a_full_queue() {
        let m = leaf();
        let mut srv = server(&m);
        let mut jobs = Jobs::default();
        assert_eq!(srv.admit(&m, 0, 0, 0, 0, false, None), Ok(Admission::Start));
        srv.on_start(0, 0);
        assert_eq!(srv.admit(&m, 0, 0, 0, 0, false, None), Ok(Admission::Queue));
        srv.enqueue(request(&mut jobs, NEVER, false), 0, 0);
        assert_eq!(
            srv.admit(&m, 0, 0, 0, 0, false, None),
            Err(Rejection::QueueFull)
        );
        assert_eq!((srv.stats.admitted, srv.stats.rejected_full), (2, 1));
        assert_eq!(srv.stats.max_queue, 1);
    }

    #[test]
    fn shedding_comes_first_and_only_admitted_requests_take_a_token() {
        let mut m = leaf();
        m.rate_limit = Some(crate::policy::RateLimiter::Token(
            crate::policy::TokenBucket::new(1.0, 1.0),
        ));
        let mut srv = server(&m);
        let mut jobs = Jobs::default();
        srv.on_start(0, 0);
        srv.enqueue(request(&mut jobs, NEVER, false), 0, 0);
        assert_eq!(
            srv.admit(&m, 0, 0, 0, 0, false, None),
            Err(Rejection::QueueFull)
        );
        m.queue_cap = None;
        assert_eq!(srv.admit(&m, 0, 0, 0, 0, false, None), Ok(Admission::Queue));
        assert_eq!(
            srv.admit(&m, 0, 0, 0, 0, false, None),
            Err(Rejection::RateLimited)
        );
        m.shed_queue = vec![Some(1)];
        assert_eq!(srv.admit(&m, 0, 0, 0, 0, false, None), Err(Rejection::Shed));
        let t = &srv.stats;
        assert_eq!((t.rejected_full, t.rate_limited, t.shed), (1, 1, 1));
    }

    #[test]
    fn under_fifo_an_arrival_does_not_overtake_the_queue() {
        let mut m = leaf();
        m.slots = 2;
        let mut srv = server(&m);
        let mut jobs = Jobs::default();
        srv.enqueue(request(&mut jobs, NEVER, false), 0, 0);
        assert_eq!(
            srv.admit(&m, 0, 0, 0, 0, false, None),
            Err(Rejection::QueueFull)
        );
        assert_eq!(srv.admit(&m, 0, 0, 0, 0, true, None), Ok(Admission::Start));
    }

    /// Under FIFO an arrival waits behind a queued request of its class
    /// or above, except one that its own class bulkhead holds back: that
    /// one could not take the free slot anyway.
    #[test]
    fn a_request_its_bulkhead_holds_back_does_not_hold_back_another_class() {
        let mut m = leaf();
        (m.slots, m.queue_cap) = (4, None);
        // Class 0 (the higher) may hold one slot; class 1 any.
        (m.shed_queue, m.class_slots) = (vec![None, None], vec![1, u32::MAX]);
        let mut srv = Server::new(&m, 2, 1, 1);
        let mut jobs = Jobs::default();
        srv.on_start(0, 0);
        assert_eq!(srv.admit(&m, 0, 0, 0, 0, false, None), Ok(Admission::Queue));
        srv.enqueue(request(&mut jobs, NEVER, false), 0, 0);
        assert_eq!(srv.admit(&m, 0, 0, 1, 0, false, None), Ok(Admission::Start));
        // With room in its bulkhead, the queued request does come first.
        m.class_slots[0] = 2;
        assert_eq!(srv.admit(&m, 0, 0, 1, 0, false, None), Ok(Admission::Queue));
    }

    #[test]
    fn next_to_start_drops_cancelled_then_expired_requests() {
        let mut m = leaf();
        m.queue_cap = None;
        m.drop_expired = true;
        let mut srv = server(&m);
        let mut jobs = Jobs::default();
        let cancelled = request(&mut jobs, NEVER, true);
        let expired = request(&mut jobs, 5 * MS, false);
        let fine = request(&mut jobs, NEVER, false);
        for job in [cancelled, expired, fine] {
            srv.enqueue(job, 0, 0);
        }
        let now = 10 * MS;
        let mut next = || srv.next_to_start(&m, now, &jobs);
        assert_eq!(next(), Some((cancelled, Some(Dropped::Cancelled))));
        assert_eq!(next(), Some((expired, Some(Dropped::Expired))));
        assert_eq!(next(), Some((fine, None)));
        assert_eq!(next(), None, "the queue is empty");
        srv.enqueue(request(&mut jobs, NEVER, false), 0, now);
        srv.on_start(0, now);
        assert_eq!(srv.next_to_start(&m, now, &jobs), None, "no free slot");
        assert_eq!((srv.stats.cancelled, srv.stats.dropped_expired), (1, 1));
        let overload = Outcome::Rejected;
        assert_eq!(Dropped::Cancelled.answer(overload), None);
        assert_eq!(Dropped::Expired.answer(overload), Some(Outcome::Expired));
        assert_eq!(Dropped::CoDel.answer(overload), Some(Outcome::Rejected));
        // A tier that answers rejections as 500s answers CoDel's so too.
        assert_eq!(Dropped::CoDel.answer(Outcome::Error), Some(Outcome::Error));
    }

    #[test]
    fn lifo_serves_the_newest_first() {
        let mut m = leaf();
        m.queue_cap = None;
        m.queue_order = QueueOrder::Lifo;
        let mut srv = server(&m);
        let mut jobs = Jobs::default();
        let (old, new) = (
            request(&mut jobs, NEVER, false),
            request(&mut jobs, NEVER, false),
        );
        srv.enqueue(old, 0, 0);
        srv.enqueue(new, 0, 0);
        assert_eq!(srv.next_to_start(&m, 0, &jobs), Some((new, None)));
    }

    #[test]
    fn work_is_abandoned_at_the_first_check_past_the_deadline() {
        assert_eq!(abandon_at(0, 100, 25, 0), None, "no checks");
        assert_eq!(abandon_at(0, 100, NEVER, 10), None, "no deadline");
        assert_eq!(abandon_at(0, 100, 25, 10), Some(30));
        assert_eq!(abandon_at(0, 100, 95, 10), None, "done before the check");
        assert_eq!(abandon_at(50, 100, 20, 10), Some(60), "already late");
    }
}
