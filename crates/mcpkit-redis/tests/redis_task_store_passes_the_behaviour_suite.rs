//! The Redis task store passes the behaviour suite every task store must pass (the same function
//! the in-memory store's test calls), against a real `redis-server`; and two stores on one Redis
//! (two instances) see each other's tasks and share one bound.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcpkit::server::backend::{Lookup, TaskOwner, TaskRecord, TaskRequest, TaskStore, TaskStoreError};
use mcpkit::types::schema::{JsonObject, TaskStatus};
use mcpkit_redis::Redis;
use mcpkit_test_support::backend_suite::check_task_store;
use mcpkit_test_support::redis::RedisProcess;

#[tokio::test]
async fn the_redis_store_behaves_as_every_task_store_must() {
    let server = RedisProcess::start();
    let redis = Redis::connect(&server.url(), "suite").await.unwrap();
    let n = AtomicUsize::new(0);
    // A fresh deployment prefix per store the suite makes: each starts empty.
    check_task_store(|capacity| {
        let prefix = format!("suite{}", n.fetch_add(1, Ordering::Relaxed));
        redis.with_prefix(&prefix).unwrap().task_store(capacity)
    })
    .await;
}

fn record(id: &str) -> TaskRecord {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    TaskRecord {
        id: id.into(),
        owner: TaskOwner("alice".into()),
        status: TaskStatus::Working,
        status_message: None,
        created_ms: now,
        updated_ms: now,
        expires_ms: Some(now + 60_000),
        poll_interval_ms: 100,
        progress: None,
        pending: BTreeMap::new(),
        answers: JsonObject::new(),
        handler_state: None,
        outcome: None,
        request: TaskRequest {
            tool: "t".into(),
            arguments: None,
            meta: None,
        },
    }
}

#[tokio::test]
async fn two_instances_share_tasks_and_one_bound() {
    let server = RedisProcess::start();
    let a = Redis::connect(&server.url(), "mcp").await.unwrap().task_store(2);
    let b = Redis::connect(&server.url(), "mcp").await.unwrap().task_store(2);
    let alice = TaskOwner("alice".into());
    a.create(record("t1")).await.unwrap();
    assert!(matches!(b.get("t1", &alice).await, Ok(Lookup::Found(r)) if r.id == "t1"));
    b.create(record("t2")).await.unwrap();
    assert!(
        matches!(a.create(record("t3")).await, Err(TaskStoreError::Full)),
        "the bound holds across instances"
    );
    // Key names carry no client bytes.
    for key in server.keys("*") {
        assert!(!key.contains("t1") && !key.contains("t2"), "{key}");
    }
    // Another deployment (prefix) on the same Redis sees nothing.
    let other = Redis::connect(&server.url(), "other").await.unwrap().task_store(2);
    assert!(matches!(other.get("t1", &alice).await, Ok(Lookup::Missing)));
}
