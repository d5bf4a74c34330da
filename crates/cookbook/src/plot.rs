//! SVG plots of the series the variants recorded, one per series a scenario
//! has, a line per variant.

use std::collections::BTreeMap;

use casebook_model::{Axes, Scenario, Unit};
use casebook_report::run::Report;
use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::element::{DashedPathElement, DynElement};
use plotters::prelude::*;

const COLOURS: [RGBColor; 6] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// One line of a plot: the variant and its points.
type Line<'a> = (&'a str, &'a [[f64; 2]]);

/// File name to SVG text.
pub fn plots(scenario: &Scenario, report: Option<&Report>) -> BTreeMap<String, String> {
    let mut by_series: BTreeMap<&str, Vec<Line>> = BTreeMap::new();
    let mut axes: BTreeMap<&str, &Axes> = BTreeMap::new();
    for r in report
        .into_iter()
        .flat_map(|r| r.results.iter())
        .filter(|r| r.scenario == scenario.slug)
    {
        for (series, points) in &r.outcome.series {
            if let Some(a) = r.outcome.axes.get(series) {
                axes.insert(series.as_str(), a);
            }
            if points.len() >= 2 {
                by_series
                    .entry(series.as_str())
                    .or_default()
                    .push((r.variant.as_str(), points.as_slice()));
            }
        }
    }
    let mut plots: BTreeMap<String, String> = by_series
        .into_iter()
        .filter_map(|(series, lines)| {
            let svg = draw(scenario.slug, series, axes.get(series).copied(), &lines).ok()?;
            Some((format!("{}-{series}.svg", scenario.slug), svg))
        })
        .collect();
    plots.extend(allocated_against_reserved(scenario, report));
    plots
}

/// For each variant that recorded both an allocator's allocated and its
/// reserved bytes, one plot with the two: the gap between the lines is what
/// the cache holds and no tensor uses.
fn allocated_against_reserved(
    scenario: &Scenario,
    report: Option<&Report>,
) -> BTreeMap<String, String> {
    let mut plots = BTreeMap::new();
    for r in report
        .into_iter()
        .flat_map(|r| r.results.iter())
        .filter(|r| r.scenario == scenario.slug)
    {
        let series = &r.outcome.series;
        let (Some(allocated), Some(reserved)) =
            (series.get("allocated_bytes"), series.get("reserved_bytes"))
        else {
            continue;
        };
        if allocated.len() < 2 {
            continue;
        }
        let lines: [Line; 2] = [("reserved", reserved), ("allocated", allocated)];
        let title = format!("{}: allocated against reserved", r.variant);
        if let Ok(svg) = draw(
            scenario.slug,
            &title,
            r.outcome.axes.get("allocated_bytes"),
            &lines,
        ) {
            plots.insert(
                format!("{}-{}-allocated-vs-reserved.svg", scenario.slug, r.variant),
                svg,
            );
        }
    }
    plots
}

/// How the y axis is labelled and scaled for a unit.
fn y_axis(unit: Option<Unit>) -> (&'static str, f64) {
    match unit {
        Some(Unit::Bytes) => ("GiB", (1u64 << 30) as f64),
        Some(Unit::Seconds) => ("ms", 1e-3),
        Some(Unit::Count) => ("count", 1.0),
        Some(Unit::Ratio) => ("ratio", 1.0),
        Some(Unit::Factor) => ("times", 1.0),
        None => ("", 1.0),
    }
}

/// The names of a series' discrete phases, where its x axis counts phases
/// (`x_label` "phase") rather than a quantity: the points a variant records
/// at 0, 1, 2 … are the moments its code reaches, in order. A test checks
/// that every phase series of the committed report has its names here.
const PHASES: &[(&str, &[&str])] = &[
    (
        "second-training-run",
        &[
            "after the first run",
            "after the cleanup",
            "after the second run",
        ],
    ),
    (
        "fragmentation",
        &[
            "blocks allocated",
            "ballast held",
            "blocks freed",
            "pieces allocated",
            "pieces freed",
            "after the request",
        ],
    ),
];

/// The x axis label that marks a series of phases.
const PHASE_AXIS: &str = "phase";

fn phase_names(slug: &str) -> Option<&'static [&'static str]> {
    PHASES.iter().find(|(s, _)| *s == slug).map(|(_, n)| *n)
}

/// How the `i`th of `n` lines is drawn, so that no line hides another:
/// the first lines are wider and drawn first, each later one thinner on
/// top, with its own dash and its own marker shape.
#[derive(Clone, Copy)]
struct Look {
    colour: RGBColor,
    width: u32,
    /// Dash and gap in pixels; `None` for a solid line.
    dash: Option<(u32, u32)>,
    shape: usize,
    marker_size: i32,
}

