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
//! A job is a user request at the client, a request being handled by a
//! server, or one branch of a fan-out, owned by the server job that made it
//! ([`JobKind`]). A job that calls does so through its edge:
//! `callers[job.edge]`, whose hooks (`admit`, `on_sent`, `on_ended`,
//! `retry_decision`) hold the caller-side policies; a server's hooks
//! (`admit`, `next_to_start`) hold the server-side ones. The engine decides
//! when each hook runs, and what follows from its answer.

use crate::backlog::{Backlog, Take};
use crate::cache::FROM_CACHE;
use crate::caller::{Caller, NO_REPLICA, Outcome, RetryDecision, attempt_end, cancels_copies};
use crate::event_queue::EventQueue;
use crate::job::{BySlot, Job, JobKind, JobRef, Jobs, NO_EDGE, NO_JOB, NO_TICKET, Origin, Pending};
use crate::model::{CallModel, Downstream, GroupModel, Model, RateProfile};
use crate::policy::RateLimiter;
use crate::random::Stream;
use crate::result::{
    Bins, CallerStats, ClassStats, ClosedStats, GroupSeries, GroupStats, LatencyHistogram, Phase,
    RunResult, Series, TenantStats, TierSeries, TierStats, nearest_rank,
};
use crate::scenario::{CancelMode, Dispatch};
use crate::server::{Admission, Dropped, Has, Server, abandon_at};
use crate::time::{NANOS_PER_SEC, NEVER, Nanos, nanos_to_secs, round_nanos, times};
use crate::trace::{Step, TraceStep, Tracer};

/// Why a run produced no result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RunError {
    /// The scenario failed validation; every problem is listed.
    #[error("invalid scenario: {}", join(.0))]
    Invalid(Vec<crate::ConfigError>),
    /// The run needed more events than its budget (`max_events`).
    #[error(
        "event budget exceeded: more than {max_events} events by t = {at_s:.3} s (raise max_events if this load is intended)"
    )]
    EventBudget { max_events: u64, at_s: f64 },
}

fn join(errors: &[crate::ConfigError]) -> String {
    let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    lines.join("; ")
}

#[derive(Clone, Copy, Debug)]
enum Action {
    /// The next user request of client group `0` arrives.
    UserArrival(u16),
    /// Closed-loop user `1` of client group `0` has thought and sends its
    /// next request.
    LoopUserSends(u16, u32),
    /// Attempt `1` of job `0` reaches its end.
    AttemptTimeout(JobRef, u32),
    /// The backoff before a retry of job `0`, a caller through edge `1`,
    /// is over.
    Retry(JobRef, u16),
    /// Attempt `1` of job `0` has had no answer for the hedging delay.
    Hedge(JobRef, u32),
    /// A server job's own work is done.
    WorkDone(JobRef),
    /// A server job's own work is abandoned: its deadline passed (cooperative cancellation).
    WorkAbandoned(JobRef),
    /// A server job that failed fast (an error window) answers its error.
    WorkFailed(JobRef),
    /// A request that crossed a network hop reaches its server.
    Arrive(JobRef),
    /// A reply (or a fast rejection) from replica `3` reaches the caller's
    /// attempt.
    Reply(JobRef, u32, Outcome, u8),
    /// Server instance `0` goes down in its crash window `1`.
    Crash(u16, u16),
    /// Server instance `0` restarts, empty.
    Restart(u16),
    /// Request `0` has waited its turn in its server's leaky bucket.
    LeftBucket(JobRef),
    /// Server instance `0`'s GC tick: a pause begins unless one runs.
    GcTick(u16),
    /// A server job's own work at a tier with GC pauses reaches its end
    /// as scheduled when the pauses begun numbered `1`: done, or later by
    /// the pauses begun since.
    PausedWorkDone(JobRef, u32),
    /// Client group `0`'s queue: the drain rate lets a delivery start, or
    /// a consumer has become free.
    Deliver(u16),
    /// Client group `0`'s queue: a message put back after a failed
    /// delivery is due again.
    DueAgain(u16),
}

/// A fan-out in progress: its branch jobs, how many are still running,
/// whether an optional one failed or a required one, and whether the
/// branches are still being started (the parent settles only after).
#[derive(Clone)]
struct FanOut {
    branches: Vec<JobRef>,
    left: usize,
    degraded: bool,
    failed: bool,
    starting: bool,
}

struct Sim<'m> {
    m: &'m Model,
    now: Nanos,
    events: EventQueue<Action>,
    processed: u64,
    /// Attempt timers cancelled before they were due (their attempt was
    /// answered): never popped, counted in `events` as if they had been.
    cancelled: u64,
    jobs: Jobs,
    servers: Vec<Server>,
    callers: Vec<Caller>,
    /// Per client group, in `Model::groups` order.
    groups: Vec<Source>,
    /// Per user request: the closed-loop user who sent it (only when a
    /// group has closed-loop users).
    sender: Vec<u32>,
    /// Users so far, and the next user's number; the run's other user
    /// counts are the groups' summed at the end.
    users: u64,
    /// Per user: has its request ended (success or failure)?
    user_ended: Vec<bool>,
    /// Per user: its request class.
    user_class: Vec<u8>,
    /// Per user, then per tier: the user's requests that reached the tier
    /// (`tiers` entries a user), kept from run to run like the vectors
    /// above (a vector per tier, allocated anew each run, cost more).
    tier_arrivals: Vec<u32>,
    /// Per user: its tenant key (only when some group has tenants); per
    /// key: users, and how many succeeded.
    user_tenant: Vec<u32>,
    tenant_users: Vec<u64>,
    tenant_ok: Vec<u64>,
    ok_latencies: Vec<Nanos>,
    failed_latencies: Vec<Nanos>,
    series: Series,
    /// The next second to sample, and when it is due (`NEVER` after the
    /// last): one comparison per event.
    next_sample: usize,
    next_sample_at: Nanos,
    /// Steps of the traced user request, when one is traced.
    tracer: Option<Tracer>,
    /// Each fan-out in progress, by the parent's slot. Kept apart from
    /// `Job`, as are hedge copies, so that jobs stay small.
    fanouts: BySlot<Option<FanOut>>,
    /// For callers that cancel: the requests of a caller's latest attempt (the
    /// first copy and the hedge), by the caller's slot; stale references
    /// once they are done.
    copies: BySlot<[JobRef; 2]>,
    /// The event-queue lane of each caller's attempt timeouts and of each
    /// server's rejections: one lane per fixed delay ([`timer_lanes`]).
    timeout_lane: Vec<usize>,
    reject_lane: Vec<usize>,
    /// Per tier, the token bucket its replicas share, if any.
    tier_rate_limits: Vec<Option<RateLimiter>>,
    /// Some tier has a look-aside cache: decided once, so that `send`
    /// reads no tier's model for it in runs without one.
    caches: bool,
    /// Per client group, its message queue, if any.
    backlogs: Vec<Option<Backlog>>,
    /// Some group has a message queue: decided once, so that arrivals and
    /// ended users look for none in runs without one.
    queues: bool,
}

/// The users of one client group: its draws and its counts.
struct Source {
    arrivals: Stream,
    /// Thinning draws of a time-varying arrival rate: a stream of their own,
    /// so that runs without a profile keep their arrivals' draws.
    profile_draws: Stream,
    classes: Stream,
    /// Tenant-key draws, in a group with tenants: a stream of their own,
    /// so that runs without tenants keep every other draw.
    tenants: Option<Stream>,
    /// Closed-loop users, when the group has them.
    closed: Option<ClosedLoop>,
    users: u64,
    ok: u64,
    failed: u64,
    phases: [Phase; 3],
    /// Per request class (of the model's): its users, and how many
    /// succeeded. The run's per-class counts are their sums.
    class_users: Vec<u64>,
    class_ok: Vec<u64>,
    /// Its successful and its failed users' latencies, kept only with
    /// several groups (the totals' are the one group's otherwise).
    ok_latencies: Vec<Nanos>,
    failed_latencies: Vec<Nanos>,
    /// Its users by second of arrival, and those of them who succeeded.
    arrivals_by_sec: Vec<u64>,
    ok_by_arrival: Vec<u64>,
}

