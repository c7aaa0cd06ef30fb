//! The last touches that make an assembled prefix look like NVIDIA's toolkit to the tools that
//! build against it (CMake's FindCUDAToolkit, Meson, Bazel's rules_cuda,
//! `torch.utils.cpp_extension`, plain `-lcudart`):
//!
//! - the unversioned development links, `lib64/libcudart.so -> libcudart.so.13`, for every
//!   library that has none (NVIDIA's wheels ship only the versioned names);
//! - `lib64/stubs/libcuda.so` and `lib64/stubs/libnvidia-ml.so` where the route ships no stub,
//!   made from the installed `cuda.h` and `nvml.h` ([`super::stub`]);
//! - files where NVIDIA's toolkit has them: `nvvm/lib64/libnvvm.so` and `nvvm/include/nvvm.h`
//!   (the nvvm wheel has them in `lib64/` and `include/`), `extras/CUPTI/{include,lib64}`,
//!   `bin/ncu` and `bin/nsys`;
//! - `version.json` naming every installed component and its version, in NVIDIA's format.
//!
//! Everything made here is listed in the receipt like any unpacked file.
//!
//! It runs after [`super::merge`] has written the checked merged tree of the archives, and holds
//! its own writes to the same rules: nothing is made under a symlink an archive left (that
//! link may point elsewhere in the prefix, so the receipt would name a path that is not where
//! the bytes went) and nothing is written over or through an existing path (`O_EXCL`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::layout::TOOL_LINKS;
use super::receipt::ReceiptFile;
use super::stub::{self, StubSpec};

/// An installed component as version.json names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// NVIDIA's key (`cuda_cudart`, `libcublas`, `cudnn`).
    pub key: String,
    /// NVIDIA's name for it (`CUDA Runtime (cudart)`).
    pub title: String,
    /// Its version.
    pub version: String,
}

/// The finishing step over the staging prefix; returns what the receipt must list in
/// addition to `files`.
pub struct Finish<'a> {
    staging: &'a Path,
    present: BTreeSet<PathBuf>,
    added: Vec<ReceiptFile>,
}

impl<'a> Finish<'a> {
    /// Starts from the files the components installed.
    pub fn new(staging: &'a Path, files: &[ReceiptFile]) -> Self {
        Self {
            staging,
            present: files.iter().map(|f| f.path.clone()).collect(),
            added: Vec::new(),
        }
    }

    fn has(&self, p: &Path) -> bool {
        self.present.contains(p) || self.staging.join(p).symlink_metadata().is_ok()
    }

