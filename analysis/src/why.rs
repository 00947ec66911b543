//! Why a run did not recover: where the bottleneck's work came from after
//! the trigger ended, which loop kept it overloaded, and (from the
//! neighbouring grid points) the smallest one-parameter change that
//! recovers.
//!
//! The rule, per run, over the seconds from the trigger's end to the end
//! of arrivals:
//! - the bottleneck is the tier whose arrivals came closest to, or
//!   furthest past, its capacity (slots / mean service time);
//! - below 90% of capacity, and with work waiting at the end of fewer
//!   than half of those seconds, it was not saturated: what holds the run
//!   down is not load (a breaker still open, an adaptive limit still low);
//! - else, if it finished under 70% of its capacity, **degraded
//!   capacity** sustains it: work slowed by the load itself (GC pauses
//!   that grow with the queue, service that slows with concurrency);
//! - else, if at least a fifth of its arrivals were retries (or serve a
//!   retry above) and the first tries alone would fit, **retry
//!   amplification** sustains the overload, and the caller whose retries
//!   (each arrival counted for the nearest retry in its lineage) or the
//!   hedged copies made up the most of them sustain it;
//! - else, if at least a fifth were for users who had already left,
//!   **dead work** does (a queue of requests nobody waits for);
//! - else the first tries alone exceed capacity: plain **overload**.
//!
//! A run whose users were already failing before the trigger (their
//! success under the recovery threshold) had no healthy state to return
//! to: it is **failing before the trigger**, whatever its traffic after.

use std::fmt;

/// One tier's traffic summed over the seconds after the trigger.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TierAfter {
    pub tier: String,
    pub arrivals: f64,
    /// Arrivals that exist because of a retry or hedge, here or above.
    pub retries: f64,
    /// `retries` split by what sent the nearest retry or hedge in their
    /// lineage: per caller (by metric name) its retries, and the hedged
    /// copies; empty and 0 when the series do not split them.
    pub retries_from: Vec<(String, f64)>,
    pub hedges: f64,
    /// Arrivals for a user request that had already ended.
    pub after_user_left: f64,
    /// Requests it finished after their caller had stopped waiting (an
    /// attempt timed out above it): work for callers that gave up.
    pub late: f64,
    /// Requests the tier could serve over those seconds (`None`: no work
    /// of its own).
    pub capacity: Option<f64>,
    /// Requests it finished over those seconds (`None`: not known).
    pub completed: Option<f64>,
    /// Of those seconds, how many ended with work waiting in its queue
    /// (`None`: not known), and how many there were.
    pub backlogged: Option<f64>,
    pub seconds: f64,
}

/// Whether second `second` counts in a diagnosis: from the trigger's end
/// (`window_end_s`, rounded up to a whole second) while users still arrive.
pub fn after_trigger(second: usize, window_end_s: f64, user_arrivals: f64) -> bool {
    second as f64 >= window_end_s.ceil() && user_arrivals > 0.0
}

/// The loop that kept the bottleneck overloaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sustainer {
    FailingBefore,
    RetryAmplification,
    DeadWork,
    DegradedCapacity,
    Overload,
    NotSaturated,
}

impl fmt::Display for Sustainer {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Sustainer::FailingBefore => "failing before the trigger",
            Sustainer::RetryAmplification => "retry amplification",
            Sustainer::DeadWork => "dead work",
            Sustainer::DegradedCapacity => "degraded capacity",
            Sustainer::Overload => "overload",
            Sustainer::NotSaturated => "not saturated",
        })
    }
}

/// The bottleneck after the trigger and what its load was made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    pub tier: String,
    /// Arrivals over capacity.
    pub load: f64,
    /// First tries alone over capacity.
    pub first_try_load: f64,
    /// Requests finished over capacity (`None`: not known).
    pub served: Option<f64>,
    /// Shares of the arrivals: retries (and hedges) in all, then split by
    /// what sent them (the callers largest first, the hedges), and those
    /// for users who had already left (of any kind).
    pub retry_share: f64,
    pub retries_from: Vec<(String, f64)>,
    pub hedge_share: f64,
    pub dead_share: f64,
    /// Of the requests it finished, those finished after their caller had
    /// stopped waiting (`None` when its completions are not known). Over
    /// completions, not arrivals: the seconds after the trigger finish
    /// work that arrived during it.
    pub late_share: Option<f64>,
    pub sustainer: Sustainer,
    /// Under retry amplification, whose retries sustain it: the caller with
    /// the largest share, or `hedged copies` (`None` when the series do not
    /// split the retries).
    pub sustained_by: Option<String>,
    /// Under [`Sustainer::FailingBefore`], the share of the users before
    /// the trigger that succeeded, and the recovery threshold it fell
    /// short of.
    pub success_before: Option<(f64, f64)>,
}

/// [`Diagnosis::sustained_by`] when the hedges outweigh every caller's
/// retries.
pub const HEDGED_COPIES: &str = "hedged copies";

