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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use clap::builder::TypedValueParser;

    /// The flags as a command line reads them, to see what clap hands a
    /// command.
    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        read: Reading,
        #[command(flatten)]
        levels: Levels,
        #[command(flatten)]
        raw: RawCache,
    }

    fn line(args: &[&str]) -> Result<Line, clap::Error> {
        Line::try_parse_from(std::iter::once("mancaladb").chain(args.iter().copied()))
    }

    /// `N`, `N..M` and `N..=M` are ranges, inclusive, the bound itself
    /// allowed; a number past it, a backward range or words are refused,
    /// each with what to give instead.
    #[test]
    fn ranges_are_inclusive_and_bounded() {
        assert_eq!(range("5", 9, "x"), Ok(5..=5));
        assert_eq!(range(" 3 .. 7 ", 9, "x"), Ok(3..=7));
        assert_eq!(range("3..=7", 9, "x"), Ok(3..=7));
        assert_eq!(range("0..9", 9, "x"), Ok(0..=9));
        assert_eq!(range("7..7", 9, "x"), Ok(7..=7));
        assert_eq!(
            range("10", 9, "pits"),
            Err("10 is more than 9: give N or N..M, pits 0..=9".into())
        );
        assert_eq!(
            range("2..10", 9, "pits"),
            Err("10 is more than 9: give N or N..M, pits 0..=9".into())
        );
        assert_eq!(
            range("8..7", 9, "pits"),
            Err("8..7 runs backwards: give N..M with N <= M".into())
        );
        for text in ["", "a", "3..", "..3", "-1", "1..2..3"] {
            assert_eq!(
                range(text, 9, "pits"),
                Err("give N or N..M, pits 0..=9".into()),
                "{text:?}"
            );
        }
    }

    /// Oware levels go up to the whole game's 48 seeds; a set of them keeps
    /// the order given, and a bad part says how sets are written.
    #[test]
    fn oware_levels_and_sets_of_them() {
        assert_eq!(oware_levels("0..48"), Ok(0..=MAX_SEEDS));
        assert!(
            oware_levels("49")
                .unwrap_err()
                .starts_with("49 is more than 48")
        );
        assert_eq!(oware_level_set("36,0..2,5").unwrap().0, [36, 0, 1, 2, 5]);
        assert_eq!(
            oware_level_set("0..2,x").unwrap_err(),
            "give N or N..M, Oware levels 0..=48; several as ranges separated by commas, e.g. 0..34,36"
        );
        assert_eq!(oware_level("36"), Ok(36));
        assert_eq!(oware_level(" +0 "), Ok(0));
        assert!(oware_level("49").is_err());
        assert!(oware_level("").is_err());
    }

    /// `--seeds` gives its levels in order, and none means every level
    /// there.
    #[test]
    fn levels_asked_in_order() {
        assert_eq!(
            line(&["--seeds", "3..5"]).unwrap().levels.asked(),
            Some(vec![3, 4, 5])
        );
        assert_eq!(
            line(&["--seeds", "0"]).unwrap().levels.asked(),
            Some(vec![0])
        );
        assert_eq!(line(&[]).unwrap().levels.asked(), None);
    }

    /// `--rules` takes the two rule sets by name and refuses another with
    /// the library's message, which names them.
    #[test]
    fn rules_by_name() {
        for rules in Rules::ALL {
            let got = line(&["--rules", rules.name()]).unwrap();
            assert_eq!(got.read.at.rules, rules);
        }
        assert_eq!(line(&[]).unwrap().read.at.rules, Rules::Awari);
        let err = line(&["--rules", "kalah"]).err().unwrap().to_string();
        assert!(err.contains("awari") && err.contains("abapa"), "{err}");
        let names: Vec<String> = RulesByName
            .possible_values()
            .unwrap()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(names, ["awari", "abapa"]);
    }

    /// `--raw-cache` sizes: a unit of either case, powers of 1024,
    /// fractions, `all`; nothing negative, unknown or past 2^60 bytes.
    #[test]
    fn limits_in_units() {
        let bytes = |text| limit(text).map(|l| l.0);
        assert_eq!(bytes("all"), Ok(None));
        assert_eq!(bytes(" 12 "), Ok(Some(12)));
        assert_eq!(bytes("0"), Ok(Some(0)));
        assert_eq!(bytes("7b"), Ok(Some(7)));
        assert_eq!(bytes("1.5K"), Ok(Some(1536)));
        assert_eq!(bytes("500m"), Ok(Some(500 << 20)));
        assert_eq!(bytes("8G"), Ok(Some(8 << 30)));
        assert_eq!(bytes("2T"), Ok(Some(2 << 40)));
        assert_eq!(bytes("1048576T"), Ok(Some(1 << 60)));
        for text in [
            "", "G", "-1", "-0.5K", "8X", "8GB", "inf", "NaN", "1048577T",
        ] {
            assert_eq!(
                bytes(text),
                Err("give a size such as 8G, 500M or 0, or 'all'".into()),
                "{text:?}"
            );
        }
        assert_eq!(
            line(&["--raw-cache", "3M"]).unwrap().raw.raw_cache.0,
            Some(3 << 20)
        );
        assert_eq!(line(&[]).unwrap().raw.raw_cache.0, Some(DEFAULT_RAW_CACHE));
    }

    /// A limit is written in the largest unit that divides it, and reads
    /// back as the same number of bytes.
    #[test]
    fn limits_write_in_whole_units_and_read_back() {
        let cases = [
            (None, "all"),
            (Some(0), "0"),
            (Some(1023), "1023"),
            (Some(1024), "1K"),
            (Some(1536), "1536"),
            (Some(3 << 20), "3M"),
            (Some(1025 << 20), "1025M"),
            (Some(8 << 30), "8G"),
            (Some(1 << 40), "1T"),
            (Some(3 << 50), "3072T"),
        ];
        for (bytes, text) in cases {
            assert_eq!(Limit(bytes).to_string(), text);
            assert_eq!(limit(text).unwrap().0, bytes, "{text}");
        }
    }

    /// Counts of laps, MiB and threads: whole numbers (signs allowed),
    /// each within its own bounds, however many digits they are given.
    #[test]
    fn whole_numbers_within_bounds() {
        let huge = "9".repeat(60);
        assert_eq!(whole_number("-0", "x"), Ok(0));
        assert_eq!(whole_number("+3", "x"), Ok(3));
        assert_eq!(whole_number(&huge, "x"), Ok(i128::MAX));
        assert_eq!(whole_number(&format!("-{huge}"), "x"), Ok(i128::MIN));
        assert_eq!(
            whole_number("3.0", "laps"),
            Err("must be a whole number of laps".into())
        );

        assert_eq!(lap_budget("1"), Ok(1));
        assert_eq!(lap_budget(&u64::MAX.to_string()), Ok(u64::MAX));
        assert_eq!(lap_budget("0"), Err("must be at least 1".into()));
        assert_eq!(lap_budget("-5"), Err("must be at least 1".into()));
        assert_eq!(
            lap_budget(&huge),
            Err(format!("must be at most {}", u64::MAX))
        );

        let most = usize::MAX >> 20;
        assert_eq!(mib("0"), Ok(0));
        assert_eq!(mib("64"), Ok(64));
        assert_eq!(mib(&most.to_string()), Ok(most));
        assert_eq!(
            mib(&(most + 1).to_string()),
            Err(format!("must be at most {most}"))
        );
        assert_eq!(mib("-1"), Err("must be at least 0".into()));

        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(threads("1"), Ok(1));
        assert_eq!(threads(&(4 * cores).to_string()), Ok(4 * cores));
        assert_eq!(
            threads(&(4 * cores + 1).to_string()),
            Err(format!(
                "{} threads on {cores} cores: at most {} (4 per core)",
                4 * cores + 1,
                4 * cores
            ))
        );
        assert_eq!(threads("0"), Err("must be at least 1".into()));
        assert_eq!(
            threads("many"),
            Err("must be a whole number of threads".into())
        );
    }

    /// `--checks` is 1, 2 or 3, in the library's words.
    #[test]
    fn checks_one_to_three() {
        assert_eq!(checks(" 2 ").unwrap(), Checks::try_from(2).unwrap());
        assert_eq!(checks("3").unwrap(), Checks::try_from(3).unwrap());
        assert_eq!(
            checks("4").unwrap_err(),
            "checks is 1 (integrity), 2 (and consistency) or 3 (and re-derivation), got 4"
        );
    }

    /// The server's address: a port alone is on 127.0.0.1; a written
    /// address is taken as it is; a host that names nothing is refused.
    #[test]
    fn listen_addresses() {
        assert_eq!(
            listen_addr(" 8080 "),
            Ok(SocketAddr::from(([127, 0, 0, 1], 8080)))
        );
        assert_eq!(
            listen_addr("0.0.0.0:9"),
            Ok(SocketAddr::from(([0, 0, 0, 0], 9)))
        );
        assert_eq!(
            listen_addr("[::1]:8080"),
            Ok(SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 8080)))
        );
        let err = listen_addr("no port").unwrap_err();
        assert!(
            err.ends_with(
                ": give HOST:PORT (127.0.0.1:8080, localhost:8080, [::1]:8080) or a port"
            ),
            "{err}"
        );
    }

    /// `--vu` reads published files instead of tables, so it cannot come
    /// with `--db`; a table directory that is not there is refused by
    /// `open` but not by `open_anywhere`.
    #[test]
    fn reading_tables_or_vu_files() {
        assert!(line(&["--vu", "v", "--db", "d"]).is_err());
        let missing =
            std::env::temp_dir().join(format!("mancaladb-args-none-{}", std::process::id()));
        let got = line(&["--db", missing.to_str().unwrap(), "--rules", "abapa"]).unwrap();
        let err = got.read.open().err().unwrap().to_string();
        assert!(err.contains("no such directory"), "{err}");
        let (rules, _) = got.read.open_anywhere().unwrap();
        assert_eq!(rules, Rules::Abapa);
    }
}
