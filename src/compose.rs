//! Ranking of compositions: seeds distributed over a row of pits.
//!
//! A board of `P` pits holding `n` seeds in all is a *composition* of `n`
//! into `P` non-negative parts. Retrograde analysis stores one value per
//! board, so it needs a perfect hash from boards to `0..count` and back.
//! [`Ranker`] gives the lexicographic rank of a composition, ordered by
//! `(x[P-1], x[P-2], ..., x[0])` with the smallest first, optionally over only
//! those compositions in which at least one pit of a given suffix `x[c..P]` is
//! empty (Oware's stored domain: every child position has an empty opponent
//! pit). Both Oware (12 pits) and Omweso (16 pits a side) use it.
//!
//! Ranking is table-driven: one lookup per pit, no allocation. It is the
//! solvers' innermost primitive, so its preconditions are the caller's: a
//! call outside them panics or, where a check would cost the solvers, gives
//! a meaningless answer (each method's `# Panics` says which), where
//! `oware::Encoder` is the checked front that answers an error.
//!
//! ```
//! use mancaladb::compose::Ranker;
//! let r = Ranker::new(3, 4, None);
//! // compositions of 2 into 3 pits, ordered by (x2, x1, x0):
//! // [2,0,0] [1,1,0] [0,2,0] [1,0,1] [0,1,1] [0,0,2]
//! assert_eq!(r.count(2), 6);
//! assert_eq!(r.rank(&[0, 2, 0]), 2);
//! let mut x = [0u8; 3];
//! r.unrank(2, 3, &mut x);
//! assert_eq!(x, [1, 0, 1]);
//! ```

/// Perfect hash of compositions (see the module documentation).
#[derive(Clone, Debug)]
pub struct Ranker {
    pits: usize,
    max_seeds: usize,
    /// Pits `constrained_from..pits` must contain at least one empty pit.
    /// Equal to `pits` when there is no constraint.
    constrained_from: usize,
    /// `below[k][ok][s][x]`: how many valid completions precede choosing
    /// `x[k] = x` when `s` seeds remain for pits `k..=0` and `ok` tells whether
    /// the constraint is already met. Flattened; see [`Ranker::slot`].
    below: Vec<u64>,
    /// `count[k][ok][s]`: valid fillings of pits `k-1..=0` with `s` seeds.
    count: Vec<u64>,
    /// `low[k][p]` for the pits `k < constrained_from`, ranked by the seeds
    /// `p` in pits `k..=0` alone (see [`Ranker::rank_with_sum`]).
    low: Vec<u64>,
}

