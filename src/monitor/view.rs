//! The live view, drawn with ratatui into a buffer: one panel per GPU (utilisation and memory
//! bars, power against the limit, temperature, clocks and what holds them down, the PCIe link
//! against its best, NVLink traffic, errors, a sparkline of the last minutes, the processes), and
//! the watched command's CPU. Pure: it draws a [`History`] into a [`Buffer`], so a test renders
//! it into a test backend's buffer exactly as a terminal would show it. Colour only where the
//! caller allows it (`NO_COLOR`, `--color never`); a narrow terminal gets one line per GPU.

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline, Widget};

use super::sample::{GpuSample, Sample};
use super::words::Words;

/// Below this width the view is one line per GPU.
pub const NARROW: u16 = 72;

/// The samples the view remembers (for the sparklines), newest last.
#[derive(Debug, Clone)]
pub struct History {
    samples: VecDeque<Sample>,
    cap: usize,
}

impl History {
    /// Remembers up to `cap` samples.
    pub fn new(cap: usize) -> Self {
        Self {
            samples: VecDeque::with_capacity(cap.min(4096)),
            cap: cap.max(1),
        }
    }

    /// Adds the newest sample, forgetting the oldest past the cap.
    pub fn push(&mut self, sample: Sample) {
        if self.samples.len() == self.cap {
            self.samples.pop_front();
        }
        self.samples.push_back(sample);
    }

    /// The newest sample.
    pub fn latest(&self) -> Option<&Sample> {
        self.samples.back()
    }

    /// GPU `index`'s utilisation over the remembered samples (0 where it was not read).
    fn util(&self, index: u32) -> Vec<u64> {
        self.samples
            .iter()
            .map(|s| {
                s.gpus
                    .iter()
                    .find(|g| g.index == index)
                    .and_then(|g| g.util_gpu)
                    .map_or(0, u64::from)
            })
            .collect()
    }
}

/// How to draw.
#[derive(Debug, Clone, Copy)]
pub struct Look {
    /// Colours allowed.
    pub color: bool,
    /// Seconds between samples (for the title).
    pub interval_s: f64,
}

/// Draws `history` into `area` of `buf`.
pub fn render(area: Rect, buf: &mut Buffer, history: &History, words: &Words, look: Look) {
    let Some(latest) = history.latest() else {
        return;
    };
    let title = Line::from(vec![
        Span::styled(
            (words.title)(latest.gpus.len(), look.interval_s),
            style(look, Style::default().add_modifier(Modifier::BOLD)),
        ),
        Span::raw("  "),
        Span::raw(words.keys),
    ]);
    let mut y = area.y;
    let bottom = area.y.saturating_add(area.height);
    Paragraph::new(title).render(Rect::new(area.x, y, area.width, 1), buf);
    y = y.saturating_add(1);
    if let Some(c) = &latest.command {
        let text = (words.command_cpu)(c.cpu_cores, c.processes, c.cores_available);
        if y < bottom {
            Paragraph::new(text).render(Rect::new(area.x, y, area.width, 1), buf);
            y += 1;
        }
    }
    if area.width < NARROW {
        for g in &latest.gpus {
            if y >= bottom {
                break;
            }
            Paragraph::new(compact_line(g, words)).render(Rect::new(area.x, y, area.width, 1), buf);
            y += 1;
        }
        return;
    }
    for (shown, g) in latest.gpus.iter().enumerate() {
        let procs = g.processes.len().clamp(1, 3) as u16;
        let height = 2 + 3 + 1 + procs;
        if y.saturating_add(height) > bottom {
            // No room for another whole panel: say how many are not shown.
            if y < bottom {
                let hidden = latest.gpus.len() - shown;
                Paragraph::new((words.hidden)(hidden))
                    .render(Rect::new(area.x, y, area.width, 1), buf);
            }
            break;
        }
        let rect = Rect::new(area.x, y, area.width, height);
        gpu_panel(rect, buf, g, &history.util(g.index), words, look);
        y += height;
    }
}

fn style(look: Look, s: Style) -> Style {
    if look.color {
        s
    } else {
        // Bold and the like stay (they are not colour); colours go.
        Style::default().add_modifier(s.add_modifier)
    }
}

/// A bar of `width` cells filled to `share` (0–1), in eighths.
pub fn bar(share: f64, width: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (share.clamp(0.0, 1.0) * (width * 8) as f64).round() as usize;
    let mut s: String = "█".repeat(eighths / 8);
    if eighths / 8 < width {
        s.push(PARTS[eighths % 8]);
        s.push_str(&" ".repeat(width - eighths / 8 - 1));
    }
    s
}

fn level(share: f64) -> Color {
    if share >= 0.9 {
        Color::Red
    } else if share >= 0.6 {
        Color::Yellow
    } else {
        Color::Green
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "–".to_owned(), |v| v.to_string())
}

fn gib(mib: Option<u64>) -> String {
    mib.map_or_else(|| "–".to_owned(), |m| format!("{:.1}", m as f64 / 1024.0))
}

