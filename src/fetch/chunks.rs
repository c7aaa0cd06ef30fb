//! The channel between a download's pump and its consumer: pieces of the body in order, read in
//! place on the consumer's side.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::mpsc;

use bytes::Bytes;

/// A piece of a body on its way to the consumer.
pub(super) enum Chunk {
    /// `buf[..len]`, one of the pump's own buffers ([`super::stream::CHUNK`] long), handed back
    /// once read so the pump can read into it again.
    Owned { buf: Vec<u8>, len: usize },
    /// The HTTP client's own buffers, in order (about a [`super::stream::CHUNK`] in all).
    Shared(VecDeque<Bytes>),
}

impl Chunk {
    fn empty() -> Chunk {
        Chunk::Shared(VecDeque::new())
    }
}

/// A `Read` (and `BufRead`: the consumer reads the pump's buffers in place) over chunks
/// arriving on a channel; each used buffer of the pump's own goes back to it on `back`.
pub(super) struct ChannelReader {
    rx: mpsc::Receiver<Chunk>,
    back: mpsc::Sender<Vec<u8>>,
    cur: Chunk,
    /// Where reading stands in `cur` (in its first buffer, for shared pieces).
    pos: usize,
}

impl ChannelReader {
    pub(super) fn new(rx: mpsc::Receiver<Chunk>, back: mpsc::Sender<Vec<u8>>) -> Self {
        ChannelReader {
            rx,
            back,
            cur: Chunk::empty(),
            pos: 0,
        }
    }

    /// Whether everything in `cur` has been read (read-out shared pieces are let go).
    fn exhausted(&mut self) -> bool {
        match &mut self.cur {
            Chunk::Owned { len, .. } => self.pos >= *len,
            Chunk::Shared(pieces) => {
                while pieces.front().is_some_and(|p| self.pos >= p.len()) {
                    pieces.pop_front();
                    self.pos = 0;
                }
                pieces.is_empty()
            }
        }
    }
}

impl io::BufRead for ChannelReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.exhausted() {
            match self.rx.recv() {
                Ok(chunk) => {
                    let used = std::mem::replace(&mut self.cur, chunk);
                    self.pos = 0;
                    if let Chunk::Owned { buf, .. } = used {
                        // The pump may have stopped: then the buffer is simply dropped.
                        let _ = self.back.send(buf);
                    }
                }
                Err(_) => return Ok(&[]),
            }
        }
        Ok(match &self.cur {
            Chunk::Owned { buf, len } => &buf[self.pos..*len],
            Chunk::Shared(pieces) => &pieces[0][self.pos..],
        })
    }

    fn consume(&mut self, n: usize) {
        let len = match &self.cur {
            Chunk::Owned { len, .. } => *len,
            Chunk::Shared(pieces) => pieces.front().map_or(0, Bytes::len),
        };
        self.pos = (self.pos + n).min(len);
    }
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = io::BufRead::fill_buf(self)?;
        let n = out.len().min(avail.len());
        out[..n].copy_from_slice(&avail[..n]);
        io::BufRead::consume(self, n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    /// Owned buffers and shared pieces (empty ones among them) read back as one stream, in
    /// order, and the owned buffers go back to the pump once read.
    #[test]
    fn owned_and_shared_chunks_read_back_in_order() {
        let (tx, rx) = mpsc::sync_channel(8);
        let (back, spares) = mpsc::channel();
        let mut buf = vec![0u8; 8];
        buf[..3].copy_from_slice(b"abc");
        tx.send(Chunk::Owned { buf, len: 3 }).unwrap();
        tx.send(Chunk::Shared(VecDeque::from([
            Bytes::from_static(b"de"),
            Bytes::new(),
            Bytes::from_static(b"fgh"),
        ])))
        .unwrap();
        tx.send(Chunk::Shared(VecDeque::new())).unwrap();
        let mut buf = vec![0u8; 8];
        buf[..1].copy_from_slice(b"i");
        tx.send(Chunk::Owned { buf, len: 1 }).unwrap();
        drop(tx);
        let mut r = ChannelReader::new(rx, back);
        // In place: the first buffer as it is, then part of a shared piece.
        assert_eq!(r.fill_buf().unwrap(), b"abc");
        r.consume(3);
        assert_eq!(r.fill_buf().unwrap(), b"de");
        r.consume(1);
        let mut rest = String::new();
        r.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "efghi");
        assert!(r.fill_buf().unwrap().is_empty());
        drop(r);
        // The first buffer came back when the next chunk arrived; the last one was still being
        // read when the channel closed.
        assert_eq!(
            spares.iter().map(|b: Vec<u8>| b.len()).collect::<Vec<_>>(),
            [8]
        );
    }
}
