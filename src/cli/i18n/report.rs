//! The fixed words of the reports — `detect`, `plan`, `verify` and `doctor` (and the wizard,
//! which shows the same reports): headings, row labels, table headers and tallies. What the
//! library says (reasons, evidence, fixes) stays as it is written; versions, paths, ids and the
//! plan's actions (`install`, `keep`: the values `--json` carries) are the same in every
//! language.

/// One language's report words.
#[derive(Debug)]
pub struct Report {
    /// detect: the machine section.
    pub machine: &'static str,
    /// detect: row labels.
    pub os: &'static str,
    /// detect: row labels.
    pub kernel: &'static str,
    /// detect: row labels.
    pub secure_boot: &'static str,
    /// detect: row labels (Windows: `nvidia-smi.exe`, `nvml.dll`).
    pub driver_files: &'static str,
    /// detect: row label (Windows: whether `wsl.exe` is there).
    pub wsl: &'static str,
    /// detect: `wsl.exe` found, at this path.
    pub wsl_found: fn(&str) -> String,
    /// detect: no `wsl.exe` in System32.
    pub wsl_missing: &'static str,
    /// detect: the GPU section, with where the answer came from (`NVML`, `PCI scan`).
    pub gpus: fn(&str) -> String,
    /// detect: an empty list.
    pub none_found: &'static str,
    /// detect: the installed-software section.
    pub installed: &'static str,
    /// detect: row labels.
    pub driver: &'static str,
    /// detect: row labels.
    pub cuda_toolkit: &'static str,
    /// detect: the findings section.
    pub findings: &'static str,
    /// detect and doctor: no findings.
    pub nothing_wrong: &'static str,
    /// Severity words.
    pub error: &'static str,
    /// Severity words.
    pub warning: &'static str,
    /// Severity words.
    pub note: &'static str,
    /// The label before a fix.
    pub fix: &'static str,
    /// doctor: the label before evidence.
    pub evidence: &'static str,
    /// plan: the title, from the profile and the GPUs (or [`Report::this_machine`]).
    pub plan_for: fn(&str, &str) -> String,
    /// plan: the title when nothing fits.
    pub no_stack_for: fn(&str, &str) -> String,
    /// plan: a machine without NVIDIA GPUs.
    pub this_machine: &'static str,
    /// plan --system: the picture lists no Python, so this machine's are planned with.
    pub pythons_here: &'static str,
    /// plan: the table's columns.
    pub columns: [&'static str; 4],
    /// plan: the constraints block.
    pub constraints: &'static str,
    /// plan: the reasons of a plan.
    pub why: &'static str,
    /// plan: the reasons nothing fits.
    pub why_not: &'static str,
    /// plan: the warnings block.
    pub warnings: &'static str,
    /// plan -v: the rejected alternatives.
    pub rejected: &'static str,
    /// plan: how many alternatives were rejected.
    pub rejected_count: fn(usize) -> String,
    /// verify: the tally's parts.
    pub passed: fn(usize) -> String,
    /// verify: the tally's parts.
    pub failed: fn(usize) -> String,
    /// verify: the tally's parts.
    pub skipped: fn(usize) -> String,
    /// Between the parts of a tally.
    pub comma: &'static str,
    /// doctor: the heading.
    pub doctor: &'static str,
    /// doctor: the summary, from the counts of errors, warnings and notes.
    pub doctor_summary: fn(usize, usize, usize) -> String,
    /// doctor: a group of checks that did not run, and why.
    pub skipped_checks: fn(&str) -> String,
    /// detect: Secure Boot on, off, unknown.
    pub secure_boot_state: [&'static str; 3],
    /// detect: no driver.
    pub no_driver: &'static str,
    /// plan: the catalog line, from its origin, date and age in days.
    pub catalog: fn(&str, &str, i64) -> String,
    /// progress: a download starts.
    pub fetch: &'static str,
    /// progress: a free-standing message.
    pub progress_note: &'static str,
    /// progress: the overall bar.
    pub total: &'static str,
    /// progress: a task not started yet.
    pub queued: &'static str,
    /// progress: the phases (downloading, resuming, verifying, unpacking, installing).
    pub phases: [&'static str; 5],
    /// progress: how a task ended (done, cached, downloaded, stopped), in that order.
    pub outcomes: [&'static str; 4],
    /// progress: how long a task took (`in 1.2s`).
    pub took: fn(f64) -> String,
}

fn plural(k: usize, one: &str, many: &str) -> String {
    format!("{k} {}", if k == 1 { one } else { many })
}

/// English.
pub static EN: Report = Report {
    machine: "Machine",
    os: "OS",
    kernel: "Kernel",
    secure_boot: "Secure Boot",
    driver_files: "Driver files",
    wsl: "WSL",
    wsl_found: |exe| format!("available ({exe}: `wsl --install` sets up WSL2, where the Linux cudaup runs)"),
    wsl_missing: "no wsl.exe in System32",
    gpus: |source| format!("GPUs ({source})"),
    none_found: "none found",
    installed: "Installed",
    driver: "Driver",
    cuda_toolkit: "CUDA toolkit",
    findings: "Findings",
    nothing_wrong: "nothing looks wrong",
    error: "error",
    warning: "warning",
    note: "note",
    fix: "fix:",
    evidence: "evidence:",
    plan_for: |profile, target| format!("Plan ({profile} profile) for {target}"),
    no_stack_for: |profile, target| format!("No {profile} stack for {target}"),
    this_machine: "this machine",
    pythons_here: "The picture lists no Python: the python row is this machine's, the one `install --system` puts the framework into.",
    columns: ["component", "action", "version", "reason"],
    constraints: "Constraints (passed to pip as -c)",
    why: "Why",
    why_not: "Why not",
    warnings: "Warnings",
    rejected: "Rejected alternatives",
    rejected_count: |n| {
        let what = if n == 1 {
            "alternative was"
        } else {
            "alternatives were"
        };
        format!("{n} {what} rejected; -v lists them")
    },
    passed: |n| format!("{n} passed"),
    failed: |n| format!("{n} failed"),
    skipped: |n| format!("{n} skipped"),
    comma: ", ",
    doctor: "Doctor",
    doctor_summary: |e, w, n| {
        format!(
            "{}, {}, {}",
            plural(e, "error", "errors"),
            plural(w, "warning", "warnings"),
            plural(n, "note", "notes")
        )
    },
    skipped_checks: |s| format!("skipped: {s}"),
    secure_boot_state: [
        "on (kernel modules must be signed)",
        "off",
        "unknown (no EFI variables)",
    ],
    no_driver: "no NVIDIA driver loaded",
    catalog: |origin, date, age| format!("catalog: {origin}, {date} ({age} days old)"),
    fetch: "fetch",
    progress_note: "note",
    total: "total",
    queued: "queued",
    phases: [
        "downloading",
        "resuming",
        "verifying",
        "unpacking",
        "installing",
    ],
    outcomes: ["done", "cached", "downloaded", "stopped"],
    took: |secs| format!("in {secs:.1}s"),
};

/// Simplified Chinese.
pub static ZH: Report = Report {
    machine: "本机",
    os: "操作系统",
    kernel: "内核",
    secure_boot: "安全启动",
    driver_files: "驱动文件",
    wsl: "WSL",
    wsl_found: |exe| format!("可用（{exe}：`wsl --install` 可安装 WSL2，在其中运行 Linux 版 cudaup）"),
    wsl_missing: "System32 中没有 wsl.exe",
    gpus: |source| {
        format!(
            "GPU（{}）",
            super::messages::translate(super::Lang::Zh, source)
        )
    },
    none_found: "未找到",
    installed: "已安装",
    driver: "驱动",
    cuda_toolkit: "CUDA 工具包",
    findings: "发现的问题",
    nothing_wrong: "没有发现问题",
    error: "错误",
    warning: "警告",
    note: "提示",
    fix: "修复：",
    evidence: "依据：",
    plan_for: |profile, target| format!("为 {target} 制定的方案（{profile} 配置）"),
    no_stack_for: |profile, target| format!("没有适合 {target} 的 {profile} 方案"),
    this_machine: "本机",
    pythons_here: "该机器描述中没有 Python：python 一行是本机的 Python，即 `install --system` 安装框架时使用的解释器。",
    columns: ["组件", "操作", "版本", "原因"],
    constraints: "约束（以 -c 传给 pip）",
    why: "原因",
    why_not: "无法制定的原因",
    warnings: "警告",
    rejected: "未采用的备选",
    rejected_count: |n| format!("未采用 {n} 个备选；-v 列出它们"),
    passed: |n| format!("通过 {n} 项"),
    failed: |n| format!("失败 {n} 项"),
    skipped: |n| format!("跳过 {n} 项"),
    comma: "，",
    doctor: "诊断",
    doctor_summary: |e, w, n| format!("错误 {e} 个，警告 {w} 个，提示 {n} 个"),
    skipped_checks: |s| {
        format!(
            "未检查：{}",
            super::messages::translate(super::Lang::Zh, s)
        )
    },
    secure_boot_state: ["开启（内核模块必须签名）", "关闭", "未知（没有 EFI 变量）"],
    no_driver: "没有加载 NVIDIA 驱动",
    catalog: |origin, date, age| format!("兼容性目录：{origin}，{date}（{age} 天前）"),
    fetch: "下载",
    progress_note: "提示",
    total: "总计",
    queued: "排队中",
    phases: ["下载中", "续传中", "校验中", "解包中", "安装中"],
    outcomes: ["完成", "已缓存", "已下载", "已停止"],
    took: |secs| format!("用时 {secs:.1} 秒"),
};

impl Report {
    /// A phase's name (`downloading`).
    pub fn phase(&self, phase: crate::world::progress::Phase) -> &'static str {
        use crate::world::progress::Phase;
        self.phases[match phase {
            Phase::Downloading => 0,
            Phase::Resuming => 1,
            Phase::Verifying => 2,
            Phase::Unpacking => 3,
            Phase::Installing => 4,
        }]
    }

    /// A task's outcome as the library names it (`done`, `cached`…) in this language; others
    /// (`failed: …`, `mirrored`, in the library's own words) as the message table says them.
    pub fn outcome(&self, outcome: &str) -> String {
        match EN.outcomes.iter().position(|o| *o == outcome) {
            Some(i) => self.outcomes[i].to_owned(),
            None => self.say(outcome),
        }
    }

    /// One of the library's sentences (a progress note, a failure) in this language.
    pub fn say(&self, text: &str) -> String {
        let lang = if std::ptr::eq(self, &ZH) {
            super::Lang::Zh
        } else {
            super::Lang::En
        };
        super::messages::translate(lang, text)
    }
}

static PROGRESS_LANG: std::sync::OnceLock<super::Lang> = std::sync::OnceLock::new();

/// Sets, once at start, the language of the progress bars and lines: the reporters are made
/// where no [`crate::cli::Style`] is at hand.
pub fn set_progress_lang(lang: super::Lang) {
    let _ = PROGRESS_LANG.set(lang);
}

/// The language set at start (English until [`set_progress_lang`] says otherwise): what the
/// binary prints an error in.
pub fn progress_lang() -> super::Lang {
    PROGRESS_LANG.get().copied().unwrap_or(super::Lang::En)
}

/// The progress words (English until [`set_progress_lang`] says otherwise).
pub fn progress_words() -> &'static Report {
    PROGRESS_LANG
        .get()
        .copied()
        .unwrap_or(super::Lang::En)
        .report()
}

/// Columns of terminal cells `text` takes: CJK characters and full-width forms take two.
pub fn width(text: &str) -> usize {
    text.chars()
        .map(|c| if (c as u32) >= 0x2E80 { 2 } else { 1 })
        .sum()
}

/// `text` padded with spaces to `cells` terminal columns (a format width counts characters,
/// which misaligns Chinese).
pub fn pad(text: &str, cells: usize) -> String {
    format!("{text}{}", " ".repeat(cells.saturating_sub(width(text))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_is_padded_by_cells() {
        assert_eq!(pad("组件", 6), "组件  ");
        assert_eq!(pad("OS", 4), "OS  ");
        assert_eq!(width("CUDA 工具包"), 11);
    }
}
