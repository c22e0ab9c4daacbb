//! `import` and `export`: tables to and from the published VU layout.

use std::path::PathBuf;
use std::process::ExitCode;

use mancaladb::Error;
use mancaladb::convert::{export_vu, import_vu};
use mancaladb::db::Db;
use mancaladb::error::level_set_text;

use super::args::{self, Levels, Where};
use super::output::out;

/// Options of `import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    #[command(flatten)]
    at: Where,
    /// Directory of `scores.N` files.
    #[arg(long)]
    vu: PathBuf,
    #[command(flatten)]
    levels: Levels,
    #[command(flatten)]
    raw: args::RawCache,
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
    #[command(flatten)]
    levels: Levels,
}

/// Layouts `export` writes.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    /// `scores.N`: one signed byte per position, index order, no header.
    Vu,
}

/// Imports the levels asked for, or every `scores.N` of a directory.
pub fn import(a: ImportArgs) -> Result<ExitCode, Error> {
    let db = Db::new(&a.at.db).with_raw_cache(a.raw.raw_cache.0);
    let levels = a.levels.asked();
    let done = import_vu(&db, a.at.rules, &a.vu, levels)?;
    let mut said = match done.written.is_empty() {
        true => "imported nothing".to_string(),
        false => format!("imported {}", levels_text(&done.written)),
    };
    said += &format!(" from {} into {}", a.vu.display(), a.at.db.display());
    if !done.kept.is_empty() {
        said += &format!(
            "; {} there already with the same values",
            levels_text(&done.kept)
        );
    }
    out!("{said}");
    Ok(ExitCode::SUCCESS)
}

/// "level N" or "levels N..M".
fn levels_text(levels: &[usize]) -> String {
    match levels {
        [seeds] => format!("level {seeds}"),
        _ => format!("levels {}", level_set_text(levels)),
    }
}

/// Exports the levels asked for, or every level present.
pub fn export(a: ExportArgs) -> Result<ExitCode, Error> {
    let Format::Vu = a.format;
    let levels = a.levels.asked();
    let levels = export_vu(&Db::new(&a.at.db), a.at.rules, &a.out, levels)?;
    let which = match levels[..] {
        [seeds] => format!("scores.{seeds} (level {seeds})"),
        _ => format!("scores.N for levels {}", level_set_text(&levels)),
    };
    out!("wrote {which} to {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
