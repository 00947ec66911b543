//! Human and JSON renderings of run results, and tables for a terminal.

use comfy_table::{
    CellAlignment, ColumnConstraint, ContentArrangement, Table, TableComponent, Width, presets,
};
use sim_core::{RunResult, Value};

/// `rows` under `head`, aligned for a terminal: when stdout is one, the
/// heads and the last column (free text) wrap to fit its width
/// (comfy-table asks the terminal), the other cells never do (a value cut
/// in two reads as two): rows too wide for the terminal stay whole. Piped,
/// nothing wraps, so that `grep` and `less -S` see whole rows.
pub fn terminal(head: &[&str], rows: &[Vec<String>]) -> String {
    terminal_wrapping(head, rows, &[])
}

/// [`terminal`], with the columns `wrapping` free to wrap between words
/// too (a list of names), never inside one.
pub fn terminal_wrapping(head: &[&str], rows: &[Vec<String>], wrapping: &[usize]) -> String {
    fitted(head, rows, wrapping, None)
}

/// The width of the terminal on stdout; `None` when it is none.
pub fn terminal_width() -> Option<u16> {
    Table::new().width()
}

/// Whether rows of `columns` cells fit `width` beside the free text,
/// `wrapping` columns wrapped ([`terminal_wrapping`]).
pub fn fits(width: u16, columns: usize, rows: &[Vec<String>], wrapping: &[usize]) -> bool {
    needed(&Widths::of(columns, rows, wrapping).widest) <= u32::from(width)
}

/// Per column, the longest cell, and the width it needs at least: a
/// wrapping column its longest word.
struct Widths {
    cells: Vec<u16>,
    widest: Vec<u16>,
}

impl Widths {
    fn of(columns: usize, rows: &[Vec<String>], wrapping: &[usize]) -> Widths {
        let longest = |i: usize, split: fn(&String) -> Vec<&str>| {
            let w = (rows.iter().filter_map(|r| r.get(i)))
                .flat_map(split)
                .map(|w| w.chars().count())
                .max();
            u16::try_from(w.unwrap_or(0)).unwrap_or(u16::MAX)
        };
        let cells: Vec<u16> = (0..columns).map(|i| longest(i, |c| vec![c])).collect();
        let widest = (0..columns)
            .map(|i| {
                if wrapping.contains(&i) {
                    longest(i, |c| c.split(' ').collect())
                } else {
                    cells[i]
                }
            })
            .collect();
        Widths { cells, widest }
    }
}

/// The width a table needs: every column but the last (free text) whole
/// (at `widest`), and the last at least 24 wide; with less, rows stay
/// whole.
fn needed(widest: &[u16]) -> u32 {
    const LAST_AT_LEAST: u32 = 24;
    let last = widest.len().saturating_sub(1);
    let others: u32 = widest[..last].iter().map(|w| u32::from(*w) + 3).sum();
    others + LAST_AT_LEAST
}

/// The table for a terminal `width` wide, or (`None`) for stdout: the
/// terminal's width when it is one.
fn fitted(head: &[&str], rows: &[Vec<String>], wrapping: &[usize], width: Option<u16>) -> String {
    let mut table = Table::new();
    if let Some(w) = width {
        table.set_width(w);
    }
    table
        .load_preset(presets::NOTHING)
        .set_style(TableComponent::HeaderLines, '-')
        .set_style(TableComponent::MiddleHeaderIntersections, '-')
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(head.to_vec())
        .add_rows(rows.iter().cloned());
    let Widths { cells, widest } = Widths::of(head.len(), rows, wrapping);
    const WRAPPING_AT_MOST: u16 = 24;
    let last = widest.len().saturating_sub(1);
    let fits = table
        .width()
        .is_some_and(|w| needed(&widest) <= u32::from(w));
    if !fits {
        table.set_content_arrangement(ContentArrangement::Disabled);
    }
    // Whole, the table would not fit: what may wrap besides the free text
    // wraps first.
    let whole: u32 = cells.iter().map(|w| u32::from(*w) + 3).sum();
    let narrow = fits && table.width().is_some_and(|w| whole > u32::from(w));
    for (i, (column, w)) in table.column_iter_mut().zip(widest).enumerate() {
        column.set_padding((0, 2));
        // A constraint's width holds the padding.
        let w = w.saturating_add(2);
        if narrow && wrapping.contains(&i) && i < last {
            // The free text gets the room: a list of names wraps first.
            column.set_constraint(ColumnConstraint::Boundaries {
                lower: Width::Fixed(w),
                upper: Width::Fixed(w.max(WRAPPING_AT_MOST + 2)),
            });
        } else if i < last {
            column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(w)));
        }
    }
    table
        .to_string()
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

