//! What a stream transport reads from the two ends of a frame it discards for being over the
//! size limit (`transport::discarded`): the request it answered, if its first and last KiB show
//! a response and its id. Fed an arbitrary frame cut into arbitrary chunks (the first byte sets
//! the chunk size). Properties: no panic; the answer does not depend on the chunking; an id is
//! only ever named for a frame whose bytes contain `"id"` and `"result"` or `"error"`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpkit::transport::oversized_reply_id_for_fuzzing;

fn contains(frame: &[u8], needle: &[u8]) -> bool {
    frame.windows(needle.len()).any(|w| w == needle)
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, frame)) = data.split_first() else { return };
    let chunked = oversized_reply_id_for_fuzzing(frame, usize::from(cut) + 1);
    let whole = oversized_reply_id_for_fuzzing(frame, frame.len());
    assert_eq!(chunked, whole, "chunking changed the answer");
    if whole.is_some() {
        assert!(contains(frame, b"\"id\""), "an id named without one");
        assert!(contains(frame, b"\"result\"") || contains(frame, b"\"error\""), "not a response");
    }
});
