//! The live view rendered into a test backend's buffer, as a terminal would show it: a snapshot
//! for a two-GPU stream, the narrow layout, colours only where allowed, Chinese labels.

use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::*;
use crate::monitor::record;
use crate::monitor::words::{EN, ZH};

fn history(name: &str) -> History {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/monitor")
        .join(format!("{name}.jsonl"));
    let mut h = History::new(600);
    for s in record::read(&path).unwrap().samples {
        h.push(s);
    }
    h
}

fn screen(h: &History, words: &Words, width: u16, height: u16, color: bool) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
    t.draw(|f| {
        let area = f.area();
        render(
            area,
            f.buffer_mut(),
            h,
            words,
            Look {
                color,
                interval_s: 0.5,
            },
        );
    })
    .unwrap();
    t.backend().buffer().clone()
}

fn text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut line = String::new();
        let mut x = 0;
        while x < area.width {
            let symbol = buf[(x, y)].symbol();
            line.push_str(symbol);
            // A wide character (CJK, full-width punctuation) takes two cells; the second holds
            // nothing of its own.
            let wide = symbol.chars().next().is_some_and(|c| {
                ('\u{2e80}'..='\u{9fff}').contains(&c) || ('\u{ff00}'..='\u{ffef}').contains(&c)
            });
            x += if wide { 2 } else { 1 };
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn two_gpus_match_the_snapshot() {
    let got = text(&screen(&history("two-processes"), &EN, 110, 22, false));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/monitor/view/two-gpus.snapshot.txt");
    // CUDAUP_UPDATE_SNAPSHOTS=1 rewrites the file after a deliberate change of the view.
    if std::env::var_os("CUDAUP_UPDATE_SNAPSHOTS").is_some() {
        fs_err::write(&path, &got).unwrap();
    }
    let want = fs_err::read_to_string(&path).unwrap();
    assert_eq!(got, want, "the view changed:\n{got}");
}

#[test]
fn the_view_shows_what_the_issue_asks_for() {
    let got = text(&screen(&history("two-processes"), &EN, 110, 22, false));
    for needle in [
        "GPU 0 · NVIDIA H200",
        "GPU 1 · NVIDIA H200",
        "util",
        "60.0/140.4 GiB",
        "power 500/700 W",
        "temp 55 °C",
        "SM clock 1980/1980 MHz",
        "PCIe Gen5 x16 (best Gen5 x16)",
        "NVLink 18 links",
        "3101 python",
        "40960 MiB",
        "no process on this GPU",
        "q quits",
    ] {
        assert!(got.contains(needle), "{needle:?} missing from:\n{got}");
    }
}

#[test]
fn no_color_means_no_colour_and_colour_means_some() {
    let plain = screen(&history("throttled"), &EN, 110, 16, false);
    assert!(plain
        .content
        .iter()
        .all(|c| c.fg == ratatui::style::Color::Reset));
    let coloured = screen(&history("throttled"), &EN, 110, 16, true);
    // The utilisation bar of a GPU at 99% is red; the reasons holding it are yellow.
    assert!(coloured
        .content
        .iter()
        .any(|c| c.fg == ratatui::style::Color::Red));
    assert!(coloured
        .content
        .iter()
        .any(|c| c.fg == ratatui::style::Color::Yellow));
    let t = text(&plain);
    assert!(
        t.contains("held by sw-power-cap, hw-thermal") || t.contains("held by sw-power-cap"),
        "{t}"
    );
}

#[test]
fn a_narrow_or_short_terminal_still_shows_every_gpu_or_says_how_many_are_hidden() {
    let narrow = text(&screen(&history("two-processes"), &EN, 50, 10, false));
    assert!(narrow.contains("0 H200 util 70% memory 43%"), "{narrow}");
    assert!(narrow.contains("1 H200 util 0%"), "{narrow}");
    let short = text(&screen(&history("two-processes"), &EN, 110, 12, false));
    assert!(short.contains("1 more GPU(s)"), "{short}");
    // Nothing at all to draw yet: an empty screen, no panic.
    let empty = text(&screen(&History::new(10), &EN, 40, 5, false));
    assert!(empty.trim().is_empty());
}

#[test]
fn chinese_labels() {
    let got = text(&screen(&history("input-bound"), &ZH, 110, 16, false));
    for needle in [
        "块 GPU",
        "利用率",
        "显存",
        "功耗",
        "按 q 退出",
        "命令：占用",
    ] {
        assert!(got.contains(needle), "{needle:?} missing from:\n{got}");
    }
}

#[test]
fn bars_fill_in_eighths_and_never_overflow() {
    assert_eq!(bar(0.0, 4), "    ");
    assert_eq!(bar(1.0, 4), "████");
    assert_eq!(bar(0.5, 4), "██  ");
    assert_eq!(bar(2.0, 3).chars().count(), 3);
    assert_eq!(bar(0.53, 4).chars().count(), 4);
}
