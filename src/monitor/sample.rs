//! One look at every GPU (and at the command being watched): the records `monitor --json`
//! streams, one JSON object a line, and `monitor --replay` reads back. The schema is versioned:
//! a field is only ever added (optional), and a change that breaks a reader raises
//! [`SCHEMA_VERSION`].

use serde::{Deserialize, Serialize};

/// The version of the `monitor --json` records. A reader refuses a newer one, naming it.
pub const SCHEMA_VERSION: u32 = 1;

/// One line of the stream: a sample, or the summary a run ends with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Record {
    /// Every GPU at one instant.
    Sample(Sample),
    /// What the whole run showed, and the verdict (the last line of a stream).
    Summary(crate::monitor::summary::Summary),
}

/// Every GPU at one instant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Milliseconds since the monitor started.
    pub t_ms: u64,
    /// Wall-clock time, milliseconds since the Unix epoch (to line up with other logs).
    #[serde(default)]
    pub unix_ms: u64,
    /// Each GPU NVML reports.
    pub gpus: Vec<GpuSample>,
    /// The watched command's process tree, when `monitor -- CMD` runs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandSample>,
}

/// One GPU at one instant. Every reading is optional: NVML answers "not supported" for some of
/// them on some boards (power on a laptop GPU, ECC on a GeForce), and a missing reading is shown
/// as missing, never as zero.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSample {
    /// NVML's index.
    pub index: u32,
    /// The board's name.
    pub name: String,
    /// NVML's UUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Percent of the last sample period in which a kernel ran.
    #[serde(default)]
    pub util_gpu: Option<u32>,
    /// Percent of the last sample period in which device memory was read or written.
    #[serde(default)]
    pub util_mem: Option<u32>,
    /// Device memory in use (all processes), MiB.
    #[serde(default)]
    pub mem_used_mib: Option<u64>,
    /// Device memory, MiB.
    #[serde(default)]
    pub mem_total_mib: Option<u64>,
    /// Board power draw, W.
    #[serde(default)]
    pub power_w: Option<f64>,
    /// The power limit in force, W.
    #[serde(default)]
    pub power_limit_w: Option<f64>,
    /// The board's default power limit, W (a limit below it was lowered by someone).
    #[serde(default)]
    pub power_default_limit_w: Option<f64>,
    /// GPU temperature, °C.
    #[serde(default)]
    pub temp_c: Option<u32>,
    /// SM clock now, MHz.
    #[serde(default)]
    pub sm_clock_mhz: Option<u32>,
    /// Highest SM clock, MHz.
    #[serde(default)]
    pub sm_clock_max_mhz: Option<u32>,
    /// Memory clock now, MHz.
    #[serde(default)]
    pub mem_clock_mhz: Option<u32>,
    /// The clock-event ("throttle") reasons NVML reports now, by [`Throttle`] name. `None` when
    /// NVML could not say; empty when nothing holds the clocks down.
    #[serde(default)]
    pub throttle: Option<Vec<String>>,
    /// The PCIe link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie: Option<Pcie>,
    /// NVLink, where the GPU has active links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink: Option<NvLink>,
    /// Uncorrected ECC errors since the driver loaded (volatile count), where ECC is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecc_uncorrected: Option<u64>,
    /// Xid errors NVML reported since the last sample (their codes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub xid: Vec<u64>,
    /// The processes holding the GPU.
    #[serde(default)]
    pub processes: Vec<GpuProcess>,
}

/// A PCIe link, now and at best. The generation drops at idle to save power, so only a busy
/// GPU's link says whether the slot is degraded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pcie {
    /// Generation in use.
    pub gen: Option<u32>,
    /// Lanes in use.
    pub width: Option<u32>,
    /// Best generation of the GPU and slot.
    pub max_gen: Option<u32>,
    /// Most lanes of the GPU and slot.
    pub max_width: Option<u32>,
    /// Host-to-device traffic, KiB/s.
    #[serde(default)]
    pub rx_kib_s: Option<u32>,
    /// Device-to-host traffic, KiB/s.
    #[serde(default)]
    pub tx_kib_s: Option<u32>,
}

/// NVLink traffic (all links together).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NvLink {
    /// Links up.
    pub active_links: u32,
    /// Data sent since the last sample, KiB/s.
    #[serde(default)]
    pub tx_kib_s: Option<f64>,
    /// Data received since the last sample, KiB/s.
    #[serde(default)]
    pub rx_kib_s: Option<f64>,
}

/// A process with memory on a GPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuProcess {
    /// Its pid.
    pub pid: u32,
    /// Its name (`/proc/PID/comm`), where this machine can see it.
    #[serde(default)]
    pub name: Option<String>,
    /// Device memory it holds, MiB (`None` where NVML cannot say, e.g. in a container).
    #[serde(default)]
    pub mem_mib: Option<u64>,
    /// Whether it belongs to the watched command's process tree.
    #[serde(default)]
    pub watched: bool,
}