/// Text with Markdown pipe tables (as `analysis` and `diff` write them: no
/// `|` inside cells), each as a [`terminal`] table, its cells as written
/// (Markdown's backslash escapes undone); other lines are kept.
pub fn terminal_from_markdown(md: &str) -> String {
    let cells = |l: &str| -> Vec<String> {
        let inner = l.trim().trim_start_matches('|').trim_end_matches('|');
        inner.split('|').map(|c| unescaped(c.trim())).collect()
    };
    let lines: Vec<&str> = md.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with('|') {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        }
        let end = (i..lines.len())
            .find(|&j| !lines[j].starts_with('|'))
            .unwrap_or(lines.len());
        let head = cells(lines[i]);
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        let rows: Vec<Vec<String>> = lines[i..end].iter().skip(2).map(|l| cells(l)).collect();
        out.push_str(&terminal(&head, &rows));
        i = end;
    }
    out
}

/// Markdown text as written: a backslash before ASCII punctuation dropped.
fn unescaped(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut chars = md.chars().peekable();
    while let Some(c) = chars.next() {
        match chars.peek() {
            Some(&next) if c == '\\' && next.is_ascii_punctuation() => {
                out.push(next);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// One JSON object: `strategy`, `seed`, then every metric under its column name.
pub fn json_line(strategy: &str, seed: u64, r: &RunResult) -> String {
    let mut obj = serde_json::Map::new();
    obj.insert("strategy".into(), strategy.into());
    obj.insert("seed".into(), seed.into());
    for m in r.metrics() {
        let v = match m.value {
            Value::Count(c) => c.into(),
            Value::Real(x) => x.into(),
            Value::MaybeReal(x) => x.map_or(serde_json::Value::Null, Into::into),
            Value::Flag(b) => b.into(),
            Value::MaybeFlag(b) => b.map_or(serde_json::Value::Null, Into::into),
        };
        obj.insert(m.name, v);
    }
    // The runs table's list columns too.
    let h = &r.latency_histogram;
    obj.insert("success_latency_histogram".into(), h.ok.clone().into());
    obj.insert("failed_latency_histogram".into(), h.failed.clone().into());
    serde_json::Value::Object(obj).to_string()
}

/// A share as a percentage: one decimal, more where one would round a
/// share that is not 0 or 1 to 0.0% or 100.0% (1 failure in 4,000 users
/// is not "100.0%").
fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| {
        let shown = |d: usize| format!("{:.d$}%", v * 100.0);
        (1..=4)
            .map(shown)
            .find(|s| (v == 0.0 || s != "0.0%") && (v == 1.0 || !s.starts_with("100.0")))
            .unwrap_or_else(|| shown(4))
    })
}
fn num(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}
/// Seconds to the millisecond, or to three significant digits below one
/// (0.0005 s is not 0.001 s).
fn secs(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| {
        if v != 0.0 && v.abs() < 0.001 {
            let decimals = (3 - v.abs().log10().floor() as i64 - 1).clamp(3, 12) as usize;
            let digits = format!("{v:.decimals$}");
            format!("{} s", digits.trim_end_matches('0'))
        } else {
            format!("{v:.3} s")
        }
    })
}
/// A time that is usually a whole number of seconds, with its decimals
/// where it has any (a window from 10.4 s, a recovery of 0.3 s).
fn when(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Whether run `r` has a trigger: a scenario without one has the trigger
/// span `[0, 0)` (as the report reads it).
fn has_trigger(r: &RunResult) -> bool {
    r.window_start_s != 0.0 || r.window_end_s != 0.0
}

/// Metrics as rows, runs as columns, grouped like the source's table.
pub fn render(scenario: &str, seed: u64, runs: &[(String, RunResult)]) -> String {
    let Some((_, first)) = runs.first() else {
        return String::new();
    };
    let entry = first
        .tiers
        .first()
        .expect("a chain has a tier")
        .name
        .clone();
    let leaf = first.leaf().name.clone();
    type Cell = Box<dyn Fn(&RunResult) -> String>;
    let mut rows: Vec<(String, Option<Cell>)> = Vec::new();
    let mut group = |title: &str| rows.push((title.to_string(), None));
    group("success rate, by arrival");
    let mut row = |label: String, f: Cell| rows.push((label, Some(f)));
    row(
        "  before window".into(),
        Box::new(|r| pct(r.phases[0].success_rate())),
    );
    row(
        "  during window".into(),
        Box::new(|r| pct(r.phases[1].success_rate())),
    );
    row(
        "  after window".into(),
        Box::new(|r| pct(r.phases[2].success_rate())),
    );
    row(
        "recovery time".into(),
        // A run whose trigger ends less than a recovery window before its
        // arrivals do, or with no user in any window after it, has nothing
        // to judge: not "never" (no verdict).
        Box::new(|r| match r.recovery_s {
            _ if !has_trigger(r) => "n/a: no trigger to recover from".into(),
            Some(s) => format!("{} s", when(s)),
            None if r.recovery_censor_s < 1.0 => {
                "n/a: no window with users after the trigger".into()
            }
            None => "never".into(),
        }),
    );
    rows.push(("amplification".into(), None));
    let mut row = |label: String, f: Cell| rows.push((label, Some(f)));
    let e = entry.clone();
    row(
        format!("  {entry} attempts / user"),
        Box::new(move |r| {
            num(
                tier(r, &e).and_then(|t| sim_core::result::ratio(t.arrivals, r.users)),
                2,
            )
        }),
    );
    row(
        format!("  {leaf} arrivals / user in window"),
        Box::new(|r| {
            num(
                sim_core::result::ratio(r.leaf().arrivals_during, r.phases[1].users),
                2,
            )
        }),
    );
    row(
        format!("  {leaf} max per user / bound"),
        Box::new(|r| {
            format!(
                "{} / {}",
                r.leaf().max_arrivals_per_user,
                r.leaf().arrival_bound_per_user
            )
        }),
    );
    row(
        format!("  {leaf} arrivals / admitted"),
        Box::new(|r| format!("{} / {}", r.leaf().arrivals, r.leaf().admitted)),
    );
    rows.push(("max queue".into(), None));
    for t in &first.tiers {
        let name = t.name.clone();
        rows.push((
            format!("  {name}"),
            Some(Box::new(move |r: &RunResult| {
                tier(r, &name).map_or("-".into(), |t| t.max_queue.to_string())
            })),
        ));
    }
    rows.push(("work".into(), None));
    let mut row = |label: String, f: Cell| rows.push((label, Some(f)));
    row(
        "  goodput (ok users / leaf completions)".into(),
        Box::new(|r| num(r.goodput(), 3)),
    );
    row(
        "  wasted share of leaf completions".into(),
        Box::new(|r| pct(r.wasted_share())),
    );
    rows.push(("latency".into(), None));
    let mut row = |label: String, f: Cell| rows.push((label, Some(f)));
    row(
        "  failed, median".into(),
        Box::new(|r| secs(r.failed_latency_median_s)),
    );
    row(
        "  successful, p99".into(),
        Box::new(|r| secs(r.success_latency_p99_s)),
    );
    rows.push(("rejections and retries".into(), None));
    for (label, name) in [
        ("queue full", "rejected_full"),
        ("deadline expired (dropped)", "dropped_expired"),
        ("retry throttled", "retries_throttled"),
        ("no time left", "no_time_left"),
        ("retries sent", "retries_sent"),
        ("events", "events"),
    ] {
        rows.push((
            format!("  {label}"),
            Some(Box::new(move |r: &RunResult| count(r, name))),
        ));
    }
    // Every other reason a tier or a caller refused work, where a run has
    // some (the mechanisms most runs leave off add no row).
    for t in &first.tiers {
        for (label, suffix) in [
            ("rate limited", "rate_limited"),
            ("shed", "shed"),
            ("CoDel dropped", "codel_dropped"),
            ("refused while down", "refused_down"),
            ("lost while down", "black_holed"),
            ("breaker rejected", "breaker_rejected"),
            ("bulkhead rejected", "bulkhead_rejected"),
        ] {
            let name = format!("{}_{suffix}", t.name);
            let some = |r: &RunResult| matches!(r.metric(&name), Some(Value::Count(c)) if c > 0);
            if runs.iter().any(|(_, r)| some(r)) {
                rows.push((
                    format!("  {} {label}", t.name),
                    Some(Box::new(move |r: &RunResult| count(r, &name))),
                ));
            }
        }
    }

    let mut table = Table::new();
    table
        .load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(std::iter::once(String::new()).chain(runs.iter().map(|(s, _)| s.clone())));
    for (label, f) in &rows {
        let values = runs
            .iter()
            .map(|(_, r)| f.as_ref().map_or(String::new(), |f| f(r)));
        table.add_row(std::iter::once(label.clone()).chain(values));
    }
    // Numbers right-aligned under the strategy they belong to.
    for (i, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, 2));
        if i > 0 {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let window = if has_trigger(first) {
        format!(
            "window {}-{} s",
            when(first.window_start_s),
            when(first.window_end_s)
        )
    } else {
        "no trigger (no slow, error or crash window, spike or flush)".to_string()
    };
    let mut out = format!("scenario {scenario}, seed {seed}, {window}\n");
    for line in table.to_string().lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Count metric `name` of `r` ("-" where the run has none).
fn count(r: &RunResult, name: &str) -> String {
    match r.metric(name) {
        Some(Value::Count(c)) => c.to_string(),
        _ => "-".into(),
    }
}

fn tier<'r>(r: &'r RunResult, name: &str) -> Option<&'r sim_core::result::TierStats> {
    r.tiers.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {

    /// `--json` holds the runs table's list columns too: the latency
    /// histograms, whose counts add up to the users who finished.
    #[test]
    fn a_json_line_has_the_latency_histograms() {
        let mut s = sim_core::ch37();
        (s.client.duration_s, s.horizon_s) = (5.0, 6.0);
        sim_core::params::set(&mut s, "svc_b.slow.start_s", &toml::Value::Float(2.0)).unwrap();
        let r = sim_core::run(&s, 1).unwrap();
        let line: serde_json::Value =
            serde_json::from_str(&super::json_line("naive", 1, &r)).unwrap();
        let total = |k: &str| {
            line[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap())
                .sum::<u64>()
        };
        assert_eq!(total("success_latency_histogram"), r.users_ok);
    }

    /// Figures keep what rounding would hide: a share that is not 0 or 1
    /// is not printed as one, a sub-millisecond time keeps its digits, a
    /// time with decimals keeps them.
    #[test]
    fn the_table_does_not_round_a_figure_into_another() {
        assert_eq!(super::pct(Some(0.99975)), "99.98%");
        assert_eq!(super::pct(Some(1.0)), "100.0%");
        assert_eq!(super::pct(Some(0.0001)), "0.01%");
        assert_eq!(super::pct(Some(0.5)), "50.0%");
        assert_eq!(super::secs(Some(0.0005)), "0.0005 s");
        assert_eq!(super::secs(Some(0.1234)), "0.123 s");
        assert_eq!(super::secs(Some(0.0)), "0.000 s");
        assert_eq!(super::when(10.4), "10.4");
        assert_eq!(super::when(30.0), "30");
    }

    /// On a terminal, a list of names wraps between names and the free
    /// text beside it; piped, or where the values do not fit beside the
    /// free text, rows stay whole.
    #[test]
    fn a_list_of_names_wraps_between_names_only_on_a_terminal() {
        let kinds = "round_robin / random / least_outstanding / p2c / pin_until_error";
        let doc = "How a caller picks one of a tier's replicas for each attempt, by name.";
        let rows = vec![vec![
            "svc_a.balancer".to_string(),
            kinds.to_string(),
            doc.to_string(),
        ]];
        let head = ["path", "type", "what it does"];
        let on = |width| super::fitted(&head, &rows, &[1], width);
        let narrow = on(Some(80));
        assert!(narrow.lines().all(|l| l.chars().count() <= 80), "{narrow}");
        let names: Vec<&str> = kinds.split(" / ").collect();
        let lines: Vec<&str> = narrow.lines().skip(2).collect();
        assert!(lines.len() > 1, "{narrow}");
        for name in names {
            assert!(
                lines.iter().any(|l| l.contains(name)),
                "{name} cut: {narrow}"
            );
        }
        let whole = |t: &str| t.lines().count() == 3 && t.contains(kinds) && t.contains(doc);
        assert!(whole(&on(None)), "{}", on(None));
        assert!(whole(&on(Some(200))), "{}", on(Some(200)));
        // The path and the longest name leave no room for the free text.
        assert!(whole(&on(Some(50))), "{}", on(Some(50)));
        assert!(super::fits(80, 3, &rows, &[1]) && !super::fits(50, 3, &rows, &[1]));
        // Unwrapped, the names need 64 columns.
        assert!(!super::fits(80, 3, &rows, &[]));
    }

    /// The columns line up under their heads, a rule under the head, and
    /// no pipe is left.
    #[test]
    fn a_markdown_table_becomes_aligned_columns() {
        let md =
            "| strategy | p_not_recovered |\n|---|---|\n| naive | 1.000 |\n| protected | 0.000 |\n";
        let out = super::terminal_from_markdown(md);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(!out.contains('|'), "{out}");
        assert!(lines[1].chars().all(|c| c == '-'), "{out}");
        let col = |l: &str, word: &str| l.find(word).unwrap();
        assert_eq!(col(lines[0], "p_not"), col(lines[2], "1.000"), "{out}");
        assert_eq!(col(lines[2], "1.000"), col(lines[3], "0.000"), "{out}");
    }

    /// `sweep one`'s table: every value ends under the end of its
    /// strategy's head, and the labels start at the margin.
    #[test]
    fn run_values_line_up_under_their_strategy() {
        let mut short = sim_core::ch37();
        short.client.duration_s = 12.0;
        short.horizon_s = 14.0;
        let run = |preset: &str| {
            let mut s = short.clone();
            sim_core::params::set(&mut s, "strategy", &toml::Value::from(preset)).unwrap();
            (preset.to_string(), sim_core::run(&s, 1).unwrap())
        };
        let out = super::render("ch37", 1, &[run("naive"), run("deadline_budget")]);
        let lines: Vec<&str> = out.lines().collect();
        let head = lines[1];
        let ends: Vec<usize> = ["naive", "deadline_budget"]
            .iter()
            .map(|h| head.find(h).unwrap() + h.len())
            .collect();
        let row = |label: &str| *lines.iter().find(|l| l.starts_with(label)).unwrap();
        for label in ["  before window", "  svc_b arrivals / admitted", "  events"] {
            let line = row(label);
            assert_eq!(line.len(), ends[1], "{out}");
            let first_end = line[..ends[0]].trim_end().len();
            assert_eq!(first_end, ends[0], "{label}: {out}");
        }
        assert!(
            row("success rate, by arrival")
                .trim_end()
                .ends_with("arrival")
        );
    }

    /// A run whose trigger ends too late for a recovery window to fit has
    /// no verdict: not "never"; one with a window says its verdict.
    #[test]
    fn a_run_that_cannot_show_recovery_is_not_said_never() {
        let recovery = |duration_s: f64, horizon_s: f64| {
            let mut s = sim_core::ch37();
            (s.client.duration_s, s.horizon_s) = (duration_s, horizon_s);
            let out = super::render(
                "ch37",
                1,
                &[("naive".into(), sim_core::run(&s, 1).unwrap())],
            );
            let line = out
                .lines()
                .find(|l| l.starts_with("recovery time"))
                .unwrap();
            line["recovery time".len()..].trim().to_string()
        };
        // The slow window ends at 30 s; ch37's recovery window is 5 s.
        assert_eq!(
            recovery(31.0, 35.0),
            "n/a: no window with users after the trigger"
        );
        assert_eq!(recovery(60.0, 70.0), "never");
    }

    /// A scenario without a trigger has nothing to recover from: said so,
    /// in the header and the recovery row, not "never".
    #[test]
    fn a_run_without_a_trigger_is_said_to_have_none() {
        let mut s = sim_core::ch37();
        (s.client.duration_s, s.horizon_s) = (20.0, 25.0);
        for (key, v) in [
            ("svc_b.slow.start_s", 0.0),
            ("svc_b.slow.duration_s", 0.0),
            ("svc_b.slow.factor", 1.0),
        ] {
            sim_core::params::set(&mut s, key, &toml::Value::Float(v)).unwrap();
        }
        let out = super::render(
            "ch37",
            1,
            &[("naive".into(), sim_core::run(&s, 1).unwrap())],
        );
        assert!(
            out.starts_with("scenario ch37, seed 1, no trigger (no slow, error or crash window, spike or flush)\n"),
            "{out}"
        );
        let line = out
            .lines()
            .find(|l| l.starts_with("recovery time"))
            .unwrap();
        assert_eq!(
            line["recovery time".len()..].trim(),
            "n/a: no trigger to recover from"
        );
    }
}
