//! `sweep`: run scenarios of the call-chain simulator, alone or as grids.

mod adaptive;
mod axis_range;
mod crash;
mod design;
mod diff;
mod error;
mod grid;
mod lock;
mod merge;
mod one;
mod params;
mod plan;
mod progress;
mod records;
mod refine;
mod report;
mod runner;
mod signals;
mod slurm;
mod store;
mod table;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sweep",
    version,
    about = "Parameter sweeps of a deterministic call-chain simulation (timeouts, retries, deadlines, queue caps under a slow downstream)",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a grid: every point x seed, on all cores, into Parquet (out/<grid>/).
    Run(runner::RunArgs),
    /// Show what a grid would run and estimate its wall time; writes nothing.
    Plan(plan::PlanArgs),
    /// Run one scenario with one seed (or each of its presets) and print its metrics.
    One(one::OneArgs),
    /// Show a scenario, fully resolved, as TOML you can copy and edit.
    Scenario {
        #[command(subcommand)]
        command: ScenarioCommand,
    },
    /// List every parameter path by tier, with its type, its default (its value in the scenario) and what it does.
    Params(params::ParamsArgs),
    /// Combine the shards of a sweep (one shared directory or several) and check completeness.
    Merge(merge::MergeArgs),
    /// Write the analysis report of a sweep's output (done by `run` unless --no-report).
    Report(report::ReportArgs),
    /// Check that two output directories hold the same runs with the same results and series.
    Compare(merge::CompareArgs),
    /// Compare two sweeps of the same points: changed outcomes, metrics moved beyond seed noise.
    Diff(diff::DiffArgs),
    /// Locate where P(not recovered) tips past a threshold: bisection of one numeric axis per point, or the adaptive boundary of a grid with [sample] method = "boundary".
    Refine(refine::RefineArgs),
    /// Write an sbatch job-array script that runs a grid as N shards.
    Slurm(slurm::SlurmArgs),
    /// Print the shell completion script for SHELL, e.g.
    /// `sweep completions bash > ~/.local/share/bash-completion/completions/sweep`.
    Completions {
        /// The shell: bash, zsh, fish (also elvish, powershell).
        shell: clap_complete::Shell,
    },
}

/// The exit statuses, shown by `sweep --help`.
const EXIT_CODES: &str = "\
Exit status:
  0        success, or nothing to do (the results are already complete, every run ok)
  1        some runs failed (they are recorded, status = 'failed'; also when the results\n           were already complete, and for `merge`), the report failed, or `compare` or `diff` found differences
  2        bad input (command line, grid, scenario, overrides) or a refused output directory
  128+N    stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP); what is done is written, resume with --resume";

/// The command line, with the help of arguments defined elsewhere.
fn cli_command() -> clap::Command {
    Cli::command().mut_subcommand("one", |one| {
        one.mut_arg("seed", |seed| {
            seed.help("Seed of the run's random streams (the same seed gives the same run)")
        })
    })
}

#[derive(Subcommand)]
enum ScenarioCommand {
    /// Print a built-in scenario (e.g. ch37) or a scenario file, with overrides applied.
    Show(one::ShowArgs),
}

/// Prints `error: context:` and one indented line per problem; exit code 2.
fn fail(error: &error::Error) -> ExitCode {
    eprintln!("error: {error}:");
    for problem in error.problems() {
        eprintln!("  {problem}");
    }
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let cli = Cli::from_arg_matches(&cli_command().get_matches()).unwrap_or_else(|e| e.exit());
    // Commands that only print end quietly when their reader goes away
    // (`sweep params | head`), as Unix tools do; the ones that write
    // results keep Rust's default and see the error, so that they finish.
    let writes = matches!(
        cli.command,
        Command::Run(_) | Command::Refine(_) | Command::Merge(_) | Command::Slurm(_)
    );
    if !writes {
        // SAFETY: no other thread exists yet, and SIG_DFL is a valid
        // disposition for SIGPIPE.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let result = match cli.command {
        Command::Run(args) => runner::run(&args),
        Command::Plan(args) => plan::plan(&args),
        Command::One(args) => one::run_one(&args),
        Command::Scenario {
            command: ScenarioCommand::Show(args),
        } => one::show(&args),
        Command::Params(args) => params::params(&args),
        Command::Merge(args) => merge::merge(&args),
        Command::Compare(args) => merge::compare(&args),
        Command::Diff(args) => diff::diff(&args),
        Command::Report(args) => report::report(&args),
        Command::Slurm(args) => slurm::slurm(&args),
        Command::Refine(args) => refine::refine(&args),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut cli_command(), "sweep", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    };
    result.unwrap_or_else(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    /// Every subcommand and every argument a user sees has help text.
    #[test]
    fn every_command_and_argument_has_help() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let path = format!("{path} {}", command.get_name());
            if command.get_about().is_none() && !command.is_hide_set() {
                missing.push(path.clone());
            }
            for arg in command.get_arguments() {
                let builtin = ["help", "version"].contains(&arg.get_id().as_str());
                if arg.get_help().is_none() && !arg.is_hide_set() && !builtin {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                if sub.get_name() != "help" {
                    walk(sub, &path, missing);
                }
            }
        }
        let mut command = super::cli_command();
        command.build();
        let mut missing = Vec::new();
        walk(&command, "", &mut missing);
        assert!(missing.is_empty(), "without help: {missing:?}");
    }
}
