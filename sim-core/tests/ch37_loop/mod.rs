//! ch37 (client -> gateway -> svc_a -> svc_b, the four presets) written a
//! second time, as a minimal event loop: `bench/peers/ch37_heapq.py` line
//! for line, with the engine's draws (`sim_core::random::Stream`, the
//! streams named as the engine names them) and a slab of jobs whose slots
//! are reused. It keeps no statistics but the events, users and successes,
//! and cancels no timer (a stale one is popped and passed over), as the
//! Python loop does. It takes the engine's sample path, which
//! `ch37_reference.rs` checks; `bench/peers` (`ch37_loop`) times it beside
//! the engine as the floor of the main job.

use sim_core::random::Stream;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const NEVER: u64 = 1 << 62;
const S: u64 = 1_000_000_000;
/// The client's jobs call no server: their `server` is this.
const CLIENT: u8 = u8::MAX;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Arrival,
    Timeout,
    Retry,
    WorkDone,
    Reply,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Ok,
    TimedOut,
    Rejected,
    Expired,
    Error,
}

/// A job's slot and the generation it had when referred to.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Ref {
    idx: u32,
    generation: u32,
}

const NO_REF: Ref = Ref {
    idx: u32::MAX,
    generation: 0,
};

/// One call edge: timeout, attempts, backoff, deadline propagation and the
/// gRPC retry throttle (milli-tokens, as the engine keeps them).
struct Caller {
    to: usize,
    /// Its backoff draws, the stream the engine names for this caller.
    rng: Stream,
    timeout: u64,
    max_attempts: u16,
    jitter: bool,
    base: u64,
    cap: u64,
    propagate: bool,
    throttle: bool,
    tokens: i64,
    max: i64,
    ratio: i64,
}

impl Caller {
    #[allow(clippy::too_many_arguments)]
    fn new(
        seed: u64,
        name: &str,
        to: usize,
        timeout_s: f64,
        retries: u16,
        jitter: bool,
        base_s: f64,
        propagate: bool,
        throttle: bool,
    ) -> Caller {
        Caller {
            to,
            rng: Stream::new(seed, &format!("backoff.{name}")),
            timeout: (timeout_s * S as f64).round() as u64,
            max_attempts: retries + 1,
            jitter,
            base: (base_s * S as f64).round() as u64,
            cap: S,
            propagate,
            throttle,
            tokens: 10_000,
            max: 10_000,
            ratio: 100,
        }
    }
}

struct Server {
    slots: u32,
    queue_cap: Option<usize>,
    drop_expired: bool,
    mean: f64,
    /// The caller it calls through, or none (a leaf).
    edge: Option<usize>,
    busy: u32,
    queue: VecDeque<Ref>,
    filling: bool,
}

impl Server {
    fn new(
        slots: u32,
        queue_cap: Option<usize>,
        drop_expired: bool,
        mean_s: f64,
        edge: Option<usize>,
    ) -> Server {
        Server {
            slots,
            queue_cap,
            drop_expired,
            mean: mean_s * S as f64,
            edge,
            busy: 0,
            queue: VecDeque::new(),
            filling: false,
        }
    }
}

#[derive(Clone, Copy)]
struct Job {
    generation: u32,
    live: bool,
    waiting: bool,
    edge: u8,
    server: u8,
    attempts: u16,
    caller_attempt: u16,
    caller: Ref,
    deadline: u64,
    arrived: u64,
    started: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    at: u64,
    seq: u64,
    kind: Kind,
    job: Ref,
    attempt: u16,
    outcome: Outcome,
}

