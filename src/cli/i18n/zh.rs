//! 简体中文。

use super::Strings;

pub(super) static STRINGS: Strings = Strings {
    detecting: "正在检测这台机器……",
    found_heading: "cudaup 在这台机器上找到了这些：",
    profile_prompt: "要安装哪一套环境？",
    profile_lines: [
        "显卡驱动 + CUDA 工具包 + cuDNN + PyTorch；工具包与 PyTorch 的 CUDA 版本一致，可以编译 CUDA 扩展",
        "显卡驱动 + PyTorch；PyTorch 的 wheel 自带 CUDA 运行库",
        "显卡驱动 + TensorFlow（连同它的 CUDA 依赖包）",
        "显卡驱动 + CUDA 工具包 + cuDNN，用来自己编写、编译 CUDA 代码",
        "不用显卡的 PyTorch（Mac 上可用 Apple 的 MPS 加速）",
    ],
    preselect_gpu: "检测到 NVIDIA 显卡，推荐 `full`。",
    preselect_no_gpu: "没有检测到 NVIDIA 显卡，推荐 `cpu`（选 `cuda-dev` 也能装 CUDA 工具包，给别的机器编译代码）。",

    changes_heading: "磁盘上会有这些改动",
    label_toolkit: "CUDA 工具包",
    label_venv: "Python 虚拟环境",
    label_env: "环境变量脚本",
    label_rc: "Shell 启动文件",
    label_cache: "下载缓存",
    label_driver: "显卡驱动",
    toolkit_new: |p| format!("{p}（新建目录）"),
    toolkit_kept: |p| format!("保留现有的：{p}"),
    venv_new: |p| format!("{p}（新建）"),
    venv_reused: |p| format!("{p}（已存在，直接沿用）"),
    venv_problem: |why| format!("无法创建：{why}"),
    env_scripts: |p| {
        format!("{p}（以及 env.fish、env.ps1）：把工具包加入 PATH 和 LD_LIBRARY_PATH，并设置 CUDA_HOME")
    },
    rc_add: |file, line| format!("{file}：添加一行 {line}"),
    rc_already: |file| format!("{file}：已经配置过，不再改动"),
    rc_none: "不修改任何启动文件",
    cache: |p| format!("{p}（下载的安装包保存在这里，下次直接复用）"),
    driver_unchanged: "不改动",
    driver_change: |v| format!("安装 NVIDIA 驱动 {v}（执行前会先列出命令），装好后需要重启"),
    driver_manual: |v| format!("请在 Windows 上安装 NVIDIA 驱动 {v} 或更新版本（cudaup 不会动它）"),
    changes_footer: "除此之外不会改动任何东西；`cudaup uninstall` 可以把这些全部撤销。",

    action_prompt: "开始安装吗？",
    action_install: "安装",
    action_dry_run: "结束（演练模式：什么都不安装）",
    action_customise: "自定义（版本、目录、镜像源、Shell）",
    action_cancel: "取消",
    unsupported_note: "按这些选择找不到能用的组合（原因见上面的方案），请自定义或取消。",

    customise_heading: "自定义：直接回车保留当前值；版本号留空则由 cudaup 自动选择。",
    pin_cuda: "CUDA 版本（例如 12.8；留空自动选择）",
    pin_torch: "PyTorch 版本（例如 2.8；留空自动选择）",
    pin_tensorflow: "TensorFlow 版本（例如 2.20；留空自动选择）",
    pin_python: "Python 版本（例如 3.12；留空自动选择）",
    bad_version: |v| format!("“{v}”不是版本号，请填写类似 12.8 的数字"),
    prefix_prompt: "CUDA 工具包安装到",
    venv_prompt: "Python 虚拟环境（venv）所在目录",
    bad_path: "请填写完整路径（以 / 或 ~ 开头）",
    source_prompt: "CUDA 工具包从哪里下载？",
    source_nvidia: "NVIDIA 官方下载服务器（developer.download.nvidia.com）",
    source_mirror: "NVIDIA 下载目录的镜像（网址，或 `cudaup mirror create` 生成的本地目录）",
    source_wheels: "从 Python 软件包索引下载 NVIDIA 的 CUDA wheel（CUDA 13 及以上）",
    components_prompt: "安装 CUDA 工具包的哪些部分？",
    set_label: |name, _summary, size| {
        let what = match name {
            "minimal" => "编译器、运行时、CCCL、NVRTC 和 cuBLAS",
            "standard" => "完整的开发工具包：全部数学库、nvJitLink、NPP、nvJPEG、CUPTI、NVTX、NVML、compute-sanitizer 和二进制工具",
            "complete" => "standard 加上 cuda-gdb 以及 Nsight Compute / Nsight Systems 命令行工具",
            other => other,
        };
        format!("{name}：{what}（{size}）")
    },
    mirror_prompt: "镜像网址或目录",
    wheels_index_prompt: "NVIDIA CUDA wheel 的软件包索引",
    pypi_prompt: "框架及其依赖使用的 Python 软件包索引（PyPI 镜像源）",
    pypi_default: "pypi.org（不用镜像）",
    pypi_tuna: "清华大学 TUNA 镜像源：https://pypi.tuna.tsinghua.edu.cn/simple",
    pypi_aliyun: "阿里云镜像源：https://mirrors.aliyun.com/pypi/simple",
    torch_prompt: "PyTorch wheel 索引",
    torch_default: "download.pytorch.org（不用镜像）",
    other_location: "其他（自己输入网址或目录）",
    location_prompt: "网址或目录",
    bad_location: |why| format!("无法使用：{why}"),
    http_prompt: |url| format!("{url} 是明文 http，无法证明它提供的校验和是真的。仍然使用吗？"),
    http_dropped: "已去掉明文 http 的来源，改用默认来源。",
    shell_prompt: |shell, files| format!("在新开的 {shell} 终端里自动加载 cudaup 的环境吗（在 {files} 中加一行）？"),
    verify_prompt: "安装完成后用 `cudaup verify` 检查一遍吗？",

    saved: |p| {
        format!("已把你的选择保存到 {p}。想在其他机器上免提问地装成一样的环境：\n  cudaup install --config {p} --yes")
    },
    installing: "正在安装……",
    dry_run_done: "演练模式：没有安装或改动任何东西。",
    verifying: "正在检查能否正常工作（cudaup verify）……",
    verify_skipped: "没有检查：随时可以运行 `cudaup verify`。",
    verify_after_reboot: "暂不检查：新驱动要重启后才生效。",
    verify_failed: "有检查项没通过：`cudaup doctor` 会说明问题出在哪里、怎么修。",
    summary_heading: "完成。接下来：",
    step_env_hooked: |line| format!("在当前终端加载 CUDA 环境（新开的终端会自动加载）：\n       {line}"),
    step_env_manual: |line| {
        format!("加载 CUDA 环境（想长期生效，把这一行加到 Shell 启动文件里）：\n       {line}")
    },
    step_venv: |cmd| format!("激活 Python 虚拟环境：\n       {cmd}"),
    step_driver: |v| format!("用上面给出的命令（root 权限）安装 NVIDIA 驱动 {v}，然后重启。"),
    step_reboot: |v| format!("现在重启，加载 NVIDIA 驱动 {v}；重启后用 `cudaup verify` 检查（还没装完的部分再运行 `cudaup wizard` 即可）。"),
    step_driver_manual: |v| format!("在 Windows 上安装 NVIDIA 驱动 {v} 或更新版本，然后重启 WSL（`wsl --shutdown`）。"),
    step_later: "以后：`cudaup verify` 检查环境，`cudaup doctor` 诊断哪里坏了。",
    cancelled: "已取消：没有安装或改动任何东西。",
    no_terminal: "向导需要在终端里提问，但现在没有终端。\n\
想免提问地按配置文件安装：\n  cudaup install --config cudaup.toml --yes\n\
这样的配置文件可以在有终端的机器上生成：\n  cudaup wizard --save cudaup.toml --dry-run\n\
或者全部采用推荐选项：cudaup wizard --yes",
    need_yes: "没有终端，无法确认：请加上 --yes 来安装配置文件描述的环境（cudaup install --config FILE --yes）",
    yes: "是",
    no: "否",
    colon: "：",
    error_prefix: "错误",
};
