//! Recordings: the `--json` stream (one [`Record`] a line), the `--csv` table (one row per GPU
//! per sample, for a spreadsheet), and the reader `--replay` uses. A recording may come from
//! another machine (a fleet host's last night), so the reader treats it as outside input: a
//! regular file only, a cap on its size and on each line, a line that is not a record named by
//! its number, a newer schema refused by name.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::sample::{Record, Sample, SCHEMA_VERSION};
use super::summary::Summary;
use super::MonitorError;

/// The most a recording may hold: a day at one sample a second of eight GPUs is about 300 MiB.
pub const MAX_RECORDING: u64 = 1 << 30;
/// The most one line may hold (a sample of 8 GPUs with their processes is a few KiB).
pub const MAX_LINE: usize = 1 << 20;

/// A recording read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recording {
    /// The samples, in the order written.
    pub samples: Vec<Sample>,
    /// The summary the live run ended with, when it got that far.
    pub summary: Option<Summary>,
}

/// Reads the recording at `path`.
pub fn read(path: &Path) -> Result<Recording, MonitorError> {
    let bad = |message: String| MonitorError::Replay {
        path: path.to_owned(),
        message,
    };
    let file = crate::world::fs::open_regular(path).map_err(|e| bad(e.to_string()))?;
    let mut reader = BufReader::new(file.take(MAX_RECORDING + 1));
    let mut out = Recording::default();
    let mut line = Vec::new();
    let mut read_total: u64 = 0;
    for number in 1.. {
        line.clear();
        let n = read_line(&mut reader, &mut line).map_err(|e| bad(e.to_string()))?;
        if n == 0 {
            break;
        }
        read_total += n as u64;
        if read_total > MAX_RECORDING {
            return Err(bad(format!(
                "longer than {} MiB: not a recording of `cudaup monitor --json`",
                MAX_RECORDING >> 20
            )));
        }
        if line.len() > MAX_LINE {
            return Err(bad(format!(
                "line {number} is longer than {} KiB: not a monitor record",
                MAX_LINE >> 10
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let record: Record = serde_json::from_str(text).map_err(|e| {
            // A newer writer's record: say so, rather than which field did not fit.
            let version = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("schema_version")?.as_u64());
            match version {
                Some(v) if v > u64::from(SCHEMA_VERSION) => format!(
                    "line {number}: schema_version {v} is newer than this cudaup reads ({SCHEMA_VERSION}): update cudaup"
                ),
                _ => format!("line {number}: not a monitor record ({e})"),
            }
        })
        .map_err(bad)?;
        match record {
            Record::Sample(s) if s.schema_version > SCHEMA_VERSION => {
                return Err(bad(format!(
                    "line {number}: schema_version {} is newer than this cudaup reads ({SCHEMA_VERSION}): update cudaup",
                    s.schema_version
                )));
            }
            Record::Sample(s) => out.samples.push(s),
            Record::Summary(s) => out.summary = Some(s),
        }
    }
    if out.samples.is_empty() {
        return Err(bad("no samples in it".into()));
    }
    Ok(out)
}

/// Reads one line into `buf`, stopping one byte past [`MAX_LINE`] so an endless line cannot
/// take the memory (the caller refuses it then).
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(total);
        }
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let take = chunk.len();
        let room = (MAX_LINE + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        reader.consume(take);
        total += take;
        if done || buf.len() > MAX_LINE {
            return Ok(total);
        }
    }
}

/// Writes one record as a line of JSON.
pub fn write_json(out: &mut dyn Write, record: &Record) -> std::io::Result<()> {
    let line = serde_json::to_string(record).map_err(std::io::Error::other)?;
    writeln!(out, "{line}")?;
    out.flush()
}

/// The CSV columns, in order.
pub const CSV_HEADER: &str = "t_s,gpu,util_gpu,util_mem,mem_used_mib,mem_total_mib,power_w,power_limit_w,temp_c,sm_clock_mhz,throttle,pcie_gen,pcie_width,command_cpu_cores";

/// The CSV rows of one sample (one per GPU).
pub fn csv_rows(sample: &Sample) -> Vec<String> {
    fn cell<T: std::fmt::Display>(v: Option<T>) -> String {
        v.map(|v| v.to_string()).unwrap_or_default()
    }
    sample
        .gpus
        .iter()
        .map(|g| {
            [
                format!("{:.3}", sample.t_ms as f64 / 1000.0),
                g.index.to_string(),
                cell(g.util_gpu),
                cell(g.util_mem),
                cell(g.mem_used_mib),
                cell(g.mem_total_mib),
                cell(g.power_w.map(|w| format!("{w:.1}"))),
                cell(g.power_limit_w.map(|w| format!("{w:.1}"))),
                cell(g.temp_c),
                cell(g.sm_clock_mhz),
                // Names are [a-z-]: joined with `|`, never a comma or a quote.
                g.throttle
                    .as_deref()
                    .map(|t| t.join("|"))
                    .unwrap_or_default(),
                cell(g.pcie.as_ref().and_then(|p| p.gen)),
                cell(g.pcie.as_ref().and_then(|p| p.width)),
                cell(
                    sample
                        .command
                        .as_ref()
                        .map(|c| format!("{:.2}", c.cpu_cores)),
                ),
            ]
            .join(",")
        })
        .collect()
}

/// A CSV file being written as the samples come.
pub struct CsvFile {
    path: PathBuf,
    file: std::io::BufWriter<fs_err::File>,
}

impl CsvFile {
    /// Creates `path` (replacing it) with the header.
    pub fn create(path: &Path) -> Result<Self, MonitorError> {
        let write = |source| MonitorError::Write {
            path: path.to_owned(),
            source,
        };
        let file = fs_err::File::create(path).map_err(write)?;
        let mut file = std::io::BufWriter::new(file);
        writeln!(file, "{CSV_HEADER}").map_err(write)?;
        Ok(Self {
            path: path.to_owned(),
            file,
        })
    }

    /// Appends the rows of `sample`.
    pub fn push(&mut self, sample: &Sample) -> Result<(), MonitorError> {
        for row in csv_rows(sample) {
            writeln!(self.file, "{row}").map_err(|source| MonitorError::Write {
                path: self.path.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// Flushes what is written.
    pub fn finish(mut self) -> Result<(), MonitorError> {
        self.file.flush().map_err(|source| MonitorError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::sample::GpuSample;

    fn sample(t_ms: u64, util: u32) -> Sample {
        Sample {
            schema_version: SCHEMA_VERSION,
            t_ms,
            gpus: vec![GpuSample {
                index: 0,
                name: "NVIDIA H200".into(),
                util_gpu: Some(util),
                throttle: Some(vec!["sw-power-cap".into(), "hw-thermal".into()]),
                ..GpuSample::default()
            }],
            ..Sample::default()
        }
    }

    #[test]
    fn a_stream_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.jsonl");
        let mut bytes = Vec::new();
        for s in [sample(0, 10), sample(1000, 90)] {
            write_json(&mut bytes, &Record::Sample(s)).unwrap();
        }
        bytes.extend_from_slice(b"\n");
        fs_err::write(&path, &bytes).unwrap();
        let r = read(&path).unwrap();
        assert_eq!(r.samples, vec![sample(0, 10), sample(1000, 90)]);
        assert_eq!(r.summary, None);
    }

    #[cfg(unix)] // Linux's errors for a directory, a FIFO; Windows answers 'access denied'
    #[test]
    fn hostile_recordings_are_refused_by_line_without_reading_them_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.jsonl");
        let err = |bytes: &[u8]| {
            fs_err::write(&path, bytes).unwrap();
            read(&path).unwrap_err().to_string()
        };
        assert!(err(b"").contains("no samples"), "{}", err(b""));
        let e =
            err(b"{\"kind\":\"sample\",\"schema_version\":1,\"t_ms\":0,\"gpus\":[]}\nnot json\n");
        assert!(e.contains("line 2: not a monitor record"), "{e}");
        let e = err(b"{\"kind\":\"sample\",\"schema_version\":9,\"t_ms\":0,\"gpus\":[],\"new\":{\"x\":1}}\n");
        assert!(e.contains("schema_version 9 is newer"), "{e}");
        let long = vec![b'x'; MAX_LINE + 10];
        let e = err(&long);
        assert!(e.contains("line 1 is longer than"), "{e}");
        // Not a regular file: refused at once (a FIFO would block a plain open).
        let e = read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn csv_rows_keep_their_columns_with_missing_readings() {
        let mut s = sample(1500, 42);
        s.gpus.push(GpuSample {
            index: 1,
            ..GpuSample::default()
        });
        let rows = csv_rows(&s);
        assert_eq!(rows[0], "1.500,0,42,,,,,,,,sw-power-cap|hw-thermal,,,");
        assert_eq!(rows[1], "1.500,1,,,,,,,,,,,,");
        let columns = CSV_HEADER.split(',').count();
        assert!(rows.iter().all(|r| r.split(',').count() == columns));
    }
}
