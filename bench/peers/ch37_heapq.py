"""ch37 (README, MODEL.md 2) as a plain standard-library Python event loop.

A yardstick for the engine's speed: the same model and rules as the
project's engine for what ch37's four presets use (client -> gateway ->
svc_a -> svc_b; timeouts, retries with fixed or full-jitter backoff,
deadline propagation, drop-expired, the svc_a retry throttle, queue caps;
FIFO dispatch, replies up the chain as direct calls), one heapq of
(time, insertion number) for the events, Python's own random numbers (so
the counts agree with the engine's statistically, not exactly).

    python3 bench/peers/ch37_heapq.py --preset protected --reps 5

prints the events, users and successes of each run and the median CPU time
per run, to set beside `cargo bench -p sim-core`'s ms/run in the same minutes.
"""

import argparse
import heapq
import math
import random
import time
from collections import deque

NEVER = 1 << 62
S = 1_000_000_000
ARRIVAL, TIMEOUT, RETRY, WORK_DONE, REPLY = range(5)
OK, TIMED_OUT, REJECTED, EXPIRED, ERROR = range(5)


class Caller:
    """One call edge: timeout, attempts, backoff, deadline propagation and
    the gRPC retry throttle (milli-tokens, as the engine keeps them)."""

    def __init__(self, to, timeout_s, retries, backoff, base_s, propagate, throttle):
        self.to = to
        self.timeout = round(timeout_s * S)
        self.max_attempts = retries + 1
        self.jitter = backoff == "full_jitter"
        self.base = round(base_s * S)
        self.cap = S  # backoff_cap_s = 1
        self.propagate = propagate
        self.throttle = throttle
        self.tokens = self.max = 10_000
        self.ratio = 100

    def backoff(self, n, rng):
        if not self.jitter:
            return self.base
        return rng.randint(0, min(self.base << (n - 1), self.cap))


class Server:
    def __init__(self, slots, queue_cap, drop_expired, mean_s, edge):
        self.slots = slots
        self.queue_cap = queue_cap
        self.drop_expired = drop_expired
        self.mean = mean_s * S
        self.edge = edge  # the caller it calls through, or None (a leaf)
        self.busy = 0
        self.queue = deque()
        self.filling = False


class Job:
    __slots__ = ("live", "user", "edge", "server", "caller", "caller_attempt",
                 "deadline", "arrived", "started", "attempts", "waiting")

    def __init__(self, user, edge, server, caller, caller_attempt, deadline, now):
        self.live = True
        self.user = user
        self.edge = edge
        self.server = server
        self.caller = caller
        self.caller_attempt = caller_attempt
        self.deadline = deadline
        self.arrived = now
        self.started = NEVER
        self.attempts = 0
        self.waiting = False


def ch37(preset):
    deadline = preset != "naive"
    budget = preset in ("deadline_budget", "protected")
    protected = preset == "protected"
    callers = [
        Caller(0, 1.0, 2, "fixed", 0.05, deadline, False),
        Caller(1, 1.0, 0 if budget else 3, "full_jitter", 0.025, deadline, False),
        Caller(2, 0.3 if deadline else 1.0, 2 if budget else 3, "full_jitter", 0.025,
               deadline, budget),
    ]
    servers = [
        Server(512, None, deadline, 0.0, 1),
        Server(128, 64 if protected else None, deadline, 0.0, 2),
        Server(16, 16 if protected else None, deadline, 0.020, None),
    ]
    return callers, servers


