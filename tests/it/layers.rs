//! The library's layering: each module uses only modules below it in
//! [`LAYERS`] (and its own submodules), so there is no import cycle and the
//! data layers never reach up into what presents them. Reads every
//! `crate::name` path in `src/`, and every `super::` path that climbs to the
//! crate root (the binary's `src/cli`, `src/server`, `src/main.rs` and
//! `src/process.rs` stand on top of everything and are not checked).

use std::path::Path;

/// The library's top-level modules, lowest first.
const LAYERS: &[&str] = &[
    "error",
    "settings",
    "files",
    "lock",
    "checkpoint_file",
    "pits",
    "compose",
    "memory",
    "progress",
    "exchange",
    "oware",
    "omweso",
    "table",
    "db",
    "probe",
    "stored",
    "build",
    "source",
    "convert",
    "query",
    "stats",
    "known",
    "verify",
];

/// `Error` and `Result` are re-exported at the crate root from `error`.
fn layer_of(name: &str) -> Option<usize> {
    let name = match name {
        "Error" | "Result" => "error",
        n => n,
    };
    LAYERS.iter().position(|&l| l == name)
}

/// The `.rs` files under `dir`, at any depth, but for those under its
/// subdirectories named in `skip`.
fn sources(dir: &Path, skip: &[&str], out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if !skip.contains(&p.file_name().unwrap().to_str().unwrap()) {
                sources(&p, skip, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// How deep the module of the file at `rel` (under `src/`) sits:
/// `query.rs` and `build/mod.rs` are 1, `build/forward.rs` is 2.
fn module_depth(rel: &Path) -> usize {
    let parts = rel.iter().count();
    match rel.file_name().and_then(|f| f.to_str()) {
        Some("mod.rs") => parts - 1,
        _ => parts,
    }
}

/// Where the name after each `super::super::…` chain of `text` starts,
/// for the chains of at least `depth` steps: from a file's module those
/// reach the crate root, like `crate::` (from an inline module such as
/// `mod tests` the same chain stops one module lower, and its names are
/// the module's own, which are not layers). A chain that ends in a group
/// gives each name the group starts with (`super::{known, db::Db}`: `known`
/// and `db`); one that ends in a glob none (`use super::*` is the idiom of
/// `mod tests`).
fn root_climbs(text: &str, depth: usize) -> impl Iterator<Item = usize> + '_ {
    text.match_indices("super::")
        .filter(|&(at, _)| !text[..at].ends_with("super::"))
        .flat_map(move |(at, _)| {
            let mut end = at;
            let mut steps = 0;
            while text[end..].starts_with("super::") {
                end += "super::".len();
                steps += 1;
            }
            let mut names = Vec::new();
            if steps >= depth {
                match text[end..].strip_prefix('{') {
                    // Each item of the group, where it starts.
                    Some(group) => {
                        let body = &group[..group.find('}').unwrap_or(group.len())];
                        let mut item = end + 1;
                        for part in body.split(',') {
                            if !part.trim().is_empty() {
                                names.push(item + (part.len() - part.trim_start().len()));
                            }
                            item += part.len() + 1;
                        }
                    }
                    None if text[end..].starts_with('*') => {}
                    None => names.push(end),
                }
            }
            names
        })
}

#[test]
fn modules_import_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &["cli", "server"], &mut files);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap();
        let top = rel.iter().next().unwrap().to_str().unwrap();
        let top = top.strip_suffix(".rs").unwrap_or(top);
        if ["lib", "main", "process"].contains(&top) {
            continue; // the crate roots, and the binary's process settings
        }
        let own = layer_of(top).unwrap_or_else(|| panic!("{top} is not in LAYERS"));
        let text = std::fs::read_to_string(&path).unwrap();
        let after_crate = text.match_indices("crate::").map(|(at, _)| at + 7);
        for at in after_crate.chain(root_climbs(&text, module_depth(rel))) {
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                // A `crate::{...}` group would hide its modules from this scan.
                wrong.push(format!("{} groups crate::{{...}}", rel.display()));
                continue;
            }
            let Some(used) = layer_of(&name) else {
                continue; // not a module (`crate::Error` is mapped above)
            };
            checked += 1;
            if used > own {
                wrong.push(format!("{} uses crate::{name}", rel.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "upward imports:\n{}", wrong.join("\n"));
    // The scan saw the library's imports at all.
    assert!(checked > 50, "only {checked} crate:: paths found");
}

/// The two front ends stand side by side: the command line starts the
/// server (`cli/serve.rs`), and the server never uses the command line.
#[test]
fn the_server_does_not_use_the_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server");
    let mut files = Vec::new();
    sources(&dir, &[], &mut files);
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(
            !text.contains("crate::cli"),
            "{} uses crate::cli",
            p.display()
        );
    }
    // Its routes too, in src/server/api/ (the scan read the top directory
    // only).
    assert!(
        files.iter().any(|p| p.ends_with("api/oware.rs")),
        "src/server/api not scanned: {files:?}"
    );
}

/// The library answers with data and tells its progress to an observer
/// (`progress`); nothing else in it writes to the terminal.
/// `progress/terminal.rs`, the command line's observer, is the one place
/// that does.
#[test]
fn only_the_terminal_observer_prints() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &["cli", "server"], &mut files);
    let mut printing = Vec::new();
    let mut scanned = 0;
    for path in files {
        let rel = path.strip_prefix(&src).unwrap();
        if rel == Path::new("main.rs") || rel == Path::new("progress/terminal.rs") {
            continue;
        }
        scanned += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for what in [
            "println!",
            "print!(",
            "eprint",
            "stderr()",
            "stdout()",
            "indicatif",
        ] {
            if text.contains(what) {
                printing.push(format!("{} uses {what}", rel.display()));
            }
        }
    }
    assert!(printing.is_empty(), "{}", printing.join("\n"));
    assert!(scanned > 30, "only {scanned} files scanned");
    let progress = std::fs::read_to_string(src.join("progress/terminal.rs")).unwrap();
    assert!(progress.contains("impl Observer for Terminal"));
}
