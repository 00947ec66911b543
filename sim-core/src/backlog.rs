//! Backlog replay: a message queue between a client group's producers and
//! its consumers (`[clients.<g>.queue]`, MODEL.md 6).
//!
//! Messages carry nothing that tells them apart, so the backlog is counts:
//! messages waiting to be delivered (`ready`, of them `ready_again` put
//! back after a failed delivery, and taken first: they are older),
//! messages put back and not yet due again (`waiting`), and deliveries in
//! flight. A redelivery is the queue's retry: its requests count as
//! retries in the tiers' series. The engine turns a [`Take::Deliver`]
//! into one user request of the group and reports its end with
//! [`Backlog::delivered`].

use crate::result::QueueStats;
use crate::scenario::Queue;
use crate::time::{NANOS_PER_SEC, Nanos, round_nanos, secs_to_nanos};

/// A group's queue compiled: integer nanoseconds.
#[derive(Clone, Debug)]
pub struct QueueModel {
    pub consumers: u32,
    /// Least time between two delivery starts (0: none).
    pub gap: Nanos,
    pub redeliver_after: Nanos,
    pub max_backlog: Option<u64>,
}

impl QueueModel {
    pub fn of(q: &Queue) -> Option<QueueModel> {
        (!q.is_off()).then(|| QueueModel {
            consumers: q.consumers,
            gap: if q.drain_rate_per_s > 0.0 {
                round_nanos(NANOS_PER_SEC as f64 / q.drain_rate_per_s)
            } else {
                0
            },
            redeliver_after: secs_to_nanos(q.redeliver_after_s),
            max_backlog: q.max_backlog.map(u64::from),
        })
    }
}

/// What the consumers do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// Start delivering one message now; `again`: a message put back
    /// after a failed delivery.
    Deliver { again: bool },
    /// A message waits, but the drain rate lets the next delivery start
    /// only at this instant.
    At(Nanos),
    /// Nothing to do: no message is ready, or every consumer is busy.
    Idle,
}

/// The state of one group's queue during a run.
pub struct Backlog {
    model: QueueModel,
    ready: u64,
    ready_again: u64,
    waiting: u64,
    in_flight: u32,
    /// When the drain rate lets the next delivery start.
    next_start: Nanos,
    /// The instant a wake-up (`Action::Deliver`) is scheduled for, if any.
    wake: Option<Nanos>,
    pub stats: QueueStats,
    /// Messages waiting at the end of each second, filled up to
    /// `sampled` (exclusive) as time passes.
    pub by_sec: Vec<u64>,
    sampled: usize,
}

impl Backlog {
    pub fn new(model: QueueModel, secs: usize) -> Backlog {
        Backlog {
            model,
            ready: 0,
            ready_again: 0,
            waiting: 0,
            in_flight: 0,
            next_start: 0,
            wake: None,
            stats: QueueStats::default(),
            by_sec: vec![0; secs],
            sampled: 0,
        }
    }

    /// Records the messages waiting at every whole second up to `now`
    /// before they change at `now`: what a sample at instant k sees is
    /// the state before the events at k, as the tiers' samples. Kept here
    /// rather than in the engine's per-event sampling, which runs without
    /// queues too.
    fn catch_up(&mut self, now: Nanos) {
        let len = self.len();
        while self.sampled < self.by_sec.len() && (self.sampled as Nanos + 1) * NANOS_PER_SEC <= now
        {
            self.by_sec[self.sampled] = len;
            self.sampled += 1;
        }
    }

    /// Messages waiting: ready, or due again after a failed delivery.
    pub fn len(&self) -> u64 {
        self.ready + self.waiting
    }

    /// Whether a message waits that may be delivered now.
    pub fn has_ready(&self) -> bool {
        self.ready > 0
    }

    /// A producer publishes a message: kept, or dropped when the backlog
    /// is full. Returns whether it was kept.
    pub fn publish(&mut self, now: Nanos) -> bool {
        self.catch_up(now);
        self.stats.published += 1;
        if self.model.max_backlog.is_some_and(|m| self.len() >= m) {
            self.stats.dropped += 1;
            return false;
        }
        self.ready += 1;
        self.stats.backlog_peak = self.stats.backlog_peak.max(self.len());
        true
    }

    /// Whether a consumer takes a message at `now`; on `Deliver` the
    /// message is in flight.
    pub fn take(&mut self, now: Nanos) -> Take {
        if self.ready == 0 || self.in_flight >= self.model.consumers {
            return Take::Idle;
        }
        if now < self.next_start {
            return Take::At(self.next_start);
        }
        self.catch_up(now);
        self.ready -= 1;
        let again = self.ready_again > 0;
        self.ready_again -= again as u64;
        self.in_flight += 1;
        self.next_start = now + self.model.gap;
        Take::Deliver { again }
    }

    /// A delivery ended; a failed one puts its message back, due again at
    /// the instant returned.
    pub fn delivered(&mut self, ok: bool, now: Nanos) -> Option<Nanos> {
        self.in_flight -= 1;
        if ok {
            self.stats.consumed_ok += 1;
            return None;
        }
        self.stats.redelivered += 1;
        self.catch_up(now);
        self.waiting += 1;
        Some(now.saturating_add(self.model.redeliver_after))
    }