impl Ranker {
    /// A ranker for boards of `pits` pits holding at most `max_seeds` seeds.
    /// With `need_empty_from = Some(c)`, only boards with an empty pit among
    /// `x[c..pits]` are ranked (`1 <= c < pits`).
    ///
    /// # Panics
    ///
    /// If `pits` is not in `1..=32` or `c` not in `1..=pits`, or if the
    /// tables of counts do not fit in memory; counts past `u64` (32 pits
    /// and about 36 seeds or more) panic in debug builds and wrap in
    /// release builds.
    pub fn new(pits: usize, max_seeds: usize, need_empty_from: Option<usize>) -> Ranker {
        assert!((1..=32).contains(&pits), "pit count out of range");
        let constrained_from = need_empty_from.unwrap_or(pits);
        assert!(constrained_from >= 1 && constrained_from <= pits);
        let s1 = max_seeds + 1;
        let binom = pascal(max_seeds + pits, pits);
        let c = |n: usize, k: usize| -> u64 { if k > n { 0 } else { binom[n][k] } };
        // Fillings of j pits (indices j-1..=0) with s seeds.
        let fill = |j: usize, s: usize, ok: bool| -> u64 {
            if j == 0 {
                return u64::from(s == 0 && ok);
            }
            let total = c(s + j - 1, j - 1);
            if ok {
                return total;
            }
            // Constrained pits among j-1..=0 are constrained_from..j.
            let m = j.saturating_sub(constrained_from);
            if m == 0 {
                return 0;
            }
            let all_full = if s >= m { c(s - m + j - 1, j - 1) } else { 0 };
            total - all_full
        };
        let mut count = vec![0u64; (pits + 1) * 2 * s1];
        for j in 0..=pits {
            for ok in 0..2 {
                for s in 0..s1 {
                    count[(j * 2 + ok) * s1 + s] = fill(j, s, ok == 1);
                }
            }
        }
        let mut below = vec![0u64; pits * 2 * s1 * s1];
        for k in 0..pits {
            for ok in 0..2 {
                for s in 0..s1 {
                    let base = ((k * 2 + ok) * s1 + s) * s1;
                    let mut acc = 0u64;
                    for x in 0..=s {
                        below[base + x] = acc;
                        let ok_after = ok == 1 || (k >= constrained_from && x == 0);
                        acc += fill(k, s - x, ok_after);
                    }
                }
            }
        }
        // Below the constrained pits the constraint is met (in the domain),
        // and `below[k][1][s][v]` sums `C(s - x + k - 1, k - 1)` over
        // `x < v`: `G_k(s) - G_k(s - v)` with `G_k(s) = C(s + k, k)`. Over
        // pits `c-1..=1` the sum telescopes into one term per pit `k` in
        // `c-1..=0` that depends only on `p_k`, the seeds in pits `k..=0`:
        // `low[k][p] = G_k(p) [k >= 1] - G_{k+1}(p) [k + 1 < c]`, wrapping.
        let mut low = vec![0u64; constrained_from * s1];
        for k in 0..constrained_from {
            for p in 0..s1 {
                let mut term = 0u64;
                if k >= 1 {
                    term = c(p + k, k);
                }
                if k + 1 < constrained_from {
                    term = term.wrapping_sub(c(p + k + 1, k + 1));
                }
                low[k * s1 + p] = term;
            }
        }
        Ranker {
            pits,
            max_seeds,
            constrained_from,
            below,
            count,
            low,
        }
    }

    /// Whether no constraint has been met before any pit is chosen.
    fn initially_ok(&self) -> usize {
        usize::from(self.constrained_from == self.pits)
    }

    #[inline(always)]
    fn slot(&self, k: usize, ok: usize, s: usize, x: usize) -> usize {
        let s1 = self.max_seeds + 1;
        ((k * 2 + ok) * s1 + s) * s1 + x
    }

    /// The largest seed count ranked.
    pub fn max_seeds(&self) -> usize {
        self.max_seeds
    }

    /// Number of ranked boards holding `seeds` seeds.
    ///
    /// # Panics
    ///
    /// If `seeds` is above [`Ranker::max_seeds`].
    pub fn count(&self, seeds: usize) -> u64 {
        assert!(seeds <= self.max_seeds);
        let s1 = self.max_seeds + 1;
        self.count[(self.pits * 2 + self.initially_ok()) * s1 + seeds]
    }

    /// Whether `x` lies in the ranked domain (the emptiness constraint).
    #[inline]
    #[allow(clippy::manual_contains)]
    pub fn in_domain(&self, x: &[u8]) -> bool {
        // `iter().any` rather than `contains`, which calls memchr for bytes.
        self.constrained_from == self.pits
            || x[self.constrained_from..self.pits].iter().any(|&v| v == 0)
    }

    /// Rank of `x` among the boards with the same seed count.
    ///
    /// `x` must have the `pits` pits given to [`Ranker::new`], hold at most
    /// [`Ranker::max_seeds`] seeds and lie in the domain (checked in debug
    /// builds). The pit count is a compile-time constant so that the loop
    /// unrolls into independent table loads.
    ///
    /// # Panics
    ///
    /// In debug builds, outside those; in release builds a board with
    /// another number of pits or more seeds may panic (an index out of
    /// bounds) or get a meaningless rank, and so does one outside the
    /// domain.
    #[inline]
    pub fn rank<const P: usize>(&self, x: &[u8; P]) -> u64 {
        self.rank_with_sum(x, x.iter().map(|&v| usize::from(v)).sum())
    }

