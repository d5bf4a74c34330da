//! The name of a trial: one variant of one scenario, `<slug>::<variant>`.
//!
//! The one spelling of it. The runner names a child's target with it, the
//! child parses it back, and every report, table and test name shows it:
//! none of them joins or splits the two parts by hand. It lives here, below
//! the child side, because the child reads it too.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `<slug>::<variant>`; in JSON, that string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TrialId {
    /// The scenario's slug.
    pub scenario: String,
    /// The variant's name.
    pub variant: String,
}

/// What joins the two parts.
const SEPARATOR: &str = "::";

impl TrialId {
    pub fn new(scenario: impl Into<String>, variant: impl Into<String>) -> Self {
        TrialId {
            scenario: scenario.into(),
            variant: variant.into(),
        }
    }
}

impl fmt::Display for TrialId {
    /// Honours width and alignment (`{:<44}`), as a string would.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format!("{}{SEPARATOR}{}", self.scenario, self.variant))
    }
}

impl FromStr for TrialId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (scenario, variant) = s
            .split_once(SEPARATOR)
            .ok_or_else(|| format!("`{s}` is no trial's name (`<slug>{SEPARATOR}<variant>`)"))?;
        Ok(TrialId::new(scenario, variant))
    }
}

impl Serialize for TrialId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TrialId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl PartialEq<str> for TrialId {
    fn eq(&self, other: &str) -> bool {
        other
            .split_once(SEPARATOR)
            .is_some_and(|(s, v)| s == self.scenario && v == self.variant)
    }
}

impl PartialEq<&str> for TrialId {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

#[cfg(test)]
mod tests {
    use super::TrialId;

    #[test]
    fn a_trial_id_is_written_and_read_as_slug_and_variant() {
        let id = TrialId::new("missing-free", "broken-cpp");
        assert_eq!(id.to_string(), "missing-free::broken-cpp");
        assert_eq!(format!("[{id:<26}]"), "[missing-free::broken-cpp  ]");
        assert_eq!(
            "missing-free::broken-cpp".parse::<TrialId>(),
            Ok(id.clone())
        );
        assert_eq!(id, "missing-free::broken-cpp");
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "\"missing-free::broken-cpp\""
        );
        assert_eq!(
            serde_json::from_str::<TrialId>("\"missing-free::broken-cpp\"").unwrap(),
            id
        );
        assert!("missing-free".parse::<TrialId>().is_err());
    }
}
