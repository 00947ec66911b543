//! The discrete-event engine.
//!
//! Time is integer nanoseconds; the event queue is ordered by `(time,
//! insertion number)`, so simultaneous events run in the order they were
//! scheduled and a run is a pure function of the model and the seed.
//!
//! With no network latency a reply travels up the chain at once, so replies
//! are plain (recursive) calls, not events: that is what makes the two
//! dispatch disciplines differ (who gets a freed slot first). Recursion is
//! bounded by the chain's depth: a server that is already refilling its
//! slots does not start a second refill from inside the first.
//!
//! Levels: a job at level 0 is a user request at the client; a job at level
//! `s + 1` is a request being handled by server `s`; a job at level
//! `BRANCH` is one branch of a fan-out, owned by the server job that made
//! it. A job that calls does so through its edge: `callers[job.edge]`
//! (in a plain chain, the job at level `l` calls server `l` through edge
//! `l`).

use crate::event_queue::EventQueue;
use crate::model::{Downstream, Model};
use crate::random::Stream;
use crate::result::{
    CallerStats, ClassStats, Phase, RunResult, Series, TierSeries, TierStats, nearest_rank,
};
use crate::scenario::{CancelMode, Dispatch, QueueOrder};
use crate::time::{NANOS_PER_SEC, NEVER, Nanos, nanos_to_secs};
use crate::trace::{TraceStep, Tracer};
use std::collections::{HashMap, VecDeque};