    /// [`Ranker::rank`] for a board known to hold `seeds` seeds.
    #[inline]
    pub fn rank_with_sum<const P: usize>(&self, x: &[u8; P], seeds: usize) -> u64 {
        debug_assert!(self.in_domain(x));
        self.rank_and_domain(x, seeds).0
    }

    /// [`Ranker::rank_with_sum`] of a board that may lie outside the
    /// domain: `None` then. The test is the flag the ranking keeps anyway
    /// (whether a constrained pit was empty), so it costs one branch where
    /// a separate test of the pits would cost a pass over them.
    #[inline]
    pub fn rank_if_in_domain<const P: usize>(&self, x: &[u8; P], seeds: usize) -> Option<u64> {
        match self.rank_and_domain(x, seeds) {
            (r, true) => Some(r),
            (_, false) => None,
        }
    }

    /// The rank of `x` (meaningful only in the domain), and whether `x` is
    /// in the domain.
    #[inline(always)]
    fn rank_and_domain<const P: usize>(&self, x: &[u8; P], seeds: usize) -> (u64, bool) {
        debug_assert_eq!(P, self.pits);
        debug_assert_eq!(seeds, x.iter().map(|&v| usize::from(v)).sum::<usize>());
        debug_assert!(seeds <= self.max_seeds);
        let s1 = self.max_seeds + 1;
        let block = 2 * s1 * s1;
        let c = self.constrained_from;
        let mut s = seeds;
        let mut ok = self.initially_ok();
        let mut r = 0u64;
        for k in (c..P).rev() {
            let v = usize::from(x[k]);
            r += self.below[k * block + ok * s1 * s1 + s * s1 + v];
            ok |= usize::from(v == 0);
            s -= v;
        }
        // The pits below the constraint: one small table and no product per
        // pit (see `low`), the seeds counted up from pit 0.
        let mut p = 0;
        for (k, &v) in x[..c].iter().enumerate() {
            p += usize::from(v);
            r = r.wrapping_add(self.low[k * s1 + p]);
        }
        // `ok` saw every constrained pit: they start at pit `c >= 1`.
        (r, ok == 1)
    }

    /// Writes into `x` the board of rank `index` among boards with `seeds`
    /// seeds. `index` must be below [`Ranker::count`]`(seeds)`.
    ///
    /// # Panics
    ///
    /// If `index` is not, if `seeds` is above [`Ranker::max_seeds`], or if
    /// `x` has fewer than the `pits` given to [`Ranker::new`].
    pub fn unrank(&self, seeds: usize, mut index: u64, x: &mut [u8]) {
        assert!(index < self.count(seeds), "index out of range");
        let mut s = seeds;
        let mut ok = self.initially_ok();
        for k in (1..self.pits).rev() {
            // Largest v with below[v] <= index; below is non-decreasing in v,
            // and pits hold few seeds, so a forward scan beats bisection.
            let base = self.slot(k, ok, s, 0);
            let row = &self.below[base..=base + s];
            let mut v = 0;
            while v < s && row[v + 1] <= index {
                v += 1;
            }
            index -= row[v];
            x[k] = v as u8;
            ok |= usize::from(k >= self.constrained_from && v == 0);
            s -= v;
        }
        x[0] = s as u8;
    }

    /// A trail for unranking boards of `seeds` seeds with
    /// [`Ranker::unrank_near`], as yet leading nowhere.
    ///
    /// # Panics
    ///
    /// If `seeds` is above [`Ranker::max_seeds`] or the ranker has more
    /// than 32 pits.
    pub fn trail(&self, seeds: usize) -> Trail {
        assert!(seeds <= self.max_seeds && self.pits <= MAX_PITS);
        let top = self.pits - 1;
        let mut trail = Trail {
            start: [0; MAX_PITS],
            left: [0; MAX_PITS],
            ok: [0; MAX_PITS],
            depth: top,
        };
        trail.left[top] = seeds as u8;
        trail.ok[top] = self.initially_ok() as u8;
        trail
    }