    /// Refuses a path whose parent directories include a symlink (an archive's link must not
    /// redirect what is made here), then makes the parent directories.
    fn parent_dir(&self, path: &Path) -> std::io::Result<()> {
        let mut at = self.staging.to_path_buf();
        for c in path.parent().unwrap_or(Path::new("")).components() {
            at.push(c);
            match at.symlink_metadata() {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(std::io::Error::other(format!(
                        "{}: a symlink in the prefix; refusing to write {} through it",
                        at.display(),
                        path.display()
                    )))
                }
                Ok(_) => {}
                Err(_) => fs_err::create_dir(&at)?,
            }
        }
        Ok(())
    }

    fn link(&mut self, path: &Path, target: &Path) -> std::io::Result<()> {
        if self.has(path) {
            return Ok(());
        }
        self.parent_dir(path)?;
        let dst = self.staging.join(path);
        crate::world::fs::symlink(target, &dst)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", dst.display())))?;
        self.present.insert(path.to_owned());
        self.added.push(ReceiptFile {
            path: path.to_owned(),
            size: None,
            sha256: None,
            link: Some(target.to_owned()),
        });
        Ok(())
    }

    fn write(&mut self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        self.parent_dir(path)?;
        let dst = self.staging.join(path);
        // O_CREAT | O_EXCL, like the merged tree's writes: never through or over what is there.
        std::io::Write::write_all(
            &mut fs_err::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&dst)?,
            bytes,
        )?;
        self.present.insert(path.to_owned());
        self.added.push(ReceiptFile {
            path: path.to_owned(),
            size: Some(bytes.len() as u64),
            sha256: Some(hex::encode(<sha2::Sha256 as sha2::Digest>::digest(bytes))),
            link: None,
        });
        Ok(())
    }

    /// The names in `dir` (relative), from what is present.
    fn names_in(&self, dir: &Path) -> Vec<String> {
        self.present
            .iter()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect()
    }

    /// Runs every step. `named` is what version.json lists; `cuda` the toolkit release. `arch`
    /// is the Linux machine; `None` for a Windows toolkit, which gets only its version.json
    /// (NVIDIA's Windows layout has no links, and the Linux stubs are ELF files).
    pub fn run(
        mut self,
        arch: Option<&str>,
        cuda: &str,
        named: &[Named],
    ) -> std::io::Result<Vec<ReceiptFile>> {
        if let Some(arch) = arch {
            self.linux_links_and_stubs(arch)?;
        }
        if !self.has(Path::new("version.json")) {
            let text = version_json(cuda, named);
            self.write(Path::new("version.json"), text.as_bytes())?;
        }
        Ok(self.added)
    }

    /// What NVIDIA's Linux toolkit has beyond the wheels' and archives' files: its links and
    /// the driver library stubs.
    fn linux_links_and_stubs(&mut self, arch: &str) -> std::io::Result<()> {
        self.place_nvvm()?;
        for (link, target, only) in TOOL_LINKS {
            if only.is_some_and(|a| a != arch) {
                continue;
            }
            let resolved = Path::new(link)
                .parent()
                .unwrap_or(Path::new(""))
                .join(target);
            if self.has(&normalize(&resolved)) {
                self.link(Path::new(link), Path::new(target))?;
            }
        }
        if self.has(Path::new("include/cupti.h")) && !self.has(Path::new("extras/CUPTI")) {
            self.link(
                Path::new("extras/CUPTI/include"),
                Path::new("../../include"),
            )?;
            self.link(Path::new("extras/CUPTI/lib64"), Path::new("../../lib64"))?;
        }
        if let Some(machine) = stub::Machine::from_arch(arch) {
            for spec in [&stub::LIBCUDA, &stub::LIBNVIDIA_ML] {
                self.stub(spec, machine)?;
            }
        }
        for dir in ["lib64", "lib64/stubs", "nvvm/lib64"] {
            self.dev_links(Path::new(dir))?;
        }
        Ok(())
    }

    /// The nvvm wheel puts libnvvm and nvvm.h beside the other libraries and headers;
    /// NVIDIA's toolkit (and Numba, CMake's `CUDAToolkit_LIBRARY_ROOT`) has them under nvvm/.
    fn place_nvvm(&mut self) -> std::io::Result<()> {
        if !self.has(Path::new("nvvm")) {
            return Ok(());
        }
        for name in self.names_in(Path::new("lib64")) {
            if name.starts_with("libnvvm.so") {
                let link = Path::new("nvvm/lib64").join(&name);
                self.link(&link, &Path::new("../../lib64").join(&name))?;
            }
        }
        if self.has(Path::new("include/nvvm.h")) {
            self.link(
                Path::new("nvvm/include/nvvm.h"),
                Path::new("../../include/nvvm.h"),
            )?;
        }
        Ok(())
    }

    /// `lib64/stubs/<file>` from the installed headers, unless the route shipped one.
    fn stub(&mut self, spec: &StubSpec, machine: stub::Machine) -> std::io::Result<()> {
        let path = Path::new("lib64/stubs").join(spec.file);
        if self.has(&path) || !self.has(Path::new(spec.headers[0])) {
            return Ok(());
        }
        let mut names = BTreeSet::new();
        for h in spec.headers {
            if let Ok(text) = fs_err::read_to_string(self.staging.join(h)) {
                names.extend(stub::exported_names(&text, spec.marker, spec.prefix));
            }
        }
        if names.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = names.into_iter().collect();
        let bytes = stub::shared_object(spec.soname, &names, machine, spec.returns);
        self.write(&path, &bytes)
    }

    /// `libX.so -> libX.so.N` for every `libX.so.*` in `dir` without an unversioned name.
    fn dev_links(&mut self, dir: &Path) -> std::io::Result<()> {
        let mut by_stem: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for name in self.names_in(dir) {
            if let Some(at) = name.find(".so.") {
                if name.starts_with("lib") {
                    by_stem
                        .entry(name[..at + 3].to_owned())
                        .or_default()
                        .push(name);
                }
            }
        }
        for (stem, mut names) in by_stem {
            // The soname (fewest version parts) rather than the full version.
            names.sort_by_key(|n| (n.matches('.').count(), n.clone()));
            self.link(&dir.join(&stem), Path::new(&names[0]))?;
        }
        Ok(())
    }
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// NVIDIA's version.json: `{"cuda": {"name": "CUDA SDK", "version": …}, "<key>": {"name": …,
/// "version": …}, …}`, keys sorted, three-space indent and ` : ` as NVIDIA writes it.
pub fn version_json(cuda: &str, named: &[Named]) -> String {
    let mut rows: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    rows.insert("cuda", ("CUDA SDK", cuda));
    for n in named {
        rows.entry(&n.key).or_insert((&n.title, &n.version));
    }
    let q = |s: &str| serde_json::to_string(s).expect("strings serialise");
    let body: Vec<String> = rows
        .iter()
        .map(|(k, (name, version))| {
            format!(
                "   {} : {{\n      \"name\" : {},\n      \"version\" : {}\n   }}",
                q(k),
                q(name),
                q(version)
            )
        })
        .collect();
    format!("{{\n{}\n}}\n", body.join(",\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)] // for the tests of Unix links
    fn file(p: &str) -> ReceiptFile {
        ReceiptFile {
            path: p.into(),
            size: Some(1),
            sha256: Some("00".into()),
            link: None,
        }
    }

    #[cfg(unix)] // for the tests of Unix links
    fn touch(root: &Path, p: &str, text: &str) {
        let f = root.join(p);
        fs_err::create_dir_all(f.parent().unwrap()).unwrap();
        fs_err::write(f, text).unwrap();
    }

    #[cfg(unix)] // its compat links are Unix symlinks, not made on Windows yet
    #[test]
    fn a_wheel_prefix_gets_links_stubs_and_version_json() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let files = [
            "lib64/libcudart.so.13",
            "lib64/libcublas.so.13",
            "lib64/libcublasLt.so.13",
            "lib64/libnvrtc-builtins.so.13.0",
            "lib64/libnvvm.so.4",
            "lib64/libcudart_static.a",
            "include/nvvm.h",
            "include/cupti.h",
            "include/nvml.h",
            "include/cuda.h",
            "nvvm/bin/cicc",
        ];
        for f in files {
            touch(root, f, "");
        }
        touch(
            root,
            "include/cuda.h",
            "CUresult CUDAAPI cuInit(unsigned int Flags);\n#define cuMemAlloc cuMemAlloc_v2\n",
        );
        touch(
            root,
            "include/nvml.h",
            "nvmlReturn_t DECLDIR nvmlInit_v2(void);\n",
        );
        let listed: Vec<ReceiptFile> = files.iter().map(|f| file(f)).collect();
        let named = [Named {
            key: "cuda_cudart".into(),
            title: "CUDA Runtime (cudart)".into(),
            version: "13.0.96".into(),
        }];
        let added = Finish::new(root, &listed)
            .run(Some("x86_64"), "13.0.2", &named)
            .unwrap();
        let link = |p: &str| {
            fs_err::read_link(root.join(p))
                .ok()
                .map(|t| t.display().to_string())
        };
        assert_eq!(
            link("lib64/libcudart.so").as_deref(),
            Some("libcudart.so.13")
        );
        assert_eq!(
            link("lib64/libnvrtc-builtins.so").as_deref(),
            Some("libnvrtc-builtins.so.13.0")
        );
        assert_eq!(
            link("nvvm/lib64/libnvvm.so.4").as_deref(),
            Some("../../lib64/libnvvm.so.4")
        );
        assert_eq!(
            link("nvvm/lib64/libnvvm.so").as_deref(),
            Some("libnvvm.so.4")
        );
        assert_eq!(
            link("nvvm/include/nvvm.h").as_deref(),
            Some("../../include/nvvm.h")
        );
        assert_eq!(link("extras/CUPTI/lib64").as_deref(), Some("../../lib64"));
        assert!(!root.join("lib64/libcudart_static.so").exists());
        let stub = fs_err::read(root.join("lib64/stubs/libcuda.so")).unwrap();
        assert!(stub.windows(12).any(|w| w == b"libcuda.so.1"));
        assert!(stub.windows(13).any(|w| w == b"cuMemAlloc_v2"));
        assert!(root.join("lib64/stubs/libnvidia-ml.so").is_file());
        let vj: serde_json::Value =
            serde_json::from_str(&fs_err::read_to_string(root.join("version.json")).unwrap())
                .unwrap();
        assert_eq!(vj["cuda"]["version"], "13.0.2");
        assert_eq!(vj["cuda_cudart"]["name"], "CUDA Runtime (cudart)");
        // Everything made is in the receipt; files carry their hash.
        let paths: Vec<String> = added.iter().map(|f| f.path.display().to_string()).collect();
        for p in [
            "lib64/libcublasLt.so",
            "lib64/stubs/libcuda.so",
            "version.json",
            "extras/CUPTI/include",
        ] {
            assert!(paths.contains(&p.to_owned()), "{p}: {paths:?}");
        }
        assert!(added
            .iter()
            .filter(|f| f.link.is_none())
            .all(|f| f.sha256.is_some()));
    }

    #[cfg(unix)] // an archive's Unix symlinks
    #[test]
    fn what_the_route_shipped_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        touch(root, "lib64/libcudart.so.13.0.96", "");
        std::os::unix::fs::symlink("libcudart.so.13.0.96", root.join("lib64/libcudart.so.13"))
            .unwrap();
        std::os::unix::fs::symlink("libcudart.so.13", root.join("lib64/libcudart.so")).unwrap();
        touch(root, "lib64/stubs/libcuda.so", "nvidia's");
        touch(
            root,
            "include/cuda.h",
            "CUresult CUDAAPI cuInit(unsigned int Flags);\n",
        );
        let listed = vec![
            file("lib64/libcudart.so.13.0.96"),
            file("lib64/libcudart.so.13"),
            file("lib64/libcudart.so"),
            file("lib64/stubs/libcuda.so"),
            file("include/cuda.h"),
        ];
        let added = Finish::new(root, &listed)
            .run(Some("x86_64"), "13.0.2", &[])
            .unwrap();
        assert_eq!(
            fs_err::read_to_string(root.join("lib64/stubs/libcuda.so")).unwrap(),
            "nvidia's"
        );
        assert_eq!(
            added
                .iter()
                .map(|f| f.path.display().to_string())
                .collect::<Vec<_>>(),
            ["version.json"]
        );
    }

    #[cfg(unix)] // an archive's Unix symlink
    #[test]
    fn nothing_is_written_through_an_archives_symlink() {
        let outside = tempfile::tempdir().unwrap();
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        touch(
            root,
            "include/cuda.h",
            "CUresult CUDAAPI cuInit(unsigned int Flags);\n",
        );
        fs_err::create_dir_all(root.join("lib64")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("lib64/stubs")).unwrap();
        let listed = vec![file("include/cuda.h")];
        let err = Finish::new(root, &listed)
            .run(Some("x86_64"), "13.0.2", &[])
            .unwrap_err();
        assert!(err.to_string().contains("refusing to write"), "{err}");
        assert_eq!(fs_err::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn version_json_has_nvidias_shape() {
        let text = version_json(
            "13.0.2",
            &[Named {
                key: "libcublas".into(),
                title: "CUDA cuBLAS".into(),
                version: "13.1.0.3".into(),
            }],
        );
        assert_eq!(
            text,
            "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n      \"version\" : \"13.0.2\"\n   },\n   \"libcublas\" : {\n      \"name\" : \"CUDA cuBLAS\",\n      \"version\" : \"13.1.0.3\"\n   }\n}\n"
        );
        assert_eq!(
            crate::detect::toolkits::parse_version_files(Some(&text), None).as_deref(),
            Some("13.0.2")
        );
    }
}
