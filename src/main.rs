//! The `mancaladb` command line. Each command is a module of [`cli`] that
//! parses its flags, calls the library and prints what it answers; `serve`
//! presents the same answers over HTTP ([`server`]).

mod cli;
mod process;
mod server;

#[global_allocator]
static ALLOCATOR: process::ExitOnFailure = process::ExitOnFailure;

use clap::Parser;

fn main() -> std::process::ExitCode {
    match cli::Cli::try_parse() {
        Ok(cli) => cli::run(cli),
        Err(e) => cli::not_run(e),
    }
}
