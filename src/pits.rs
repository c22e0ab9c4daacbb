//! Reading pit counts, from the command line or as numbers, for every game.

use std::fmt::Display;
use std::num::IntErrorKind;

use crate::error::{Error, Result};

/// The most seeds a board may hold, and what it is that holds at most
/// that many ("a game", "a side"), for the messages.
#[derive(Clone, Copy, Debug)]
pub struct Most {
    /// The seeds.
    pub seeds: usize,
    /// What holds at most that many.
    pub holder: &'static str,
}

/// Parses `N` pit counts given as separate words or as strings separated by
/// commas or spaces. `what` names the board in errors ("a board", "the
/// player's side"); no pit nor the total may exceed `most`.
pub fn parse<const N: usize, S: AsRef<str>>(
    words: &[S],
    what: &str,
    most: Most,
) -> Result<[u8; N]> {
    for word in words {
        let fields: Vec<&str> = word.as_ref().split(',').collect();
        // "1,,2" is a count left out (or one comma too many), not a
        // separator: "1," and ",2" (commas beside spaces) are separators.
        if fields.len() > 2
            && fields[1..fields.len() - 1]
                .iter()
                .any(|f| f.trim().is_empty())
        {
            return Err(Error::Invalid(format!(
                "{what}: two commas with no pit count between them in '{}'",
                word.as_ref()
            )));
        }
    }
    // An empty word among others is a count left out ("" from an unset
    // shell variable), not nothing: "got 11 numbers" would miscount them.
    if words.len() > 1
        && let Some(k) = words.iter().position(|w| w.as_ref().trim().is_empty())
    {
        return Err(Error::Invalid(format!(
            "{what}: word {} of {} is empty, not a pit count",
            k + 1,
            words.len()
        )));
    }
    let parts: Vec<&str> = words
        .iter()
        .flat_map(|w| w.as_ref().split(|c: char| c == ',' || c.is_whitespace()))
        .filter(|p| !p.is_empty())
        .collect();
    // Words that are not numbers first: "got 1 number" would hide them.
    let counts = parts
        .iter()
        .map(|part| match part.parse::<i64>() {
            Ok(v) => Ok(pit(v, what, most)),
            // A whole number all the same, past what any count can be.
            Err(e) if *e.kind() == IntErrorKind::PosOverflow => Ok(Err(too_many(what, part, most))),
            Err(e) if *e.kind() == IntErrorKind::NegOverflow => Ok(Err(negative(what, part))),
            Err(_) => Err(Error::Invalid(format!(
                "{what}: pit count '{part}' is not a whole number"
            ))),
        })
        .collect::<Result<Vec<_>>>()?;
    check_len::<N>(counts.len(), what)?;
    let mut pits = [0u8; N];
    for (slot, count) in pits.iter_mut().zip(counts) {
        *slot = count?;
    }
    check_total(&pits, what, most)
}

/// [`parse`] for counts already read as numbers (from another language,
/// an array): the same checks and the same messages.
pub fn from_counts<const N: usize>(counts: &[i64], what: &str, most: Most) -> Result<[u8; N]> {
    check_len::<N>(counts.len(), what)?;
    let mut pits = [0u8; N];
    for (slot, &v) in pits.iter_mut().zip(counts) {
        *slot = pit(v, what, most)?;
    }
    check_total(&pits, what, most)
}

fn check_len<const N: usize>(len: usize, what: &str) -> Result<()> {
    if len != N {
        return Err(Error::Invalid(format!(
            "{what} has {N} pits, got {len} number{}",
            if len == 1 { "" } else { "s" }
        )));
    }
    Ok(())
}

/// One pit's count: `0..=most.seeds`.
fn pit(v: i64, what: &str, most: Most) -> Result<u8> {
    if v < 0 {
        return Err(negative(what, v));
    }
    if v > most.seeds as i64 {
        return Err(too_many(what, v, most));
    }
    Ok(v as u8)
}

fn negative(what: &str, v: impl Display) -> Error {
    Error::Invalid(format!("{what}: pit count {v} is negative"))
}

fn too_many(what: &str, v: impl Display, most: Most) -> Error {
    let Most { seeds, holder } = most;
    Error::Invalid(format!(
        "{what}: pit count {v} exceeds the {seeds} seeds of {holder}"
    ))
}

fn check_total<const N: usize>(pits: &[u8; N], what: &str, most: Most) -> Result<[u8; N]> {
    let total: usize = pits.iter().map(|&v| usize::from(v)).sum();
    let Most { seeds, holder } = most;
    if total > seeds {
        return Err(Error::Invalid(format!(
            "{what} holds {total} seeds; {holder} holds at most {seeds}"
        )));
    }
    Ok(*pits)
}

#[cfg(test)]
mod tests {
    use super::Most;

    /// A row of a game of 10 seeds.
    const ROW: Most = Most {
        seeds: 10,
        holder: "a game",
    };

