//! The pending-event set: a calendar queue that pops events in exactly the
//! order of a binary heap on `(time, insertion number)`, but cheaply.
//!
//! Most events are timers a second or less ahead, and most of those go stale
//! (the attempt ended before its timeout). In one big heap every push and pop
//! walks thousands of them. Here time is cut into buckets of about two
//! milliseconds: events of future buckets wait unsorted in a ring, and only
//! the current bucket (a handful of events) is kept sorted; a bitmap of the
//! ring's non-empty buckets finds the next one without stepping over the
//! empty ones. Events beyond the ring's span wait in an overflow heap.
//! Events of a later bucket are always later in time, so the order is the
//! same as one heap's.
//!
//! Timers set a fixed delay ahead (an attempt's timeout) are pushed in time
//! order, so they need no sorting at all: such an event goes to the back of
//! its *lane*, a FIFO per delay, whenever it is no earlier than the lane's
//! last event. One cut short by a deadline goes to the lane's *partner*, a
//! second FIFO made on first need, where the timers cut short queue in the
//! order of their deadlines (the users' arrivals), or, out of order there
//! too, through the calendar. A pop takes the earliest of the calendar's
//! and the lanes' fronts (with many lanes, the earliest lane is kept
//! between pops). Every push, lane or not, takes the next insertion
//! number, so the order is still exactly the one heap's. Events at or
//! after the run's horizon are dropped when pushed: the run would never
//! pop them.
//!
//! A lane event can be cancelled by the ticket its push returned (an
//! attempt answered before its timeout): it stays in place, marked, and the
//! lane passes over it when it reaches the front, so it never goes through
//! the engine's loop. In `protected` most attempt timers end so.

use crate::time::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A bucket is 2^21 ns (about 2 ms; 2^20 cost ch37 and the M/M/1 of
/// `bench/peers` 0.2-0.3% more instructions: more buckets to load; 2^22
/// cost ch37 0.3% more, longer sorted insertions into `current`).
const BUCKET_SHIFT: u32 = 21;
/// 256 buckets: a ring spanning about 0.54 s, past most service times and
/// backoffs (attempt timeouts wait in lanes; later events wait in the
/// overflow). A bucket's memory comes round again every span: against 1024
/// buckets (2.1 s), -0.2% instructions, and `naive` 0.96x the CPU time
/// while another process shared the cache (no difference alone).
const RING: usize = 256;
/// One bit per ring bucket: set while it holds events.
const WORDS: usize = RING / 64;

#[derive(Clone, Copy)]
pub struct Entry<T> {
    pub at: Nanos,
    seq: u64,
    pub item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl<T> Eq for Entry<T> {}
impl<T> Entry<T> {
    /// `(time, insertion number)` as one number.
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.at) << 64) | u128::from(self.seq)
    }
}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    #[inline(always)]
    fn lt(&self, other: &Self) -> bool {
        other.key() < self.key()
    }
}
impl<T> Ord for Entry<T> {
    /// Reversed, so that `BinaryHeap` pops the earliest, then first inserted.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

pub struct EventQueue<T> {
    /// Events at or after it are never popped (the run ends there), so they
    /// are not kept: a timer far beyond the run (a timeout of 10^6 s, as good
    /// as none) would otherwise fill its lane for the whole run.
    horizon: Nanos,
    seq: u64,
    /// Bucket number of `current`; never decreases.
    cursor: u64,
    /// Events of buckets `<= cursor`, sorted latest first (popped from the end).
    current: Vec<Entry<T>>,
    /// Events of buckets in `(cursor, cursor + RING)`, at index `bucket % RING`.
    ring: Vec<Vec<Entry<T>>>,
    /// Which ring buckets hold events, so that the next one is found a word
    /// (64 buckets) at a time: sparse events (an M/M/1 at 0.9, about 5 ms apart)
    /// left several empty buckets to step over a pop.
    occupied: [u64; WORDS],
    /// Events of buckets `>= cursor + RING`.
    overflow: BinaryHeap<Entry<T>>,
    lanes: Vec<Lane<T>>,
    /// Per lane, its partner for the timers cut short ([`NO_LANE`]: none
    /// yet), made when the lane first needs one: see
    /// [`EventQueue::push_timer`].
    partners: Vec<usize>,
    /// With more than [`SCANNED_LANES`] lanes: the lane whose front is
    /// earliest (`None`: every lane is empty), unless `earliest_stale`.
    earliest: Option<usize>,
    /// A front that may have been the earliest moved (a pop, a cancel at
    /// the front): `earliest` is found again at the next pop.
    earliest_stale: bool,
}

/// No partner lane (see `EventQueue::partners`).
const NO_LANE: usize = usize::MAX;

/// Up to this many lanes, a pop looks at every lane's front: cheaper than
/// keeping the earliest up to date (+0.3% of ch37's instructions, which
/// has a few: 2 to 5 with the partners; at 5, scanning saved `deadline`
/// 1.3% against keeping the earliest). A chain whose tiers each have their
/// own timeout has a lane each, and 48 of them cost 1,110 instructions an
/// event against 690.
const SCANNED_LANES: usize = 6;

/// A lane: events in `(time, insertion number)` order, read from `head`.
/// A plain vector (a `VecDeque`'s wrap-around cost more, measurably): the
/// events read are dropped from the front once they are four fifths of it
/// (each drop copies the unread fifth: at half, as before, the copies cost
/// `naive` 1.3% of its instructions, its lanes holding thousands of timers).
/// A cancelled event stays where it is, marked, and is passed over when it
/// comes to the front: the front is never a cancelled event.
struct Lane<T> {
    events: Vec<Entry<T>>,
    head: usize,
    /// The ticket of `events[0]`: tickets number a lane's events from its
    /// first, so that one stays valid while the events before it go.
    base: Ticket,
}

/// A lane event's number in its lane, to cancel it. Never `u32::MAX`, so
/// that a caller can keep that for "none".
pub type Ticket = u32;

/// Marks a cancelled lane event in its insertion number, which no
/// comparison reads once it is marked (it is never a lane's front).
const CANCELLED: u64 = 1 << 63;

impl<T: Copy> Lane<T> {
    fn new() -> Lane<T> {
        Lane {
            events: Vec::new(),
            head: 0,
            base: 0,
        }
    }

