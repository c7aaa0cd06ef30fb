//! `cudaup verify` without a GPU: a toolkit installed from the synthetic mirror (its `nvcc` and
//! tools are scripts that only answer `--version`), a fake `nvidia-smi` on PATH printing what the
//! real one prints on the H200 machine, and fake venvs whose `python` answers the framework and
//! extension checks. For the all-pass cases the toolkit's nvcc is swapped for one that "compiles"
//! programs printing what the real ones print on a GPU, and its tools for ones that answer.
//! (tests/it/toolkit.rs runs verify against NVIDIA's real wheels: real nvcc, real linking.)

use std::path::{Path, PathBuf};

use crate::common::context::write_exe;
use crate::common::*;

/// What `nvidia-smi` prints on the H200 machine (driver 580.159.04).
const BANNER: &str = "Tue Oct 21 09:12:44 2025
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H200                    On  |   00000000:19:00.0 Off |                    0 |
| N/A   31C    P0             76W /  700W |       0MiB / 143771MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
";
const H200: &str = "0, NVIDIA H200, 0x233510DE, 580.159.04, 143771, 9.0\n";
const TWO_GPUS: &str = "0, NVIDIA H200, 0x233510DE, 580.159.04, 143771, 9.0\n1, NVIDIA GeForce RTX 4090, 0x268410DE, 580.159.04, 24564, 8.9\n";

/// What verify's tests do with a [`TestContext`] (its `nvidia-smi` stand-in, when it has one,
/// prints what the real one prints on the pictured GPUs).
trait VerifyContext {
    /// Installs CUDA 13.0.2 and cuDNN 9.17.0 from the synthetic mirror into the home (the
    /// toolkit becomes the active one); returns its prefix.
    fn install_toolkit(&self) -> PathBuf;
    fn verify(&self, args: &[&str]) -> Run;
    fn verify_json(&self, args: &[&str]) -> (i32, serde_json::Value);
}

/// A context whose `nvidia-smi` prints the H200 machine's banner and `query`.
fn with_gpus(query: &str) -> TestContext {
    TestContext::new().with_nvidia_smi(BANNER, query)
}

impl VerifyContext for TestContext {
    fn install_toolkit(&self) -> PathBuf {
        let mirror = crate::common::synthetic_mirror(&[]);
        let run = self.install(&[
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &mirror.path().display().to_string(),
            "--yes",
            "--no-modify-path",
        ]);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        let active: serde_json::Value =
            serde_json::from_slice(&fs_err::read(self.cudaup_home().join("active.json")).unwrap())
                .unwrap();
        PathBuf::from(active["toolkit"].as_str().expect("an active toolkit"))
    }

    fn verify(&self, args: &[&str]) -> Run {
        let mut all = vec!["verify"];
        all.extend_from_slice(args);
        self.cudaup(&all)
    }

    fn verify_json(&self, args: &[&str]) -> (i32, serde_json::Value) {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let run = self.verify(&all);
        (run.code, run.json())
    }
}

/// The check with `id`.
fn check<'a>(doc: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {doc:#}"))
}