    #[test]
    fn words_and_separated_strings() {
        let pits: [u8; 3] = super::parse(&["1,2", "3"], "a row", ROW).unwrap();
        assert_eq!(pits, [1, 2, 3]);
        assert!(super::parse::<3, _>(&["1 2"], "a row", ROW).is_err());
        let spaced: [u8; 3] = super::parse(&["1,", "2,", " 3"], "a row", ROW).unwrap();
        assert_eq!(spaced, [1, 2, 3]);
    }

    #[test]
    fn an_empty_count_between_commas_is_refused() {
        for word in ["1,,2,3", "1, ,2,3"] {
            assert_eq!(
                super::parse::<3, _>(&[word], "a row", ROW)
                    .unwrap_err()
                    .to_string(),
                format!("a row: two commas with no pit count between them in '{word}'")
            );
        }
    }

    #[test]
    fn an_empty_word_among_others_is_refused_by_its_place() {
        for empty in ["", " ", "\t"] {
            assert_eq!(
                super::parse::<3, _>(&["1", empty, "2", "3"], "a row", ROW)
                    .unwrap_err()
                    .to_string(),
                "a row: word 2 of 4 is empty, not a pit count"
            );
        }
        // Alone, it is a board with no count.
        let alone = super::parse::<3, _>(&[""], "a row", ROW).unwrap_err();
        assert_eq!(alone.to_string(), "a row has 3 pits, got 0 numbers");
    }

    #[test]
    fn numbers_get_the_same_checks_and_messages_as_words() {
        let cases: [&[i64]; 5] = [&[1, 2, 3], &[1, 2], &[1, -2, 3], &[1, 11, 0], &[5, 5, 1]];
        for counts in cases {
            let words: Vec<String> = counts.iter().map(|v| v.to_string()).collect();
            let from_words = super::parse::<3, _>(&words, "a row", ROW).map_err(|e| e.to_string());
            let from_numbers =
                super::from_counts::<3>(counts, "a row", ROW).map_err(|e| e.to_string());
            assert_eq!(from_words, from_numbers, "{counts:?}");
        }
        assert_eq!(
            super::from_counts::<3>(&[5, 5, 1], "a row", ROW)
                .unwrap_err()
                .to_string(),
            "a row holds 11 seeds; a game holds at most 10"
        );
    }

    #[test]
    fn numbers_past_i64_are_too_many_or_negative_not_words() {
        let message = |words: &[&str]| {
            super::parse::<3, _>(words, "a row", ROW)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            message(&["1", "18446744073709551615", "0"]),
            "a row: pit count 18446744073709551615 exceeds the 10 seeds of a game"
        );
        assert_eq!(
            message(&["1", "-99999999999999999999", "0"]),
            "a row: pit count -99999999999999999999 is negative"
        );
        assert_eq!(
            message(&["1", "1.5", "0"]),
            "a row: pit count '1.5' is not a whole number"
        );
    }

    /// A pit may hold none and all the seeds there are, and the board all
    /// of them; one seed past either bound, or below none, is refused with
    /// what is wrong (from words and numbers alike).
    #[test]
    fn the_bounds_are_inclusive_and_each_refusal_says_why() {
        for counts in [[0, 0, 0], [10, 0, 0], [5, 5, 0], [0, 0, 10]] {
            let words: Vec<String> = counts.iter().map(|v| v.to_string()).collect();
            let expected = counts.map(|v| v as u8);
            assert_eq!(
                super::parse::<3, _>(&words, "a row", ROW).unwrap(),
                expected
            );
            assert_eq!(
                super::from_counts::<3>(&counts, "a row", ROW).unwrap(),
                expected
            );
        }
        let refused = [
            ([1, -1, 0], "a row: pit count -1 is negative"),
            (
                [1, 11, 0],
                "a row: pit count 11 exceeds the 10 seeds of a game",
            ),
            ([5, 5, 1], "a row holds 11 seeds; a game holds at most 10"),
        ];
        for (counts, message) in refused {
            let words: Vec<String> = counts.iter().map(|v| v.to_string()).collect();
            let from_words = super::parse::<3, _>(&words, "a row", ROW).unwrap_err();
            assert_eq!(from_words.to_string(), message);
            let from_numbers = super::from_counts::<3>(&counts, "a row", ROW).unwrap_err();
            assert_eq!(from_numbers.to_string(), message);
        }
    }

    /// A comma that ends a word is a separator, however many counts come
    /// before it; only one between two counts with nothing there is
    /// refused.
    #[test]
    fn a_comma_that_ends_a_word_is_a_separator() {
        let pits: [u8; 3] = super::parse(&["1,2,", "3"], "a row", ROW).unwrap();
        assert_eq!(pits, [1, 2, 3]);
        let pits: [u8; 3] = super::parse(&["1", ",2,3"], "a row", ROW).unwrap();
        assert_eq!(pits, [1, 2, 3]);
    }
}
