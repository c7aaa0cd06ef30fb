//! The watched command's CPU use, from `/proc`: the command and every process it started
//! (DataLoader workers are processes), their CPU time per wall second, and the names of the
//! processes NVML says hold a GPU. Linux only; elsewhere the command's CPU is simply not shown.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::sample::CommandSample;

/// Clock ticks per second of `/proc/PID/stat`'s times: `USER_HZ`, which the kernel fixes at 100
/// in its user ABI on every architecture cudaup runs on (x86_64, aarch64), whatever `HZ` it was
/// built with.
const USER_HZ: f64 = 100.0;

/// The most a `/proc/PID/stat` line holds (the kernel's is well under 1 KiB).
const MAX_STAT: u64 = 4096;

/// What one `/proc/PID/stat` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// The pid.
    pub pid: u32,
    /// The parent's pid.
    pub ppid: u32,
    /// User plus system time, in ticks.
    pub ticks: u64,
    /// Threads.
    pub threads: u32,
}

/// Parses a `/proc/PID/stat` line. The name (field 2) is in parentheses and may itself hold
/// spaces and parentheses, so the fields are counted from the last `)`.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let (head, rest) = line.rsplit_once(')')?;
    let pid = head.split_once('(')?.0.trim().parse().ok()?;
    // After the name: state(3) ppid(4) ... utime(14) stime(15) ... num_threads(20).
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).copied();
    Some(Stat {
        pid,
        ppid: field(4)?.parse().ok()?,
        ticks: field(14)?.parse::<u64>().ok()? + field(15)?.parse::<u64>().ok()?,
        threads: field(20)?.parse().ok()?,
    })
}

/// Follows a process tree's CPU time between samples.
#[derive(Debug)]
pub struct TreeCpu {
    proc_dir: PathBuf,
    root: u32,
    cores: u32,
    last: Option<(Instant, BTreeMap<u32, u64>)>,
    current: BTreeSet<u32>,
}

impl TreeCpu {
    /// Follows `root`'s tree through `proc_dir` (`/proc`; a test hands another).
    pub fn new(proc_dir: &Path, root: u32) -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
            .unwrap_or(1);
        Self {
            proc_dir: proc_dir.to_owned(),
            root,
            cores,
            last: None,
            current: BTreeSet::new(),
        }
    }

    /// The pids of the tree now (the root and its descendants).
    pub fn pids(&self) -> BTreeSet<u32> {
        tree(&self.all(), self.root)
    }

    /// The pids of the tree at the last [`Self::sample`].
    pub fn current(&self) -> &BTreeSet<u32> {
        &self.current
    }

    fn all(&self) -> Vec<Stat> {
        let Ok(entries) = fs_err::read_dir(&self.proc_dir) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| {
                let path = self.proc_dir.join(pid.to_string()).join("stat");
                let text = crate::world::fs::read_regular_text(&path, MAX_STAT).ok()?;
                parse_stat(&text)
            })
            .collect()
    }

    /// CPU use since the last call (the first call reports the time since each process began,
    /// over the time since this follower was made), and the tree's size now.
    pub fn sample(&mut self) -> CommandSample {
        self.sample_at(Instant::now())
    }

    fn sample_at(&mut self, now: Instant) -> CommandSample {
        let all = self.all();
        let pids = tree(&all, self.root);
        let ticks: BTreeMap<u32, u64> = all
            .iter()
            .filter(|s| pids.contains(&s.pid))
            .map(|s| (s.pid, s.ticks))
            .collect();
        let cpu_cores = match &self.last {
            Some((then, before)) => {
                let wall = now.duration_since(*then).as_secs_f64();
                // A process that appeared since counts from zero; one that ended is lost (its
                // time went to its parent only when reaped, which is the parent's business).
                let used: u64 = ticks
                    .iter()
                    .map(|(pid, t)| t.saturating_sub(before.get(pid).copied().unwrap_or(0)))
                    .sum();
                if wall > 0.0 {
                    used as f64 / USER_HZ / wall
                } else {
                    0.0
                }
            }
            None => 0.0,
        };
        self.last = Some((now, ticks));
        let processes = u32::try_from(pids.len()).unwrap_or(u32::MAX);
        let threads = all
            .iter()
            .filter(|s| pids.contains(&s.pid))
            .map(|s| s.threads)
            .sum();
        self.current = pids;
        CommandSample {
            pid: self.root,
            cpu_cores,
            processes,
            threads,
            cores_available: self.cores,
        }
    }
}

/// `root` and every process descending from it.
fn tree(all: &[Stat], root: u32) -> BTreeSet<u32> {
    let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for s in all {
        children.entry(s.ppid).or_default().push(s.pid);
    }
    let mut out = BTreeSet::new();
    let mut todo = vec![root];
    while let Some(pid) = todo.pop() {
        // A pid seen twice (a reused pid racing the scan) would loop; the set stops it.
        if out.insert(pid) {
            todo.extend(children.get(&pid).into_iter().flatten().copied());
        }
    }
    out
}

/// The name of process `pid` (`/proc/PID/comm`), where it can be read.
pub fn name(proc_dir: &Path, pid: u32) -> Option<String> {
    let path = proc_dir.join(pid.to_string()).join("comm");
    crate::world::fs::read_regular_text(&path, 256)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let line = "4242 (python (train) 2) S 4000 4242 4000 0 -1 4194560 1 0 0 0 250 50 0 0 20 0 12 0 1 1 1\n";
        let s = parse_stat(line).unwrap();
        assert_eq!(
            s,
            Stat {
                pid: 4242,
                ppid: 4000,
                ticks: 300,
                threads: 12
            }
        );
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S"), None);
    }

    fn write_stat(dir: &Path, pid: u32, ppid: u32, ticks: u64) {
        let d = dir.join(pid.to_string());
        fs_err::create_dir_all(&d).unwrap();
        fs_err::write(
            d.join("stat"),
            format!("{pid} (w) S {ppid} 0 0 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0 1 1 1\n"),
        )
        .unwrap();
    }

    #[test]
    fn the_tree_is_the_root_and_its_descendants_only() {
        let dir = tempfile::tempdir().unwrap();
        write_stat(dir.path(), 10, 1, 0);
        write_stat(dir.path(), 11, 10, 0);
        write_stat(dir.path(), 12, 11, 0);
        write_stat(dir.path(), 20, 1, 0);
        // Not a process: ignored.
        fs_err::create_dir_all(dir.path().join("self")).unwrap();
        let t = TreeCpu::new(dir.path(), 10);
        assert_eq!(t.pids().into_iter().collect::<Vec<_>>(), [10, 11, 12]);
    }

    #[test]
    fn cpu_is_ticks_per_wall_second_over_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        write_stat(dir.path(), 10, 1, 100);
        write_stat(dir.path(), 11, 10, 0);
        write_stat(dir.path(), 30, 1, 5000);
        let mut t = TreeCpu::new(dir.path(), 10);
        let start = Instant::now();
        let first = t.sample_at(start);
        assert_eq!((first.cpu_cores, first.processes), (0.0, 2));
        // 40 ticks = 0.4 CPU seconds in 0.2 s: two cores; the outsider's time is not counted.
        write_stat(dir.path(), 10, 1, 120);
        write_stat(dir.path(), 11, 10, 20);
        write_stat(dir.path(), 30, 1, 9000);
        let second = t.sample_at(start + std::time::Duration::from_millis(200));
        assert!(
            (second.cpu_cores - 2.0).abs() < 1e-9,
            "{}",
            second.cpu_cores
        );
    }
}
