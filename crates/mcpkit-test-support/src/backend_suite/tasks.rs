//! The behaviour every [`TaskStore`] must have, as one function a store's tests call: the
//! in-memory store runs it, and so must any database store.
#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "a behaviour suite fails like a test: it panics on the first broken rule"
)]

use std::collections::BTreeMap;
use std::time::Duration;

use mcpkit::types::schema::{ElicitParams, InputRequest, JsonObject, TaskStatus};
use mcpkit::types::ErrorObject;
use serde_json::json;

use mcpkit::server::backend::{
    Applied, Lookup, TaskChange, TaskLimits, TaskOutcome, TaskOwner, TaskProgress, TaskRecord, TaskRequest, TaskStore,
    TaskStoreError,
};

/// Milliseconds since the Unix epoch: the clock every store's records are stamped with.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn record(id: &str, owner: &TaskOwner, ttl_ms: u64) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        id: id.to_owned(),
        owner: owner.clone(),
        client: None,
        status: TaskStatus::Working,
        status_message: None,
        created_ms: now,
        updated_ms: now,
        expires_ms: Some(now + ttl_ms),
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

fn ask(keys: &[&str]) -> BTreeMap<String, InputRequest> {
    keys.iter()
        .map(|k| {
            let p: ElicitParams = serde_json::from_value(json!({
                "message": "?", "requestedSchema": { "type": "object", "properties": {} }
            }))
            .expect("elicitation params");
            ((*k).to_owned(), InputRequest::Elicit(p))
        })
        .collect()
}

fn answers(keys: &[&str]) -> JsonObject {
    keys.iter()
        .map(|k| ((*k).to_owned(), json!({ "action": "accept", "content": {} })))
        .collect()
}

fn status(a: &Applied) -> Option<TaskStatus> {
    match a {
        Applied::Changed(r) | Applied::Unchanged(r) => Some(r.status),
        _ => None,
    }
}

/// A task of `client` (counted against its share), owned by the client itself.
fn client_record(id: &str, client: &str, ttl_ms: u64) -> TaskRecord {
    TaskRecord {
        client: Some(client.to_owned()),
        ..record(id, &TaskOwner(client.to_owned()), ttl_ms)
    }
}

