//! How archive paths map onto NVIDIA's toolkit layout (`bin`, `include`, `lib64`, `nvvm`, …).

use std::path::{Component, Path, PathBuf};

/// Bumped whenever a mapping changes, so unpacked-cache entries made by an older mapping are
/// never reused.
pub const LAYOUT_VERSION: u32 = 4;

/// The shape of an artifact's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// NVIDIA's redistributable archive: one top-level `<component>-<platform>-<ver>-archive/`.
    RedistArchive,
    /// An NVIDIA wheel: the files under `nvidia/<something>/`.
    Wheel,
    /// An NVIDIA Windows wheel (`win_amd64`): the files under `nvidia/<something>/`, laid out
    /// as NVIDIA's Windows toolkit: `lib\x64` stays, the DLLs the wheels keep in
    /// `bin\x86_64` go to `bin\x64` (where CUDA 13's Windows installer puts them).
    WindowsWheel,
}

/// The shape of a wheel from its file name (or URL): a Windows one (`…-win_amd64.whl`) or not.
pub fn wheel_shape(name: &str) -> Shape {
    let tags = name.rsplit('/').next().unwrap_or(name);
    let platform = tags
        .strip_suffix(".whl")
        .unwrap_or(tags)
        .rsplit('-')
        .next()
        .unwrap_or("");
    if platform
        .split('.')
        .any(|p| p.starts_with("win_") || p == "win32")
    {
        Shape::WindowsWheel
    } else {
        Shape::Wheel
    }
}

/// Components NVIDIA's toolkit keeps in a directory of their own (the runfile's
/// `nsight-compute-<version>/`, `nsight-systems-<version>/`), without the version so the path
/// stays put across updates; `bin/ncu` and `bin/nsys` link into them ([`TOOL_LINKS`]).
const OWN_DIRS: &[(&str, &str)] = &[
    ("nsight_compute", "nsight-compute"),
    ("nsight_systems", "nsight-systems"),
];

/// Commands NVIDIA's toolkit has in `bin/` that live in a component's own directory:
/// (link, target relative to `bin/`, the machine it applies to).
pub const TOOL_LINKS: &[(&str, &str, Option<&str>)] = &[
    ("bin/ncu", "../nsight-compute/ncu", None),
    (
        "bin/nsys",
        "../nsight-systems/target-linux-x64/nsys",
        Some("x86_64"),
    ),
    // The sanitizer finds its injection libraries beside its own binary (the path of the file,
    // links resolved): NVIDIA's toolkit runs `compute-sanitizer/compute-sanitizer` from `bin/`.
    (
        "bin/compute-sanitizer",
        "../compute-sanitizer/compute-sanitizer",
        None,
    ),
];

/// Wheel directories that NVIDIA's toolkit keeps elsewhere: (wheel, its directory, the place).
/// NVIDIA's toolkit (and the redist archive) keeps the sanitizer in `compute-sanitizer/`: the
/// binary with its injection and launcher libraries beside it (`libInterceptorInjectionTarget.so`,
/// `libsanitizer-*.so`, `libTreeLauncher*.so`), which it loads from its own directory — in
/// `lib64/` they are not found and the target "terminated before first instrumented API call".
/// Its headers collide with CUPTI's (`generated_cuda_meta.h` and friends differ), so they go to
/// `compute-sanitizer/include` as well.
const WHEEL_PLACES: &[(&str, &str, &str)] = &[
    (
        "nvidia-cuda-sanitizer-api",
        "include",
        "compute-sanitizer/include",
    ),
    ("nvidia-cuda-sanitizer-api", "lib", "compute-sanitizer"),
    ("nvidia-cuda-sanitizer-api", "bin", "compute-sanitizer"),
];

/// Files a wheel carries twice, left out of the second place: the sanitizer wheel has
/// `libsanitizer-collection.so` in `bin/` and, byte for byte the same, in `lib/`.
const WHEEL_DUPLICATES: &[(&str, &str)] = &[(
    "nvidia-cuda-sanitizer-api",
    "bin/libsanitizer-collection.so",
)];

