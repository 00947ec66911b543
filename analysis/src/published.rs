//! Published figures beside the model's: a grid that repeats an experiment
//! from its source lists the source's figures (`[[report.reference]]`), and
//! the report prints each next to what the runs of the same point give.

use crate::load::Sweep;
use crate::manifest::Reference;

/// One published figure and the model's runs at its point.
#[derive(Debug, PartialEq)]
pub struct Comparison<'a> {
    pub reference: &'a Reference,
    /// The metric over the point's ok runs (one per seed): mean, min, max
    /// and how many; `None` if the point names no level or has no run with
    /// the metric.
    pub model: Option<(f64, f64, f64, usize)>,
}

pub fn compare(sweep: &Sweep) -> Vec<Comparison<'_>> {
    let report = &sweep.manifest.report;
    report
        .reference
        .iter()
        .map(|r| {
            let values = sweep.metric(&r.metric).unwrap_or_default();
            let model = sweep.levels_of(&r.point).and_then(|want| {
                let xs: Vec<f64> = (0..sweep.positions.len())
                    .filter(|&run| sweep.ok()[run])
                    .filter(|&run| want.iter().all(|&(d, l)| sweep.positions[run][d] == l))
                    .filter_map(|run| values.get(run).copied().flatten())
                    .collect();
                let n = xs.len();
                (n > 0).then(|| {
                    let (lo, hi) = xs
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                            (a.min(x), b.max(x))
                        });
                    (xs.iter().sum::<f64>() / n as f64, lo, hi, n)
                })
            });
            Comparison {
                reference: r,
                model,
            }
        })
        .collect()
}

/// The report's section, or `None` when the grid lists no figures.
pub fn section(sweep: &Sweep) -> Option<String> {
    let rows = compare(sweep);
    if rows.is_empty() {
        return None;
    }
    let mut md = String::from("### Beside the published figures\n\n");
    if let Some(source) = &sweep.manifest.report.reference_source {
        md.push_str(&format!("{}\n\n", crate::tables::markdown_text(source)));
    }
    md.push_str(
        "The model's figure is the mean over the point's runs (one per seed), with the smallest and largest run in brackets.\n\n\
         | point | metric | published | this model | difference | why they differ |\n|:---|:---|---:|---:|---:|:---|\n",
    );
    for c in &rows {
        let r = c.reference;
        let (model, diff) = match c.model {
            Some((mean, lo, hi, n)) => (
                format!(
                    "{} [{} - {}], {n} runs",
                    figure(mean),
                    figure(lo),
                    figure(hi)
                ),
                difference(r.published, mean),
            ),
            None => ("no run at this point".to_string(), "-".to_string()),
        };
        md.push_str(&format!(
            "| `{}` | `{}` | {} | {model} | {diff} | {} |\n",
            r.point,
            r.metric,
            crate::load::number(r.published),
            crate::tables::markdown_text(&r.note)
        ));
    }
    md.push('\n');
    Some(md)
}

/// `+12%` of the published figure, or the plain difference from a
/// published 0.
fn difference(published: f64, model: f64) -> String {
    if published == 0.0 {
        return match figure(model) {
            zero if model == 0.0 => zero,
            f if model < 0.0 => f,
            f => format!("+{f}"),
        };
    }
    let percent = ((model - published) / published.abs() * 100.0).round();
    if percent == 0.0 {
        return "0%".to_string();
    }
    format!("{percent:+}%")
}

/// Three significant digits, whole numbers as they are (`126`, `73.9`,
/// `0.985`).
fn figure(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let digits = (2 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::{difference, figure};

    #[test]
    fn figures_keep_three_digits_and_differences_their_sign() {
        assert_eq!(figure(126.0), "126");
        assert_eq!(figure(73.94), "73.9");
        assert_eq!(figure(0.98512), "0.985");
        assert_eq!(figure(1234.6), "1235");
        assert_eq!(difference(126.0, 121.0), "-4%");
        assert_eq!(difference(120.0, 120.45), "0%");
        assert_eq!(difference(0.0, 0.0), "0");
        assert_eq!(difference(0.0, 2.5), "+2.5");
        assert_eq!(difference(4.0, 0.0), "-100%");
    }
}