fn evidence(c: &serde_json::Value) -> String {
    c["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the extension build prints when it built against `prefix` and ran on two GPUs.
fn extension_ok(prefix: &Path) -> String {
    format!(
        r#"{{"torch": "2.11.0+cu130", "cuda": "13.0", "cuda_home": "{}", "built": true, "build_seconds": 38.2, "devices": [{{"index": 0, "name": "NVIDIA H200", "max_abs_err": 0.0}}, {{"index": 1, "name": "NVIDIA GeForce RTX 4090", "max_abs_err": 0.0}}]}}"#,
        prefix.display()
    )
}

/// A venv whose `python` prints `framework` for the framework check and `bench` for --bench.
fn fake_venv(dir: &Path, framework: &str, bench: &str) {
    fake_venv_with_extension(
        dir,
        framework,
        bench,
        r#"{"error": "ModuleNotFoundError: this fake venv has no torch.utils.cpp_extension"}"#,
    );
}

/// [`fake_venv`], printing `extension` for the extension build.
fn fake_venv_with_extension(dir: &Path, framework: &str, bench: &str, extension: &str) {
    fs_err::create_dir_all(dir.join("bin")).unwrap();
    fs_err::write(
        dir.join("pyvenv.cfg"),
        "home = /usr/bin\nversion = 3.12.3\n",
    )
    .unwrap();
    write_exe(
        &dir.join("bin/python"),
        &format!(
            "#!/bin/sh\ncase \"$2\" in\n  *cudaup-verify-bench*) echo 'bench noise' >&2; printf '%s\\n' '{bench}' ;;\n  *cudaup-verify-framework*) echo 'UserWarning: noise' >&2; printf '%s\\n' '{framework}' ;;\n  *cudaup-verify-extension*) echo 'Emitting ninja build file'; printf '%s\\n' '{extension}' ;;\n  *) exit 1 ;;\nesac\n"
        ),
    );
}

#[test]
fn nvcc_matches_the_receipt_and_a_script_nvcc_cannot_build_the_kernel() {
    let m = with_gpus(H200);
    let prefix = m.install_toolkit();
    let (code, doc) = m.verify_json(&[]);
    assert_eq!(code, 4, "{doc:#}");
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["toolkit"], prefix.display().to_string());

    let driver = check(&doc, "driver");
    assert_eq!(driver["status"], "pass");
    assert_eq!(
        driver["evidence"][0],
        "NVIDIA driver 580.159.04 (runs CUDA up to 13.0), 1 GPU"
    );
    assert_eq!(
        driver["evidence"][1],
        "[0] NVIDIA H200, compute capability 9.0, 140 GiB"
    );
    assert_eq!(driver["data"]["gpus"][0]["architecture"], "Hopper");

    let nvcc = check(&doc, "nvcc");
    assert_eq!(nvcc["status"], "pass", "{nvcc:#}");
    assert_eq!(
        nvcc["evidence"][0],
        "nvcc release 13.0, V13.0.88: CUDA 13.0.2 as the receipt says"
    );
    assert_eq!(nvcc["data"]["chosen_by"], "active.json");

    // The synthetic nvcc refuses to compile: the failure carries nvcc's own words.
    let k = check(&doc, "addkernel:0");
    assert_eq!(k["status"], "fail");
    assert_eq!(k["subject"], "GPU 0: NVIDIA H200");
    let ev = evidence(k);
    assert!(
        ev.contains("nvcc -arch=sm_90 could not build addKernel.cu"),
        "{ev}"
    );
    assert!(
        ev.contains("synthetic nvcc: compilation is not available"),
        "{ev}"
    );
    // So does the program linking every library; the libraries are then not run.
    let libs = check(&doc, "libraries");
    assert_eq!(libs["status"], "fail", "{libs:#}");
    assert!(evidence(libs).contains("synthetic nvcc"), "{libs:#}");
    for id in ["cudart", "cublas", "cufft", "cudnn", "nvml"] {
        let c = check(&doc, id);
        assert_eq!(c["status"], "skip", "{c:#}");
        assert!(evidence(c).contains("did not build"), "{c:#}");
    }
    // The synthetic tools answer --version only: cuobjdump cannot list the (unbuilt) kernel.
    assert_eq!(check(&doc, "cuobjdump")["status"], "skip");
    assert_eq!(check(&doc, "nvprune")["status"], "pass");

    // No venv: the framework check does not apply.
    let fw = check(&doc, "framework");
    assert_eq!(fw["status"], "skip");
}

#[test]
fn an_nvcc_that_is_not_the_installed_release_fails() {
    let m = with_gpus(H200);
    let prefix = m.install_toolkit();
    write_exe(
        &prefix.join("bin/nvcc"),
        "#!/bin/sh\nprintf '%s\\n' 'nvcc: NVIDIA (R) Cuda compiler driver' 'Cuda compilation tools, release 12.8, V12.8.93'\n",
    );
    let (code, doc) = m.verify_json(&[]);
    assert_eq!(code, 4);
    let nvcc = check(&doc, "nvcc");
    assert_eq!(nvcc["status"], "fail");
    assert_eq!(
        nvcc["evidence"][0],
        format!(
            "nvcc release 12.8, V12.8.93, but the receipt says CUDA 13.0.2 was installed in {}",
            prefix.display()
        )
    );
    assert_eq!(nvcc["data"]["release"], "12.8");
    assert_eq!(nvcc["data"]["installed"], "13.0.2");

    // The human report names it too.
    let run = m.verify(&[]);
    assert_eq!(run.code, 4);
    assert!(
        run.stdout.lines().any(|l| l.starts_with("✗ nvcc")
            && l.contains("release 12.8, V12.8.93, but the receipt says CUDA 13.0.2")),
        "{}",
        run.stdout
    );
}

#[test]
fn without_a_gpu_everything_is_built_and_checked_and_only_the_gpu_runs_are_skipped() {
    let m = TestContext::new(); // no nvidia-smi on PATH, NVML off, no NVIDIA GPU on this PCI bus
    let prefix = m.install_toolkit();
    working_toolchain(&prefix);
    let run = m.verify(&[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = &run.stdout;
    assert!(
        out.starts_with("- driver") && out.contains("no NVIDIA GPU here"),
        "{out}"
    );
    for (mark, id, words) in [
        ("✓", "nvcc", "CUDA 13.0.2 as the receipt says"),
        (
            "✓",
            "addkernel",
            "addKernel.cu compiles and links; no GPU here to run it on",
        ),
        (
            "✓",
            "libraries",
            "one program links all 15 libraries of the toolkit",
        ),
        ("-", "cublas", "cuBLAS links; no GPU here to run it on"),
        ("-", "cudnn", "cuDNN links; no GPU here to run it on"),
        ("✓", "cuobjdump", "cuobjdump -sass lists addKernel's SASS"),
        ("✓", "cu++filt", "addKernel(int*, int const*, int const*)"),
        ("✓", "compute-sanitizer", "--version"),
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("{mark} {id} ")) && l.contains(words)),
            "{mark} {id} {words}:\n{out}"
        );
    }
    // The compiler was given every library the standard set installs, by its dev name.
    let log = fs_err::read_to_string(prefix.join("bin/nvcc.log")).unwrap();
    let link = log.lines().find(|l| l.contains("libs.cu")).unwrap();
    for flag in [
        "-lcublas",
        "-lcufft",
        "-lcurand",
        "-lcusparse",
        "-lcusolver",
        "-lcudnn",
        "-lnvrtc",
        "-lcuda",
        "-lnvJitLink",
        "-lnpps",
        "-lnvjpeg",
        "-lcupti",
        "-lnvidia-ml",
        "-DHAVE_NVTX",
        "-DHAVE_PROFILER",
    ] {
        assert!(link.split(' ').any(|w| w == flag), "{flag}: {link}");
    }
    assert!(
        !log.lines().any(|l| l.contains("-arch")),
        "no GPU, no -arch: {log}"
    );

    // A venv whose torch imports is skipped, not failed, where there is no GPU.
    let venv = m.dir().join("venv");
    fake_venv(
        &venv,
        r#"{"framework": "torch", "version": "2.11.0+cu130", "cuda": "13.0", "available": false, "device_count": 0, "arch_list": [], "devices": []}"#,
        "{}",
    );
    let (code, doc) = m.verify_json(&["--venv", &venv.display().to_string(), "--bench"]);
    assert_eq!(code, 0, "{doc:#}");
    let fw = check(&doc, "framework:0");
    assert_eq!(fw["status"], "skip", "{fw:#}");
    assert_eq!(
        fw["evidence"][0],
        "torch 2.11.0+cu130 (CUDA 13.0) imports; no GPU here to run on"
    );
    assert_eq!(check(&doc, "bench")["status"], "skip");

    // A toolkit that cannot compile any more (ptxas gone) fails, GPU or not.
    fs_err::remove_file(prefix.join("bin/ptxas")).unwrap();
    let (code, doc) = m.verify_json(&[]);
    assert_eq!(code, 4);
    let k = evidence(check(&doc, "addkernel"));
    assert!(k.contains("ptxas"), "{k}");
    assert_eq!(check(&doc, "libraries")["status"], "fail");
}

