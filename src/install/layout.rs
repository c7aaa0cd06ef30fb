//! How archive paths map onto NVIDIA's toolkit layout (`bin`, `include`, `lib64`, `nvvm`, …).

use std::path::{Component, Path, PathBuf};

/// Bumped whenever a mapping changes, so unpacked-cache entries made by an older mapping are
/// never reused.
pub const LAYOUT_VERSION: u32 = 1;

/// The shape of an artifact's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// NVIDIA's redistributable archive: one top-level `<component>-<platform>-<ver>-archive/`.
    RedistArchive,
    /// An NVIDIA wheel: the files under `nvidia/<something>/`.
    Wheel,
}

/// Maps a path inside an artifact to its place in the prefix, or `None` to leave it out.
///
/// Redist archives: the top directory is stripped; files at the top (LICENSE) go to
/// `share/licenses/<component>/`. Wheels: `nvidia/<pkg>/` is stripped; Python packaging
/// (`*.dist-info`, `__init__.py`, `__pycache__`) is left out. In both, `lib/` becomes `lib64/`
/// as in NVIDIA's Linux toolkit.
pub fn map(shape: Shape, component: &str, path: &Path) -> Option<PathBuf> {
    let parts: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let rest: &[&str] = match shape {
        Shape::RedistArchive => {
            let rest = parts.get(1..)?;
            if rest.len() == 1 && !KNOWN_TOP_DIRS.contains(&rest[0]) {
                return Some(Path::new("share/licenses").join(component).join(rest[0]));
            }
            rest
        }
        Shape::Wheel => {
            if parts.first() != Some(&"nvidia") || parts.len() < 3 {
                return None;
            }
            let rest = &parts[2..];
            if rest
                .iter()
                .any(|p| *p == "__pycache__" || p.ends_with(".dist-info"))
                || rest == ["__init__.py"]
            {
                return None;
            }
            rest
        }
    };
    if rest.is_empty() {
        return None;
    }
    let mut out = PathBuf::new();
    for (i, p) in rest.iter().enumerate() {
        out.push(if i == 0 && *p == "lib" { "lib64" } else { p });
    }
    Some(out)
}

/// Top-level directories of NVIDIA archives (a single top-level entry with one of these names
/// is a directory, not a loose file).
const KNOWN_TOP_DIRS: &[&str] = &[
    "bin",
    "include",
    "lib",
    "lib64",
    "nvvm",
    "share",
    "src",
    "extras",
    "res",
    "pkg-config",
    "compute-sanitizer",
    "nvml",
];

/// Links that make the prefix look like NVIDIA's runfile install, so tools that expect either
/// layout find their files: `lib -> lib64`, and `targets/<arch>-linux/{include,lib}`.
pub fn compat_links(arch: &str) -> Vec<(PathBuf, PathBuf)> {
    // NVIDIA's Arm server toolkit lives in `targets/sbsa-linux` (`aarch64-linux` is the old
    // Jetson/L4T toolkit's); cuda.toml's [[platform]] rows record both names.
    let targets = match arch {
        "aarch64" | "arm64" => "sbsa".to_owned(),
        a => a.to_owned(),
    };
    vec![
        ("lib".into(), "lib64".into()),
        (
            format!("targets/{targets}-linux/include").into(),
            "../../include".into(),
        ),
        (
            format!("targets/{targets}-linux/lib").into(),
            "../../lib64".into(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(shape: Shape, p: &str) -> Option<String> {
        map(shape, "cuda_nvcc", Path::new(p)).map(|p| p.display().to_string())
    }

    #[test]
    fn redist_archives() {
        let top = "cuda_nvcc-linux-x86_64-13.0.88-archive";
        assert_eq!(m(Shape::RedistArchive, top), None);
        assert_eq!(
            m(Shape::RedistArchive, &format!("{top}/bin/nvcc")).as_deref(),
            Some("bin/nvcc")
        );
        assert_eq!(
            m(
                Shape::RedistArchive,
                &format!("{top}/lib/libnvptxcompiler_static.a")
            )
            .as_deref(),
            Some("lib64/libnvptxcompiler_static.a")
        );
        assert_eq!(
            m(
                Shape::RedistArchive,
                &format!("{top}/nvvm/lib64/libnvvm.so")
            )
            .as_deref(),
            Some("nvvm/lib64/libnvvm.so")
        );
        assert_eq!(
            m(Shape::RedistArchive, &format!("{top}/LICENSE")).as_deref(),
            Some("share/licenses/cuda_nvcc/LICENSE")
        );
        assert_eq!(
            m(Shape::RedistArchive, &format!("{top}/include")).as_deref(),
            Some("include")
        );
    }

    #[test]
    fn wheels() {
        assert_eq!(
            m(Shape::Wheel, "nvidia/cu13/bin/nvcc").as_deref(),
            Some("bin/nvcc")
        );
        assert_eq!(
            m(Shape::Wheel, "nvidia/cu13/lib/libnvvm.so.4").as_deref(),
            Some("lib64/libnvvm.so.4")
        );
        assert_eq!(
            m(Shape::Wheel, "nvidia/cudnn/include/cudnn.h").as_deref(),
            Some("include/cudnn.h")
        );
        assert_eq!(
            m(Shape::Wheel, "nvidia_cuda_nvcc-13.0.88.dist-info/RECORD"),
            None
        );
        assert_eq!(m(Shape::Wheel, "nvidia/cu13/__init__.py"), None);
        assert_eq!(m(Shape::Wheel, "nvidia/__init__.py"), None);
    }
}
