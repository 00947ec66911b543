//! The story of one user request: every attempt, outcome and retry
//! decision made on its behalf at every level of the chain, as
//! [`crate::trace`] records it. This is how a single run is explained
//! (the budget-admission experiment prints one); sweeps do not trace.

use crate::caller::{GiveUp, Outcome, Refusal};
use crate::job::{JobKind, JobRef, Pending};
use crate::server::{Dropped, Rejection};
use serde::Serialize;

/// One step of the traced request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceStep {
    /// Simulated time of the step (seconds).
    pub at_s: f64,
    /// Time since the traced request arrived (seconds), exact in nanoseconds.
    pub t_s: f64,
    /// Who acted: `client` or the tier whose job this is.
    pub who: String,
    /// The job that acted, numbered in the order the trace meets them: 0 is
    /// the user request itself; each request a tier handles for it (every
    /// attempt, retry and hedged copy) and each fan-out branch is a job of
    /// its own.
    pub job: u32,
    /// The job whose attempt this one serves (the caller that sent the
    /// request, or the parent of a fan-out branch); none for the user
    /// request.
    pub serves: Option<u32>,
    /// The attempt the step belongs to: a caller's own steps (`send`,
    /// `hedge`, how an attempt ended, `backoff`, `stop: ...`), its own
    /// attempt (0 before the first); what a tier does to a request
    /// (`rejected: ...`, `dropped: ...`, `abandoned`, `cancelled`, `lost:
    /// ...`, `reply ...`, at the horizon), the attempt of the request's
    /// caller that it serves.
    pub attempt: u32,
    /// What happened:
    /// - `send`, `hedge`: an attempt (or its hedged copy) leaves;
    /// - `ok`, `timeout`, `rejected`, `expired`, `error`, `refused`: how an
    ///   attempt ended;
    /// - `backoff`: a retry is due after the backoff;
    /// - `stop: <reason>`: the caller gives up (`attempt_limit`, `deadline`,
    ///   `insufficient_deadline`, `no_time_left`, `margin_exhausted`, `not_retryable`,
    ///   `retry_throttled`, `retry_budget`), or fails fast locally
    ///   (`breaker_open`, `bulkhead_full`, `throttled_locally`) before its
    ///   retry decision;
    /// - `abandoned`: cooperative cancellation stopped the tier's own work;
    /// - `cancelled`: its caller stopped waiting for it (a fan-out branch
    ///   after a required one failed, the losing copy of a hedge, or, with
    ///   `cancel = "always"`, a request whose attempt ended or whose caller
    ///   was cancelled);
    /// - `queued`: the request waits at its tier (no slot is free to it);
    ///   `start`: it takes a slot after waiting (a request that starts on
    ///   arrival has neither);
    /// - `rejected: queue_full`, `rejected: shed`, `rejected: rate_limited`:
    ///   the tier turns the request away on arrival;
    /// - `dropped: expired`, `dropped: codel`, `dropped: cancelled`: the
    ///   tier drops the queued request when it would start;
    /// - `refused: down`, `lost: down`: it reaches a tier instance that is
    ///   down (refusing connections, or a black hole); `lost: crash`: the
    ///   instance crashed with it queued or in service;
    /// - `in transit at the horizon`, `queued at the horizon` (or in a
    ///   rate limiter's bucket), `in service at the horizon`: the run
    ///   ended with the request still on its way to its tier (the hop's
    ///   latency), or at it;
    /// - `reply ok`, `reply error`: a tier answers its caller;
    /// - `branch ok`, `branch failed`: a fan-out branch ends;
    /// - `user ok`, `user failed`: the user request ends.
    pub event: String,
    /// The acting job's deadline less the time: what is left of the budget
    /// it received (none when no deadline was propagated to it).
    pub remaining_s: Option<f64>,
}

/// Recording state of the engine: the user traced and its steps so far.
pub(crate) struct Tracer {
    pub user: u32,
    /// When the traced request arrived.
    pub arrived: crate::time::Nanos,
    pub steps: Vec<TraceStep>,
    /// The jobs met so far, in order: a job's number is its place here.
    jobs: Vec<JobRef>,
}

impl Tracer {
    pub fn new(user: u32) -> Tracer {
        Tracer {
            user,
            arrived: 0,
            steps: Vec::new(),
            jobs: Vec::new(),
        }
    }

    /// `job`'s number in the trace, the next one if it is met first. (A
    /// reference carries its slot's generation: a slot used again is
    /// another job.)
    pub fn number(&mut self, job: JobRef) -> u32 {
        let at = self.jobs.iter().position(|j| *j == job);
        at.unwrap_or_else(|| {
            self.jobs.push(job);
            self.jobs.len() - 1
        }) as u32
    }
}

/// A step the engine records, named once here: the `event` of a
/// [`TraceStep`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Step {
    Send,
    Hedge,
    /// How an attempt ended.
    Ended(Outcome),
    /// The attempt was not sent.
    Refused(Refusal),
    Backoff,
    GaveUp(GiveUp),
    Cancelled,
    Abandoned,
    /// The request waits at its tier.
    Queued,
    /// The request takes a slot after waiting.
    Started,
    /// A tier turns the request away on arrival.
    Rejected(Rejection),
    /// A tier drops the queued request when it would start.
    Dropped(Dropped),
    /// The request reaches a tier instance that is down: refused, or lost
    /// in its black hole (`false`).
    Down(bool),
    /// The tier instance crashed with the request queued or in service.
    LostInCrash,
    /// The run ended with the request on its way, queued or in service.
    AtHorizon(Pending),
    /// A job has its final answer, `ok` or not.
    Answered(JobKind, bool),
}

