//! `completions SHELL` and `man`: generated from the flags themselves.

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;
use mancaladb::Error;

use super::Cli;
use super::output;

/// Options of `completions`.
#[derive(clap::Args)]
pub struct CompletionArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: Shell,
}

/// Prints the completion script for a shell.
pub fn completions(a: CompletionArgs) -> Result<ExitCode, Error> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "mancaladb", &mut script);
    output::write(&script);
    Ok(ExitCode::SUCCESS)
}

/// Options of `man`.
#[derive(clap::Args)]
pub struct ManArgs {
    /// A command whose page to print (`mancaladb-COMMAND(1)`, which the
    /// main page refers to); without it, the main page.
    command: Option<String>,
}

/// Prints the manual page of `mancaladb` or of one of its commands.
pub fn man(a: ManArgs) -> Result<ExitCode, Error> {
    let cli = Cli::command();
    let command = match &a.command {
        // Without `help`, which has no page of its own.
        None => cli.disable_help_subcommand(true),
        Some(name) => {
            let names: Vec<String> = cli
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .filter(|n| n != "help")
                .collect();
            let Some(sub) = cli.find_subcommand(name) else {
                return Err(Error::Invalid(format!(
                    "man {name}: no such command; one of {}",
                    names.join(", ")
                )));
            };
            // Named as the main page's list of commands refers to it, with
            // the version in its title but no `--version` among its flags
            // (only `mancaladb --version` has one).
            sub.clone()
                .name(format!("mancaladb-{name}"))
                .version(env!("CARGO_PKG_VERSION"))
                .disable_version_flag(true)
        }
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .map_err(|e| Error::io("manual page", e))?;
    output::write(&page);
    Ok(ExitCode::SUCCESS)
}
