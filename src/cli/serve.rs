//! `serve`: the HTTP API and the web board (the routes are in
//! `crate::server`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use mancaladb::Error;
use mancaladb::source::Source;

use super::args;
use super::output::{diag, out};
use crate::server;

/// Options of `serve`. No `--rules`: both rule sets are served, each
/// request names its own.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory.
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// Serve the `scores.N` files (the published VU layout, awari values
    /// only) of this directory instead of tables.
    #[arg(long, conflicts_with = "db")]
    vu: Option<PathBuf>,
    /// Address to listen on (`--port` is the same option): HOST:PORT, or
    /// a port alone on 127.0.0.1 (port 0: any free port; the bound address
    /// is printed).
    #[arg(long, visible_alias = "port", default_value = "127.0.0.1:8080", value_parser = args::listen_addr, allow_negative_numbers = true)]
    addr: SocketAddr,
    /// Memory for decompressed blocks, per rule set, in MiB.
    #[arg(long, default_value_t = 512, value_parser = args::mib, allow_negative_numbers = true)]
    cache_mib: usize,
}

/// Serves until interrupted (Ctrl-C).
pub fn run(a: Args) -> Result<ExitCode, Error> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // A directory that is not there is more likely a typo than a wish to
    // answer every board with a 404; a file there is said as such.
    let sources = Source::served(&a.db, a.vu.as_deref(), a.cache_mib << 20, threads)?;
    let dir = a.vu.as_deref().unwrap_or(&a.db);
    let state = server::State::new(sources);
    if state.is_empty()? {
        diag(format_args!(
            "mancaladb: {}: no levels there yet; every board is a 404 until they are built",
            dir.display()
        ));
    }
    let dir = state.dir().display().to_string();
    server::serve(state, a.addr, |addr| {
        out!("mancaladb: serving {dir} on http://{addr}/ (Ctrl-C stops)")
    })?;
    Ok(ExitCode::SUCCESS)
}
