//! The throughput curve as a PNG: images/s against batch size (log scale), one line per
//! configuration and GPU, drawn with plotters into a pixel buffer and encoded with the png
//! crate. The font is DejaVu Sans, compiled in, so the picture is the same on every machine.

use std::path::Path;

use plotters::prelude::*;

/// Width and height of the picture, in pixels.
pub const SIZE: (u32, u32) = (1000, 640);

/// One line of the plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its legend.
    pub label: String,
    /// (batch, images/s), ascending batch.
    pub points: Vec<(u32, f64)>,
}

/// Why the picture could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Nothing to draw.
    #[error("no batch-size measurements to plot")]
    Empty,
    /// plotters failed.
    #[error("drawing the plot: {0}")]
    Draw(String),
    /// Encoding or writing the file.
    #[error("writing the plot: {0}")]
    Write(String),
}

const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// Renders the series into RGB pixels (`SIZE.0 × SIZE.1 × 3` bytes).
pub fn render(title: &str, series: &[Series]) -> Result<Vec<u8>, PlotError> {
    let all: Vec<(u32, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .collect();
    if all.is_empty() {
        return Err(PlotError::Empty);
    }
    crate::world::fonts::register();
    let draw = |e: &dyn std::fmt::Display| PlotError::Draw(e.to_string());
    let min_b = all.iter().map(|p| p.0).min().unwrap_or(1).max(1);
    let max_b = all.iter().map(|p| p.0).max().unwrap_or(1).max(min_b + 1);
    let max_y = all.iter().map(|p| p.1).fold(0.0_f64, f64::max).max(1.0) * 1.12;
    let (w, h) = SIZE;
    let mut buf = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw(&e))?;
        let x_range = (f64::from(min_b) / 1.3)..(f64::from(max_b) * 1.3);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(20)
            .x_label_area_size(55)
            .y_label_area_size(80)
            .build_cartesian_2d(x_range.log_scale(), 0.0..max_y)
            .map_err(|e| draw(&e))?;
        chart
            .configure_mesh()
            .x_desc("batch size (images per step)")
            .y_desc("training throughput (images/s)")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()
            .map_err(|e| draw(&e))?;
        for (i, s) in series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let pts: Vec<(f64, f64)> = s.points.iter().map(|(b, y)| (f64::from(*b), *y)).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
                .map_err(|e| draw(&e))?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
                });
            chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 4, colour.filled())))
                .map_err(|e| draw(&e))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| draw(&e))?;
        root.present().map_err(|e| draw(&e))?;
    }
    Ok(buf)
}

/// Renders and writes the PNG to `path` (through a temporary file, so a crash leaves no half
/// picture).
pub fn write(path: &Path, title: &str, series: &[Series]) -> Result<(), PlotError> {
    let pixels = render(title, series)?;
    let werr = |e: &dyn std::fmt::Display| PlotError::Write(format!("{}: {e}", path.display()));
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, SIZE.0, SIZE.1);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| werr(&e))?;
        writer.write_image_data(&pixels).map_err(|e| werr(&e))?;
    }
    crate::world::fs::write_atomic(
        path,
        &bytes,
        crate::world::fs::Temp::Unique,
        crate::world::fs::Durability::Fast,
    )
    .map_err(|e| werr(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_png_decodes_to_the_right_size_with_ink_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("throughput.png");
        let series = vec![
            Series {
                label: "GPU 0 tf32".into(),
                points: vec![(32, 700.0), (64, 900.0), (128, 1100.0), (256, 1200.0)],
            },
            Series {
                label: "GPU 0 amp_bf16_cl".into(),
                points: vec![(32, 1500.0), (64, 2300.0), (128, 2900.0), (256, 3100.0)],
            },
        ];
        write(&path, "ResNet-50 training", &series).unwrap();
        let decoder =
            png::Decoder::new(std::io::BufReader::new(fs_err::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), SIZE);
        let px = &buf[..info.buffer_size()];
        let colour = |c: RGBColor| px.chunks(3).filter(|p| p == &[c.0, c.1, c.2]).count();
        // Both lines, the black axes and text are there; most of the picture is white.
        assert!(colour(COLOURS[0]) > 200, "{}", colour(COLOURS[0]));
        assert!(colour(COLOURS[1]) > 200);
        assert!(px.chunks(3).filter(|p| p.iter().all(|v| *v < 80)).count() > 500);
        assert!(colour(WHITE) > px.len() / 3 / 2);
        assert!(!dir.path().join("throughput.png.tmp").exists());
        assert!(matches!(render("t", &[]), Err(PlotError::Empty)));
    }
}
