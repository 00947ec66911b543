//! GC-like pauses: capacity that falls as queued work grows. At every
//! multiple of `every` an instance stops the world for `pause + per_queued`
//! x its queue length at that instant; a tick that falls inside a pause is
//! skipped. While paused its slots do no work: work in service is frozen
//! (it ends the pause's length later) and work that starts during a pause
//! begins at its end. Waits on downstream calls and fast error replies are
//! not frozen (they are not the tier's own work).

use crate::scenario::Gc;
use crate::time::{Nanos, secs_to_nanos, times};

/// A tier's pause rule, in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct GcModel {
    pub every: Nanos,
    pause: Nanos,
    per_queued: Nanos,
}

impl GcModel {
    /// The rule of `gc`, or `None` when it is off.
    pub fn of(gc: &Gc) -> Option<GcModel> {
        (!gc.is_off()).then(|| GcModel {
            every: secs_to_nanos(gc.every_s),
            pause: secs_to_nanos(gc.pause_s),
            per_queued: secs_to_nanos(gc.per_queued_s),
        })
    }
}

/// The pauses of one instance so far. Work is frozen lazily: a job's end is
/// scheduled as if nothing paused, with a mark (the pauses begun until
/// then); at that end, the length of the pauses begun since the mark is
/// the work still owed, and the end moves that much later. Pauses never
/// overlap, so that sum is exactly the time the job was frozen.
#[derive(Clone, Debug)]
pub struct Pauses {
    rule: GcModel,
    /// End of the latest pause.
    until: Nanos,
    /// `begun[k]`: total length of the first k pauses.
    begun: Vec<Nanos>,
    /// `starts[k]`: when pause k + 1 began.
    starts: Vec<Nanos>,
    longest: Nanos,
}

impl Pauses {
    pub fn new(rule: &GcModel) -> Pauses {
        Pauses {
            rule: rule.clone(),
            until: 0,
            begun: vec![0],
            starts: Vec::new(),
            longest: 0,
        }
    }

    /// A tick at `now` with `queued` requests waiting: a pause begins
    /// unless one is still running.
    pub fn tick(&mut self, now: Nanos, queued: usize) {
        if now < self.until {
            return;
        }
        let length = self.rule.pause + times(self.rule.per_queued, queued as u64);
        // No pause (a pause of 0 s and an empty queue): nothing to count.
        if length == 0 {
            return;
        }
        self.until = now + length;
        self.longest = self.longest.max(length);
        let total = self.total();
        self.begun.push(total + length);
        self.starts.push(now);
    }

    /// When work that starts at `now` begins: at once, or at the end of the
    /// pause running.
    pub fn work_begins(&self, now: Nanos) -> Nanos {
        now.max(self.until)
    }

    /// The pauses begun so far: the mark of a job's scheduled end.
    pub fn mark(&self) -> u32 {
        (self.begun.len() - 1) as u32
    }

    /// How long the pauses begun since `mark` froze a job in service whose
    /// work is due to end at `now` (those begun before `now`: one that
    /// begins as the work ends freezes none of it), and the mark of the
    /// pauses counted, which the work's next end is checked against.
    pub fn frozen_since(&self, mark: u32, now: Nanos) -> (Nanos, u32) {
        let mark = mark as usize;
        let before = mark + self.starts[mark..].partition_point(|at| *at < now);
        (self.begun[before] - self.begun[mark], before as u32)
    }

    pub fn count(&self) -> u64 {
        self.begun.len() as u64 - 1
    }

    /// Total length of the pauses begun.
    pub fn total(&self) -> Nanos {
        *self.begun.last().expect("begun starts with 0")
    }

    pub fn longest(&self) -> Nanos {
        self.longest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn pauses(pause_s: f64, per_queued_s: f64) -> Pauses {
        let gc = Gc {
            every_s: 1.0,
            pause_s,
            per_queued_s,
        };
        Pauses::new(&GcModel::of(&gc).expect("on"))
    }

    #[test]
    fn a_pause_lasts_its_base_plus_its_term_per_queued_request() {
        let mut p = pauses(0.1, 0.002);
        p.tick(1000 * MS, 50);
        assert_eq!((p.count(), p.total(), p.longest()), (1, 200 * MS, 200 * MS));
        // Work starting inside the pause begins at its end.
        assert_eq!(p.work_begins(1050 * MS), 1200 * MS);
        assert_eq!(p.work_begins(1200 * MS), 1200 * MS);
        p.tick(2000 * MS, 0);
        assert_eq!((p.count(), p.total(), p.longest()), (2, 300 * MS, 200 * MS));
    }

    /// A tick that would pause for 0 s (no base, an empty queue) is no
    /// pause: it was counted, and lowered the mean pause.
    #[test]
    fn a_pause_of_nothing_is_not_counted() {
        let mut p = pauses(0.0, 0.01);
        p.tick(1000 * MS, 0);
        assert_eq!((p.count(), p.total()), (0, 0));
        p.tick(2000 * MS, 3);
        assert_eq!((p.count(), p.total(), p.longest()), (1, 30 * MS, 30 * MS));
        assert_eq!(p.frozen_since(0, 2100 * MS), (30 * MS, 1));
    }

    /// A term per queued request of 10^300 s is the longest duration, not
    /// a product that wraps around.
    #[test]
    fn a_huge_pause_ends_past_any_horizon() {
        let mut p = pauses(0.1, 1e300);
        p.tick(1000 * MS, 10);
        assert_eq!(p.longest(), 100 * MS + crate::time::LONGEST);
        assert_eq!(p.work_begins(1000 * MS), 1100 * MS + crate::time::LONGEST);
    }

    #[test]
    fn a_tick_inside_a_pause_is_skipped() {
        let mut p = pauses(1.5, 0.0);
        p.tick(1000 * MS, 0);
        p.tick(2000 * MS, 0);
        assert_eq!((p.count(), p.total()), (1, 1500 * MS));
        p.tick(3000 * MS, 0);
        assert_eq!((p.count(), p.total()), (2, 3000 * MS));
    }

    #[test]
    fn work_in_service_owes_exactly_the_pauses_begun_since_its_mark() {
        let mut p = pauses(0.25, 0.0);
        let mark = p.mark();
        assert_eq!(p.frozen_since(mark, 3000 * MS), (0, 0));
        p.tick(1000 * MS, 3);
        p.tick(2000 * MS, 3);
        assert_eq!(p.frozen_since(mark, 3000 * MS), (500 * MS, 2));
        assert_eq!(p.frozen_since(p.mark(), 3000 * MS), (0, 2));
        // Work due to end as a pause begins was not frozen by it; work
        // still owed then is, at its next end.
        assert_eq!(p.frozen_since(mark, 2000 * MS), (250 * MS, 1));
        assert_eq!(p.frozen_since(1, 2250 * MS), (250 * MS, 2));
    }
}
