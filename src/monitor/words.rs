//! What `monitor` says, in English and Chinese: the live view's labels and each verdict's
//! evidence and advice. The numbers are the same in both; only the sentences around them change.
//! The command line picks the language (`--lang`, or the locale) and hands the words down.

use super::summary::{Kind, Severity};

/// The numbers a verdict's sentences are made from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// The GPU.
    pub gpu: u32,
    /// Length of the judged part of the run, seconds.
    pub seconds: f64,
    /// Mean utilisation, percent.
    pub util_mean: f64,
    /// The command's mean CPU use, cores.
    pub cpu_cores: f64,
    /// The machine's cores.
    pub cores: u32,
    /// Most processes the command's tree had.
    pub processes: u32,
    /// Whether the command used nearly every core.
    pub saturated: bool,
    /// The stream has no CPU figures (no command was watched).
    pub no_cpu_data: bool,
    /// Peak memory, MiB.
    pub peak_mib: u64,
    /// The board's memory, MiB.
    pub total_mib: u64,
    /// The share of samples a reason or shortfall was seen in.
    pub share: f64,
    /// The power limit, W.
    pub limit_w: f64,
    /// The default power limit, W.
    pub default_w: f64,
    /// Mean power, W.
    pub power_mean_w: f64,
    /// Hottest, °C.
    pub temp_max: u32,
    /// The link: gen, width, best gen, best width.
    pub link: (u32, u32, u32, u32),
    /// Other processes: pid, name, MiB.
    pub others: Vec<(u32, String, Option<u64>)>,
    /// Whether a command was watched (another process then competes with it).
    pub during_command: bool,
    /// New uncorrected ECC errors.
    pub ecc: u64,
    /// Xid codes.
    pub xid: Vec<u64>,
}

impl Facts {
    /// DataLoader workers to suggest: up to 8, and never more than the cores leave.
    pub fn workers(&self) -> u32 {
        self.cores.saturating_sub(1).clamp(1, 8)
    }

    fn mem_pct(&self) -> f64 {
        if self.total_mib == 0 {
            0.0
        } else {
            100.0 * self.peak_mib as f64 / self.total_mib as f64
        }
    }