#[test]
fn the_json_document_has_every_check_with_id_status_and_evidence() {
    let m = TestContext::new();
    let (code, doc) = m.verify_json(&[]);
    assert_eq!(code, 0, "nothing here, so nothing failed: {doc:#}");
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["ok"], true);
    assert!(doc["toolkit"].is_null());
    assert_eq!(doc["venvs"], serde_json::json!([]));
    let checks = doc["checks"].as_array().unwrap();
    let ids: Vec<&str> = checks.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "driver",
            "nvcc",
            "addkernel",
            "libraries",
            "cmake",
            "framework"
        ]
    );
    for c in checks {
        let keys: Vec<&String> = c.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["data", "evidence", "id", "status", "subject"],
            "{c:#}"
        );
        assert!(["pass", "fail", "skip"].contains(&c["status"].as_str().unwrap()));
        assert!(!c["evidence"].as_array().unwrap().is_empty(), "{c:#}");
    }
    let count = |s: &str| checks.iter().filter(|c| c["status"] == s).count();
    assert_eq!(doc["failed"], count("fail"));
    assert_eq!(doc["passed"], count("pass"));
    assert_eq!(doc["skipped"], count("skip"));
    assert_eq!(doc["failed"], 0, "{doc:#}");
    assert_eq!(doc["skipped"], 6, "{doc:#}");
}

