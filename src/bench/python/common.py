"""Shared pieces of cudaup's bench scripts: the JSON-lines protocol, an NVML sampler, and the
ResNet-50 training step. cudaup writes these files to a temporary directory and runs them with
the venv's python; every line they print to stdout is one JSON object."""

import ctypes
import json
import os
import sys
import threading
import time

# NCCL's NVLink SHARP (multicast) is kept off, always: on machines where the fabric manager does
# not allow it, NCCL fails or hangs at init.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def progress(message, **extra):
    obj = {"event": "progress", "message": message}
    obj.update(extra)
    emit(obj)


def result(obj):
    obj = dict(obj)
    obj["event"] = "result"
    emit(obj)


def describe(e):
    return "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")


def args():
    return json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}


# --- NVML through ctypes: only calls whose signatures have been stable since NVML 5 -----------

class _Util(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class Nvml:
    """A thin NVML handle; every getter returns None where the driver does not answer."""

    def __init__(self):
        self.lib = None
        for name in ("libnvidia-ml.so.1", "libnvidia-ml.so", "nvml.dll"):
            try:
                lib = ctypes.CDLL(name)
                if lib.nvmlInit_v2() == 0:
                    self.lib = lib
                    break
            except (OSError, AttributeError):
                continue

    def handle(self, uuid=None, pci_bus_id=None, index=None):
        if self.lib is None:
            return None
        h = ctypes.c_void_p()
        if uuid and self.lib.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(h)) == 0:
            return h
        if pci_bus_id and self.lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(h)) == 0:
            return h
        if index is not None and self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(h)) == 0:
            return h
        return None

    def _uint(self, fn, h, *extra):
        if self.lib is None or h is None:
            return None
        v = ctypes.c_uint()
        try:
            rc = getattr(self.lib, fn)(h, *extra, ctypes.byref(v))
        except AttributeError:
            return None
        return v.value if rc == 0 else None

    def util(self, h):
        if self.lib is None or h is None:
            return None
        u = _Util()
        return u.gpu if self.lib.nvmlDeviceGetUtilizationRates(h, ctypes.byref(u)) == 0 else None

    def sm_clock(self, h):
        return self._uint("nvmlDeviceGetClockInfo", h, ctypes.c_int(1))

    def max_sm_clock(self, h):
        return self._uint("nvmlDeviceGetMaxClockInfo", h, ctypes.c_int(1))

    def power_w(self, h):
        mw = self._uint("nvmlDeviceGetPowerUsage", h)
        return None if mw is None else mw / 1000.0

    def power_limit_w(self, h):
        mw = self._uint("nvmlDeviceGetEnforcedPowerLimit", h)
        return None if mw is None else mw / 1000.0

    def default_power_limit_w(self, h):
        mw = self._uint("nvmlDeviceGetPowerManagementDefaultLimit", h)
        return None if mw is None else mw / 1000.0

    def temperature_c(self, h):
        return self._uint("nvmlDeviceGetTemperature", h, ctypes.c_int(0))

    def pcie(self, h):
        gen = self._uint("nvmlDeviceGetCurrPcieLinkGeneration", h)
        width = self._uint("nvmlDeviceGetCurrPcieLinkWidth", h)
        max_gen = self._uint("nvmlDeviceGetMaxPcieLinkGeneration", h)
        max_width = self._uint("nvmlDeviceGetMaxPcieLinkWidth", h)
        return {"gen": gen, "width": width, "max_gen": max_gen, "max_width": max_width}

    def memory_used_mib(self, h):
        if self.lib is None or h is None:
            return None
        m = _Memory()
        return m.used / 2**20 if self.lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m)) == 0 else None

    def reasons(self, h):
        if self.lib is None or h is None:
            return None
        v = ctypes.c_ulonglong()
        for fn in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            try:
                if getattr(self.lib, fn)(h, ctypes.byref(v)) == 0:
                    return v.value
            except AttributeError:
                continue
        return None

    def static(self, h):
        return {
            "max_sm_clock_mhz": self.max_sm_clock(h),
            "power_limit_w": self.power_limit_w(h),
            "default_power_limit_w": self.default_power_limit_w(h),
            "pcie": self.pcie(h),
        }


class Sampler:
    """Samples one GPU every `period` seconds on a thread; `window(t0, t1)` sums up a stretch."""

    def __init__(self, nvml, handle, period=0.1):
        self.nvml, self.h, self.period = nvml, handle, period
        self.samples = []
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        if self.h is not None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _run(self):
        n = self.nvml
        while not self._stop.is_set():
            self.samples.append((
                time.monotonic(), n.util(self.h), n.sm_clock(self.h), n.power_w(self.h),
                n.temperature_c(self.h), n.reasons(self.h), n.memory_used_mib(self.h),
            ))
            self._stop.wait(self.period)

    def window(self, t0, t1):
        rows = [s for s in list(self.samples) if t0 <= s[0] <= t1]
        if not rows:
            return None

        def col(i):
            return [r[i] for r in rows if r[i] is not None]

        def mean(v):
            return sum(v) / len(v) if v else None

        reasons = col(5)
        counts = {}
        for bit in range(0, 16):
            c = sum(1 for r in reasons if r & (1 << bit))
            if c:
                counts[str(1 << bit)] = c
        return {
            "samples": len(rows),
            "util_mean": mean(col(1)),
            "util_min": min(col(1)) if col(1) else None,
            "sm_clock_mean": mean(col(2)),
            "sm_clock_min": min(col(2)) if col(2) else None,
            "power_mean_w": mean(col(3)),
            "power_max_w": max(col(3)) if col(3) else None,
            "temp_max_c": max(col(4)) if col(4) else None,
            "reason_samples": len(reasons),
            "reason_counts": counts,
            "memory_used_max_mib": max(col(6)) if col(6) else None,
        }


