//! MODEL.md 2's qualitative picture, at several seeds.

mod common;
use common::*;
use sim_core::CH37_STRATEGIES;

const SEEDS: [u64; 3] = [1, 2, 7];

#[test]
fn quiet_load_succeeds_without_amplification_under_every_strategy() {
    for dispatch in DISPATCHES {
        for p in CH37_STRATEGIES {
            for seed in SEEDS {
                let r = run(&ch37(p, dispatch, &[("svc_b.slow.duration_s", "0")]), seed);
                let rate = r.success_rate().unwrap();
                let per_user = r.leaf().arrivals as f64 / r.users as f64;
                assert!(rate >= 0.99, "{p}/{dispatch}/{seed}: success {rate}");
                assert!(
                    per_user < 1.02,
                    "{p}/{dispatch}/{seed}: svc_b arrivals per user {per_user}"
                );
                assert_eq!(r.recovery_s, Some(0.0));
            }
        }
    }
}

#[test]
fn naive_never_recovers_whatever_the_window() {
    for window in ["2", "5", "10", "20"] {
        for seed in SEEDS {
            let r = run(
                &ch37("naive", "fifo", &[("svc_b.slow.duration_s", window)]),
                seed,
            );
            assert_eq!(r.recovery_s, None, "window {window} s, seed {seed}");
            // Counted as the first recovery time the run could not observe:
            // arrivals end (60) - recovery window (3) - window end + 1.
            let end: f64 = 10.0 + window.parse::<f64>().unwrap();
            assert_eq!(real(&r, "recovery_censored_s"), Some(58.0 - end));
            assert!(real(&r, "success_rate_before").unwrap() >= 0.99);
        }
    }
}

#[test]
fn protected_recovers_fast_fails_fast_and_bounds_its_queues() {
    for dispatch in DISPATCHES {
        for seed in SEEDS {
            let r = run(&ch37("protected", dispatch, &[]), seed);
            let label = format!("{dispatch}/{seed}");
            assert!(
                r.recovery_s.is_some_and(|t| t <= 2.0),
                "{label}: recovery {:?}",
                r.recovery_s
            );
            assert!(count(&r, "svc_b_max_queue") <= 16, "{label}");
            assert_eq!(count(&r, "svc_a_max_queue"), 0, "{label}");
            let failed = r.failed_latency_median_s.unwrap();
            assert!(failed < 0.2, "{label}: failed median {failed}");
            // Cheap rejections are counted apart from admitted work.
            assert!(r.leaf().rejected_full > 0 && r.leaf().admitted < r.leaf().arrivals);
        }
    }
}

#[test]
fn deadline_strategies_recover_and_faster_under_reply_first() {
    for p in ["deadline", "deadline_budget"] {
        for seed in SEEDS {
            let fifo = run(&ch37(p, "fifo", &[]), seed).recovery_s;
            let reply_first = run(&ch37(p, "reply_first", &[]), seed).recovery_s;
            let (Some(f), Some(rf)) = (fifo, reply_first) else {
                panic!("{p}/{seed}: fifo {fifo:?}, reply_first {reply_first:?}");
            };
            assert!(
                rf < f,
                "{p}/{seed}: reply_first {rf} s not faster than fifo {f} s"
            );
            // Under fifo the recovery is a retry-sustained overload of seconds.
            assert!(f >= 2.0, "{p}/{seed}: fifo recovered in {f} s");
        }
    }
}

#[test]
fn naive_and_protected_do_not_depend_on_the_dispatch_discipline() {
    for p in ["naive", "protected"] {
        let a = run(&ch37(p, "fifo", &[]), 1);
        let b = run(&ch37(p, "reply_first", &[]), 1);
        assert_eq!(a.users_ok, b.users_ok, "{p}");
        assert_eq!(a.recovery_s, b.recovery_s, "{p}");
    }
}

#[test]
fn amplification_never_exceeds_its_computable_bound() {
    for (p, bound) in [
        ("naive", 48),
        ("deadline", 48),
        ("deadline_budget", 9),
        ("protected", 9),
    ] {
        for dispatch in DISPATCHES {
            for seed in SEEDS {
                let r = run(&ch37(p, dispatch, &[]), seed);
                assert_eq!(r.leaf().arrival_bound_per_user, bound, "{p}");
                assert!(
                    r.leaf().max_arrivals_per_user <= bound,
                    "{p}/{dispatch}/{seed}"
                );
                assert!(
                    r.leaf().max_arrivals_per_user >= 2,
                    "{p}: retries do reach svc_b"
                );
            }
        }
    }
}

#[test]
fn work_nobody_waits_for_is_visible() {
    // R3: with unbounded queues and deadlines, svc_b finishes work for callers
    // that already left.
    let r = run(&ch37("deadline", "fifo", &[]), 1);
    let wasted = r.wasted_share().unwrap();
    assert!(wasted > 0.05, "wasted share {wasted}");
    assert!(r.series.tiers[2].late[10..30].iter().sum::<u64>() > 0);
}