fn ch37(preset: &str, seed: u64) -> (Vec<Caller>, Vec<Server>) {
    let deadline = preset != "naive";
    let budget = matches!(preset, "deadline_budget" | "protected");
    let protected = preset == "protected";
    let callers = vec![
        Caller::new(seed, "client", 0, 1.0, 2, false, 0.05, deadline, false),
        Caller::new(
            seed,
            "gateway",
            1,
            1.0,
            if budget { 0 } else { 3 },
            true,
            0.025,
            deadline,
            false,
        ),
        Caller::new(
            seed,
            "svc_a",
            2,
            if deadline { 0.3 } else { 1.0 },
            if budget { 2 } else { 3 },
            true,
            0.025,
            deadline,
            budget,
        ),
    ];
    let servers = vec![
        Server::new(512, None, deadline, 0.0, Some(1)),
        Server::new(128, protected.then_some(64), deadline, 0.0, Some(2)),
        Server::new(16, protected.then_some(16), deadline, 0.020, None),
    ];
    (callers, servers)
}

pub struct Sim {
    callers: Vec<Caller>,
    servers: Vec<Server>,
    arrivals: Stream,
    service: Stream,
    heap: BinaryHeap<Reverse<Event>>,
    /// With `Some`, attempt timeouts wait in a FIFO per call edge (pushed
    /// in time order; one cut short by a deadline goes to the heap), as the
    /// engine's lanes: a timer whose attempt has ended is passed over at
    /// the front without a heap operation.
    lanes: Option<Vec<VecDeque<Event>>>,
    jobs: Vec<Job>,
    free: Vec<u32>,
    seq: u64,
    now: u64,
    pub events: u64,
    pub users: u64,
    pub users_ok: u64,
    horizon: u64,
    arrivals_end: u64,
    mean_gap: f64,
    /// svc_b x10 from 10 s to 30 s.
    slow: (u64, u64, f64),
}

impl Sim {
    pub fn new(preset: &str, seed: u64, lanes: bool) -> Sim {
        let (callers, servers) = ch37(preset, seed);
        let lanes = lanes.then(|| callers.iter().map(|_| VecDeque::new()).collect());
        Sim {
            callers,
            servers,
            arrivals: Stream::new(seed, "arrivals"),
            service: Stream::new(seed, "service.svc_b"),
            heap: BinaryHeap::new(),
            lanes,
            jobs: Vec::new(),
            free: Vec::new(),
            seq: 0,
            now: 0,
            events: 0,
            users: 0,
            users_ok: 0,
            horizon: 70 * S,
            arrivals_end: 60 * S,
            mean_gap: S as f64 / 400.0,
            slow: (10 * S, 30 * S, 10.0),
        }
    }

    fn schedule(&mut self, at: u64, kind: Kind, job: Ref, attempt: u16, outcome: Outcome) {
        self.seq += 1;
        let seq = self.seq;
        self.heap.push(Reverse(Event {
            at,
            seq,
            kind,
            job,
            attempt,
            outcome,
        }));
    }

    /// An attempt's timeout through `edge`: into its lane when there are
    /// lanes and it is no earlier than the lane's last.
    fn schedule_timeout(&mut self, edge: usize, at: u64, job: Ref, attempt: u16) {
        if let Some(lane) = self.lanes.as_mut().map(|l| &mut l[edge])
            && lane.back().is_none_or(|last| last.at <= at)
        {
            self.seq += 1;
            lane.push_back(Event {
                at,
                seq: self.seq,
                kind: Kind::Timeout,
                job,
                attempt,
                outcome: Outcome::Ok,
            });
            return;
        }
        self.schedule(at, Kind::Timeout, job, attempt, Outcome::Ok);
    }

    /// The earliest event of the heap and the lanes.
    fn pop(&mut self) -> Option<Event> {
        let heap_first = self.heap.peek().map(|Reverse(e)| (e.at, e.seq));
        let mut best: Option<(usize, (u64, u64))> = None;
        for (i, lane) in self.lanes.iter().flatten().enumerate() {
            if let Some(e) = lane.front()
                && best.is_none_or(|(_, key)| (e.at, e.seq) < key)
            {
                best = Some((i, (e.at, e.seq)));
            }
        }
        match (best, heap_first) {
            (Some((i, key)), h) if h.is_none_or(|h| key < h) => {
                self.lanes.as_mut().and_then(|l| l[i].pop_front())
            }
            _ => self.heap.pop().map(|Reverse(e)| e),
        }
    }