fn gpu_panel(
    rect: Rect,
    buf: &mut Buffer,
    g: &GpuSample,
    util_history: &[u64],
    words: &Words,
    look: Look,
) {
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" GPU {} · {} ", g.index, g.name));
    let inner = block.inner(rect);
    block.render(rect, buf);
    let util = f64::from(g.util_gpu.unwrap_or(0)) / 100.0;
    let mem = g.mem_share().unwrap_or(0.0);
    let bar_w = usize::from(inner.width.saturating_sub(50) / 2).clamp(8, 40);
    let line1 = Line::from(vec![
        Span::raw(format!("{:<8}", words.util)),
        Span::styled(
            bar(util, bar_w),
            style(look, Style::default().fg(level(util))),
        ),
        Span::raw(format!(
            " {:>4}  ",
            g.util_gpu.map_or("–".into(), |u| format!("{u}%"))
        )),
        Span::raw(format!("{:<7}", words.memory)),
        Span::styled(
            bar(mem, bar_w),
            style(look, Style::default().fg(level(mem))),
        ),
        Span::raw(format!(
            " {}/{} GiB",
            gib(g.mem_used_mib),
            gib(g.mem_total_mib)
        )),
    ]);
    let power = match (g.power_w, g.power_limit_w) {
        (Some(p), Some(l)) => format!("{p:.0}/{l:.0} W"),
        (Some(p), None) => format!("{p:.0} W"),
        _ => "–".into(),
    };
    let line2 = Line::from(format!(
        "{} {}   {} {} °C   {} {}/{} MHz   mem-util {}%",
        words.power,
        power,
        words.temperature,
        opt(g.temp_c),
        words.clocks,
        opt(g.sm_clock_mhz),
        opt(g.sm_clock_max_mhz),
        opt(g.util_mem),
    ));
    let held: Vec<&str> = g
        .throttle
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|t| *t != "gpu-idle")
        .collect();
    let mut third = vec![Span::raw(format!("{} ", words.throttle))];
    if held.is_empty() {
        third.push(Span::raw(words.none.to_owned()));
    } else {
        third.push(Span::styled(
            held.join(", "),
            style(look, Style::default().fg(Color::Yellow)),
        ));
    }
    if let Some(p) = &g.pcie {
        let below = matches!((p.gen, p.max_gen), (Some(a), Some(b)) if a < b)
            || matches!((p.width, p.max_width), (Some(a), Some(b)) if a < b);
        third.push(Span::raw("   PCIe "));
        third.push(Span::styled(
            format!(
                "Gen{} x{} (best Gen{} x{})",
                opt(p.gen),
                opt(p.width),
                opt(p.max_gen),
                opt(p.max_width)
            ),
            if below && g.util_gpu.unwrap_or(0) >= super::summary::BUSY_FOR_LINK {
                style(look, Style::default().fg(Color::Yellow))
            } else {
                Style::default()
            },
        ));
    }
    if let Some(n) = &g.nvlink {
        third.push(Span::raw(format!(
            "   NVLink {} links {}/{} MB/s",
            n.active_links,
            n.tx_kib_s
                .map_or("–".into(), |v| format!("{:.0}", v / 1024.0)),
            n.rx_kib_s
                .map_or("–".into(), |v| format!("{:.0}", v / 1024.0)),
        )));
    }
    if g.ecc_uncorrected.is_some_and(|e| e > 0) || !g.xid.is_empty() {
        third.push(Span::styled(
            format!("   ECC {} Xid {:?}", opt(g.ecc_uncorrected), g.xid),
            style(look, Style::default().fg(Color::Red)),
        ));
    }
    let mut y = inner.y;
    for line in [line1, line2, Line::from(third)] {
        Paragraph::new(line).render(Rect::new(inner.x, y, inner.width, 1), buf);
        y += 1;
    }
    // The sparkline shows as many of the newest samples as it is wide.
    let width = usize::from(inner.width);
    let tail = &util_history[util_history.len().saturating_sub(width)..];
    Sparkline::default()
        .data(tail)
        .max(100)
        .style(style(look, Style::default().fg(Color::Cyan)))
        .render(Rect::new(inner.x, y, inner.width, 1), buf);
    y += 1;
    if g.processes.is_empty() {
        Paragraph::new(format!("{}: {}", words.processes, words.no_processes))
            .render(Rect::new(inner.x, y, inner.width, 1), buf);
    }
    for p in g.processes.iter().take(3) {
        let text = format!(
            "{:>8} {:<24} {:>8} MiB{}",
            p.pid,
            p.name.as_deref().unwrap_or("?"),
            opt(p.mem_mib),
            if p.watched { "  ◀" } else { "" }
        );
        Paragraph::new(text).render(Rect::new(inner.x, y, inner.width, 1), buf);
        y += 1;
    }
}

fn compact_line(g: &GpuSample, words: &Words) -> String {
    format!(
        "{} {} {} {}% {} {:.0}% {} {}",
        g.index,
        g.name
            .trim_start_matches("NVIDIA ")
            .trim_start_matches("GeForce "),
        words.util,
        opt(g.util_gpu),
        words.memory,
        100.0 * g.mem_share().unwrap_or(0.0),
        g.power_w.map_or("–".into(), |p| format!("{p:.0}W")),
        g.temp_c.map_or("–".into(), |t| format!("{t}°C")),
    )
}

#[cfg(test)]
mod tests;
