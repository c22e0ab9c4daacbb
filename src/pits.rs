//! Reading pit counts from the command line, for every game.

use crate::error::{Error, Result};

/// Parses `N` pit counts given as separate words or as strings separated by
/// commas or spaces. `what` names the board in errors ("a board", "the
/// player's side"); no pit nor the total may exceed `max_seeds`.
pub fn parse<const N: usize, S: AsRef<str>>(
    words: &[S],
    what: &str,
    max_seeds: usize,
) -> Result<[u8; N]> {
    let parts: Vec<&str> = words
        .iter()
        .flat_map(|w| w.as_ref().split(|c: char| c == ',' || c.is_whitespace()))
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() != N {
        return Err(Error::Invalid(format!(
            "{what} has {N} pits, got {} numbers",
            parts.len()
        )));
    }
    let mut pits = [0u8; N];
    for (slot, part) in pits.iter_mut().zip(&parts) {
        let v: i64 = part.parse().map_err(|_| {
            Error::Invalid(format!("{what}: pit count '{part}' is not a whole number"))
        })?;
        if v < 0 {
            return Err(Error::Invalid(format!("{what}: pit count {v} is negative")));
        }
        if v > max_seeds as i64 {
            return Err(Error::Invalid(format!(
                "{what}: pit count {v} exceeds the {max_seeds} seeds of a game"
            )));
        }
        *slot = v as u8;
    }
    let total: usize = pits.iter().map(|&v| usize::from(v)).sum();
    if total > max_seeds {
        return Err(Error::Invalid(format!(
            "{what} holds {total} seeds; a game has {max_seeds}"
        )));
    }
    Ok(pits)
}

#[cfg(test)]
mod tests {
    #[test]
    fn words_and_separated_strings() {
        let pits: [u8; 3] = super::parse(&["1,2", "3"], "a row", 10).unwrap();
        assert_eq!(pits, [1, 2, 3]);
        assert!(super::parse::<3, _>(&["1 2"], "a row", 10).is_err());
    }
}
