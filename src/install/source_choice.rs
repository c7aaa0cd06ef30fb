//! `--source auto`, the toolkit's default: NVIDIA's redistributable archives where NVIDIA's
//! server answers for the release, else NVIDIA's CUDA wheels from the package index — asked
//! before anything is downloaded, so a network that reaches only PyPI (common behind university
//! and company proxies) still gets a toolkit, and is told why it got wheels.

use crate::fetch::{FetchError, Fetcher, Location};
use crate::install::Source;
use crate::model::version::Version;
use crate::sources::redist;

/// The source `auto` takes for `cuda`, and the sentence that says why when it is not the first
/// choice. `nvidia` is NVIDIA's download base, `index` the package index for wheels; `probe` asks
/// once with a short timeout. CUDA before 13 has no wheels: NVIDIA's failure is the answer then.
pub fn auto(
    probe: &Fetcher,
    nvidia: &Location,
    index: &Location,
    cuda: &Version,
) -> Result<(Source, Option<String>), FetchError> {
    let listing = redist::cuda_manifest(nvidia, &cuda.to_string());
    match probe.get_bytes_at_most(&listing, Some("application/json"), 4 << 20) {
        Ok(_) => Ok((Source::Redist(nvidia.clone()), None)),
        Err(e) if e.is_network() && cuda.major() >= 13 => Ok((
            Source::Wheels(index.clone()),
            Some(format!(
                "NVIDIA's redistributables did not answer ({e}); taking NVIDIA's CUDA {cuda} wheels from {index} instead (--source redist insists on the archives)"
            )),
        )),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn probe() -> Fetcher {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = crate::fetch::Settings::new(dir.path().join("cache"));
        settings.allow_http = true;
        settings.attempts = 1;
        settings.connect_timeout = std::time::Duration::from_secs(2);
        Fetcher::new(
            settings,
            Arc::new(AtomicBool::new(false)),
            Arc::new(crate::world::progress::Silent),
        )
    }

    /// A loopback port nothing listens on: what an unreachable host looks like to the probe.
    fn dead() -> Location {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Location::parse(&format!("http://127.0.0.1:{port}")).unwrap()
    }

    #[test]
    fn an_unreachable_nvidia_gives_wheels_for_cuda_13_and_says_why() {
        let index = Location::parse("https://pypi.org/simple").unwrap();
        let (source, why) = auto(
            &probe(),
            &dead(),
            &index,
            &Version::parse("13.0.2").unwrap(),
        )
        .unwrap();
        assert!(matches!(source, Source::Wheels(_)), "{source}");
        assert!(why.unwrap().contains("did not answer"));
        // CUDA 12 has no wheels: the network error is the answer.
        let e = auto(
            &probe(),
            &dead(),
            &index,
            &Version::parse("12.8.1").unwrap(),
        )
        .unwrap_err();
        assert!(e.is_network(), "{e}");
    }

    #[test]
    fn a_reachable_nvidia_layout_gives_its_archives() {
        let mirror = tempfile::tempdir().unwrap();
        let listing = mirror
            .path()
            .join("compute/cuda/redist/redistrib_13.0.2.json");
        fs_err::create_dir_all(listing.parent().unwrap()).unwrap();
        fs_err::write(&listing, "{}").unwrap();
        let base = Location::parse(&mirror.path().display().to_string()).unwrap();
        let index = Location::parse("https://pypi.org/simple").unwrap();
        let (source, why) =
            auto(&probe(), &base, &index, &Version::parse("13.0.2").unwrap()).unwrap();
        assert!(matches!(source, Source::Redist(_)), "{source}");
        assert!(why.is_none());
    }
}
