//! SIGINT, SIGTERM and SIGHUP stop a sweep alike: Ctrl-C at a terminal,
//! a closed terminal, and Slurm's time limit, `scancel` and preemption or a
//! Kubernetes pod stop (which send SIGTERM). The first one stops the
//! scheduling of runs: the runs in progress finish and are written, the
//! manifest says `interrupted`, and the process exits with 128 + the
//! signal's number (130, 143, 129), as shells and schedulers expect. A
//! second signal exits at once; what was written is still complete.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// The command that finishes the sweep in progress, said when a second
/// signal stops it at once.
static RESUME: Mutex<String> = Mutex::new(String::new());

/// Starts listening (once per process: tests run several sweeps in one);
/// `resume` is the command that finishes the sweep now starting.
pub fn install(resume: String) {
    *RESUME.lock().unwrap_or_else(|e| e.into_inner()) = resume;
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        for signal in signals.forever() {
            let first = RECEIVED
                .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            if first {
                eprintln!(
                    "\n{}: finishing the runs in progress and writing them (send it again to stop at once)",
                    name(signal)
                );
            } else {
                let resume = RESUME.lock().unwrap_or_else(|e| e.into_inner()).clone();
                eprintln!(
                    "\n{} again: stopping at once; every part written is kept (its manifest still says running); finish the sweep with:\n  {resume}",
                    name(signal)
                );
                std::process::exit(128 + signal);
            }
        }
    });
}

/// The first stopping signal received, if any.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The exit status of a process stopped by `signal`.
pub fn exit_code(signal: i32) -> u8 {
    (128 + signal) as u8
}

fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "interrupt (SIGINT)",
        SIGTERM => "terminated (SIGTERM)",
        SIGHUP => "hang-up (SIGHUP)",
        _ => "signal",
    }
}