/// The watched command's process tree over the last sample period.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandSample {
    /// The command's pid.
    pub pid: u32,
    /// CPU time used per wall second, in cores (1.0 = one core busy all the time), summed over
    /// the command and every process it started (DataLoader workers are processes).
    pub cpu_cores: f64,
    /// How many processes the tree has.
    pub processes: u32,
    /// How many threads they have together.
    pub threads: u32,
    /// CPU cores this machine has (the scale `cpu_cores` is read against).
    pub cores_available: u32,
}

/// The clock-event reasons, by the names the stream carries. NVML reports them as bits
/// (`nvmlClocksEventReason*`); these are the ones a user can act on or must know about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttle {
    /// Nothing runs: the clocks are low because there is no work.
    GpuIdle,
    /// Application clocks set below the maximum (`nvidia-smi -ac`).
    ApplicationsClocks,
    /// The power limit holds the clocks down.
    SwPowerCap,
    /// Hardware slowdown: too hot, or an external power brake.
    HwSlowdown,
    /// Another GPU of the sync-boost group holds this one down.
    SyncBoost,
    /// The driver lowers the clocks: the GPU or its memory is too hot.
    SwThermal,
    /// The hardware lowers the clocks: too hot.
    HwThermal,
    /// The power supply's brake signal.
    HwPowerBrake,
}

impl Throttle {
    /// Every reason, in NVML's bit order.
    pub const ALL: [Throttle; 8] = [
        Throttle::GpuIdle,
        Throttle::ApplicationsClocks,
        Throttle::SwPowerCap,
        Throttle::HwSlowdown,
        Throttle::SyncBoost,
        Throttle::SwThermal,
        Throttle::HwThermal,
        Throttle::HwPowerBrake,
    ];

    /// NVML's bit for it (`nvml.h`, `nvmlClocksEventReason*`).
    pub fn bit(self) -> u64 {
        match self {
            Throttle::GpuIdle => 0x1,
            Throttle::ApplicationsClocks => 0x2,
            Throttle::SwPowerCap => 0x4,
            Throttle::HwSlowdown => 0x8,
            Throttle::SyncBoost => 0x10,
            Throttle::SwThermal => 0x20,
            Throttle::HwThermal => 0x40,
            Throttle::HwPowerBrake => 0x80,
        }
    }

    /// The name in the stream.
    pub fn name(self) -> &'static str {
        match self {
            Throttle::GpuIdle => "gpu-idle",
            Throttle::ApplicationsClocks => "applications-clocks",
            Throttle::SwPowerCap => "sw-power-cap",
            Throttle::HwSlowdown => "hw-slowdown",
            Throttle::SyncBoost => "sync-boost",
            Throttle::SwThermal => "sw-thermal",
            Throttle::HwThermal => "hw-thermal",
            Throttle::HwPowerBrake => "hw-power-brake",
        }
    }

    /// The names of the reasons set in NVML's `bits`, in bit order.
    pub fn names(bits: u64) -> Vec<String> {
        Throttle::ALL
            .iter()
            .filter(|t| bits & t.bit() != 0)
            .map(|t| t.name().to_owned())
            .collect()
    }
}

impl GpuSample {
    /// Memory in use as a share of the total (0.0–1.0).
    pub fn mem_share(&self) -> Option<f64> {
        match (self.mem_used_mib, self.mem_total_mib) {
            (Some(used), Some(total)) if total > 0 => Some(used as f64 / total as f64),
            _ => None,
        }
    }

    /// Whether NVML reported reason `t` in this sample.
    pub fn throttled_by(&self, t: Throttle) -> bool {
        self.throttle
            .as_deref()
            .is_some_and(|names| names.iter().any(|n| n == t.name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_bits_become_names_in_bit_order() {
        assert_eq!(Throttle::names(0x4 | 0x40), ["sw-power-cap", "hw-thermal"]);
        assert!(Throttle::names(0).is_empty());
        // Bits NVML may add later are not invented into names.
        assert!(Throttle::names(1 << 40).is_empty());
    }

    #[test]
    fn a_sample_round_trips_and_old_fields_may_be_missing() {
        let line = r#"{"kind":"sample","schema_version":1,"t_ms":500,"gpus":[{"index":0,"name":"NVIDIA H200"}]}"#;
        let r: Record = serde_json::from_str(line).unwrap();
        let Record::Sample(s) = &r else {
            panic!("{r:?}")
        };
        assert_eq!(s.gpus[0].util_gpu, None);
        assert_eq!(s.gpus[0].mem_share(), None);
        let again: Record = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(again, r);
    }
}