    /// A message put back is due again.
    pub fn due_again(&mut self, now: Nanos) {
        self.catch_up(now);
        self.waiting -= 1;
        self.ready += 1;
        self.ready_again += 1;
    }

    /// Whether a wake-up at `at` must be scheduled: none is, or the one
    /// scheduled comes later. Records it as scheduled.
    pub fn wake_at(&mut self, at: Nanos) -> bool {
        if self.wake.is_some_and(|w| w <= at) {
            return false;
        }
        self.wake = Some(at);
        true
    }

    /// The wake-up scheduled for `now` has come.
    pub fn woken(&mut self, now: Nanos) {
        if self.wake == Some(now) {
            self.wake = None;
        }
    }

    /// The counts at the horizon, with the time to drain after the trigger
    /// ending at `window_end`: the first whole second `k >= window_end`
    /// sampled before the horizon (`by_sec[k - 1]`, the end of second
    /// `k - 1`) with no message waiting.
    /// Returns them with the messages waiting at the end of each second.
    pub fn finish(mut self, window_end: Nanos, horizon: Nanos) -> (QueueStats, Vec<u64>) {
        self.catch_up(horizon);
        self.stats.backlog_end = self.len();
        self.stats.in_flight_end = self.in_flight as u64;
        let first = window_end.div_ceil(NANOS_PER_SEC).max(1);
        let last = (horizon / NANOS_PER_SEC).min(self.by_sec.len() as u64);
        let end_s = window_end as f64 / NANOS_PER_SEC as f64;
        self.stats.drain_s = (first..=last)
            .find(|k| self.by_sec[*k as usize - 1] == 0)
            .map(|k| k as f64 - end_s);
        self.stats.drain_censor_s = (last + 1).max(first) as f64 - end_s;
        (self.stats, self.by_sec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backlog(consumers: u32, gap: Nanos, max_backlog: Option<u64>) -> Backlog {
        let model = QueueModel {
            consumers,
            gap,
            redeliver_after: 700,
            max_backlog,
        };
        Backlog::new(model, 4)
    }

    #[test]
    fn consumers_bound_the_deliveries_in_flight() {
        let mut b = backlog(2, 0, None);
        (0..5).for_each(|_| assert!(b.publish(0)));
        assert_eq!(b.take(0), Take::Deliver { again: false });
        assert_eq!(b.take(0), Take::Deliver { again: false });
        assert_eq!(b.take(0), Take::Idle);
        assert_eq!(b.delivered(true, 10), None);
        assert_eq!(b.take(10), Take::Deliver { again: false });
        assert_eq!((b.len(), b.stats.consumed_ok), (2, 1));
    }

    #[test]
    fn the_drain_rate_spaces_delivery_starts() {
        let mut b = backlog(10, 200, None);
        (0..3).for_each(|_| assert!(b.publish(0)));
        assert_eq!(b.take(5), Take::Deliver { again: false });
        assert_eq!(b.take(5), Take::At(205));
        assert_eq!(b.take(204), Take::At(205));
        assert_eq!(b.take(205), Take::Deliver { again: false });
        assert_eq!(b.take(500), Take::Deliver { again: false });
        assert_eq!(b.take(500), Take::Idle);
    }

    #[test]
    fn a_failed_delivery_is_due_again_after_the_delay() {
        let mut b = backlog(1, 0, None);
        b.publish(0);
        assert_eq!(b.take(0), Take::Deliver { again: false });
        assert_eq!(b.delivered(false, 30), Some(730));
        assert_eq!(b.take(30), Take::Idle);
        assert_eq!(b.len(), 1);
        b.due_again(730);
        assert_eq!(b.take(730), Take::Deliver { again: true });
        assert_eq!(b.stats.redelivered, 1);
    }

    #[test]
    fn a_full_backlog_drops_what_is_published() {
        let mut b = backlog(1, 0, Some(2));
        assert!(b.publish(0) && b.publish(0));
        assert!(!b.publish(0));
        assert_eq!(b.take(0), Take::Deliver { again: false });
        assert!(b.publish(0));
        assert_eq!(
            (b.stats.published, b.stats.dropped, b.stats.backlog_peak),
            (4, 1, 2)
        );
    }

    #[test]
    fn drained_at_the_first_second_with_nothing_waiting() {
        let mut b = backlog(1, 0, None);
        b.by_sec = vec![0, 5, 3, 0, 0];
        b.sampled = 5;
        let (s, _) = b.finish(secs_to_nanos(1.5), secs_to_nanos(5.0));
        // Instants 2 and 3 still had messages waiting; instant 4 had none.
        assert_eq!(s.drain_s, Some(2.5));
        let mut b = backlog(1, 0, None);
        b.by_sec = vec![0, 5, 3, 0];
        b.sampled = 3;
        // Instant 4 is past the horizon: never sampled.
        let (s, _) = b.finish(secs_to_nanos(1.5), secs_to_nanos(3.5));
        assert_eq!((s.drain_s, s.drain_censor_s), (None, 2.5));
    }
}
