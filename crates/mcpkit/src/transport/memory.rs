//! A connected in-memory pair, for tests: what one side writes, the other reads, framed exactly
//! as on stdio.

use tokio::io::{BufReader, BufWriter, DuplexStream, ReadHalf, WriteHalf};

use super::stdio::LineTransport;

/// One end of an in-memory pair.
pub type MemoryTransport = LineTransport<BufReader<ReadHalf<DuplexStream>>, BufWriter<WriteHalf<DuplexStream>>>;

/// Two connected transports.
pub fn pair() -> (MemoryTransport, MemoryTransport) {
    let (a, b) = tokio::io::duplex(256 * 1024);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    (LineTransport::new(ar, aw), LineTransport::new(br, bw))
}
