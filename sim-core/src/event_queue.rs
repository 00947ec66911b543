//! The pending-event set: a calendar queue that pops events in exactly the
//! order of a binary heap on `(time, insertion number)`, but cheaply.
//!
//! Most events are timers a second or less ahead, and most of those go stale
//! (the attempt ended before its timeout). In one big heap every push and pop
//! walks thousands of them. Here time is cut into buckets of about a
//! millisecond: events of future buckets wait unsorted in a ring, and only
//! the current bucket (a handful of events) is kept sorted. Events beyond
//! the ring's span wait in an overflow heap. Events of a later bucket are always later in time, so
//! the order is the same as one heap's.
//!
//! Timers set a fixed delay ahead (an attempt's timeout) are pushed in time
//! order, so they need no sorting at all: such an event goes to the back of
//! its *lane*, a FIFO per delay, whenever it is no earlier than the lane's
//! last event (else, cut short by a deadline, it goes through the calendar).
//! A pop takes the earliest of the calendar's and the lanes' fronts. Every
//! push, lane or not, takes the next insertion number, so the order is still
//! exactly the one heap's. Events at or after the run's horizon are dropped
//! when pushed: the run would never pop them.

use crate::time::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A bucket is 2^20 ns (about 1 ms).
const BUCKET_SHIFT: u32 = 20;
/// 1024 buckets: a ring spanning about 1.07 s.
const RING: usize = 1024;

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
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    /// Reversed, so that `BinaryHeap` pops the earliest, then first inserted.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
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
    in_ring: usize,
    /// Events of buckets `>= cursor + RING`.
    overflow: BinaryHeap<Entry<T>>,
    lanes: Vec<Lane<T>>,
}

/// A lane: events in `(time, insertion number)` order, read from `head`.
/// A plain vector (a `VecDeque`'s wrap-around cost more, measurably): the
/// events read are dropped from the front once they are half of it.
struct Lane<T> {
    events: Vec<Entry<T>>,
    head: usize,
}

impl<T: Copy> Lane<T> {
    #[inline]
    fn front(&self) -> Option<&Entry<T>> {
        self.events.get(self.head)
    }

    #[inline]
    fn pop_front(&mut self) -> Entry<T> {
        let e = self.events[self.head];
        self.head += 1;
        if self.head == self.events.len() {
            self.events.clear();
            self.head = 0;
        } else if self.head >= 1024 && 2 * self.head >= self.events.len() {
            self.events.drain(..self.head);
            self.head = 0;
        }
        e
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
            in_ring: 0,
            overflow: BinaryHeap::new(),
            lanes: (0..lanes)
                .map(|_| Lane {
                    events: Vec::new(),
                    head: 0,
                })
                .collect(),
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
        self.in_ring = 0;
        self.overflow.clear();
        self.lanes.resize_with(lanes, || Lane {
            events: Vec::new(),
            head: 0,
        });
        for lane in &mut self.lanes {
            lane.events.clear();
            lane.head = 0;
        }
    }

    pub fn push(&mut self, at: Nanos, item: T) {
        if at >= self.horizon {
            return;
        }
        let entry = self.entry(at, item);
        self.push_entry(entry);
    }

    /// Pushes an event that is usually no earlier than the latest one of
    /// `lane` (a timer a fixed delay ahead): then it joins the lane.
    #[inline]
    pub fn push_in_lane(&mut self, lane: usize, at: Nanos, item: T) {
        if at >= self.horizon {
            return;
        }
        let entry = self.entry(at, item);
        let q = &mut self.lanes[lane].events;
        if q.last().is_none_or(|last| last.at <= at) {
            q.push(entry);
        } else {
            self.push_entry(entry);
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
            self.ring[(bucket % RING as u64) as usize].push(entry);
            self.in_ring += 1;
        } else {
            self.overflow.push(entry);
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Entry<T>> {
        // The lane whose front is earliest.
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
        // The calendar need not look past that front's bucket: later
        // buckets hold later events. (So that `current`, where events
        // before the cursor are inserted in order, stays a bucket's worth.)
        if self.current.is_empty() {
            self.load_buckets_until(first.0 >> BUCKET_SHIFT);
        }
        match (self.current.last(), lane) {
            (Some(c), Some(i)) if first < (c.at, c.seq) => Some(self.lanes[i].pop_front()),
            (None, Some(i)) => Some(self.lanes[i].pop_front()),
            _ => self.current.pop(),
        }
    }

    /// While `current` is empty, advances the cursor to the next bucket
    /// that holds anything, up to bucket `limit`.
    #[inline]
    fn load_buckets_until(&mut self, limit: u64) {
        while self.current.is_empty() {
            let next = if self.in_ring > 0 {
                self.cursor + 1
            } else if let Some(e) = self.overflow.peek() {
                e.at >> BUCKET_SHIFT
            } else {
                return;
            };
            if next > limit {
                return;
            }
            self.cursor = next;
            // `current` is empty: it becomes the bucket's events, and the
            // bucket keeps the old allocation for reuse.
            let slot = &mut self.ring[(self.cursor % RING as u64) as usize];
            self.in_ring -= slot.len();
            std::mem::swap(slot, &mut self.current);
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
                self.ring[((e.at >> BUCKET_SHIFT) % RING as u64) as usize].push(e);
                self.in_ring += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Stream;

    /// Same pops as one binary heap, for interleaved pushes and pops with
    /// ties, near and far times, and lanes of fixed delays, some cut short.
    #[test]
    fn pops_in_heap_order() {
        let mut rng = Stream::new(1, "queue");
        let mut q = EventQueue::new(2, Nanos::MAX);
        let mut reference = BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0;
        for i in 0..200_000u64 {
            if rng.uniform() < 0.55 {
                let delay = match rng.below_or_eq(6) {
                    0 => 0,
                    1 => rng.below_or_eq(2_000_000),
                    2 => rng.below_or_eq(1_000_000_000),
                    3 => rng.below_or_eq(20_000_000_000),
                    4 => 1_000_000_000,
                    5 => 300_000_000,
                    _ => rng.below_or_eq(300_000_000),
                };
                match rng.below_or_eq(6) {
                    4 => q.push_in_lane(0, now + delay, i),
                    5 | 6 => q.push_in_lane(1, now + delay, i),
                    _ => q.push(now + delay, i),
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
                    b.as_ref().map(|e| (e.at, e.item))
                );
                if let Some(e) = a {
                    now = e.at;
                }
            }
        }
        while let Some(b) = reference.pop() {
            let a = q.pop().expect("same length");
            assert_eq!((a.at, a.item), (b.at, b.item));
        }
        assert!(q.pop().is_none());
    }

    /// A queue reset after use, events left in it, pops as a new one.
    #[test]
    fn a_reset_queue_pops_as_a_new_one() {
        let fill = |q: &mut EventQueue<u64>| {
            for i in 0..5_000u64 {
                let at = (i * 7_919_993) % 3_000_000_000;
                match i % 3 {
                    0 => q.push_in_lane(0, at + 1_000_000_000, i),
                    _ => q.push(at, i),
                }
            }
        };
        let mut used = EventQueue::new(3, Nanos::MAX);
        fill(&mut used);
        used.push_in_lane(2, 5, 0);
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
        q.push_in_lane(0, 5_000_000_000, 'c');
        q.push_in_lane(0, 50, 'd');
        q.push(1 << 40, 'e');
        let popped: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.at, e.item))
            .collect();
        assert_eq!(popped, [(50, 'd'), (99, 'a')]);
    }
}
