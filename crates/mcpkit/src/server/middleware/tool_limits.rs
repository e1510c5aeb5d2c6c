//! Limits on what one call may take: [`ToolTimeout`] (time), [`ToolConcurrency`] (calls of one
//! tool at once) and [`ResponseLimit`] (the size of a result).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpkit_types::method::{CallTool, GetPrompt, ReadResource};
use mcpkit_types::{ErrorCode, ErrorObject};
use serde_json::json;
use tokio::sync::Semaphore;

use super::{Middleware, Next};
use crate::engine::{BoxFuture, HandlerResult};
use crate::server::Call;

/// A per-tool setting with a default for the tools not named.
#[derive(Debug, Clone)]
struct PerTool<T> {
    default: Option<T>,
    tools: HashMap<String, T>,
}

impl<T: Copy> PerTool<T> {
    fn new(default: Option<T>) -> Self {
        PerTool {
            default,
            tools: HashMap::new(),
        }
    }

    /// The setting for the tool `call` calls (`None` for other methods, or no setting).
    fn of(&self, call: &Call) -> Option<(T, String)> {
        if !call.is::<CallTool>() {
            return None;
        }
        let name = call.target()?;
        let value = self.tools.get(name.as_ref()).copied().or(self.default)?;
        Some((value, name.into_owned()))
    }
}

/// Ends a `tools/call` that runs longer than its tool's timeout: the handler's cancellation
/// fires (a handler taking a `CancellationToken` sees it) and its future is dropped, and the
/// caller gets [`ErrorCode::REQUEST_TIMEOUT`] naming the tool and the limit. A call made into
/// a task (the Tasks extension) is answered at once, so only the answer is timed.
#[derive(Debug, Clone)]
pub struct ToolTimeout {
    limits: PerTool<Duration>,
}

impl ToolTimeout {
    /// Every tool at most `default`.
    pub fn new(default: Duration) -> ToolTimeout {
        ToolTimeout {
            limits: PerTool::new(Some(default)),
        }
    }

    /// Only the tools named with [`ToolTimeout::tool`].
    pub fn named() -> ToolTimeout {
        ToolTimeout {
            limits: PerTool::new(None),
        }
    }

    /// Tool `name` at most `limit`.
    pub fn tool(mut self, name: impl Into<String>, limit: Duration) -> Self {
        self.limits.tools.insert(name.into(), limit);
        self
    }
}

impl Middleware for ToolTimeout {
    fn handle(&self, mut call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let Some((limit, tool)) = self.limits.of(&call) else {
            return next.run(call);
        };
        // A child token: firing it tells the handler without cancelling the client's request,
        // whose answer (the timeout) must still go out.
        let stop = call.cancellation().child_token();
        call.set_cancellation(stop.clone());
        Box::pin(async move {
            match tokio::time::timeout(limit, next.run(call)).await {
                Ok(result) => result,
                Err(_) => {
                    stop.cancel();
                    Err(ErrorObject::new(
                        ErrorCode::REQUEST_TIMEOUT,
                        format!("Tool {tool} timed out after {limit:?}; it was cancelled"),
                    )
                    .with_data(json!({ "tool": tool, "timeoutMs": limit.as_millis() })))
                }
            }
        })
    }
}

/// At most N calls of one tool at once. A call beyond waits up to `queue` (default: not at
/// all) for one to end, then is refused with [`ErrorCode::RATE_LIMITED`] (`data.limit`:
/// `"concurrency"`; HTTP 429 with `Retry-After: 1`).
#[derive(Debug, Clone)]
pub struct ToolConcurrency {
    limits: PerTool<usize>,
    queue: Duration,
    running: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
}

impl ToolConcurrency {
    /// Every tool at most `default` calls at once.
    pub fn new(default: usize) -> ToolConcurrency {
        ToolConcurrency {
            limits: PerTool::new(Some(default.max(1))),
            queue: Duration::ZERO,
            running: Arc::default(),
        }
    }

    /// Only the tools named with [`ToolConcurrency::tool`].
    pub fn named() -> ToolConcurrency {
        ToolConcurrency {
            limits: PerTool::new(None),
            queue: Duration::ZERO,
            running: Arc::default(),
        }
    }

    /// Tool `name` at most `limit` calls at once.
    pub fn tool(mut self, name: impl Into<String>, limit: usize) -> Self {
        self.limits.tools.insert(name.into(), limit.max(1));
        self
    }

    /// How long a call beyond the limit waits for a place before it is refused.
    pub fn queue(mut self, wait: Duration) -> Self {
        self.queue = wait;
        self
    }

    /// The places of tool `name`: made on its first call, only for a tool the server has (a
    /// client naming tools that do not exist cannot grow the map).
    fn places(&self, call: &Call, name: &str, limit: usize) -> Option<Arc<Semaphore>> {
        let mut running = crate::sync::lock(&self.running);
        if let Some(s) = running.get(name) {
            return Some(s.clone());
        }
        if !call.snapshot().tool_index.contains_key(name) {
            return None;
        }
        let places = Arc::new(Semaphore::new(limit));
        running.insert(name.to_owned(), places.clone());
        Some(places)
    }
}

impl Middleware for ToolConcurrency {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let Some((limit, tool)) = self.limits.of(&call) else {
            return next.run(call);
        };
        let Some(places) = self.places(&call, &tool, limit) else {
            return next.run(call);
        };
        let queue = self.queue;
        Box::pin(async move {
            let place = match places.clone().try_acquire_owned() {
                Ok(p) => Some(p),
                Err(_) if queue.is_zero() => None,
                Err(_) => tokio::time::timeout(queue, places.acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok),
            };
            let Some(_place) = place else {
                return Err(ErrorObject::new(
                    ErrorCode::RATE_LIMITED,
                    format!("Tool {tool} is running {limit} calls already, its limit; retry later"),
                )
                .with_data(json!({ "retryAfterMs": 1000, "limit": "concurrency", "tool": tool })));
            };
            next.run(call).await
        })
    }
}

/// Refuses content larger than `max_bytes` (the result as serialized): a `tools/call` result
/// becomes a tool error saying how large it was (the model can ask for less), a `prompts/get`
/// or `resources/read` result a JSON-RPC internal error. Protects clients and context windows
/// from a tool or resource that returns too much; the server's own results (lists,
/// `initialize`, `server/discover`) are not limited.
#[derive(Debug, Clone, Copy)]
pub struct ResponseLimit {
    max_bytes: usize,
}

impl ResponseLimit {
    /// Results of at most `max_bytes`.
    pub fn new(max_bytes: usize) -> ResponseLimit {
        ResponseLimit { max_bytes }
    }
}

impl Middleware for ResponseLimit {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let max = self.max_bytes;
        if !(call.is::<CallTool>() || call.is::<GetPrompt>() || call.is::<ReadResource>()) {
            return next.run(call);
        }
        Box::pin(async move {
            // What the error needs, kept before the call is handed on.
            let (era, version, tool) = (call.era(), call.protocol_version(), call.is::<CallTool>());
            let server = call.server.clone();
            let raw = next.run(call).await?;
            let size = raw.get().len();
            if size <= max {
                return Ok(raw);
            }
            let message = format!("The result was {size} bytes, over this server's limit of {max} bytes");
            if !tool {
                return Err(ErrorObject::internal(message));
            }
            let result = mcpkit_types::schema::CallToolResult::error_text(message).for_version(version);
            crate::server::call::finish_for(era, &server, crate::wire::to_raw(&result)?, None)
        })
    }
}
