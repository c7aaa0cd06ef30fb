//! `--plot FILE.png`: utilisation, memory and power over the run, one line per GPU in three
//! stacked charts, drawn with plotters into a pixel buffer (the font compiled in, as `bench`'s
//! plot is) and written through the one atomic writer.

use std::path::Path;

use plotters::prelude::*;

use super::sample::Sample;
use super::MonitorError;

/// Width and height of the picture, in pixels.
pub const SIZE: (u32, u32) = (1000, 900);

const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
];

/// One chart: its axis label, the top of its y range, and the value of a GPU in a sample.
struct Chart {
    label: &'static str,
    top: fn(&[Sample]) -> f64,
    value: fn(&super::sample::GpuSample) -> Option<f64>,
}

const CHARTS: [Chart; 3] = [
    Chart {
        label: "GPU utilisation (%)",
        top: |_| 100.0,
        value: |g| g.util_gpu.map(f64::from),
    },
    Chart {
        label: "memory used (%)",
        top: |_| 100.0,
        value: |g| g.mem_share().map(|s| 100.0 * s),
    },
    Chart {
        label: "power (W)",
        top: |samples| {
            samples
                .iter()
                .flat_map(|s| &s.gpus)
                .filter_map(|g| g.power_limit_w.or(g.power_w))
                .fold(0.0_f64, f64::max)
                .max(1.0)
                * 1.1
        },
        value: |g| g.power_w,
    },
];

/// Renders the run into RGB pixels.
pub fn render(samples: &[Sample]) -> Result<Vec<u8>, String> {
    if samples.len() < 2 {
        return Err("fewer than two samples: nothing to plot".into());
    }
    crate::world::fonts::register();
    let draw = |e: &dyn std::fmt::Display| e.to_string();
    let t0 = samples[0].t_ms;
    let end = samples
        .last()
        .map_or(1.0, |s| (s.t_ms - t0) as f64 / 1000.0)
        .max(1.0);
    let mut indices: Vec<(u32, String)> = samples
        .iter()
        .flat_map(|s| s.gpus.iter().map(|g| (g.index, g.name.clone())))
        .collect();
    indices.sort();
    indices.dedup_by_key(|(i, _)| *i);
    let (w, h) = SIZE;
    let mut buf = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw(&e))?;
        let panels = root.split_evenly((3, 1));
        for (panel, chart) in panels.iter().zip(CHARTS.iter()) {
            let mut c = ChartBuilder::on(panel)
                .margin(12)
                .x_label_area_size(35)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..end, 0.0..(chart.top)(samples))
                .map_err(|e| draw(&e))?;
            c.configure_mesh()
                .x_desc("seconds")
                .y_desc(chart.label)
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 15))
                .draw()
                .map_err(|e| draw(&e))?;
            for (n, (index, name)) in indices.iter().enumerate() {
                let colour = COLOURS[n % COLOURS.len()];
                let points: Vec<(f64, f64)> = samples
                    .iter()
                    .filter_map(|s| {
                        let g = s.gpus.iter().find(|g| g.index == *index)?;
                        Some(((s.t_ms - t0) as f64 / 1000.0, (chart.value)(g)?))
                    })
                    .collect();
                c.draw_series(LineSeries::new(points, colour.stroke_width(2)))
                    .map_err(|e| draw(&e))?
                    .label(format!("GPU {index} {name}"))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
                    });
            }
            c.configure_series_labels()
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(|e| draw(&e))?;
        }
        root.present().map_err(|e| draw(&e))?;
    }
    Ok(buf)
}

/// Renders the run and writes the PNG to `path` (a crash leaves the old picture or none).
pub fn write(path: &Path, samples: &[Sample]) -> Result<(), MonitorError> {
    let fail = |message: String| MonitorError::Write {
        path: path.to_owned(),
        source: std::io::Error::other(message),
    };
    let pixels = render(samples).map_err(fail)?;
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, SIZE.0, SIZE.1);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| fail(e.to_string()))?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| fail(e.to_string()))?;
    }
    crate::world::fs::write_atomic(
        path,
        &bytes,
        crate::world::fs::Temp::Unique,
        crate::world::fs::Durability::Fast,
    )
    .map_err(|source| MonitorError::Write {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::sample::GpuSample;

    #[test]
    fn the_png_has_a_line_per_gpu_and_decodes_to_its_size() {
        let samples: Vec<Sample> = (0..20)
            .map(|i| Sample {
                t_ms: i * 500,
                gpus: (0..2)
                    .map(|g| GpuSample {
                        index: g,
                        name: "NVIDIA H200".into(),
                        util_gpu: Some(if g == 0 { 90 } else { 20 }),
                        mem_used_mib: Some(100_000),
                        mem_total_mib: Some(143_771),
                        power_w: Some(600.0),
                        power_limit_w: Some(700.0),
                        ..GpuSample::default()
                    })
                    .collect(),
                ..Sample::default()
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.png");
        write(&path, &samples).unwrap();
        let decoder =
            png::Decoder::new(std::io::BufReader::new(fs_err::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), SIZE);
        let px = &buf[..info.buffer_size()];
        let colour = |c: RGBColor| px.chunks(3).filter(|p| p == &[c.0, c.1, c.2]).count();
        assert!(colour(COLOURS[0]) > 500, "{}", colour(COLOURS[0]));
        assert!(colour(COLOURS[1]) > 500, "{}", colour(COLOURS[1]));
        assert!(write(&path, &samples[..1]).is_err());
    }
}