impl Source {
    /// The `client` group draws from the streams it always had; another
    /// group from streams named after it, so that adding a group leaves
    /// the client's users as they were.
    fn new(g: &GroupModel, first: bool, seed: u64, secs: usize, classes: usize) -> Source {
        let name = |stream: &str| {
            if first {
                stream.to_string()
            } else {
                format!("group.{}.{stream}", g.name)
            }
        };
        Source {
            arrivals: Stream::new(seed, &name("arrivals")),
            profile_draws: Stream::new(seed, &name("arrivals.profile")),
            classes: Stream::new(seed, &name("classes")),
            tenants: g
                .tenants
                .draws()
                .then(|| Stream::new(seed, &name("tenants"))),
            closed: g.closed.as_ref().map(|c| ClosedLoop {
                think: Stream::new(seed, &name("think")),
                last_done: vec![0; c.users as usize],
                cycles: 0,
                response_ns: 0,
                think_ns: 0,
            }),
            users: 0,
            ok: 0,
            failed: 0,
            phases: [Phase::default(); 3],
            class_users: vec![0; classes],
            class_ok: vec![0; classes],
            ok_latencies: Vec::new(),
            failed_latencies: Vec::new(),
            arrivals_by_sec: vec![0; secs],
            ok_by_arrival: vec![0; secs],
        }
    }
}

/// The state of closed-loop users.
struct ClosedLoop {
    think: Stream,
    /// Per closed-loop user: when its latest request ended (0 before any).
    last_done: Vec<Nanos>,
    /// Requests that ended, their response times and the think times
    /// before them: each user's cycles tile `[0, last_done]` exactly.
    cycles: u64,
    response_ns: u128,
    think_ns: u128,
}

/// The counts of the named classes among `ids` (indexes into `names` and
/// the counts), in that order: the unnamed class of a group that declares
/// none has no columns.
fn class_stats(
    names: &[String],
    ids: impl Iterator<Item = usize>,
    users: &[u64],
    ok: &[u64],
) -> Vec<ClassStats> {
    ids.filter(|c| !names[*c].is_empty())
        .map(|c| ClassStats {
            name: names[c].clone(),
            users: users[c],
            users_ok: ok[c],
        })
        .collect()
}

/// Attempt timeouts are set a caller's timeout ahead, and rejections
/// answered a server's reject latency ahead: events of the same delay are
/// pushed in time order, and share a lane of the event queue. Returns each
/// caller's lane, each server's, and the number of lanes.
fn timer_lanes(m: &Model) -> (Vec<usize>, Vec<usize>, usize) {
    let mut delays: Vec<Nanos> = Vec::new();
    let mut lane = |delay: Nanos| {
        delays.iter().position(|d| *d == delay).unwrap_or_else(|| {
            delays.push(delay);
            delays.len() - 1
        })
    };
    let timeout: Vec<usize> = m.callers.iter().map(|c| lane(c.timeout)).collect();
    let reject: Vec<usize> = m.servers.iter().map(|s| lane(s.reject_latency)).collect();
    (timeout, reject, delays.len())
}

/// Tenant keys over all groups (a group without tenants has one).
fn tenant_keys(m: &Model) -> usize {
    m.groups.iter().map(|g| g.tenants.count() as usize).sum()
}

/// The memory a run grows (the event queue's ring and lanes, the job
/// slab, the per-user vectors), kept by a worker from one run to the next:
/// a run clears it and fills it again without growing it from empty.
/// Results do not depend on it (a test runs presets in turn with one).
#[derive(Default)]
pub struct Scratch {
    events: Option<EventQueue<Action>>,
    jobs: Jobs,
    sender: Vec<u32>,
    user_ended: Vec<bool>,
    user_class: Vec<u8>,
    tier_arrivals: Vec<u32>,
    ok_latencies: Vec<Nanos>,
    failed_latencies: Vec<Nanos>,
}

/// `v`, emptied, with room for at least `n`.
fn cleared<T>(mut v: Vec<T>, n: usize) -> Vec<T> {
    v.clear();
    v.reserve(n);
    v
}

