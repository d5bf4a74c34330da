//! SVG plots of the series the variants recorded, one per series a scenario
//! has, a line per variant.

use std::collections::BTreeMap;

use casebook_harness::report::Report;
use casebook_model::{Axes, Scenario, Unit};
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

fn draw(
    slug: &str,
    series: &str,
    axes: Option<&Axes>,
    lines: &[(&str, &[[f64; 2]])],
) -> Result<String, Box<dyn std::error::Error>> {
    let (y_desc, scale) = y_axis(axes.map(|a| a.y_unit));
    let x_desc = axes.map_or("", |a| a.x_label.as_str());
    let xs = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q[0]));
    let ys = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q[1] / scale));
    let x_max = xs.fold(1.0f64, f64::max);
    let y_max = ys.fold(0.0f64, f64::max) * 1.1 + f64::EPSILON;
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
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..x_max * 1.02, 0.0..y_max)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()?;
        for (i, (variant, points)) in lines.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (p[0], p[1] / scale)),
                    colour.stroke_width(2),
                ))?
                .label(*variant)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}
