//! The caller side of a call edge: the policies a job consults before it
//! sends an attempt, the records they keep when an attempt ends, and the
//! retry decision, each in MODEL.md's order. The engine decides when a
//! hook runs; a hook decides what the policies say and counts its reason.

use crate::job::BySlot;
use crate::model::CallModel;
use crate::policy::{
    AdaptiveThrottle, BreakerState, CircuitBreaker, LoadBalancer, RetryBudget, RetryThrottle,
};
use crate::random::Stream;
use crate::result::{CallerStats, nearest_rank_of_sorted};
use crate::scenario::CancelMode;
use crate::time::{NEVER, Nanos, round_nanos};
use std::collections::VecDeque;

/// No replica: an attempt that timed out was answered by none, and a copy
/// not sent went to none.
pub const NO_REPLICA: u8 = u8::MAX;

/// How an attempt ended, as its caller sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Outcome {
    Ok,
    Timeout,
    Rejected,
    Expired,
    Error,
    /// The connection was refused: the replica called is down.
    Refused,
}

impl Outcome {
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Timeout => "timeout",
            Outcome::Rejected => "rejected",
            Outcome::Expired => "expired",
            Outcome::Error => "error",
            Outcome::Refused => "refused",
        }
    }

    #[inline]
    fn counter(self, stats: &mut CallerStats) -> &mut u64 {
        match self {
            Outcome::Ok => &mut stats.calls_ok,
            Outcome::Timeout => &mut stats.calls_timeout,
            Outcome::Rejected => &mut stats.calls_rejected,
            Outcome::Expired => &mut stats.calls_expired,
            Outcome::Error => &mut stats.calls_error,
            Outcome::Refused => &mut stats.calls_refused,
        }
    }
}

/// Why an attempt is not sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The deadline has passed.
    NoTimeLeft,
    /// The deadline less the safety margin has passed.
    MarginExhausted,
    /// Budget admission: a full attempt would not fit before the limit.
    InsufficientDeadline,
    BreakerOpen,
    /// The bulkhead for this downstream (`max_in_flight`) is full.
    BulkheadFull,
    /// Adaptive throttling rejected it locally.
    ThrottledLocally,
}

impl Refusal {
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            Refusal::NoTimeLeft => "stop: no_time_left",
            Refusal::MarginExhausted => "stop: margin_exhausted",
            Refusal::InsufficientDeadline => "stop: insufficient_deadline",
            Refusal::BreakerOpen => "breaker_open",
            Refusal::BulkheadFull => "bulkhead_full",
            Refusal::ThrottledLocally => "throttled_locally",
        }
    }

    #[inline]
    fn counter(self, stats: &mut CallerStats) -> &mut u64 {
        match self {
            Refusal::NoTimeLeft => &mut stats.no_time_left,
            Refusal::MarginExhausted => &mut stats.margin_exhausted,
            Refusal::InsufficientDeadline => &mut stats.insufficient_deadline,
            Refusal::BreakerOpen => &mut stats.breaker_rejected,
            Refusal::BulkheadFull => &mut stats.bulkhead_rejected,
            Refusal::ThrottledLocally => &mut stats.rejected_locally,
        }
    }

    /// A local protection failing fast is a failed attempt, which the retry
    /// decision sees; running out of time ends the job without one.
    #[inline]
    pub fn is_failed_attempt(self) -> bool {
        match self {
            Refusal::NoTimeLeft | Refusal::MarginExhausted | Refusal::InsufficientDeadline => false,
            Refusal::BreakerOpen | Refusal::BulkheadFull | Refusal::ThrottledLocally => true,
        }
    }
}

/// Why a failed attempt is not retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// The caller does not retry this outcome's class (`retry_on`).
    NotRetryable,
    AttemptLimit,
    /// The job's own deadline has passed.
    Deadline,
    RetryThrottled,
    RetryBudget,
    /// Budget admission: the backoff plus a full attempt would not fit.
    InsufficientDeadline,
}

