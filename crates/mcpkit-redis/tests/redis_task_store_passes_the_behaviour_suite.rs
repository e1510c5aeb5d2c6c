//! The Redis task store passes the behaviour suite every task store must pass (the same function
//! the in-memory store's test calls), against a real `redis-server`; and two stores on one Redis
//! (two instances) see each other's tasks and share one bound.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcpkit::server::backend::{Lookup, TaskLimits, TaskOwner, TaskRecord, TaskRequest, TaskStore, TaskStoreError};
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
    check_task_store(|limits| {
        let prefix = format!("suite{}", n.fetch_add(1, Ordering::Relaxed));
        redis.with_prefix(&prefix).unwrap().task_store(limits)
    })
    .await;
}

fn record(id: &str, client: Option<&str>) -> TaskRecord {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    TaskRecord {
        id: id.into(),
        owner: TaskOwner("alice".into()),
        client: client.map(str::to_owned),
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
    let limits = TaskLimits::new(3, 1, 1 << 20);
    let a = Redis::connect(&server.url(), "mcp").await.unwrap().task_store(limits);
    let b = Redis::connect(&server.url(), "mcp").await.unwrap().task_store(limits);
    let alice = TaskOwner("alice".into());
    a.create(record("t1", Some("peer:10.0.0.1"))).await.unwrap();
    assert!(matches!(b.get("t1", &alice).await, Ok(Lookup::Found(r)) if r.id == "t1"));
    assert!(
        matches!(
            b.create(record("t0", Some("peer:10.0.0.1"))).await,
            Err(TaskStoreError::ClientFull { tasks: 1, .. })
        ),
        "a client's share holds across instances"
    );
    b.create(record("t2", None)).await.unwrap();
    b.create(record("t3", Some("peer:10.0.0.2"))).await.unwrap();
    assert!(
        matches!(a.create(record("t4", None)).await, Err(TaskStoreError::Full)),
        "the bound holds across instances"
    );
    // Key names carry no client bytes.
    for key in server.keys("*") {
        assert!(
            !key.contains("t1") && !key.contains("t2") && !key.contains("10.0.0"),
            "{key}"
        );
    }
    // Another deployment (prefix) on the same Redis sees nothing.
    let other = Redis::connect(&server.url(), "other").await.unwrap().task_store(limits);
    assert!(matches!(other.get("t1", &alice).await, Ok(Lookup::Missing)));
}
