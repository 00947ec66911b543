//! Progress of a sweep on stderr: a bar on a terminal; on anything else (a
//! Slurm log, CI) a plain line every few seconds.
//!
//! The ETA follows the runs done weighted by their expected cost (the
//! expected users of their point, [`sim_core::expected_users`]): in a grid
//! whose load varies, the cheap runs done first do not promise an early end.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

const PLAIN_EVERY: Duration = Duration::from_secs(10);

pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    failed: u64,
    /// The expected cost of all the runs, and of those done.
    cost_total: f64,
    cost_done: f64,
    started: Instant,
    last_line: Instant,
    shown: bool,
}

impl Progress {
    /// A progress over runs whose expected costs add up to `cost_total`,
    /// that shows nothing when `shown` is false (`--quiet`), but still
    /// counts.
    pub fn shown(total: u64, cost_total: f64, shown: bool) -> Progress {
        let bar = (shown && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} runs, {msg}")
                    .expect("a valid template"),
            );
            bar.set_message("0 failed");
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        let now = Instant::now();
        Progress {
            bar,
            total,
            done: 0,
            failed: 0,
            cost_total,
            cost_done: 0.0,
            started: now,
            last_line: now,
            shown,
        }
    }

    /// One run ended; `cost` is its expected cost.
    pub fn record(&mut self, failed: bool, cost: f64) {
        self.done += 1;
        self.failed += failed as u64;
        self.cost_done += cost;
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(self.status());
            }
            None if self.shown && self.last_line.elapsed() >= PLAIN_EVERY => {
                self.last_line = Instant::now();
                eprintln!("{}", self.line());
            }
            None => {}
        }
    }

    /// Seconds left: the time so far, scaled by the expected cost left over
    /// the expected cost done.
    fn eta_s(&self) -> f64 {
        eta(
            self.started.elapsed().as_secs_f64(),
            self.cost_done,
            self.cost_total,
        )
    }

    /// `3 failed, 41.2 runs/s, ETA 1m31s`
    fn status(&self) -> String {
        let rate = self.done as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        format!(
            "{} failed, {rate:.1} runs/s, ETA {}",
            self.failed,
            human_duration(self.eta_s())
        )
    }

    /// `1234/5000 runs (24.7%), 3 failed, 41.2 runs/s, ETA 1m31s`
    fn line(&self) -> String {
        format!(
            "{}/{} runs ({:.1}%), {}",
            self.done,
            self.total,
            100.0 * self.done as f64 / self.total.max(1) as f64,
            self.status()
        )
    }

    pub fn done(&self) -> u64 {
        self.done
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Time left after `elapsed` seconds for `done` of `total` expected cost.
fn eta(elapsed: f64, done: f64, total: f64) -> f64 {
    elapsed * (total - done).max(0.0) / done.max(1e-9)
}

/// `n` and its noun, singular for one: "1 seed", "3 seeds".
pub fn counted(n: impl Into<u64>, one: &str, many: &str) -> String {
    match n.into() {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// `secs` in the unit that shows its size: a tiny grid's estimate is
/// "4ms", not "0.0s".
pub fn human_duration(secs: f64) -> String {
    if secs < 0.001 {
        return "under 1ms".to_string();
    }
    if secs < 0.1 {
        return format!("{:.0}ms", secs * 1000.0);
    }
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{secs:.1}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    /// Half the runs but a tenth of the expected cost done in 10 s leaves
    /// 90 s, not the 10 s a count of runs would promise.
    #[test]
    fn the_eta_follows_the_expected_cost_done() {
        assert_eq!(super::eta(10.0, 10.0, 100.0), 90.0);
        assert_eq!(super::eta(10.0, 100.0, 100.0), 0.0);
    }

    #[test]
    fn a_duration_is_shown_in_the_unit_of_its_size() {
        let shown: Vec<String> = [0.0, 0.0004, 0.0042, 0.0996, 0.1, 59.4, 61.0, 7322.0]
            .into_iter()
            .map(super::human_duration)
            .collect();
        assert_eq!(
            shown,
            [
                "under 1ms",
                "under 1ms",
                "4ms",
                "100ms",
                "0.1s",
                "59.4s",
                "1m01s",
                "2h02m"
            ]
        );
    }
}
