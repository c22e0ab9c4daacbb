//! `serve`: the HTTP API and the web board (the routes are in
//! `crate::server`).

use std::net::SocketAddr;
use std::process::ExitCode;

use mancaladb::Error;

use super::args::Reading;
use super::output::out;
use crate::server;

/// Options of `serve`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    read: Reading,
    /// Address to listen on (port 0: any free port; the bound address is
    /// printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Memory for decompressed blocks, per rule set, in MiB.
    #[arg(long, default_value_t = 512)]
    cache_mib: usize,
}

/// Serves until interrupted (Ctrl-C).
pub fn run(a: Args) -> Result<ExitCode, Error> {
    let cache_bytes = a
        .cache_mib
        .checked_mul(1 << 20)
        .ok_or_else(|| Error::Invalid(format!("--cache-mib {}: too large", a.cache_mib)))?;
    let state = server::State::new(&a.read.at.db, a.read.vu.as_deref(), cache_bytes);
    let dir = state.dir().display().to_string();
    server::serve(state, a.addr, |addr| {
        out!("mancaladb: serving {dir} on http://{addr}/ (Ctrl-C stops)")
    })?;
    Ok(ExitCode::SUCCESS)
}
