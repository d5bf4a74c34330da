//! The reporter: what is shown and written of a run, from the runner's
//! records and the report's data. [`progress`] as it goes, the [`table`]
//! at its end, the [`markdown`] page and [`junit`] XML beside the
//! [`report`], and the insta [`snapshot`]s of each trial's outcome.
//! A new column of the report is shown here and nowhere else.

pub mod junit;
pub mod markdown;
pub mod progress;
pub mod report;
pub mod snapshot;
pub mod table;
