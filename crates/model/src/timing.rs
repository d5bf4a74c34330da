//! Deciding which of two measured figures is larger, so that the answer
//! holds under whatever runs beside the trial.
//!
//! One measurement of each side is no basis for a fact a snapshot keeps: a
//! neighbour that slows the machine during one side and not the other
//! decides it. The sides are measured in interleaved pairs instead (A, B,
//! A, B, …), so a load that comes and goes stretches both sides of a pair
//! alike, and the fact is read from the pairs: one side is larger when its
//! median ratio and median difference clear the margins and it is larger
//! in at least four pairs of five.

/// Which side of the pairs is larger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Larger {
    A,
    B,
    Neither,
}

/// The pairs' verdict, with what it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedComparison {
    pub pairs: usize,
    /// Pairs in which A is the larger, and B.
    pub a_larger: usize,
    pub b_larger: usize,
    /// The median of a / b over the pairs.
    pub median_ratio: f64,
    /// The median of a - b.
    pub median_difference: f64,
    pub larger: Larger,
}

/// The share of pairs that must agree.
pub const AGREEING_SHARE: f64 = 0.8;

/// Compares interleaved pairs `(a, b)`: A is larger when the median of
/// a / b is at least `ratio`, the median of a - b at least `least`, and A is
/// the larger in [`AGREEING_SHARE`] of the pairs; B likewise; else neither.
pub fn compare_pairs(pairs: &[(f64, f64)], least: f64, ratio: f64) -> PairedComparison {
    let n = pairs.len();
    let need = (AGREEING_SHARE * n as f64).ceil() as usize;
    let a_larger = pairs.iter().filter(|(a, b)| a > b).count();
    let b_larger = pairs.iter().filter(|(a, b)| b > a).count();
    let ratios: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| if *b > 0.0 { a / b } else { f64::INFINITY })
        .collect();
    let inverse: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| if *a > 0.0 { b / a } else { f64::INFINITY })
        .collect();
    let differences: Vec<f64> = pairs.iter().map(|(a, b)| a - b).collect();
    let (median_ratio, median_difference) = (median(&ratios), median(&differences));
    let larger = if n == 0 {
        Larger::Neither
    } else if a_larger >= need && median_ratio >= ratio && median_difference >= least {
        Larger::A
    } else if b_larger >= need && median(&inverse) >= ratio && -median_difference >= least {
        Larger::B
    } else {
        Larger::Neither
    };
    PairedComparison {
        pairs: n,
        a_larger,
        b_larger,
        median_ratio,
        median_difference,
        larger,
    }
}

/// The median (the mean of the middle two for an even count); NaN when
/// empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_difference_in_most_pairs_decides() {
        let pairs = [(2.0, 1.0), (1.9, 1.0), (2.2, 1.1), (0.9, 1.0), (2.5, 1.2)];
        let c = compare_pairs(&pairs, 0.1, 1.2);
        assert_eq!(c.larger, Larger::A);
        assert_eq!((c.a_larger, c.b_larger), (4, 1));
        let swapped: Vec<(f64, f64)> = pairs.iter().map(|(a, b)| (*b, *a)).collect();
        assert_eq!(compare_pairs(&swapped, 0.1, 1.2).larger, Larger::B);
    }

    #[test]
    fn a_difference_in_too_few_pairs_or_under_the_margin_is_neither() {
        // Three pairs of five: not enough agreement.
        let split = [(2.0, 1.0), (2.0, 1.0), (2.0, 1.0), (1.0, 2.0), (1.0, 2.0)];
        assert_eq!(compare_pairs(&split, 0.1, 1.2).larger, Larger::Neither);
        // Every pair agrees, but by less than the ratio.
        let close = [(1.1, 1.0); 5];
        assert_eq!(compare_pairs(&close, 0.01, 1.2).larger, Larger::Neither);
        // Every pair agrees and the ratio is large, but the difference is
        // under the least that counts.
        let tiny = [(2e-6, 1e-6); 5];
        assert_eq!(compare_pairs(&tiny, 1e-3, 1.2).larger, Larger::Neither);
        assert_eq!(compare_pairs(&[], 0.0, 1.0).larger, Larger::Neither);
    }

    #[test]
    fn one_disturbed_pair_does_not_flip_the_answer() {
        // A neighbour stretched B in one pair only.
        let pairs = [(2.0, 1.0), (2.1, 1.0), (2.0, 3.5), (1.8, 1.0), (2.2, 1.1)];
        assert_eq!(compare_pairs(&pairs, 0.1, 1.2).larger, Larger::A);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_middle_mean() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert!(median(&[]).is_nan());
    }
}
