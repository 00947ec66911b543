//! Jobs: the user requests, the requests at servers and the fan-out
//! branches the engine moves through the model, in a slab of reused slots.

use crate::event_queue::Ticket;
use crate::time::{NEVER, Nanos};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobRef {
    pub idx: u32,
    pub generation: u32,
}

pub const NO_JOB: JobRef = JobRef {
    idx: u32::MAX,
    generation: 0,
};

/// No timer to cancel (see `Job::timer`).
pub const NO_TICKET: Ticket = Ticket::MAX;

/// The edge of a job that calls nobody (a leaf, or a fan-out parent, whose
/// branches call).
pub const NO_EDGE: u16 = u16::MAX;

/// Where a request is when the run ends: what the trace says of it and
/// how the tier's counts take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    /// Sent, not yet arrived (the hop's latency).
    InTransit,
    /// Waiting at its tier (in its queue, or in a rate limiter's bucket).
    Queued,
    /// Holding a slot.
    InService,
}

/// What a job is, which says where its final answer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// A user request at the client: its answer ends the user's request.
    User,
    /// A request being handled by server `server`: it replies to its caller.
    /// A `u8` keeps `Job` at its size (a scenario has at most 64 tiers).
    Request { server: u8 },
    /// One branch of a fan-out, owned by the server job that made it (its
    /// `caller`): its answer settles the fan-out.
    Branch,
}

/// The job's slot holds it (not yet released).
const LIVE: u8 = 1;
/// The latest attempt has not ended yet.
const WAITING: u8 = 2;
/// Its own work was abandoned (cooperative cancellation).
const ABANDONED: u8 = 4;
/// Its caller cancelled it (the other hedged copy answered first): dropped
/// when it would start.
const CANCELLED: u8 = 8;
/// It waits its turn in a leaky bucket: its server's own (which a crash
/// of that server empties) or one the tier shares.
const IN_BUCKET: u8 = 16;
/// Its latest attempt's timer waits in its lane's partner (it was cut
/// short by a deadline: `EventQueue::push_timer`).
const TIMER_CUT: u8 = 32;
/// Why a request exists, for the per-second series that split a tier's
/// arrivals by what sent them: what sent the nearest retry or hedged copy in
/// its lineage (its own, or that of a request above it that it serves), as
/// one number that indexes the server's counters directly: `FIRST_TRY`
/// (none), `HEDGE` (a hedged copy, whoever sent it), or `retry_from(edge)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin(pub u16);

impl Origin {
    pub const FIRST_TRY: Origin = Origin(0);
    pub const HEDGE: Origin = Origin(1);

    /// A retry sent by edge `edge`.
    #[inline]
    pub fn retry_from(edge: u16) -> Origin {
        Origin(edge + 2)
    }

    /// The edge whose retry this is, for an origin other than the first
    /// two.
    pub fn edge(self) -> usize {
        self.0 as usize - 2
    }

    /// It exists because of a retry or a hedged copy.
    #[inline]
    pub fn by_retry(self) -> bool {
        self != Origin::FIRST_TRY
    }
}

/// 64 bytes, aligned to 64: one cache line per job, read at once (the
/// liveness check and the flags read when a request is dequeued sit in the
/// same line as the rest). A test keeps it at that size. The yes/no states
/// share one flags byte, which leaves room for the retry origin (no side
/// array, whose second cache line cost a miss per request).
#[derive(Clone, Copy)]
#[repr(align(64))]
pub struct Job {
    pub generation: u32,
    /// The yes/no states (`LIVE`, `WAITING`, ...), through the accessors.
    pub(crate) flags: u8,
    pub kind: JobKind,
    /// The edge it calls through (`NO_EDGE`: none).
    pub edge: u16,
    pub user: u32,
    /// The job whose attempt created this one, and that attempt's number
    /// (a caller makes at most `max_retries + 1 <= 101` attempts).
    pub caller: JobRef,
    pub caller_attempt: u16,
    /// Propagated deadline; `NEVER` when none was received.
    pub deadline: Nanos,
    pub arrived: Nanos,
    /// When it took a slot; `NEVER` while queued.
    pub started: Nanos,
    /// Attempts made so far as a caller.
    pub attempts: u16,
    /// The ticket of its latest attempt's timer in its lane, or in the
    /// lane's partner with `timer_cut` (`NO_TICKET`:
    /// none, or the timer went through the calendar, or past the horizon),
    /// here rather than in a vector by slot: the attempt's end reads the
    /// record anyway, and the vector's line was one more to load.
    pub timer: Ticket,
    /// When the latest attempt was sent (for slow-call detection; with the
    /// deadline, it gives when the attempt ends: `caller::attempt_end`).
    pub attempt_started: Nanos,
    /// Two bytes the line had spare.
    pub origin: Origin,
}

