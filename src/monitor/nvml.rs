//! The live source: every GPU through NVML (nvml-wrapper, the library opened at run time, as
//! `detect` opens it). What does not change during a run (name, UUID, best clocks and link,
//! the default power limit) is read once; the rest each sample. A reading NVML refuses for a
//! board is left out of the sample, never turned into a zero.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Instant;

use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, PcieUtilCounter, TemperatureSensor,
};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::{Device, Nvml};

use super::sample::{GpuProcess, GpuSample, NvLink, Pcie, Throttle};
use super::{MonitorError, Source};

/// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX` / `_RX` (nvml.h): KiB of data sent / received over
/// all links since the driver loaded. Counters, so the rate is the difference of two samples.
const NVLINK_TX: u32 = 138;
const NVLINK_RX: u32 = 139;
/// `NVML_NVLINK_MAX_LINKS` (nvml.h).
const NVLINK_MAX_LINKS: u32 = 18;

/// What does not change during a run.
struct Fixed {
    name: String,
    uuid: Option<String>,
    sm_clock_max_mhz: Option<u32>,
    power_default_limit_w: Option<f64>,
    max_gen: Option<u32>,
    max_width: Option<u32>,
    nvlinks: Vec<u32>,
}

/// Every GPU NVML sees.
pub struct NvmlSource<'n> {
    devices: Vec<(u32, Device<'n>, Fixed)>,
    nvlink_last: Vec<Option<(Instant, u64, u64)>>,
    proc_dir: &'n Path,
    #[cfg(target_os = "linux")]
    xid: Option<nvml_wrapper::event::EventSet<'n>>,
}

/// The most Xid events read in one sample (a storm of them must not stall the view).
#[cfg(target_os = "linux")]
const MAX_XID_PER_SAMPLE: usize = 64;

/// Opens NVML from `library` and hands the source to `watch`; NVML is shut down when it
/// returns. No driver, no library or no GPU is [`MonitorError::NoGpu`] with NVML's reason.
pub fn with_nvml<R>(
    library: &str,
    proc_dir: &Path,
    watch: impl FnOnce(&mut dyn Source) -> R,
) -> Result<R, MonitorError> {
    if let Some(refusal) = crate::world::runner::nvml_refused_in_tests(library) {
        return Err(MonitorError::NoGpu(refusal));
    }
    let nvml = Nvml::builder()
        .lib_path(OsStr::new(library))
        .init()
        .map_err(|e| MonitorError::NoGpu(no_gpu_reason(&e)))?;
    let count = nvml
        .device_count()
        .map_err(|e| MonitorError::Nvml(e.to_string()))?;
    let mut devices = Vec::new();
    for index in 0..count {
        match nvml.device_by_index(index) {
            Ok(d) => {
                let fixed = fixed(&d);
                devices.push((index, d, fixed));
            }
            // A GPU that fell off the bus still deserves a line in the logs, not a stop.
            Err(e) => tracing::warn!("NVML could not open GPU {index}: {e}"),
        }
    }
    if devices.is_empty() {
        return Err(MonitorError::NoGpu(
            "NVML answers but reports no GPU it can open".into(),
        ));
    }
    let mut source = NvmlSource {
        nvlink_last: vec![None; devices.len()],
        #[cfg(target_os = "linux")]
        xid: xid_events(&nvml, &devices),
        devices,
        proc_dir,
    };
    Ok(watch(&mut source))
}

/// An event set that reports every GPU's critical Xid errors, where the driver offers one. A GPU
/// that refuses (NVML releases the set then) loses the earlier registrations too; the GPUs after
/// it are registered on a fresh set.
#[cfg(target_os = "linux")]
fn xid_events<'n>(
    nvml: &'n Nvml,
    devices: &[(u32, Device<'n>, Fixed)],
) -> Option<nvml_wrapper::event::EventSet<'n>> {
    use nvml_wrapper::bitmasks::event::EventTypes;
    let mut set = nvml.create_event_set().ok()?;
    let mut registered = false;
    for (index, d, _) in devices {
        match d.register_events(EventTypes::CRITICAL_XID_ERROR, set) {
            Ok(s) => {
                set = s;
                registered = true;
            }
            Err(e) => {
                tracing::debug!("GPU {index}: no Xid events ({})", e.error);
                set = nvml.create_event_set().ok()?;
                registered = false;
            }
        }
    }
    registered.then_some(set)
}

fn no_gpu_reason(e: &nvml_wrapper::error::NvmlError) -> String {
    use nvml_wrapper::error::NvmlError as E;
    match e {
        E::LibloadingError(_) => format!(
            "no NVIDIA driver here (NVML, {}, is not installed): `cudaup doctor` says what to install",
            crate::detect::gpu::nvml::default_library()
        ),
        E::DriverNotLoaded => {
            "the NVIDIA driver is installed but not loaded (a reboot after installing it, or Secure Boot refusing the module): `cudaup doctor`".into()
        }
        E::LibRmVersionMismatch => {
            "the driver's library and kernel module differ (reboot after a driver update)".into()
        }
        other => format!("NVML: {other}"),
    }
}

fn fixed(d: &Device<'_>) -> Fixed {
    let nvlinks = (0..NVLINK_MAX_LINKS)
        .filter(|l| d.link_wrapper_for(*l).is_active().unwrap_or(false))
        .collect();
    Fixed {
        name: d.name().unwrap_or_else(|_| "NVIDIA GPU".into()),
        uuid: d.uuid().ok(),
        sm_clock_max_mhz: d.max_clock_info(Clock::SM).ok(),
        power_default_limit_w: d
            .power_management_limit_default()
            .ok()
            .map(|mw| f64::from(mw) / 1000.0),
        max_gen: d.max_pcie_link_gen().ok(),
        max_width: d.max_pcie_link_width().ok(),
        nvlinks,
    }
}