impl Step {
    /// Whether it is something done to a request at its tier, not a
    /// caller's own step.
    pub fn at_tier(self) -> bool {
        matches!(
            self,
            Step::Queued
                | Step::Started
                | Step::Rejected(_)
                | Step::Dropped(_)
                | Step::Down(_)
                | Step::LostInCrash
                | Step::AtHorizon(_)
                | Step::Abandoned
                | Step::Cancelled
                | Step::Answered(JobKind::Request { .. }, _)
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Step::Send => "send",
            Step::Hedge => "hedge",
            Step::Ended(outcome) => outcome.name(),
            Step::Refused(refusal) => refusal.name(),
            Step::Backoff => "backoff",
            Step::GaveUp(why) => why.name(),
            Step::Cancelled => "cancelled",
            Step::Abandoned => "abandoned",
            Step::Queued => "queued",
            Step::Started => "start",
            Step::Rejected(why) => why.name(),
            Step::Dropped(why) => why.name(),
            Step::Down(true) => "refused: down",
            Step::Down(false) => "lost: down",
            Step::LostInCrash => "lost: crash",
            Step::AtHorizon(Pending::InTransit) => "in transit at the horizon",
            Step::AtHorizon(Pending::Queued) => "queued at the horizon",
            Step::AtHorizon(Pending::InService) => "in service at the horizon",
            Step::Answered(JobKind::User, true) => "user ok",
            Step::Answered(JobKind::User, false) => "user failed",
            Step::Answered(JobKind::Branch, true) => "branch ok",
            Step::Answered(JobKind::Branch, false) => "branch failed",
            Step::Answered(JobKind::Request { .. }, true) => "reply ok",
            Step::Answered(JobKind::Request { .. }, false) => "reply error",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Users read these names (`sweep one --trace`) and match on them.
    #[test]
    fn step_names_are_the_documented_ones() {
        let steps = [
            Step::Send,
            Step::Hedge,
            Step::Ended(Outcome::Ok),
            Step::Ended(Outcome::Timeout),
            Step::Ended(Outcome::Rejected),
            Step::Ended(Outcome::Expired),
            Step::Ended(Outcome::Error),
            Step::Ended(Outcome::Refused),
            Step::Backoff,
            Step::GaveUp(GiveUp::AttemptLimit),
            Step::GaveUp(GiveUp::Deadline),
            Step::GaveUp(GiveUp::InsufficientDeadline),
            Step::Refused(Refusal::NoTimeLeft),
            Step::Refused(Refusal::MarginExhausted),
            Step::Refused(Refusal::InsufficientDeadline),
            Step::GaveUp(GiveUp::RetryThrottled),
            Step::GaveUp(GiveUp::RetryBudget),
            Step::Refused(Refusal::BreakerOpen),
            Step::Refused(Refusal::BulkheadFull),
            Step::Refused(Refusal::ThrottledLocally),
            Step::Abandoned,
            Step::Cancelled,
            Step::Queued,
            Step::Started,
            Step::Rejected(Rejection::QueueFull),
            Step::Rejected(Rejection::Shed),
            Step::Rejected(Rejection::RateLimited),
            Step::Dropped(Dropped::Expired),
            Step::Dropped(Dropped::CoDel),
            Step::Dropped(Dropped::Cancelled),
            Step::Down(true),
            Step::Down(false),
            Step::LostInCrash,
            Step::AtHorizon(Pending::InTransit),
            Step::AtHorizon(Pending::Queued),
            Step::AtHorizon(Pending::InService),
            Step::Answered(JobKind::Request { server: 0 }, true),
            Step::Answered(JobKind::Request { server: 0 }, false),
            Step::Answered(JobKind::Branch, true),
            Step::Answered(JobKind::Branch, false),
            Step::Answered(JobKind::User, true),
            Step::Answered(JobKind::User, false),
        ];
        let names: Vec<&str> = steps.iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            [
                "send",
                "hedge",
                "ok",
                "timeout",
                "rejected",
                "expired",
                "error",
                "refused",
                "backoff",
                "stop: attempt_limit",
                "stop: deadline",
                "stop: insufficient_deadline",
                "stop: no_time_left",
                "stop: margin_exhausted",
                "stop: insufficient_deadline",
                "stop: retry_throttled",
                "stop: retry_budget",
                "breaker_open",
                "bulkhead_full",
                "throttled_locally",
                "abandoned",
                "cancelled",
                "queued",
                "start",
                "rejected: queue_full",
                "rejected: shed",
                "rejected: rate_limited",
                "dropped: expired",
                "dropped: codel",
                "dropped: cancelled",
                "refused: down",
                "lost: down",
                "lost: crash",
                "in transit at the horizon",
                "queued at the horizon",
                "in service at the horizon",
                "reply ok",
                "reply error",
                "branch ok",
                "branch failed",
                "user ok",
                "user failed",
            ]
        );
    }
}