    #[inline]
    fn front(&self) -> Option<&Entry<T>> {
        self.events.get(self.head)
    }

    #[inline]
    fn pop_front(&mut self) -> Entry<T> {
        let e = self.events[self.head];
        self.head += 1;
        self.pass_cancelled();
        e
    }

    /// Moves `head` past cancelled events, and drops the events read.
    #[inline]
    fn pass_cancelled(&mut self) {
        while self
            .events
            .get(self.head)
            .is_some_and(|e| e.seq & CANCELLED != 0)
        {
            self.head += 1;
        }
        if self.head == self.events.len() {
            self.base = self.base.wrapping_add(self.head as u32);
            self.events.clear();
            self.head = 0;
        } else if self.head >= 1024 && self.head >= 4 * (self.events.len() - self.head) {
            self.base = self.base.wrapping_add(self.head as u32);
            self.events.drain(..self.head);
            self.head = 0;
        }
    }

    fn clear(&mut self) {
        self.events.clear();
        self.head = 0;
        self.base = 0;
    }
}

impl<T: Copy> EventQueue<T> {
    /// A queue with `lanes` lanes (numbered from 0) for
    /// [`EventQueue::push_in_lane`], of the events before `horizon`.
    pub fn new(lanes: usize, horizon: Nanos) -> Self {
        EventQueue {
            horizon,
            seq: 0,
            cursor: 0,
            current: Vec::new(),
            ring: (0..RING).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            overflow: BinaryHeap::new(),
            lanes: (0..lanes).map(|_| Lane::new()).collect(),
            partners: vec![NO_LANE; lanes],
            earliest: None,
            earliest_stale: true,
        }
    }

    /// Empty again, as [`EventQueue::new`] makes it, but keeping the
    /// memory its buckets and lanes grew.
    pub fn reset(&mut self, lanes: usize, horizon: Nanos) {
        self.horizon = horizon;
        self.seq = 0;
        self.cursor = 0;
        self.current.clear();
        self.ring.iter_mut().for_each(Vec::clear);
        self.occupied = [0; WORDS];
        self.overflow.clear();
        // The partners made in the last run go with their lanes.
        self.lanes.resize_with(lanes, Lane::new);
        self.lanes.iter_mut().for_each(Lane::clear);
        self.partners.clear();
        self.partners.resize(lanes, NO_LANE);
        self.earliest_stale = true;
    }

