//! List-expanding axis ranges: `{ start, stop, step }` and
//! `{ start, stop, num, log = true }` become the list of levels they
//! stand for, before anything else sees the axis (so a range and the list
//! it expands to are the same grid, point ids included).
//!
//! Levels are exact decimals: a step range is computed in integers scaled
//! by the inputs' decimal places (0.1 + 0.2 gives the level 0.3, not
//! 0.30000000000000004), and the stop is inclusive when the steps land on
//! it. Levels of an integer parameter (`Int`, `Cap`) stay integers.

use sim_core::params::{self, Kind};
use toml::Value;

/// The keys a range takes; anything else is refused.
const KEYS: &[&str] = &["start", "stop", "step", "num", "log"];

/// The most levels one range may expand to (a typo such as `step = 0.0001`
/// would otherwise build millions of levels before the size check).
const MAX_LEVELS: u64 = 1_000_000;

/// Significant digits kept of a `num` range's levels: enough for any
/// parameter, few enough that `10^(1/3)`-like noise does not show.
const DIGITS: usize = 12;

/// Whether a table is meant as a list-expanding range (it has `start`).
pub fn is_range(t: &toml::Table) -> bool {
    t.contains_key("start") || t.contains_key("stop")
}

/// The levels of range `t` for parameter `path`, or why it has none.
pub fn expand(path: &str, t: &toml::Table) -> Result<Vec<Value>, String> {
    if let Some(k) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unknown key `{k}` in a range (it takes start, stop, and step, or num with optional log = true)"
        ));
    }
    let integer = matches!(
        params::param_of(path).map(|p| p.kind),
        Some(Kind::Int | Kind::Cap)
    );
    let number = |key: &str| -> Result<Option<f64>, String> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(Value::Float(x)) if x.is_finite() => Ok(Some(*x)),
            Some(other) => Err(format!("`{key}` must be a number, got {other}")),
        }
    };
    let log = match t.get("log") {
        None => Ok(false),
        Some(Value::Boolean(b)) => Ok(*b),
        Some(other) => Err(format!("`log` must be true or false, got {other}")),
    };
    // Each key's type is told at once, not the first fault alone.
    let (start, stop, step) = (number("start"), number("stop"), number("step"));
    let faults = crate::grid::joined_faults([
        start.as_ref().err(),
        stop.as_ref().err(),
        step.as_ref().err(),
        log.as_ref().err(),
    ]);
    if !faults.is_empty() {
        return Err(faults);
    }
    let (Ok(Some(start)), Ok(Some(stop)), Ok(step), Ok(log)) = (start, stop, step, log) else {
        return Err("a range needs both `start` and `stop`".into());
    };
    let levels = match (t.get("step"), t.get("num")) {
        (Some(_), Some(_)) => return Err("give either `step` or `num`, not both".into()),
        (None, None) => return Err("a range needs `step` (or `num`)".into()),
        (Some(_), None) if log => {
            return Err(
                "`log = true` takes `num` (levels evenly spaced in log), not `step`".into(),
            );
        }
        (Some(_), None) => {
            let step = step.expect("`step` is given");
            step_levels(t, start, stop, step, integer)?
        }
        (None, Some(n)) => {
            let num = match n {
                Value::Integer(n) if *n >= 1 => *n as u64,
                other => return Err(format!("`num` must be an integer >= 1, got {other}")),
            };
            // numpy's linspace gives [start] here: a stop that is no
            // level is a surprise in a grid, so it is said.
            if num == 1 && start != stop {
                return Err(format!(
                    "num = 1 gives the start ({start}) alone: the stop ({stop}) would be no level; give num >= 2, or the level as a list"
                ));
            }
            if num > MAX_LEVELS {
                return Err(format!("num = {num} is more than {MAX_LEVELS} levels"));
            }
            num_levels(start, stop, num, log, integer)?
        }
    };
    Ok(levels)
}

