//! Link-time stubs: `lib64/stubs/libcuda.so` and `lib64/stubs/libnvidia-ml.so` for a toolkit
//! whose route ships none (NVIDIA's wheels carry `cuda.h` and `nvml.h` but neither stub).
//!
//! A stub is a small ELF shared object with the real library's soname (`libcuda.so.1`) that
//! exports every function the headers declare; each returns the library's "this is a stub"
//! error. `-lcuda` and CMake's `CUDA::cuda_driver` link against it, and the program then loads
//! the driver's real `libcuda.so.1` at run time — as with NVIDIA's own stubs. The symbol list is
//! read from the installed headers, so it is the release's own.

/// A stub library to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StubSpec {
    /// File name under `lib64/stubs/` (`libcuda.so`).
    pub file: &'static str,
    /// The soname programs will ask the loader for (`libcuda.so.1`).
    pub soname: &'static str,
    /// Headers (relative to the prefix) whose declarations name the exports.
    pub headers: &'static [&'static str],
    /// The word before each exported function's name in those headers.
    pub marker: &'static str,
    /// Exported names start with this.
    pub prefix: &'static str,
    /// What every function returns.
    pub returns: u16,
}

/// The driver API: CUDA_ERROR_STUB_LIBRARY (34) from every function, as NVIDIA's stub.
pub const LIBCUDA: StubSpec = StubSpec {
    file: "libcuda.so",
    soname: "libcuda.so.1",
    headers: &[
        "include/cuda.h",
        "include/cudaProfiler.h",
        "include/cudaGL.h",
        "include/cudaEGL.h",
        "include/cudaVDPAU.h",
    ],
    marker: "CUDAAPI",
    prefix: "cu",
    returns: 34,
};

/// NVML: NVML_ERROR_LIBRARY_NOT_FOUND (12) from every function.
pub const LIBNVIDIA_ML: StubSpec = StubSpec {
    file: "libnvidia-ml.so",
    soname: "libnvidia-ml.so.1",
    headers: &["include/nvml.h"],
    marker: "DECLDIR",
    prefix: "nvml",
    returns: 12,
};

