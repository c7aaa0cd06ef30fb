//! The public mirrors of PyPI and of PyTorch's index that cudaup knows: the README's table, the
//! wizard's choices, and the fixes a [`super::route::NoRoute`] suggests.

use super::route::RouteKind;

/// A public mirror cudaup knows (the README's table, the wizard's choices, the fixes an error
/// suggests). Each was checked against the mirror's own documentation where the search tool had
/// it; `confirmed` says whether it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownMirror {
    /// Who runs it.
    pub name: &'static str,
    /// The same, in Chinese (the wizard's `--lang zh`).
    pub name_zh: &'static str,
    /// The base to pass (`--pypi-index` or `--torch-index`).
    pub url: &'static str,
    /// Which route it copies.
    pub kind: RouteKind,
    /// Where its address is documented.
    pub source: &'static str,
}

/// Mirrors of PyPI and of PyTorch's index, in the order the wizard offers them.
pub const KNOWN_MIRRORS: &[KnownMirror] = &[
    KnownMirror {
        name: "Tsinghua University TUNA",
        name_zh: "清华大学 TUNA",
        url: "https://pypi.tuna.tsinghua.edu.cn/simple",
        kind: RouteKind::Pypi,
        source: "https://github.com/tuna/mirror-web/blob/master/_posts/help/1970-01-01-pypi.md",
    },
    KnownMirror {
        name: "USTC",
        name_zh: "中国科学技术大学",
        url: "https://mirrors.ustc.edu.cn/pypi/simple",
        kind: RouteKind::Pypi,
        source: "https://github.com/ustclug/mirrorhelp/blob/master/docs/pypi.md",
    },
    KnownMirror {
        name: "Alibaba Cloud",
        name_zh: "阿里云",
        url: "https://mirrors.aliyun.com/pypi/simple",
        kind: RouteKind::Pypi,
        source: "https://developer.aliyun.com/mirror/pypi (`index-url = https://mirrors.aliyun.com/pypi/simple/`, as the wizard's first author quoted it; not readable here: unconfirmed)",
    },
    KnownMirror {
        name: "SJTU",
        name_zh: "上海交通大学",
        url: "https://mirror.sjtu.edu.cn/pypi/web/simple",
        kind: RouteKind::Pypi,
        source: "https://mirrors.sjtug.sjtu.edu.cn/docs/pypi-packages (not readable here: unconfirmed)",
    },
    KnownMirror {
        name: "Nanjing University",
        name_zh: "南京大学",
        url: "https://mirrors.nju.edu.cn/pytorch/whl",
        kind: RouteKind::Pytorch,
        source: "https://github.com/mirrorz-org/mirrorz-docs/blob/master/pytorch/usage.zh.md (the `<endpoint>/whl/<variant>` layout; NJU's endpoint from its users, unconfirmed)",
    },
    KnownMirror {
        name: "Alibaba Cloud pytorch-wheels",
        name_zh: "阿里云 pytorch-wheels",
        url: "https://mirrors.aliyun.com/pytorch-wheels",
        kind: RouteKind::Pytorch,
        source: "a flat `<base>/<variant>/` listing for pip --find-links, as its users pass it (Aliyun's page not readable here: unconfirmed)",
    },
];

#[cfg(test)]
mod tests {
    /// The wizard offers each as a location: every one is an https URL that parses.
    #[test]
    fn every_known_mirror_is_an_https_location() {
        for m in super::KNOWN_MIRRORS {
            let at = crate::fetch::GivenLocation::parse(m.url).expect(m.url);
            assert!(at.is_http() && !at.is_plain_http(), "{}", m.url);
            assert_eq!(at.as_str(), m.url);
        }
    }
}
