//! The message table: every entry has both languages and the same holes, and lines are matched
//! whole, with their values carried over.

use super::*;

#[test]
fn every_entry_has_both_languages_and_its_values() {
    let file: File = toml::from_str(include_str!("../messages.toml")).unwrap();
    assert!(!file.message.is_empty());
    let mut seen = std::collections::HashSet::new();
    for e in &file.message {
        assert!(seen.insert(e.en.clone()), "twice: {}", e.en);
        let holes = e.en.matches("{}").count();
        assert!(!e.zh.trim().is_empty(), "no Chinese for {}", e.en);
        for i in 0..holes {
            assert!(
                e.zh.contains(&format!("{{{i}}}")),
                "{{{i}}} missing: {}",
                e.zh
            );
        }
        assert!(!e.zh.contains(&format!("{{{holes}}}")), "{}", e.zh);
        // The English sentence is not in the Chinese one.
        assert_ne!(e.en, e.zh);
    }
}

#[test]
fn a_line_is_matched_whole_with_its_values_and_indentation() {
    assert_eq!(
        translate(Lang::Zh, "the release that matches torch 2.15.0"),
        "与 torch 2.15.0 配套的版本"
    );
    assert_eq!(
        translate_line(Lang::Zh, "  - no NVIDIA GPU found"),
        "  - 没有找到 NVIDIA GPU"
    );
    // Not a sentence of the table: as it is.
    assert_eq!(
        translate(Lang::Zh, "the release that matches torchvision 0.29"),
        "the release that matches torchvision 0.29"
    );
    // Sentences joined by `; `, each translated; a table row's last cell.
    assert_eq!(
        translate(
            Lang::Zh,
            "the newest PyTorch with a Python in range; CPU build"
        ),
        "本机 Python 可用的最新 PyTorch；CPU 版本"
    );
    assert_eq!(
        translate_line(
            Lang::Zh,
            "  driver       skip     -      the cpu profile needs no GPU driver"
        ),
        "  driver       skip     -      cpu 配置不需要 GPU 驱动"
    );
    // After a Chinese label, the sentences it labels.
    assert_eq!(
        translate_line(Lang::Zh, "    修复： CUDA needs an NVIDIA GPU; `cudaup plan --profile cpu` sets up CPU-only frameworks"),
        "    修复： CUDA 需要 NVIDIA GPU；`cudaup plan --profile cpu` 可以安装只用 CPU 的框架"
    );
    // English runs are untouched; JSON too.
    assert_eq!(
        translate(Lang::En, "no NVIDIA GPU found"),
        "no NVIDIA GPU found"
    );
    assert_eq!(
        translate_line(Lang::Zh, r#"  "reason": "no NVIDIA GPU found","#),
        r#"  "reason": "no NVIDIA GPU found","#
    );
    let mut out = Vec::new();
    {
        let mut w = Translating::new(&mut out, Lang::Zh);
        write!(w, "no NVIDIA GPU found\nprompt? ").unwrap();
        w.flush().unwrap();
    }
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "没有找到 NVIDIA GPU\nprompt? "
    );
}

#[test]
fn a_value_that_is_a_sentence_of_the_table_is_said_too() {
    assert_eq!(
        translate(
            Lang::Zh,
            "NVRTC and the driver API not run: the test program did not build (see `libraries`)"
        ),
        "NVRTC 和驱动 API 未运行：测试程序没有构建出来（见 `libraries`）"
    );
    assert_eq!(
        translate_line(
            Lang::Zh,
            "    fix:      install the open flavour of the same branch (Ubuntu: nvidia-driver-<branch>-open; dnf: nvidia-open), then reboot; `cudaup plan` names the package"
        ),
        "    fix:      安装同一分支的开源版本（Ubuntu：nvidia-driver-<branch>-open；dnf：nvidia-open），然后重启；`cudaup plan` 会给出软件包名"
    );
}

#[test]
fn an_error_of_several_lines_is_said_line_by_line_and_verify_passes_too() {
    assert_eq!(
        translate_line(
            Lang::Zh,
            "error: no route can serve torch 2.15.0 (cpu) for Python 3.11 on linux x86_64:"
        ),
        "错误：没有下载途径能提供 torch 2.15.0 (cpu)（Python 3.11，linux x86_64）："
    );
    assert_eq!(
        translate_line(
            Lang::Zh,
            "✓ addkernel:0       built with /t/bin/nvcc -arch=sm_90 in 1.2 s"
        ),
        "✓ addkernel:0       用 /t/bin/nvcc -arch=sm_90 构建，用时 1.2 秒"
    );
    assert_eq!(
        translate_line(Lang::Zh, "✓ framework          torch 2.11.0+cu130 (CUDA 13.0) sees all 2 GPU(s) and computes correctly on each"),
        "✓ framework          torch 2.11.0+cu130 (CUDA 13.0) 能看到全部 2 块 GPU，并在每块上计算正确"
    );
}