class Sim:
    def __init__(self, preset, seed):
        self.callers, self.servers = ch37(preset)
        self.rng = random.Random(seed)
        self.heap = []
        self.seq = 0
        self.now = 0
        self.events = self.users = self.users_ok = 0
        self.horizon = 70 * S
        self.arrivals_end = 60 * S
        self.mean_gap = S / 400.0
        self.slow = (10 * S, 30 * S, 10.0)  # svc_b x10 from 10 s to 30 s

    def schedule(self, at, kind, job=None, attempt=0, outcome=OK):
        self.seq += 1
        heapq.heappush(self.heap, (at, self.seq, kind, job, attempt, outcome))

    def next_arrival(self):
        gap = -self.mean_gap * math.log(1.0 - self.rng.random())
        at = self.now + round(gap)
        if at < self.arrivals_end:
            self.schedule(at, ARRIVAL)

    def run(self):
        self.next_arrival()
        heap = self.heap
        while heap:
            at, _, kind, job, attempt, outcome = heapq.heappop(heap)
            if at >= self.horizon:
                break
            self.now = at
            self.events += 1
            if kind == ARRIVAL:
                self.next_arrival()
                self.users += 1
                self.start_attempt(Job(self.users, 0, None, None, 0, NEVER, at))
            elif kind == TIMEOUT or kind == REPLY:
                if job.live and job.waiting and job.attempts == attempt:
                    self.attempt_ended(job, TIMED_OUT if kind == TIMEOUT else outcome)
            elif kind == RETRY:
                if job.live:
                    self.start_attempt(job)
            else:  # WORK_DONE
                self.work_done(job)

    def start_attempt(self, job):
        call = self.callers[job.edge]
        now = self.now
        if now >= job.deadline:
            self.finish(job, False)
            return
        attempt = job.attempts + 1
        end = min(now + call.timeout, job.deadline)
        job.attempts = attempt
        job.waiting = True
        # Before the request is sent: a reply at the attempt's end loses.
        self.schedule(end, TIMEOUT, job, attempt)
        s = call.to
        req = Job(job.user, self.servers[s].edge, s, job, attempt,
                  end if call.propagate else NEVER, NEVER)
        self.arrive(req)

    def arrive(self, req):
        srv = self.servers[req.server]
        can_start = srv.busy < srv.slots and not srv.queue
        if not can_start and srv.queue_cap is not None and len(srv.queue) >= srv.queue_cap:
            req.live = False
            # Rejected after the tier's reject latency (0.5 ms).
            self.schedule(self.now + 500_000, REPLY, req.caller, req.caller_attempt, REJECTED)
            return
        req.arrived = self.now
        if can_start:
            self.start_job(srv, req)
        else:
            srv.queue.append(req)

    def start_job(self, srv, req):
        now = self.now
        req.started = now
        srv.busy += 1
        if srv.mean == 0.0:
            self.work_done(req)
            return
        start, end, factor = self.slow
        f = factor if (srv.edge is None and start <= now < end) else 1.0
        work = round(-srv.mean * math.log(1.0 - self.rng.random()) * f)
        self.schedule(now + work, WORK_DONE, req)

    def work_done(self, req):
        if self.servers[req.server].edge is None:
            self.finish(req, True)
        else:
            self.start_attempt(req)

    def attempt_ended(self, job, outcome):
        job.waiting = False
        call = self.callers[job.edge]
        if call.throttle:
            if outcome == OK:
                call.tokens = min(call.tokens + call.ratio, call.max)
            else:
                call.tokens = max(call.tokens - 1000, 0)
        if outcome == OK:
            self.finish(job, True)
            return
        if (job.attempts >= call.max_attempts or self.now >= job.deadline
                or (call.throttle and call.tokens * 2 <= call.max)):
            self.finish(job, False)
            return
        self.schedule(self.now + call.backoff(job.attempts, self.rng), RETRY, job)

    def finish(self, job, ok):
        job.live = False
        if job.server is None:
            self.users_ok += ok
            return
        srv = self.servers[job.server]
        srv.busy -= 1
        # FIFO dispatch: the freed slot is refilled before the reply goes up.
        self.fill_slots(srv)
        self.reply(job.caller, job.caller_attempt, OK if ok else ERROR)

    def reply(self, caller, attempt, outcome):
        if caller.live and caller.waiting and caller.attempts == attempt:
            self.attempt_ended(caller, outcome)

    def fill_slots(self, srv):
        if srv.filling:
            return
        srv.filling = True
        while srv.busy < srv.slots and srv.queue:
            req = srv.queue.popleft()
            if srv.drop_expired and self.now >= req.deadline:
                req.live = False
                self.reply(req.caller, req.caller_attempt, EXPIRED)
            else:
                self.start_job(srv, req)
        srv.filling = False


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", default="protected",
                   choices=["naive", "deadline", "deadline_budget", "protected"])
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    times = []
    for seed in range(1, a.reps + 1):
        t = time.process_time()
        sim = Sim(a.preset, seed)
        sim.run()
        times.append(time.process_time() - t)
        print(f"seed {seed}: {sim.events} events, {sim.users} users, {sim.users_ok} ok")
    times.sort()
    print(f"{a.preset}: median {times[len(times) // 2] * 1e3:.0f} ms CPU per run")


if __name__ == "__main__":
    main()