impl Job {
    /// User request `user` of client group `group`, arriving at `now`; it
    /// calls the first tier through the group's edge (its index), with the
    /// user's patience `patience` as its deadline (`NEVER`: none).
    pub fn user(user: u32, group: u16, now: Nanos, patience: Nanos) -> Job {
        Job {
            kind: JobKind::User,
            edge: group,
            arrived: now,
            started: now,
            ..Job::request(0, 0, NO_JOB, 0, now.saturating_add(patience), user)
        }
    }

    /// A request for server `s` from attempt `caller_attempt` of `caller`,
    /// just sent: it has not arrived yet.
    pub fn request(
        s: usize,
        edge: u16,
        caller: JobRef,
        caller_attempt: u32,
        deadline: Nanos,
        user: u32,
    ) -> Job {
        Job {
            generation: 0,
            flags: LIVE,
            kind: JobKind::Request { server: s as u8 },
            edge,
            user,
            caller,
            caller_attempt: caller_attempt as u16,
            deadline,
            arrived: NEVER,
            started: NEVER,
            attempts: 0,
            timer: NO_TICKET,
            attempt_started: NEVER,
            origin: Origin::FIRST_TRY,
        }
    }

    #[inline]
    fn set(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }

    #[inline]
    pub fn live(&self) -> bool {
        self.flags & LIVE != 0
    }

    /// The latest attempt has not ended yet.
    #[inline]
    pub fn waiting(&self) -> bool {
        self.flags & WAITING != 0
    }

    #[inline]
    pub fn set_waiting(&mut self, on: bool) {
        self.set(WAITING, on);
    }

    /// Where this request is when the run ends.
    pub fn pending(&self) -> Pending {
        if self.arrived == NEVER {
            Pending::InTransit
        } else if self.started == NEVER {
            Pending::Queued
        } else {
            Pending::InService
        }
    }

    /// Its latest attempt's timer waits in its lane's partner.
    #[inline]
    pub fn timer_cut(&self) -> bool {
        self.flags & TIMER_CUT != 0
    }

    #[inline]
    pub fn set_timer_cut(&mut self, on: bool) {
        self.set(TIMER_CUT, on);
    }

    /// Its own work was abandoned (cooperative cancellation).
    #[inline]
    pub fn abandoned(&self) -> bool {
        self.flags & ABANDONED != 0
    }

    #[inline]
    pub fn set_abandoned(&mut self) {
        self.set(ABANDONED, true);
    }

    /// Its caller cancelled it (the other hedged copy answered first):
    /// dropped when it would start.
    #[inline]
    pub fn cancelled(&self) -> bool {
        self.flags & CANCELLED != 0
    }

    #[inline]
    pub fn set_cancelled(&mut self) {
        self.set(CANCELLED, true);
    }

    /// It waits its turn in a leaky bucket.
    #[inline]
    pub fn in_bucket(&self) -> bool {
        self.flags & IN_BUCKET != 0
    }

    #[inline]
    pub fn set_in_bucket(&mut self, on: bool) {
        self.set(IN_BUCKET, on);
    }

    /// The server handling this request. Only requests are at a server: the
    /// engine asks only on a server's path (arrival, work, reply).
    #[inline]
    pub fn server(&self) -> usize {
        match self.kind {
            JobKind::Request { server } => server as usize,
            JobKind::User | JobKind::Branch => unreachable!("only a request is at a server"),
        }
    }
}

