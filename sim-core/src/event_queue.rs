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

use crate::time::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A bucket is 2^20 ns (about 1 ms).
const BUCKET_SHIFT: u32 = 20;
/// 4096 buckets: a ring spanning about 4.3 s.
const RING: usize = 4096;

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
}

impl<T> EventQueue<T> {
    pub fn new() -> Self {
        EventQueue {
            seq: 0,
            cursor: 0,
            current: Vec::new(),
            ring: (0..RING).map(|_| Vec::new()).collect(),
            in_ring: 0,
            overflow: BinaryHeap::new(),
        }
    }

    pub fn push(&mut self, at: Nanos, item: T) {
        self.seq += 1;
        let entry = Entry {
            at,
            seq: self.seq,
            item,
        };
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

    pub fn pop(&mut self) -> Option<Entry<T>> {
        loop {
            if let Some(e) = self.current.pop() {
                return Some(e);
            }
            // Advance to the next bucket that holds anything.
            self.cursor = if self.in_ring > 0 {
                self.cursor + 1
            } else {
                self.overflow.peek()?.at >> BUCKET_SHIFT
            };
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
    /// ties, near and far times.
    #[test]
    fn pops_in_heap_order() {
        let mut rng = Stream::new(1, "queue");
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0;
        for i in 0..200_000u64 {
            if rng.uniform() < 0.55 {
                let delay = match rng.below_or_eq(3) {
                    0 => 0,
                    1 => rng.below_or_eq(2_000_000),
                    2 => rng.below_or_eq(1_000_000_000),
                    _ => rng.below_or_eq(20_000_000_000),
                };
                q.push(now + delay, i);
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
}