/// Maps a path inside an artifact to its place in the prefix, or `None` to leave it out.
///
/// Redist archives: the top directory is stripped; files at the top (LICENSE) go to
/// `share/licenses/<component>/`; the Nsight tools go whole into a directory of their own.
/// Wheels: `nvidia/<pkg>/` is stripped; Python packaging (`*.dist-info`, `__init__.py`,
/// `__pycache__`) is left out. In both, `lib/` becomes `lib64/` as in NVIDIA's Linux toolkit;
/// Windows wheels keep `lib\x64` and move `bin\x86_64` to `bin\x64` ([`Shape::WindowsWheel`]).
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
            if let Some((_, dir)) = OWN_DIRS.iter().find(|(c, _)| *c == component) {
                if rest.is_empty() {
                    return None;
                }
                return Some(Path::new(dir).join(rest.iter().collect::<PathBuf>()));
            }
            if rest.len() == 1 && !KNOWN_TOP_DIRS.contains(&rest[0]) {
                return Some(Path::new("share/licenses").join(component).join(rest[0]));
            }
            rest
        }
        Shape::Wheel | Shape::WindowsWheel => {
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
            let inner = rest.join("/");
            if WHEEL_DUPLICATES
                .iter()
                .any(|(w, p)| *w == component && *p == inner)
            {
                return None;
            }
            if let Some((_, _, place)) = WHEEL_PLACES
                .iter()
                .find(|(w, dir, _)| *w == component && rest.first() == Some(dir))
            {
                return Some(Path::new(place).join(rest[1..].iter().collect::<PathBuf>()));
            }
            if shape == Shape::WindowsWheel {
                // CUDA 13's Windows toolkit keeps its DLLs in bin\x64 (the wheels: bin/x86_64);
                // everything else (bin, include, lib\x64, nvvm) is where the wheels have it.
                let mut out = PathBuf::new();
                for (i, p) in rest.iter().enumerate() {
                    out.push(if i == 1 && rest[0] == "bin" && *p == "x86_64" {
                        "x64"
                    } else {
                        p
                    });
                }
                return Some(out);
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
    "samples",
    "doc",
    "etc",
    "gds",
    "tools",
];

/// NVIDIA's name for a Linux machine's `targets/` directory: `x86_64-linux`, and `sbsa-linux`
/// for server ARM (what nvcc.profile's `$(_TARGET_DIR_)` and CMake's FindCUDAToolkit look for).
pub fn target_name(arch: &str) -> String {
    match arch {
        // `aarch64-linux` is the old Jetson/L4T toolkit's; cuda.toml's [[platform]] rows record both.
        "aarch64" | "arm64" => "sbsa-linux".to_owned(),
        other => format!("{other}-linux"),
    }
}

/// Links that make the prefix look like NVIDIA's runfile install, so tools that expect either
/// layout find their files: `lib -> lib64`, and `targets/<target>-linux/{include,lib}`.
pub fn compat_links(arch: &str) -> Vec<(PathBuf, PathBuf)> {
    let target = target_name(arch);
    vec![
        ("lib".into(), "lib64".into()),
        (
            format!("targets/{target}/include").into(),
            "../../include".into(),
        ),
        (format!("targets/{target}/lib").into(), "../../lib64".into()),
    ]
}

// Its tests compare with /-separated text.
#[cfg(all(test, unix))]
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
    fn nsight_tools_get_a_directory_of_their_own() {
        let top = "nsight_compute-linux-x86_64-2025.3.1.4-archive";
        let n = |p: &str| {
            map(Shape::RedistArchive, "nsight_compute", Path::new(p))
                .map(|p| p.display().to_string())
        };
        assert_eq!(
            n(&format!("{top}/ncu")).as_deref(),
            Some("nsight-compute/ncu")
        );
        assert_eq!(
            n(&format!(
                "{top}/target/linux-desktop-glibc_2_11_3-x64/libcuda-injection.so"
            ))
            .as_deref(),
            Some("nsight-compute/target/linux-desktop-glibc_2_11_3-x64/libcuda-injection.so")
        );
        assert_eq!(n(top), None);
        assert_eq!(target_name("aarch64"), "sbsa-linux");
        assert_eq!(
            compat_links("aarch64")[1].0,
            PathBuf::from("targets/sbsa-linux/include")
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
        assert_eq!(
            map(
                Shape::Wheel,
                "nvidia-cuda-sanitizer-api",
                Path::new("nvidia/cu13/include/generated_cuda_meta.h")
            )
            .unwrap(),
            Path::new("compute-sanitizer/include/generated_cuda_meta.h")
        );
        assert_eq!(
            map(
                Shape::Wheel,
                "nvidia-cuda-sanitizer-api",
                Path::new("nvidia/cu13/bin/compute-sanitizer")
            )
            .unwrap(),
            Path::new("compute-sanitizer/compute-sanitizer")
        );
        let san = |p: &str| {
            map(Shape::Wheel, "nvidia-cuda-sanitizer-api", Path::new(p))
                .map(|p| p.display().to_string())
        };
        // The real wheel's members (nvidia-cuda-sanitizer-api 13.0.85).
        for lib in [
            "libInterceptorInjectionTarget.so",
            "libTreeLauncherPlaceholder.so",
            "libTreeLauncherTargetInjection.so",
            "libTreeLauncherTargetUpdatePreloadInjection.so",
            "libsanitizer-collection.so",
            "libsanitizer-public.so",
        ] {
            assert_eq!(
                san(&format!("nvidia/cu13/lib/{lib}")),
                Some(format!("compute-sanitizer/{lib}"))
            );
        }
        assert_eq!(san("nvidia/cu13/bin/libsanitizer-collection.so"), None);
        assert!(TOOL_LINKS
            .iter()
            .any(|(l, t, _)| *l == "bin/compute-sanitizer"
                && Path::new("bin")
                    .join(t)
                    .ends_with("compute-sanitizer/compute-sanitizer")));
        assert_eq!(m(Shape::Wheel, "nvidia/__init__.py"), None);
    }
}

// Portable: compares paths component by component.
#[cfg(test)]
mod windows_wheels {
    use super::*;

    fn w(component: &str, p: &str) -> Option<PathBuf> {
        map(Shape::WindowsWheel, component, Path::new(p))
    }

    fn path(parts: &[&str]) -> Option<PathBuf> {
        Some(parts.iter().collect())
    }

    /// The members of NVIDIA's real win_amd64 wheels (CUDA 13.5: nvidia-cuda-runtime 13.5.37,
    /// nvidia-cuda-nvcc 13.5.37, nvidia-nvvm 13.5.37, nvidia-cuda-sanitizer-api 13.5.25).
    #[test]
    fn windows_wheels_are_laid_out_as_nvidias_windows_toolkit() {
        let rt = "nvidia-cuda-runtime";
        assert_eq!(
            w(rt, "nvidia/cu13/bin/x86_64/cudart64_13.dll"),
            path(&["bin", "x64", "cudart64_13.dll"])
        );
        assert_eq!(
            w(rt, "nvidia/cu13/lib/x64/cudart.lib"),
            path(&["lib", "x64", "cudart.lib"])
        );
        assert_eq!(
            w(rt, "nvidia/cu13/include/cuda_fp16.hpp"),
            path(&["include", "cuda_fp16.hpp"])
        );
        assert_eq!(w(rt, "nvidia_cuda_runtime-13.5.37.dist-info/RECORD"), None);
        let nvcc = "nvidia-cuda-nvcc";
        assert_eq!(
            w(nvcc, "nvidia/cu13/bin/nvcc.exe"),
            path(&["bin", "nvcc.exe"])
        );
        assert_eq!(
            w(nvcc, "nvidia/cu13/bin/crt/link.stub"),
            path(&["bin", "crt", "link.stub"])
        );
        assert_eq!(
            w("nvidia-nvvm", "nvidia/cu13/nvvm/bin/cicc.exe"),
            path(&["nvvm", "bin", "cicc.exe"])
        );
        // The sanitizer keeps its own folder, its headers apart from CUPTI's (they differ).
        let san = "nvidia-cuda-sanitizer-api";
        assert_eq!(
            w(san, "nvidia/cu13/bin/compute-sanitizer.exe"),
            path(&["compute-sanitizer", "compute-sanitizer.exe"])
        );
        assert_eq!(
            w(san, "nvidia/cu13/bin/x86_64/sanitizer-public.dll"),
            path(&["compute-sanitizer", "x86_64", "sanitizer-public.dll"])
        );
        assert_eq!(
            w(san, "nvidia/cu13/include/generated_cuda_meta.h"),
            path(&["compute-sanitizer", "include", "generated_cuda_meta.h"])
        );
    }

    #[test]
    fn a_wheels_shape_comes_from_its_platform_tag() {
        assert_eq!(
            wheel_shape("https://h/p/nvidia_cuda_nvcc-13.5.37-py3-none-win_amd64.whl"),
            Shape::WindowsWheel
        );
        assert_eq!(
            wheel_shape(
                "nvidia_cuda_nvcc-13.5.37-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
            ),
            Shape::Wheel
        );
        assert_eq!(wheel_shape("x-1.0-py3-none-any.whl"), Shape::Wheel);
    }
}