/// Jobs in a slab whose slots are reused; a reference carries the slot's
/// generation so that a stale one (a timer of a finished job) is detected.
/// Its accessors run on every event: `#[inline]` lets them inline into the
/// engine from this module (another codegen unit).
#[derive(Default)]
pub struct Jobs {
    pub slots: Vec<Job>,
    free: Vec<u32>,
}

impl Jobs {
    #[inline]
    pub fn alloc(&mut self, mut job: Job) -> JobRef {
        job.set(LIVE, true);
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

    #[inline]
    pub fn get(&self, r: JobRef) -> Option<&Job> {
        self.slots
            .get(r.idx as usize)
            .filter(|j| j.live() && j.generation == r.generation)
    }

    /// Asks the processor to bring `r`'s record into its cache ahead of
    /// use: a request that waited in a long queue (naive's retry storms)
    /// is out of cache when it starts, and its first read stalled the run
    /// (three quarters of `start_job`'s time). A hint only: no effect on
    /// results.
    #[inline]
    pub fn prefetch(&self, r: JobRef) {
        #[cfg(target_arch = "x86_64")]
        if let Some(j) = self.slots.get(r.idx as usize) {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            // SAFETY: a prefetch reads nothing and cannot fault, and SSE,
            // which it needs, is part of every x86_64 processor.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(j).cast::<i8>()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = r;
    }

    /// A job known to be live (a stale reference is a bug).
    #[inline]
    pub fn get_live(&self, r: JobRef) -> &Job {
        let j = &self.slots[r.idx as usize];
        debug_assert!(j.live() && j.generation == r.generation);
        j
    }

    #[inline]
    pub fn get_mut(&mut self, r: JobRef) -> &mut Job {
        let j = &mut self.slots[r.idx as usize];
        debug_assert!(j.live() && j.generation == r.generation);
        j
    }

    #[inline]
    pub fn release(&mut self, r: JobRef) {
        self.slots[r.idx as usize].set(LIVE, false);
        self.free.push(r.idx);
    }

    /// No jobs, the slots' memory kept: numbered from 0 again, as new.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
    }

    pub fn live(&self) -> impl Iterator<Item = &Job> {
        self.slots.iter().filter(|j| j.live())
    }
}

/// A value per job slot, for what only some jobs carry (a fan-out, the
/// hedged copies of an attempt, the replicas they went to): a vector
/// indexed by slot, grown on first write, `empty` for a slot never
/// written. A std `HashMap` by slot cost its SipHash on every hop
/// (`protected_16_rep`: 6% of its instructions). A slot keeps the value of
/// the job that last wrote it until the next write; readers check that it
/// is theirs, as the references it holds carry their generation.
pub struct BySlot<T> {
    values: Vec<T>,
    empty: T,
}

impl<T: Clone> BySlot<T> {
    pub fn new(empty: T) -> BySlot<T> {
        BySlot {
            values: Vec::new(),
            empty,
        }
    }

    #[inline]
    pub fn get(&self, slot: u32) -> &T {
        self.values.get(slot as usize).unwrap_or(&self.empty)
    }

    #[inline]
    pub fn get_mut(&mut self, slot: u32) -> &mut T {
        let i = slot as usize;
        if i >= self.values.len() {
            self.grow(i + 1);
        }
        &mut self.values[i]
    }

    /// Out of line, so that the engine's hop, where `get_mut` inlines,
    /// stays small.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, len: usize) {
        self.values.resize(len, self.empty.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_fills_one_cache_line() {
        assert_eq!(std::mem::size_of::<Job>(), 64);
    }

    #[test]
    fn a_slot_reads_empty_until_written_and_keeps_its_last_value() {
        let mut by_slot = BySlot::new(7u8);
        assert_eq!(*by_slot.get(3), 7);
        *by_slot.get_mut(3) = 1;
        assert_eq!(
            (*by_slot.get(3), *by_slot.get(2), *by_slot.get(9)),
            (1, 7, 7)
        );
        *by_slot.get_mut(0) = 2;
        assert_eq!((*by_slot.get(0), *by_slot.get(3)), (2, 1));
    }
}
