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

/// Prints the manual page.
pub fn man() -> Result<ExitCode, Error> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|e| Error::io("manual page", e))?;
    output::write(&page);
    Ok(ExitCode::SUCCESS)
}