/// Why a run produced no result.
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// The scenario failed validation; every problem is listed.
    Invalid(Vec<crate::ConfigError>),
    /// The run needed more events than its budget (`max_events`).
    EventBudget { max_events: u64, at_s: f64 },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Invalid(errors) => {
                let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
                write!(f, "invalid scenario: {}", lines.join("; "))
            }
            RunError::EventBudget { max_events, at_s } => write!(
                f,
                "event budget exceeded: more than {max_events} events by t = {at_s:.3} s (raise max_events if this load is intended)"
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// With cooperative cancellation (checks every `check` from `start`), the
/// first check that finds the deadline passed, if it comes before the work
/// of length `work` is done.
fn abandon_at(start: Nanos, work: Nanos, deadline: Nanos, check: Nanos) -> Option<Nanos> {
    if check == 0 || deadline == NEVER {
        return None;
    }
    let checks = deadline.saturating_sub(start).div_ceil(check).max(1);
    let at = start.saturating_add(checks.saturating_mul(check));
    (at < start + work).then_some(at)
}

/// The instant by which a hop's attempts must end: its deadline less the
/// safety margin (no deadline, no limit).
fn limit(deadline: Nanos, margin: Nanos) -> Nanos {
    if deadline == NEVER {
        NEVER
    } else {
        deadline.saturating_sub(margin)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct JobRef {
    idx: u32,
    generation: u32,
}

const NO_JOB: JobRef = JobRef {
    idx: u32::MAX,
    generation: 0,
};

/// The level of a fan-out branch job.
const BRANCH: u8 = u8::MAX;
/// The edge of a job that calls nobody (a leaf, or a fan-out parent, whose
/// branches call).
const NO_EDGE: u16 = u16::MAX;

#[derive(Clone, Copy)]
struct Job {
    generation: u32,
    live: bool,
    level: u8,
    /// The edge it calls through (`NO_EDGE`: none).
    edge: u16,
    user: u32,
    /// The job whose attempt created this one, and that attempt's number.
    caller: JobRef,
    caller_attempt: u32,
    /// Propagated deadline; `NEVER` when none was received.
    deadline: Nanos,
    arrived: Nanos,
    /// When it took a slot; `NEVER` while queued.
    started: Nanos,
    /// Attempts made so far as a caller.
    attempts: u32,
    /// The latest attempt has not ended yet.
    waiting: bool,
    /// Its own work was abandoned (cooperative cancellation).
    abandoned: bool,
    /// When the latest attempt was sent (for slow-call detection).
    attempt_started: Nanos,
    /// When the latest attempt ends (what it propagates).
    attempt_end: Nanos,
    /// Its caller cancelled it (the other hedged copy answered first):
    /// dropped when it would start.
    cancelled: bool,
}

impl Job {
    /// User request `user`, arriving at the client at `now`; it calls the
    /// first tier through edge 0 and has no deadline of its own.
    fn user(user: u32, now: Nanos) -> Job {
        Job {
            level: 0,
            edge: 0,
            arrived: now,
            started: now,
            ..Job::request(0, 0, NO_JOB, 0, NEVER, user)
        }
    }

    /// A request for server `s` from attempt `caller_attempt` of `caller`,
    /// just sent: it has not arrived yet.
    fn request(
        s: usize,
        edge: u16,
        caller: JobRef,
        caller_attempt: u32,
        deadline: Nanos,
        user: u32,
    ) -> Job {
        Job {
            generation: 0,
            live: true,
            level: s as u8 + 1,
            edge,
            user,
            caller,
            caller_attempt,
            deadline,
            arrived: NEVER,
            started: NEVER,
            attempts: 0,
            waiting: false,
            abandoned: false,
            attempt_started: NEVER,
            attempt_end: NEVER,
            cancelled: false,
        }
    }
}

/// Jobs in a slab whose slots are reused; a reference carries the slot's
/// generation so that a stale one (a timer of a finished job) is detected.
#[derive(Default)]
struct Jobs {
    slots: Vec<Job>,
    free: Vec<u32>,
}

impl Jobs {
    fn alloc(&mut self, mut job: Job) -> JobRef {
        job.live = true;
        if let Some(idx) = self.free.pop() {
            job.generation = self.slots[idx as usize].generation.wrapping_add(1);
            self.slots[idx as usize] = job;
            JobRef {
                idx,
                generation: job.generation,
            }
        } else {
            job.generation = 0;
            self.slots.push(job);
            JobRef {
                idx: self.slots.len() as u32 - 1,
                generation: 0,
            }
        }
    }

    fn get(&self, r: JobRef) -> Option<&Job> {
        self.slots
            .get(r.idx as usize)
            .filter(|j| j.live && j.generation == r.generation)
    }

    fn get_mut(&mut self, r: JobRef) -> &mut Job {
        let j = &mut self.slots[r.idx as usize];
        debug_assert!(j.live && j.generation == r.generation);
        j
    }

    fn release(&mut self, r: JobRef) {
        self.slots[r.idx as usize].live = false;
        self.free.push(r.idx);
    }

    fn live(&self) -> impl Iterator<Item = &Job> {
        self.slots.iter().filter(|j| j.live)
    }
}

#[derive(Clone, Copy, Debug)]
enum Action {
    /// The next user request arrives at the client.
    UserArrival,
    /// Attempt `1` of job `0` reaches its end.
    AttemptTimeout(JobRef, u32),
    /// The backoff before a retry is over.
    Retry(JobRef),
    /// Attempt `1` of job `0` has had no answer for the hedging delay.
    Hedge(JobRef, u32),
    /// A server job's own work is done.
    WorkDone(JobRef),
    /// A server job's own work is abandoned: its deadline passed (cooperative cancellation).
    WorkAbandoned(JobRef),
    /// A request that crossed a network hop reaches its server.
    Arrive(JobRef),
    /// A reply (or a fast rejection) reaches the caller's attempt.
    Reply(JobRef, u32, Outcome),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    Timeout,
    Rejected,
    Expired,
    Error,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Timeout => "timeout",
            Outcome::Rejected => "rejected",
            Outcome::Expired => "expired",
            Outcome::Error => "error",
        }
    }
}

/// A tier's queue: one queue per request class in priority order, each in
/// arrival order; a freed slot serves the highest class it may.
struct ClassQueue {
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

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// No request of class `class` or above is waiting.
    fn none_at_or_above(&self, class: usize) -> bool {
        self.classes[..=class].iter().all(VecDeque::is_empty)
    }

    fn push(&mut self, job: JobRef, class: usize) {
        self.classes[class].push_back(job);
        self.len += 1;
    }

    /// The next request to serve: from the highest class that `allowed`
    /// lets in (its bulkhead has room). `newest_first` for LIFO.
    fn pop(&mut self, newest_first: bool, allowed: impl Fn(usize) -> bool) -> Option<JobRef> {
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
}

struct Server {
    busy: u32,
    /// Requests in service per class (for the class bulkheads).
    busy_by_class: Vec<u32>,
    queue: ClassQueue,
    /// Set while `fill_slots` runs, so that a nested completion does not
    /// start a second refill.
    filling: bool,
    rng: Stream,
    latency_rng: Stream,
    codel: Option<crate::policy::CoDel>,
    rate_limit: Option<crate::policy::TokenBucket>,
    /// The adaptive concurrency limit, when the tier has one.
    limit: Option<crate::policy::ConcurrencyLimit>,
    stats: TierStats,
    series: TierSeries,
    busy_ns: u128,
    /// Total time requests spent queued before they started.
    wait_ns: u128,
    /// Integral of the queue length over time, up to `queue_since`.
    queue_area_ns: u128,
    queue_since: Nanos,
    /// Arrivals here per user request (R1).
    per_user: Vec<u32>,
}

impl Server {
    /// Requests that may be in service now: the slots, or fewer under an
    /// adaptive limit.
    fn capacity(&self, slots: u32) -> u32 {
        self.limit.as_ref().map_or(slots, |l| l.limit().min(slots))
    }

    /// Adds the queue's length times the time since the last change.
    fn account_queue(&mut self, now: Nanos) {
        self.queue_area_ns += self.queue.len() as u128 * (now - self.queue_since) as u128;
        self.queue_since = now;
    }
}

struct Caller {
    throttle: Option<crate::policy::RetryThrottle>,
    retry_budget: Option<crate::policy::RetryBudget>,
    adaptive: Option<crate::policy::AdaptiveThrottle>,
    breaker: Option<crate::policy::CircuitBreaker>,
    /// Jitter of the breaker's open times.
    breaker_rng: Stream,
    /// Attempts in flight (for the bulkhead).
    in_flight: u32,
    /// Latencies of the latest successful attempts, oldest first, and the
    /// hedging delay they give (0 until there are enough).
    recent: VecDeque<Nanos>,
    hedge_after: Nanos,
    /// Scratch space to sort `recent` in, reused.
    sorted: Vec<Nanos>,
    /// Draws of local rejections (adaptive throttling).
    adaptive_rng: Stream,
    rng: Stream,
    stats: CallerStats,
}

/// A fan-out in progress: its branch jobs, how many are still running,
/// whether an optional one failed or a required one, and whether the
/// branches are still being started (the parent settles only after).
struct FanOut {
    branches: Vec<JobRef>,
    left: usize,
    degraded: bool,
    failed: bool,
    starting: bool,
}

/// Successful attempt latencies a caller keeps for quantile hedging, and
/// how many it needs before the quantile replaces the fixed delay.
const HEDGE_SAMPLES: usize = 100;
const HEDGE_MIN_SAMPLES: usize = 20;

impl Caller {
    /// Records a successful attempt's latency and updates the hedging
    /// delay to the `quantile` of the recent ones (nearest rank).
    fn learn_latency(&mut self, latency: Nanos, quantile: f64) {
        if self.recent.len() == HEDGE_SAMPLES {
            self.recent.pop_front();
        }
        self.recent.push_back(latency);
        if self.recent.len() >= HEDGE_MIN_SAMPLES {
            self.sorted.clear();
            self.sorted.extend(&self.recent);
            self.hedge_after = nearest_rank(&mut self.sorted, quantile).unwrap_or(0).max(1);
        }
    }
}

struct Sim<'m> {
    m: &'m Model,
    now: Nanos,
    events: EventQueue<Action>,
    processed: u64,
    jobs: Jobs,
    servers: Vec<Server>,
    callers: Vec<Caller>,
    arrivals: Stream,
    users: u64,
    users_ok: u64,
    users_failed: u64,
    phases: [Phase; 3],
    /// Per user: has its request ended (success or failure)?
    user_ended: Vec<bool>,
    /// Per user: its request class.
    user_class: Vec<u8>,
    classes: Stream,
    /// Per class: users, and how many succeeded.
    class_users: Vec<u64>,
    class_ok: Vec<u64>,
    ok_latencies: Vec<Nanos>,
    failed_latencies: Vec<Nanos>,
    series: Series,
    next_sample: usize,
    /// Steps of the traced user request, when one is traced.
    tracer: Option<Tracer>,
    /// Each fan-out in progress, by the parent's slot. Kept apart from
    /// `Job`, as are hedge copies, so that jobs stay small.
    fanouts: HashMap<u32, FanOut>,
    /// For callers that cancel: the requests of a caller's latest attempt (the
    /// first copy and the hedge), by the caller's slot; stale references
    /// once they are done.
    copies: HashMap<u32, [JobRef; 2]>,
}

/// Runs the model; with `trace_user`, also the steps taken for that user.
pub fn simulate(
    m: &Model,
    seed: u64,
    trace_user: Option<u32>,
) -> Result<(RunResult, Vec<TraceStep>), RunError> {
    let secs = m.horizon_secs();
    let servers = m
        .servers
        .iter()
        .map(|s| Server {
            busy: 0,
            busy_by_class: vec![0; m.class_names.len()],
            queue: ClassQueue::new(m.class_names.len()),
            filling: false,
            rng: Stream::new(seed, &format!("service.{}", s.name)),
            latency_rng: Stream::new(seed, &format!("latency.{}", s.name)),
            codel: s.codel.clone(),
            rate_limit: s.rate_limit.clone(),
            limit: s.adaptive_limit.clone(),
            stats: TierStats {
                name: s.name.clone(),
                arrival_bound_per_user: s.arrival_bound_per_user,
                ..TierStats::default()
            },
            series: TierSeries {
                name: s.name.clone(),
                arrivals: vec![0; secs],
                admitted: vec![0; secs],
                completed: vec![0; secs],
                late: vec![0; secs],
                queue_len: vec![0; secs],
                busy: vec![0; secs],
            },
            busy_ns: 0,
            wait_ns: 0,
            queue_area_ns: 0,
            queue_since: 0,
            per_user: Vec::new(),
        })
        .collect();
    let callers = m
        .callers
        .iter()
        .map(|c| Caller {
            throttle: c.throttle.clone(),
            retry_budget: c.retry_budget.clone(),
            adaptive: c.adaptive_throttle.clone(),
            adaptive_rng: Stream::new(seed, &format!("throttle.{}", c.name)),
            breaker: c.breaker.clone(),
            breaker_rng: Stream::new(seed, &format!("breaker.{}", c.name)),
            in_flight: 0,
            recent: VecDeque::new(),
            hedge_after: 0,
            sorted: Vec::new(),
            rng: Stream::new(seed, &format!("backoff.{}", c.name)),
            stats: CallerStats {
                name: c.name.clone(),
                ..CallerStats::default()
            },
        })
        .collect();
    let mut sim = Sim {
        m,
        now: 0,
        events: EventQueue::new(),
        processed: 0,
        jobs: Jobs::default(),
        servers,
        callers,
        arrivals: Stream::new(seed, "arrivals"),
        users: 0,
        users_ok: 0,
        users_failed: 0,
        phases: [Phase::default(); 3],
        user_ended: Vec::new(),
        user_class: Vec::new(),
        classes: Stream::new(seed, "classes"),
        class_users: vec![0; m.class_names.len()],
        class_ok: vec![0; m.class_names.len()],
        ok_latencies: Vec::new(),
        failed_latencies: Vec::new(),
        series: Series {
            user_arrivals: vec![0; secs],
            user_ok_by_arrival: vec![0; secs],
            successes: vec![0; secs],
            failures: vec![0; secs],
            tiers: Vec::new(),
        },
        next_sample: 0,
        fanouts: HashMap::new(),
        copies: HashMap::new(),
        tracer: trace_user.map(|user| Tracer {
            user,
            arrived: 0,
            steps: Vec::new(),
        }),
    };
    sim.schedule_next_arrival(0);
    sim.run_until_horizon()?;
    let steps = sim.tracer.take().map_or_else(Vec::new, |t| t.steps);
    Ok((sim.into_result(), steps))
}

impl Sim<'_> {
    fn run_until_horizon(&mut self) -> Result<(), RunError> {
        while let Some(event) = self.events.pop() {
            if event.at >= self.m.horizon {
                break;
            }
            self.sample_until(event.at);
            self.now = event.at;
            self.processed += 1;
            if self.processed > self.m.max_events {
                return Err(RunError::EventBudget {
                    max_events: self.m.max_events,
                    at_s: nanos_to_secs(self.now),
                });
            }
            match event.item {
                Action::UserArrival => self.user_arrives(),
                Action::AttemptTimeout(job, attempt) => {
                    if self.is_waiting(job, attempt) {
                        self.attempt_ended(job, Outcome::Timeout);
                    }
                }
                Action::Retry(job) => {
                    // A fan-out branch in backoff may have been cancelled.
                    if self.jobs.get(job).is_some() {
                        self.start_attempt(job)
                    }
                }
                Action::Hedge(job, attempt) => self.hedge(job, attempt),
                // Work whose caller cancelled it has already stopped.
                Action::WorkDone(job) => {
                    if self.jobs.get(job).is_some() {
                        self.work_done(job)
                    }
                }
                Action::WorkAbandoned(job) => {
                    if self.jobs.get(job).is_some() {
                        self.jobs.get_mut(job).abandoned = true;
                        self.trace(job, "abandoned");
                        self.finish(job, false);
                    }
                }
                Action::Arrive(job) => self.arrive(job),
                Action::Reply(caller, attempt, outcome) => self.reply(caller, attempt, outcome),
            }
        }
        self.now = self.m.horizon;
        self.sample_until(self.m.horizon);
        Ok(())
    }

    fn schedule(&mut self, at: Nanos, action: Action) {
        self.events.push(at, action);
    }

    /// Records a step of `job` if its user is the one traced.
    #[inline(always)]
    fn trace(&mut self, job: JobRef, event: &str) {
        if self.tracer.is_some() {
            self.record_step(job, event);
        }
    }

    /// Out of line: sweeps never trace, and their hot path stays small.
    #[inline(never)]
    fn record_step(&mut self, job: JobRef, event: &str) {
        let Some(tracer) = &mut self.tracer else {
            return;
        };
        let j = &self.jobs.slots[job.idx as usize];
        if j.user != tracer.user {
            return;
        }
        let who = match j.level {
            0 => "client",
            BRANCH => &self.m.callers[j.edge as usize].name,
            l => &self.m.servers[l as usize - 1].name,
        };
        tracer.steps.push(TraceStep {
            at_s: nanos_to_secs(self.now),
            t_s: nanos_to_secs(self.now - tracer.arrived),
            who: who.to_string(),
            attempt: j.attempts,
            event: event.to_string(),
            remaining_s: (j.deadline != NEVER)
                .then(|| (j.deadline as f64 - self.now as f64) / NANOS_PER_SEC as f64),
        });
    }

    /// Poisson arrivals with a piecewise-constant rate (load spikes): an
    /// exponential amount of "base-rate gaps" is spent segment by segment.
    /// At the base rate this is the plain exponential gap.
    fn schedule_next_arrival(&mut self, after: Nanos) {
        let m = self.m;
        let mut budget = self.arrivals.exponential(1.0);
        let mut t = after;
        let segments = &m.arrival_segments;
        let mut i = segments.partition_point(|(start, _)| *start <= t) - 1;
        loop {
            let (_, factor) = segments[i];
            let end = segments.get(i + 1).map_or(m.arrivals_end, |s| s.0);
            let gap = budget * m.mean_gap / factor;
            if (t as f64) + gap < end as f64 || i + 1 == segments.len() {
                let at = t.saturating_add(gap.round() as Nanos);
                if at < m.arrivals_end {
                    self.schedule(at, Action::UserArrival);
                }
                return;
            }
            budget -= (end - t) as f64 * factor / m.mean_gap;
            t = end;
            i += 1;
        }
    }

    fn second(&self) -> usize {
        (self.now / NANOS_PER_SEC) as usize
    }

    fn phase_of(&self, t: Nanos) -> usize {
        let (start, end) = self.m.window;
        if t < start {
            0
        } else if t < end {
            1
        } else {
            2
        }
    }

    /// Records queue lengths and busy slots at every whole second up to `t`.
    fn sample_until(&mut self, t: Nanos) {
        let secs = self.series.user_arrivals.len();
        while self.next_sample < secs && (self.next_sample as Nanos + 1) * NANOS_PER_SEC <= t {
            for s in &mut self.servers {
                s.series.queue_len[self.next_sample] = s.queue.len() as u64;
                s.series.busy[self.next_sample] = s.busy as u64;
            }
            self.next_sample += 1;
        }
    }

    fn user_arrives(&mut self) {
        self.schedule_next_arrival(self.now);
        let user = self.users as u32;
        self.users += 1;
        let sec = self.second();
        self.series.user_arrivals[sec] += 1;
        self.phases[self.phase_of(self.now)].users += 1;
        for s in &mut self.servers {
            s.per_user.push(0);
        }
        self.user_ended.push(false);
        if let Some(t) = &mut self.tracer
            && t.user == user
        {
            t.arrived = self.now;
        }
        // Drawn only when there are classes, so that other runs keep their streams.
        let class = if self.m.class_cumulative.len() > 1 {
            let u = self.classes.uniform();
            self.m
                .class_cumulative
                .iter()
                .position(|c| u < *c)
                .unwrap_or(0)
        } else {
            0
        };
        self.user_class.push(class as u8);
        self.class_users[class] += 1;
        let job = self.jobs.alloc(Job::user(user, self.now));
        self.start_attempt(job);
    }

    fn is_waiting(&self, job: JobRef, attempt: u32) -> bool {
        self.jobs
            .get(job)
            .is_some_and(|j| j.waiting && j.attempts == attempt)
    }

    /// Sends the next attempt of `job` to the server below it.
    fn start_attempt(&mut self, job: JobRef) {
        let j = *self.jobs.get_mut(job);
        let edge = j.edge as usize;
        let m = self.m;
        let call = &m.callers[edge];
        let limit = limit(j.deadline, call.margin);
        let stats = &mut self.callers[edge].stats;
        let refused = if self.now >= j.deadline {
            Some((&mut stats.no_time_left, "stop: no_time_left"))
        } else if self.now >= limit {
            Some((&mut stats.margin_exhausted, "stop: margin_exhausted"))
        } else if call.budget_admission && self.now.saturating_add(call.timeout) > limit {
            Some((
                &mut stats.insufficient_deadline,
                "stop: insufficient_deadline",
            ))
        } else {
            None
        };
        if let Some((counter, why)) = refused {
            *counter += 1;
            self.trace(job, why);
            self.finish(job, false);
            return;
        }
        let now = self.now;
        let caller = &mut self.callers[edge];
        if caller.breaker.as_mut().is_some_and(|b| !b.allow(now)) {
            // Open: a local, fast rejection, counted apart from downstream failures.
            caller.stats.breaker_rejected += 1;
            self.jobs.get_mut(job).attempts += 1;
            self.trace(job, "breaker_open");
            self.retry_or_give_up(job, Outcome::Error);
            return;
        }
        if caller.in_flight >= call.max_in_flight {
            // The bulkhead for this downstream is full: fail fast, locally.
            caller.stats.bulkhead_rejected += 1;
            self.jobs.get_mut(job).attempts += 1;
            self.trace(job, "bulkhead_full");
            self.retry_or_give_up(job, Outcome::Error);
            return;
        }
        if let Some(t) = &mut caller.adaptive {
            // Requests include the ones rejected locally (the SRE book's rule).
            t.record_request(now);
            if caller.adaptive_rng.uniform() < t.reject_probability(now) {
                caller.stats.rejected_locally += 1;
                self.jobs.get_mut(job).attempts += 1;
                self.trace(job, "throttled_locally");
                self.retry_or_give_up(job, Outcome::Error);
                return;
            }
        }
        let mut end = self.now.saturating_add(call.timeout).min(limit);
        if call.budget_share < 1.0 && limit != NEVER {
            let share = ((limit - self.now) as f64 * call.budget_share).round() as Nanos;
            end = end.min(self.now + share);
        }
        let child_deadline = if call.propagate { end } else { NEVER };
        let attempt = j.attempts + 1;
        {
            let jm = self.jobs.get_mut(job);
            jm.attempts = attempt;
            jm.waiting = true;
            jm.attempt_started = self.now;
            jm.attempt_end = end;
        }
        let caller = &mut self.callers[edge];
        caller.stats.calls += 1;
        caller.in_flight += 1;
        if attempt > 1 {
            caller.stats.retries_sent += 1;
        }
        if let Some(b) = &mut caller.retry_budget {
            b.sent(attempt > 1);
        }
        // Scheduled before the request is sent, so that a reply at exactly
        // the attempt's end loses to the timeout: "ok" must come before it.
        self.schedule(end, Action::AttemptTimeout(job, attempt));
        let hedge_delay = match self.callers[edge].hedge_after {
            0 => call.hedge_delay,
            learnt => learnt,
        };
        if hedge_delay > 0 && self.now + hedge_delay < end {
            self.schedule(self.now + hedge_delay, Action::Hedge(job, attempt));
        }
        self.trace(job, "send");
        let track = (call.cancel != CancelMode::Never).then_some(0);
        self.send(call.to, job, attempt, child_deadline, track);
    }

    /// Sends a second copy of an attempt still unanswered, within the
    /// hedging budget. Whichever copy answers first ends the attempt.
    fn hedge(&mut self, job: JobRef, attempt: u32) {
        if !self.is_waiting(job, attempt) {
            return;
        }
        let j = *self.jobs.get_mut(job);
        let edge = j.edge as usize;
        let m = self.m;
        let call = &m.callers[edge];
        let stats = &mut self.callers[edge].stats;
        if (stats.hedges_sent + 1) as f64 > call.hedge_budget * stats.calls as f64 {
            stats.hedges_refused += 1;
            return;
        }
        stats.hedges_sent += 1;
        stats.calls += 1;
        self.trace(job, "hedge");
        let child_deadline = if call.propagate { j.attempt_end } else { NEVER };
        let track = (call.cancel != CancelMode::Never).then_some(1);
        self.send(call.to, job, attempt, child_deadline, track);
    }

    /// A request of an attempt of `caller` leaves for server `s` as a job of
    /// that server, not yet arrived: it arrives now, or after the hop's
    /// latency. `copy` (0, or 1 for a hedge) records it for cancellation.
    #[inline]
    fn send(
        &mut self,
        s: usize,
        caller: JobRef,
        caller_attempt: u32,
        deadline: Nanos,
        copy: Option<usize>,
    ) {
        let edge = match self.m.servers[s].downstream {
            Downstream::Chain(e) => e as u16,
            Downstream::Leaf | Downstream::Fanout(_) => NO_EDGE,
        };
        let user = self.jobs.get_mut(caller).user;
        let job = self.jobs.alloc(Job::request(
            s,
            edge,
            caller,
            caller_attempt,
            deadline,
            user,
        ));
        if let Some(copy) = copy {
            self.copies.entry(caller.idx).or_insert([NO_JOB; 2])[copy] = job;
        }
        let latency = self.hop_latency(s);
        if latency == 0 {
            self.arrive(job);
        } else {
            self.schedule(self.now + latency, Action::Arrive(job));
        }
    }

    /// One draw of the latency of the hop into server `s` (0 without latency).
    fn hop_latency(&mut self, s: usize) -> Nanos {
        let model = &self.m.servers[s].latency;
        if model.is_none() {
            0
        } else {
            model.draw(1.0, &mut self.servers[s].latency_rng)
        }
    }

    /// Server `s` answers an attempt of `caller`: at once, or after the
    /// hop's latency.
    fn answer(&mut self, s: usize, caller: JobRef, attempt: u32, outcome: Outcome) {
        let latency = self.hop_latency(s);
        if latency == 0 {
            self.reply(caller, attempt, outcome);
        } else {
            self.schedule(self.now + latency, Action::Reply(caller, attempt, outcome));
        }
    }

    /// A request reaches its server: start, queue or reject it.
    fn arrive(&mut self, job: JobRef) {
        let j = *self.jobs.get_mut(job);
        let (s, user) = (j.level as usize - 1, j.user);
        let (sec, during) = (self.second(), self.phase_of(self.now) == 1);
        let m = self.m;
        let model = &m.servers[s];
        let reply_first = self.m.dispatch == Dispatch::ReplyFirst;
        let srv = &mut self.servers[s];
        srv.stats.arrivals += 1;
        srv.series.arrivals[sec] += 1;
        srv.stats.arrivals_during += during as u64;
        srv.per_user[user as usize] += 1;
        srv.stats.arrivals_after_user_left += self.user_ended[user as usize] as u64;
        let class = self.user_class[user as usize] as usize;
        // Under FIFO a request never overtakes one of its class or above.
        let can_start = srv.busy < srv.capacity(model.slots)
            && srv.busy_by_class[class] < model.class_slots[class]
            && (reply_first || srv.queue.none_at_or_above(class));
        let now = self.now;
        let shed = model.shed_queue[class].is_some_and(|q| srv.queue.len() >= q);
        let full = !can_start
            && model
                .queue_cap
                .is_some_and(|cap| srv.queue.len() >= cap as usize);
        // Only a request that would be admitted takes a token.
        let limited = !full && !shed && srv.rate_limit.as_mut().is_some_and(|b| !b.try_take(now));
        if limited || full || shed {
            if shed {
                srv.stats.shed += 1;
            } else if limited {
                srv.stats.rate_limited += 1;
            } else {
                srv.stats.rejected_full += 1;
            }
            self.jobs.release(job);
            let at = self.now + model.reject_latency + self.hop_latency(s);
            self.schedule(
                at,
                Action::Reply(j.caller, j.caller_attempt, Outcome::Rejected),
            );
            return;
        }
        srv.stats.admitted += 1;
        srv.series.admitted[sec] += 1;
        self.jobs.get_mut(job).arrived = self.now;
        if can_start && j.cancelled {
            srv.stats.cancelled += 1;
            self.jobs.release(job);
        } else if can_start {
            self.start_job(s, job);
        } else {
            let srv = &mut self.servers[s];
            srv.account_queue(self.now);
            srv.queue.push(job, class);
            srv.stats.max_queue = srv.stats.max_queue.max(srv.queue.len() as u64);
        }
    }

    /// `job` takes a slot at server `s` and starts its own work.
    fn start_job(&mut self, s: usize, job: JobRef) {
        let m = self.m;
        let model = &m.servers[s];
        let srv = &mut self.servers[s];
        srv.busy += 1;
        srv.stats.started += 1;
        let class = self.user_class[self.jobs.get_mut(job).user as usize];
        srv.busy_by_class[class as usize] += 1;
        let j = self.jobs.get_mut(job);
        j.started = self.now;
        srv.wait_ns += (self.now - j.arrived) as u128;
        if model.service.is_none() {
            self.work_done(job);
        } else {
            let work = model
                .service
                .draw(model.slow_factor(self.now), &mut srv.rng);
            let deadline = j.deadline;
            match abandon_at(self.now, work, deadline, model.cancel_check) {
                Some(at) => self.schedule(at, Action::WorkAbandoned(job)),
                None => self.schedule(self.now + work, Action::WorkDone(job)),
            }
        }
    }

    #[inline]
    fn work_done(&mut self, job: JobRef) {
        let s = self.jobs.get_mut(job).level as usize - 1;
        let m = self.m;
        match &m.servers[s].downstream {
            Downstream::Leaf => self.finish(job, true),
            Downstream::Chain(_) => self.start_attempt(job),
            Downstream::Fanout(edges) => self.fan_out(job, edges),
        }
    }

    /// Starts one branch job per edge, all at the same instant: the parent
    /// settles only once all are sent, so the order of the branches does not
    /// matter. Each branch makes its attempts like any caller.
    fn fan_out(&mut self, parent: JobRef, edges: &[usize]) {
        let p = *self.jobs.get_mut(parent);
        let branches: Vec<JobRef> = edges
            .iter()
            .map(|&e| {
                self.jobs.alloc(Job {
                    level: BRANCH,
                    edge: e as u16,
                    caller: parent,
                    caller_attempt: 0,
                    arrived: self.now,
                    started: self.now,
                    attempts: 0,
                    waiting: false,
                    ..p
                })
            })
            .collect();
        self.fanouts.insert(
            parent.idx,
            FanOut {
                branches: branches.clone(),
                left: edges.len(),
                degraded: false,
                failed: false,
                starting: true,
            },
        );
        for b in branches {
            self.start_attempt(b);
        }
        self.fan(parent).starting = false;
        self.settle_fan_out(parent);
    }

    /// A fan-out branch has its final answer. A branch never outlives its
    /// parent: a parent that replies early cancels the rest.
    fn branch_done(&mut self, branch: JobRef, ok: bool) {
        let b = *self.jobs.get_mut(branch);
        self.jobs.release(branch);
        let required = self.m.callers[b.edge as usize].required;
        let fan = self.fan(b.caller);
        fan.left -= 1;
        if !ok {
            if required {
                fan.failed = true;
            } else {
                fan.degraded = true;
            }
        }
        if !fan.starting {
            self.settle_fan_out(b.caller);
        }
    }

    /// The parent replies with an error as soon as a required branch has
    /// failed (the others are cancelled: nobody waits for them any more),
    /// and with success once every branch has ended (degraded if an
    /// optional one failed): its latency is the critical path.
    fn settle_fan_out(&mut self, parent: JobRef) {
        let fan = self.fan(parent);
        if fan.failed {
            self.cancel_branches(parent);
            self.finish(parent, false);
        } else if fan.left == 0 {
            if fan.degraded {
                let s = self.jobs.get_mut(parent).level as usize - 1;
                self.servers[s].stats.degraded += 1;
            }
            self.fanouts.remove(&parent.idx);
            self.finish(parent, true);
        }
    }

    /// The fan-out in progress of `parent`.
    fn fan(&mut self, parent: JobRef) -> &mut FanOut {
        self.fanouts
            .get_mut(&parent.idx)
            .expect("a branch never outlives its parent's fan-out")
    }

    /// The caller stops waiting for the branches still running: their
    /// attempts end as cancelled, and the work they started downstream goes
    /// on for nobody (counted late there).
    fn cancel_branches(&mut self, parent: JobRef) {
        let branches = self.fanouts.remove(&parent.idx).map(|f| f.branches);
        for b in branches.unwrap_or_default() {
            if self.jobs.get(b).is_none() {
                continue;
            }
            self.stop_waiting(b);
            self.trace(b, "cancelled");
            self.jobs.release(b);
        }
    }

    /// `job`, cancelled, stops waiting for its attempt in flight, if any:
    /// the attempt ends as cancelled, and its requests are cancelled in turn
    /// if its caller cancels always (else they go on for nobody).
    fn stop_waiting(&mut self, job: JobRef) {
        let j = self.jobs.get_mut(job);
        if !j.waiting {
            return;
        }
        j.waiting = false;
        let edge = j.edge as usize;
        let caller = &mut self.callers[edge];
        caller.in_flight -= 1;
        caller.stats.calls_cancelled += 1;
        if self.m.callers[edge].cancel == CancelMode::Always {
            self.cancel_copies(job);
        }
    }

    /// The attempt of `caller` numbered `attempt` gets `outcome`, unless that
    /// attempt has already ended (then the reply is ignored).
    fn reply(&mut self, caller: JobRef, attempt: u32, outcome: Outcome) {
        if self.is_waiting(caller, attempt) {
            self.attempt_ended(caller, outcome);
        }
    }

    fn attempt_ended(&mut self, job: JobRef, outcome: Outcome) {
        let (edge, retry, sent_at) = {
            let j = self.jobs.get_mut(job);
            j.waiting = false;
            (j.edge as usize, j.attempts > 1, j.attempt_started)
        };
        let now = self.now;
        let call = &self.m.callers[edge];
        let cancels = match call.cancel {
            CancelMode::Never => false,
            CancelMode::HedgeLosers => outcome != Outcome::Timeout,
            CancelMode::Always => true,
        };
        if cancels {
            self.cancel_copies(job);
        }
        let caller = &mut self.callers[edge];
        caller.in_flight -= 1;
        if call.hedge_quantile > 0.0 && outcome == Outcome::Ok {
            caller.learn_latency(now - sent_at, call.hedge_quantile);
        }
        if let Some(b) = &mut caller.breaker {
            let jitter = caller.breaker_rng.uniform();
            b.record(now, outcome != Outcome::Ok, now - sent_at, jitter);
        }
        if let Some(b) = &mut caller.retry_budget {
            b.ended(retry);
        }
        if let Some(t) = &mut caller.adaptive
            && matches!(outcome, Outcome::Ok | Outcome::Error)
        {
            t.record_accept(self.now);
        }
        let stats = &mut caller.stats;
        match outcome {
            Outcome::Ok => stats.calls_ok += 1,
            Outcome::Timeout => stats.calls_timeout += 1,
            Outcome::Rejected => stats.calls_rejected += 1,
            Outcome::Expired => stats.calls_expired += 1,
            Outcome::Error => stats.calls_error += 1,
        }
        if let Some(t) = &mut caller.throttle {
            if outcome == Outcome::Ok {
                t.on_success();
            } else {
                t.on_failure();
            }
        }
        self.trace(job, outcome.name());
        if outcome == Outcome::Ok {
            self.finish(job, true);
        } else {
            self.retry_or_give_up(job, outcome);
        }
    }

    /// The attempt of `job` has its answer: the copy that did not answer is
    /// cancelled.
    fn cancel_copies(&mut self, job: JobRef) {
        let j = *self.jobs.get_mut(job);
        let copies = self.copies.get(&job.idx).copied().unwrap_or([NO_JOB; 2]);
        for copy in copies {
            let Some(c) = self.jobs.get(copy).copied() else {
                continue;
            };
            if c.caller != job || c.caller_attempt != j.attempts {
                continue; // a request of an earlier attempt, or a reused slot
            }
            if c.started == NEVER {
                // In transit or queued: dropped when it would start.
                self.jobs.get_mut(copy).cancelled = true;
                continue;
            }
            // In service: stop now; the caller no longer listens.
            self.stop_waiting(copy);
            self.cancel_branches(copy);
            self.jobs.get_mut(copy).abandoned = true;
            self.trace(copy, "cancelled");
            self.finish(copy, false);
        }
    }

    /// MODEL.md 2's retry decision, in its order (the throttle has already
    /// recorded the failure).
    fn retry_or_give_up(&mut self, job: JobRef, outcome: Outcome) {
        let j = *self.jobs.get_mut(job);
        let edge = j.edge as usize;
        let m = self.m;
        let call = &m.callers[edge];
        let caller = &mut self.callers[edge];
        let why = if j.attempts >= call.max_attempts {
            caller.stats.giveup_limit += 1;
            "stop: attempt_limit"
        } else if self.now >= j.deadline {
            caller.stats.giveup_deadline += 1;
            "stop: deadline"
        } else if caller.throttle.as_ref().is_some_and(|t| !t.retry_allowed()) {
            caller.stats.retries_throttled += 1;
            "stop: retry_throttled"
        } else if caller
            .retry_budget
            .as_ref()
            .is_some_and(|b| !b.retry_allowed())
        {
            caller.stats.retry_budget_exhausted += 1;
            "stop: retry_budget"
        } else {
            let mut delay = call.backoff.delay(j.attempts, &mut caller.rng);
            if call.honor_retry_after && outcome == Outcome::Rejected {
                // The rejection came from the server this caller calls.
                delay = delay.max(m.servers[call.to].retry_after);
            }
            let next = self.now + delay;
            if call.budget_admission
                && next.saturating_add(call.timeout) > limit(j.deadline, call.margin)
            {
                caller.stats.insufficient_deadline += 1;
                "stop: insufficient_deadline"
            } else {
                self.schedule(next, Action::Retry(job));
                self.trace(job, "backoff");
                return;
            }
        };
        self.trace(job, why);
        self.finish(job, false);
    }

    /// `job` has its final answer: a user is done, or a server replies.
    fn finish(&mut self, job: JobRef, ok: bool) {
        let level = self.jobs.get_mut(job).level;
        if self.tracer.is_some() {
            let event = match (level, ok) {
                (0, true) => "user ok",
                (0, false) => "user failed",
                (BRANCH, true) => "branch ok",
                (BRANCH, false) => "branch failed",
                (_, true) => "reply ok",
                (_, false) => "reply error",
            };
            self.trace(job, event);
        }
        match level {
            0 => self.user_done(job, ok),
            BRANCH => self.branch_done(job, ok),
            _ => self.server_replies(job, ok),
        }
    }

    fn user_done(&mut self, job: JobRef, ok: bool) {
        let j = *self.jobs.get_mut(job);
        self.jobs.release(job);
        self.user_ended[j.user as usize] = true;
        let latency = self.now - j.arrived;
        let (arrival_sec, sec) = ((j.arrived / NANOS_PER_SEC) as usize, self.second());
        if ok {
            self.users_ok += 1;
            self.class_ok[self.user_class[j.user as usize] as usize] += 1;
            self.phases[self.phase_of(j.arrived)].ok += 1;
            self.series.user_ok_by_arrival[arrival_sec] += 1;
            self.series.successes[sec] += 1;
            self.ok_latencies.push(latency);
        } else {
            self.users_failed += 1;
            self.series.failures[sec] += 1;
            self.failed_latencies.push(latency);
        }
    }

    /// A server job releases its slot and replies to its caller. The order of
    /// the two is the dispatch discipline; the leaf always refills first.
    fn server_replies(&mut self, job: JobRef, ok: bool) {
        let j = *self.jobs.get_mut(job);
        self.jobs.release(job);
        let s = j.level as usize - 1;
        let sec = self.second();
        let late = !self.is_waiting(j.caller, j.caller_attempt);
        let srv = &mut self.servers[s];
        srv.busy -= 1;
        srv.busy_by_class[self.user_class[j.user as usize] as usize] -= 1;
        srv.busy_ns += (self.now - j.started) as u128;
        if let Some(l) = &mut srv.limit {
            l.record(self.now, self.now - j.arrived, ok, srv.busy + 1);
        }
        if j.abandoned {
            // Not a completion: the work stopped before its end.
            srv.stats.abandoned += 1;
        } else {
            srv.stats.completed += 1;
            srv.stats.completed_ok += ok as u64;
            srv.series.completed[sec] += 1;
            if late {
                srv.stats.late += 1;
                srv.series.late[sec] += 1;
            }
        }
        let outcome = if ok { Outcome::Ok } else { Outcome::Error };
        let leaf = self.m.servers[s].downstream == Downstream::Leaf;
        if self.m.dispatch == Dispatch::Fifo || leaf {
            self.fill_slots(s);
            self.answer(s, j.caller, j.caller_attempt, outcome);
        } else {
            self.answer(s, j.caller, j.caller_attempt, outcome);
            self.fill_slots(s);
        }
    }

    /// Pops the queue of server `s` while it has free slots; with
    /// drop-expired on, answers expired requests with an error instead.
    fn fill_slots(&mut self, s: usize) {
        if self.servers[s].filling {
            return;
        }
        self.servers[s].filling = true;
        let m = self.m;
        let model = &m.servers[s];
        while self.servers[s].busy < self.servers[s].capacity(model.slots) {
            self.servers[s].account_queue(self.now);
            let srv = &mut self.servers[s];
            let newest_first = match model.queue_order {
                QueueOrder::Fifo => false,
                QueueOrder::Lifo => true,
                QueueOrder::AdaptiveLifo => srv.queue.len() > model.lifo_threshold,
            };
            let busy = &srv.busy_by_class;
            let popped = srv
                .queue
                .pop(newest_first, |c| busy[c] < model.class_slots[c]);
            let Some(job) = popped else {
                break;
            };
            let j = *self.jobs.get_mut(job);
            let now = self.now;
            let srv = &mut self.servers[s];
            let queue_empty = srv.queue.is_empty();
            if j.cancelled {
                // Nobody waits for it: no reply.
                self.jobs.release(job);
                self.servers[s].stats.cancelled += 1;
            } else if model.drop_expired && now >= j.deadline {
                self.jobs.release(job);
                self.servers[s].stats.dropped_expired += 1;
                self.answer(s, j.caller, j.caller_attempt, Outcome::Expired);
            } else if srv
                .codel
                .as_mut()
                .is_some_and(|c| c.should_drop(now, now - j.arrived, queue_empty))
            {
                self.jobs.release(job);
                self.servers[s].stats.codel_dropped += 1;
                self.answer(s, j.caller, j.caller_attempt, Outcome::Rejected);
            } else {
                self.start_job(s, job);
            }
        }
        self.servers[s].filling = false;
    }

    fn into_result(mut self) -> RunResult {
        // Users still in flight failed; requests still in service held their
        // slot until the horizon.
        let mut unfinished = 0;
        for j in self.jobs.live() {
            if j.level == 0 {
                unfinished += 1;
            } else if j.level == BRANCH {
                // Its parent holds the slot.
            } else if j.arrived == NEVER {
                self.servers[j.level as usize - 1].stats.in_transit_at_end += 1;
            } else if j.started != NEVER {
                self.servers[j.level as usize - 1].busy_ns += (self.now - j.started) as u128;
            }
            if j.waiting {
                self.callers[j.edge as usize].stats.calls_pending += 1;
            }
        }
        let recovery_s = self.recovery_s();
        let tiers = self
            .servers
            .iter_mut()
            .map(|s| {
                s.account_queue(self.now);
                let mut t = std::mem::take(&mut s.stats);
                t.wait_s = s.wait_ns as f64 / NANOS_PER_SEC as f64;
                t.queue_s = s.queue_area_ns as f64 / NANOS_PER_SEC as f64;
                t.queued_at_end = s.queue.len() as u64;
                t.busy_at_end = s.busy as u64;
                t.busy_s = s.busy_ns as f64 / NANOS_PER_SEC as f64;
                t.max_arrivals_per_user = s.per_user.iter().copied().max().unwrap_or(0) as u64;
                if let Some(l) = &s.limit {
                    t.limit_lowest = l.lowest() as u64;
                    t.limit_at_end = l.limit() as u64;
                }
                self.series.tiers.push(std::mem::take(&mut s.series));
                t
            })
            .collect();
        let secs = |n: Option<Nanos>| n.map(nanos_to_secs);
        RunResult {
            events: self.processed,
            users: self.users,
            users_ok: self.users_ok,
            users_failed: self.users_failed + unfinished,
            users_unfinished: unfinished,
            classes: self
                .m
                .class_names
                .iter()
                .zip(self.class_users.iter().zip(&self.class_ok))
                .filter(|(name, _)| !name.is_empty())
                .map(|(name, (users, ok))| ClassStats {
                    name: name.clone(),
                    users: *users,
                    users_ok: *ok,
                })
                .collect(),
            phases: self.phases,
            window_start_s: nanos_to_secs(self.m.window.0),
            window_end_s: nanos_to_secs(self.m.window.1),
            horizon_s: nanos_to_secs(self.m.horizon),
            recovery_s,
            recovery_censor_s: self.recovery_censor_s(),
            success_latency_median_s: secs(nearest_rank(&mut self.ok_latencies, 0.5)),
            success_latency_p99_s: secs(nearest_rank(&mut self.ok_latencies, 0.99)),
            failed_latency_median_s: secs(nearest_rank(&mut self.failed_latencies, 0.5)),
            tiers,
            callers: self.callers.into_iter().map(|c| c.stats).collect(),
            series: self.series,
        }
    }

    /// One second past the last recovery time [`Sim::recovery_s`] can find.
    fn recovery_censor_s(&self) -> f64 {
        let width = self.m.recovery_window.div_ceil(NANOS_PER_SEC).max(1) * NANOS_PER_SEC;
        let last_start = self.m.arrivals_end.saturating_sub(width) / NANOS_PER_SEC * NANOS_PER_SEC;
        (nanos_to_secs(last_start) - nanos_to_secs(self.m.window.1)).max(-1.0) + 1.0
    }

    /// R2: the first whole second `t >= window end` whose arrivals in
    /// `[t, t + window)` succeed at the threshold, with `t + window` no later
    /// than the end of arrivals.
    fn recovery_s(&self) -> Option<f64> {
        let end = self.m.window.1;
        let first = end.div_ceil(NANOS_PER_SEC);
        let width = self.m.recovery_window.div_ceil(NANOS_PER_SEC).max(1);
        let s = &self.series;
        (first..)
            .take_while(|t| (t + width) * NANOS_PER_SEC <= self.m.arrivals_end)
            .find(|&t| {
                let range = t as usize..(t + width) as usize;
                let users: u64 = s.user_arrivals[range.clone()].iter().sum();
                let ok: u64 = s.user_ok_by_arrival[range].iter().sum();
                users > 0 && ok as f64 >= self.m.recovery_threshold * users as f64
            })
            .map(|t| nanos_to_secs(t * NANOS_PER_SEC - end))
    }
}