/// Load at or above this share of capacity saturates the tier.
const SATURATED: f64 = 0.9;
/// A saturated tier finishing under this share of its capacity has lost
/// capacity to the load.
const DEGRADED: f64 = 0.7;
/// A share of the arrivals at least this large sustains the overload.
const SUSTAINING_SHARE: f64 = 0.2;

/// The diagnosis of one run from its tiers' traffic after the trigger;
/// `None` when no tier has a capacity or any arrival.
pub fn diagnose(tiers: &[TierAfter]) -> Option<Diagnosis> {
    let t = (tiers.iter())
        .filter_map(|t| {
            let c = t.capacity.filter(|c| *c > 0.0)?;
            (t.arrivals > 0.0).then_some((t, t.arrivals / c))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))?
        .0;
    let capacity = t.capacity.expect("filtered above");
    let load = t.arrivals / capacity;
    let first_try_load = (t.arrivals - t.retries) / capacity;
    let retry_share = t.retries / t.arrivals;
    let dead_share = t.after_user_left / t.arrivals;
    let late_share = (t.completed).filter(|c| *c > 0.0).map(|c| t.late / c);
    let mut retries_from: Vec<(String, f64)> = (t.retries_from.iter())
        .filter(|(_, n)| *n > 0.0)
        .map(|(caller, n)| (caller.clone(), n / t.arrivals))
        .collect();
    retries_from.sort_by(|a, b| b.1.total_cmp(&a.1));
    let hedge_share = t.hedges / t.arrivals;
    let served = t.completed.map(|c| c / capacity);
    let backlogged = t
        .backlogged
        .is_some_and(|b| b >= 0.5 * t.seconds && b > 0.0);
    let sustainer = if load < SATURATED && !backlogged {
        Sustainer::NotSaturated
    } else if served.is_some_and(|s| s < DEGRADED) {
        Sustainer::DegradedCapacity
    } else if retry_share >= SUSTAINING_SHARE && first_try_load < 1.0 {
        Sustainer::RetryAmplification
    } else if dead_share >= SUSTAINING_SHARE {
        Sustainer::DeadWork
    } else {
        Sustainer::Overload
    };
    let largest = retries_from.first().cloned();
    let sustained_by = match largest {
        _ if sustainer != Sustainer::RetryAmplification => None,
        Some((caller, share)) if share >= hedge_share => Some(caller),
        _ if hedge_share > 0.0 => Some(HEDGED_COPIES.to_string()),
        _ => None,
    };
    Some(Diagnosis {
        tier: t.tier.clone(),
        load,
        served,
        first_try_load,
        retry_share,
        retries_from,
        hedge_share,
        dead_share,
        late_share,
        sustainer,
        sustained_by,
        success_before: None,
    })
}

impl Diagnosis {
    /// This diagnosis of a run whose users before the trigger succeeded
    /// at `success` only, under the recovery `threshold`: the trigger is
    /// not what holds it down.
    pub fn failing_before(self, success: f64, threshold: f64) -> Diagnosis {
        Diagnosis {
            sustainer: Sustainer::FailingBefore,
            sustained_by: None,
            success_before: Some((success, threshold)),
            ..self
        }
    }

    /// "7% first tries, 93% retries (60% from svc_a, 25% from gateway, 8%
    /// from client), 0% hedged copies": what the bottleneck's arrivals were
    /// made of; the split only when the series have it.
    pub fn composition(&self) -> String {
        let pct = |x: f64| format!("{:.0}%", 100.0 * x);
        let retries = self.retry_share - self.hedge_share;
        let mut text = format!(
            "{} first tries, {} retries",
            pct(1.0 - self.retry_share),
            pct(retries)
        );
        if !self.retries_from.is_empty() {
            let from: Vec<String> = (self.retries_from.iter())
                .map(|(caller, share)| format!("{} from {caller}", pct(*share)))
                .collect();
            text += &format!(" ({})", from.join(", "));
        }
        text + &format!(", {} hedged copies", pct(self.hedge_share))
    }
}

