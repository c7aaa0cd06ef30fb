//! The largest batch that fits, and the gradient accumulation that gives a wanted effective
//! batch when it does not (the guide's §5.1 and §6.1).

use serde::Serialize;

use super::measure::Sweep;

/// How to reach an effective batch on this GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Accumulation {
    /// The effective batch wanted.
    pub effective_batch: u32,
    /// The batch per step that fits.
    pub micro_batch: u32,
    /// Steps to accumulate before each optimizer step (1: no accumulation).
    pub steps: u32,
    /// In words.
    pub advice: String,
}

/// The accumulation for `wanted` images per optimizer step given what the sweep found.
/// `None` when not even the smallest batch tried fitted.
pub fn accumulation(sweep: &Sweep, wanted: u32) -> Option<Accumulation> {
    let largest = sweep.largest_fit?;
    let wanted = wanted.max(1);
    if wanted <= largest {
        let more = if sweep.smallest_oom.is_none() {
            format!("; no batch up to {} ran out of memory", sweep.cap)
        } else {
            String::new()
        };
        return Some(Accumulation {
            effective_batch: wanted,
            micro_batch: wanted,
            steps: 1,
            advice: format!(
                "batch {wanted} fits as it is (the largest that fits is {largest}{more})"
            ),
        });
    }
    // The fewest steps whose micro-batch fits, preferring one that divides the batch exactly
    // (every step then sees the same number of images).
    let fewest = wanted.div_ceil(largest);
    let exact = (fewest..=fewest.saturating_mul(2).min(wanted))
        .find(|k| wanted.is_multiple_of(*k) && wanted / k <= largest);
    let (steps, micro) = match exact {
        Some(k) => (k, wanted / k),
        None => (fewest, wanted.div_ceil(fewest)),
    };
    let actual = micro * steps;
    let note = if actual == wanted {
        String::new()
    } else {
        format!(" ({actual} images per optimizer step: the nearest that divides evenly)")
    };
    Some(Accumulation {
        effective_batch: wanted,
        micro_batch: micro,
        steps,
        advice: format!(
            "batch {wanted} does not fit (largest {largest}); run {steps} micro-batches of {micro}, call (loss / {steps}).backward() on each and step the optimizer every {steps}{note}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(largest: Option<u32>, oom: Option<u32>) -> Sweep {
        Sweep {
            config: "tf32".into(),
            largest_fit: largest,
            smallest_oom: oom,
            cap: 8192,
            ..Sweep::default()
        }
    }

    #[test]
    fn a_batch_that_fits_needs_no_accumulation() {
        let a = accumulation(&sweep(Some(1536), Some(1792)), 256).unwrap();
        assert_eq!((a.micro_batch, a.steps), (256, 1));
        assert!(a.advice.contains("largest that fits is 1536"));
        let a = accumulation(&sweep(Some(8192), None), 4096).unwrap();
        assert!(
            a.advice.contains("no batch up to 8192 ran out of memory"),
            "{}",
            a.advice
        );
    }

    #[test]
    fn accumulation_divides_evenly_where_it_can() {
        let a = accumulation(&sweep(Some(1536), Some(1792)), 4096).unwrap();
        assert_eq!((a.micro_batch, a.steps), (1024, 4));
        assert!(a.advice.contains("(loss / 4).backward()"), "{}", a.advice);
        let a = accumulation(&sweep(Some(96), Some(128)), 256).unwrap();
        assert_eq!((a.micro_batch, a.steps), (64, 4));
        // 1000 = 3 × 333.3: no divisor in reach of 3..6 steps under 400 → 4 × 250.
        let a = accumulation(&sweep(Some(400), Some(416)), 1000).unwrap();
        assert_eq!((a.micro_batch, a.steps), (250, 4));
        // A prime: no exact split, the nearest above.
        let a = accumulation(&sweep(Some(100), Some(128)), 257).unwrap();
        assert_eq!((a.micro_batch, a.steps), (86, 3));
        assert!(
            a.advice.contains("258 images per optimizer step"),
            "{}",
            a.advice
        );
        assert!(accumulation(&sweep(None, Some(32)), 256).is_none());
    }
}