    fn alloc(&mut self, mut job: Job) -> Ref {
        match self.free.pop() {
            Some(idx) => {
                job.generation = self.jobs[idx as usize].generation.wrapping_add(1);
                self.jobs[idx as usize] = job;
                Ref {
                    idx,
                    generation: job.generation,
                }
            }
            None => {
                self.jobs.push(job);
                Ref {
                    idx: self.jobs.len() as u32 - 1,
                    generation: 0,
                }
            }
        }
    }

    fn release(&mut self, r: Ref) {
        self.jobs[r.idx as usize].live = false;
        self.free.push(r.idx);
    }

    fn job(&mut self, r: Ref) -> Option<&mut Job> {
        (self.jobs.get_mut(r.idx as usize)).filter(|j| j.live && j.generation == r.generation)
    }

    fn next_arrival(&mut self) {
        let gap = self.arrivals.exponential(self.mean_gap).round() as u64;
        let at = self.now + gap;
        if at < self.arrivals_end {
            self.schedule(at, Kind::Arrival, NO_REF, 0, Outcome::Ok);
        }
    }

    pub fn run(&mut self) {
        self.next_arrival();
        while let Some(e) = self.pop() {
            if e.at >= self.horizon {
                break;
            }
            self.now = e.at;
            self.events += 1;
            match e.kind {
                Kind::Arrival => {
                    self.next_arrival();
                    self.users += 1;
                    let user = self.alloc(Job {
                        generation: 0,
                        live: true,
                        waiting: false,
                        edge: 0,
                        server: CLIENT,
                        attempts: 0,
                        caller_attempt: 0,
                        caller: NO_REF,
                        deadline: NEVER,
                        arrived: e.at,
                        started: NEVER,
                    });
                    self.start_attempt(user);
                }
                Kind::Timeout | Kind::Reply => {
                    let outcome = match e.kind {
                        Kind::Timeout => Outcome::TimedOut,
                        _ => e.outcome,
                    };
                    self.reply(e.job, e.attempt, outcome);
                }
                Kind::Retry => {
                    if self.job(e.job).is_some() {
                        self.start_attempt(e.job);
                    }
                }
                Kind::WorkDone => self.work_done(e.job),
            }
        }
    }

    fn start_attempt(&mut self, r: Ref) {
        let now = self.now;
        let j = self.jobs[r.idx as usize];
        if now >= j.deadline {
            self.finish(r, false);
            return;
        }
        let call = &self.callers[j.edge as usize];
        let (to, propagate) = (call.to, call.propagate);
        let attempt = j.attempts + 1;
        let end = (now + call.timeout).min(j.deadline);
        let jm = &mut self.jobs[r.idx as usize];
        jm.attempts = attempt;
        jm.waiting = true;
        // Before the request is sent: a reply at the attempt's end loses.
        self.schedule_timeout(j.edge as usize, end, r, attempt);
        let edge = self.servers[to].edge.map_or(u8::MAX, |e| e as u8);
        let req = self.alloc(Job {
            generation: 0,
            live: true,
            waiting: false,
            edge,
            server: to as u8,
            attempts: 0,
            caller_attempt: attempt,
            caller: r,
            deadline: if propagate { end } else { NEVER },
            arrived: NEVER,
            started: NEVER,
        });
        self.arrive(req);
    }

