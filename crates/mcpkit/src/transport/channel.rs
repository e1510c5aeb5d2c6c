//! A frame reader fed by a channel: the incoming half of transports whose frames are produced
//! by other tasks (the HTTP server's request handlers, the HTTP client's response streams)
//! rather than read from one byte stream.

use std::io;

use tokio::sync::mpsc;

use super::{Extensions, Frame, FrameReader};

/// One item a producer hands a [`ChannelReader`].
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A frame, with what the transport knows about it (see [`FrameReader::take_extensions`]).
    Frame(Frame, Extensions),
    /// The connection cannot go on: the reader reports this error.
    #[cfg_attr(not(feature = "http-client"), allow(dead_code))]
    Failed(io::Error),
}

impl Inbound {
    /// A message without extensions.
    #[cfg_attr(not(feature = "http-client"), allow(dead_code))]
    pub(crate) fn message(frame: Vec<u8>) -> Inbound {
        Inbound::Frame(Frame::Message(frame), Extensions::default())
    }
}

/// The producers' end of a [`ChannelReader`].
pub(crate) type InboundSender = mpsc::UnboundedSender<Inbound>;

/// A connected sender and reader. The reader ends cleanly once every sender is dropped.
pub(crate) fn channel() -> (InboundSender, ChannelReader) {
    let (tx, rx) = mpsc::unbounded_channel();
    (
        tx,
        ChannelReader {
            rx,
            last: Extensions::default(),
        },
    )
}

/// The incoming half of a channel-backed transport: yields the frames its producers send, in
/// order, and the extensions of the message read last.
#[derive(Debug)]
pub(crate) struct ChannelReader {
    rx: mpsc::UnboundedReceiver<Inbound>,
    last: Extensions,
}

impl FrameReader for ChannelReader {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        match self.rx.recv().await {
            Some(Inbound::Frame(frame, extensions)) => {
                self.last = extensions;
                Ok(Some(frame))
            }
            Some(Inbound::Failed(e)) => Err(e),
            None => Ok(None),
        }
    }

    fn take_extensions(&mut self) -> Extensions {
        std::mem::take(&mut self.last)
    }
}