/// `start, start + step, ...` up to `stop` inclusive, in exact decimals.
fn step_levels(
    t: &toml::Table,
    start: f64,
    stop: f64,
    step: f64,
    integer: bool,
) -> Result<Vec<Value>, String> {
    if step == 0.0 || (stop - start) * step < 0.0 {
        return Err(format!(
            "step = {step} never goes from {start} to {stop} (it must be non-zero, with the sign of stop - start)"
        ));
    }
    if integer && (start.fract() != 0.0 || step.fract() != 0.0) {
        return Err(
            "the parameter takes integers: start and step must be integers (stop may be any number)"
                .into(),
        );
    }
    // Every input as an integer count of 10^-places.
    let places = ["start", "stop", "step"]
        .iter()
        .filter_map(|k| t.get(*k))
        .map(decimal_places)
        .max()
        .unwrap_or(0);
    if places > 15 {
        return Err("start, stop and step may have at most 15 decimal places".into());
    }
    let scale = 10f64.powi(places as i32);
    let scaled = |x: f64| (x * scale).round() as i128;
    let (a, b, s) = (scaled(start), scaled(stop), scaled(step));
    let count = (b - a) / s + 1;
    if count as u64 > MAX_LEVELS {
        return Err(format!(
            "{count} levels, more than the {MAX_LEVELS} a range may expand to"
        ));
    }
    Ok((0..count)
        .map(|i| {
            let v = a + i * s;
            if integer || places == 0 && all_integers(t) {
                Value::Integer(v as i64)
            } else {
                Value::Float(exact_decimal(v, places))
            }
        })
        .collect())
}

/// `num` levels from `start` to `stop` inclusive, evenly spaced (in log
/// with `log`), rounded to [`DIGITS`] significant digits (integers for an
/// integer parameter, refused when two would round to the same level).
fn num_levels(
    start: f64,
    stop: f64,
    num: u64,
    log: bool,
    integer: bool,
) -> Result<Vec<Value>, String> {
    if log && (start <= 0.0 || stop <= 0.0) {
        return Err(format!(
            "log = true needs start and stop > 0, got {start} and {stop}"
        ));
    }
    let at = |i: u64| {
        if num == 1 || i == 0 {
            return start;
        }
        if i == num - 1 {
            return stop;
        }
        let f = i as f64 / (num - 1) as f64;
        if log {
            libm::exp(libm::log(start) + f * (libm::log(stop) - libm::log(start)))
        } else {
            start + f * (stop - start)
        }
    };
    let mut out: Vec<Value> = Vec::with_capacity(num as usize);
    for i in 0..num {
        let x = at(i);
        let v = if integer {
            Value::Integer(x.round() as i64)
        } else {
            Value::Float(round_significant(x))
        };
        if out.last() == Some(&v) {
            return Err(format!(
                "num = {num} levels between {start} and {stop} repeat the level {v}{}: use fewer",
                if integer {
                    " (the parameter takes integers)"
                } else {
                    ""
                }
            ));
        }
        out.push(v);
    }
    Ok(out)
}

fn all_integers(t: &toml::Table) -> bool {
    ["start", "stop", "step"]
        .iter()
        .filter_map(|k| t.get(*k))
        .all(Value::is_integer)
}

/// The decimal places of a number as written (its shortest round-trip form).
fn decimal_places(v: &Value) -> usize {
    match v {
        Value::Float(x) => {
            let s = format!("{x}");
            if s.contains('e') {
                // 1e-7 and the like: as many places as the exponent says.
                let (m, e) = s.split_once('e').expect("checked");
                let e: i32 = e.parse().unwrap_or(0);
                let m_places = m.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
                (m_places - e).max(0) as usize
            } else {
                s.split_once('.').map_or(0, |(_, f)| f.len())
            }
        }
        _ => 0,
    }
}

/// `v x 10^-places` as the float closest to that decimal (parsed from its
/// decimal spelling, so 3 x 10^-1 is exactly the float of `0.3`).
fn exact_decimal(v: i128, places: usize) -> f64 {
    let digits = v.unsigned_abs().to_string();
    let digits = format!("{digits:0>width$}", width = places + 1);
    let (int, frac) = digits.split_at(digits.len() - places);
    let sign = if v < 0 { "-" } else { "" };
    format!("{sign}{int}.{frac}0").parse().expect("a decimal")
}