    /// [`Ranker::unrank`] for a board near the last one `trail` led to:
    /// only the pits below the smallest block of ranks that holds both are
    /// chosen again. A short step redoes one or two pits instead of all.
    /// `index` must be below the count of the trail's seed count.
    #[inline]
    pub fn unrank_near(&self, index: u64, x: &mut [u8], trail: &mut Trail) {
        let s1 = self.max_seeds + 1;
        // The deepest pit whose block (the boards sharing every pit above
        // it with the last one) holds `index`; the top pit's holds all.
        let mut k = trail.depth;
        while k < self.pits - 1 {
            let (left, ok) = (usize::from(trail.left[k]), usize::from(trail.ok[k]));
            let size = self.count[((k + 1) * 2 + ok) * s1 + left];
            if (trail.start[k]..trail.start[k] + size).contains(&index) {
                break;
            }
            k += 1;
        }
        let mut s = usize::from(trail.left[k]);
        let mut ok = usize::from(trail.ok[k]);
        let mut base = trail.start[k];
        for k in (1..=k).rev() {
            trail.start[k] = base;
            trail.left[k] = s as u8;
            trail.ok[k] = ok as u8;
            let first = self.slot(k, ok, s, 0);
            let row = &self.below[first..=first + s];
            let mut v = 0;
            while v < s && row[v + 1] <= index - base {
                v += 1;
            }
            base += row[v];
            x[k] = v as u8;
            ok |= usize::from(k >= self.constrained_from && v == 0);
            s -= v;
        }
        x[0] = s as u8;
        trail.depth = 1;
    }

    /// Steps `x` to the next board of the domain in rank order, keeping the
    /// seed count. Returns `false` (leaving `x` unspecified) after the last.
    ///
    /// Amortised constant time: this is how a level is walked in index order
    /// without calling [`Ranker::unrank`] per position.
    #[inline]
    pub fn advance(&self, x: &mut [u8]) -> bool {
        let last = self.pits - 1;
        loop {
            // Lexicographic successor of a composition: move one seed from the
            // lowest non-empty pit up one place, the rest back to pit 0.
            let Some(k) = x.iter().position(|&v| v > 0) else {
                return false;
            };
            if k == last {
                return false;
            }
            let t = x[k];
            x[k] = 0;
            x[0] = t - 1;
            x[k + 1] += 1;
            if self.in_domain(x) {
                return true;
            }
            // Every board sharing this constrained part is outside the domain:
            // jump to the last of them, whose successor changes that part.
            let c = self.constrained_from;
            let low: u8 = x[..c].iter().sum();
            x[..c].fill(0);
            x[c - 1] = low;
        }
    }
}

/// Most pits a [`Trail`] follows.
const MAX_PITS: usize = 32;

/// What unranking one board chose at each pit, so that the next board can
/// be reached from it ([`Ranker::unrank_near`]): for each pit `k`, the
/// first rank of the block of boards sharing the pits above `k`, the seeds
/// left for pits `k..=0`, and whether the domain's constraint was met
/// above `k`.
#[derive(Clone, Debug)]
pub struct Trail {
    start: [u64; MAX_PITS],
    left: [u8; MAX_PITS],
    ok: [u8; MAX_PITS],
    /// The lowest pit whose entries are valid.
    depth: usize,
}

/// Pascal's triangle up to row `n`, columns `0..=k` only: the entries a
/// ranker of `k` pits reads (the others, for the census's long rows, would
/// not fit in a `u64`).
fn pascal(n: usize, k: usize) -> Vec<Vec<u64>> {
    let mut rows: Vec<Vec<u64>> = Vec::with_capacity(n + 1);
    for i in 0..=n {
        let mut row = vec![1u64; i.min(k) + 1];
        for j in 1..row.len().min(i) {
            row[j] = rows[i - 1][j - 1] + rows[i - 1][j];
        }
        rows.push(row);
    }
    rows
}

