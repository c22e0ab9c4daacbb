//! `import` and `export`: tables to and from the published VU layout.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;

use mancaladb::Error;
use mancaladb::build::level_set_text;
use mancaladb::convert::{export_vu, import_vu};
use mancaladb::db::Db;

use super::args::{self, Where};
use super::output::out;

/// Options of `import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    #[command(flatten)]
    at: Where,
    /// Directory of `scores.N` files.
    #[arg(long)]
    vu: PathBuf,
}

/// Options of `export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    at: Where,
    /// Output layout: vu = `scores.N`, one signed byte per position.
    #[arg(long, value_enum)]
    format: Format,
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
    /// Level N or range N..M (default: every level present).
    #[arg(long, value_parser = args::oware_levels, allow_negative_numbers = true)]
    seeds: Option<RangeInclusive<usize>>,
}

/// Layouts `export` writes.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    /// `scores.N`: one signed byte per position, index order, no header.
    Vu,
}

/// Imports every `scores.N` of a directory.
pub fn import(a: ImportArgs) -> Result<ExitCode, Error> {
    let levels = import_vu(&Db::new(&a.at.db), a.at.rules, &a.vu)?;
    out!(
        "imported levels {} from {} into {}",
        level_set_text(&levels),
        a.vu.display(),
        a.at.db.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Exports the levels asked for, or every level present.
pub fn export(a: ExportArgs) -> Result<ExitCode, Error> {
    let Format::Vu = a.format;
    let levels = a.seeds.map(|r| r.collect());
    let levels = export_vu(&Db::new(&a.at.db), a.at.rules, &a.out, levels)?;
    let which = match levels[..] {
        [seeds] => format!("scores.{seeds} (level {seeds})"),
        _ => format!("scores.N for levels {}", level_set_text(&levels)),
    };
    out!("wrote {which} to {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
