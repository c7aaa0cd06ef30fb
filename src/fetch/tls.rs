//! The TLS settings every download client shares: the system's root certificates, read once per
//! process.
//!
//! reqwest reads the native root store (`/etc/ssl/certs`: about 150 files and the bundle, each
//! parsed) in every `Client::build`, and an install builds three clients (the reachability
//! probe, the index pages, the downloads): measured on the 2-core machine, 60–90 ms of the
//! install's serial start went there, before the first byte of a wheel was asked for
//! (docs/benchmarks.md). Here the store is read once, on a thread of its own started before
//! detection ([`warm`]), and each client gets a clone of the one configuration.
//!
//! The configuration is the one reqwest builds itself with `rustls-tls-native-roots` and no
//! `http2`: ring, TLS 1.2 and 1.3, the native roots (a certificate rustls cannot parse is
//! skipped; none valid among some invalid ones is an error), hostnames verified, SNI, and ALPN
//! `http/1.1`.

use std::sync::{Arc, OnceLock};

static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();

/// Starts reading the root store on a thread of its own, so that the first client built finds
/// it read. Cheap to call again.
pub fn warm() {
    if CONFIG.get().is_none() {
        // Detached: a process that ends before it finishes loses nothing.
        let _ = std::thread::Builder::new()
            .name("tls-roots".into())
            .spawn(|| {
                let _ = config();
            });
    }
}

/// The shared client configuration (read on first use; a caller arriving while [`warm`]'s
/// thread reads it waits for that read instead of starting another).
pub fn config() -> Result<rustls::ClientConfig, String> {
    CONFIG
        .get_or_init(|| build().map(Arc::new))
        .as_ref()
        .map(|c| c.as_ref().clone())
        .map_err(Clone::clone)
}

/// How many times the store was read (the tests hold it to one).
#[cfg(test)]
static READS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn build() -> Result<rustls::ClientConfig, String> {
    #[cfg(test)]
    READS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let started = std::time::Instant::now();
    let mut roots = rustls::RootCertStore::empty();
    let loaded = rustls_native_certs::load_native_certs();
    let (valid, invalid) = roots.add_parsable_certificates(loaded.certs);
    if valid == 0 && invalid > 0 {
        let why: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
        return Err(if why.is_empty() {
            "zero valid certificates found in native root store".to_owned()
        } else {
            why.join("; ")
        });
    }
    // A provider the process installed wins, as in reqwest; otherwise ring, reqwest's own.
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(rustls::ALL_VERSIONS)
        .map_err(|e| format!("TLS versions: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    tracing::debug!(
        valid,
        invalid,
        ms = started.elapsed().as_millis() as u64,
        "read the native root certificates"
    );
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However many clients are built, from however many threads, while [`warm`]'s thread may
    /// still be reading: the store is read once. The configuration is reqwest's own.
    #[test]
    fn the_store_is_read_once_and_shared() {
        warm();
        let configs: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4).map(|_| s.spawn(config)).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(READS.load(std::sync::atomic::Ordering::SeqCst), 1);
        for c in configs {
            let c = c.expect("this machine's root store reads");
            assert_eq!(c.alpn_protocols, vec![b"http/1.1".to_vec()]);
            assert!(c.enable_sni);
        }
    }

    /// A client built on the shared configuration is accepted by reqwest (a configuration of
    /// another TLS backend would be refused at build).
    #[test]
    fn reqwest_takes_the_shared_configuration() {
        reqwest::blocking::Client::builder()
            .use_preconfigured_tls(config().unwrap())
            .build()
            .expect("reqwest builds a rustls client from it");
    }
}
