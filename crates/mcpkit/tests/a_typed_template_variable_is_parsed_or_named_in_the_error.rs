//! A `#[resource]` template variable of another type than `String` (`id: i64`, `bool`, an
//! `Option`) is parsed from the URI's text; a value that does not parse is -32602 naming the
//! variable and the type it should have been, and the handler never runs.
#![cfg(all(feature = "macros", feature = "client"))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mcpkit::testing::TestPair;
use mcpkit::types::schema::ResourceContents;
use mcpkit::types::ErrorCode;
use mcpkit::{Client, Error, Server};

struct Notes {
    reads: Arc<AtomicUsize>,
}

#[mcpkit::tools]
impl Notes {
    /// One note, by number.
    #[resource("notes://{id}{?raw}", mime_type = "text/plain")]
    async fn note(&self, id: i64, raw: Option<bool>) -> String {
        self.reads.fetch_add(1, Ordering::SeqCst);
        format!("note {} (raw: {raw:?})", id + 1)
    }
}

fn text(contents: &[ResourceContents]) -> &str {
    match contents.first() {
        Some(ResourceContents::Text(t)) => &t.text,
        other => panic!("expected text contents, got {other:?}"),
    }
}

#[tokio::test]
async fn typed_variables_are_parsed_and_bad_values_named() {
    let reads = Arc::new(AtomicUsize::new(0));
    let server = Server::builder().tools(Notes { reads: reads.clone() }).build();
    let pair = TestPair::connect(server, Client::builder()).await.unwrap();

    let r = pair.client.read_resource("notes://41").await.unwrap();
    assert_eq!(text(&r.contents), "note 42 (raw: None)");
    let r = pair.client.read_resource("notes://-1?raw=true").await.unwrap();
    assert_eq!(text(&r.contents), "note 0 (raw: Some(true))");

    for (uri, names) in [
        ("notes://abc", ["`id`", "\"abc\" is not an integer"]),
        ("notes://99999999999999999999", ["`id`", "is not an integer"]),
        ("notes://7?raw=maybe", ["`raw`", "\"maybe\" is not true or false"]),
    ] {
        let got = pair.client.read_resource(uri).await;
        let Err(Error::Rpc(e)) = got else {
            panic!("{uri}: expected an error, got {got:?}");
        };
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{uri}: {e:?}");
        for name in names {
            assert!(e.message.contains(name), "{uri}: {:?} lacks {name}", e.message);
        }
        assert!(e.message.contains(uri), "{uri}: {:?}", e.message);
    }
    assert_eq!(reads.load(Ordering::SeqCst), 2, "the handler ran on a bad value");
}
