//! Flags shared by several commands, and the parsers clap uses to check
//! their values before a command runs (a parser of one command's own flag,
//! such as `census --seeds`, lives with that command).

use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::path::PathBuf;

use mancaladb::Error;
use mancaladb::oware::{MAX_SEEDS, Rules, parse_level};
use mancaladb::source::Source;
use mancaladb::stored::DEFAULT_RAW_CACHE;
use mancaladb::verify::Checks;

/// Options of the commands that read or write a table directory.
#[derive(clap::Args)]
pub struct Where {
    /// Table directory.
    #[arg(long, default_value = "db")]
    pub db: PathBuf,
    /// Rule set: awari (Romein & Bal's) or abapa (international).
    #[arg(long, default_value = "awari", value_parser = RulesByName)]
    pub rules: Rules,
}

/// `--seeds` of the commands that take a level or a range of them.
#[derive(clap::Args)]
pub struct Levels {
    /// Level N or range N..M (default: every level there).
    #[arg(long, value_parser = oware_levels, allow_hyphen_values = true)]
    seeds: Option<RangeInclusive<usize>>,
}

impl Levels {
    /// The levels asked for, in order; `None` for every level there.
    pub fn asked(&self) -> Option<Vec<usize>> {
        self.seeds.clone().map(|r| r.collect())
    }
}

/// Where values are read from: tables, or published-layout VU files.
#[derive(clap::Args)]
pub struct Reading {
    #[command(flatten)]
    pub at: Where,
    /// Read `scores.N` files (the published VU layout, awari values) from
    /// this directory instead of tables, in place.
    #[arg(long, conflicts_with = "db")]
    pub vu: Option<PathBuf>,
}

impl Reading {
    /// The one place a command chooses tables or VU files, and the rules
    /// it reads them under ([`Source::open`]). A directory that is not
    /// there is refused ("no such directory"): more likely a typo than a
    /// wish to be told to build into it.
    pub fn open(&self) -> Result<(Rules, Source), Error> {
        let (rules, source) = self.open_anywhere()?;
        source.require_dir()?;
        Ok((rules, source))
    }

    /// [`Reading::open`] without the directory's check: for a command that
    /// may need no level at all.
    pub fn open_anywhere(&self) -> Result<(Rules, Source), Error> {
        let source = Source::open(&self.at.db, self.at.rules, self.vu.clone())?;
        Ok((self.at.rules, source))
    }
}

/// `--rules`: a rule set by its name, with the library's message for
/// another; the names are the flag's possible values, which its help and
/// the shell completions offer.
#[derive(Clone)]
struct RulesByName;

impl clap::builder::TypedValueParser for RulesByName {
    type Value = Rules;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Rules, clap::Error> {
        let by_name: fn(&str) -> Result<Rules, String> =
            |s| s.parse().map_err(|e: Error| e.to_string());
        by_name.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = Rules::ALL.into_iter().map(Rules::name);
        Some(Box::new(names.map(clap::builder::PossibleValue::new)))
    }
}

/// `N` or `N..M` (inclusive; `N..=M` too, as messages write ranges),
/// each at most `max`; `what` says what the numbers count, for the message.
pub fn range(text: &str, max: usize, what: &str) -> Result<RangeInclusive<usize>, String> {
    let bad = || format!("give N or N..M, {what} 0..={max}");
    let (a, b) = text.split_once("..").unwrap_or((text, text));
    let b = b.strip_prefix('=').unwrap_or(b);
    let a: usize = a.trim().parse().map_err(|_| bad())?;
    let b: usize = b.trim().parse().map_err(|_| bad())?;
    if b > max {
        return Err(format!("{b} is more than {max}: {}", bad()));
    }
    if a > b {
        return Err(format!("{a}..{b} runs backwards: give N..M with N <= M"));
    }
    Ok(a..=b)
}

/// A range of Oware levels (`--seeds` of `verify`).
pub fn oware_levels(text: &str) -> Result<RangeInclusive<usize>, String> {
    range(text, MAX_SEEDS, "Oware levels")
}

/// Some Oware levels, in the order given.
#[derive(Clone, Debug)]
pub struct LevelSet(pub Vec<usize>);

/// Oware levels as ranges separated by commas (`--levels` of `build`):
/// `0..34,36`.
pub fn oware_level_set(text: &str) -> Result<LevelSet, String> {
    let mut levels = Vec::new();
    for part in text.split(',') {
        let r = range(part, MAX_SEEDS, "Oware levels")
            .map_err(|e| format!("{e}; several as ranges separated by commas, e.g. 0..34,36"))?;
        levels.extend(r);
    }
    Ok(LevelSet(levels))
}

/// One Oware level (`--max-seeds` of `build`).
pub fn oware_level(text: &str) -> Result<usize, String> {
    parse_level(text).map_err(|e| e.to_string())
}

