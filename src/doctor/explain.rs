//! `doctor --explain oom|util`: practical advice kept as data (text files embedded here), not
//! code.

/// A topic of `--explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// "CUDA out of memory".
    Oom,
    /// Low GPU utilisation.
    Util,
}

impl Topic {
    /// The topic's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Topic::Oom => "oom",
            Topic::Util => "util",
        }
    }

    /// The advice.
    pub fn text(self) -> &'static str {
        match self {
            Topic::Oom => OOM,
            Topic::Util => UTIL,
        }
    }
}

/// CUDA out of memory.
pub const OOM: &str = include_str!("explain-oom.txt");
/// Low GPU utilisation.
pub const UTIL: &str = include_str!("explain-util.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_texts_point_at_the_measured_answer() {
        assert!(OOM.contains("`cudaup bench`") && OOM.contains("--effective-batch"));
        assert!(UTIL.contains("`cudaup bench`") && UTIL.contains("input-bound"));
    }

    #[test]
    fn the_texts_cover_what_they_promise() {
        for needle in [
            "batch size",
            "accumulation",
            "bf16",
            "checkpoint",
            "empty_cache",
            "expandable_segments:True",
            "memory_summary",
        ] {
            assert!(OOM.contains(needle), "{needle}");
        }
        for needle in [
            "num_workers",
            "pin_memory",
            "nvidia-smi dmon",
            "profiler",
            ".item()",
        ] {
            assert!(UTIL.contains(needle), "{needle}");
        }
    }
}
