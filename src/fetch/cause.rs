//! What went wrong on the wire, read from an error's source chain with typed downcasts
//! (`io::ErrorKind`, `hyper::Error`, `reqwest::Error`, `rustls::Error`), never by matching
//! message text: "error sending request" and "error decoding response body" are reqwest's
//! outermost words and say nothing a user can act on.

use std::error::Error as StdError;
use std::fmt;
use std::io;

/// The cause of a transport or body-read failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// No answer in time (the connect timeout, or the read timeout between bytes).
    Timeout {
        /// While connecting, rather than waiting for bytes.
        connecting: bool,
    },
    /// Nothing listens there.
    Refused,
    /// The peer reset or aborted the connection.
    Reset,
    /// The connection closed before the response or its body was complete.
    Closed,
    /// The host name does not resolve.
    Dns {
        /// The host.
        host: String,
        /// The resolver's answer.
        detail: String,
    },
    /// The TLS handshake or the certificate failed.
    Tls(String),
    /// No route to the host or network.
    Unreachable,
    /// Something else; the innermost message.
    Other(String),
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Timeout { connecting: true } => {
                write!(f, "timed out connecting (no answer from the server)")
            }
            Cause::Timeout { connecting: false } => write!(
                f,
                "timed out waiting for the server to send more ({} sets the read timeout)",
                crate::world::vars::CUDAUP_HTTP_TIMEOUT
            ),
            Cause::Refused => write!(f, "connection refused (nothing is listening there)"),
            Cause::Reset => write!(f, "the connection was reset by the server or the network"),
            Cause::Closed => write!(
                f,
                "the server closed the connection before the transfer was complete"
            ),
            Cause::Dns { host, detail } => {
                write!(f, "the host name `{host}` does not resolve (DNS: {detail})")
            }
            Cause::Tls(detail) => write!(f, "TLS failed: {detail}"),
            Cause::Unreachable => write!(f, "no route to the host (the network is unreachable)"),
            Cause::Other(detail) => write!(f, "{detail}"),
        }
    }
}

/// The next error down the chain. An `io::Error` wrapping another error reports that error's
/// *source* as its own, skipping the wrapped error itself; this visits it.
fn next<'a>(err: &'a (dyn StdError + 'static)) -> Option<&'a (dyn StdError + 'static)> {
    if let Some(io) = err.downcast_ref::<io::Error>() {
        if let Some(inner) = io.get_ref() {
            return Some(inner);
        }
    }
    err.source()
}

fn from_io(e: &io::Error) -> Option<Cause> {
    use io::ErrorKind::*;
    Some(match e.kind() {
        TimedOut | WouldBlock => Cause::Timeout { connecting: false },
        ConnectionRefused => Cause::Refused,
        ConnectionReset | ConnectionAborted | BrokenPipe => Cause::Reset,
        UnexpectedEof => Cause::Closed,
        HostUnreachable | NetworkUnreachable | NetworkDown => Cause::Unreachable,
        _ => return None,
    })
}

impl Cause {
    /// Reads the cause of `err`. For a connection that failed without a telling error (a
    /// resolver failure surfaces as an uncategorised I/O error), `url`'s host is resolved again
    /// to tell a DNS failure from the rest.
    pub fn of(err: &(dyn StdError + 'static), url: Option<&str>) -> Cause {
        let mut connecting = false;
        let mut timeout = false;
        let mut closed = false;
        let mut innermost = err.to_string();
        let mut cur = Some(err);
        while let Some(e) = cur {
            if let Some(tls) = e.downcast_ref::<rustls::Error>() {
                return Cause::Tls(tls.to_string());
            }
            if let Some(io) = e.downcast_ref::<io::Error>() {
                if let Some(c) = from_io(io) {
                    return match c {
                        Cause::Timeout { .. } => Cause::Timeout { connecting },
                        c => c,
                    };
                }
            }
            if let Some(h) = e.downcast_ref::<hyper::Error>() {
                timeout |= h.is_timeout();
                closed |= h.is_incomplete_message() || h.is_closed() || h.is_canceled();
            }
            if let Some(r) = e.downcast_ref::<reqwest::Error>() {
                connecting |= r.is_connect();
                timeout |= r.is_timeout();
            }
            innermost = e.to_string();
            cur = next(e);
        }
        if timeout {
            return Cause::Timeout { connecting };
        }
        if closed {
            return Cause::Closed;
        }
        if connecting {
            if let Some(dns) = url.and_then(resolve_fails) {
                return dns;
            }
        }
        Cause::Other(innermost)
    }
}

/// Resolves the URL's host (names only, not IP literals): the resolver's own error if it fails.
fn resolve_fails(url: &str) -> Option<Cause> {
    use std::net::ToSocketAddrs;
    let url = reqwest::Url::parse(url).ok()?;
    let host = url.host_str()?.to_owned();
    if host.starts_with('[') || host.parse::<std::net::IpAddr>().is_ok() {
        return None;
    }
    let port = url.port_or_known_default().unwrap_or(443);
    match (host.as_str(), port).to_socket_addrs() {
        Ok(addrs) if addrs.len() > 0 => None,
        Ok(_) => Some(Cause::Dns {
            host,
            detail: "no addresses".into(),
        }),
        Err(e) => Some(Cause::Dns {
            host,
            detail: e.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_kinds_inside_wrappers_are_found() {
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "peer");
        let wrapped = io::Error::other(reset);
        assert_eq!(Cause::of(&wrapped, None), Cause::Reset);
        let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
        assert_eq!(Cause::of(&eof, None), Cause::Closed);
        let odd = io::Error::other("something odd");
        assert_eq!(Cause::of(&odd, None), Cause::Other("something odd".into()));
    }

    #[test]
    fn an_unresolvable_name_is_named() {
        let c = resolve_fails("https://nothing-here.invalid/x").unwrap();
        assert!(
            matches!(&c, Cause::Dns { host, .. } if host == "nothing-here.invalid"),
            "{c:?}"
        );
        assert_eq!(resolve_fails("http://127.0.0.1:1/x"), None);
    }
}
