//! Progress of a sweep on stderr: a bar on a terminal; on anything else (a
//! Slurm log, CI) a plain line every few seconds.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

const PLAIN_EVERY: Duration = Duration::from_secs(10);

pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    failed: u64,
    started: Instant,
    last_line: Instant,
    shown: bool,
}

impl Progress {
    /// A progress that shows nothing when `shown` is false (`--quiet`),
    /// but still counts.
    pub fn shown(total: u64, shown: bool) -> Progress {
        let bar = (shown && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} runs, {msg}, {per_sec}, ETA {eta}",
                )
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
            started: now,
            last_line: now,
            shown,
        }
    }

    pub fn record(&mut self, failed: bool) {
        self.done += 1;
        self.failed += failed as u64;
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                if failed {
                    bar.set_message(format!("{} failed", self.failed));
                }
            }
            None if self.shown && self.last_line.elapsed() >= PLAIN_EVERY => {
                self.last_line = Instant::now();
                eprintln!("{}", self.line());
            }
            None => {}
        }
    }

    /// `1234/5000 runs (24.7%), 3 failed, 41.2 runs/s, ETA 1m31s`
    fn line(&self) -> String {
        let secs = self.started.elapsed().as_secs_f64();
        let rate = self.done as f64 / secs.max(1e-9);
        let eta = (self.total - self.done) as f64 / rate.max(1e-9);
        format!(
            "{}/{} runs ({:.1}%), {} failed, {rate:.1} runs/s, ETA {}",
            self.done,
            self.total,
            100.0 * self.done as f64 / self.total.max(1) as f64,
            self.failed,
            human_duration(eta)
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

pub fn human_duration(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{secs:.1}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}
