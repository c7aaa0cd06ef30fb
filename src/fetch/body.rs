//! An artifact's body read straight from the HTTP client's own buffers.
//!
//! Documents (index pages, JSON) go through reqwest's blocking client; artifacts (hundreds of
//! megabytes) do not. The blocking reader runs the connection on reqwest's runtime thread and
//! copies every frame into the caller's buffer: 2.5% of a wheel install's CPU for the copy, and
//! a thread hop for each frame (docs/benchmarks.md, "The body without the copy"). Here each
//! response has a current-thread runtime of its own, driven by whichever thread pulls the body:
//! the socket is read on the pump's thread, and the client's buffers (`Bytes`) travel to the
//! unpacker as they are.

use std::io::{self, Read};

use bytes::{Buf, Bytes};

use super::FetchError;

/// A response body and the runtime that drives its connection.
pub(super) struct Pieces {
    // Declared first, so it is dropped before the runtime its connection runs on.
    resp: reqwest::Response,
    rt: tokio::runtime::Runtime,
}

impl Pieces {
    /// Sends `req` on a runtime made for it; the response's body is then read with [`next`].
    ///
    /// [`next`]: Pieces::next
    pub(super) fn send(url: &str, req: reqwest::RequestBuilder) -> Result<Pieces, FetchError> {
        // Fails only when the process cannot make an epoll instance (out of file descriptors).
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        // Inside the runtime: the request's timers are made when it is sent.
        match rt.block_on(async { req.send().await }) {
            Ok(resp) => Ok(Pieces { resp, rt }),
            Err(source) => {
                // Not waiting for a name lookup still running on the runtime's blocking thread
                // (a connect timeout comes before a hung resolver's own).
                rt.shutdown_background();
                Err(FetchError::transport(url, source))
            }
        }
    }

    /// The response's status, headers and Content-Length.
    pub(super) fn response(&self) -> &reqwest::Response {
        &self.resp
    }

    /// The next piece of the body as the client received it; `None` at its end. An error keeps
    /// reqwest's (inside an `io::Error`), so its cause is read as a blocking read's would be.
    pub(super) fn next(&mut self) -> io::Result<Option<Bytes>> {
        self.rt
            .block_on(self.resp.chunk())
            .map_err(io::Error::other)
    }
}

/// [`Pieces`] as a reader, for the decoders of a body the server compressed anyway.
pub(super) struct PiecesReader {
    body: Pieces,
    /// What was not yet read of the last piece.
    rest: Bytes,
}

impl PiecesReader {
    pub(super) fn new(body: Pieces) -> Self {
        PiecesReader {
            body,
            rest: Bytes::new(),
        }
    }
}

impl Read for PiecesReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.rest.is_empty() {
            match self.body.next()? {
                Some(piece) => self.rest = piece,
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.rest.len());
        out[..n].copy_from_slice(&self.rest[..n]);
        self.rest.advance(n);
        Ok(n)
    }
}

/// An artifact's body as the pump takes it.
pub(super) enum Body {
    /// The file's own bytes, in the client's buffers.
    Pieces(Pieces),
    /// A body the server compressed although cudaup asked it not to, decoded on the way.
    Decoded(Box<dyn Read + Send>),
}