/// The functions a header declares (`CUresult CUDAAPI cuInit(unsigned int Flags);` gives
/// `cuInit`), plus the names its macros turn them into (`#define cuMemAlloc cuMemAlloc_v2`,
/// `__CUDA_API_PTDS(cuMemcpy)` → `cuMemcpy_ptds`), sorted and unique.
pub fn exported_names(header: &str, marker: &str, prefix: &str) -> Vec<String> {
    let is_ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    let mut out = std::collections::BTreeSet::new();
    for line in header.lines() {
        let l = line.trim();
        // Declarations: MARKER [*] name(
        let mut rest = l;
        while let Some(at) = rest.find(marker) {
            let after = &rest[at + marker.len()..];
            rest = after;
            let Some(open) = after.find('(') else { break };
            // `CUDAAPI cuInit(`, `DECLDIR char* nvmlErrorString(`: the last word is the name.
            let between = &after[..open];
            if !between
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*' || c == ' ')
            {
                continue;
            }
            let name = between.rsplit([' ', '*']).next().unwrap_or("");
            if is_ident(name) && name.starts_with(prefix) {
                out.insert(name.to_owned());
            }
        }
        // Renaming macros.
        if let Some(def) = l.strip_prefix("#define") {
            let mut parts = def.split_whitespace();
            let (Some(from), Some(to)) = (parts.next(), parts.next()) else {
                continue;
            };
            if !from.starts_with(prefix) || !is_ident(from) {
                continue;
            }
            let to = to.trim();
            if is_ident(to) && to.starts_with(prefix) {
                out.insert(to.to_owned());
            }
            for (wrap, suffix) in [("__CUDA_API_PTDS(", "_ptds"), ("__CUDA_API_PTSZ(", "_ptsz")] {
                if let Some(inner) = to.strip_prefix(wrap).and_then(|t| t.strip_suffix(')')) {
                    if is_ident(inner) {
                        out.insert(format!("{inner}{suffix}"));
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The machine a stub is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machine {
    /// EM_X86_64.
    X86_64,
    /// EM_AARCH64.
    Aarch64,
}

impl Machine {
    /// The machine of a Linux `uname -m`.
    pub fn from_arch(arch: &str) -> Option<Self> {
        match arch {
            "x86_64" => Some(Self::X86_64),
            "aarch64" => Some(Self::Aarch64),
            _ => None,
        }
    }

    fn e_machine(self) -> u16 {
        match self {
            Self::X86_64 => 62,
            Self::Aarch64 => 183,
        }
    }

    /// `return value;`
    fn code(self, value: u16) -> Vec<u8> {
        match self {
            // mov eax, imm32; ret
            Self::X86_64 => {
                let mut c = vec![0xb8];
                c.extend_from_slice(&u32::from(value).to_le_bytes());
                c.push(0xc3);
                c
            }
            // movz w0, #imm16; ret
            Self::Aarch64 => {
                let movz = 0x5280_0000u32 | (u32::from(value) << 5);
                let mut c = movz.to_le_bytes().to_vec();
                c.extend_from_slice(&0xd65f_03c0u32.to_le_bytes());
                c
            }
        }
    }
}

/// SysV ELF hash of a symbol name.
fn elf_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &b in name {
        h = (h << 4).wrapping_add(u32::from(b));
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

fn align(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// A little-endian byte buffer.
#[derive(Default)]
struct Buf(Vec<u8>);

impl Buf {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn pad_to(&mut self, len: usize) {
        self.0.resize(len, 0);
    }
}

const PAGE: u64 = 0x10000; // covers 4 KiB and 64 KiB pages (aarch64 kernels use either)
const RW_BIAS: u64 = 0x20_0000;

/// An ELF64 shared object named `soname` whose every symbol in `names` is a function returning
/// `returns`. Deterministic: the same inputs give the same bytes.
pub fn shared_object(soname: &str, names: &[String], machine: Machine, returns: u16) -> Vec<u8> {
    // Sections, in file order: .hash .dynsym .dynstr .text | .dynamic | .shstrtab + headers.
    let mut dynstr = vec![0u8];
    let str_off = |s: &str, tab: &mut Vec<u8>| {
        let off = tab.len() as u32;
        tab.extend_from_slice(s.as_bytes());
        tab.push(0);
        off
    };
    let soname_off = str_off(soname, &mut dynstr);
    let name_offs: Vec<u32> = names.iter().map(|n| str_off(n, &mut dynstr)).collect();
    let nsyms = names.len() + 1;

    let ehdr = 64usize;
    let phnum = 4usize;
    let hash_off = ehdr + phnum * 56;
    let nbucket = (nsyms / 2).max(1);
    let hash_size = 4 * (2 + nbucket + nsyms);
    let dynsym_off = align(hash_off + hash_size, 8);
    let dynstr_off = dynsym_off + nsyms * 24;
    let text_off = align(dynstr_off + dynstr.len(), 16);
    let code = machine.code(returns);
    let text_end = text_off + code.len();
    let dynamic_off = align(text_end, 8);
    let dyn_entries = 7usize;
    let dynamic_size = dyn_entries * 16;
    let shstrtab_off = dynamic_off + dynamic_size;
    let mut shstrtab = vec![0u8];
    let sh_names: Vec<u32> = [
        ".hash",
        ".dynsym",
        ".dynstr",
        ".text",
        ".dynamic",
        ".shstrtab",
    ]
    .iter()
    .map(|n| str_off(n, &mut shstrtab))
    .collect();
    let shoff = align(shstrtab_off + shstrtab.len(), 8);
    let shnum = 7usize;
    let rw_vaddr = dynamic_off as u64 + RW_BIAS;

    let mut b = Buf::default();
    // ELF header.
    b.0.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    b.pad_to(16);
    b.u16(3); // ET_DYN
    b.u16(machine.e_machine());
    b.u32(1);
    b.u64(0); // no entry point
    b.u64(ehdr as u64);
    b.u64(shoff as u64);
    b.u32(0);
    b.u16(ehdr as u16);
    b.u16(56);
    b.u16(phnum as u16);
    b.u16(64);
    b.u16(shnum as u16);
    b.u16(6); // .shstrtab
              // Program headers: R+X load of everything up to .text, RW load of .dynamic, the dynamic
              // segment, and a non-executable stack.
    let ph = |b: &mut Buf, kind: u32, flags: u32, off: u64, vaddr: u64, size: u64, align: u64| {
        b.u32(kind);
        b.u32(flags);
        b.u64(off);
        b.u64(vaddr);
        b.u64(vaddr);
        b.u64(size);
        b.u64(size);
        b.u64(align);
    };
    ph(&mut b, 1, 5, 0, 0, text_end as u64, PAGE);
    ph(
        &mut b,
        1,
        6,
        dynamic_off as u64,
        rw_vaddr,
        dynamic_size as u64,
        PAGE,
    );
    ph(
        &mut b,
        2,
        6,
        dynamic_off as u64,
        rw_vaddr,
        dynamic_size as u64,
        8,
    );
    ph(&mut b, 0x6474_e551, 6, 0, 0, 0, 16); // PT_GNU_STACK
                                             // .hash
    b.pad_to(hash_off);
    let mut buckets = vec![0u32; nbucket];
    let mut chains = vec![0u32; nsyms];
    for (i, n) in names.iter().enumerate() {
        let sym = (i + 1) as u32;
        let bucket = (elf_hash(n.as_bytes()) as usize) % nbucket;
        // Append to the bucket's chain.
        if buckets[bucket] == 0 {
            buckets[bucket] = sym;
        } else {
            let mut at = buckets[bucket] as usize;
            while chains[at] != 0 {
                at = chains[at] as usize;
            }
            chains[at] = sym;
        }
    }
    b.u32(nbucket as u32);
    b.u32(nsyms as u32);
    buckets.iter().for_each(|v| b.u32(*v));
    chains.iter().for_each(|v| b.u32(*v));
    // .dynsym
    b.pad_to(dynsym_off);
    b.pad_to(dynsym_off + 24); // the null symbol
    for off in &name_offs {
        b.u32(*off);
        b.u8(0x12); // STB_GLOBAL, STT_FUNC
        b.u8(0); // STV_DEFAULT
        b.u16(4); // .text
        b.u64(text_off as u64);
        b.u64(code.len() as u64);
    }
    // .dynstr
    b.pad_to(dynstr_off);
    b.0.extend_from_slice(&dynstr);
    // .text
    b.pad_to(text_off);
    b.0.extend_from_slice(&code);
    // .dynamic
    b.pad_to(dynamic_off);
    for (tag, val) in [
        (14u64, u64::from(soname_off)), // DT_SONAME
        (4, hash_off as u64),           // DT_HASH
        (5, dynstr_off as u64),         // DT_STRTAB
        (6, dynsym_off as u64),         // DT_SYMTAB
        (10, dynstr.len() as u64),      // DT_STRSZ
        (11, 24),                       // DT_SYMENT
        (0, 0),                         // DT_NULL
    ] {
        b.u64(tag);
        b.u64(val);
    }
    // .shstrtab
    b.pad_to(shstrtab_off);
    b.0.extend_from_slice(&shstrtab);
    // Section headers.
    b.pad_to(shoff);
    #[allow(clippy::too_many_arguments)]
    fn sh(
        b: &mut Buf,
        name: u32,
        kind: u32,
        flags: u64,
        addr: u64,
        off: usize,
        size: usize,
        link: u32,
        info: u32,
        align: u64,
        entsize: u64,
    ) {
        b.u32(name);
        b.u32(kind);
        b.u64(flags);
        b.u64(addr);
        b.u64(off as u64);
        b.u64(size as u64);
        b.u32(link);
        b.u32(info);
        b.u64(align);
        b.u64(entsize);
    }
    sh(&mut b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    sh(
        &mut b,
        sh_names[0],
        5,
        2,
        hash_off as u64,
        hash_off,
        hash_size,
        2,
        0,
        8,
        4,
    );
    sh(
        &mut b,
        sh_names[1],
        11,
        2,
        dynsym_off as u64,
        dynsym_off,
        nsyms * 24,
        3,
        1,
        8,
        24,
    );
    sh(
        &mut b,
        sh_names[2],
        3,
        2,
        dynstr_off as u64,
        dynstr_off,
        dynstr.len(),
        0,
        0,
        1,
        0,
    );
    sh(
        &mut b,
        sh_names[3],
        1,
        6,
        text_off as u64,
        text_off,
        code.len(),
        0,
        0,
        16,
        0,
    );
    sh(
        &mut b,
        sh_names[4],
        6,
        3,
        rw_vaddr,
        dynamic_off,
        dynamic_size,
        3,
        0,
        8,
        16,
    );
    sh(
        &mut b,
        sh_names[5],
        3,
        0,
        0,
        shstrtab_off,
        shstrtab.len(),
        0,
        0,
        1,
        0,
    );
    b.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUDA_H: &str = r#"
#if defined(_WIN32)
#define CUDAAPI __stdcall
#else
#define CUDAAPI
#endif
#define cuMemAlloc                          cuMemAlloc_v2
#define cuMemcpyHtoD                        __CUDA_API_PTDS(cuMemcpyHtoD_v2)
#define cuStreamQuery                       __CUDA_API_PTSZ(cuStreamQuery)
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);
typedef void (CUDA_CB *CUhostFn)(void *userData);
CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr);
"#;

    #[test]
    fn names_come_from_declarations_and_macros() {
        let n = exported_names(CUDA_H, "CUDAAPI", "cu");
        assert_eq!(
            n,
            [
                "cuGetErrorString",
                "cuInit",
                "cuMemAlloc",
                "cuMemAlloc_v2",
                "cuMemcpyHtoD_v2_ptds",
                "cuStreamQuery_ptsz"
            ]
        );
        let nvml = "nvmlReturn_t DECLDIR nvmlInit_v2(void);\n#define nvmlInit nvmlInit_v2\nconst DECLDIR char* nvmlErrorString(nvmlReturn_t result);\n";
        assert_eq!(
            exported_names(nvml, "DECLDIR", "nvml"),
            ["nvmlErrorString", "nvmlInit_v2"]
        );
    }

    #[test]
    fn the_object_is_well_formed_and_deterministic() {
        let names: Vec<String> = ["cuInit", "cuDriverGetVersion"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let a = shared_object("libcuda.so.1", &names, Machine::X86_64, 34);
        assert_eq!(
            a,
            shared_object("libcuda.so.1", &names, Machine::X86_64, 34)
        );
        assert_eq!(&a[..4], b"\x7fELF");
        assert_eq!(u16::from_le_bytes([a[16], a[17]]), 3);
        assert_eq!(u16::from_le_bytes([a[18], a[19]]), 62);
        let arm = shared_object("libcuda.so.1", &names, Machine::Aarch64, 34);
        assert_eq!(u16::from_le_bytes([arm[18], arm[19]]), 183);
        assert!(a.windows(12).any(|w| w == b"libcuda.so.1"));
        assert_eq!(elf_hash(b"printf"), 0x077905a6);
    }

    /// The system linker takes the stub, records its soname, and the program calls through.
    #[cfg(unix)] // builds and runs an ELF program against the stub
    #[test]
    fn a_c_program_links_against_it() {
        if std::env::consts::ARCH != "x86_64" && std::env::consts::ARCH != "aarch64" {
            return;
        }
        let machine = Machine::from_arch(std::env::consts::ARCH).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = ["cuInit", "cuDriverGetVersion"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        fs_err::write(
            dir.path().join("libcuda.so"),
            shared_object("libcuda.so.1", &names, machine, 34),
        )
        .unwrap();
        fs_err::write(dir.path().join("main.c"), "int cuInit(unsigned);\nint cuDriverGetVersion(int*);\nint main(void){int v=0; return cuInit(0)==34 && cuDriverGetVersion(&v)==34 ? 0 : 1;}\n").unwrap();
        let out = std::process::Command::new("cc")
            .current_dir(dir.path())
            .args(["main.c", "-o", "main", "-L.", "-lcuda"])
            .output()
            .expect("cc runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // At run time the loader asks for the soname; here the stub itself answers it.
        std::os::unix::fs::symlink("libcuda.so", dir.path().join("libcuda.so.1")).unwrap();
        let run = std::process::Command::new(dir.path().join("main"))
            .env("LD_LIBRARY_PATH", dir.path())
            .output()
            .unwrap();
        assert!(run.status.success(), "{run:?}");
    }
}