    pub fn push(&mut self, at: Nanos, item: T) {
        if at >= self.horizon {
            return;
        }
        let entry = self.entry(at, item);
        self.push_entry(entry);
    }

    /// Pushes an event that is usually no earlier than the latest one of
    /// `lane` (a timer a fixed delay ahead): then it joins the lane, and
    /// its ticket can cancel it. (`None`: it went through the calendar, or
    /// past the horizon, and cannot be cancelled.)
    #[inline(always)]
    pub fn push_in_lane(&mut self, lane: usize, at: Nanos, item: T) -> Option<Ticket> {
        if at >= self.horizon {
            return None;
        }
        let entry = self.entry(at, item);
        match self.join_lane(lane, entry) {
            Ok(ticket) => ticket,
            Err(entry) => {
                self.push_entry(entry);
                None
            }
        }
    }

    /// [`EventQueue::push_in_lane`] for an attempt's timer: one cut short
    /// (earlier than the lane's latest: its attempt ends at the caller's
    /// deadline) goes to the lane's partner, where such timers queue, in
    /// time order too (the deadlines of successive users), and stays
    /// cancellable. Through the calendar, each went through the engine's
    /// loop when it came due, although its attempt had mostly ended long
    /// before (1% of `deadline`'s instructions, 3% of `deadline_budget`'s).
    /// The ticket comes with
    /// whether it is the partner's, which [`EventQueue::partner`] names.
    #[inline(always)]
    pub fn push_timer(&mut self, lane: usize, at: Nanos, item: T) -> Option<(Ticket, bool)> {
        if at >= self.horizon {
            return None;
        }
        let entry = self.entry(at, item);
        let entry = match self.join_lane(lane, entry) {
            Ok(ticket) => return ticket.map(|t| (t, false)),
            Err(entry) => entry,
        };
        let partner = self.partner_or_new(lane);
        match self.join_lane(partner, entry) {
            Ok(ticket) => ticket.map(|t| (t, true)),
            Err(entry) => {
                self.push_entry(entry);
                None
            }
        }
    }

    /// The partner of `lane`, which holds its timers cut short (made by
    /// [`EventQueue::push_timer`] before it returned such a ticket).
    #[inline]
    pub fn partner(&self, lane: usize) -> usize {
        self.partners[lane]
    }

    /// The ticket of the event last joined to `lane`, if it can be cancelled.
    #[inline(always)]
    fn last_ticket(&self, lane: usize) -> Option<Ticket> {
        let l = &self.lanes[lane];
        let ticket = l.base.wrapping_add(l.events.len() as u32 - 1);
        // After 2^32 - 1 events of one lane: that one cannot be cancelled.
        (ticket != Ticket::MAX).then_some(ticket)
    }

    /// Made on first need, so that a run whose timers are never cut short
    /// has no more lanes to look at on every pop.
    #[inline(never)]
    fn partner_or_new(&mut self, lane: usize) -> usize {
        if self.partners[lane] == NO_LANE {
            self.lanes.push(Lane::new());
            self.partners.push(NO_LANE);
            self.partners[lane] = self.lanes.len() - 1;
            // Past `SCANNED_LANES`, the earliest lane must be found anew.
            self.earliest_stale = true;
        }
        self.partners[lane]
    }

    /// `entry` joins the back of `lane` if it is no earlier than the
    /// lane's latest event (`Ok`, with its ticket if it can be cancelled);
    /// else it is handed back.
    #[inline(always)]
    fn join_lane(&mut self, lane: usize, entry: Entry<T>) -> Result<Option<Ticket>, Entry<T>> {
        let many = self.lanes.len() > SCANNED_LANES;
        let l = &mut self.lanes[lane];
        if l.events.last().is_some_and(|last| last.at > entry.at) {
            return Err(entry);
        }
        // Onto an empty lane: a new front, perhaps the earliest (a push
        // behind another leaves the lane's front as it was).
        if many && l.front().is_none() && !self.earliest_stale {
            let earlier = match self.earliest {
                None => true,
                Some(e) => self.lanes[e].front().is_none_or(|f| entry.key() < f.key()),
            };
            if earlier {
                self.earliest = Some(lane);
            }
        }
        self.lanes[lane].events.push(entry);
        Ok(self.last_ticket(lane))
    }