def other_processes(uuid):
    """Compute processes on this GPU that are not this one (from nvidia-smi; a container may
    not see other namespaces' processes, so the absence proves little)."""
    import subprocess
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory,gpu_uuid",
             "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20,
        ).stdout
    except Exception:
        return None
    mine = {os.getpid(), os.getppid()}
    found = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4 or (uuid and parts[3] != uuid):
            continue
        try:
            pid = int(parts[0])
        except ValueError:
            continue
        if pid in mine:
            continue
        try:
            mem = float(parts[2])
        except ValueError:
            mem = None
        found.append({"pid": pid, "name": parts[1], "used_mib": mem})
    return found


def idle_util(nvml, h, seconds=1.0):
    """GPU utilisation while this process leaves the GPU idle: another process's work."""
    if h is None:
        return None
    vals = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        u = nvml.util(h)
        if u is not None:
            vals.append(u)
        time.sleep(0.1)
    return max(vals) if vals else None


def device_uuid(torch, index):
    try:
        u = str(torch.cuda.get_device_properties(index).uuid)
        return u if u.startswith("GPU-") else "GPU-" + u
    except Exception:
        return None


def device_pci(torch, index):
    p = torch.cuda.get_device_properties(index)
    try:
        return "%08x:%02x:%02x.0" % (p.pci_domain_id, p.pci_bus_id, p.pci_device_id)
    except AttributeError:
        return None


def is_oom(e):
    import torch
    if isinstance(e, getattr(torch, "OutOfMemoryError", ())) or isinstance(
            e, getattr(torch.cuda, "OutOfMemoryError", ())):
        return True
    text = str(e)
    return any(m in text for m in ("out of memory", "ALLOC_FAILED", "cudaErrorMemoryAllocation",
                                   "CUDA_ERROR_OUT_OF_MEMORY"))


class Config:
    """One way of training: the precision and memory format of a run."""

    def __init__(self, name, amp_dtype, channels_last):
        self.name, self.amp_dtype, self.channels_last = name, amp_dtype, channels_last


def configs(torch, index):
    """fp32 (TF32 on Ampere and newer), AMP (bf16 where the GPU has it, else fp16 with a
    GradScaler), and AMP in channels-last."""
    major = torch.cuda.get_device_capability(index)[0]
    bf16 = major >= 8 and torch.cuda.is_bf16_supported()
    amp = torch.bfloat16 if bf16 else torch.float16
    half = "bf16" if bf16 else "fp16"
    return [
        Config("tf32" if major >= 8 else "fp32", None, False),
        Config("amp_" + half, amp, False),
        Config("amp_" + half + "_cl", amp, True),
    ]


class Trainer:
    """ResNet-50 (torchvision's, which is v1.5) with SGD, one training step per call."""

    def __init__(self, torch, device, cfg, num_classes=1000, image=224):
        import torchvision
        self.torch, self.device, self.cfg, self.image = torch, device, cfg, image
        self.model = torchvision.models.resnet50(weights=None, num_classes=num_classes).to(device)
        if cfg.channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5)
        self.loss = torch.nn.CrossEntropyLoss()
        self.scaler = torch.amp.GradScaler("cuda", enabled=cfg.amp_dtype is torch.float16)
        self.num_classes = num_classes

    def batch(self, n):
        t = self.torch
        x = t.randn(n, 3, self.image, self.image, device=self.device)
        if self.cfg.channels_last:
            x = x.contiguous(memory_format=t.channels_last)
        y = t.randint(0, self.num_classes, (n,), device=self.device)
        return x, y

    def step(self, x, y):
        t = self.torch
        self.opt.zero_grad(set_to_none=True)
        with t.autocast("cuda", dtype=self.cfg.amp_dtype or t.float32, enabled=self.cfg.amp_dtype is not None):
            loss = self.loss(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()

    def infer(self, x):
        t = self.torch
        with t.inference_mode(), t.autocast("cuda", dtype=self.cfg.amp_dtype or t.float32,
                                            enabled=self.cfg.amp_dtype is not None):
            self.model(x)


def timed(torch, fn, warmup, seconds, min_iters=3):
    """Runs `fn` `warmup` times, then until `seconds` have passed (at least `min_iters` times);
    returns (iterations, wall seconds, CPU seconds of this process, t0, t1)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    t0, c0 = time.monotonic(), time.process_time()
    n = 0
    # No synchronisation inside the loop: the CPU runs at most a few steps ahead of the GPU,
    # and the final synchronize makes t1 the moment the n-th step finished.
    while n < min_iters or time.monotonic() - t0 < seconds:
        fn()
        n += 1
    torch.cuda.synchronize()
    t1, c1 = time.monotonic(), time.process_time()
    return n, t1 - t0, c1 - c0, t0, t1