impl fmt::Display for Diagnosis {
    /// "at svc_b after the trigger: load 1.90x its capacity (first tries
    /// alone 0.13x); its arrivals: 7% first tries, 93% retries (60% from
    /// svc_a, ...), 0% hedged copies; 41% for users already gone: retry
    /// amplification sustains the overload, svc_a's retries most (the first
    /// tries alone would fit)".
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "at {} after the trigger: load {:.2}x its capacity (first tries alone {:.2}x); its arrivals: {}; {:.0}% for users already gone",
            self.tier,
            self.load,
            self.first_try_load,
            self.composition(),
            100.0 * self.dead_share,
        )?;
        if let Some(late) = self.late_share {
            write!(
                f,
                "; {:.0}% of what it finished reached its direct caller after that caller had stopped waiting",
                100.0 * late
            )?;
        }
        f.write_str(": ")?;
        match self.sustainer {
            Sustainer::RetryAmplification => {
                // Below capacity the retries keep it full, not over.
                f.write_str(if self.load >= 1.0 {
                    "retry amplification sustains the overload"
                } else {
                    "retry amplification keeps it saturated"
                })?;
                match self.sustained_by.as_deref() {
                    Some(HEDGED_COPIES) => f.write_str(", hedged copies most")?,
                    Some(caller) => write!(f, ", {caller}'s retries most")?,
                    None => {}
                }
                f.write_str(" (the first tries alone would fit)")
            }
            Sustainer::DeadWork => f.write_str(
                "dead work sustains it (requests for users who had given up fill the queue)",
            ),
            Sustainer::DegradedCapacity => write!(
                f,
                "degraded capacity sustains it: it finished {:.0}% of what its slots serve at low load (the load slows the work itself: GC pauses that grow with the queue, service that slows with concurrency)",
                100.0 * self.served.unwrap_or(0.0)
            ),
            Sustainer::Overload => f.write_str("the first tries alone exceed its capacity"),
            Sustainer::NotSaturated => f.write_str(
                "it was not saturated, so load does not hold the run down (look at breakers, bulkheads and adaptive limits)",
            ),
            Sustainer::FailingBefore => {
                let (success, threshold) = self.success_before.unwrap_or_default();
                write!(
                    f,
                    "it was failing before the trigger too ({:.0}% of the users before it succeeded, under the recovery threshold of {:.0}%): there was no healthy state to return to, and what holds it down was there from the start (a bulkhead, a limit or capacity too small for the load)",
                    100.0 * success,
                    100.0 * threshold
                )
            }
        }
    }
}

/// A one-parameter change that recovers: the axis, its level at the point
/// and the level that recovers, and how many seeds recovered there.
#[derive(Debug, Clone, PartialEq)]
pub struct Flip {
    pub axis: usize,
    pub from: usize,
    pub to: usize,
    pub recovered: usize,
    pub runs: usize,
}

/// One axis a flip may change: its number of levels, and whether they are
/// ordered (numbers: the distance is how many levels away; categories:
/// every other level is one change away).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    pub index: usize,
    pub levels: usize,
    pub ordered: bool,
}

/// The smallest changes of one axis (fewest levels away) that take point
/// `at` to a point where more than half of the seeds recovered;
/// `recovered(position)` gives the recovered and all runs of a point
/// (`None`: no such point). Ties are all returned (on a categorical axis,
/// every level that recovers).
pub fn flips(
    at: &[usize],
    axes: &[Axis],
    recovered: impl Fn(&[usize]) -> Option<(usize, usize)>,
) -> Vec<Flip> {
    let mut found: Vec<(usize, Flip)> = Vec::new();
    for axis in axes {
        let here = at[axis.index];
        let distance = |l: usize| if axis.ordered { l.abs_diff(here) } else { 1 };
        let mut tries: Vec<usize> = (0..axis.levels).filter(|l| *l != here).collect();
        tries.sort_by_key(|l| (distance(*l), *l));
        let mut pos = at.to_vec();
        let hits = tries.into_iter().filter_map(|l| {
            pos[axis.index] = l;
            let (ok, runs) = recovered(&pos)?;
            (2 * ok > runs).then_some(Flip {
                axis: axis.index,
                from: here,
                to: l,
                recovered: ok,
                runs,
            })
        });
        let hits: Vec<Flip> = hits.collect();
        if let Some(nearest) = hits.iter().map(|f| distance(f.to)).min() {
            found.extend(
                (hits.into_iter())
                    .filter(|f| distance(f.to) == nearest)
                    .map(|f| (nearest, f)),
            );
        }
    }
    let Some(best) = found.iter().map(|(d, _)| *d).min() else {
        return Vec::new();
    };
    (found.into_iter())
        .filter(|(d, _)| *d == best)
        .map(|(_, f)| f)
        .collect()
}

