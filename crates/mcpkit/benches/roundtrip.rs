//! Hot-path benchmarks (see BENCHMARKS.md):
//! - `parse/<frame>`: stage-1 frame classification, and classification plus decoding the params
//!   (or result) into their typed struct, against a plain `serde_json::Value` parse of the same
//!   bytes — reported in bytes per second, for five frames typical of a session;
//! - `tools_call_in_memory`: a full in-memory `tools/call` round trip (client serialize → server
//!   parse, dispatch, handler, serialize → client parse), sequential and 64 in flight;
//! - `tools_list_1000`: `tools/list` of a server with 1,000 tools, in one page and in pages of 100.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mcpkit::server::{Args, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::{CallToolParams, CallToolResult, InitializeParams, ProgressParams};
use mcpkit::types::MessageRef;
use mcpkit::{Client, Server};

const CALL: &str = r#"{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello, this is a typical tool argument of moderate length"},"_meta":{"progressToken":"abc"}}}"#;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"example-client","title":"Example Client","version":"1.2.3"}}}"#;
const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"abc","progress":42,"total":100,"message":"working on it"}}"#;
const RESULT: &str = r#"{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hello, this is a typical tool argument of moderate length"}],"isError":false}}"#;

/// A `tools/call` whose arguments carry ~4 KiB of text with escapes (a file excerpt, say).
fn large_call() -> String {
    let text = "line of source code with \"quotes\" and a tab\there\n".repeat(80);
    serde_json::json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "write_file", "arguments": {"path": "/tmp/x.rs", "content": text}}
    })
    .to_string()
}

/// Classify, then decode the params (or result) into the struct the engine would.
fn decode(frame: &[u8]) -> usize {
    match mcpkit::types::jsonrpc::parse(frame).unwrap() {
        MessageRef::Request(r) => {
            let params = r.params.unwrap().get();
            match &*r.method {
                "tools/call" => std::hint::black_box(serde_json::from_str::<CallToolParams>(params).unwrap())
                    .name
                    .len(),
                "initialize" => {
                    std::hint::black_box(serde_json::from_str::<InitializeParams>(params).unwrap());
                    1
                }
                other => panic!("no decoder for {other}"),
            }
        }
        MessageRef::Notification(n) => {
            std::hint::black_box(serde_json::from_str::<ProgressParams>(n.params.unwrap().get()).unwrap());
            2
        }
        MessageRef::Response(r) => {
            std::hint::black_box(serde_json::from_str::<CallToolResult>(r.outcome.unwrap().get()).unwrap());
            3
        }
    }
}

fn parse(c: &mut Criterion) {
    let large = large_call();
    let frames: [(&str, &str); 5] = [
        ("tools_call", CALL),
        ("tools_call_4k_args", &large),
        ("initialize", INITIALIZE),
        ("progress_notification", PROGRESS),
        ("tools_call_result", RESULT),
    ];
    for (name, frame) in frames {
        let mut g = c.benchmark_group(format!("parse/{name}"));
        g.throughput(Throughput::Bytes(frame.len() as u64));
        g.bench_function("mcpkit_classify", |b| {
            b.iter(|| {
                std::hint::black_box(mcpkit::types::jsonrpc::parse(std::hint::black_box(frame.as_bytes())).unwrap())
            })
        });
        g.bench_function("mcpkit_classify_and_decode", |b| {
            b.iter(|| decode(std::hint::black_box(frame.as_bytes())))
        });
        g.bench_function("serde_json_value", |b| {
            b.iter(|| {
                let v: serde_json::Value = serde_json::from_slice(std::hint::black_box(frame.as_bytes())).unwrap();
                std::hint::black_box(v)
            })
        });
        g.finish();
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    message: String,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn roundtrip(c: &mut Criterion) {
    let rt = runtime();
    let server = Server::builder()
        .tool(ToolDef::new("echo", |Args(a): Args<Echo>| async move { a.message }).description("echo"))
        .build();
    let pair = rt.block_on(TestPair::connect(server, Client::builder())).unwrap();
    let args = serde_json::json!({"message": "hello, this is a typical tool argument of moderate length"});
    let mut g = c.benchmark_group("tools_call_in_memory");
    g.bench_function(BenchmarkId::from_parameter("sequential"), |b| {
        b.to_async(&rt)
            .iter(|| async { pair.client.call_tool("echo", &args).await.unwrap() })
    });
    g.throughput(Throughput::Elements(64));
    g.bench_function(BenchmarkId::from_parameter("64_in_flight"), |b| {
        b.to_async(&rt).iter(|| async {
            let calls = (0..64).map(|_| pair.client.call_tool("echo", &args));
            futures_util::future::join_all(calls).await
        })
    });
    g.finish();
}

/// A server with 1,000 tools (each with a description and an input schema), listed by a client.
fn tools_list(c: &mut Criterion) {
    let rt = runtime();
    let build = |page_size: usize| {
        let mut builder = Server::builder().page_size(page_size);
        for i in 0..1000 {
            builder = builder.tool(
                ToolDef::new(format!("echo_{i:04}"), |Args(a): Args<Echo>| async move { a.message })
                    .description(format!("Echo number {i}: returns the message it is given")),
            );
        }
        builder.build()
    };
    let mut g = c.benchmark_group("tools_list_1000");
    g.throughput(Throughput::Elements(1000));
    for (label, page_size) in [("one_page", 1000), ("pages_of_100", 100)] {
        let pair = rt
            .block_on(TestPair::connect(build(page_size), Client::builder()))
            .unwrap();
        g.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.to_async(&rt).iter(|| async {
                let tools = pair.client.list_all_tools().await.unwrap();
                assert_eq!(tools.len(), 1000);
                tools
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = parse, roundtrip, tools_list
}
criterion_main!(benches);