/// Run the task store behaviour suite against stores made by `make(limits)`; panics, naming
/// the broken rule, on the first difference. Takes about half a second (it waits for a TTL).
pub async fn check_task_store<S: TaskStore>(make: impl Fn(TaskLimits) -> S) {
    let alice = TaskOwner("alice".into());
    let bob = TaskOwner("bob".into());
    let store = make(TaskLimits::new(16, 16, 1 << 20));

    // Visible once created, to its owner only; unknown ids are missing.
    store.create(record("a1", &alice, 60_000)).await.expect("create");
    assert!(
        matches!(store.get("a1", &alice).await, Ok(Lookup::Found(r)) if r.id == "a1"),
        "a created task is visible"
    );
    assert!(
        matches!(store.get("a1", &bob).await, Ok(Lookup::Missing)),
        "another owner's task is missing"
    );
    assert!(
        matches!(store.get("nope", &alice).await, Ok(Lookup::Missing)),
        "an unknown task is missing"
    );
    assert!(
        matches!(
            store.update("a1", Some(&bob), TaskChange::Cancel).await,
            Ok(Applied::Missing)
        ),
        "another owner cannot cancel"
    );

    // Input rounds: partial answers keep it waiting, unknown keys are ignored, the last answer
    // makes it working again.
    let parked = store
        .update(
            "a1",
            None,
            TaskChange::InputRequired {
                pending: ask(&["k1", "k2"]),
                handler_state: Some(json!(7)),
            },
        )
        .await
        .expect("park");
    assert_eq!(status(&parked), Some(TaskStatus::InputRequired), "parked for input");
    let ignored = store
        .update("a1", Some(&alice), TaskChange::Answer(answers(&["zz"])))
        .await
        .expect("answer");
    assert!(
        matches!(ignored, Applied::Unchanged(_)),
        "an answer to no pending key changes nothing"
    );
    let partial = store
        .update("a1", Some(&alice), TaskChange::Answer(answers(&["k1"])))
        .await
        .expect("answer");
    match &partial {
        Applied::Changed(r) => {
            assert_eq!(r.status, TaskStatus::InputRequired, "still waiting for k2");
            assert!(
                r.pending.contains_key("k2") && !r.pending.contains_key("k1"),
                "k1 answered, k2 pending"
            );
        }
        other => panic!("a partial answer changes the task: {other:?}"),
    }
    let done = store
        .update("a1", Some(&alice), TaskChange::Answer(answers(&["k2"])))
        .await
        .expect("answer");
    match &done {
        Applied::Changed(r) => {
            assert_eq!(r.status, TaskStatus::Working, "all answered: working again");
            assert!(
                r.answers.contains_key("k1") && r.answers.contains_key("k2"),
                "answers are kept"
            );
            assert_eq!(r.handler_state, Some(json!(7)), "handler state is kept");
        }
        other => panic!("the last answer changes the task: {other:?}"),
    }

    // Progress, then the end; a finished task never changes again, and cancelling it is no
    // change (the caller acknowledges it anyway).
    let p = TaskProgress {
        progress: 1.0,
        total: Some(2.0),
    };
    store
        .update("a1", None, TaskChange::Progress(p.clone(), Some("half".into())))
        .await
        .expect("progress");
    let result: JsonObject = serde_json::from_value(json!({ "content": [] })).expect("object");
    let fin = store
        .update("a1", None, TaskChange::Finished(TaskOutcome::Completed(result)))
        .await
        .expect("finish");
    assert_eq!(status(&fin), Some(TaskStatus::Completed), "finished");
    let again = store
        .update("a1", Some(&alice), TaskChange::Cancel)
        .await
        .expect("cancel");
    assert!(
        matches!(&again, Applied::Unchanged(r) if r.status == TaskStatus::Completed),
        "a finished task stays finished"
    );
    match store.get("a1", &alice).await {
        Ok(Lookup::Found(r)) => {
            assert_eq!(r.progress, Some(p), "progress is kept");
            assert!(r.detailed().result.is_some(), "the result is inlined");
        }
        other => panic!("a finished task is kept until its TTL: {other:?}"),
    }

    // Cancelled while running: the handler's late result does not undo it.
    store.create(record("a2", &alice, 60_000)).await.expect("create");
    let c = store
        .update("a2", Some(&alice), TaskChange::Cancel)
        .await
        .expect("cancel");
    assert_eq!(status(&c), Some(TaskStatus::Cancelled), "cancelled");
    let late = ErrorObject::internal("late");
    let l = store
        .update("a2", None, TaskChange::Finished(TaskOutcome::Failed(late)))
        .await
        .expect("finish");
    assert_eq!(
        status(&l),
        Some(TaskStatus::Cancelled),
        "a cancelled task stays cancelled"
    );

    // Expiry: after its TTL a task is expired to its owner, missing to anyone else.
    store.create(record("a3", &alice, 150)).await.expect("create");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        matches!(store.get("a3", &alice).await, Ok(Lookup::Expired)),
        "an expired task says so to its owner"
    );
    assert!(
        matches!(store.get("a3", &bob).await, Ok(Lookup::Missing)),
        "and is missing to others"
    );
    assert!(
        matches!(
            store.update("a3", Some(&alice), TaskChange::Cancel).await,
            Ok(Applied::Expired)
        ),
        "an expired task cannot be changed"
    );

    // Bounded: a full store refuses, and a finished task does not make room before its TTL
    // ends (it is its client's until then); an expired one does.
    let small = make(TaskLimits::new(2, 16, 1 << 20));
    small.create(record("b1", &alice, 60_000)).await.expect("create");
    small.create(record("b2", &alice, 200)).await.expect("create");
    assert!(
        matches!(
            small.create(record("b3", &bob, 60_000)).await,
            Err(TaskStoreError::Full)
        ),
        "a full store refuses"
    );
    let result: JsonObject = JsonObject::new();
    small
        .update("b1", None, TaskChange::Finished(TaskOutcome::Completed(result)))
        .await
        .expect("finish");
    assert!(
        matches!(
            small.create(record("b3", &bob, 60_000)).await,
            Err(TaskStoreError::Full)
        ),
        "a finished task is kept for its whole TTL, never evicted for another's"
    );
    assert!(
        matches!(small.get("b1", &alice).await, Ok(Lookup::Found(_))),
        "the finished task is still there"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    small
        .create(record("b3", &bob, 60_000))
        .await
        .expect("an expired task makes room");

    // Per client: one client at its share of tasks is refused, naming the limit; another
    // client is not affected; the client's expired tasks give its share back.
    let shared = make(TaskLimits::new(100, 2, 1 << 20));
    shared
        .create(client_record("c1", "peer:10.0.0.1", 200))
        .await
        .expect("create");
    shared
        .create(client_record("c2", "peer:10.0.0.1", 60_000))
        .await
        .expect("create");
    match shared.create(client_record("c3", "peer:10.0.0.1", 60_000)).await {
        Err(e @ TaskStoreError::ClientFull { tasks: 2, .. }) => {
            assert!(
                e.to_string().contains("at most 2 tasks"),
                "the error names the limit: {e}"
            );
        }
        other => panic!("a client at its share is refused, got {other:?}"),
    }
    shared
        .create(client_record("d1", "peer:10.0.0.2", 60_000))
        .await
        .expect("another client still makes tasks");
    shared
        .create(record("n1", &alice, 60_000))
        .await
        .expect("a task of no named client counts only against the store");
    tokio::time::sleep(Duration::from_millis(300)).await;
    shared
        .create(client_record("c3", "peer:10.0.0.1", 60_000))
        .await
        .expect("an expired task gives its client's share back");

    // Per client, in bytes: what a client's tasks keep (their arguments) is bounded too.
    let bytes = make(TaskLimits::new(100, 100, 4096));
    let mut big = client_record("e1", "peer:10.0.0.3", 60_000);
    big.request.arguments = Some(json!({ "text": "x".repeat(3000) }));
    bytes.create(big.clone()).await.expect("within the bytes");
    big.id = "e2".into();
    assert!(
        matches!(
            bytes.create(big).await,
            Err(TaskStoreError::ClientFull { bytes: 4096, .. })
        ),
        "a client over its bytes is refused"
    );
    bytes
        .create(client_record("e3", "peer:10.0.0.4", 60_000))
        .await
        .expect("another client's bytes are its own");
}