fn look(i: usize, n: usize) -> Look {
    let rank = (n - 1 - i.min(n - 1)) as u32; // 0 for the last line drawn
    Look {
        colour: COLOURS[i % COLOURS.len()],
        width: 2 + rank.min(3),
        dash: match i % 4 {
            0 => None,
            1 => Some((9, 5)),
            2 => Some((2, 4)),
            _ => Some((14, 5)),
        },
        shape: i % 5,
        marker_size: 3 + rank.min(3) as i32,
    }
}

/// The marker of `look`'s shape, around the point it is added to.
fn shape<DB: DrawingBackend>(look: Look) -> DynElement<'static, DB, (i32, i32)> {
    let (r, colour) = (look.marker_size, look.colour);
    let outline = colour.stroke_width(2);
    match look.shape {
        0 => Circle::new((0, 0), r, colour.filled()).into_dyn(),
        1 => TriangleMarker::new((0, 0), r + 1, colour.filled()).into_dyn(),
        2 => Rectangle::new([(-r, -r), (r, r)], outline).into_dyn(),
        3 => Cross::new((0, 0), r, outline).into_dyn(),
        _ => Circle::new((0, 0), r, outline).into_dyn(),
    }
}

/// An x axis whose ticks are given, one per phase; otherwise plotters'
/// own.
struct XAxis {
    inner: RangedCoordf64,
    ticks: Option<Vec<f64>>,
}

impl Ranged for XAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match &self.ticks {
            Some(_) if hint.weight().allow_light_points() => Vec::new(),
            Some(ticks) => ticks.clone(),
            None => self.inner.key_points(hint),
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

/// The points of a line, dashed as `look` says, as pieces of solid path
/// (pixels along the drawing are not known here, so the dash follows the
/// line's share of the x range).
fn draw_line<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<XAxis, RangedCoordf64>>,
    points: &[(f64, f64)],
    look: Look,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let style = look.colour.stroke_width(look.width);
    match look.dash {
        None => {
            chart.draw_series(LineSeries::new(points.iter().copied(), style))?;
        }
        Some((dash, gap)) => {
            chart.draw_series(DashedLineSeries::new(
                points.iter().copied(),
                dash,
                gap,
                style,
            ))?;
        }
    }
    Ok(())
}

/// The plotting area of a plot, in pixels, roughly: the picture less its
/// margins, caption and label areas.
const AREA: (f64, f64) = (620.0, 300.0);

/// The legend's box, in shares of the plotting area.
struct Legend {
    width: f64,
    height: f64,
}

impl Legend {
    fn sized(lines: &[Line]) -> Legend {
        let longest = lines.iter().map(|(v, _)| v.len()).max().unwrap_or(0) as f64;
        Legend {
            width: (48.0 + 7.0 * longest) / AREA.0,
            height: (14.0 + 20.0 * lines.len() as f64) / AREA.1,
        }
    }

    fn height_share(&self) -> f64 {
        self.height
    }