    /// Cancels an event of `lane` not yet popped: it will never be popped.
    #[inline(always)]
    pub fn cancel(&mut self, lane: usize, ticket: Ticket) {
        let l = &mut self.lanes[lane];
        let at = ticket.wrapping_sub(l.base) as usize;
        debug_assert!(at >= l.head && at < l.events.len(), "a pending event");
        l.events[at].seq |= CANCELLED;
        if at == l.head {
            l.pass_cancelled();
            // Its front moved later: another may be the earliest now.
            if self.earliest == Some(lane) {
                self.earliest_stale = true;
            }
        }
    }

    #[inline]
    fn entry(&mut self, at: Nanos, item: T) -> Entry<T> {
        self.seq += 1;
        Entry {
            at,
            seq: self.seq,
            item,
        }
    }

    /// Into the calendar.
    fn push_entry(&mut self, entry: Entry<T>) {
        let at = entry.at;
        let bucket = at >> BUCKET_SHIFT;
        if bucket <= self.cursor {
            // `Entry`'s order is reversed: "greater" is earlier.
            let at = self.current.partition_point(|e| e < &entry);
            self.current.insert(at, entry);
        } else if bucket < self.cursor + RING as u64 {
            self.push_in_ring(bucket, entry);
        } else {
            self.overflow.push(entry);
        }
    }