impl Source for NvmlSource<'_> {
    fn sample(&mut self) -> Result<Vec<GpuSample>, MonitorError> {
        let mut out = Vec::with_capacity(self.devices.len());
        for (slot, (index, d, f)) in self.devices.iter().enumerate() {
            let util = d.utilization_rates().ok();
            let mem = d.memory_info().ok();
            let mut processes: Vec<GpuProcess> = Vec::new();
            let compute = d.running_compute_processes().unwrap_or_default();
            let graphics = d.running_graphics_processes().unwrap_or_default();
            for p in compute.into_iter().chain(graphics) {
                if processes.iter().any(|q| q.pid == p.pid) {
                    continue;
                }
                processes.push(GpuProcess {
                    pid: p.pid,
                    name: super::procs::name(self.proc_dir, p.pid),
                    mem_mib: match p.used_gpu_memory {
                        UsedGpuMemory::Used(b) => Some(b / (1024 * 1024)),
                        UsedGpuMemory::Unavailable => None,
                    },
                    watched: false,
                });
            }
            let nvlink = if f.nvlinks.is_empty() {
                None
            } else {
                let (tx, rx) = nvlink_rates(d, &mut self.nvlink_last[slot]);
                Some(NvLink {
                    active_links: u32::try_from(f.nvlinks.len()).unwrap_or(u32::MAX),
                    tx_kib_s: tx,
                    rx_kib_s: rx,
                })
            };
            out.push(GpuSample {
                index: *index,
                name: f.name.clone(),
                uuid: f.uuid.clone(),
                util_gpu: util.as_ref().map(|u| u.gpu),
                util_mem: util.as_ref().map(|u| u.memory),
                mem_used_mib: mem.as_ref().map(|m| m.used / (1024 * 1024)),
                mem_total_mib: mem.as_ref().map(|m| m.total / (1024 * 1024)),
                power_w: d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
                power_limit_w: d
                    .enforced_power_limit()
                    .ok()
                    .map(|mw| f64::from(mw) / 1000.0),
                power_default_limit_w: f.power_default_limit_w,
                temp_c: d.temperature(TemperatureSensor::Gpu).ok(),
                sm_clock_mhz: d.clock_info(Clock::SM).ok(),
                sm_clock_max_mhz: f.sm_clock_max_mhz,
                mem_clock_mhz: d.clock_info(Clock::Memory).ok(),
                throttle: d
                    .current_throttle_reasons()
                    .ok()
                    .map(|r| Throttle::names(r.bits())),
                pcie: Some(Pcie {
                    gen: d.current_pcie_link_gen().ok(),
                    width: d.current_pcie_link_width().ok(),
                    max_gen: f.max_gen,
                    max_width: f.max_width,
                    rx_kib_s: d.pcie_throughput(PcieUtilCounter::Receive).ok(),
                    tx_kib_s: d.pcie_throughput(PcieUtilCounter::Send).ok(),
                }),
                nvlink,
                ecc_uncorrected: d
                    .total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile)
                    .ok(),
                xid: Vec::new(),
                processes,
            });
        }
        #[cfg(target_os = "linux")]
        self.drain_xid(&mut out);
        Ok(out)
    }
}

#[cfg(target_os = "linux")]
impl NvmlSource<'_> {
    /// Puts the Xid errors that arrived since the last sample on their GPUs.
    fn drain_xid(&mut self, out: &mut [GpuSample]) {
        use nvml_wrapper::enums::event::XidError;
        let Some(set) = &self.xid else {
            return;
        };
        for _ in 0..MAX_XID_PER_SAMPLE {
            // A zero timeout: only what is already there.
            let Ok(event) = set.wait(0) else {
                break;
            };
            let Some(XidError::Value(code)) = event.event_data else {
                continue;
            };
            let Ok(index) = event.device.index() else {
                continue;
            };
            if let Some(g) = out.iter_mut().find(|g| g.index == index) {
                g.xid.push(code);
            }
        }
    }
}

/// The NVLink data rates since the last call (none on the first).
fn nvlink_rates(
    d: &Device<'_>,
    last: &mut Option<(Instant, u64, u64)>,
) -> (Option<f64>, Option<f64>) {
    let Ok(values) = d.field_values_for(&[FieldId(NVLINK_TX), FieldId(NVLINK_RX)]) else {
        return (None, None);
    };
    let read = |i: usize| -> Option<u64> {
        use nvml_wrapper::enums::device::SampleValue as V;
        match values.get(i)?.as_ref().ok()?.value.as_ref().ok()? {
            V::U64(v) => Some(*v),
            V::U32(v) => Some(u64::from(*v)),
            V::I64(v) => u64::try_from(*v).ok(),
            _ => None,
        }
    };
    let (Some(tx), Some(rx)) = (read(0), read(1)) else {
        return (None, None);
    };
    let now = Instant::now();
    let rates = match *last {
        Some((then, tx0, rx0)) => {
            let s = now.duration_since(then).as_secs_f64();
            if s > 0.0 {
                (
                    Some(tx.saturating_sub(tx0) as f64 / s),
                    Some(rx.saturating_sub(rx0) as f64 / s),
                )
            } else {
                (None, None)
            }
        }
        None => (None, None),
    };
    *last = Some((now, tx, rx));
    rates
}