    /// The first corner whose legend box no line crosses, judged on
    /// points taken along each line.
    fn free_corner(
        &self,
        lines: &[Line],
        offset: f64,
        x: Range<f64>,
        y_max: f64,
        scale: f64,
    ) -> Option<SeriesLabelPosition> {
        let n = lines.len() as f64;
        let mut along = Vec::new();
        for (i, (_, points)) in lines.iter().enumerate() {
            let shift = offset * (i as f64 - (n - 1.0) / 2.0);
            let share = |p: &[f64; 2]| {
                (
                    (p[0] + shift - x.start) / (x.end - x.start),
                    p[1] / scale / y_max,
                )
            };
            for pair in points.windows(2) {
                let (a, b) = (share(&pair[0]), share(&pair[1]));
                along.extend((0..=20).map(|k| {
                    let t = k as f64 / 20.0;
                    (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
                }));
            }
        }
        // A margin around the box, for the markers and the line widths.
        let (w, h) = (self.width + 0.04, self.height + 0.06);
        [
            (SeriesLabelPosition::UpperRight, 1.0 - w, 1.0 - h),
            (SeriesLabelPosition::UpperLeft, 0.0, 1.0 - h),
            (SeriesLabelPosition::LowerRight, 1.0 - w, 0.0),
            (SeriesLabelPosition::LowerLeft, 0.0, 0.0),
        ]
        .into_iter()
        .find(|(_, left, bottom)| {
            !along.iter().any(|(px, py)| {
                (*left..=left + w).contains(px) && (*bottom..=bottom + h).contains(py)
            })
        })
        .map(|(at, _, _)| at)
    }
}

/// An x value in words: a whole number without a fraction, else as it is.
fn x_words(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

fn draw(
    slug: &str,
    series: &str,
    axes: Option<&Axes>,
    lines: &[(&str, &[[f64; 2]])],
) -> Result<String, Box<dyn std::error::Error>> {
    let (y_desc, scale) = y_axis(axes.map(|a| a.y_unit));
    let x_desc = axes.map_or("", |a| a.x_label.as_str());
    let phases = axes
        .filter(|a| a.x_label == PHASE_AXIS)
        .and_then(|_| phase_names(slug));
    let xs = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q[0]));
    let ys = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q[1] / scale));
    let x_max = xs.fold(1.0f64, f64::max);
    let data_max = ys.fold(0.0f64, f64::max);
    let mut y_max = data_max * 1.1 + f64::EPSILON;
    // Phases are places, not quantities: one tick per phase, named, and
    // the lines set a little apart at each so that equal values all show.
    let (x_range, offset) = match phases {
        Some(names) => {
            let last = names.len().max(x_max as usize + 1) as f64 - 1.0;
            let ticks = (0..=last as usize).map(|i| i as f64).collect();
            let axis = XAxis {
                inner: (-0.5..last + 0.5).into(),
                ticks: Some(ticks),
            };
            (axis, 0.08)
        }
        None => {
            let axis = XAxis {
                inner: (0.0..x_max * 1.02).into(),
                ticks: None,
            };
            (axis, 0.0)
        }
    };
    // The legend goes in a corner no line passes through; where every
    // corner has one, the y axis grows until the upper right is clear.
    let x_span = x_range.inner.range();
    let legend = Legend::sized(lines);
    let legend_at = legend
        .free_corner(lines, offset, x_span.clone(), y_max, scale)
        .unwrap_or_else(|| {
            y_max = data_max / (1.0 - legend.height_share() - 0.05) + f64::EPSILON;
            SeriesLabelPosition::UpperRight
        });
    let label = |x: &f64| match phases {
        Some(names) => names
            .get(x.round() as usize)
            .map_or_else(|| x_words(*x), |n| (*n).to_owned()),
        None => x_words(*x),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 400)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{slug}: {}", series.replace('_', " ")),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x_range, 0.0..y_max)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&label)
            .draw()?;
        let n = lines.len();
        for (i, (variant, points)) in lines.iter().enumerate() {
            let look = look(i, n);
            let shift = offset * (i as f64 - (n as f64 - 1.0) / 2.0);
            let points: Vec<(f64, f64)> = points
                .iter()
                .map(|p| (p[0] + shift, p[1] / scale))
                .collect();
            draw_line(&mut chart, &points, look)?;
            // A marker on every point of a short line, on every few of a
            // long one, each line's set apart from the others'.
            let step = points.len().div_ceil(6).max(1);
            let first = i * step / n.max(1);
            chart
                .draw_series(
                    points
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j % step == first % step)
                        .map(|(_, p)| EmptyElement::at(*p) + shape(look)),
                )?
                .label(*variant)
                .legend(move |(x, y)| {
                    let (dash, gap) = look.dash.unwrap_or((28, 1));
                    EmptyElement::at((x, y))
                        + DashedPathElement::new(
                            vec![(0, 0), (28, 0)],
                            dash,
                            gap,
                            look.colour.stroke_width(look.width.min(4)),
                        )
                        + EmptyElement::at((14, 0))
                        + shape(Look {
                            marker_size: 4,
                            ..look
                        })
                });
        }
        chart
            .configure_series_labels()
            .position(legend_at)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase_axes() -> Axes {
        Axes {
            x_label: PHASE_AXIS.to_owned(),
            x_unit: Unit::Count,
            y_unit: Unit::Bytes,
        }
    }

    #[test]
    fn phases_are_named_and_equal_lines_both_show() {
        let same: &[[f64; 2]] = &[[0.0, 5e10], [1.0, 5e10], [2.0, 5e10]];
        let svg = draw(
            "second-training-run",
            "reserved_bytes",
            Some(&phase_axes()),
            &[("reserved", same), ("allocated", same)],
        )
        .unwrap();
        for name in PHASES[0].1 {
            assert!(svg.lines().any(|l| l.trim() == *name), "{name}");
        }
        // No numeric ticks between or on the phases (the y axis's are tens).
        for tick in ["0.5", "1.0", "1.5", "2.0"] {
            assert!(!svg.lines().any(|l| l.trim() == tick), "{tick}");
        }
        // A legend entry for each line; the later line thinner, dashed and
        // marked otherwise, so that it shows on top of an equal one.
        for label in ["reserved", "allocated"] {
            assert!(svg.lines().any(|l| l.trim() == label), "{label}");
        }
        let (first, second) = (look(0, 2), look(1, 2));
        assert!(first.width > second.width && first.dash.is_none() && second.dash.is_some());
        assert_ne!(first.shape, second.shape);
    }

    #[test]
    fn every_phase_series_of_the_committed_run_has_its_names() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/evidence/latest.json");
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        let report: Report = serde_json::from_str(&text).unwrap();
        for r in &report.results {
            for (series, points) in &r.outcome.series {
                if r.outcome
                    .axes
                    .get(series)
                    .is_none_or(|a| a.x_label != PHASE_AXIS)
                {
                    continue;
                }
                let names = phase_names(&r.scenario)
                    .unwrap_or_else(|| panic!("{}: its phases have no names", r.scenario));
                for p in points {
                    assert!((p[0] as usize) < names.len(), "{}", r.trial());
                }
            }
        }
    }
}