    /// The lane whose front is earliest, and that front's `(time,
    /// insertion number)`.
    #[inline]
    fn earliest_lane(&self) -> (Option<usize>, (Nanos, u64)) {
        let mut lane = None;
        let mut first = (Nanos::MAX, u64::MAX);
        for (i, l) in self.lanes.iter().enumerate() {
            if let Some(e) = l.front()
                && (e.at, e.seq) < first
            {
                first = (e.at, e.seq);
                lane = Some(i);
            }
        }
        (lane, first)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Entry<T>> {
        let (lane, first) = if self.lanes.len() <= SCANNED_LANES {
            self.earliest_lane()
        } else {
            if self.earliest_stale {
                self.earliest = self.earliest_lane().0;
                self.earliest_stale = false;
            }
            let front = (self.earliest).and_then(|i| self.lanes[i].front());
            (
                self.earliest,
                front.map_or((Nanos::MAX, u64::MAX), |e| (e.at, e.seq)),
            )
        };
        // The calendar need not look past that front's bucket: later
        // buckets hold later events. (So that `current`, where events
        // before the cursor are inserted in order, stays a bucket's worth.)
        if self.current.is_empty() {
            self.load_buckets_until(first.0 >> BUCKET_SHIFT);
        }
        let from_lane = match (self.current.last(), lane) {
            (Some(c), Some(i)) if first < (c.at, c.seq) => i,
            (None, Some(i)) => i,
            _ => return self.current.pop(),
        };
        // The earliest front moves on.
        self.earliest_stale = true;
        Some(self.lanes[from_lane].pop_front())
    }

    #[inline]
    fn push_in_ring(&mut self, bucket: u64, entry: Entry<T>) {
        let slot = (bucket % RING as u64) as usize;
        self.ring[slot].push(entry);
        self.occupied[slot / 64] |= 1 << (slot % 64);
    }

    /// The first bucket after the cursor that holds events in the ring.
    #[inline]
    fn next_in_ring(&self) -> Option<u64> {
        // Slots in bucket order start after the cursor's and wrap around;
        // the cursor's own slot is empty (its events are in `current`).
        let start = ((self.cursor + 1) % RING as u64) as usize;
        let (word, bit) = (start / 64, start % 64);
        let mut bits = self.occupied[word] & (!0 << bit);
        let mut w = word;
        let mut step = 0;
        while bits == 0 {
            // Back at the first word: its bits below `start` are the
            // ring's latest buckets (those at or after it are clear).
            step += 1;
            if step > WORDS {
                return None;
            }
            w = (word + step) % WORDS;
            bits = self.occupied[w];
        }
        let slot = w * 64 + bits.trailing_zeros() as usize;
        let ahead = (slot + RING - start) % RING;
        Some(self.cursor + 1 + ahead as u64)
    }

    /// With `current` empty, moves the cursor to the next bucket that holds
    /// anything, unless that is after bucket `limit`.
    #[inline]
    fn load_buckets_until(&mut self, limit: u64) {
        // Often so (a lane's front is due first): then no need to search.
        if limit <= self.cursor {
            return;
        }
        // The ring's buckets are all before the overflow's.
        let next = match self.next_in_ring() {
            Some(bucket) => bucket,
            None => match self.overflow.peek() {
                Some(e) => e.at >> BUCKET_SHIFT,
                None => return,
            },
        };
        if next > limit {
            return;
        }
        self.cursor = next;
        // `current` is empty: it becomes the bucket's events, and the
        // bucket keeps the old allocation for reuse.
        let slot = (self.cursor % RING as u64) as usize;
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        std::mem::swap(&mut self.ring[slot], &mut self.current);
        while self
            .overflow
            .peek()
            .is_some_and(|e| e.at >> BUCKET_SHIFT <= self.cursor)
        {
            self.current.push(self.overflow.pop().expect("peeked"));
        }
        self.current.sort_unstable();
        // Overflow events that now fall inside the ring's span.
        let horizon = self.cursor + RING as u64;
        while self
            .overflow
            .peek()
            .is_some_and(|e| e.at >> BUCKET_SHIFT < horizon)
        {
            let e = self.overflow.pop().expect("peeked");
            self.push_in_ring(e.at >> BUCKET_SHIFT, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Stream;

    /// Where a test pushes an event: the calendar, or a lane.
    #[derive(Clone, Copy)]
    enum To {
        Calendar,
        Lane(usize),
    }

    /// Runs `steps` interleaved pushes (`push_share` of them) and pops on
    /// `q` and on one binary heap, each push `next` draws (a delay from the
    /// time last popped, and where it goes), checks every pop is the
    /// heap's, then empties both. Returns the number of events popped.
    fn same_pops_as_a_heap(
        q: &mut EventQueue<u64>,
        seed: u64,
        steps: u64,
        push_share: f64,
        mut next: impl FnMut(&mut Stream) -> (Nanos, To),
    ) -> usize {
        let mut rng = Stream::new(seed, "queue");
        let mut reference = BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0;
        let mut popped = 0;
        for i in 0..steps {
            if rng.uniform() < push_share {
                let (delay, to) = next(&mut rng);
                match to {
                    To::Calendar => q.push(now + delay, i),
                    To::Lane(l) => _ = q.push_in_lane(l, now + delay, i),
                }
                seq += 1;
                reference.push(Entry {
                    at: now + delay,
                    seq,
                    item: i,
                });
            } else {
                let (a, b) = (q.pop(), reference.pop());
                assert_eq!(
                    a.as_ref().map(|e| (e.at, e.item)),
                    b.as_ref().map(|e| (e.at, e.item)),
                    "pop {popped}"
                );
                if let Some(e) = a {
                    now = e.at;
                    popped += 1;
                }
            }
        }
        while let Some(b) = reference.pop() {
            let a = q.pop().expect("same length");
            assert_eq!((a.at, a.item), (b.at, b.item), "pop {popped}");
            popped += 1;
        }
        assert!(q.pop().is_none());
        popped
    }

    /// A bucket's span and the ring's, in nanoseconds.
    const BUCKET: Nanos = 1 << BUCKET_SHIFT;
    const SPAN: Nanos = BUCKET * RING as Nanos;

    /// Ties, near and far times, and lanes of fixed delays, some cut short.
    #[test]
    fn pops_in_heap_order() {
        let mut q = EventQueue::new(2, Nanos::MAX);
        let n = same_pops_as_a_heap(&mut q, 1, 200_000, 0.55, |rng| {
            let delay = match rng.below_or_eq(6) {
                0 => 0,
                1 => rng.below_or_eq(2_000_000),
                2 => rng.below_or_eq(1_000_000_000),
                3 => rng.below_or_eq(20_000_000_000),
                4 => 1_000_000_000,
                5 => 300_000_000,
                _ => rng.below_or_eq(300_000_000),
            };
            let to = match rng.below_or_eq(6) {
                4 => To::Lane(0),
                5 | 6 => To::Lane(1),
                _ => To::Calendar,
            };
            (delay, to)
        });
        assert!(n > 100_000, "{n} popped");
    }

    /// Events many empty buckets apart, some beyond the ring's span (the
    /// cursor jumps to the next occupied bucket, or to the overflow's
    /// front), and at the edges of buckets and of the span.
    #[test]
    fn sparse_events_pop_in_heap_order() {
        let mut q = EventQueue::new(1, Nanos::MAX);
        let n = same_pops_as_a_heap(&mut q, 2, 100_000, 0.5, |rng| {
            let delay = match rng.below_or_eq(7) {
                0 => rng.below_or_eq(30 * BUCKET),
                1 => rng.below_or_eq(3 * SPAN),
                2 => SPAN - 1,
                3 => SPAN,
                4 => BUCKET * rng.below_or_eq(2 * RING as Nanos),
                5 => BUCKET * (1 + rng.below_or_eq(2 * RING as Nanos)) - 1,
                6 => 64 * BUCKET * rng.below_or_eq(20),
                _ => 100 * SPAN + rng.below_or_eq(SPAN),
            };
            let to = match rng.below_or_eq(9) {
                0 => To::Lane(0),
                _ => To::Calendar,
            };
            (delay, to)
        });
        assert!(n > 45_000, "{n} popped");
        // It went far beyond the ring's span many times.
        assert!(q.cursor > 1_000 * RING as u64, "{} buckets", q.cursor);
    }

    /// Time runs over many spans of the ring with events a few buckets to
    /// a whole span ahead, so the ring's slots are reused many times over.
    #[test]
    fn pops_in_heap_order_around_the_ring() {
        let mut q = EventQueue::new(0, Nanos::MAX);
        let mut pushed = 0;
        let n = same_pops_as_a_heap(&mut q, 3, 200_000, 0.5, |rng| {
            pushed += 1;
            let delay = match pushed % 3 {
                0 => rng.below_or_eq(8 * BUCKET),
                1 => SPAN - rng.below_or_eq(2 * BUCKET),
                _ => rng.below_or_eq(SPAN + BUCKET),
            };
            (delay, To::Calendar)
        });
        assert!(n > 90_000, "{n} popped");
        assert!(q.cursor > 100 * RING as u64, "{} buckets", q.cursor);
    }

    /// Lanes alone: three fixed delays (their lanes grow while their
    /// events wrap around the slots) and a few events cut short.
    #[test]
    fn lane_only_pops_in_heap_order() {
        let mut q = EventQueue::new(3, Nanos::MAX);
        let n = same_pops_as_a_heap(&mut q, 4, 200_000, 0.52, |rng| {
            let lane = rng.below_or_eq(2) as usize;
            let delay = [1_000_000_000, 250_000_000, 0][lane];
            if rng.uniform() < 0.02 {
                (delay / 2, To::Lane(lane))
            } else {
                (delay, To::Lane(lane))
            }
        });
        assert!(n > 100_000, "{n} popped");
        assert!(q.lanes.iter().all(|l| l.events.capacity() >= 1024));
    }

    /// Lane events cancelled while pending (at the front, in the middle,
    /// the last, runs of them) are never popped; the others pop in heap
    /// order, through the lanes' drops of the events read and a reset.
    #[test]
    fn cancelled_lane_events_are_never_popped() {
        // With their partners, past `SCANNED_LANES` midway.
        const { assert!(4 <= SCANNED_LANES && 8 > SCANNED_LANES) };
        cancelled_events_of_lanes_are_never_popped(4);
    }

    /// The same with more lanes than a pop looks at one by one: the
    /// earliest lane kept through pushes onto empty lanes, pops and
    /// cancels at its front.
    #[test]
    fn many_lanes_pop_in_heap_order() {
        const { assert!(9 > SCANNED_LANES) };
        cancelled_events_of_lanes_are_never_popped(9);
    }

    fn cancelled_events_of_lanes_are_never_popped(lanes: usize) {
        let mut rng = Stream::new(2, "cancel");
        let mut q = EventQueue::new(lanes, Nanos::MAX);
        // Fixed delays from 20 ms to 1 s, one a lane.
        let delays: Vec<Nanos> = (0..lanes)
            .map(|l| [300_000_000, 1_000_000_000, 20_000_000][l % 3] + 7_000_000 * l as Nanos)
            .collect();
        for round in 0..2 {
            let mut reference = BinaryHeap::new();
            let (mut seq, mut now) = (0, 0);
            let mut pending: Vec<(usize, Ticket, u64)> = Vec::new();
            let mut cancelled = std::collections::HashSet::new();
            let mut in_partners = 0;
            for i in 0..100_000u64 {
                let r = rng.uniform();
                if r < 0.5 {
                    let lane = rng.below_or_eq(lanes as u64 - 1) as usize;
                    let delay = delays[lane];
                    // Now and then one cut short: it goes to the lane's
                    // partner, or through the calendar when earlier than
                    // the partner's latest too.
                    let cut = rng.uniform() < 0.05;
                    let at = now + delay - cut as u64 * 10_000_000;
                    match q.push_timer(lane, at, i) {
                        Some((t, false)) => pending.push((lane, t, i)),
                        Some((t, true)) => {
                            assert!(cut, "only a cut-short one goes to the partner");
                            pending.push((q.partner(lane), t, i));
                            in_partners += 1;
                        }
                        None => assert!(cut, "only a cut-short one goes to the calendar"),
                    }
                    seq += 1;
                    reference.push(Entry { at, seq, item: i });
                } else if r < 0.8 && !pending.is_empty() {
                    // Most cancelled soon after they were pushed, some at the front.
                    let k = if rng.uniform() < 0.2 {
                        0
                    } else {
                        pending.len()
                            - 1
                            - rng.below_or_eq(pending.len().min(50) as u64 - 1) as usize
                    };
                    let (lane, t, item) = pending.remove(k);
                    q.cancel(lane, t);
                    cancelled.insert(item);
                } else {
                    let b = std::iter::from_fn(|| reference.pop())
                        .find(|e: &Entry<u64>| !cancelled.contains(&e.item));
                    let a = q.pop();
                    assert_eq!(a.map(|e| (e.at, e.item)), b.map(|e| (e.at, e.item)));
                    if let Some(e) = a {
                        now = e.at;
                        pending.retain(|(_, _, item)| *item != e.item);
                    }
                }
            }
            let mut popped = 0;
            while let Some(b) = std::iter::from_fn(|| reference.pop())
                .find(|e: &Entry<u64>| !cancelled.contains(&e.item))
            {
                let a = q.pop().expect("same length");
                assert_eq!((a.at, a.item), (b.at, b.item));
                popped += 1;
            }
            assert!(q.pop().is_none());
            assert!(cancelled.len() > 10_000 && popped > 0, "round {round}");
            // Most timers cut short queued in the partners, made as the
            // lanes needed them.
            assert!(
                in_partners > 1_000,
                "round {round}: {in_partners} in partners"
            );
            assert_eq!(q.lanes.len(), 2 * lanes, "round {round}");
            q.reset(lanes, Nanos::MAX);
            assert_eq!((q.lanes.len(), q.partners.len()), (lanes, lanes));
        }
    }

    /// A queue reset after use, events left in it, pops as a new one.
    #[test]
    fn a_reset_queue_pops_as_a_new_one() {
        let fill = |q: &mut EventQueue<u64>| {
            for i in 0..5_000u64 {
                let at = (i * 7_919_993) % 3_000_000_000;
                match i % 3 {
                    0 => _ = q.push_in_lane(0, at + 1_000_000_000, i),
                    _ => q.push(at, i),
                }
            }
        };
        let mut used = EventQueue::new(3, Nanos::MAX);
        fill(&mut used);
        _ = used.push_in_lane(2, 5, 0);
        (0..1_000).for_each(|_| _ = used.pop());
        used.reset(1, 2_500_000_000);
        let mut new = EventQueue::new(1, 2_500_000_000);
        fill(&mut used);
        fill(&mut new);
        let pops = |q: &mut EventQueue<u64>| {
            std::iter::from_fn(|| q.pop().map(|e| (e.at, e.seq, e.item))).collect::<Vec<_>>()
        };
        let expected = pops(&mut new);
        assert_eq!(expected.len(), 3_632);
        assert_eq!(pops(&mut used), expected);
    }

    #[test]
    fn events_at_or_after_the_horizon_are_not_kept() {
        let mut q = EventQueue::new(1, 100);
        q.push(99, 'a');
        q.push(100, 'b');
        _ = q.push_in_lane(0, 5_000_000_000, 'c');
        _ = q.push_in_lane(0, 50, 'd');
        q.push(1 << 40, 'e');
        let popped: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.at, e.item))
            .collect();
        assert_eq!(popped, [(50, 'd'), (99, 'a')]);
    }
}