/// Binomial coefficient `C(n, k)`: exact in `u128` for the sizes used
/// here, `u128::MAX` where a step of the computation does not fit (it used
/// to wrap silently in release builds).
pub fn binomial(n: u64, k: u64) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut acc: u128 = 1;
    for i in 0..k {
        match acc.checked_mul(u128::from(n - i)) {
            Some(product) => acc = product / u128::from(i + 1),
            None => return u128::MAX,
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pascal_holds_the_columns_a_ranker_reads_even_in_rows_past_u64() {
        // Row 100's middle, C(100, 50), is about 1e29: only columns 0..=16
        // are kept (C(100, 16) is about 1.3e18).
        let rows = pascal(100, 16);
        for (n, row) in rows.iter().enumerate() {
            assert_eq!(row.len(), n.min(16) + 1);
            for (k, &c) in row.iter().enumerate() {
                assert_eq!(u128::from(c), binomial(n as u64, k as u64), "C({n}, {k})");
            }
        }
    }

    /// All compositions of `n` into `pits` parts in rank order, by brute force.
    fn brute(pits: usize, n: usize, need_empty_from: Option<usize>) -> Vec<Vec<u8>> {
        let mut all = Vec::new();
        let mut x = vec![0u8; pits];
        fn rec(k: usize, left: usize, x: &mut Vec<u8>, all: &mut Vec<Vec<u8>>) {
            if k == 0 {
                x[0] = left as u8;
                all.push(x.clone());
                return;
            }
            for v in 0..=left {
                x[k] = v as u8;
                rec(k - 1, left - v, x, all);
            }
        }
        rec(pits - 1, n, &mut x, &mut all);
        all.retain(|b| need_empty_from.is_none_or(|c| b[c..].contains(&0)));
        all
    }

    fn rank_dyn(r: &Ranker, b: &[u8]) -> u64 {
        match b.len() {
            4 => r.rank::<4>(b.try_into().unwrap()),
            5 => r.rank::<5>(b.try_into().unwrap()),
            6 => r.rank::<6>(b.try_into().unwrap()),
            7 => r.rank::<7>(b.try_into().unwrap()),
            _ => unreachable!(),
        }
    }

    #[test]
    fn rank_unrank_advance_agree_with_brute_force() {
        for &(pits, cons) in &[(5usize, None), (6, Some(3)), (4, Some(1)), (7, Some(6))] {
            let r = Ranker::new(pits, 7, cons);
            for n in 0..=7 {
                let all = brute(pits, n, cons);
                assert_eq!(r.count(n), all.len() as u64, "count pits={pits} n={n}");
                let mut walk = all.first().cloned().unwrap_or_default();
                for (i, b) in all.iter().enumerate() {
                    assert_eq!(rank_dyn(&r, b), i as u64);
                    let mut u = vec![0u8; pits];
                    r.unrank(n, i as u64, &mut u);
                    assert_eq!(&u, b);
                    assert_eq!(&walk, b, "advance order");
                    let more = r.advance(&mut walk);
                    assert_eq!(more, i + 1 < all.len());
                }
            }
        }
    }

    fn rank_if_in_domain_dyn(r: &Ranker, b: &[u8], seeds: usize) -> Option<u64> {
        match b.len() {
            4 => r.rank_if_in_domain::<4>(b.try_into().unwrap(), seeds),
            5 => r.rank_if_in_domain::<5>(b.try_into().unwrap(), seeds),
            6 => r.rank_if_in_domain::<6>(b.try_into().unwrap(), seeds),
            7 => r.rank_if_in_domain::<7>(b.try_into().unwrap(), seeds),
            _ => unreachable!(),
        }
    }

    /// Every composition, in the domain or not: the ranking's own test of
    /// the domain refuses exactly those with no empty constrained pit,
    /// whatever pit 0 (below the constraint, never read for it) holds.
    #[test]
    fn rank_if_in_domain_refuses_exactly_the_boards_outside_the_domain() {
        for &(pits, cons) in &[(5usize, None), (6, Some(3)), (4, Some(1)), (7, Some(6))] {
            let r = Ranker::new(pits, 7, cons);
            let mut refused_with_pit_0_empty = 0;
            for n in 0..=7 {
                let ranked = brute(pits, n, cons);
                for b in brute(pits, n, None) {
                    let want = ranked.iter().position(|d| *d == b).map(|i| i as u64);
                    assert_eq!(r.in_domain(&b), want.is_some(), "{b:?}");
                    assert_eq!(rank_if_in_domain_dyn(&r, &b, n), want, "{b:?}");
                    refused_with_pit_0_empty += usize::from(want.is_none() && b[0] == 0);
                }
            }
            assert_eq!(
                refused_with_pit_0_empty > 0,
                cons.is_some(),
                "{pits} {cons:?}"
            );
        }
    }

    #[test]
    fn unrank_near_agrees_with_unrank_for_any_step() {
        for &(pits, cons) in &[(5usize, None), (6, Some(3)), (12, Some(6))] {
            let r = Ranker::new(pits, 9, cons);
            for n in [0, 1, 4, 9] {
                let count = r.count(n);
                let mut trail = r.trail(n);
                let mut near = vec![0u8; pits];
                let mut want = vec![0u8; pits];
                // Steps of 1, then growing, then back to the start.
                let mut i = 0;
                let mut step = 1;
                let mut seen = 0;
                while i < count {
                    r.unrank_near(i, &mut near, &mut trail);
                    r.unrank(n, i, &mut want);
                    assert_eq!(near, want, "pits {pits} n {n} index {i}");
                    seen += 1;
                    i += if seen % 3 == 0 { step } else { 1 };
                    step = step * 2 % 977 + 1;
                }
                if count > 0 {
                    r.unrank_near(0, &mut near, &mut trail);
                    r.unrank(n, 0, &mut want);
                    assert_eq!(near, want);
                }
            }
        }
    }

    /// The pits above the highest one that changes are not chosen again:
    /// `unrank_near` leaves them as the caller kept them (poisoned here),
    /// which is what makes a short step cheap.
    #[test]
    fn unrank_near_rewrites_only_the_pits_that_change() {
        for &(pits, cons) in &[(5usize, None), (6, Some(3)), (12, Some(6))] {
            let r = Ranker::new(pits, 6, cons);
            let n = 6;
            let mut trail = r.trail(n);
            let mut x = vec![0u8; pits];
            let mut want = vec![0u8; pits];
            let mut kept = 0;
            for i in 0..r.count(n) {
                r.unrank(n, i, &mut want);
                if i == 0 {
                    r.unrank_near(i, &mut x, &mut trail);
                    assert_eq!(x, want);
                    continue;
                }
                // Pits 1 and 0 are always chosen again.
                let high = (1..pits).rev().find(|&k| x[k] != want[k]).unwrap_or(1);
                x[high + 1..].fill(u8::MAX);
                r.unrank_near(i, &mut x, &mut trail);
                assert_eq!(x[..=high], want[..=high], "pits {pits} index {i}");
                assert!(
                    x[high + 1..].iter().all(|&v| v == u8::MAX),
                    "pits {pits} index {i}: {x:?}"
                );
                kept += pits - 1 - high;
                x.copy_from_slice(&want);
            }
            assert!(kept > 0, "pits {pits}");
        }
    }

    #[test]
    fn max_seeds_is_the_one_given() {
        assert_eq!(Ranker::new(5, 7, None).max_seeds(), 7);
        assert_eq!(Ranker::new(12, 0, Some(6)).max_seeds(), 0);
        assert_eq!(Ranker::new(3, 1, Some(2)).max_seeds(), 1);
    }

    #[test]
    fn binomials() {
        assert_eq!(binomial(27, 11), 13_037_895);
        assert_eq!(binomial(5, 7), 0);
        assert_eq!(binomial(59, 11), 279_871_768_995);
        // Past what a u128 holds: the largest, not a wrapped number.
        assert_eq!(binomial(u64::MAX, 11), u128::MAX);
        // By symmetry, through the small side: C(n, n - 1) = n even where
        // a product over the large side would not fit.
        assert_eq!(binomial(u64::MAX, u64::MAX - 1), u128::from(u64::MAX));
        assert_eq!(binomial(u64::MAX, 1), u128::from(u64::MAX));
    }
}
