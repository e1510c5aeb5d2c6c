//! Hot-path benchmarks: stage-1 frame classification against a plain `serde_json::Value` parse,
//! and a full in-memory `tools/call` round trip (client serialize → server parse, dispatch,
//! handler, serialize → client parse).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mcpkit::server::{Args, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::{Client, Server};

const CALL: &str = r#"{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello, this is a typical tool argument of moderate length"},"_meta":{"progressToken":"abc"}}}"#;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    message: String,
}

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(CALL.len() as u64));
    g.bench_function("mcpkit_classify", |b| {
        b.iter(|| {
            let m = mcpkit::types::jsonrpc::parse(std::hint::black_box(CALL.as_bytes())).unwrap();
            std::hint::black_box(m);
        })
    });
    g.bench_function("mcpkit_classify_and_decode_params", |b| {
        b.iter(|| {
            let m = mcpkit::types::jsonrpc::parse(std::hint::black_box(CALL.as_bytes())).unwrap();
            let mcpkit::types::MessageRef::Request(r) = m else {
                panic!()
            };
            let p: mcpkit::types::schema::CallToolParams = serde_json::from_str(r.params.unwrap().get()).unwrap();
            std::hint::black_box(p);
        })
    });
    g.bench_function("serde_json_value", |b| {
        b.iter(|| {
            let v: serde_json::Value = serde_json::from_slice(std::hint::black_box(CALL.as_bytes())).unwrap();
            std::hint::black_box(v);
        })
    });
    g.finish();
}

fn roundtrip(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
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

criterion_group!(benches, parse, roundtrip);
criterion_main!(benches);