#[test]
fn a_value_never_cuts_a_parenthesised_aside() {
    assert_eq!(
        translate(
            Lang::Zh,
            "PyTorch's index http://h/whl (not usable: it did not answer just now (see Download sites)), then PyPI /p (x)"
        ),
        "PyTorch 索引 http://h/whl（不可用：刚才询问时没有应答（见“下载站点”）），然后 PyPI /p（x）"
    );
    assert_eq!(
        translate(
            Lang::Zh,
            "PyTorch's index http://h/whl: http://h/whl/cpu/torch/: connection refused (nothing is listening there)"
        ),
        "PyTorch 索引 http://h/whl：http://h/whl/cpu/torch/：连接被拒绝（那里没有服务在监听）"
    );
}

/// The three lines a Chinese run of the wizard's `cuda-dev` on a machine where only PyPI
/// answers printed in English (the toolkit's source falling back to PyPI's wheels, the tool
/// that has no wheel, verify's route gap).
#[test]
fn the_wheel_routes_fallback_and_gaps_are_said() {
    assert_eq!(
        translate_line(
            Lang::Zh,
            "NVIDIA's redistributables did not answer (https://n/redistrib_13.5.0.json: connection refused (nothing is listening there) (failed after 1 attempts in 0.0s)); taking NVIDIA's CUDA 13.5.0 wheels from https://pypi.org/simple instead (--source redist insists on the archives)"
        ),
        "NVIDIA 再分发包没有应答（https://n/redistrib_13.5.0.json：连接被拒绝（那里没有服务在监听）（尝试 1 次后失败，用时 0.0s））；改用 https://pypi.org/simple 上 NVIDIA 的 CUDA 13.5.0 wheels（--source redist 则只用再分发包）"
    );
    assert_eq!(
        translate_line(
            Lang::Zh,
            "  left out: nvprune: NVIDIA publishes no wheel of it (use --source redist)"
        ),
        "  未包含：nvprune：NVIDIA 没有发布它的 wheel（请用 --source redist）"
    );
    assert_eq!(
        translate_line(
            Lang::Zh,
            "- cu++filt           this route (PyPI wheels) has no cu++filt for CUDA 13.5: the cuxxfilt wheel has no bin/cu++filt binary; the redist route does (`cudaup install --source redist`)"
        ),
        "- cu++filt           这种安装途径（PyPI 的 wheels）没有 CUDA 13.5 的 cu++filt：cuxxfilt wheel 里没有 bin/cu++filt 可执行文件；再分发包途径有（`cudaup install --source redist`）"
    );
}

/// The framework step's report and the route it did not take, as a Chinese run of the wizard's
/// `cpu` in a terminal printed them in English.
#[test]
fn the_framework_steps_report_is_said() {
    for (en, zh) in [
        (
            "installed torch 2.15.0 (cpu) in /h/venvs/cpu",
            "已安装 torch 2.15.0 (cpu) 到 /h/venvs/cpu",
        ),
        ("  log: /h/logs/install-1.log", "  日志：/h/logs/install-1.log"),
        (
            "  torch 2.15.0+cu132 (CUDA 13.2) as planned, by its torch/version.py; its files as its RECORD lists; its native libraries and the CUDA libraries they need load here (importing it and computing on the GPU: `cudaup verify`)",
            "  torch 2.15.0+cu132（CUDA 13.2）与计划一致（依据其 torch/version.py）；其文件与其 RECORD 所列一致；其原生库及其所需的 CUDA 库在本机可以加载（导入它并在 GPU 上计算：`cudaup verify`）",
        ),
        (
            "  TensorFlow 2.20.0 (built for CUDA 12.5.1) as planned, by its metadata and build_info.py; its files as its RECORD lists; its framework library loads here (importing it and seeing the GPUs: `cudaup verify`)",
            "  TensorFlow 2.20.0（为 CUDA 12.5.1 构建）与计划一致（依据其元数据和 build_info.py）；其文件与其 RECORD 所列一致；其框架库在本机可以加载（导入它并看到 GPU：`cudaup verify`）",
        ),
        (
            "  JAX 0.12.0.1 with jax-cuda13-plugin as planned, by their metadata; their files as their RECORDs list; its CUDA plugin loads here (no GPU on this machine: `cudaup verify` on a GPU machine runs its GPU check)",
            "  JAX 0.12.0.1 与 jax-cuda13-plugin 与计划一致（依据其元数据）；其文件与其 RECORD 所列一致；其 CUDA 插件在本机可以加载（本机没有 GPU：在有 GPU 的机器上运行 `cudaup verify` 会做 GPU 检查）",
        ),
        (
            "  use it:  . \"/h/venvs/cpu/bin/activate\"",
            "  使用方法：  . \"/h/venvs/cpu/bin/activate\"",
        ),
        (
            "installer: pip (CUDAUP_NO_UV=1)",
            "安装工具：pip（CUDAUP_NO_UV=1）",
        ),
        (
            "installer: uv 0.9.5 (cudaup's copy in /h/tools)",
            "安装工具：uv 0.9.5（cudaup 自己的副本，位于 /h/tools）",
        ),
        (
            "  not PyTorch's index https://h:1/whl: https://h:1/whl/cpu/torch/: connection refused (nothing is listening there)",
            "  没有使用 PyTorch 索引 https://h:1/whl：https://h:1/whl/cpu/torch/：连接被拒绝（那里没有服务在监听）",
        ),
    ] {
        assert_eq!(translate_line(Lang::Zh, en), zh);
    }
}