impl GiveUp {
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            GiveUp::NotRetryable => "stop: not_retryable",
            GiveUp::AttemptLimit => "stop: attempt_limit",
            GiveUp::Deadline => "stop: deadline",
            GiveUp::RetryThrottled => "stop: retry_throttled",
            GiveUp::RetryBudget => "stop: retry_budget",
            GiveUp::InsufficientDeadline => "stop: insufficient_deadline",
        }
    }

    #[inline]
    fn counter(self, stats: &mut CallerStats) -> &mut u64 {
        match self {
            GiveUp::NotRetryable => &mut stats.giveup_not_retryable,
            GiveUp::AttemptLimit => &mut stats.giveup_limit,
            GiveUp::Deadline => &mut stats.giveup_deadline,
            GiveUp::RetryThrottled => &mut stats.retries_throttled,
            GiveUp::RetryBudget => &mut stats.retry_budget_exhausted,
            GiveUp::InsufficientDeadline => &mut stats.insufficient_deadline,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Retry once this backoff has passed.
    RetryAfter(Nanos),
    GiveUp(GiveUp),
}

/// The instant by which a hop's attempts must end: its deadline less the
/// safety margin (no deadline, no limit).
#[inline]
fn limit(deadline: Nanos, margin: Nanos) -> Nanos {
    if deadline == NEVER {
        NEVER
    } else {
        deadline.saturating_sub(margin)
    }
}

/// When attempt number `attempt`, sent at `now` by a job with `deadline`
/// that reached its hop at `arrived`, times out: its timeout, cut by the
/// limit and by the share of the budget it may use. The share is of the
/// budget the hop had on arrival (`limit - arrived`), so that the hop's own
/// queueing and work come out of the rest, not out of its downstream's
/// share: 2/3 then 1/2 along three hops gives each exactly a third.
#[inline]
pub fn attempt_end(
    call: &CallModel,
    now: Nanos,
    deadline: Nanos,
    attempt: u32,
    arrived: Nanos,
) -> Nanos {
    let limit = limit(deadline, call.margin);
    let end = now.saturating_add(call.timeout_of(attempt)).min(limit);
    if call.budget_share < 1.0 && limit != NEVER {
        let budget = limit.saturating_sub(arrived);
        let share = round_nanos(budget as f64 * call.budget_share);
        end.min(now.saturating_add(share))
    } else {
        end
    }
}

/// Does an attempt that ended with `outcome` cancel the requests it sent?
#[inline]
pub fn cancels_copies(call: &CallModel, outcome: Outcome) -> bool {
    match call.cancel {
        CancelMode::Never => false,
        CancelMode::HedgeLosers => outcome != Outcome::Timeout,
        CancelMode::Always => true,
    }
}

/// Successful attempt latencies a caller keeps for quantile hedging, and
/// how many it needs before the quantile replaces the fixed delay.
const HEDGE_SAMPLES: usize = 100;
const HEDGE_MIN_SAMPLES: usize = 20;

/// The state of one call edge, shared by every job that calls through it.
pub struct Caller {
    throttle: Option<RetryThrottle>,
    retry_budget: Option<RetryBudget>,
    adaptive: Option<AdaptiveThrottle>,
    breaker: Option<CircuitBreaker>,
    /// Jitter of the breaker's open times.
    breaker_rng: Stream,
    /// Attempts in flight (for the bulkhead).
    in_flight: u32,
    /// Latencies of the latest successful attempts, oldest first, and the
    /// hedging delay they give (0 until there are enough).
    recent: VecDeque<Nanos>,
    hedge_after: Nanos,
    /// The same latencies in ascending order (kept so at each success:
    /// sorting the window each time was most of a hedging run's time).
    sorted: Vec<Nanos>,
    /// Draws of local rejections (adaptive throttling).
    adaptive_rng: Stream,
    /// Backoff jitter.
    rng: Stream,
    /// Balancing over the called tier's replicas, when it has several.
    replicas: Option<Replicas>,
    pub stats: CallerStats,
}

/// A caller's balancing state: the balancer, its own random stream (so that
/// other draws do not move when balancing changes), and per job (by slot)
/// the replicas its latest attempt's copies went to. With
/// `breaker_scope = "replica"`, one circuit breaker per replica (else none);
/// with `bulkhead_scope = "replica"`, the bulkhead per replica; and the
/// scratch list of the replicas both let a request through to.
struct Replicas {
    balancer: LoadBalancer,
    rng: Stream,
    sent: BySlot<[u8; 2]>,
    breakers: Vec<CircuitBreaker>,
    /// With `bulkhead_scope = "replica"`: this caller's requests in flight
    /// per replica at most (`u32::MAX`: no bulkhead per replica).
    limit: u32,
    /// Breakers not closed, and replicas at their bulkhead's limit: while
    /// both are 0 every replica is usable, and a pick asks none of them.
    tripped: u32,
    full: u32,
    allowed: Vec<bool>,
}

impl Caller {
    pub fn new(call: &CallModel, seed: u64) -> Caller {
        Caller {
            throttle: call.throttle.clone(),
            retry_budget: call.retry_budget.clone(),
            adaptive: call.adaptive_throttle.clone(),
            adaptive_rng: Stream::new(seed, &format!("throttle.{}", call.name)),
            breaker: call.breaker.clone().filter(|_| !call.breaker_per_replica),
            breaker_rng: Stream::new(seed, &format!("breaker.{}", call.name)),
            in_flight: 0,
            recent: VecDeque::new(),
            hedge_after: 0,
            sorted: Vec::new(),
            rng: Stream::new(seed, &format!("backoff.{}", call.name)),
            replicas: call.balancer.clone().map(|balancer| Replicas {
                balancer,
                rng: Stream::new(seed, &format!("balancer.{}", call.name)),
                sent: BySlot::new([NO_REPLICA; 2]),
                breakers: match &call.breaker {
                    Some(b) if call.breaker_per_replica => vec![b.clone(); call.replicas.len()],
                    _ => Vec::new(),
                },
                limit: call.replica_max_in_flight,
                tripped: 0,
                full: 0,
                allowed: Vec::new(),
            }),
            stats: CallerStats {
                name: call.name.clone(),
                balanced: call.balancer.is_some(),
                ..CallerStats::default()
            },
        }
    }

    /// Before sending attempt number `attempt` of a job with `deadline`:
    /// the first rule that refuses it (counted), in MODEL.md's order. The
    /// rules after the first refusal are not consulted: they change state
    /// (the breaker's probes, the throttle's request count and draw).
    #[inline]
    pub fn admit(
        &mut self,
        call: &CallModel,
        now: Nanos,
        deadline: Nanos,
        attempt: u32,
    ) -> Result<(), Refusal> {
        let limit = limit(deadline, call.margin);
        let refusal = if now >= deadline {
            Refusal::NoTimeLeft
        } else if now >= limit {
            Refusal::MarginExhausted
        } else if call.budget_admission && now.saturating_add(call.timeout_of(attempt)) > limit {
            Refusal::InsufficientDeadline
        } else if self.breaker.as_mut().is_some_and(|b| !b.allow(now)) || self.all_open(now) {
            Refusal::BreakerOpen
        } else if self.in_flight >= call.max_in_flight || self.all_full(now) {
            Refusal::BulkheadFull
        } else if self.throttled_locally(now) {
            Refusal::ThrottledLocally
        } else {
            return Ok(());
        };
        *refusal.counter(&mut self.stats) += 1;
        Err(refusal)
    }

    /// Per-replica breakers: is every replica's open? (Asked without taking
    /// a probe: the replica picked takes it, once the other rules allow.)
    #[inline]
    fn all_open(&self, now: Nanos) -> bool {
        self.replicas.as_ref().is_some_and(|r| {
            !r.breakers.is_empty() && !r.breakers.iter().any(|b| b.would_allow(now))
        })
    }

    /// Per-replica bulkheads: does no replica whose breaker would let a call
    /// through have room for one more of this caller's requests?
    #[inline]
    fn all_full(&self, now: Nanos) -> bool {
        self.replicas.as_ref().is_some_and(|r| {
            r.limit != u32::MAX && !(0..r.balancer.replicas()).any(|x| r.usable(x, now))
        })
    }

    #[inline]
    fn throttled_locally(&mut self, now: Nanos) -> bool {
        let Some(t) = &mut self.adaptive else {
            return false;
        };
        // The probability from the requests before this one (as gRPC's
        // implementation does): counting it first made the first request
        // after a quiet window a coin toss, (1 - 0) / (1 + 1). Requests
        // include the ones rejected locally (the SRE book's rule).
        let p = t.reject_probability(now);
        t.record_request(now);
        self.adaptive_rng.uniform() < p
    }

    /// A retry decided by [`Caller::retry_decision`] is not sent: refused
    /// when its backoff ended, or its job is gone.
    #[inline]
    pub fn retry_unsent(&mut self) {
        if let Some(b) = &mut self.retry_budget {
            b.unsent();
        }
    }

    /// Attempt number `attempt` (1 for the first) leaves.
    #[inline]
    pub fn on_sent(&mut self, attempt: u32) {
        let retry = attempt > 1;
        self.stats.calls += 1;
        self.in_flight += 1;
        self.stats.retries_sent += retry as u64;
        if let Some(b) = &mut self.retry_budget {
            b.sent();
        }
    }

    /// How long an attempt waits before its hedged copy: the learnt
    /// quantile once there is one, else the fixed delay (0: no hedging).
    #[inline]
    pub fn hedge_delay(&self, call: &CallModel) -> Nanos {
        match self.hedge_after {
            0 => call.hedge_delay,
            learnt => learnt,
        }
    }

    /// May a hedged copy leave now, within the budget (a fraction of calls),
    /// while retry throttling lets retries through (gRFC A6: throttling
    /// applies to hedged RPCs too), and, with breakers or bulkheads per
    /// replica, to a replica that may take it (the first copy's, if no
    /// other)?
    #[inline]
    pub fn hedge(&mut self, call: &CallModel, now: Nanos) -> bool {
        let no_room = self.replicas.as_ref().is_some_and(|r| {
            (!r.breakers.is_empty() || r.limit != u32::MAX)
                && !(0..r.balancer.replicas()).any(|x| r.usable(x, now))
        }) || self.throttle.as_ref().is_some_and(|t| !t.retry_allowed());
        let stats = &mut self.stats;
        if no_room || (stats.hedges_sent + 1) as f64 > call.hedge_budget * stats.calls as f64 {
            stats.hedges_refused += 1;
            return false;
        }
        stats.hedges_sent += 1;
        stats.calls += 1;
        true
    }

    /// An attempt sent at `sent_at` (a retry or not) ended with `outcome`:
    /// every policy records it.
    #[inline(always)]
    pub fn on_ended(
        &mut self,
        call: &CallModel,
        now: Nanos,
        sent_at: Nanos,
        retry: bool,
        outcome: Outcome,
    ) {
        self.in_flight -= 1;
        if call.hedge_quantile > 0.0 && outcome == Outcome::Ok {
            self.learn_latency(now - sent_at, call.hedge_quantile);
        }
        // An outcome outside `failure_on` is neither a failure nor a
        // success for the breaker and the throttle.
        let counted = |outcome| outcome == Outcome::Ok || call.failure_on.contains(outcome);
        if let Some(b) = &mut self.breaker {
            let pass = b.pass_of(sent_at);
            if counted(outcome) {
                let jitter = self.breaker_rng.uniform();
                b.record_pass(pass, now, outcome != Outcome::Ok, now - sent_at, jitter);
            } else {
                b.forget_pass(pass);
            }
        }
        if let Some(b) = &mut self.retry_budget {
            b.ended(retry);
        }
        if let Some(t) = &mut self.adaptive
            && matches!(outcome, Outcome::Ok | Outcome::Error)
        {
            t.record_accept(now);
        }
        *outcome.counter(&mut self.stats) += 1;
        if let Some(t) = &mut self.throttle
            && counted(outcome)
        {
            if outcome == Outcome::Ok {
                t.on_success();
            } else {
                t.on_failure();
            }
        }
    }

    /// The job stopped waiting for its attempt (it was cancelled itself):
    /// the attempt ends without an outcome the policies would learn from.
    #[inline]
    pub fn on_cancelled(&mut self, slot: u32, sent_at: Nanos, retry: bool) {
        self.in_flight -= 1;
        self.stats.calls_cancelled += 1;
        if let Some(b) = &mut self.retry_budget {
            b.ended(retry);
        }
        // A probe never answered must not hold the breaker half open.
        if let Some(b) = &mut self.breaker {
            b.forget_pass(b.pass_of(sent_at));
        }
        if let Some(r) = &mut self.replicas {
            let copies = r.release(slot);
            r.forget(copies[0], sent_at);
        }
    }

    /// The replica that copy `copy` (0, or 1 for a hedge) of attempt
    /// `attempt` of the job in slot `slot` goes to, at `now`: a hedge
    /// avoids its attempt's first copy's replica, a retry every replica of
    /// the attempt before it, when the call says so and another may be
    /// chosen. Only for a caller with replicas.
    pub fn pick_replica(
        &mut self,
        call: &CallModel,
        now: Nanos,
        slot: u32,
        attempt: u32,
        copy: usize,
    ) -> usize {
        let r = self.replicas.as_mut().expect("a caller with replicas");
        // A hedge's: its attempt's first copy; a retry's: the copies of
        // the attempt before it (gRPC passes the balancer every replica
        // tried so far).
        let before = r.sent.get(slot).map(usize::from);
        let tried = (before.iter())
            .take_while(|x| **x != usize::from(NO_REPLICA))
            .count();
        let again = copy == 1 || attempt > 1;
        let avoid = match call.retry_other_replica && again {
            true => &before[..tried],
            false => &[],
        };
        let replica = if r.tripped == 0 && r.full == 0 {
            // A closed breaker's `allow` changes nothing: none is asked.
            debug_assert!((0..r.balancer.replicas()).all(|x| r.usable(x, now)));
            r.balancer.pick(now, avoid, &mut r.rng)
        } else {
            r.allowed.clear();
            for x in 0..r.balancer.replicas() {
                let usable = r.usable(x, now);
                r.allowed.push(usable);
            }
            let replica = r.balancer.pick_among(now, avoid, &r.allowed, &mut r.rng);
            if copy == 0 && !r.breakers.is_empty() {
                // Admission found one open; the first copy takes its probe.
                let allowed = r.breakers[replica].allow(now);
                debug_assert!(allowed, "admission checked the breakers");
            }
            replica
        };
        r.balancer.sent(replica);
        r.full += u32::from(r.balancer.outstanding(replica) == r.limit);
        let sent = r.sent.get_mut(slot);
        if copy == 0 {
            *sent = [replica as u8, NO_REPLICA];
        } else {
            sent[1] = replica as u8;
        }
        replica
    }

    /// The attempt of the job in slot `slot`, sent at `sent_at`, ended at
    /// `now` with `outcome`, answered by replica `by` (`NO_REPLICA` for a timeout: then every
    /// replica it was sent to failed it). No-op without replicas.
    /// With per-replica breakers, the first copy's replica records the
    /// outcome if it answered or the attempt timed out, and gives back its
    /// probe if the hedge answered: a breaker learns only from the copies it
    /// let through.
    #[inline(always)]
    pub fn on_replica_answer(
        &mut self,
        now: Nanos,
        sent_at: Nanos,
        slot: u32,
        by: u8,
        outcome: Outcome,
    ) {
        if self.replicas.is_some() {
            self.replica_answered(now, sent_at, slot, by, outcome);
        }
    }

    /// [`Caller::on_replica_answer`] of a caller with replicas. Out of
    /// line: most callers have none, and pay only the check.
    #[inline(never)]
    fn replica_answered(
        &mut self,
        now: Nanos,
        sent_at: Nanos,
        slot: u32,
        by: u8,
        outcome: Outcome,
    ) {
        let Some(r) = &mut self.replicas else {
            return;
        };
        let copies = r.release(slot);
        let failed = outcome != Outcome::Ok;
        if !r.breakers.is_empty() && copies[0] != NO_REPLICA {
            if by == NO_REPLICA || by == copies[0] {
                let jitter = self.breaker_rng.uniform();
                let b = &mut r.breakers[copies[0] as usize];
                // Only an outcome opens or closes a breaker.
                let was_closed = b.state() == BreakerState::Closed;
                b.record_pass(b.pass_of(sent_at), now, failed, now - sent_at, jitter);
                let closed = b.state() == BreakerState::Closed;
                r.tripped = r.tripped + u32::from(was_closed) - u32::from(closed);
            } else {
                r.forget(copies[0], sent_at);
            }
        }
        let blamed = if by == NO_REPLICA {
            copies
        } else {
            [by, NO_REPLICA]
        };
        for replica in blamed.into_iter().filter(|x| *x != NO_REPLICA) {
            if r.balancer.record(replica as usize, failed, now).is_some() {
                self.stats.ejections += 1;
            }
        }
    }

    /// Replica-seconds this caller kept replicas ejected, up to `horizon`.
    pub fn ejected_s(&self, horizon: Nanos) -> f64 {
        self.replicas.as_ref().map_or(0.0, |r| {
            r.balancer.ejected_ns(horizon) as f64 / crate::time::NANOS_PER_SEC as f64
        })
    }

    /// MODEL.md 2's retry decision after failed attempt number `attempts`
    /// of a job with `deadline`, in its order (after the outcome's class:
    /// one this caller does not retry ends it): limit, deadline, throttle,
    /// retry budget, then the backoff (at least `retry_after`, the callee's
    /// Retry-After, for an honoured rejection) and budget admission, which
    /// reserves the backoff and the timeout of the next attempt. The
    /// backoff is drawn only once the first four allow a retry.
    #[inline]
    pub fn retry_decision(
        &mut self,
        call: &CallModel,
        now: Nanos,
        attempts: u32,
        deadline: Nanos,
        outcome: Outcome,
        retry_after: Nanos,
    ) -> RetryDecision {
        let give_up = if !call.retry_on.contains(outcome) {
            GiveUp::NotRetryable
        } else if attempts >= call.max_attempts {
            GiveUp::AttemptLimit
        } else if now >= deadline {
            GiveUp::Deadline
        } else if self.throttle.as_ref().is_some_and(|t| !t.retry_allowed()) {
            GiveUp::RetryThrottled
        } else if self
            .retry_budget
            .as_ref()
            .is_some_and(|b| !b.retry_allowed())
        {
            GiveUp::RetryBudget
        } else {
            let mut delay = call.backoff.delay(attempts, &mut self.rng);
            if call.honor_retry_after && outcome == Outcome::Rejected {
                delay = delay.max(retry_after);
            }
            if call.backoff_jitter > 0.0 {
                let spread = 1.0 + call.backoff_jitter * (2.0 * self.rng.uniform() - 1.0);
                delay = round_nanos(delay as f64 * spread);
            }
            if call.budget_admission
                && (now + delay).saturating_add(call.timeout_of(attempts + 1))
                    > limit(deadline, call.margin)
            {
                GiveUp::InsufficientDeadline
            } else {
                if let Some(b) = &mut self.retry_budget {
                    b.scheduled();
                }
                return RetryDecision::RetryAfter(delay);
            }
        };
        *give_up.counter(&mut self.stats) += 1;
        RetryDecision::GiveUp(give_up)
    }

    /// Records a successful attempt's latency and updates the hedging
    /// delay to the `quantile` of the recent ones (nearest rank).
    fn learn_latency(&mut self, latency: Nanos, quantile: f64) {
        if self.recent.len() == HEDGE_SAMPLES {
            let oldest = self.recent.pop_front().expect("a full window");
            let at = self.sorted.partition_point(|&v| v < oldest);
            self.sorted.remove(at);
        }
        self.recent.push_back(latency);
        let at = self.sorted.partition_point(|&v| v < latency);
        self.sorted.insert(at, latency);
        if self.recent.len() >= HEDGE_MIN_SAMPLES {
            self.hedge_after = nearest_rank_of_sorted(&self.sorted, quantile).max(1);
        }
    }
}

impl Replicas {
    /// May replica `x` take a request now: its breaker (if any) would let
    /// it through and its bulkhead (if any) has room?
    fn usable(&self, x: usize, now: Nanos) -> bool {
        self.breakers.get(x).is_none_or(|b| b.would_allow(now))
            && self.balancer.outstanding(x) < self.limit
    }

    /// The first copy, sent at `sent_at`, got no outcome of its own: its
    /// replica's breaker, if it let the copy through as a probe, gives the
    /// probe back.
    fn forget(&mut self, replica: u8, sent_at: Nanos) {
        if replica != NO_REPLICA
            && let Some(b) = self.breakers.get_mut(replica as usize)
        {
            b.forget_pass(b.pass_of(sent_at));
        }
    }

    /// The requests of the job in slot `slot`'s latest attempt are no longer
    /// waited for; returns the replicas they went to.
    fn release(&mut self, slot: u32) -> [u8; 2] {
        let copies = *self.sent.get(slot);
        for replica in copies.into_iter().filter(|x| *x != NO_REPLICA) {
            self.full -= u32::from(self.balancer.outstanding(replica as usize) == self.limit);
            self.balancer.released(replica as usize);
        }
        copies
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Backoff;

    const MS: Nanos = 1_000_000;

    /// The client's call of ch37 (`naive`), with no policy beyond retries:
    /// each test sets what it looks at.
    fn call() -> CallModel {
        let s = crate::builtin("ch37").expect("ch37 is built in");
        let mut c = crate::model::Model::new(&s).callers.remove(0);
        c.timeout = 100 * MS;
        c.max_attempts = 3;
        c.margin = 0;
        c.budget_admission = false;
        c.honor_retry_after = false;
        c.backoff = Backoff::Fixed(10 * MS);
        c.throttle = None;
        c.retry_budget = None;
        c.adaptive_throttle = None;
        c.breaker = None;
        c.max_in_flight = u32::MAX;
        c.replica_max_in_flight = u32::MAX;
        c.budget_share = 1.0;
        c.backoff_jitter = 0.0;
        c.retry_on = crate::model::OutcomeSet::of(&every());
        c.failure_on = crate::model::OutcomeSet::of(&every());
        c
    }

    fn every() -> [crate::scenario::OutcomeClass; 5] {
        use crate::scenario::OutcomeClass::*;
        [Timeout, Overload, Error, Expired, Refused]
    }

    #[test]
    fn admit_refuses_in_model_order_and_counts_once() {
        let mut c = call();
        c.margin = 20 * MS;
        c.budget_admission = true;
        let mut caller = Caller::new(&c, 1);
        assert_eq!(caller.admit(&c, 0, NEVER, 1), Ok(()));
        assert_eq!(
            caller.admit(&c, 500 * MS, 500 * MS, 1),
            Err(Refusal::NoTimeLeft)
        );
        assert_eq!(
            caller.admit(&c, 490 * MS, 500 * MS, 1),
            Err(Refusal::MarginExhausted)
        );
        // 100 ms of timeout do not fit in the 80 ms before the limit.
        assert_eq!(
            caller.admit(&c, 400 * MS, 500 * MS, 1),
            Err(Refusal::InsufficientDeadline)
        );
        assert_eq!(caller.admit(&c, 380 * MS, 500 * MS, 1), Ok(()));
        let s = &caller.stats;
        assert_eq!(
            (s.no_time_left, s.margin_exhausted, s.insufficient_deadline),
            (1, 1, 1)
        );
    }

    #[test]
    fn a_cancelled_probe_gives_its_place_back() {
        // One probe in HALF_OPEN: while it is out no other call passes;
        // once its job is cancelled (no outcome), the next call may probe.
        let mut c = per_replica(false);
        c.balancer = None;
        let mut caller = Caller::new(&c, 1);
        let b = caller.breaker.as_mut().unwrap();
        b.record(0, true, MS, 0.0);
        b.record(0, true, MS, 0.0);
        let later = 10_001 * MS;
        assert_eq!(caller.admit(&c, later, NEVER, 1), Ok(()));
        caller.on_sent(1);
        assert_eq!(caller.admit(&c, later, NEVER, 1), Err(Refusal::BreakerOpen));
        caller.on_cancelled(0, later, false);
        assert_eq!(caller.admit(&c, later, NEVER, 1), Ok(()));
    }

    #[test]
    fn a_call_sent_before_the_edges_breaker_opened_gives_back_no_probe() {
        // The same with one breaker for the edge: a call sent at 0, before
        // two failures open it, is cancelled while the probe is out (no
        // second probe may go), or answers (it decides nothing).
        for answers in [false, true] {
            let mut c = per_replica(false);
            c.balancer = None;
            let mut caller = Caller::new(&c, 1);
            assert_eq!(caller.admit(&c, 0, NEVER, 1), Ok(()));
            caller.on_sent(1);
            let b = caller.breaker.as_mut().unwrap();
            b.record(0, true, MS, 0.0);
            b.record(0, true, MS, 0.0);
            let later = 10_001 * MS;
            assert_eq!(caller.admit(&c, later, NEVER, 1), Ok(()));
            caller.on_sent(1);
            if answers {
                caller.on_ended(&c, later + MS, 0, false, Outcome::Ok);
            } else {
                caller.on_cancelled(0, 0, false);
            }
            let half_open = BreakerState::HalfOpen {
                sent: 1,
                done: 0,
                failed: 0,
                slow: 0,
            };
            assert_eq!(caller.breaker.as_ref().unwrap().state(), half_open);
            let refused = caller.admit(&c, later + MS, NEVER, 1);
            assert_eq!(refused, Err(Refusal::BreakerOpen), "answers: {answers}");
        }
    }

    #[test]
    fn the_bulkhead_counts_attempts_in_flight() {
        let mut c = call();
        c.max_in_flight = 2;
        let mut caller = Caller::new(&c, 1);
        caller.on_sent(1);
        caller.on_sent(2);
        let refused = caller.admit(&c, 0, NEVER, 1);
        assert_eq!(refused, Err(Refusal::BulkheadFull));
        assert!(refused.unwrap_err().is_failed_attempt());
        caller.on_ended(&c, 5 * MS, 0, false, Outcome::Timeout);
        assert_eq!(caller.admit(&c, 5 * MS, NEVER, 1), Ok(()));
        caller.on_cancelled(0, 0, false);
        let s = &caller.stats;
        assert_eq!((s.calls, s.retries_sent, s.calls_timeout), (2, 1, 1));
        assert_eq!((s.bulkhead_rejected, s.calls_cancelled), (1, 1));
    }

    /// A caller over 3 replicas, round robin, with a breaker per replica
    /// (or one for the edge): 2 outcomes of the last 4 decide, 60% failed
    /// opens it for 10 s.
    fn per_replica(scope_replica: bool) -> CallModel {
        use crate::policy::{BreakerConfig, CircuitBreaker, LoadBalancer};
        let mut c = call();
        c.balancer = Some(LoadBalancer::new(
            crate::scenario::Balancer::RoundRobin,
            3,
            None,
        ));
        c.replicas = vec![1, 2, 3];
        c.breaker = Some(CircuitBreaker::new(BreakerConfig {
            window: 4,
            window_time: 0,
            min_samples: 2,
            failure_rate: 0.6,
            slow_call_rate: 1.0,
            slow_call: NEVER,
            open: 10_000 * MS,
            open_jitter: 0,
            probes: 1,
        }));
        c.breaker_per_replica = scope_replica;
        c
    }

    /// Sends one attempt of the job in `slot` at `now` and ends it 1 ms
    /// later, failed when its replica is one of `bad`: the replica, or the
    /// refusal.
    fn one_call(
        caller: &mut Caller,
        c: &CallModel,
        now: Nanos,
        slot: u32,
        bad: &[usize],
    ) -> Result<usize, Refusal> {
        caller.admit(c, now, NEVER, 1)?;
        caller.on_sent(1);
        let r = caller.pick_replica(c, now, slot, 1, 0);
        let outcome = if bad.contains(&r) {
            Outcome::Error
        } else {
            Outcome::Ok
        };
        caller.on_ended(c, now + MS, now, false, outcome);
        caller.on_replica_answer(now + MS, now, slot, r as u8, outcome);
        Ok(r)
    }

    /// A hedge avoids its first copy's replica; the retry after a hedged
    /// attempt avoids both copies' replicas (with 3 at random, the third).
    #[test]
    fn a_retry_after_a_hedged_attempt_avoids_both_its_replicas() {
        let mut c = call();
        c.balancer = Some(crate::policy::LoadBalancer::new(
            crate::scenario::Balancer::Random,
            3,
            None,
        ));
        c.replicas = vec![1, 2, 3];
        for seed in 0..50 {
            let mut caller = Caller::new(&c, seed);
            let first = caller.pick_replica(&c, 0, 0, 1, 0);
            let hedge = caller.pick_replica(&c, 0, 0, 1, 1);
            assert_ne!(hedge, first, "seed {seed}");
            caller.on_replica_answer(MS, 0, 0, hedge as u8, Outcome::Error);
            let retry = caller.pick_replica(&c, 2 * MS, 0, 2, 0);
            assert_eq!(retry, 3 - first - hedge, "seed {seed}");
        }
    }

    #[test]
    fn a_failing_replica_opens_its_own_breaker_and_the_others_take_its_traffic() {
        let c = per_replica(true);
        let mut caller = Caller::new(&c, 1);
        let picks: Vec<usize> = (0..12)
            .map(|i| one_call(&mut caller, &c, i * 10 * MS, i as u32, &[1]).unwrap())
            .collect();
        // Replica 1 fails its first two calls (its breaker's minimum) and is
        // skipped from then on; 0 and 2 share its turns.
        assert_eq!(picks, [0, 1, 2, 0, 1, 2, 0, 2, 0, 2, 0, 2]);
        let states = |caller: &Caller| -> Vec<BreakerState> {
            let r = caller.replicas.as_ref().unwrap();
            r.breakers.iter().map(CircuitBreaker::state).collect()
        };
        let s = states(&caller);
        assert_eq!(s[0], BreakerState::Closed);
        assert!(matches!(s[1], BreakerState::Open { .. }), "{s:?}");
        assert_eq!(s[2], BreakerState::Closed);
        assert_eq!(
            caller.stats.breaker_rejected, 0,
            "never refused: others are closed"
        );
        assert!(caller.breaker.is_none(), "no breaker for the edge");
        // Once every replica has failed twice, all are open: refused locally.
        let mut now = 200 * MS;
        let mut refused = None;
        for slot in 20..40 {
            now += 10 * MS;
            if let Err(e) = one_call(&mut caller, &c, now, slot, &[0, 1, 2]) {
                refused = Some(e);
                break;
            }
        }
        assert_eq!(refused, Some(Refusal::BreakerOpen));
        assert_eq!(caller.stats.breaker_rejected, 1);
        // After the open time each is half open: its probe (a success)
        // closes it, and replica 1 takes its turn again.
        let later = now + 10_001 * MS;
        let mut picks: Vec<usize> = (0..3)
            .map(|i| one_call(&mut caller, &c, later, 50 + i, &[]).unwrap())
            .collect();
        picks.sort();
        assert_eq!(picks, [0, 1, 2]);
        assert_eq!(states(&caller), [BreakerState::Closed; 3]);
        // A probe whose hedge answered is given back: the breaker may probe
        // again instead of staying half open for ever.
        let mut b = per_replica(true).breaker.unwrap();
        b.record(0, true, MS, 0.0);
        b.record(0, true, MS, 0.0);
        assert!(b.allow(10_001 * MS) && !b.would_allow(10_001 * MS));
        b.forget();
        assert!(b.would_allow(10_001 * MS));
    }

    #[test]
    fn a_call_sent_before_its_replicas_breaker_opened_gives_back_no_probe() {
        // Replica 0's first call (slot 0) is still out when its next two
        // fail and open its breaker; 10 s later the breaker is half open and
        // its one probe goes out. The old call's cancellation, its hedge
        // answering, or its own success is no outcome of the probe's: the
        // probe is still out, the breaker still half open, and no second
        // probe may go.
        for end in ["cancelled", "hedge answers", "answers"] {
            let c = per_replica(true);
            let mut caller = Caller::new(&c, 1);
            caller.admit(&c, 0, NEVER, 1).unwrap();
            caller.on_sent(1);
            assert_eq!(caller.pick_replica(&c, 0, 0, 1, 0), 0);
            let picks: Vec<usize> = (1..7)
                .map(|i| one_call(&mut caller, &c, i * 10 * MS, i as u32, &[0]).unwrap())
                .collect();
            assert_eq!(picks, [1, 2, 0, 1, 2, 0]);
            let breaker = |caller: &Caller| caller.replicas.as_ref().unwrap().breakers[0].state();
            assert!(matches!(breaker(&caller), BreakerState::Open { .. }));
            let later = 10_100 * MS;
            let probe = loop {
                caller.admit(&c, later, NEVER, 1).unwrap();
                caller.on_sent(1);
                let slot = 9 + caller.stats.calls as u32;
                if caller.pick_replica(&c, later, slot, 1, 0) == 0 {
                    break slot;
                }
            };
            assert!(probe > 0);
            let half_open = BreakerState::HalfOpen {
                sent: 1,
                done: 0,
                failed: 0,
                slow: 0,
            };
            assert_eq!(breaker(&caller), half_open);
            match end {
                "cancelled" => caller.on_cancelled(0, 0, false),
                "hedge answers" => {
                    assert_eq!(caller.pick_replica(&c, later, 0, 1, 1), 1);
                    caller.on_ended(&c, later + MS, 0, false, Outcome::Ok);
                    caller.on_replica_answer(later + MS, 0, 0, 1, Outcome::Ok);
                }
                _ => {
                    caller.on_ended(&c, later + MS, 0, false, Outcome::Ok);
                    caller.on_replica_answer(later + MS, 0, 0, 0, Outcome::Ok);
                }
            }
            assert_eq!(breaker(&caller), half_open, "{end}");
            let usable = caller.replicas.as_ref().unwrap().usable(0, later + MS);
            assert!(!usable, "a second probe would go to replica 0");
        }
    }

    #[test]
    fn a_bulkhead_per_replica_skips_full_replicas_and_refuses_when_all_are() {
        let mut c = per_replica(false);
        c.breaker = None;
        c.replica_max_in_flight = 1;
        let mut caller = Caller::new(&c, 1);
        let send = |caller: &mut Caller, slot: u32| {
            caller.admit(&c, 0, NEVER, 1)?;
            caller.on_sent(1);
            Ok::<usize, Refusal>(caller.pick_replica(&c, 0, slot, 1, 0))
        };
        // One each; a fourth finds all three full and fails fast.
        assert_eq!(send(&mut caller, 0), Ok(0));
        assert_eq!(send(&mut caller, 1), Ok(1));
        assert_eq!(send(&mut caller, 2), Ok(2));
        assert_eq!(send(&mut caller, 3), Err(Refusal::BulkheadFull));
        assert!(!caller.hedge(&c, 0), "no replica has room for a hedge");
        // Replica 1 answers: the next request goes there, out of turn.
        caller.on_ended(&c, MS, 0, false, Outcome::Ok);
        caller.on_replica_answer(MS, 0, 1, 1, Outcome::Ok);
        assert_eq!(send(&mut caller, 4), Ok(1));
        let s = &caller.stats;
        assert_eq!((s.bulkhead_rejected, s.hedges_refused), (1, 1));
    }

    #[test]
    fn one_breaker_for_the_edge_keeps_feeding_a_bad_replica() {
        // The same calls with one breaker: a third fail (at most half of
        // its window), below its 60%.
        let c = per_replica(false);
        let mut caller = Caller::new(&c, 1);
        let picks: Vec<usize> = (0..12)
            .map(|i| one_call(&mut caller, &c, i * 10 * MS, i as u32, &[1]).unwrap())
            .collect();
        assert_eq!(picks.iter().filter(|r| **r == 1).count(), 4);
        assert_eq!(
            caller.breaker.as_ref().unwrap().state(),
            BreakerState::Closed
        );
    }

    /// Envoy's retry budget counts a retry from the decision, through its
    /// backoff, until its attempt ends or it is not sent after all; an
    /// attempt cancelled ends too.
    #[test]
    fn a_retry_counts_in_the_budget_through_its_backoff() {
        let mut c = call();
        c.retry_budget = Some(crate::policy::RetryBudget::new(20.0, 1));
        let mut caller = Caller::new(&c, 1);
        let retry = |caller: &mut Caller| caller.retry_decision(&c, 0, 1, NEVER, Outcome::Error, 0);
        // Two failures at once: the floor (1) holds one retry, in backoff.
        assert_eq!(retry(&mut caller), RetryDecision::RetryAfter(10 * MS));
        assert_eq!(
            retry(&mut caller),
            RetryDecision::GiveUp(GiveUp::RetryBudget)
        );
        // Its backoff over, it is refused at admission: the place is free.
        caller.retry_unsent();
        assert_eq!(retry(&mut caller), RetryDecision::RetryAfter(10 * MS));
        // Sent, it holds the place until it ends, cancelled or answered.
        caller.on_sent(2);
        assert_eq!(
            retry(&mut caller),
            RetryDecision::GiveUp(GiveUp::RetryBudget)
        );
        caller.on_cancelled(0, 0, true);
        assert_eq!(retry(&mut caller), RetryDecision::RetryAfter(10 * MS));
        assert_eq!(caller.stats.retry_budget_exhausted, 2);
    }

    #[test]
    fn retry_decision_runs_limit_deadline_then_backoff_and_admission() {
        let mut c = call();
        let mut caller = Caller::new(&c, 1);
        assert_eq!(
            caller.retry_decision(&c, 0, 3, NEVER, Outcome::Error, 0),
            RetryDecision::GiveUp(GiveUp::AttemptLimit)
        );
        assert_eq!(
            caller.retry_decision(&c, 50 * MS, 1, 50 * MS, Outcome::Error, 0),
            RetryDecision::GiveUp(GiveUp::Deadline)
        );
        assert_eq!(
            caller.retry_decision(&c, 0, 1, NEVER, Outcome::Rejected, 30 * MS),
            RetryDecision::RetryAfter(10 * MS)
        );
        c.honor_retry_after = true;
        assert_eq!(
            caller.retry_decision(&c, 0, 1, NEVER, Outcome::Rejected, 30 * MS),
            RetryDecision::RetryAfter(30 * MS),
            "an honoured Retry-After lengthens the backoff"
        );
        assert_eq!(
            caller.retry_decision(&c, 0, 1, NEVER, Outcome::Timeout, 30 * MS),
            RetryDecision::RetryAfter(10 * MS),
            "only a rejection carries a Retry-After"
        );
        c.budget_admission = true;
        // The backoff (10 ms) plus a full attempt (100 ms) pass the deadline.
        assert_eq!(
            caller.retry_decision(&c, 0, 1, 105 * MS, Outcome::Error, 0),
            RetryDecision::GiveUp(GiveUp::InsufficientDeadline)
        );
        // It reserves the next attempt's timeout: after a 10 ms first
        // attempt, a 200 ms second does not fit in 150 ms, a 100 ms third does.
        c.timeouts = vec![10 * MS, 200 * MS];
        assert_eq!(
            caller.retry_decision(&c, 0, 1, 150 * MS, Outcome::Error, 0),
            RetryDecision::GiveUp(GiveUp::InsufficientDeadline)
        );
        assert_eq!(
            caller.retry_decision(&c, 0, 2, 150 * MS, Outcome::Error, 0),
            RetryDecision::RetryAfter(10 * MS)
        );
        let s = &caller.stats;
        assert_eq!(
            (s.giveup_limit, s.giveup_deadline, s.insufficient_deadline),
            (1, 1, 2)
        );
    }

    #[test]
    fn a_caller_retries_only_its_classes_and_counts_only_its_failures() {
        use crate::model::OutcomeSet;
        use crate::policy::RetryThrottle;
        use crate::scenario::OutcomeClass::{Overload, Timeout};
        let mut c = call();
        c.retry_on = OutcomeSet::of(&[Timeout, Overload]);
        let mut caller = Caller::new(&c, 1);
        let decide =
            |caller: &mut Caller, outcome| caller.retry_decision(&c, 0, 1, NEVER, outcome, 0);
        assert_eq!(
            decide(&mut caller, Outcome::Error),
            RetryDecision::GiveUp(GiveUp::NotRetryable)
        );
        assert_eq!(
            decide(&mut caller, Outcome::Expired),
            RetryDecision::GiveUp(GiveUp::NotRetryable)
        );
        assert_eq!(
            decide(&mut caller, Outcome::Timeout),
            RetryDecision::RetryAfter(10 * MS)
        );
        assert_eq!(
            decide(&mut caller, Outcome::Rejected),
            RetryDecision::RetryAfter(10 * MS)
        );
        assert_eq!(caller.stats.giveup_not_retryable, 2);
        // gRFC A6: only the failures named count for the throttle; an
        // error is neither a failure nor a success.
        c.failure_on = OutcomeSet::of(&[Timeout]);
        c.throttle = Some(RetryThrottle::new(2.0, 0.5));
        let mut caller = Caller::new(&c, 1);
        for _ in 0..3 {
            caller.on_sent(1);
            caller.on_ended(&c, MS, 0, false, Outcome::Error);
        }
        assert!(caller.throttle.as_ref().unwrap().retry_allowed());
        caller.on_sent(1);
        caller.on_ended(&c, MS, 0, false, Outcome::Timeout);
        assert!(!caller.throttle.as_ref().unwrap().retry_allowed());
    }

    #[test]
    fn backoff_jitter_spreads_each_wait_around_it() {
        let mut c = call();
        c.backoff = Backoff::Fixed(100 * MS);
        c.backoff_jitter = 0.2;
        c.honor_retry_after = true;
        let mut caller = Caller::new(&c, 1);
        let waits: Vec<Nanos> = (0..200)
            .map(
                |_| match caller.retry_decision(&c, 0, 1, NEVER, Outcome::Rejected, 0) {
                    RetryDecision::RetryAfter(d) => d,
                    other => panic!("{other:?}"),
                },
            )
            .collect();
        assert!(waits.iter().all(|w| (80 * MS..=120 * MS).contains(w)));
        assert!(waits.iter().any(|w| *w < 85 * MS) && waits.iter().any(|w| *w > 115 * MS));
        // An honoured Retry-After is spread the same way.
        let after = caller.retry_decision(&c, 0, 1, NEVER, Outcome::Rejected, 800 * MS);
        let RetryDecision::RetryAfter(d) = after else {
            panic!("{after:?}")
        };
        assert!((640 * MS..=960 * MS).contains(&d), "{d}");
    }

    #[test]
    fn a_hedge_stays_within_its_share_of_calls() {
        let mut c = call();
        c.hedge_budget = 0.5;
        c.hedge_delay = 7 * MS;
        let mut caller = Caller::new(&c, 1);
        assert_eq!(caller.hedge_delay(&c), 7 * MS);
        caller.on_sent(1);
        assert!(!caller.hedge(&c, 0), "one hedge per call would be 100%");
        caller.on_sent(1);
        assert!(caller.hedge(&c, 0));
        let s = &caller.stats;
        assert_eq!((s.calls, s.hedges_sent, s.hedges_refused), (3, 1, 1));
        // Retry throttling that stops retries stops hedges too (gRFC A6):
        // 10 tokens, 5 failures leave 5, not above half.
        c.throttle = Some(crate::policy::RetryThrottle::new(10.0, 0.1));
        let mut caller = Caller::new(&c, 1);
        for _ in 0..5 {
            caller.on_sent(1);
        }
        assert!(caller.hedge(&c, 0));
        for _ in 0..5 {
            caller.on_ended(&c, 0, 0, false, Outcome::Error);
        }
        caller.on_sent(1);
        assert!(!caller.hedge(&c, 0));
        assert_eq!(caller.stats.hedges_refused, 1);
    }

    #[test]
    fn attempt_end_is_the_timeout_cut_by_the_limit_and_the_budget_share() {
        let mut c = call();
        c.margin = 10 * MS;
        assert_eq!(attempt_end(&c, 0, NEVER, 1, 0), 100 * MS);
        assert_eq!(attempt_end(&c, 0, 60 * MS, 1, 0), 50 * MS);
        c.budget_share = 0.5;
        assert_eq!(attempt_end(&c, 0, 210 * MS, 1, 0), 100 * MS);
        assert_eq!(attempt_end(&c, 0, 110 * MS, 1, 0), 50 * MS);
        assert_eq!(
            attempt_end(&c, 0, NEVER, 1, 0),
            100 * MS,
            "no deadline, no share"
        );
        // The share is of the budget on arrival: a hop that arrived at 0
        // with 200 ms to its limit and worked 40 ms calls for 100 ms, not
        // half of the 160 ms left: its own work came out of its own half.
        assert_eq!(attempt_end(&c, 40 * MS, 210 * MS, 1, 0), 140 * MS);
        // Per-attempt timeouts: the first attempt's, then the rest's.
        c.budget_share = 1.0;
        c.timeouts = vec![600 * MS];
        assert_eq!(attempt_end(&c, 0, NEVER, 1, 0), 600 * MS);
        assert_eq!(attempt_end(&c, 0, NEVER, 2, 0), 100 * MS);
    }

    #[test]
    fn cancellation_follows_the_mode() {
        let mut c = call();
        let outcomes = [Outcome::Ok, Outcome::Timeout, Outcome::Error];
        let cancels = |c: &CallModel| outcomes.map(|o| cancels_copies(c, o));
        c.cancel = CancelMode::Never;
        assert_eq!(cancels(&c), [false, false, false]);
        c.cancel = CancelMode::HedgeLosers;
        assert_eq!(cancels(&c), [true, false, true]);
        c.cancel = CancelMode::Always;
        assert_eq!(cancels(&c), [true, true, true]);
    }
}
