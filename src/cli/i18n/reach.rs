//! The words of the up-front reachability check (`install::reach`) in English and Simplified
//! Chinese: the download sites asked, what answered, and a profile that cannot work here with
//! what would make it work. `plan`, `install` and the wizard print them.

/// The reachability words in one language.
#[derive(Debug)]
pub struct ReachWords {
    /// Next to the spinner, and the heading: the sites asked now.
    pub heading: &'static str,
    /// A site that answered: (service, base, milliseconds).
    pub answered: fn(&str, &str, u128) -> String,
    /// A site that did not: (service, base, why).
    pub failed: fn(&str, &str, &str) -> String,
    /// Why, in the order: DNS, refused, timeout, TLS, no such directory, plain http; an HTTP
    /// status and anything else are said as they are.
    pub failures: [&'static str; 6],
    /// An HTTP error status (the code).
    pub http_status: fn(u16) -> String,
    /// The services, in the order PyTorch's index, NVIDIA's redistributables, PyPI, the wheel
    /// index.
    pub services: [&'static str; 4],
    /// The parts, in the order the CUDA toolkit, PyTorch, TensorFlow, JAX.
    pub parts: [&'static str; 4],
    /// A profile that cannot work here: (profile, part).
    pub greyed: fn(&str, &str) -> String,
    /// What would make it work.
    pub fix: &'static str,
    /// The label before the fix.
    pub fix_label: &'static str,
    /// Nothing any profile needs answered (the wizard stops).
    pub none_fits: &'static str,
    /// An offered profile's toolkit download, from the catalog: (size).
    pub size: fn(&str) -> String,
    /// A profile in the wizard's list that cannot work here.
    pub greyed_tag: &'static str,
    /// The machine's suggestion cannot work here, so this one is: (suggestion, the new one).
    pub moved: fn(&str, &str) -> String,
    /// A greyed profile was chosen: (profile).
    pub chose_greyed: fn(&str) -> String,
    /// The source the toolkit takes: NVIDIA's archives (the base).
    pub toolkit_redist: fn(&str) -> String,
    /// … or NVIDIA's CUDA wheels from an index (the index).
    pub toolkit_wheels: fn(&str) -> String,
}

/// English.
pub static EN: ReachWords = ReachWords {
    heading: "Download sites (asked now)",
    answered: |service, base, ms| format!("{service} {base}: answered in {ms} ms"),
    failed: |service, base, why| format!("{service} {base}: no answer ({why})"),
    failures: [
        "the host name does not resolve",
        "connection refused",
        "timed out",
        "the TLS handshake failed",
        "no such directory",
        "plain http, refused without --allow-http",
    ],
    http_status: |code| format!("HTTP {code}"),
    services: [
        "PyTorch's index",
        "NVIDIA's redistributables",
        "PyPI",
        "the wheel index",
    ],
    parts: ["the CUDA toolkit", "PyTorch", "TensorFlow", "JAX"],
    greyed: |profile, part| {
        format!("{profile} cannot work here: nothing that serves {part} answered:")
    },
    fix: "a mirror this machine reaches (--pypi-index URL, --torch-index URL, --mirror URL|DIR), an offline bundle (`cudaup mirror create` on a machine with network, then --index-url DIR), or a proxy (HTTPS_PROXY)",
    fix_label: "what would work:",
    none_fits: "No profile can work here: none of the download sites answered.",
    size: |size| format!("[CUDA toolkit: about {size}]"),
    greyed_tag: "[cannot work here]",
    moved: |from, to| format!("`{from}` cannot work here (see above), so `{to}` is the suggestion."),
    chose_greyed: |p| format!("`{p}` cannot work here (see above): choose another, or Ctrl-C and fix the network first."),
    toolkit_redist: |base| format!("the toolkit comes from NVIDIA's archives at {base}"),
    toolkit_wheels: |index| {
        format!("NVIDIA's server did not answer: the toolkit comes as NVIDIA's CUDA wheels from {index}")
    },
};

/// Simplified Chinese.
pub static ZH: ReachWords = ReachWords {
    heading: "下载站点（刚刚询问）",
    answered: |service, base, ms| format!("{service} {base}：{ms} 毫秒内应答"),
    failed: |service, base, why| format!("{service} {base}：没有应答（{why}）"),
    failures: [
        "域名无法解析",
        "连接被拒绝",
        "超时",
        "TLS 握手失败",
        "目录不存在",
        "明文 http，未加 --allow-http 不予使用",
    ],
    http_status: |code| format!("HTTP 错误 {code}"),
    services: ["PyTorch 索引", "NVIDIA 再分发包", "PyPI", "wheel 索引"],
    parts: ["CUDA 工具包", "PyTorch", "TensorFlow", "JAX"],
    greyed: |profile, part| format!("{profile} 在本机无法使用：提供 {part} 的站点都没有应答："),
    fix: "使用本机能访问的镜像（--pypi-index URL、--torch-index URL、--mirror URL|DIR）、离线包（在有网络的机器上运行 `cudaup mirror create`，再用 --index-url DIR），或代理（HTTPS_PROXY）",
    fix_label: "可行的办法：",
    none_fits: "没有可用的配置：所有下载站点都没有应答。",
    size: |size| format!("[CUDA 工具包：约 {size}]"),
    greyed_tag: "[本机无法使用]",
    moved: |from, to| format!("`{from}` 在本机无法使用（见上），改为推荐 `{to}`。"),
    chose_greyed: |p| format!("`{p}` 在本机无法使用（见上）：请另选一个，或按 Ctrl-C 先解决网络问题。"),
    toolkit_redist: |base| format!("工具包来自 NVIDIA 的归档（{base}）"),
    toolkit_wheels: |index| format!("NVIDIA 的服务器没有应答：工具包改用 {index} 上 NVIDIA 的 CUDA wheel"),
};

impl ReachWords {
    /// Why `answer` got no answer, in this language (its detail where no word fits).
    pub fn why(&self, answer: &crate::install::reach::Answer) -> String {
        use crate::install::reach::Failure;
        let i = match answer.failure {
            Some(Failure::Dns) => 0,
            Some(Failure::Refused) => 1,
            Some(Failure::Timeout) => 2,
            Some(Failure::Tls) => 3,
            Some(Failure::NoDirectory) => 4,
            Some(Failure::PlainHttp) => 5,
            Some(Failure::Status(code)) => return (self.http_status)(code),
            Some(Failure::Other) | None => return answer.detail.clone(),
        };
        self.failures[i].to_owned()
    }

    /// How this language names `service`.
    pub fn service(&self, service: crate::install::reach::Service) -> &'static str {
        use crate::install::reach::Service;
        self.services[match service {
            Service::PytorchIndex => 0,
            Service::NvidiaRedist => 1,
            Service::Pypi => 2,
            Service::WheelIndex => 3,
        }]
    }

    /// How this language names `part`.
    pub fn part(&self, part: crate::install::reach::Part) -> &'static str {
        use crate::install::reach::Part;
        self.parts[match part {
            Part::Toolkit => 0,
            Part::Pytorch => 1,
            Part::Tensorflow => 2,
            Part::Jax => 3,
        }]
    }
}
