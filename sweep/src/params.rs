//! `sweep params`: every parameter path of a scenario with its type, its
//! value in that scenario (the default an override replaces), the values
//! the catalogue accepts and its doc, grouped by tier, as a table fitted
//! to the terminal; with a filter, each matching path in full: its whole
//! doc and when it acts.

use crate::error::Error;
use clap::Args;
use serde_json::Value as Json;
use std::process::ExitCode;

#[derive(Args)]
pub struct ParamsArgs {
    /// Show only the paths that contain this text, each in full: its whole
    /// doc and when it can act (e.g. `sweep params dispatch`).
    #[arg(conflicts_with = "markdown")]
    filter: Option<String>,
    /// Print the Markdown page (docs/params.md) instead: the catalogue,
    /// whatever the scenario, so it takes no --scenario.
    #[arg(long, conflicts_with = "scenario")]
    markdown: bool,
    /// Built-in scenario name or path to a scenario TOML file whose values
    /// are shown as the defaults (`-`: not set there).
    #[arg(long, default_value = "ch37")]
    scenario: String,
}

pub fn params(args: &ParamsArgs) -> Result<ExitCode, Error> {
    if args.markdown {
        print!("{}", sim_core::params::markdown());
        return Ok(ExitCode::SUCCESS);
    }
    let scenario = sim_core::load_base(&args.scenario).map_err(|errors| Error::Config {
        context: format!("cannot load the scenario `{}`", args.scenario),
        errors,
    })?;
    let json = serde_json::to_value(&scenario).expect("a scenario serializes");
    // Headers: the scenario's own paths, each client group's (the client
    // first), then each tier's.
    let owners: Vec<String> = (scenario.groups().map(|(g, _)| g.to_string()))
        .chain(scenario.tiers.iter().map(|t| t.name.clone()))
        .collect();
    let paths = sim_core::params::paths(&scenario);
    let group_of = |path: &str| {
        let first = path.split('.').next().unwrap_or_default();
        if owners.iter().any(|o| o == first) {
            first.to_string()
        } else {
            "scenario".to_string()
        }
    };
    if let Some(filter) = &args.filter {
        let found: Vec<&String> = paths
            .iter()
            .filter(|p| p.contains(filter.as_str()))
            .collect();
        if found.is_empty() {
            return Err(Error::Config {
                context: format!(
                    "no parameter path of the scenario `{}` matches",
                    args.scenario
                ),
                errors: vec![sim_core::ConfigError::new(
                    filter.clone(),
                    "no path contains it (`sweep params` lists them all)",
                )],
            });
        }
        for path in found {
            print!("{}", in_full(path, &default_of(&json, path)));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let groups = std::iter::once("scenario".to_string()).chain(owners.iter().cloned());
    for group in groups {
        let here: Vec<&String> = paths.iter().filter(|p| group_of(p) == group).collect();
        if here.is_empty() {
            continue;
        }
        // The scenario's own paths come first, under no header.
        if group != "scenario" {
            println!("\n[{group}]");
        }
        let mut rows = Vec::new();
        for path in here {
            let param = sim_core::params::param_of(path);
            let kind = param.map(|d| d.kind.describe()).unwrap_or_default();
            let doc = param.map_or("", |d| line_doc(d.kind, d.doc));
            let default = default_of(&json, path);
            let range = param.map(|d| d.range()).unwrap_or_default();
            rows.push(vec![path.clone(), kind, default, range, doc.to_string()]);
        }
        // The type may wrap between the names of a choice. A terminal too
        // narrow for the columns gets the path beside the rest as text.
        let narrow =
            crate::table::terminal_width().is_some_and(|w| !crate::table::fits(w, 5, &rows, &[1]));
        let table = if narrow {
            crate::table::terminal(
                &["path", "type, default, range: what it does"],
                &stacked(rows),
            )
        } else {
            crate::table::terminal_wrapping(
                &["path", "type", "default", "accepted", "what it does"],
                &rows,
                &[1],
            )
        };
        print!("{table}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The value of `path` in the serialized scenario `json`, as `--set` would
/// write it (`-`: not set there).
fn default_of(json: &Json, path: &str) -> String {
    let param = sim_core::params::param_of(path);
    match lookup(json, &path.split('.').collect::<Vec<_>>()) {
        Some(Json::Null) | None if param.is_some_and(|d| d.kind == sim_core::params::Kind::Cap) => {
            "\"unbounded\"".to_string()
        }
        Some(v) => show(v),
        None => "-".to_string(),
    }
}

/// One path in full: its type, value in the scenario, accepted values,
/// when it acts (the refusal rules of `sim_core::validate`) and whole doc.
fn in_full(path: &str, default: &str) -> String {
    let Some(param) = sim_core::params::param_of(path) else {
        return format!("{path}\n  default   {default}\n\n");
    };
    let mut out = format!(
        "{path}\n  type      {}\n  default   {default}\n",
        param.kind.describe()
    );
    let range = param.range();
    if !range.is_empty() {
        out.push_str(&format!("  accepted  {range}\n"));
    }
    let acts = sim_core::params::acts_when(param.scope, param.key);
    if !acts.is_empty() {
        out.push_str(&format!("  acts when {}\n", acts.join("; ")));
    }
    out.push_str(&format!("  {}\n\n", param.doc.trim()));
    out
}

/// Rows of path, type, default, range and doc as path and text: "number,
/// default 400.0, >= 0: Mean rate ...", leaving out what the type says.
fn stacked(rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    (rows.into_iter())
        .map(|r| {
            let [path, kind, default, range, doc] =
                <[String; 5]>::try_from(r).expect("five columns");
            let mut about = vec![kind];
            if default != "-" {
                about.push(format!("default {default}"));
            }
            if !range.is_empty() && !range.starts_with("a name") {
                about.push(range);
            }
            vec![path, format!("{}: {doc}", about.join(", "))]
        })
        .collect()
}

/// A value as a grid or `--set` would write it.
fn show(v: &Json) -> String {
    match v {
        Json::Null => "-".to_string(),
        Json::String(s) => format!("\"{s}\""),
        Json::Array(a) if a.is_empty() => "-".to_string(),
        other => other.to_string(),
    }
}

/// The doc in a line: a choice's whole (its first sentence often says
/// what one name means, the next ones the others), else its first
/// sentence.
fn line_doc(kind: sim_core::params::Kind, doc: &str) -> &str {
    use sim_core::params::Kind;
    match kind {
        Kind::Choice(_) | Kind::Choices(_) => doc.trim(),
        _ => first_sentence(doc),
    }
}

/// The doc's first sentence, on one line.
fn first_sentence(doc: &str) -> &str {
    let doc = doc.trim();
    let end = doc
        .match_indices(". ")
        .map(|(i, _)| i)
        .find(|i| !doc[..*i].ends_with("i.e") && !doc[..*i].ends_with("e.g"))
        .map(|i| i + 1)
        .or_else(|| doc.find('\n'))
        .unwrap_or(doc.len());
    doc[..end].trim()
}

/// The value of a path in the serialized scenario: tiers and client groups
/// by name, a call
/// policy's fields under `call`, a window, spike or profile point by its
/// number (the first when not given), a class or fan-out branch by name.
fn lookup<'a>(v: &'a Json, segs: &[&str]) -> Option<&'a Json> {
    let Some((first, rest)) = segs.split_first() else {
        return Some(v);
    };
    match v {
        Json::Object(m) => {
            if let Some(found) = (m.get(*first).or_else(|| m.get("clients")?.get(*first)))
                .and_then(|next| lookup(next, rest))
            {
                return Some(found);
            }
            let named = ["tiers", "fanout", "classes"].iter().find_map(|list| {
                m.get(*list)
                    .and_then(Json::as_array)
                    .and_then(|a| a.iter().find(|e| names(e, first)))
                    .and_then(|e| lookup(e, rest))
            });
            named.or_else(|| m.get("call").and_then(|call| lookup(call, segs)))
        }
        Json::Array(a) => match first.parse::<usize>() {
            Ok(n) => a.get(n).and_then(|e| lookup(e, rest)),
            Err(_) => a
                .iter()
                .find(|e| names(e, first))
                .and_then(|e| lookup(e, rest))
                .or_else(|| a.first().and_then(|e| lookup(e, segs))),
        },
        _ => None,
    }
}

/// Whether a list entry is the one named `name` (a tier, class or branch).
fn names(entry: &Json, name: &str) -> bool {
    ["name", "to", "tier"]
        .iter()
        .any(|k| entry.get(*k).and_then(Json::as_str) == Some(name))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_narrow_terminal_reads_the_type_default_and_range_as_text() {
        let row = |cells: [&str; 5]| cells.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        let rows = vec![
            row(["client.rate_per_s", "number", "400.0", ">= 0", "Mean rate."]),
            row([
                "dispatch",
                "fifo / reply_first",
                "\"fifo\"",
                "a name of the type",
                "Order.",
            ]),
            row(["max_events", "integer", "-", ">= 1", "Event budget."]),
        ];
        assert_eq!(
            super::stacked(rows),
            [
                [
                    "client.rate_per_s",
                    "number, default 400.0, >= 0: Mean rate."
                ],
                ["dispatch", "fifo / reply_first, default \"fifo\": Order."],
                ["max_events", "integer, >= 1: Event budget."],
            ]
        );
    }
}