#[test]
fn what_is_not_installed_is_skipped_not_failed() {
    let m = with_gpus(H200);
    let run = m.verify(&[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = &run.stdout;
    assert!(out.starts_with("✓ driver"), "{out}");
    for id in ["nvcc", "addkernel", "libraries", "cmake", "framework"] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("- {id} "))),
            "{id} is not skipped:\n{out}"
        );
    }
    assert!(out.contains("no CUDA toolkit"), "{out}");
    assert!(out.ends_with("1 passed, 5 skipped\n"), "{out}");
}

/// An nvcc that answers like 13.0.88 and "compiles" what verify builds, logging its arguments:
/// addKernel becomes a script printing what addKernel prints, the library program one printing a
/// RESULT line for cudart and every `-DHAVE_<LIB>` it was given, `-cubin` a file naming the
/// kernel. Like the real one it cannot work without `ptxas` beside it.
const COMPILING_NVCC: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then
  printf '%s\n' 'nvcc: NVIDIA (R) Cuda compiler driver' 'Cuda compilation tools, release 13.0, V13.0.88'
  exit 0
fi
here=$(dirname "$0")
echo "$*" >> "$here/nvcc.log"
[ -x "$here/ptxas" ] || { echo 'sh: 1: ptxas: not found' >&2; echo 'nvcc fatal   : Failed to run ptxas' >&2; exit 1; }
out=; arch=; src=; cubin=; libs=cudart
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift ;;
    -arch=*) arch=${1#-arch=} ;;
    -cubin) cubin=1 ;;
    -DHAVE_*) libs="$libs $(echo "${1#-DHAVE_}" | tr 'A-Z' 'a-z')" ;;
    *.cu) src=$1 ;;
  esac
  shift
done
if [ -n "$cubin" ]; then echo "fake cubin of _Z9addKernelPiPKiS1_" > "$out"; exit 0; fi
case "$src" in
  *libs.cu)
    { echo '#!/bin/sh'
      for l in $libs; do
        echo "echo 'RESULT {\"lib\":\"$l\",\"ok\":true,\"detail\":\"a real $l call on GPU '\$CUDA_VISIBLE_DEVICES' matches the CPU\",\"file\":\"$here/../lib64/lib$l.so\"}'"
      done
      echo 'echo DONE'; } > "$out" ;;
  *)
    cat > "$out" <<EOF
#!/bin/sh
echo "device 0: GPU \$CUDA_VISIBLE_DEVICES in \$CUDA_DEVICE_ORDER order, built for $arch"
echo "{1,2,3,4,5} + {10,20,30,40,50} = {11,22,33,44,55}"
echo "addKernel OK"
EOF
    ;;
esac
chmod +x "$out"
"#;

/// Tools that do their job on the fake builds (the synthetic ones answer only --version).
const TOOLS: &[(&str, &str)] = &[
    ("cuobjdump", "#!/bin/sh\nprintf '%s\\n' 'Fatbin elf code:' 'arch = sm_90' '\tFunction : _Z9addKernelPiPKiS1_'\n"),
    ("nvdisasm", "#!/bin/sh\ngrep -q _Z9addKernelPiPKiS1_ \"$1\" && printf '%s\\n' '.text._Z9addKernelPiPKiS1_:' '        /*0000*/  LDC R1, c[0x0][0x37c] ;'\n"),
    ("cu++filt", "#!/bin/sh\n[ \"$1\" = _Z9addKernelPiPKiS1_ ] && echo 'addKernel(int*, int const*, int const*)'\n"),
    ("compute-sanitizer", "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'NVIDIA (R) Compute Sanitizer'; echo 'Version 2025.3.1.0'; exit 0; fi\nfor last; do :; done\n\"$last\" && echo '========= ERROR SUMMARY: 0 errors'\n"),
];

/// Swaps the toolkit's nvcc and tools for ones that work (see [`COMPILING_NVCC`]).
fn working_toolchain(prefix: &Path) {
    write_exe(&prefix.join("bin/nvcc"), COMPILING_NVCC);
    for (name, script) in TOOLS {
        write_exe(&prefix.join("bin").join(name), script);
    }
}