fn round_significant(x: f64) -> f64 {
    format!("{x:.*e}", DIGITS - 1).parse().expect("a float")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    fn floats(v: &[Value]) -> Vec<f64> {
        v.iter().map(|v| v.as_float().unwrap()).collect()
    }

    #[test]
    fn a_decimal_step_gives_exact_decimals_and_an_inclusive_stop() {
        let v = expand(
            "svc_a.timeout_s",
            &range("start = 0.1\nstop = 0.5\nstep = 0.1"),
        )
        .unwrap();
        assert_eq!(floats(&v), [0.1, 0.2, 0.3, 0.4, 0.5]);
        // Float accumulation would give 0.30000000000000004 and stop early.
        let v = expand(
            "svc_a.timeout_s",
            &range("start = 0.0\nstop = 1.0\nstep = 0.1"),
        )
        .unwrap();
        assert_eq!(v.len(), 11);
        assert_eq!(v[3].as_float(), Some(0.3));
        assert_eq!(v[10].as_float(), Some(1.0));
    }

    #[test]
    fn a_stop_between_steps_is_not_passed_and_steps_may_go_down() {
        let v = expand("svc_a.timeout_s", &range("start = 1\nstop = 2.5\nstep = 1")).unwrap();
        assert_eq!(floats(&v), [1.0, 2.0]);
        let v = expand(
            "svc_a.timeout_s",
            &range("start = 1\nstop = 0\nstep = -0.25"),
        )
        .unwrap();
        assert_eq!(floats(&v), [1.0, 0.75, 0.5, 0.25, 0.0]);
    }

    /// One level from start to another stop leaves the stop out: refused
    /// with the reason; from start to itself it is that level.
    #[test]
    fn one_level_between_two_ends_is_refused() {
        assert_eq!(
            expand("svc_a.timeout_s", &range("start = 0.5\nstop = 2\nnum = 1")),
            Err("num = 1 gives the start (0.5) alone: the stop (2) would be no level; give num >= 2, or the level as a list".into())
        );
        let v = expand(
            "svc_a.timeout_s",
            &range("start = 0.5\nstop = 0.5\nnum = 1"),
        )
        .unwrap();
        assert_eq!(floats(&v), [0.5]);
    }

    #[test]
    fn integer_parameters_stay_integers() {
        let v = expand(
            "svc_b.queue_cap",
            &range("start = 16\nstop = 64\nstep = 16"),
        )
        .unwrap();
        assert_eq!(
            v,
            [16, 32, 48, 64].map(Value::Integer).to_vec(),
            "a cap's levels"
        );
        let v = expand(
            "svc_b.queue_cap",
            &range("start = 1\nstop = 1000\nnum = 4\nlog = true"),
        )
        .unwrap();
        assert_eq!(v, [1, 10, 100, 1000].map(Value::Integer).to_vec());
        let e = expand(
            "svc_b.queue_cap",
            &range("start = 1\nstop = 4\nnum = 8\nlog = true"),
        )
        .unwrap_err();
        assert!(e.contains("repeat the level 1"), "{e}");
        let e = expand("svc_b.queue_cap", &range("start = 1\nstop = 4\nstep = 0.5")).unwrap_err();
        assert!(e.contains("takes integers"), "{e}");
    }

    #[test]
    fn a_log_range_is_geometric_with_exact_ends() {
        let v = expand(
            "client.rate_per_s",
            &range("start = 0.01\nstop = 100\nnum = 5\nlog = true"),
        )
        .unwrap();
        assert_eq!(floats(&v), [0.01, 0.1, 1.0, 10.0, 100.0]);
        let v = expand(
            "client.rate_per_s",
            &range("start = 100\nstop = 400\nnum = 4"),
        )
        .unwrap();
        assert_eq!(floats(&v), [100.0, 200.0, 300.0, 400.0]);
    }

    #[test]
    fn every_misuse_says_what_is_wrong() {
        let cases = [
            ("start = 1\nstop = 2", "needs `step` (or `num`)"),
            ("start = 1\nstop = 2\nstep = 0", "never goes from 1 to 2"),
            ("start = 1\nstop = 2\nstep = -1", "never goes from 1 to 2"),
            (
                "start = 1\nstop = 2\nstep = 1\nnum = 2",
                "either `step` or `num`",
            ),
            ("start = 1\nstop = 2\nstep = 1\nlog = true", "takes `num`"),
            (
                "start = 0\nstop = 2\nnum = 3\nlog = true",
                "start and stop > 0",
            ),
            ("start = 1\nstop = 2\nnum = 0", "integer >= 1"),
            ("start = 1\nstop = 2\nstpe = 1", "unknown key `stpe`"),
            (
                "start = \"a\"\nstop = 2\nstep = 1",
                "`start` must be a number",
            ),
            ("stop = 2\nstep = 1", "both `start` and `stop`"),
            ("start = 0\nstop = 1\nstep = 1e-7", "more than the 1000000"),
        ];
        for (text, want) in cases {
            let e = expand("svc_a.timeout_s", &range(text)).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
        // Every key of the wrong type at once.
        let e = expand(
            "svc_a.timeout_s",
            &range("start = nan\nstop = inf\nstep = \"x\"\nlog = 1"),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "`start` must be a number, got nan; `stop` must be a number, got inf; `step` must be a number, got \"x\"; `log` must be true or false, got 1"
        );
    }
}