/// "1 point", "3 points".
fn points(n: usize) -> String {
    if n == 1 {
        "1 point".to_string()
    } else {
        format!("{n} points")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tier(arrivals: f64, retries: f64, dead: f64, capacity: f64) -> TierAfter {
        TierAfter {
            tier: format!("t{capacity}"),
            arrivals,
            retries,
            after_user_left: dead,
            capacity: Some(capacity),
            ..TierAfter::default()
        }
    }

    #[test]
    fn the_retries_are_split_by_sender_and_the_largest_sustains_the_loop() {
        // 800 arrivals at capacity 800: 100 first tries, 500 retries from
        // svc_a, 150 from the client, 50 hedged copies.
        let t = TierAfter {
            retries_from: vec![("client".into(), 150.0), ("svc_a".into(), 500.0)],
            hedges: 50.0,
            ..tier(800.0, 700.0, 0.0, 800.0)
        };
        let d = diagnose(std::slice::from_ref(&t)).unwrap();
        assert_eq!(d.sustainer, Sustainer::RetryAmplification);
        assert_eq!(d.sustained_by.as_deref(), Some("svc_a"));
        assert_eq!(
            d.retries_from,
            [("svc_a".to_string(), 0.625), ("client".to_string(), 0.1875)]
        );
        assert_eq!(
            d.composition(),
            "12% first tries, 81% retries (62% from svc_a, 19% from client), 6% hedged copies"
        );
        assert!(
            d.to_string().ends_with(
                "retry amplification sustains the overload, svc_a's retries most (the first tries alone would fit)"
            ),
            "{d}"
        );
        // Hedges that outweigh every caller's retries sustain it.
        let hedged = TierAfter {
            retries_from: vec![("svc_a".into(), 100.0)],
            hedges: 600.0,
            ..t.clone()
        };
        let d = diagnose(&[hedged]).unwrap();
        assert_eq!(d.sustained_by.as_deref(), Some(HEDGED_COPIES));
        assert!(d.to_string().contains(", hedged copies most"), "{d}");
        // Without the split (older series), no one is named.
        let d = diagnose(&[tier(800.0, 700.0, 0.0, 800.0)]).unwrap();
        assert_eq!(d.sustained_by, None);
        assert_eq!(
            d.composition(),
            "12% first tries, 88% retries, 0% hedged copies"
        );
        // Another loop names no sender.
        let over = TierAfter {
            retries_from: vec![("svc_a".into(), 500.0)],
            ..tier(2000.0, 500.0, 0.0, 1000.0)
        };
        assert_eq!(diagnose(&[over]).unwrap().sustained_by, None);
    }

    #[test]
    fn the_bottleneck_is_the_most_loaded_tier_and_each_loop_has_its_rule() {
        // A forwarder (no capacity) is never the bottleneck.
        let forwarder = TierAfter {
            tier: "gw".into(),
            arrivals: 1e6,
            ..TierAfter::default()
        };
        let d = diagnose(&[
            forwarder,
            tier(800.0, 0.0, 0.0, 8000.0),
            tier(800.0, 700.0, 0.0, 800.0),
        ])
        .unwrap();
        assert_eq!(d.tier, "t800");
        assert_eq!(d.sustainer, Sustainer::RetryAmplification);
        assert!((d.first_try_load - 0.125).abs() < 1e-12);
        // Retries, but the first tries alone do not fit: overload.
        let d = diagnose(&[tier(2000.0, 500.0, 0.0, 1000.0)]).unwrap();
        assert_eq!(d.sustainer, Sustainer::Overload);
        // Few retries, many requests for users already gone.
        let d = diagnose(&[tier(1000.0, 100.0, 400.0, 1000.0)]).unwrap();
        assert_eq!(d.sustainer, Sustainer::DeadWork);
        // Saturated but finishing 60% of its capacity: the load degrades
        // it, whatever else its arrivals are; at 70% it is the other rules.
        let degraded = |completed: f64| {
            let t = TierAfter {
                completed: Some(completed),
                ..tier(2000.0, 1500.0, 0.0, 1000.0)
            };
            diagnose(&[t]).unwrap()
        };
        let d = degraded(600.0);
        assert_eq!(d.sustainer, Sustainer::DegradedCapacity);
        assert!(
            d.to_string().contains(
                "degraded capacity sustains it: it finished 60% of what its slots serve at low load"
            ),
            "{d}"
        );
        assert_eq!(degraded(700.0).sustainer, Sustainer::RetryAmplification);
        // Below 90% of capacity but with work waiting at the end of most
        // seconds: saturated all the same (the arrivals fell because the
        // callers wait).
        let waiting = |backlogged: f64| {
            let t = TierAfter {
                completed: Some(300.0),
                backlogged: Some(backlogged),
                seconds: 10.0,
                ..tier(500.0, 450.0, 0.0, 1000.0)
            };
            diagnose(&[t]).unwrap().sustainer
        };
        assert_eq!(waiting(5.0), Sustainer::DegradedCapacity);
        // Work finished for callers that had stopped waiting is a share
        // of what the tier finished (here more than it took in after the
        // trigger: the backlog of the window), unknown without its
        // completions.
        let t = TierAfter {
            late: 1000.0,
            completed: Some(1250.0),
            ..tier(1000.0, 100.0, 400.0, 1000.0)
        };
        let d = diagnose(std::slice::from_ref(&t)).unwrap();
        assert_eq!(d.late_share, Some(0.8));
        assert!(
            d.to_string().contains(
                "40% for users already gone; 80% of what it finished reached its direct caller after that caller had stopped waiting: "
            ),
            "{d}"
        );
        let unknown = TierAfter {
            completed: None,
            ..t
        };
        let d = diagnose(&[unknown]).unwrap();
        assert_eq!(d.late_share, None);
        assert!(
            d.to_string().contains("40% for users already gone: "),
            "{d}"
        );
        assert_eq!(waiting(4.0), Sustainer::NotSaturated);
        // Below 90% of capacity: not load.
        let d = diagnose(&[tier(850.0, 800.0, 800.0, 1000.0)]).unwrap();
        assert_eq!(d.sustainer, Sustainer::NotSaturated);
        assert_eq!(diagnose(&[]), None);
        assert!(
            d.to_string()
                .starts_with("at t1000 after the trigger: load 0.85x")
        );
    }

    /// A run failing before the trigger is said to be, whatever its loop
    /// after it, and a run not saturated points at bulkheads too.
    #[test]
    fn a_run_failing_before_the_trigger_is_not_blamed_on_it() {
        let d = diagnose(&[tier(800.0, 700.0, 0.0, 800.0)]).unwrap();
        assert_eq!(d.sustainer, Sustainer::RetryAmplification);
        let d = d.failing_before(0.84, 0.99);
        assert_eq!(d.sustainer, Sustainer::FailingBefore);
        assert_eq!(d.sustained_by, None);
        assert!(
            d.to_string().ends_with(
                ": it was failing before the trigger too (84% of the users before it succeeded, under the recovery threshold of 99%): there was no healthy state to return to, and what holds it down was there from the start (a bulkhead, a limit or capacity too small for the load)"
            ),
            "{d}"
        );
        let idle = diagnose(&[tier(500.0, 0.0, 0.0, 1000.0)]).unwrap();
        assert!(
            idle.to_string()
                .ends_with("(look at breakers, bulkheads and adaptive limits)"),
            "{idle}"
        );
    }

    #[test]
    fn the_smallest_flip_is_the_nearest_level_that_recovers() {
        // Axis 0 (4 levels): recovers at level 0 only; axis 1 (3 levels):
        // recovers at level 2. From (3, 0): axis 0 is 3 away, axis 1 is 2.
        let rec = |p: &[usize]| -> Option<(usize, usize)> {
            Some(if p[0] == 0 || p[1] == 2 {
                (3, 4)
            } else {
                (1, 4)
            })
        };
        let axes = [ordered(0, 4), ordered(1, 3)];
        let f = flips(&[3, 0], &axes, rec);
        assert_eq!(
            f,
            [Flip {
                axis: 1,
                from: 0,
                to: 2,
                recovered: 3,
                runs: 4
            }]
        );
        // Half the seeds is not "recovers".
        let half = |_: &[usize]| Some((2, 4));
        assert!(flips(&[0, 0], &axes, half).is_empty());
        // Ties are all given.
        let both = |p: &[usize]| {
            Some(if p[0] == 2 || p[1] == 1 {
                (4, 4)
            } else {
                (0, 4)
            })
        };
        assert_eq!(flips(&[3, 0], &axes, both).len(), 2);
        // On a categorical axis every level is one change away: all that
        // recover are given, not only the next in list order.
        let strategy = Axis {
            index: 0,
            levels: 4,
            ordered: false,
        };
        let some = |p: &[usize]| {
            Some(if p[0] == 1 || p[0] == 3 {
                (4, 4)
            } else {
                (0, 4)
            })
        };
        let f = flips(&[0, 0], &[strategy, ordered(1, 3)], some);
        assert_eq!(f.iter().map(|f| f.to).collect::<Vec<_>>(), [1, 3]);
    }

    fn ordered(index: usize, levels: usize) -> Axis {
        Axis {
            index,
            levels,
            ordered: true,
        }
    }
}

/// Reading the sweep's output: per point that mostly did not recover, the
/// diagnosis of its runs and the flips, as a table and a report section.
pub mod section {
    use super::*;
    use crate::error::{IoError, ReportError};
    use crate::load::Sweep;
    use crate::part::{self, Part};
    use polars::prelude::*;
    use std::collections::HashMap;

    /// The series columns a diagnosis needs: seven per tier.
    fn traffic_columns(sweep: &Sweep) -> Vec<String> {
        let suffixes = [
            "arrivals",
            "retries",
            "after_user_left",
            "capacity_per_s",
            "completed",
            "queue_len",
            "late",
        ];
        (sweep.tiers.iter())
            .flat_map(|t| suffixes.map(|c| format!("{t}_{c}")))
            .collect()
    }

    /// One tier's columns that split its retries: `<tier>_hedges` (or
    /// `None`) and each `<tier>_retries_from_<caller>` with the caller.
    type SplitColumns = (Option<String>, Vec<(String, String)>);

    /// Per tier, the columns that split its retries when the series have
    /// them (sweeps written before have not).
    fn split_columns(sweep: &Sweep) -> Result<Vec<SplitColumns>, ReportError> {
        let dir = sweep.dir.join("series");
        let parts = part::series_parts(&sweep.dir).map_err(IoError::at(&dir))?;
        let present = match parts.first() {
            Some(first) => part::column_names(first)?,
            None => Vec::new(),
        };
        Ok((sweep.tiers.iter())
            .map(|t| {
                let hedges = format!("{t}_hedges");
                let prefix = format!("{t}_retries_from_");
                let from = (present.iter())
                    .filter_map(|c| Some((c.clone(), c.strip_prefix(&prefix)?.to_string())))
                    .collect();
                (present.contains(&hedges).then_some(hedges), from)
            })
            .collect())
    }

    /// Per run (row of the runs table), its tiers' traffic after the
    /// trigger; only ok runs that did not recover.
    fn traffic(
        sweep: &Sweep,
        runs: &[usize],
    ) -> Result<HashMap<usize, Vec<TierAfter>>, ReportError> {
        let ends = sweep.metric("window_end_s").unwrap_or_default();
        let wanted_runs: std::collections::HashSet<usize> = runs.iter().copied().collect();
        let mut rows = crate::report::run_rows(sweep)?;
        rows.retain(|_, r| wanted_runs.contains(r));
        let cols = traffic_columns(sweep);
        let split = split_columns(sweep)?;
        // The seconds after the trigger in which the report's users arrived.
        let arrivals = sweep.manifest.report.series_of("user_arrivals");
        let mut wanted = vec!["run_id", "second", arrivals.as_str()];
        wanted.extend(cols.iter().map(String::as_str));
        for (hedges, from) in &split {
            wanted.extend(hedges.as_deref());
            wanted.extend(from.iter().map(|(c, _)| c.as_str()));
        }
        let blank = || {
            (sweep.tiers.iter().zip(&split))
                .map(|(t, (_, from))| TierAfter {
                    tier: t.clone(),
                    capacity: Some(0.0),
                    completed: Some(0.0),
                    backlogged: Some(0.0),
                    retries_from: from
                        .iter()
                        .map(|(_, caller)| (caller.clone(), 0.0))
                        .collect(),
                    ..TierAfter::default()
                })
                .collect::<Vec<_>>()
        };
        let mut out: HashMap<usize, Vec<TierAfter>> = HashMap::new();
        let dir = sweep.dir.join("series");
        for path in part::series_parts(&sweep.dir).map_err(IoError::at(&dir))? {
            let part = Part::read(&path, Some(&wanted))?;
            let ids = part.str("run_id")?;
            let secs = part.count("second")?;
            let users = part.f64(&arrivals)?;
            let values: Vec<Float64Chunked> =
                cols.iter().map(|c| part.f64(c)).collect::<Result<_, _>>()?;
            let split_values = (split.iter())
                .map(|(hedges, from)| {
                    let hedges = hedges.as_deref().map(|c| part.f64(c)).transpose()?;
                    let from: Vec<Float64Chunked> = from
                        .iter()
                        .map(|(c, _)| part.f64(c))
                        .collect::<Result<_, _>>()?;
                    Ok((hedges, from))
                })
                .collect::<Result<Vec<_>, crate::part::PartError>>()?;
            for i in 0..part.frame.height() {
                let (Some(id), Some(sec)) = (ids.get(i), secs.get(i)) else {
                    continue;
                };
                let Some(&run) = rows.get(id) else { continue };
                let end = ends.get(run).copied().flatten().unwrap_or(0.0);
                if !after_trigger(sec as usize, end, users.get(i).unwrap_or(0.0)) {
                    continue;
                }
                let tiers = out.entry(run).or_insert_with(blank);
                for (t, tier) in tiers.iter_mut().enumerate() {
                    let v = |k: usize| values[7 * t + k].get(i);
                    tier.arrivals += v(0).unwrap_or(0.0);
                    tier.retries += v(1).unwrap_or(0.0);
                    tier.after_user_left += v(2).unwrap_or(0.0);
                    tier.capacity = tier.capacity.zip(v(3)).map(|(a, b)| a + b);
                    tier.completed = tier.completed.map(|a| a + v(4).unwrap_or(0.0));
                    let waiting = v(5).is_some_and(|q| q > 0.0);
                    tier.backlogged = tier.backlogged.map(|b| b + waiting as u8 as f64);
                    tier.seconds += 1.0;
                    tier.late += v(6).unwrap_or(0.0);
                    let (hedges, from) = &split_values[t];
                    tier.hedges += hedges.as_ref().and_then(|h| h.get(i)).unwrap_or(0.0);
                    for (sum, col) in tier.retries_from.iter_mut().zip(from) {
                        sum.1 += col.get(i).unwrap_or(0.0);
                    }
                }
            }
        }
        Ok(out)
    }

    /// A grid cell's runs: how many, how many recovered, and the rows of
    /// those that did not.
    type CellRuns = (usize, usize, Vec<usize>);

    /// The report's "Why it did not recover" and `why_not_recovered.csv`
    /// (and `.parquet`) in `dir`; `None` when nothing failed to recover or
    /// the grid has no trigger.
    pub fn write(sweep: &Sweep, dir: &std::path::Path) -> Result<Option<String>, ReportError> {
        let Some(recovered) = sweep.metric("recovered") else {
            return Ok(None);
        };
        if !sweep.has_trigger() || !crate::report::series_has(sweep, &traffic_columns(sweep))? {
            return Ok(None);
        }
        let ok = sweep.ok();
        // A run that cannot show recovery has no verdict (`recovered` is
        // null there): it is not counted as not recovering.
        let unobservable = sweep.without_verdict().len();
        let mut cells: HashMap<usize, CellRuns> = HashMap::new();
        for (run, rec) in recovered.iter().enumerate() {
            let Some(rec) = rec.filter(|_| ok[run]) else {
                continue;
            };
            let c = cells.entry(sweep.cell(run)).or_default();
            c.0 += 1;
            if rec > 0.5 {
                c.1 += 1;
            } else {
                c.2.push(run);
            }
        }
        let mut stuck: Vec<(usize, &CellRuns)> = (cells.iter())
            .filter(|(_, (runs, rec, _))| 2 * rec <= *runs)
            .map(|(c, v)| (*c, v))
            .collect();
        let runs_are = if unobservable == 1 {
            "1 run is".to_string()
        } else {
            format!("{unobservable} runs are")
        };
        let note = (unobservable > 0).then(|| format!("{runs_are} left out: their trigger ends less than the recovery window before their arrivals end, or no user arrives in a window after it, so whether they recover cannot be seen (lengthen `{}`, or add load).\n\n", sweep.manifest.report.duration_path()));
        if stuck.is_empty() {
            return Ok(note);
        }
        stuck.sort_by_key(|(c, _)| *c);
        let runs: Vec<usize> = stuck
            .iter()
            .flat_map(|(_, v)| v.2.iter().copied())
            .collect();
        let traffic = traffic(sweep, &runs)?;
        // The caller passes the factorial view of a sampled grid (its
        // design's dimension taken out), so every axis here is one change.
        let axes: Vec<Axis> = (0..sweep.dims.len())
            .map(|d| Axis {
                index: d,
                levels: sweep.dims[d].labels.len(),
                ordered: sweep.dims[d].values.is_some(),
            })
            .collect();
        let by_position: HashMap<Vec<usize>, (usize, usize)> = (cells.iter())
            .map(|(c, (runs, rec, _))| (sweep.design.positions(*c), (*rec, *runs)))
            .collect();
        // Each run's recovery threshold: the grid's per point, or the
        // scenario's.
        let before = sweep.metric("success_rate_before").unwrap_or_default();
        let thresholds = sweep.recovery_thresholds();
        let threshold = |run: usize| thresholds[run];
        let mut table = Table::default();
        for (cell, (n, rec, not)) in &stuck {
            let diagnoses: Vec<Diagnosis> = (not.iter())
                .filter_map(|&r| {
                    let d = diagnose(traffic.get(&r)?)?;
                    let threshold = threshold(r);
                    Some(match before.get(r).copied().flatten() {
                        Some(b) if b < threshold => d.failing_before(b, threshold),
                        _ => d,
                    })
                })
                .collect();
            let position = sweep.design.positions(*cell);
            let flip = flips(&position, &axes, |p| by_position.get(p).copied());
            table.push(sweep, *cell, *n - *rec, *n, &diagnoses, &flip);
        }
        let mut df = table.frame()?;
        crate::report::write_frame(dir, "why_not_recovered", &mut df)?;
        Ok(Some(note.unwrap_or_default() + &table.markdown()))
    }

    /// The rows of `why_not_recovered`.
    #[derive(Default)]
    struct Table {
        point: Vec<String>,
        not_recovered: Vec<i64>,
        runs: Vec<i64>,
        bottleneck: Vec<Option<String>>,
        load: Vec<Option<f64>>,
        first_try_load: Vec<Option<f64>>,
        served: Vec<Option<f64>>,
        retry_share: Vec<Option<f64>>,
        retries_from: Vec<Option<String>>,
        hedge_share: Vec<Option<f64>>,
        dead_share: Vec<Option<f64>>,
        late_share: Vec<Option<f64>>,
        sustainer: Vec<Option<String>>,
        sustained_by: Vec<Option<String>>,
        flip: Vec<Option<String>>,
        sentences: Vec<(Option<Sustainer>, String)>,
    }

    impl Table {
        fn push(
            &mut self,
            sweep: &Sweep,
            cell: usize,
            not: usize,
            runs: usize,
            diagnoses: &[Diagnosis],
            flip: &[Flip],
        ) {
            let point = sweep.describe_cell(cell);
            // The typical run: the loop most runs show, and its run with the
            // median load.
            let mut count: HashMap<Sustainer, usize> = HashMap::new();
            for d in diagnoses {
                *count.entry(d.sustainer).or_default() += 1;
            }
            let loop_ = (count.iter())
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(s, _)| *s);
            let mut typical: Vec<&Diagnosis> = diagnoses
                .iter()
                .filter(|d| Some(d.sustainer) == loop_)
                .collect();
            typical.sort_by(|a, b| a.load.total_cmp(&b.load));
            let d = typical.get(typical.len() / 2).copied();
            // The smallest change, in the table as written and in the
            // Markdown with the levels escaped.
            let flips = |level: fn(&str) -> String| -> Option<String> {
                let axes: std::collections::BTreeSet<usize> = flip.iter().map(|f| f.axis).collect();
                let text: Vec<String> = (axes.into_iter())
                    .map(|axis| {
                        let dim = &sweep.dims[axis];
                        let to: Vec<String> = (flip.iter())
                            .filter(|f| f.axis == axis)
                            .map(|f| {
                                let to = level(&dim.labels[f.to]);
                                format!("{to} ({} of {} runs recover)", f.recovered, f.runs)
                            })
                            .collect();
                        let from = flip.iter().find(|f| f.axis == axis).map_or(0, |f| f.from);
                        let from = level(&dim.labels[from]);
                        format!("`{}` {from} -> {}", dim.name, to.join(" or "))
                    })
                    .collect();
                (!text.is_empty()).then(|| text.join("; or "))
            };
            let flip_text = flips(str::to_string);
            let flip_md = flips(crate::tables::markdown_text);
            let mut sentence = format!(
                "- **{}**: {not} of {runs} runs never recover",
                crate::tables::markdown_text(&point)
            );
            match d {
                Some(d) => sentence += &format!("; {d}"),
                None => sentence += "; no traffic after the trigger to diagnose",
            }
            sentence += &match &flip_md {
                Some(f) => format!(". Smallest change that recovers: {f}.\n"),
                None => ". No single change of one axis in this grid recovers it.\n".to_string(),
            };
            self.point.push(point);
            self.not_recovered.push(not as i64);
            self.runs.push(runs as i64);
            self.bottleneck.push(d.map(|d| d.tier.clone()));
            self.load.push(d.map(|d| d.load));
            self.first_try_load.push(d.map(|d| d.first_try_load));
            self.served.push(d.and_then(|d| d.served));
            self.retry_share.push(d.map(|d| d.retry_share));
            self.retries_from
                .push(d.filter(|d| !d.retries_from.is_empty()).map(|d| {
                    let from = d.retries_from.iter().map(|(c, x)| format!("{c} {:.3}", x));
                    from.collect::<Vec<_>>().join(", ")
                }));
            self.hedge_share.push(d.map(|d| d.hedge_share));
            self.dead_share.push(d.map(|d| d.dead_share));
            self.late_share.push(d.and_then(|d| d.late_share));
            self.sustainer.push(loop_.map(|s| s.to_string()));
            self.sustained_by
                .push(d.and_then(|d| d.sustained_by.clone()));
            self.flip.push(flip_text);
            self.sentences.push((loop_, sentence));
        }

        fn frame(&self) -> Result<DataFrame, ReportError> {
            DataFrame::new(
                self.point.len(),
                vec![
                    Column::new("point".into(), &self.point),
                    Column::new("not_recovered".into(), &self.not_recovered),
                    Column::new("runs".into(), &self.runs),
                    Column::new("bottleneck".into(), &self.bottleneck),
                    Column::new("load".into(), &self.load),
                    Column::new("first_try_load".into(), &self.first_try_load),
                    Column::new("retry_share".into(), &self.retry_share),
                    Column::new("retries_from".into(), &self.retries_from),
                    Column::new("hedge_share".into(), &self.hedge_share),
                    Column::new("dead_share".into(), &self.dead_share),
                    Column::new("sustainer".into(), &self.sustainer),
                    Column::new("sustained_by".into(), &self.sustained_by),
                    Column::new("smallest_flip".into(), &self.flip),
                    Column::new("served".into(), &self.served),
                    Column::new("late_share".into(), &self.late_share),
                ],
            )
            .map_err(ReportError::table("why_not_recovered"))
        }

        /// Grouped by the loop, the most common first; at most 12 points
        /// shown, the rest in the table.
        fn markdown(&self) -> String {
            let mut groups: Vec<(Option<Sustainer>, Vec<&String>)> = Vec::new();
            for (s, line) in &self.sentences {
                match groups.iter_mut().find(|(g, _)| g == s) {
                    Some((_, lines)) => lines.push(line),
                    None => groups.push((*s, vec![line])),
                }
            }
            groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
            let total = self.point.len();
            let mut md = format!(
                "{} did not recover in at least half of their runs. Per point, the run with the median load among those showing the most common loop: the bottleneck after the trigger (the tier whose load came closest to, or furthest past, its capacity), what its arrivals were made of (first tries; retries, each counted for the caller that sent the nearest retry in its lineage, so a first try a middle tier sends for a client's retry is the client's; hedged copies; and, across those, requests for users who had already left), and the loop that kept it down (failing before the trigger: its users before the trigger already succeeded under the recovery threshold; retry amplification: at least 20% retries and the first tries alone would fit, sustained by the caller whose retries are the most; degraded capacity (checked before retry amplification): saturated, yet it finished under 70% of what its slots serve at low load; dead work: at least 20% of the arrivals for users already gone; overload: the first tries alone exceed capacity; not saturated: under 90% of capacity, with work waiting at the end of fewer than half of the seconds after the trigger). Users already gone are the end users; work finished after its direct caller stopped waiting is the caller's timeout, counted apart. The smallest change is the fewest levels of one axis away to a point where most runs recover. Table: `why_not_recovered.csv`.\n\n",
                points(total)
            );
            let mut shown = 0;
            for (s, lines) in groups {
                let name = s.map_or("no diagnosis".to_string(), |s| s.to_string());
                md += &format!("**{name}**: {}\n\n", points(lines.len()));
                for line in lines.into_iter().take(12usize.saturating_sub(shown)) {
                    md += line;
                    shown += 1;
                }
                md += "\n";
            }
            if shown < total {
                md += &format!("({} more in the table.)\n", total - shown);
            }
            md
        }
    }
}