/// Runs the model in `scratch`'s memory; with `trace_user`, also the
/// steps taken for that user.
pub fn simulate(
    m: &Model,
    seed: u64,
    trace_user: Option<u32>,
    scratch: &mut Scratch,
) -> Result<(RunResult, Vec<TraceStep>), RunError> {
    let secs = m.horizon_secs();
    let classes = m.class_names.len();
    // Per-user vectors are sized up front for the users expected (with a
    // margin), so that they seldom grow during the run.
    let users = (1.1 * m.expected_users) as usize + 16;
    // Only a caller that cancels marks a request cancelled (`cancel_copies`).
    let cancels = (m.callers.iter()).any(|c| c.cancel != CancelMode::Never);
    let servers = m
        .servers
        .iter()
        .map(|s| {
            let mut server = Server::new(s, classes, secs, seed);
            server.has = Has {
                bins: m.series_bin > 0,
                ..Has::of(s, m.tier_rate_limits[s.tier].is_some(), cancels)
            };
            if m.series_bin > 0 {
                server.bins = Some(Bins::new(m.series_bin, m.horizon_secs() * m.bins_per_s));
            }
            server
        })
        .collect();
    let callers = m.callers.iter().map(|c| Caller::new(c, seed)).collect();
    let (timeout_lane, reject_lane, lanes) = timer_lanes(m);
    let events = match scratch.events.take() {
        Some(mut q) => {
            q.reset(lanes, m.horizon);
            q
        }
        None => EventQueue::new(lanes, m.horizon),
    };
    let mut jobs = std::mem::take(&mut scratch.jobs);
    jobs.clear();
    let mut sim = Sim {
        m,
        now: 0,
        events,
        processed: 0,
        cancelled: 0,
        jobs,
        servers,
        callers,
        groups: (m.groups.iter().enumerate())
            .map(|(i, g)| Source::new(g, i == 0, seed, secs, classes))
            .collect(),
        sender: cleared(std::mem::take(&mut scratch.sender), 0),
        users: 0,
        user_ended: cleared(std::mem::take(&mut scratch.user_ended), users),
        user_class: cleared(std::mem::take(&mut scratch.user_class), users),
        tier_arrivals: cleared(
            std::mem::take(&mut scratch.tier_arrivals),
            users * m.tier_instances.len(),
        ),
        user_tenant: Vec::new(),
        tenant_users: vec![0; if m.tenants { tenant_keys(m) } else { 0 }],
        tenant_ok: vec![0; if m.tenants { tenant_keys(m) } else { 0 }],
        ok_latencies: cleared(std::mem::take(&mut scratch.ok_latencies), users),
        failed_latencies: cleared(std::mem::take(&mut scratch.failed_latencies), 0),
        series: Series {
            user_arrivals: Vec::new(),
            user_ok_by_arrival: Vec::new(),
            successes: vec![0; secs],
            failures: vec![0; secs],
            tiers: Vec::new(),
            groups: Vec::new(),
        },
        next_sample: 0,
        next_sample_at: if secs > 0 { NANOS_PER_SEC } else { NEVER },
        fanouts: BySlot::new(None),
        copies: BySlot::new([NO_JOB; 2]),
        timeout_lane,
        reject_lane,
        tier_rate_limits: m.tier_rate_limits.clone(),
        caches: m.servers.iter().any(|s| s.cache.is_some()),
        backlogs: (m.groups.iter())
            .map(|g| g.queue.clone().map(|q| Backlog::new(q, secs)))
            .collect(),
        queues: m.groups.iter().any(|g| g.queue.is_some()),
        tracer: trace_user.map(Tracer::new),
    };
    for (s, server) in m.servers.iter().enumerate() {
        for (k, c) in server.crashes.iter().enumerate() {
            sim.schedule(c.start, Action::Crash(s as u16, k as u16));
            sim.schedule(c.end, Action::Restart(s as u16));
        }
        if let Some(gc) = &server.gc {
            sim.schedule(gc.every, Action::GcTick(s as u16));
        }
    }
    for (g, group) in m.groups.iter().enumerate() {
        match &group.closed {
            None => sim.schedule_next_arrival(g, 0),
            Some(c) => (0..c.users).for_each(|u| sim.think_then_send(g, u)),
        }
    }
    sim.run_until_horizon()?;
    if sim.tracer.is_some() {
        sim.trace_at_horizon();
    }
    let steps = sim.tracer.take().map_or_else(Vec::new, |t| t.steps);
    Ok((sim.into_result(scratch), steps))
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
            if self.processed + self.cancelled > self.m.max_events {
                return Err(RunError::EventBudget {
                    max_events: self.m.max_events,
                    at_s: nanos_to_secs(self.now),
                });
            }
            match event.item {
                Action::UserArrival(g) => {
                    self.schedule_next_arrival(g as usize, self.now);
                    if self.queues && self.backlogs[g as usize].is_some() {
                        self.publish(g as usize);
                    } else {
                        self.user_arrives(g as usize, u32::MAX, false);
                    }
                }
                Action::LoopUserSends(g, u) => self.user_arrives(g as usize, u, false),
                Action::AttemptTimeout(job, attempt) => {
                    if self.is_waiting(job, attempt) {
                        // Popped: nothing to cancel when the attempt ends.
                        self.jobs.get_mut(job).timer = NO_TICKET;
                        self.attempt_ended(job, Outcome::Timeout, NO_REPLICA);
                    }
                }
                Action::Retry(job, edge) => {
                    // A fan-out branch in backoff may have been cancelled
                    // (its retry counts in the budget until now).
                    if self.jobs.get(job).is_some() {
                        self.start_attempt(job)
                    } else {
                        self.callers[edge as usize].retry_unsent();
                    }
                }
                Action::Hedge(job, attempt) => self.hedge(job, attempt),
                // Work whose caller cancelled it has already stopped.
                Action::WorkDone(job) => {
                    if self.jobs.get(job).is_some() {
                        self.work_done(job)
                    }
                }
                // Counted when the error is answered: a completion, not ok.
                Action::WorkFailed(job) => {
                    if let Some(j) = self.jobs.get(job) {
                        self.servers[j.server()].stats.errors_injected += 1;
                        self.finish(job, false);
                    }
                }
                Action::WorkAbandoned(job) => {
                    if self.jobs.get(job).is_some() {
                        self.jobs.get_mut(job).set_abandoned();
                        self.trace(job, Step::Abandoned);
                        self.finish(job, false);
                    }
                }
                Action::Arrive(job) => self.arrive(job),
                Action::Reply(caller, attempt, outcome, by) => {
                    self.reply(caller, attempt, outcome, by)
                }
                Action::Crash(s, k) => self.crash(s as usize, k as usize),
                Action::Restart(s) => self.servers[s as usize].down = None,
                Action::GcTick(s) => self.gc_tick(s as usize),
                Action::LeftBucket(job) => self.out_of_bucket(job),
                Action::PausedWorkDone(job, mark) => self.paused_work_done(job, mark),
                Action::Deliver(g) => self.wake_consumers(g as usize),
                Action::DueAgain(g) => self.due_again(g as usize),
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
    fn trace(&mut self, job: JobRef, step: Step) {
        if self.tracer.is_some() {
            self.record_step(job, step);
        }
    }

    /// The traced user's requests still on their way to a tier or at it
    /// when the run ends, in the order of their records.
    fn trace_at_horizon(&mut self) {
        let user = self.tracer.as_ref().map_or(u32::MAX, |t| t.user);
        let pending: Vec<(JobRef, Pending)> = (self.jobs.slots.iter().enumerate())
            .filter(|(_, j)| {
                j.live() && j.user == user && matches!(j.kind, JobKind::Request { .. })
            })
            .map(|(idx, j)| {
                let job = JobRef {
                    idx: idx as u32,
                    generation: j.generation,
                };
                (job, j.pending())
            })
            .collect();
        for (job, state) in pending {
            self.trace(job, Step::AtHorizon(state));
        }
    }

    /// Out of line: sweeps never trace, and their hot path stays small.
    #[inline(never)]
    fn record_step(&mut self, job: JobRef, step: Step) {
        let Some(tracer) = &mut self.tracer else {
            return;
        };
        let j = &self.jobs.slots[job.idx as usize];
        if j.user != tracer.user {
            return;
        }
        let who = match j.kind {
            JobKind::User => &self.m.groups[j.edge as usize].name,
            JobKind::Branch => &self.m.callers[j.edge as usize].name,
            JobKind::Request { server } => &self.m.servers[server as usize].name,
        };
        // The job it serves first: a fan-out parent met only through its
        // branches is numbered before them.
        let serves = (j.kind != JobKind::User).then(|| tracer.number(j.caller));
        let number = tracer.number(job);
        tracer.steps.push(TraceStep {
            at_s: nanos_to_secs(self.now),
            t_s: nanos_to_secs(self.now - tracer.arrived),
            who: who.to_string(),
            job: number,
            serves,
            // What a tier does to a request belongs to the attempt of its
            // caller that the request serves; a caller's own steps, to its
            // own attempt.
            attempt: if step.at_tier() && matches!(j.kind, JobKind::Request { .. }) {
                u32::from(j.caller_attempt)
            } else {
                u32::from(j.attempts)
            },
            event: step.name().to_string(),
            remaining_s: (j.deadline != NEVER)
                .then(|| (j.deadline as f64 - self.now as f64) / NANOS_PER_SEC as f64),
        });
    }

    /// Poisson (or even) arrivals with a piecewise-constant rate (load
    /// spikes): an exponential amount of "base-rate gaps" (or exactly one)
    /// is spent segment by segment. At the base rate this is the plain gap.
    #[inline(always)]
    fn schedule_next_arrival(&mut self, g: usize, after: Nanos) {
        let m = &self.m.groups[g];
        if let Some(profile) = &m.profile {
            self.schedule_next_profiled_arrival(g, after, profile);
            return;
        }
        // An amount of base-rate gaps: one exactly when arrivals are even
        // (half of one before the first, centring each arrival in its gap).
        let mut budget = match (m.even_arrivals, after) {
            (false, _) => self.groups[g].arrivals.exponential(1.0),
            (true, 0) => 0.5,
            (true, _) => 1.0,
        };
        let mut t = after;
        let segments = &m.arrival_segments;
        let mut i = segments.partition_point(|(start, _)| *start <= t) - 1;
        loop {
            let (_, factor) = segments[i];
            let end = segments.get(i + 1).map_or(m.arrivals_end, |s| s.0);
            let gap = budget * m.mean_gap / factor;
            // The last segment first: most runs have one, and then no
            // times need converting.
            if i + 1 == segments.len() || (t as f64) + gap < end as f64 {
                let at = t.saturating_add(round_nanos(gap));
                if at < m.arrivals_end {
                    self.schedule(at, Action::UserArrival(g as u16));
                }
                return;
            }
            budget -= (end - t) as f64 * factor / m.mean_gap;
            t = end;
            i += 1;
        }
    }

    /// A time-varying rate, by thinning: candidates of a Poisson process at
    /// the envelope's piecewise-constant rate (an exponential amount of
    /// expected arrivals spent segment by segment, as above), each kept with
    /// probability rate / envelope. Exact for any rate under the envelope.
    fn schedule_next_profiled_arrival(&mut self, g: usize, after: Nanos, p: &RateProfile) {
        let end = self.m.groups[g].arrivals_end;
        let draws = &mut self.groups[g].profile_draws;
        let env = &p.envelope;
        let mut t = after as f64;
        let mut i = env.partition_point(|(start, _)| *start <= after) - 1;
        loop {
            let mut budget = draws.exponential(1.0);
            loop {
                let (_, rate) = env[i];
                let piece_end = env.get(i + 1).map_or(end, |e| e.0) as f64;
                if rate > 0.0 {
                    let gap = budget * NANOS_PER_SEC as f64 / rate;
                    if t + gap < piece_end {
                        t += gap;
                        break;
                    }
                    budget -= (piece_end - t) * rate / NANOS_PER_SEC as f64;
                }
                if i + 1 == env.len() {
                    return; // past the end of arrivals
                }
                t = piece_end;
                i += 1;
            }
            // Truncated, so that the instant stays on the envelope's piece.
            let at = t as Nanos;
            if draws.uniform() * env[i].1 < p.rate(at) {
                self.schedule(at, Action::UserArrival(g as u16));
                return;
            }
        }
    }

    /// Closed-loop user `u` of group `g` thinks, then sends its next
    /// request, unless the group's arrivals have ended by then.
    fn think_then_send(&mut self, g: usize, u: u32) {
        let m = &self.m.groups[g];
        let closed = self.groups[g].closed.as_mut().expect("closed-loop users");
        let think = (m.closed.as_ref())
            .expect("closed-loop users")
            .think
            .draw(1.0, &mut closed.think);
        let at = self.now.saturating_add(think);
        if at < m.arrivals_end {
            self.schedule(at, Action::LoopUserSends(g as u16, u));
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
    #[inline(always)]
    fn sample_until(&mut self, t: Nanos) {
        if t >= self.next_sample_at {
            self.sample_seconds_until(t);
        }
    }

    #[inline(never)]
    fn sample_seconds_until(&mut self, t: Nanos) {
        let secs = self.series.successes.len();
        while self.next_sample_at <= t {
            for s in &mut self.servers {
                let second = &mut s.seconds[self.next_sample];
                second.queue_len = s.queue.len() as u64;
                second.busy = s.busy as u64;
            }
            self.next_sample += 1;
            self.next_sample_at = if self.next_sample < secs {
                (self.next_sample as Nanos + 1) * NANOS_PER_SEC
            } else {
                NEVER
            };
        }
    }

    /// A user request of group `g` arrives; `sender` is the closed-loop
    /// user who sent it (`u32::MAX`: an open arrival); `again`: it
    /// redelivers a message, so its requests count as retries. Always
    /// inlined: a message queue's consumers are a third caller, after
    /// which the compiler stopped inlining it into the event loop (+0.4%
    /// instructions on ch37, which has no queue).
    #[inline(always)]
    fn user_arrives(&mut self, g: usize, sender: u32, again: bool) {
        let user = self.users as u32;
        self.users += 1;
        self.groups[g].users += 1;
        if self.groups[g].closed.is_some() {
            // Indexed by user: every user needs an entry once any has one.
            self.sender.resize(user as usize, u32::MAX);
            self.sender.push(sender);
        }
        let sec = self.second();
        self.groups[g].arrivals_by_sec[sec] += 1;
        let phase = self.phase_of(self.now);
        self.groups[g].phases[phase].users += 1;
        let tiers = self.m.tier_instances.len();
        (self.tier_arrivals).resize(self.tier_arrivals.len() + tiers, 0);
        self.user_ended.push(false);
        if let Some(t) = &mut self.tracer
            && t.user == user
        {
            t.arrived = self.now;
        }
        // Drawn only when there are classes, so that other runs keep their streams.
        let group = &self.m.groups[g];
        let class = if group.class_cumulative.len() > 1 {
            let u = self.groups[g].classes.uniform();
            // The first class whose cumulative share is above the draw:
            // the shares only grow, so a binary search finds it.
            let i = group.class_cumulative.partition_point(|c| *c <= u);
            let i = if i < group.class_cumulative.len() {
                i
            } else {
                0
            };
            group.classes[i]
        } else {
            group.classes[0]
        };
        self.user_class.push(class);
        self.groups[g].class_users[class as usize] += 1;
        if self.m.tenants {
            self.tenant_arrives(g);
        }
        let mut job = Job::user(user, g as u16, self.now, group.user_deadline);
        if again {
            // A redelivered message is a retry of the group's.
            job.origin = Origin::retry_from(job.edge);
        }
        let job = self.jobs.alloc(job);
        self.start_attempt(job);
    }

    fn backlog(&mut self, g: usize) -> &mut Backlog {
        self.backlogs[g].as_mut().expect("a group with a queue")
    }

    /// A producer of group `g` publishes a message to its queue.
    #[inline(never)]
    fn publish(&mut self, g: usize) {
        let now = self.now;
        if self.backlog(g).publish(now) {
            self.consume(g);
        }
    }

    /// The drain rate lets group `g`'s consumers take a message, or one
    /// of them has become free.
    #[inline(never)]
    fn wake_consumers(&mut self, g: usize) {
        let now = self.now;
        self.backlog(g).woken(now);
        self.consume(g);
    }

    /// A message of group `g` put back after a failed delivery is due.
    #[inline(never)]
    fn due_again(&mut self, g: usize) {
        let now = self.now;
        self.backlog(g).due_again(now);
        self.consume(g);
    }

    /// Group `g`'s consumers take the messages they may now, each delivery
    /// a user request of the group; or wait for the drain rate. Out of
    /// line: the one copy of `user_arrives` outside the event loop.
    #[inline(never)]
    fn consume(&mut self, g: usize) {
        loop {
            let now = self.now;
            match self.backlog(g).take(now) {
                Take::Deliver { again } => self.user_arrives(g, u32::MAX, again),
                Take::At(at) => {
                    if self.backlog(g).wake_at(at) {
                        self.schedule(at, Action::Deliver(g as u16));
                    }
                    return;
                }
                Take::Idle => return,
            }
        }
    }

    /// A delivery of group `g`'s queue ended. The consumer takes its next
    /// message in an event of its own: this end may come from inside a
    /// reply chain, which a new delivery must not enter.
    #[inline(never)]
    fn delivery_ended(&mut self, g: usize, ok: bool) {
        let now = self.now;
        if let Some(at) = self.backlog(g).delivered(ok, now) {
            self.schedule(at, Action::DueAgain(g as u16));
        }
        if self.backlog(g).has_ready() && self.backlog(g).wake_at(now) {
            self.schedule(now, Action::Deliver(g as u16));
        }
    }

    /// The arriving user's tenant key: a draw in a group with tenants, the
    /// group's one key otherwise. Out of line: most runs have no tenants.
    #[inline(never)]
    fn tenant_arrives(&mut self, g: usize) {
        let tenants = &self.m.groups[g].tenants;
        let key = match &mut self.groups[g].tenants {
            Some(rng) => tenants.draw(rng),
            None => tenants.offset,
        };
        self.user_tenant.push(key);
        self.tenant_users[key as usize] += 1;
    }

    /// The attempt of `job` ended before its timeout: its timer, if in a
    /// lane, is cancelled (it would find the attempt over and do nothing)
    /// and counted as the event it would have been, so that `events` keeps
    /// its meaning. Only the event budget sees the difference: it counts
    /// such a timer when it is cancelled, not when it would have been due.
    #[inline(always)]
    fn cancel_timer(&mut self, job: JobRef) {
        let j = self.jobs.get_mut(job);
        let (ticket, edge, cut) = (
            std::mem::replace(&mut j.timer, NO_TICKET),
            j.edge,
            j.timer_cut(),
        );
        if ticket != NO_TICKET {
            let lane = self.timeout_lane[edge as usize];
            let lane = if cut { self.events.partner(lane) } else { lane };
            self.events.cancel(lane, ticket);
            self.cancelled += 1;
        }
    }

    fn is_waiting(&self, job: JobRef, attempt: u32) -> bool {
        self.jobs
            .get(job)
            .is_some_and(|j| j.waiting() && u32::from(j.attempts) == attempt)
    }

    /// Sends the next attempt of `job` to the server below it, unless the
    /// caller's admission refuses it.
    fn start_attempt(&mut self, job: JobRef) {
        let j = self.jobs.get_live(job);
        let (edge, deadline, attempts, arrived) = (
            j.edge as usize,
            j.deadline,
            u32::from(j.attempts),
            j.arrived,
        );
        let m = self.m;
        let call = &m.callers[edge];
        let now = self.now;
        if let Err(refusal) = self.callers[edge].admit(call, now, deadline, attempts + 1) {
            if attempts >= 1 {
                self.callers[edge].retry_unsent();
            }
            if refusal.is_failed_attempt() {
                // A local, fast rejection, counted apart from downstream failures.
                self.jobs.get_mut(job).attempts += 1;
                self.trace(job, Step::Refused(refusal));
                self.retry_or_give_up(job, Outcome::Error);
            } else {
                self.trace(job, Step::Refused(refusal));
                self.finish(job, false);
            }
            return;
        }
        let attempt = attempts + 1;
        let end = attempt_end(call, now, deadline, attempt, arrived);
        {
            let jm = self.jobs.get_mut(job);
            jm.attempts = attempt as u16;
            jm.set_waiting(true);
            jm.attempt_started = now;
        }
        self.callers[edge].on_sent(attempt);
        // Scheduled before the request is sent, so that a reply at exactly
        // the attempt's end loses to the timeout: "ok" must come before it.
        let lane = self.timeout_lane[edge];
        let timer = (self.events).push_timer(lane, end, Action::AttemptTimeout(job, attempt));
        let (ticket, cut) = timer.unwrap_or((NO_TICKET, false));
        let jm = self.jobs.get_mut(job);
        jm.timer = ticket;
        jm.set_timer_cut(cut);
        let hedge_delay = self.callers[edge].hedge_delay(call);
        if hedge_delay > 0 && now + hedge_delay < end {
            self.schedule(now + hedge_delay, Action::Hedge(job, attempt));
        }
        self.trace(job, Step::Send);
        let s = self.server_for(edge, job, attempt, 0);
        self.send(call, s, job, attempt, end, 0);
    }

    /// The server instance copy `copy` of attempt `attempt` of `job` goes
    /// to: the called tier's only one, or the replica its caller's balancer
    /// picks (the balancer is consulted only when there is a choice).
    #[inline(always)]
    fn server_for(&mut self, edge: usize, job: JobRef, attempt: u32, copy: usize) -> usize {
        let call = &self.m.callers[edge];
        if call.balancer.is_none() {
            return call.to;
        }
        self.balance(edge, job, attempt, copy)
    }

    /// The replica the balancer of `edge` picks: out of line, so that a
    /// call to a tier of one instance costs one test.
    #[inline(never)]
    fn balance(&mut self, edge: usize, job: JobRef, attempt: u32, copy: usize) -> usize {
        let call = &self.m.callers[edge];
        let r = self.callers[edge].pick_replica(call, self.now, job.idx, attempt, copy);
        call.replicas[r]
    }

    /// Sends a second copy of an attempt still unanswered, within the
    /// hedging budget. Whichever copy answers first ends the attempt.
    fn hedge(&mut self, job: JobRef, attempt: u32) {
        if !self.is_waiting(job, attempt) {
            return;
        }
        let j = *self.jobs.get_mut(job);
        let m = self.m;
        let call = &m.callers[j.edge as usize];
        if !self.callers[j.edge as usize].hedge(call, self.now) {
            return;
        }
        self.trace(job, Step::Hedge);
        let end = attempt_end(call, j.attempt_started, j.deadline, attempt, j.arrived);
        let s = self.server_for(j.edge as usize, job, attempt, 1);
        self.send(call, s, job, attempt, end, 1);
    }

    /// A request of an attempt of `caller` that ends at `end` leaves
    /// through `call` as a job of server instance `s`, not yet arrived: it
    /// arrives now, or after the hop's latency. A caller that cancels
    /// records it as copy `copy` (0, or 1 for a hedge).
    #[inline(always)]
    fn send(
        &mut self,
        call: &CallModel,
        s: usize,
        caller: JobRef,
        caller_attempt: u32,
        end: Nanos,
        copy: usize,
    ) {
        if self.caches
            && self.m.servers[s].cache.is_some()
            && self.cache_hit(s, caller, caller_attempt)
        {
            return;
        }
        let edge = match self.m.servers[s].downstream {
            Downstream::Chain(e) => e as u16,
            Downstream::Leaf | Downstream::Fanout(_) => NO_EDGE,
        };
        let deadline = if call.propagate { end } else { NEVER };
        let c = self.jobs.get_live(caller);
        let user = c.user;
        // The nearest retry or hedge: this request's own, else its caller's.
        let origin = if copy > 0 {
            Origin::HEDGE
        } else if caller_attempt > 1 {
            Origin::retry_from(c.edge)
        } else {
            c.origin
        };
        let job = self.jobs.alloc(Job {
            origin,
            ..Job::request(s, edge, caller, caller_attempt, deadline, user)
        });
        if call.cancel != CancelMode::Never {
            self.copies.get_mut(caller.idx)[copy] = job;
        }
        let latency = self.hop_latency(s);
        if latency == 0 {
            self.arrive(job);
        } else {
            self.schedule(self.now + latency, Action::Arrive(job));
        }
    }

    /// A lookup in the cache in front of server `s`: on a hit, the reply
    /// to `caller`'s attempt comes from the cache. Kept out of `send`, whose
    /// every call it would otherwise cost.
    #[inline(never)]
    fn cache_hit(&mut self, s: usize, caller: JobRef, caller_attempt: u32) -> bool {
        let (now, sec) = (self.now, self.second());
        let cache = self.servers[s].cache.as_mut().expect("a cached tier");
        let hit = cache.lookup(now, sec);
        if hit {
            let at = now + cache.hit_latency();
            let reply = Action::Reply(caller, caller_attempt, Outcome::Ok, FROM_CACHE);
            self.schedule(at, reply);
        }
        hit
    }

    /// A miss's successful answer fills the cache in front of tier `to`.
    #[inline(never)]
    fn fill_cache(&mut self, to: usize) {
        let cache = self.servers[to].cache.as_mut();
        cache.expect("a cached tier").fill(self.now);
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
    #[inline(always)]
    fn answer(&mut self, s: usize, caller: JobRef, attempt: u32, outcome: Outcome) {
        let latency = self.hop_latency(s);
        let by = self.m.servers[s].replica;
        if latency == 0 {
            self.reply(caller, attempt, outcome, by);
        } else {
            let reply = Action::Reply(caller, attempt, outcome, by);
            self.schedule(self.now + latency, reply);
        }
    }

    /// A request reaches its server: counted on arrival, refused if the
    /// server is down, held in the leaky bucket if it has one, then
    /// started, queued or rejected.
    #[inline(always)]
    fn arrive(&mut self, job: JobRef) {
        let j = self.jobs.get_live(job);
        let (s, user, origin) = (j.server(), j.user as usize, j.origin);
        let (sec, during) = (self.second(), self.phase_of(self.now) == 1);
        let tiers = self.m.tier_instances.len();
        self.tier_arrivals[user * tiers + self.m.servers[s].tier] += 1;
        let srv = &mut self.servers[s];
        srv.on_arrival(sec, during, self.user_ended[user], origin);
        let has = srv.has;
        if has.bins {
            self.count_in_bin(s, origin.by_retry());
        }
        if has.crashes && self.refused_while_down(s, job) {
            return;
        }
        if has.leaky_bucket {
            self.enter_bucket(s, job);
            return;
        }
        self.jobs.get_mut(job).arrived = self.now;
        self.admit(s, job, sec, false);
    }

    /// A request arrives at server `s` in a run whose series have
    /// sub-second bins: counted in its bin. Kept out of `arrive`.
    #[inline(never)]
    fn count_in_bin(&mut self, s: usize, retry: bool) {
        let bins = self.servers[s].bins.as_mut();
        bins.expect("bins in a binned run").count(self.now, retry);
    }

    /// A request that waited its turn in its server's leaky bucket leaves
    /// it, to be admitted unless the server went down meanwhile, or (with
    /// drop-expired: waiting in the bucket is queueing) its deadline
    /// passed while it waited.
    #[inline(never)]
    fn out_of_bucket(&mut self, job: JobRef) {
        // Lost with the bucket in a crash of its server.
        let Some(j) = self.jobs.get(job) else {
            return;
        };
        let s = j.server();
        self.jobs.get_mut(job).set_in_bucket(false);
        self.servers[s].left_bucket();
        let crashes = self.servers[s].has.crashes;
        if crashes && self.refused_while_down(s, job) {
            return;
        }
        if self.m.servers[s].drop_expired && self.now >= self.jobs.get_live(job).deadline {
            let sec = self.second();
            self.servers[s].expired_in_bucket(sec);
            self.drop_queued(s, job, Dropped::Expired);
            return;
        }
        self.admit(s, job, self.second(), true);
    }

    /// Request `job` reaches server `s`, which has crash windows: if it is
    /// down, the request is released and refused (`true`).
    #[inline(always)]
    fn refused_while_down(&mut self, s: usize, job: JobRef) -> bool {
        let Some(refuse_after) = self.servers[s].down else {
            return false;
        };
        let j = self.jobs.get_live(job);
        let (caller, attempt) = (j.caller, u32::from(j.caller_attempt));
        self.trace(job, Step::Down(refuse_after.is_some()));
        self.jobs.release(job);
        self.arrive_down(s, caller, attempt, refuse_after);
        true
    }

    /// A request reaches a server with a leaky bucket: its time at the
    /// tier, and its budget there, start here (waiting in the bucket is
    /// queueing); it waits its turn, or is admitted now, or the full
    /// bucket rejects it. Out of line: most servers have no bucket.
    #[inline(never)]
    fn enter_bucket(&mut self, s: usize, job: JobRef) {
        let now = self.now;
        self.jobs.get_mut(job).arrived = now;
        let srv = &mut self.servers[s];
        let tier = self.m.servers[s].tier;
        let shared = (self.tier_rate_limits[tier].as_mut()).filter(|_| srv.has.shared_rate_limit);
        match srv.leave_bucket(now, shared) {
            Ok(at) if at > now => {
                self.jobs.get_mut(job).set_in_bucket(true);
                self.trace(job, Step::Queued);
                self.schedule(at, Action::LeftBucket(job))
            }
            Ok(_) => self.admit(s, job, self.second(), false),
            Err(why) => {
                self.trace(job, Step::Rejected(why));
                self.reject(s, job)
            }
        }
    }

    /// Admission of request `job` at server `s` in second `sec`: it
    /// starts, queues, or is rejected; `waited`: it has already waited (in
    /// a leaky bucket), which its trace told. (The request is passed by reference,
    /// its fields read where used: a copy of the whole record, passed on to
    /// the functions not inlined, was 64 bytes moved on every arrival.)
    #[inline(always)]
    fn admit(&mut self, s: usize, job: JobRef, sec: usize, waited: bool) {
        let m = self.m;
        let model = &m.servers[s];
        let now = self.now;
        let j = self.jobs.get_live(job);
        let (user, cancelled) = (j.user as usize, j.cancelled());
        let class = self.user_class[user] as usize;
        let reply_first = m.dispatch == Dispatch::ReplyFirst;
        let srv = &mut self.servers[s];
        let key = match srv.keys_rate_limit() {
            true => self.user_tenant[user],
            false => 0,
        };
        // Indexed only when shared: the check is on every arrival.
        let shared = match srv.has.shared_rate_limit {
            true => self.tier_rate_limits[model.tier].as_mut(),
            false => None,
        };
        match srv.admit(model, now, sec, class, key, reply_first, shared) {
            Err(why) => {
                self.trace(job, Step::Rejected(why));
                self.reject(s, job)
            }
            Ok(Admission::Start) if cancelled => {
                // Nobody waits for it: no reply.
                srv.count_drop(Dropped::Cancelled);
                self.trace(job, Step::Dropped(Dropped::Cancelled));
                self.jobs.release(job);
            }
            Ok(Admission::Start) => {
                if waited {
                    self.trace(job, Step::Started);
                }
                self.start_job(s, job)
            }
            Ok(Admission::Queue) => {
                srv.enqueue(job, class, now);
                if !waited {
                    self.trace(job, Step::Queued);
                }
            }
        }
    }

    /// Server `s` rejects request `job`: the rejection reaches the caller
    /// after the tier's reject latency and the hop's.
    #[inline(always)]
    fn reject(&mut self, s: usize, job: JobRef) {
        let model = &self.m.servers[s];
        let j = self.jobs.get_live(job);
        let (caller, attempt) = (j.caller, u32::from(j.caller_attempt));
        self.jobs.release(job);
        let at = self.now + model.reject_latency + self.hop_latency(s);
        let reply = Action::Reply(caller, attempt, model.reject_outcome, model.replica);
        self.events.push_in_lane(self.reject_lane[s], at, reply);
    }

    /// A request of `caller`'s attempt `attempt` reaches server `s` while
    /// it is down: the connection is refused after `refuse_after`, or (a
    /// black hole) nothing answers.
    #[inline(never)]
    fn arrive_down(&mut self, s: usize, caller: JobRef, attempt: u32, refuse_after: Option<Nanos>) {
        let srv = &mut self.servers[s];
        let Some(delay) = refuse_after else {
            srv.stats.black_holed += 1;
            return;
        };
        srv.stats.refused_down += 1;
        let at = self.now + delay + self.hop_latency(s);
        let by = self.m.servers[s].replica;
        let reply = Action::Reply(caller, attempt, Outcome::Refused, by);
        self.schedule(at, reply);
    }

    /// Server instance `s` goes down (its crash window `k`): the requests
    /// queued there, waiting in its own leaky bucket and in service are
    /// lost without a reply (their callers wait for their timeouts), and
    /// those in service stop waiting for their own calls downstream.
    fn crash(&mut self, s: usize, k: usize) {
        let m = self.m;
        let refuse_after = m.servers[s].crashes[k].refuse_after;
        let mut queued = self.servers[s].crash(self.now, refuse_after);
        let has = self.servers[s].has;
        // A bucket the tier shares is not the instance's to lose.
        let own_bucket = has.leaky_bucket && !has.shared_rate_limit;
        let here = JobKind::Request { server: s as u8 };
        let (mut in_service, mut bucket_entered) = (Vec::new(), Vec::new());
        for (idx, j) in self.jobs.slots.iter().enumerate() {
            if !j.live() || j.kind != here {
                continue;
            }
            let job = JobRef {
                idx: idx as u32,
                generation: j.generation,
            };
            if j.started != NEVER {
                in_service.push(job);
            } else if own_bucket && j.in_bucket() {
                queued.push(job);
                bucket_entered.push((j.arrived / NANOS_PER_SEC) as usize);
            }
        }
        if own_bucket {
            self.servers[s].lose_bucket(&bucket_entered);
        }
        for job in in_service {
            let j = *self.jobs.get_mut(job);
            let class = self.user_class[j.user as usize] as usize;
            self.servers[s].lose_in_service(class, j.started, self.now);
            self.trace(job, Step::LostInCrash);
            self.stop_waiting(job);
            self.cancel_branches(job);
            self.jobs.release(job);
        }
        for job in queued {
            self.trace(job, Step::LostInCrash);
            self.jobs.release(job);
        }
    }

    /// `job` takes a slot at server `s` and starts its own work.
    #[inline(always)]
    fn start_job(&mut self, s: usize, job: JobRef) {
        let m = self.m;
        let model = &m.servers[s];
        let now = self.now;
        let j = self.jobs.get_mut(job);
        j.started = now;
        let (class, deadline) = (self.user_class[j.user as usize] as usize, j.deadline);
        let (waited, caller) = (now - j.arrived, j.caller);
        // Its answer reads the caller's record, last read when it sent
        // the request, before the request waited.
        self.jobs.prefetch(caller);
        let srv = &mut self.servers[s];
        srv.on_start(class, waited);
        // Each flag read where it decides: a copy of all of `Has` costs
        // more than the few of them one start needs.
        let service = match srv.has.class_service {
            true => (model.class_service[class].as_ref()).unwrap_or(&model.service),
            false => &model.service,
        };
        if srv.has.errors && srv.fails_fast(model, now) {
            self.schedule(now + model.error_latency, Action::WorkFailed(job));
        } else if service.is_none() {
            self.work_done(job);
        } else {
            let load = if srv.has.per_inflight {
                times(model.per_inflight, srv.busy as u64)
            } else {
                0
            };
            let slow = if srv.has.slow {
                model.slow_factor(now)
            } else {
                1.0
            };
            let gc_pauses = srv.has.gc_pauses;
            let work = service.draw(slow, &mut srv.rng) + load;
            if gc_pauses {
                self.schedule_paused_work(s, job, work);
                return;
            }
            match abandon_at(now, work, deadline, model.cancel_check) {
                Some(at) => self.schedule(at, Action::WorkAbandoned(job)),
                None => self.schedule(now + work, Action::WorkDone(job)),
            }
        }
    }

    /// `job`'s `work` at server `s`, whose GC pauses may freeze it: its end
    /// as if nothing paused, with the mark its end is checked against.
    /// Out of line: most servers have no pauses.
    #[inline(never)]
    fn schedule_paused_work(&mut self, s: usize, job: JobRef, work: Nanos) {
        let p = self.servers[s].pauses.as_ref().expect("a GC tier");
        // Validation keeps cooperative cancellation off here.
        let end = Action::PausedWorkDone(job, p.mark());
        self.schedule(p.work_begins(self.now) + work, end);
    }

    /// Server instance `s`'s GC tick: a pause whose length depends on its
    /// queue now (see `gc.rs`), and the next tick.
    fn gc_tick(&mut self, s: usize) {
        let srv = &mut self.servers[s];
        let queued = srv.queue.len();
        srv.pauses
            .as_mut()
            .expect("a GC tier")
            .tick(self.now, queued);
        let every = self.m.servers[s].gc.as_ref().expect("a GC tier").every;
        self.schedule(self.now + every, Action::GcTick(s as u16));
    }

    /// `job`'s work at a tier with GC pauses ends as scheduled with `mark`,
    /// unless pauses begun since froze it: then it ends that much later.
    fn paused_work_done(&mut self, job: JobRef, mark: u32) {
        // Work whose caller cancelled it has already stopped.
        let Some(j) = self.jobs.get(job) else {
            return;
        };
        let pauses = self.servers[j.server()].pauses.as_ref().expect("a GC tier");
        match pauses.frozen_since(mark, self.now) {
            (0, _) => self.work_done(job),
            (owed, counted) => {
                let end = Action::PausedWorkDone(job, counted);
                self.schedule(self.now + owed, end);
            }
        }
    }

    /// Always inlined: the call was measurable on every completion.
    #[inline(always)]
    fn work_done(&mut self, job: JobRef) {
        let s = self.jobs.get_mut(job).server();
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
                // `arrived` stays the parent's: a branch's budget share is
                // of the budget the parent had on arrival.
                let mut branch = Job {
                    kind: JobKind::Branch,
                    edge: e as u16,
                    caller: parent,
                    caller_attempt: 0,
                    started: self.now,
                    attempts: 0,
                    timer: NO_TICKET,
                    ..p
                };
                branch.set_waiting(false);
                self.jobs.alloc(branch)
            })
            .collect();
        *self.fanouts.get_mut(parent.idx) = Some(FanOut {
            branches: branches.clone(),
            left: edges.len(),
            degraded: false,
            failed: false,
            starting: true,
        });
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
                let s = self.jobs.get_mut(parent).server();
                self.servers[s].stats.degraded += 1;
            }
            *self.fanouts.get_mut(parent.idx) = None;
            self.finish(parent, true);
        }
    }

    /// The fan-out in progress of `parent`.
    fn fan(&mut self, parent: JobRef) -> &mut FanOut {
        (self.fanouts.get_mut(parent.idx).as_mut())
            .expect("a branch never outlives its parent's fan-out")
    }

    /// The caller stops waiting for the branches still running: their
    /// attempts end as cancelled, and the work they started downstream goes
    /// on for nobody (counted late there).
    fn cancel_branches(&mut self, parent: JobRef) {
        let branches = self.fanouts.get_mut(parent.idx).take().map(|f| f.branches);
        for b in branches.unwrap_or_default() {
            if self.jobs.get(b).is_none() {
                continue;
            }
            self.stop_waiting(b);
            self.trace(b, Step::Cancelled);
            self.jobs.release(b);
        }
    }

    /// `job`, cancelled, stops waiting for its attempt in flight, if any:
    /// the attempt ends as cancelled, and its requests are cancelled in turn
    /// if its caller cancels always (else they go on for nobody).
    fn stop_waiting(&mut self, job: JobRef) {
        let j = self.jobs.get_mut(job);
        if !j.waiting() {
            return;
        }
        j.set_waiting(false);
        let edge = j.edge as usize;
        let (sent_at, retry) = (j.attempt_started, j.attempts > 1);
        self.cancel_timer(job);
        self.callers[edge].on_cancelled(job.idx, sent_at, retry);
        if self.m.callers[edge].cancel == CancelMode::Always {
            self.cancel_copies(job);
        }
    }

    /// The attempt of `caller` numbered `attempt` gets `outcome` from
    /// replica `by`, unless that attempt has already ended (then the reply
    /// is ignored).
    #[inline(always)]
    fn reply(&mut self, caller: JobRef, attempt: u32, outcome: Outcome, by: u8) {
        if self.is_waiting(caller, attempt) {
            self.attempt_ended(caller, outcome, by);
        }
    }

    /// The attempt of `job` ended with `outcome`, answered by replica `by`
    /// (`NO_REPLICA`: a timeout).
    #[inline(always)]
    fn attempt_ended(&mut self, job: JobRef, outcome: Outcome, by: u8) {
        let (edge, retry, sent_at) = {
            let j = self.jobs.get_mut(job);
            j.set_waiting(false);
            (j.edge as usize, j.attempts > 1, j.attempt_started)
        };
        self.cancel_timer(job);
        let call = &self.m.callers[edge];
        // Before the caller records the outcome: a cancelled copy's
        // replies, and the draws they cause, come first.
        if cancels_copies(call, outcome) {
            self.cancel_copies(job);
        }
        if call.cached && outcome == Outcome::Ok && by != FROM_CACHE {
            self.fill_cache(call.to);
        }
        self.callers[edge].on_ended(call, self.now, sent_at, retry, outcome);
        (self.callers[edge]).on_replica_answer(self.now, sent_at, job.idx, by, outcome);
        self.trace(job, Step::Ended(outcome));
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
        let copies = *self.copies.get(job.idx);
        for copy in copies {
            let Some(c) = self.jobs.get(copy).copied() else {
                continue;
            };
            if c.caller != job || c.caller_attempt != j.attempts {
                continue; // a request of an earlier attempt, or a reused slot
            }
            if c.started == NEVER {
                // In transit or queued: dropped when it would start.
                self.jobs.get_mut(copy).set_cancelled();
                continue;
            }
            // In service: stop now; the caller no longer listens.
            self.stop_waiting(copy);
            self.cancel_branches(copy);
            self.jobs.get_mut(copy).set_abandoned();
            self.trace(copy, Step::Cancelled);
            self.finish(copy, false);
        }
    }

    /// After a failed attempt (the caller has recorded it): a retry after
    /// the backoff, or the job's final failure.
    fn retry_or_give_up(&mut self, job: JobRef, outcome: Outcome) {
        let j = self.jobs.get_live(job);
        let (edge, attempts, deadline) = (j.edge as usize, u32::from(j.attempts), j.deadline);
        let m = self.m;
        let call = &m.callers[edge];
        // A rejection's Retry-After comes from the server this caller calls.
        let retry_after = m.servers[call.to].retry_after;
        let decision = self.callers[edge].retry_decision(
            call,
            self.now,
            attempts,
            deadline,
            outcome,
            retry_after,
        );
        match decision {
            RetryDecision::RetryAfter(delay) => {
                self.schedule(self.now + delay, Action::Retry(job, edge as u16));
                self.trace(job, Step::Backoff);
            }
            RetryDecision::GiveUp(why) => {
                self.trace(job, Step::GaveUp(why));
                self.finish(job, false);
            }
        }
    }

    /// `job` has its final answer: a user is done, a branch settles its
    /// fan-out, or a server replies.
    fn finish(&mut self, job: JobRef, ok: bool) {
        let kind = self.jobs.get_mut(job).kind;
        self.trace(job, Step::Answered(kind, ok));
        match kind {
            JobKind::User => self.user_done(job, ok),
            JobKind::Branch => self.branch_done(job, ok),
            JobKind::Request { server } => self.server_replies(job, server as usize, ok),
        }
    }

    fn user_done(&mut self, job: JobRef, ok: bool) {
        let j = self.jobs.get_live(job);
        let (user, arrived, g) = (j.user as usize, j.arrived, j.edge as usize);
        self.jobs.release(job);
        self.user_ended[user] = true;
        let latency = self.now - arrived;
        let (arrival_sec, sec) = ((arrived / NANOS_PER_SEC) as usize, self.second());
        let several = self.groups.len() > 1;
        let phase = self.phase_of(arrived);
        let group = &mut self.groups[g];
        if ok {
            group.ok += 1;
            group.class_ok[self.user_class[user] as usize] += 1;
            group.phases[phase].ok += 1;
            group.ok_by_arrival[arrival_sec] += 1;
            if several {
                group.ok_latencies.push(latency);
            }
        } else {
            group.failed += 1;
            if several {
                group.failed_latencies.push(latency);
            }
        }
        if ok {
            if let Some(key) = self.user_tenant.get(user) {
                self.tenant_ok[*key as usize] += 1;
            }
            self.series.successes[sec] += 1;
            self.ok_latencies.push(latency);
        } else {
            self.series.failures[sec] += 1;
            self.failed_latencies.push(latency);
        }
        if self.queues && self.backlogs[g].is_some() {
            self.delivery_ended(g, ok);
        }
        if let Some(closed) = &mut self.groups[g].closed {
            let u = self.sender[user];
            let last = std::mem::replace(&mut closed.last_done[u as usize], self.now);
            closed.cycles += 1;
            closed.response_ns += latency as u128;
            closed.think_ns += (arrived - last) as u128;
            self.think_then_send(g, u);
        }
    }

    /// Request `job` at server `s` releases its slot and replies to its
    /// caller. The order of the two is the dispatch discipline; the leaf
    /// always refills first.
    #[inline(always)]
    fn server_replies(&mut self, job: JobRef, s: usize, ok: bool) {
        let j = self.jobs.get_live(job);
        let (caller, attempt, user) = (j.caller, u32::from(j.caller_attempt), j.user as usize);
        let late = !self.is_waiting(caller, attempt);
        let class = self.user_class[user] as usize;
        let sec = self.second();
        let j = self.jobs.get_live(job);
        self.servers[s].on_reply(self.now, sec, class, j, ok, late);
        self.jobs.release(job);
        let outcome = if ok { Outcome::Ok } else { Outcome::Error };
        let leaf = self.m.servers[s].downstream == Downstream::Leaf;
        // One call of each, so that each is inlined once.
        let refill_first = self.m.dispatch == Dispatch::Fifo || leaf;
        if refill_first {
            self.fill_slots(s);
        }
        self.answer(s, caller, attempt, outcome);
        if !refill_first {
            self.fill_slots(s);
        }
    }

    /// Starts queued requests at server `s` while it has free slots;
    /// answers the ones it drops instead. With nothing queued (the common
    /// case) it is one test, inlined.
    #[inline(always)]
    fn fill_slots(&mut self, s: usize) {
        if !self.servers[s].queue.is_empty() {
            self.start_queued(s);
        }
    }

    #[inline(never)]
    fn start_queued(&mut self, s: usize) {
        if self.servers[s].filling {
            return;
        }
        self.servers[s].filling = true;
        let model = &self.m.servers[s];
        while let Some((job, dropped)) = self.servers[s].next_to_start(model, self.now, &self.jobs)
        {
            let Some(why) = dropped else {
                self.trace(job, Step::Started);
                self.start_job(s, job);
                continue;
            };
            self.drop_queued(s, job, why);
        }
        self.servers[s].filling = false;
    }

    /// Server `s` drops request `job`, which waited (counted by the
    /// caller of this): its caller is answered as the reason says.
    fn drop_queued(&mut self, s: usize, job: JobRef, why: Dropped) {
        self.trace(job, Step::Dropped(why));
        let j = *self.jobs.get_mut(job);
        self.jobs.release(job);
        if let Some(outcome) = why.answer(self.m.servers[s].reject_outcome) {
            self.answer(s, j.caller, u32::from(j.caller_attempt), outcome);
        }
    }

    /// The run's result; its memory goes back to `scratch`.
    fn into_result(mut self, scratch: &mut Scratch) -> RunResult {
        // Users still in flight failed; requests still in service held their
        // slot until the horizon.
        let mut unfinished = 0;
        let mut group_unfinished = vec![0; self.groups.len()];
        for j in self.jobs.live() {
            match j.kind {
                JobKind::User => {
                    unfinished += 1;
                    group_unfinished[j.edge as usize] += 1;
                }
                // Its parent holds the slot.
                JobKind::Branch => {}
                JobKind::Request { server } => {
                    let srv = &mut self.servers[server as usize];
                    match j.pending() {
                        Pending::InTransit => srv.stats.in_transit_at_end += 1,
                        // Counted from its queue.
                        Pending::Queued => {}
                        Pending::InService => srv.busy_ns += (self.now - j.started) as u128,
                    }
                }
            }
            if j.waiting() {
                self.callers[j.edge as usize].stats.calls_pending += 1;
            }
        }
        // The run's user counts: the groups' summed.
        let (mut users_ok, mut users_failed) = (0, 0);
        let mut phases = [Phase::default(); 3];
        let secs = self.series.successes.len();
        let (mut arrivals, mut ok_by_arrival) = (vec![0; secs], vec![0; secs]);
        for g in &self.groups {
            users_ok += g.ok;
            users_failed += g.failed;
            for (run, group) in phases.iter_mut().zip(&g.phases) {
                run.users += group.users;
                run.ok += group.ok;
            }
            arrivals
                .iter_mut()
                .zip(&g.arrivals_by_sec)
                .for_each(|(a, n)| *a += n);
            ok_by_arrival
                .iter_mut()
                .zip(&g.ok_by_arrival)
                .for_each(|(a, n)| *a += n);
        }
        self.series.user_arrivals = arrivals;
        self.series.user_ok_by_arrival = ok_by_arrival;
        let recovery = self.m.recovery(self.m.arrivals_end);
        let recovery_s =
            recovery.time_s(&self.series.user_arrivals, &self.series.user_ok_by_arrival);
        let now = self.now;
        let callers: Vec<String> = self.m.callers.iter().map(|c| c.name.clone()).collect();
        let mut instances: Vec<Option<(TierStats, TierSeries)>> =
            (std::mem::take(&mut self.servers).into_iter())
                .zip(&self.m.servers)
                .map(|(s, model)| Some(s.into_result(model, now, &callers)))
                .collect();
        let n = self.m.tier_instances.len();
        let (tiers, tier_series) = (self.m.tier_instances.iter().enumerate())
            .map(|(tier, ids)| {
                let (stats, series): (Vec<_>, Vec<_>) = (ids.iter())
                    .map(|i| instances[*i].take().expect("an instance of one tier"))
                    .unzip();
                let per_user = self.tier_arrivals.iter().skip(tier).step_by(n);
                let stats = TierStats {
                    max_arrivals_per_user: per_user.copied().max().unwrap_or(0) as u64,
                    ..TierStats::of_replicas(stats)
                };
                (stats, TierSeries::of_replicas(series))
            })
            .unzip();
        self.series.tiers = tier_series;
        let secs = |n: Option<Nanos>| n.map(nanos_to_secs);
        let closed_stats = |c: ClosedLoop| ClosedStats {
            users: c.last_done.len() as u64,
            cycles: c.cycles,
            response_ns: c.response_ns,
            think_ns: c.think_ns,
            span_ns: c.last_done.iter().map(|t| *t as u128).sum(),
        };
        // The run's per-class counts: the groups' summed.
        let names = &self.m.class_names;
        let (mut class_users, mut class_ok) = (vec![0; names.len()], vec![0; names.len()]);
        for g in &self.groups {
            for c in 0..names.len() {
                class_users[c] += g.class_users[c];
                class_ok[c] += g.class_ok[c];
            }
        }
        let classes = class_stats(names, 0..names.len(), &class_users, &class_ok);
        let (mut groups, mut group_series): (Vec<GroupStats>, Vec<GroupSeries>) =
            (std::mem::take(&mut self.groups).into_iter())
                .zip(&self.m.groups)
                .zip(group_unfinished)
                .zip(std::mem::take(&mut self.backlogs))
                .map(|(((mut g, model), unfinished), backlog)| {
                    let seconds = g.arrivals_by_sec.len();
                    let (queue, backlog) = match backlog {
                        Some(b) => {
                            let (stats, series) = b.finish(self.m.window.1, self.m.horizon);
                            (Some(stats), series)
                        }
                        None => (None, vec![0; seconds]),
                    };
                    let recovery = self.m.recovery(model.arrivals_end);
                    let stats = GroupStats {
                        name: model.name.clone(),
                        users: g.users,
                        users_ok: g.ok,
                        users_failed: g.failed + unfinished,
                        users_unfinished: unfinished,
                        phases: g.phases,
                        classes: class_stats(
                            names,
                            model.classes.iter().map(|c| *c as usize),
                            &g.class_users,
                            &g.class_ok,
                        ),
                        recovery_s: recovery.time_s(&g.arrivals_by_sec, &g.ok_by_arrival),
                        recovery_censor_s: recovery.censor_s(&g.arrivals_by_sec),
                        success_latency_median_s: secs(nearest_rank(&mut g.ok_latencies, 0.5)),
                        success_latency_p99_s: secs(nearest_rank(&mut g.ok_latencies, 0.99)),
                        failed_latency_median_s: secs(nearest_rank(&mut g.failed_latencies, 0.5)),
                        closed: g.closed.map(closed_stats),
                        queue,
                    };
                    let series = GroupSeries {
                        name: model.name.clone(),
                        user_arrivals: g.arrivals_by_sec,
                        user_ok_by_arrival: g.ok_by_arrival,
                        backlog,
                    };
                    (stats, series)
                })
                .unzip();
        // The run's counters are the groups' sums, its closed loop too.
        let closed = (groups.iter().filter_map(|g| g.closed.clone())).reduce(|a, b| a.plus(&b));
        if groups.len() == 1 {
            groups.clear();
            group_series.clear();
        }
        self.series.groups = group_series;
        let result = RunResult {
            events: self.processed + self.cancelled,
            users: self.users,
            users_ok,
            users_failed: users_failed + unfinished,
            users_unfinished: unfinished,
            classes,
            tenants: (self.m.groups.iter().enumerate())
                .filter(|(_, g)| g.tenants.draws())
                .flat_map(|(i, g)| {
                    let (users, ok) = (&self.tenant_users, &self.tenant_ok);
                    (0..g.tenants.count()).map(move |rank| {
                        let key = (g.tenants.offset + rank) as usize;
                        TenantStats {
                            group: i as u16,
                            rank,
                            users: users[key],
                            users_ok: ok[key],
                        }
                    })
                })
                .collect(),
            phases,
            window_start_s: nanos_to_secs(self.m.window.0),
            window_end_s: nanos_to_secs(self.m.window.1),
            horizon_s: nanos_to_secs(self.m.horizon),
            recovery_s,
            recovery_censor_s: recovery.censor_s(&self.series.user_arrivals),
            success_latency_median_s: secs(nearest_rank(&mut self.ok_latencies, 0.5)),
            success_latency_p99_s: secs(nearest_rank(&mut self.ok_latencies, 0.99)),
            failed_latency_median_s: secs(nearest_rank(&mut self.failed_latencies, 0.5)),
            latency_histogram: LatencyHistogram::new(&self.ok_latencies, &self.failed_latencies),
            tiers,
            closed,
            groups,
            callers: (self.callers.into_iter())
                .map(|c| CallerStats {
                    ejected_s: c.ejected_s(now),
                    ..c.stats
                })
                .collect(),
            series: self.series,
        };
        *scratch = Scratch {
            events: Some(self.events),
            jobs: self.jobs,
            sender: self.sender,
            user_ended: self.user_ended,
            user_class: self.user_class,
            tier_arrivals: self.tier_arrivals,
            ok_latencies: self.ok_latencies,
            failed_latencies: self.failed_latencies,
        };
        result
    }
}