/// The raw copies' budget of the commands that write them.
#[derive(clap::Args)]
pub struct RawCache {
    /// Most disk for raw copies of levels (`raw/`, one byte per position),
    /// e.g. 8G, or `all`. Copies of the largest levels the next one reads
    /// are kept within it; the other levels are read from their tables.
    #[arg(long, default_value_t = Limit(Some(DEFAULT_RAW_CACHE)), value_parser = limit, allow_hyphen_values = true)]
    pub raw_cache: Limit,
}

/// A limit in bytes, or none (`all`).
#[derive(Clone, Copy, Debug)]
pub struct Limit(pub Option<u64>);

/// As [`limit`] reads it: `all`, or whole K, M, G or T where it can.
impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(b) = self.0 else {
            return f.write_str("all");
        };
        let unit = (1..=4).rev().find(|&k| b > 0 && b % (1 << (10 * k)) == 0);
        match unit {
            Some(k) => write!(f, "{}{}", b >> (10 * k), ["K", "M", "G", "T"][k - 1]),
            None => write!(f, "{b}"),
        }
    }
}

/// A [`Limit`] for `build --raw-cache`: `all` (no limit), or a number with
/// an optional unit K, M, G or T (powers of 1024), e.g. `8G`.
pub fn limit(text: &str) -> Result<Limit, String> {
    let t = text.trim();
    if t == "all" {
        return Ok(Limit(None));
    }
    let bad = || "give a size such as 8G, 500M or 0, or 'all'".to_string();
    let (number, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        'T' => 40,
        _ => return Err(bad()),
    };
    let n: f64 = number.trim().parse().map_err(|_| bad())?;
    if !n.is_finite() || n < 0.0 || n * 2f64.powi(shift) > 2f64.powi(60) {
        return Err(bad());
    }
    Ok(Limit(Some((n * 2f64.powi(shift)) as u64)))
}

/// A lap budget of the Omweso commands (`--max-laps`): at least 1.
pub fn lap_budget(text: &str) -> Result<u64, String> {
    match whole_number(text, "laps")? {
        n if n < 1 => Err("must be at least 1".into()),
        n => u64::try_from(n).map_err(|_| format!("must be at most {}", u64::MAX)),
    }
}

/// Where the server listens (`--addr`, or `--port`): `HOST:PORT` with an
/// address or a name (`localhost:8080`: its first IPv4 address, else its
/// first), or a port alone, on 127.0.0.1.
pub fn listen_addr(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let give = "give HOST:PORT (127.0.0.1:8080, localhost:8080, [::1]:8080) or a port";
    // An IPv4 address first: the docs and the printed link say 127.0.0.1,
    // and `localhost` often resolves to ::1 first (a machine without IPv6
    // could not bind that).
    match text.to_socket_addrs() {
        Ok(addrs) => {
            let addrs: Vec<SocketAddr> = addrs.collect();
            addrs
                .iter()
                .find(|a| a.is_ipv4())
                .or(addrs.first())
                .copied()
                .ok_or_else(|| format!("{text} names no address: {give}"))
        }
        Err(e) => Err(format!("{e}: {give}")),
    }
}

/// Memory for the server's block cache (`--cache-mib`), in MiB: at most
/// what a byte count holds.
pub fn mib(text: &str) -> Result<usize, String> {
    const MAX: usize = usize::MAX >> 20;
    match whole_number(text, "MiB")? {
        n if n < 0 => Err("must be at least 0".into()),
        n => usize::try_from(n)
            .ok()
            .filter(|&n| n <= MAX)
            .ok_or_else(|| format!("must be at most {MAX}")),
    }
}

/// An integer, said plainly when the text is not one (the standard
/// parser's "invalid digit found in string" names neither the flag nor
/// what it counts); one past any bound when it has more digits than an
/// `i128` holds, so that each flag states its own bounds, however many
/// digits. `-0` and `+3` are numbers too.
fn whole_number(text: &str, what: &str) -> Result<i128, String> {
    use std::num::IntErrorKind;
    text.trim().parse::<i128>().or_else(|e| match e.kind() {
        IntErrorKind::PosOverflow => Ok(i128::MAX),
        IntErrorKind::NegOverflow => Ok(i128::MIN),
        _ => Err(format!("must be a whole number of {what}")),
    })
}

/// Worker threads: at least 1, at most 4 per core (more only costs).
pub fn threads(text: &str) -> Result<usize, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match whole_number(text, "threads")? {
        n if n < 1 => Err("must be at least 1".into()),
        n if n > 4 * cores as i128 => Err(format!(
            "{} threads on {cores} cores: at most {} (4 per core)",
            text.trim(),
            4 * cores
        )),
        n => Ok(n as usize),
    }
}

/// `--checks` of `verify`, in the library's words ([`Checks`]).
pub fn checks(text: &str) -> Result<Checks, String> {
    text.parse().map_err(|e: Error| e.to_string())
}

pub use mancaladb::error::shell_quote;