const TORCH_OK: &str = r#"{"framework": "torch", "version": "2.11.0+cu130", "cuda": "13.0", "available": true, "device_count": 2, "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], "devices": [{"index": 0, "name": "NVIDIA H200", "capability": [9, 0], "max_rel_err": 2.1e-07}, {"index": 1, "name": "NVIDIA GeForce RTX 4090", "capability": [8, 9], "max_rel_err": 1.9e-07}]}"#;
const BENCH_OK: &str = r#"{"version": "2.11.0+cu130", "devices": [{"index": 0, "name": "NVIDIA H200", "tflops": {"bf16": 702.4, "fp16": 698.2, "fp32": 51.3}, "h2d_gbs": 53.1, "d2h_gbs": 52.6, "errors": []}, {"index": 1, "name": "NVIDIA GeForce RTX 4090", "tflops": {"bf16": 160.2, "fp16": 161.0, "fp32": 80.1}, "h2d_gbs": 25.2, "d2h_gbs": 26.3, "errors": []}]}"#;

#[test]
fn a_working_stack_passes_every_check() {
    let m = with_gpus(TWO_GPUS);
    let prefix = m.install_toolkit();
    working_toolchain(&prefix);
    let venv = m.dir().join("torch-venv");
    let ext = extension_ok(&prefix);
    fake_venv_with_extension(&venv, TORCH_OK, BENCH_OK, &ext);
    let venv_arg = venv.display().to_string();

    let (code, doc) = m.verify_json(&["--venv", &venv_arg, "--bench"]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["ok"], true);
    let ids: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let mut want = vec![
        "driver",
        "nvcc",
        "addkernel:0",
        "addkernel:1",
        "cuobjdump",
        "nvdisasm",
        "cu++filt",
        "compute-sanitizer",
        "nvprune",
        "libraries",
    ];
    want.extend([
        "cudart",
        "cublas",
        "cufft",
        "curand",
        "cusparse",
        "cusolver",
        "cudnn",
        "nvrtc",
        "nvjitlink",
        "npp",
        "nvjpeg",
        "cupti",
        "nvtx",
        "nvml",
        "profiler",
    ]);
    want.extend(["cmake", "framework:0", "extension:0", "bench:0", "bench:1"]);
    assert_eq!(ids, want);
    assert_eq!(doc["failed"], 0, "{doc:#}");
    // cmake is not on this test's PATH: the only skip.
    assert_eq!(doc["skipped"], 1, "{doc:#}");
    assert_eq!(check(&doc, "cmake")["status"], "skip");

    // One build per architecture, each run on its own GPU in nvidia-smi's order.
    let log = fs_err::read_to_string(prefix.join("bin/nvcc.log")).unwrap();
    let archs: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("addKernel.cu") && !l.contains("-cubin"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(archs.len(), 2, "{log}");
    assert!(
        archs.contains(&"-arch=sm_90") && archs.contains(&"-arch=sm_89"),
        "{log}"
    );
    let k1 = evidence(check(&doc, "addkernel:1"));
    assert!(
        k1.contains("device 0: GPU 1 in PCI_BUS_ID order, built for sm_89"),
        "{k1}"
    );
    assert!(k1.starts_with("addKernel OK on GPU 1 (sm_89)"), "{k1}");

    // Every library ran on both GPUs, each from the toolkit (the file the loader mapped).
    for id in ["cudart", "cublas", "cufft", "cudnn", "nvjitlink", "nvml"] {
        let c = check(&doc, id);
        assert_eq!(c["status"], "pass", "{c:#}");
        let ev = evidence(c);
        assert!(
            ev.contains(&format!("GPU 1: a real {id} call on GPU 1 matches the CPU")),
            "{ev}"
        );
        assert!(
            ev.contains(&format!(
                "loaded {}/bin/../lib64/lib{id}.so",
                prefix.display()
            )),
            "{ev}"
        );
        assert!(!ev.contains("not from the toolkit"), "{ev}");
    }
    let s = evidence(check(&doc, "compute-sanitizer"));
    assert!(
        s.contains("GPU 0: memcheck on addKernel: ERROR SUMMARY: 0 errors"),
        "{s}"
    );
    let e = check(&doc, "extension:0");
    assert_eq!(e["status"], "pass", "{e:#}");
    assert!(
        evidence(e).contains("GPU 1: NVIDIA GeForce RTX 4090: axpb(x) = 2.5 x + 1 matches the CPU"),
        "{e:#}"
    );
    assert_eq!(e["data"]["arch_list"], "8.9;9.0");

    let fw = check(&doc, "framework:0");
    assert_eq!(fw["subject"], venv_arg);
    assert_eq!(
        fw["evidence"][0],
        "torch 2.11.0+cu130 (CUDA 13.0) sees all 2 GPU(s) and computes correctly on each"
    );
    let b = check(&doc, "bench:0");
    assert_eq!(
        b["evidence"][0],
        "matmul 8192×8192: bf16 702.4 · fp16 698.2 · fp32 51.3 TFLOP/s"
    );
    assert_eq!(b["data"]["h2d_gbs"], 53.1);

    // The human report: one aligned row per check, the tally last.
    let run = m.verify(&["--venv", &venv_arg]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let rows: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with('✓')).collect();
    assert_eq!(rows.len(), 27, "{}", run.stdout);
    let col = rows[0].find("NVIDIA driver").unwrap();
    assert!(rows.iter().all(|r| r.len() > col), "{}", run.stdout);
    assert!(
        run.stdout.ends_with("\n27 passed, 1 skipped\n"),
        "{}",
        run.stdout
    );

    // A framework that cannot see the GPUs fails the run.
    fake_venv_with_extension(
        &venv,
        r#"{"framework": "torch", "version": "2.11.0+cu130", "cuda": "13.0", "available": true, "device_count": 1, "arch_list": ["sm_90"], "devices": [{"index": 0, "name": "NVIDIA H200", "capability": [9, 0], "max_rel_err": 2e-07}]}"#,
        BENCH_OK,
        &ext,
    );
    let (code, doc) = m.verify_json(&["--venv", &venv_arg]);
    assert_eq!(code, 4);
    let fw = evidence(check(&doc, "framework:0"));
    assert!(
        fw.contains("torch sees 1 GPU(s), nvidia-smi lists 2"),
        "{fw}"
    );
    assert!(fw.contains("no kernels for GPU 1"), "{fw}");

    // And one whose import fails names the exception.
    fake_venv(
        &venv,
        r#"{"framework": "torch", "devices": [], "error": "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory"}"#,
        BENCH_OK,
    );
    let (code, doc) = m.verify_json(&["--venv", &venv_arg, "--bench"]);
    assert_eq!(code, 4);
    assert_eq!(
        check(&doc, "framework:0")["evidence"][0],
        "`import torch` failed: ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory"
    );
    assert_eq!(check(&doc, "bench")["status"], "skip");
}

#[test]
fn bad_flags_are_usage_errors() {
    let m = TestContext::new();
    let run = m.verify(&["--toolkit", "/nonexistent/cuda"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--toolkit /nonexistent/cuda: not a directory"),
        "{}",
        run.stderr
    );
    let not_venv = tempfile::tempdir().unwrap();
    let run = m.verify(&["--venv", &not_venv.path().display().to_string()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("not a Python virtual environment"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_explicit_toolkit_without_a_receipt_is_compared_with_its_version_json() {
    let m = with_gpus(H200);
    let tk = tempfile::tempdir().unwrap();
    write_exe(&tk.path().join("bin/nvcc"), COMPILING_NVCC);
    write_exe(&tk.path().join("bin/ptxas"), "#!/bin/sh\n");
    fs_err::write(
        tk.path().join("version.json"),
        r#"{"cuda": {"name": "CUDA SDK", "version": "13.0.2"}}"#,
    )
    .unwrap();
    let (_, doc) = m.verify_json(&["--toolkit", &tk.path().display().to_string()]);
    let nvcc = check(&doc, "nvcc");
    assert_eq!(nvcc["status"], "pass", "{nvcc:#}");
    assert_eq!(
        nvcc["evidence"][0],
        "nvcc release 13.0, V13.0.88: CUDA 13.0.2 as its version.json says"
    );
    assert_eq!(nvcc["data"]["chosen_by"], "--toolkit");
    assert_eq!(check(&doc, "addkernel:0")["status"], "pass");
    // No cuBLAS or cuDNN in that toolkit, and no receipt: not there, so skipped; cudart is what
    // every toolkit has: missing, it fails.
    assert_eq!(check(&doc, "cudart")["status"], "fail");
    assert_eq!(check(&doc, "cublas")["status"], "skip");
    assert!(evidence(check(&doc, "cudnn")).starts_with("cuDNN is not in this toolkit"));
}
