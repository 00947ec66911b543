//! `sweep`: run scenarios of the call-chain simulator, alone or as grids.

mod one;
mod table;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sweep",
    version,
    about = "Parameter sweeps of a deterministic call-chain simulation (timeouts, retries, deadlines, queue caps under a slow downstream)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario with one seed (or each of its presets) and print its metrics.
    One(one::OneArgs),
    /// Show a scenario, fully resolved, as TOML you can copy and edit.
    Scenario {
        #[command(subcommand)]
        command: ScenarioCommand,
    },
    /// List every parameter path with its type and meaning.
    Params {
        /// Print the Markdown page (docs/params.md).
        #[arg(long)]
        markdown: bool,
    },
}

#[derive(Subcommand)]
enum ScenarioCommand {
    /// Print a built-in scenario (e.g. ch37) or a scenario file, with overrides applied.
    Show(one::ShowArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::One(args) => one::run_one(&args),
        Command::Scenario {
            command: ScenarioCommand::Show(args),
        } => one::show(&args),
        Command::Params { markdown } => {
            if markdown {
                print!("{}", sim_core::params::markdown());
            } else {
                for p in sim_core::params::paths(&sim_core::ch37()) {
                    let kind = sim_core::params::param_of(&p)
                        .map(|d| d.kind.describe())
                        .unwrap_or_default();
                    println!("{p:40} {kind}");
                }
            }
            ExitCode::SUCCESS
        }
    }
}
