//! Every number setting is range-checked (issue 33, finding 8): a timeout of 0 or of 2^63
//! seconds, retries past a hundred, a zero byte limit are settings errors (exit code 2), never
//! instant timeouts or an overflow panic; the echoed value has its control characters escaped.

use super::*;

fn with(name: &str, value: &str) -> Process {
    Process::with_vars(vec![(name.to_owned(), value.to_owned())], Path::new("/"))
}

fn fetch(process: &Process) -> Result<Fetcher, SettingsError> {
    let cancel = Arc::new(AtomicBool::new(false));
    fetcher(
        process,
        Path::new("/nonexistent/cache"),
        false,
        cancel,
        Arc::new(crate::world::progress::Silent),
    )
}

fn probe(process: &Process) -> Result<Fetcher, SettingsError> {
    let cancel = Arc::new(AtomicBool::new(false));
    probe_fetcher(process, Path::new("/nonexistent/cache"), false, cancel)
}

#[test]
fn timeouts_are_a_second_to_a_day() {
    for bad in [
        "0",
        "86401",
        "9223372036854775808",
        "18446744073709551615",
        "-1",
        "1e3",
    ] {
        for var in [vars::CUDAUP_HTTP_TIMEOUT, vars::CUDAUP_PROBE_TIMEOUT] {
            let p = with(var, bad);
            let e = if var == vars::CUDAUP_HTTP_TIMEOUT {
                fetch(&p).err()
            } else {
                probe(&p).err()
            };
            let e = e.unwrap_or_else(|| panic!("{var}={bad} was taken"));
            assert!(e.to_string().contains("from 1 to 86400"), "{e}");
            assert_eq!(
                crate::error::Error::from(e).exit_code(),
                crate::error::ExitCode::Usage
            );
        }
    }
    for good in ["1", "30", "86400", " 60 "] {
        assert!(
            fetch(&with(vars::CUDAUP_HTTP_TIMEOUT, good)).is_ok(),
            "{good}"
        );
        assert!(
            probe(&with(vars::CUDAUP_PROBE_TIMEOUT, good)).is_ok(),
            "{good}"
        );
    }
}

#[test]
fn retries_and_byte_limits_are_bounded() {
    for (var, bad) in [
        (vars::CUDAUP_HTTP_RETRIES, "101"),
        (vars::CUDAUP_HTTP_RETRIES, "4294967295"),
        (vars::CUDAUP_MAX_DOWNLOAD_BYTES, "0"),
    ] {
        assert!(fetch(&with(var, bad)).is_err(), "{var}={bad}");
    }
    assert!(max_unpacked(&with(vars::CUDAUP_MAX_UNPACKED_BYTES, "0")).is_err());
    assert!(fetch(&with(vars::CUDAUP_HTTP_RETRIES, "0")).is_ok());
}

#[test]
fn a_value_with_control_characters_is_echoed_escaped() {
    let Err(e) = fetch(&with(vars::CUDAUP_HTTP_TIMEOUT, "5\r\x1b[2Jrm -rf ~")) else {
        panic!("taken")
    };
    let text = e.to_string();
    assert!(!text.chars().any(|c| c.is_control()), "{text:?}");
    assert!(text.contains("\\r\\u{1b}"), "{text}");
}