    fn others_list(&self) -> String {
        self.others
            .iter()
            .map(|(pid, name, mib)| match mib {
                Some(m) => format!("{pid} {name} {m} MiB"),
                None => format!("{pid} {name}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One language's words.
pub struct Words {
    /// The language's code (`en`, `zh`).
    pub code: &'static str,
    /// The live view's title: GPU count and interval.
    pub title: fn(usize, f64) -> String,
    /// The key help in the title bar.
    pub keys: &'static str,
    /// Labels of the live view.
    pub util: &'static str,
    /// Labels of the live view.
    pub memory: &'static str,
    /// Labels of the live view.
    pub power: &'static str,
    /// Labels of the live view.
    pub temperature: &'static str,
    /// Labels of the live view.
    pub clocks: &'static str,
    /// Labels of the live view.
    pub throttle: &'static str,
    /// Labels of the live view.
    pub none: &'static str,
    /// Labels of the live view.
    pub processes: &'static str,
    /// Labels of the live view.
    pub no_processes: &'static str,
    /// The live view: GPUs that do not fit the terminal.
    pub hidden: fn(usize) -> String,
    /// Labels of the live view: the watched command's CPU line.
    pub command_cpu: fn(f64, u32, u32) -> String,
    /// The summary's heading, with the run's length and sample count.
    pub summary: fn(f64, u32) -> String,
    /// The verdict heading.
    pub verdict: &'static str,
    /// The label before advice.
    pub fix: &'static str,
    /// The summary's per-GPU line.
    pub gpu_line: fn(&super::summary::GpuSummary) -> String,
    /// The summary's command line.
    pub command_line: fn(&super::summary::CommandSummary) -> String,
    verdicts: fn(Kind, &Facts) -> (Severity, String, String),
}

impl Words {
    /// The severity, evidence and advice of `kind` over `facts`.
    pub fn verdict(&self, kind: Kind, facts: &Facts) -> (Severity, String, String) {
        (self.verdicts)(kind, facts)
    }

    /// The words of `code` (`zh`…), English for anything else.
    pub fn of(code: &str) -> &'static Words {
        if code.starts_with("zh") {
            &ZH
        } else {
            &EN
        }
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>, unit: &str) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{v}{unit}"))
}

fn opt_f(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{v:.0}{unit}"))
}

/// English.
pub static EN: Words = Words {
    code: "en",
    title: |n, s| format!("cudaup monitor — {n} GPU(s), every {s:.1} s"),
    keys: "q quits",
    util: "util",
    memory: "memory",
    power: "power",
    temperature: "temp",
    clocks: "SM clock",
    throttle: "held by",
    none: "nothing",
    processes: "processes",
    no_processes: "no process on this GPU",
    hidden: |n| format!("… {n} more GPU(s): make the terminal taller"),
    command_cpu: |c, p, n| format!("command: {c:.1} of {n} CPU cores, {p} process(es)"),
    summary: |s, n| format!("Summary: {s:.0} s, {n} samples"),
    verdict: "Verdict",
    fix: "fix",
    gpu_line: |g| {
        format!(
            "GPU {} {}: util mean {} max {}, memory peak {} of {}, power mean {} max {} (limit {}), temp max {}",
            g.index,
            g.name,
            opt_f(g.util_mean, "%"),
            opt(g.util_max, "%"),
            opt(g.mem_peak_mib, " MiB"),
            opt(g.mem_total_mib, " MiB"),
            opt_f(g.power_mean_w, " W"),
            opt_f(g.power_max_w, " W"),
            opt_f(g.power_limit_w, " W"),
            opt(g.temp_max_c, " °C"),
        )
    },
    command_line: |c| {
        format!(
            "command (pid {}): CPU mean {:.1} max {:.1} of {} cores, up to {} process(es){}",
            c.pid,
            c.cpu_cores_mean,
            c.cpu_cores_max,
            c.cores_available,
            c.processes_max,
            c.exit_code
                .map(|e| format!(", exit code {e}"))
                .unwrap_or_default()
        )
    },
    verdicts: en_verdict,
};

fn en_verdict(kind: Kind, f: &Facts) -> (Severity, String, String) {
    let g = f.gpu;
    match kind {
        Kind::InputBound => (
            Severity::Problem,
            format!(
                "input-bound: GPU {g} was busy {:.0}% of the time over {:.0} s while the command's {} process(es) kept {:.1} of {} CPU cores busy preparing data",
                f.util_mean, f.seconds, f.processes, f.cpu_cores, f.cores
            ),
            if f.saturated {
                "the CPUs are saturated: make each batch cheaper (lighter augmentation, pre-resized or pre-decoded data, decoding on the GPU with DALI or torchvision.io.decode_jpeg(device='cuda'))".to_owned()
            } else if f.processes <= 1 {
                format!(
                    "load data in parallel: DataLoader(num_workers={}, pin_memory=True, persistent_workers=True)",
                    f.workers()
                )
            } else {
                format!(
                    "more DataLoader workers (the tree had {} processes; try num_workers={}), prefetch_factor=4, pin_memory=True",
                    f.processes,
                    f.workers()
                )
            },
        ),
        Kind::GpuIdle => (
            Severity::Note,
            if f.no_cpu_data {
                format!(
                    "GPU {g} was busy only {:.0}% of the time over {:.0} s (no CPU figures without a watched command: run `cudaup monitor -- CMD` to see them)",
                    f.util_mean, f.seconds
                )
            } else {
                format!(
                    "GPU {g} was busy only {:.0}% of the time over {:.0} s, and the command used only {:.1} CPU cores: it waited on something else",
                    f.util_mean, f.seconds, f.cpu_cores
                )
            },
            "look for file or network reads, host-device synchronisation (.item(), .cpu(), print of a tensor) in the loop, or work too small to fill the GPU (a larger batch)".to_owned(),
        ),
        Kind::MemoryNearFull => (
            Severity::Problem,
            format!(
                "memory on GPU {g} peaked at {} of {} MiB ({:.0}%): one larger batch or a fragmented cache is an out-of-memory",
                f.peak_mib, f.total_mib, f.mem_pct()
            ),
            "a smaller batch with gradient accumulation, AMP (bf16), activation checkpointing; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation".to_owned(),
        ),
        Kind::PowerCapped => (
            Severity::Note,
            format!(
                "GPU {g} ran at its power limit ({:.0} W, mean {:.0} W) in {:.0}% of the samples: normal for a fully loaded GPU",
                f.limit_w, f.power_mean_w, 100.0 * f.share
            ),
            "nothing to fix; a faster run needs less work per step (AMP, channels_last) rather than more power".to_owned(),
        ),
        Kind::PowerLimitLowered => (
            Severity::Problem,
            format!(
                "GPU {g}'s power limit is {:.0} W, below its default {:.0} W, and held the clocks down in {:.0}% of the samples",
                f.limit_w, f.default_w, 100.0 * f.share
            ),
            format!("restore it: sudo nvidia-smi -i {g} -pl {:.0}", f.default_w),
        ),
        Kind::Thermal => (
            Severity::Problem,
            format!(
                "GPU {g} slowed down for heat in {:.0}% of the samples (up to {} °C)",
                100.0 * f.share, f.temp_max
            ),
            "airflow: clear the intake, check the fans (nvidia-smi -q -d TEMPERATURE,PERFORMANCE), the room's temperature".to_owned(),
        ),
        Kind::HwSlowdown => (
            Severity::Problem,
            format!(
                "GPU {g}'s hardware halved its clocks (slowdown or power brake) in {:.0}% of the samples",
                100.0 * f.share
            ),
            "the power supply or its cables cannot feed the card, or it overheats: check the PSU rating and the PCIe power connectors".to_owned(),
        ),
        Kind::PcieDegraded => (
            Severity::Problem,
            format!(
                "GPU {g}'s PCIe link ran at Gen{} x{} while busy ({:.0}% of busy samples); the card and slot can do Gen{} x{}",
                f.link.0, f.link.1, 100.0 * f.share, f.link.2, f.link.3
            ),
            "reseat the card or move it to a full x16 slot; check the BIOS's PCIe setting and any riser cable".to_owned(),
        ),
        Kind::OtherProcess => (
            if f.during_command { Severity::Problem } else { Severity::Note },
            format!("GPU {g} is shared: {}", f.others_list()),
            if f.during_command {
                "it competes for memory and compute: stop it, or give the command another GPU (CUDA_VISIBLE_DEVICES)".to_owned()
            } else {
                "processes on one GPU share its memory and time: give each its own GPU (CUDA_VISIBLE_DEVICES) where you can".to_owned()
            },
        ),
        Kind::Errors => (
            Severity::Problem,
            format!(
                "GPU {g} reported errors during the run: {} new uncorrected ECC error(s){}",
                f.ecc,
                if f.xid.is_empty() {
                    String::new()
                } else {
                    format!(", Xid {:?}", f.xid)
                }
            ),
            "see `cudaup doctor` and the kernel log (dmesg | grep -i xid); repeated uncorrected errors mean the board needs service".to_owned(),
        ),
        Kind::Busy => (
            Severity::Ok,
            format!(
                "GPU {g} was busy {:.0}% of the time over {:.0} s: nothing held it back, the GPU itself is the limit",
                f.util_mean, f.seconds
            ),
            "to go faster: AMP (bf16), channels_last, torch.compile, a larger batch".to_owned(),
        ),
        Kind::TooShort => (
            Severity::Note,
            "fewer than two samples: too short a run to judge".to_owned(),
            "run longer, or sample faster (--interval 0.2)".to_owned(),
        ),
    }
}

/// Chinese.
pub static ZH: Words = Words {
    code: "zh",
    title: |n, s| format!("cudaup monitor — {n} 块 GPU，每 {s:.1} 秒采样"),
    keys: "按 q 退出",
    util: "利用率",
    memory: "显存",
    power: "功耗",
    temperature: "温度",
    clocks: "SM 频率",
    throttle: "降频原因",
    none: "无",
    processes: "进程",
    no_processes: "此 GPU 上没有进程",
    hidden: |n| format!("… 还有 {n} 块 GPU：请把终端窗口拉高"),
    command_cpu: |c, p, n| format!("命令：占用 {c:.1} / {n} 个 CPU 核心，{p} 个进程"),
    summary: |s, n| format!("汇总：{s:.0} 秒，{n} 次采样"),
    verdict: "结论",
    fix: "建议",
    gpu_line: |g| {
        format!(
            "GPU {} {}：利用率 平均 {} 最高 {}，显存 峰值 {} / {}，功耗 平均 {} 最高 {}（上限 {}），温度 最高 {}",
            g.index,
            g.name,
            opt_f(g.util_mean, "%"),
            opt(g.util_max, "%"),
            opt(g.mem_peak_mib, " MiB"),
            opt(g.mem_total_mib, " MiB"),
            opt_f(g.power_mean_w, " W"),
            opt_f(g.power_max_w, " W"),
            opt_f(g.power_limit_w, " W"),
            opt(g.temp_max_c, " °C"),
        )
    },
    command_line: |c| {
        format!(
            "命令（pid {}）：CPU 平均 {:.1} 最高 {:.1} / {} 核，最多 {} 个进程{}",
            c.pid,
            c.cpu_cores_mean,
            c.cpu_cores_max,
            c.cores_available,
            c.processes_max,
            c.exit_code
                .map(|e| format!("，退出码 {e}"))
                .unwrap_or_default()
        )
    },
    verdicts: zh_verdict,
};

fn zh_verdict(kind: Kind, f: &Facts) -> (Severity, String, String) {
    let g = f.gpu;
    let (severity, _, _) = en_verdict(kind, f);
    let (evidence, advice) = match kind {
        Kind::InputBound => (
            format!(
                "数据输入瓶颈：{:.0} 秒内 GPU {g} 只有 {:.0}% 的时间在计算，而命令的 {} 个进程占用了 {:.1} / {} 个 CPU 核心准备数据",
                f.seconds, f.util_mean, f.processes, f.cpu_cores, f.cores
            ),
            if f.saturated {
                "CPU 已饱和：降低每个批次的开销（更轻的数据增强、预先缩放或解码的数据、用 DALI 或 torchvision.io.decode_jpeg(device='cuda') 在 GPU 上解码）".to_owned()
            } else if f.processes <= 1 {
                format!(
                    "并行加载数据：DataLoader(num_workers={}, pin_memory=True, persistent_workers=True)",
                    f.workers()
                )
            } else {
                format!(
                    "增加 DataLoader 工作进程（当前 {} 个进程；试试 num_workers={}），prefetch_factor=4，pin_memory=True",
                    f.processes,
                    f.workers()
                )
            },
        ),
        Kind::GpuIdle => (
            if f.no_cpu_data {
                format!(
                    "{:.0} 秒内 GPU {g} 只有 {:.0}% 的时间在计算（没有被监视的命令，因此没有 CPU 数据：用 `cudaup monitor -- 命令` 运行可看到命令的 CPU 占用）",
                    f.seconds, f.util_mean
                )
            } else {
                format!(
                    "{:.0} 秒内 GPU {g} 只有 {:.0}% 的时间在计算，命令也只用了 {:.1} 个 CPU 核心：它在等待别的东西",
                    f.seconds, f.util_mean, f.cpu_cores
                )
            },
            "检查循环中的文件或网络读取、主机与设备同步（.item()、.cpu()、打印张量），或工作量太小不足以占满 GPU（加大批次）".to_owned(),
        ),
        Kind::MemoryNearFull => (
            format!(
                "GPU {g} 显存峰值 {} / {} MiB（{:.0}%）：再大一点的批次或缓存碎片就会显存不足",
                f.peak_mib, f.total_mib, f.mem_pct()
            ),
            "减小批次并用梯度累积、AMP（bf16）、激活检查点；设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True 减少碎片".to_owned(),
        ),
        Kind::PowerCapped => (
            format!(
                "GPU {g} 在 {:.0}% 的采样中运行在功耗上限（{:.0} W，平均 {:.0} W）：满载 GPU 的正常现象",
                100.0 * f.share, f.limit_w, f.power_mean_w
            ),
            "无需修复；要更快应减少每步的计算量（AMP、channels_last），而不是提高功耗".to_owned(),
        ),
        Kind::PowerLimitLowered => (
            format!(
                "GPU {g} 的功耗上限为 {:.0} W，低于默认的 {:.0} W，在 {:.0}% 的采样中压低了频率",
                f.limit_w, f.default_w, 100.0 * f.share
            ),
            format!("恢复默认：sudo nvidia-smi -i {g} -pl {:.0}", f.default_w),
        ),
        Kind::Thermal => (
            format!(
                "GPU {g} 在 {:.0}% 的采样中因过热降频（最高 {} °C）",
                100.0 * f.share, f.temp_max
            ),
            "改善散热：清理进风口，检查风扇（nvidia-smi -q -d TEMPERATURE,PERFORMANCE）和机房温度".to_owned(),
        ),
        Kind::HwSlowdown => (
            format!(
                "GPU {g} 在 {:.0}% 的采样中被硬件降频（硬件减速或电源制动）",
                100.0 * f.share
            ),
            "电源或供电线无法满足显卡，或者过热：检查电源额定功率和 PCIe 供电接口".to_owned(),
        ),
        Kind::PcieDegraded => (
            format!(
                "GPU {g} 忙碌时 PCIe 链路运行在 Gen{} x{}（占忙碌采样的 {:.0}%）；显卡和插槽支持 Gen{} x{}",
                f.link.0, f.link.1, 100.0 * f.share, f.link.2, f.link.3
            ),
            "重新插好显卡或换到完整的 x16 插槽；检查 BIOS 的 PCIe 设置和转接线".to_owned(),
        ),
        Kind::OtherProcess => (
            format!("GPU {g} 被共享：{}", f.others_list()),
            if f.during_command {
                "它与命令争用显存和算力：停止它，或让命令使用另一块 GPU（CUDA_VISIBLE_DEVICES）".to_owned()
            } else {
                "同一 GPU 上的进程共享显存和计算时间：尽量让每个进程使用自己的 GPU（CUDA_VISIBLE_DEVICES）".to_owned()
            },
        ),
        Kind::Errors => (
            format!(
                "GPU {g} 在运行期间报告了错误：{} 个新的不可纠正 ECC 错误{}",
                f.ecc,
                if f.xid.is_empty() {
                    String::new()
                } else {
                    format!("，Xid {:?}", f.xid)
                }
            ),
            "运行 `cudaup doctor` 并查看内核日志（dmesg | grep -i xid）；反复出现不可纠正错误说明显卡需要维修".to_owned(),
        ),
        Kind::Busy => (
            format!(
                "{:.0} 秒内 GPU {g} 有 {:.0}% 的时间在计算：没有别的瓶颈，GPU 本身就是上限",
                f.seconds, f.util_mean
            ),
            "要更快：AMP（bf16）、channels_last、torch.compile、更大的批次".to_owned(),
        ),
        Kind::TooShort => (
            "采样少于两次：运行时间太短，无法判断".to_owned(),
            "运行更久，或提高采样频率（--interval 0.2）".to_owned(),
        ),
    };
    (severity, evidence, advice)
}
