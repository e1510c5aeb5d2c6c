//! The client's SSE reader (`transport::http_client`: the `sse-stream` decoder and the cursor
//! the client resumes from), fed an arbitrary body cut into arbitrary chunks. The first byte
//! sets the chunk size. Properties: no panic; every frame handed on is classified by the
//! envelope parser without panicking; the resume cursor is never an empty id.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use mcpkit::transport::http_client::sse_frames_for_fuzzing;
use mcpkit_types::jsonrpc;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, body)) = data.split_first() else { return };
    let size = usize::from(cut % 64) + 1;
    let chunks = body.chunks(size).map(Bytes::copy_from_slice).collect();
    let (frames, last_id, _retry) = futures_executor::block_on(sse_frames_for_fuzzing(chunks));
    for frame in &frames {
        assert!(!frame.is_empty());
        let _ = jsonrpc::parse(frame);
    }
    assert_ne!(last_id.as_deref(), Some(""));
    // The same body in one chunk gives the same frames.
    let whole = futures_executor::block_on(sse_frames_for_fuzzing(vec![Bytes::copy_from_slice(body)]));
    assert_eq!(whole.0, frames, "chunking changed the frames");
    assert_eq!(whole.1, last_id, "chunking changed the cursor");
});
