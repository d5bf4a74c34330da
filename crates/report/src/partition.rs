//! Which part of the catalogue a partitioned run ran.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Shard `index` of `count` (1-based), each trial in exactly one shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Partition {
    pub index: u32,
    pub count: u32,
}

impl Partition {
    /// Whether the `n`th trial of the catalogue (0-based) is in this shard.
    pub fn holds(&self, n: usize) -> bool {
        n % self.count as usize == (self.index - 1) as usize
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Partition {
    type Err = String;

    /// `K/N`, with 1 ≤ K ≤ N.
    fn from_str(s: &str) -> Result<Self, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not K/N (shard K of N, from 1)"))?;
        let index: u32 = k
            .trim()
            .parse()
            .map_err(|_| format!("`{k}` is not a number"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("`{n}` is not a number"))?;
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {index} of {count}: K must be from 1 to N"));
        }
        Ok(Partition { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::Partition;

    #[test]
    fn partitions_parse_and_deal_every_trial_to_one_shard() {
        assert!("0/2".parse::<Partition>().is_err());
        assert!("3/2".parse::<Partition>().is_err());
        assert!("2".parse::<Partition>().is_err());
        let shards: Vec<Partition> = (1..=3).map(|k| format!("{k}/3").parse().unwrap()).collect();
        for n in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.holds(n)).count(), 1);
        }
    }
}