    fn arrive(&mut self, req: Ref) {
        let now = self.now;
        let j = self.jobs[req.idx as usize];
        let srv = &mut self.servers[j.server as usize];
        let can_start = srv.busy < srv.slots && srv.queue.is_empty();
        if !can_start && srv.queue_cap.is_some_and(|cap| srv.queue.len() >= cap) {
            self.release(req);
            // Rejected after the tier's reject latency (0.5 ms).
            let at = now + 500_000;
            self.schedule(
                at,
                Kind::Reply,
                j.caller,
                j.caller_attempt,
                Outcome::Rejected,
            );
            return;
        }
        self.jobs[req.idx as usize].arrived = now;
        if can_start {
            self.start_job(j.server as usize, req);
        } else {
            self.servers[j.server as usize].queue.push_back(req);
        }
    }

    fn start_job(&mut self, s: usize, req: Ref) {
        let now = self.now;
        self.jobs[req.idx as usize].started = now;
        let srv = &mut self.servers[s];
        srv.busy += 1;
        if srv.mean == 0.0 {
            self.work_done(req);
            return;
        }
        let (start, end, factor) = self.slow;
        let f = if srv.edge.is_none() && start <= now && now < end {
            factor
        } else {
            1.0
        };
        let work = (self.service.exponential(srv.mean) * f).round() as u64;
        self.schedule(now + work, Kind::WorkDone, req, 0, Outcome::Ok);
    }

    fn work_done(&mut self, req: Ref) {
        let s = self.jobs[req.idx as usize].server as usize;
        if self.servers[s].edge.is_none() {
            self.finish(req, true);
        } else {
            self.start_attempt(req);
        }
    }

    fn attempt_ended(&mut self, r: Ref, outcome: Outcome) {
        let now = self.now;
        let j = &mut self.jobs[r.idx as usize];
        j.waiting = false;
        let (attempts, deadline) = (j.attempts, j.deadline);
        let call = &mut self.callers[j.edge as usize];
        if call.throttle {
            call.tokens = match outcome {
                Outcome::Ok => (call.tokens + call.ratio).min(call.max),
                _ => (call.tokens - 1000).max(0),
            };
        }
        if outcome == Outcome::Ok {
            self.finish(r, true);
            return;
        }
        if attempts >= call.max_attempts
            || now >= deadline
            || (call.throttle && call.tokens * 2 <= call.max)
        {
            self.finish(r, false);
            return;
        }
        let wait = match call.jitter {
            false => call.base,
            true => {
                let hi = (call.base << (attempts - 1)).min(call.cap);
                call.rng.below_or_eq(hi)
            }
        };
        self.schedule(now + wait, Kind::Retry, r, 0, Outcome::Ok);
    }

    fn finish(&mut self, r: Ref, ok: bool) {
        let j = self.jobs[r.idx as usize];
        self.release(r);
        if j.server == CLIENT {
            self.users_ok += u64::from(ok);
            return;
        }
        self.servers[j.server as usize].busy -= 1;
        // FIFO dispatch: the freed slot is refilled before the reply goes up.
        self.fill_slots(j.server as usize);
        let outcome = if ok { Outcome::Ok } else { Outcome::Error };
        self.reply(j.caller, j.caller_attempt, outcome);
    }

    fn reply(&mut self, caller: Ref, attempt: u16, outcome: Outcome) {
        if self
            .job(caller)
            .is_some_and(|c| c.waiting && c.attempts == attempt)
        {
            self.attempt_ended(caller, outcome);
        }
    }

    fn fill_slots(&mut self, s: usize) {
        if self.servers[s].filling {
            return;
        }
        self.servers[s].filling = true;
        loop {
            let srv = &mut self.servers[s];
            if srv.busy >= srv.slots {
                break;
            }
            let Some(req) = srv.queue.pop_front() else {
                break;
            };
            let j = self.jobs[req.idx as usize];
            if self.servers[s].drop_expired && self.now >= j.deadline {
                self.release(req);
                self.reply(j.caller, j.caller_attempt, Outcome::Expired);
            } else {
                self.start_job(s, req);
            }
        }
        self.servers[s].filling = false;
    }
}
