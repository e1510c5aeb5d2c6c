//! Input rounds (spec: 2026-07-28 `basic/patterns/mrtr`): what a handler asked of the client,
//! the answers it found, and the `input_required` reply with its sealed `requestState` while
//! any answer is missing.

use crate::sync::lock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use mcpkit_types::schema::{InputRequest, InputRequiredResult, JsonObject, META_SERVER_INFO, RESULT_INPUT_REQUIRED};
use mcpkit_types::ErrorObject;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::request_state::{RequestStateKeys, StatePayload};
use crate::wire::to_raw;

/// What the handler of one stateless request has asked of the client, and what it got
/// (spec: 2026-07-28 `basic/patterns/mrtr`).
#[derive(Debug, Default)]
pub(crate) struct InputState {
    /// Answers from earlier rounds (in `requestState`) and from this round's `inputResponses`.
    answers: JsonObject,
    /// Answers the handler read in this run: carried into the next `requestState`.
    used: Mutex<JsonObject>,
    /// Requests the handler made that have no answer yet.
    pending: Mutex<BTreeMap<String, InputRequest>>,
    /// Why an input call failed (missing capability, malformed answer), if one did.
    failure: Mutex<Option<ErrorObject>>,
    next_key: AtomicUsize,
    /// The handler's own state, from the previous round and for the next.
    handler_state: Mutex<Option<Value>>,
}

impl InputState {
    /// The state of a request: open its `requestState` (if any; sealed for `caller`, the
    /// verified caller's digest) and merge `inputResponses`.
    pub(crate) fn open(
        keys: &RequestStateKeys,
        method: &str,
        digest: &dyn Fn() -> String,
        caller: Option<&str>,
        state: Option<&str>,
        responses: Option<JsonObject>,
    ) -> Result<InputState, ErrorObject> {
        let mut s = InputState::default();
        let mut asked = None;
        if let Some(state) = state {
            let payload = keys.open(state, method, &digest(), caller).map_err(|e| {
                ErrorObject::invalid_params(format!("Invalid requestState: {e}"))
                    .with_data(json!({ "path": "requestState" }))
            })?;
            s.answers = payload.a;
            *lock(&s.handler_state) = payload.s;
            asked = payload.q;
        }
        // Sealed answers win: a retry cannot rewrite what was answered in an earlier round, and
        // input the last round did not ask for is ignored (spec: 2026-07-28 multi round-trip
        // requests).
        for (key, value) in responses.into_iter().flatten() {
            let was_asked = asked.as_ref().is_none_or(|q| q.contains(&key));
            if was_asked && !s.answers.contains_key(&key) {
                s.answers.insert(key, value);
            }
        }
        Ok(s)
    }

    /// The inputs of one run of a task (both eras): the answers the task has collected so far
    /// and the handler's own state from its previous run.
    pub(crate) fn for_task(answers: JsonObject, handler_state: Option<Value>) -> InputState {
        InputState {
            answers,
            handler_state: Mutex::new(handler_state),
            ..Default::default()
        }
    }

    /// The requests the handler made that have no answer yet (they become the task's
    /// `inputRequests`).
    pub(crate) fn take_pending(&self) -> BTreeMap<String, InputRequest> {
        std::mem::take(&mut *lock(&self.pending))
    }

    /// Why an input call failed, if one did.
    pub(crate) fn take_failure(&self) -> Option<ErrorObject> {
        lock(&self.failure).take()
    }

    pub(crate) fn next_key(&self, request: &InputRequest) -> String {
        let n = self.next_key.fetch_add(1, Ordering::Relaxed);
        format!("{}-{n}", request.capability())
    }

    pub(crate) fn answer(&self, key: &str) -> Option<&Value> {
        self.answers.get(key)
    }

    pub(crate) fn mark_used(&self, key: &str, value: Value) {
        lock(&self.used).insert(key.to_owned(), value);
    }

    pub(crate) fn ask(&self, key: String, request: InputRequest) {
        lock(&self.pending).insert(key, request);
    }

    pub(crate) fn fail(&self, error: ErrorObject) {
        lock(&self.failure).get_or_insert(error);
    }

    pub(crate) fn handler_state(&self) -> Option<Value> {
        lock(&self.handler_state).clone()
    }

    pub(crate) fn set_handler_state(&self, value: Value) {
        *lock(&self.handler_state) = Some(value);
    }

    /// What ends the request instead of the handler's outcome, once the handler is done. While
    /// any input call is unanswered the request ends with `input_required` (the returned
    /// reply, already complete), whatever the handler made of the missing answer (its result
    /// was computed without it). Otherwise a handler that failed after an input call failed
    /// (missing capability, malformed answer) gets that call's error. `Ok(None)`: the outcome
    /// stands (and still needs [`finish`]). A new `requestState` is sealed for `caller` (the
    /// verified caller's digest), so no other caller can continue the request.
    pub(crate) fn interrupt(
        &self,
        failed: bool,
        keys: &RequestStateKeys,
        method: &str,
        digest: &dyn Fn() -> String,
        caller: Option<&str>,
        server_info: &RawValue,
    ) -> Result<Option<Box<RawValue>>, ErrorObject> {
        let pending = std::mem::take(&mut *lock(&self.pending));
        if pending.is_empty() {
            if failed {
                if let Some(e) = lock(&self.failure).take() {
                    return Err(e);
                }
            }
            return Ok(None);
        }
        let payload = StatePayload {
            m: method.to_owned(),
            d: digest(),
            a: std::mem::take(&mut *lock(&self.used)),
            s: self.handler_state(),
            q: Some(pending.keys().cloned().collect()),
            c: caller.map(str::to_owned),
            ..Default::default()
        };
        let request_state = keys
            .seal(payload)
            .ok_or_else(|| ErrorObject::internal("could not seal requestState"))?;
        let mut meta = JsonObject::new();
        meta.insert(
            META_SERVER_INFO.to_owned(),
            serde_json::from_str(server_info.get()).unwrap_or(Value::Null),
        );
        to_raw(&InputRequiredResult {
            result_type: RESULT_INPUT_REQUIRED.to_owned(),
            input_requests: Some(pending),
            request_state: Some(request_state),
            meta: Some(meta),
        })
        .map(Some)
    }
}