/// The wizard's container note on a host whose driver is loaded without device nodes (CI's
/// GPU-host run, in Chinese), and the note where no driver is loaded.
#[test]
fn the_container_notes_of_a_driver_without_nodes_are_said() {
    assert_eq!(
        translate_line(
            Lang::Zh,
            "the driver 510.47.03 is loaded but /dev has no nvidia<N> device nodes: run `nvidia-smi` once as root (it creates them) or install nvidia-modprobe"
        ),
        "驱动 510.47.03 已加载，但 /dev 下没有 nvidia<N> 设备节点：以 root 身份运行一次 `nvidia-smi`（它会创建这些节点），或安装 nvidia-modprobe"
    );
    assert_eq!(
        translate_line(
            Lang::Zh,
            "no NVIDIA driver is loaded under / (no /proc/driver/nvidia/version and no /dev/nvidiactl): load the driver (or reboot after installing it) before generating a CDI spec"
        ),
        "/ 下没有已加载的 NVIDIA 驱动（没有 /proc/driver/nvidia/version，也没有 /dev/nvidiactl）：先加载驱动（或装好后重启），再生成 CDI spec"
    );
}

#[test]
fn verify_on_windows_without_cl_is_said() {
    for c in crate::verify::host_compiler::missing(true, &[])
        .expect("no PATH: no cl.exe")
        .evidence
        .iter()
        .chain([
            &crate::verify::host_compiler::SKIPPED.to_owned(),
            &crate::verify::host_compiler::LINUX_ONLY.to_owned(),
        ])
    {
        let zh = translate_line(Lang::Zh, c);
        assert_ne!(&zh, c, "untranslated: {c}");
        assert!(
            zh.contains("cl.exe") || zh.contains("C++") || zh.contains("Windows"),
            "{zh}"
        );
    }
    assert_eq!(
        translate_line(Lang::Zh, r"C:\cuda has no bin\nvcc.exe"),
        r"C:\cuda 中没有 bin\nvcc.exe"
    );
}

/// Every line doctor's WSL2 check can print (`src/doctor/wsl.rs`) is said in Chinese, including
/// the evidence of stray libraries and kernel modules that the zh command test's machine lacks.
#[test]
fn the_wsl_driver_checks_lines_are_said() {
    for (en, zh) in [
        (
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1 (libcuda 550.54.14) is outside /usr/lib/wsl/lib",
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1（libcuda 550.54.14）不在 /usr/lib/wsl/lib 中",
        ),
        (
            "/lib/modules/6.6.87.2-microsoft-standard-WSL2/updates/dkms/nvidia.ko: an NVIDIA kernel module of a Linux driver",
            "/lib/modules/6.6.87.2-microsoft-standard-WSL2/updates/dkms/nvidia.ko：Linux 驱动的 NVIDIA 内核模块",
        ),
        (
            "/proc/driver/nvidia/version exists: a Linux kernel module is loaded",
            "/proc/driver/nvidia/version 存在：已加载 Linux 内核模块",
        ),
        (
            "(files no package owns came from NVIDIA's .run installer: sudo nvidia-uninstall)",
            "（不属于任何软件包的文件来自 NVIDIA 的 .run 安装程序：sudo nvidia-uninstall）",
        ),
    ] {
        assert_eq!(translate_line(Lang::Zh, en), zh);
    }
}
