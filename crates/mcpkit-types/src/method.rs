//! Method descriptors: one zero-sized type per MCP method and notification of every revision
//! mcpkit speaks (2024-11-05 … 2025-11-25, and the stateless era's 2026-07-28 additions
//! `server/discover`, `subscriptions/listen` and `notifications/subscriptions/acknowledged`),
//! binding the method name to its params and result types. Method names are written only here:
//! typed requests (`peer.request::<CallTool>(p)`), the server's method tables
//! (`router.request::<CallTool>(…)`) and instrumentation all use `M::NAME`. The methods of an
//! extension are declared the same way, in that extension's module of [`crate::ext`].

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::schema::*;

/// A request method: its name, params and result types.
pub trait Method {
    /// The wire name, e.g. `"tools/call"`.
    const NAME: &'static str;
    /// The params type. For methods whose params are optional, it deserializes from `{}` (see
    /// [`parse_params`]).
    type Params: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The result type.
    type Result: Serialize + DeserializeOwned + Send + Sync + 'static;
}

/// A notification method: its name and params type.
pub trait NotificationMethod {
    /// The wire name, e.g. `"notifications/progress"`.
    const NAME: &'static str;
    /// The params type. For notifications whose params are optional, it deserializes from `{}`.
    type Params: Serialize + DeserializeOwned + Send + Sync + 'static;
}

/// Deserializes method params from the raw `params` member; an absent member reads as `{}`, so
/// methods with optional params (ping, list methods, list_changed notifications) accept it.
pub fn parse_params<P: DeserializeOwned>(raw: Option<&RawValue>) -> Result<P, serde_json::Error> {
    serde_json::from_str(raw.map_or("{}", RawValue::get))
}

macro_rules! request {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $ty;
        impl $crate::method::Method for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
            type Result = $result;
        }
    };
}

macro_rules! notification {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $ty;
        impl $crate::method::NotificationMethod for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
        }
    };
}

// The extensions' modules (`crate::ext`) declare their methods with the same two macros.
#[allow(unused_imports, reason = "an extension may declare no notification")]
pub(crate) use {notification, request};

request!(
    /// `initialize` (client → server; spec: `basic/lifecycle`).
    Initialize, "initialize", InitializeParams, InitializeResult
);
request!(
    /// `ping` (either direction; spec: `basic/utilities/ping`).
    Ping, "ping", PingParams, EmptyResult
);
request!(
    /// `tools/list` (spec: `server/tools`).
    ListTools, "tools/list", PaginatedParams, ListToolsResult
);
request!(
    /// `tools/call` (spec: `server/tools`).
    CallTool, "tools/call", CallToolParams, CallToolResult
);
request!(
    /// `resources/list` (spec: `server/resources`).
    ListResources, "resources/list", PaginatedParams, ListResourcesResult
);
request!(
    /// `resources/templates/list` (spec: `server/resources`).
    ListResourceTemplates, "resources/templates/list", PaginatedParams, ListResourceTemplatesResult
);
request!(
    /// `resources/read` (spec: `server/resources`).
    ReadResource, "resources/read", ReadResourceParams, ReadResourceResult
);
request!(
    /// `resources/subscribe` (spec: `server/resources`).
    Subscribe, "resources/subscribe", SubscribeParams, EmptyResult
);
request!(
    /// `resources/unsubscribe` (spec: `server/resources`).
    Unsubscribe, "resources/unsubscribe", UnsubscribeParams, EmptyResult
);
request!(
    /// `prompts/list` (spec: `server/prompts`).
    ListPrompts, "prompts/list", PaginatedParams, ListPromptsResult
);
request!(
    /// `prompts/get` (spec: `server/prompts`).
    GetPrompt, "prompts/get", GetPromptParams, GetPromptResult
);
request!(
    /// `completion/complete` (spec: `server/utilities/completion`).
    Complete, "completion/complete", CompleteParams, CompleteResult
);
request!(
    /// `logging/setLevel` (spec: `server/utilities/logging`).
    SetLevel, "logging/setLevel", SetLevelParams, EmptyResult
);
request!(
    /// `tasks/get` (either direction; spec: `basic/utilities/tasks`).
    GetTask, "tasks/get", GetTaskParams, GetTaskResult
);
request!(
    /// `tasks/result` (either direction; spec: `basic/utilities/tasks`). The result is the
    /// original request's result, kept as a JSON object.
    GetTaskPayload, "tasks/result", GetTaskPayloadParams, GetTaskPayloadResult
);
request!(
    /// `tasks/list` (either direction; spec: `basic/utilities/tasks`).
    ListTasks, "tasks/list", PaginatedParams, ListTasksResult
);
request!(
    /// `tasks/cancel` (either direction; spec: `basic/utilities/tasks`).
    CancelTask, "tasks/cancel", CancelTaskParams, CancelTaskResult
);
request!(
    /// `sampling/createMessage` (server → client; spec: `client/sampling`).
    CreateMessage, "sampling/createMessage", CreateMessageParams, CreateMessageResult
);
request!(
    /// `elicitation/create` (server → client; spec: `client/elicitation`).
    Elicit, "elicitation/create", ElicitParams, ElicitResult
);
request!(
    /// `roots/list` (server → client; spec: `client/roots`).
    ListRoots, "roots/list", RequestParams, ListRootsResult
);

request!(
    /// `server/discover` (2026-07-28; spec: `server/discover`).
    Discover, "server/discover", RequestParams, DiscoverResult
);
request!(
    /// `subscriptions/listen` (2026-07-28; spec: `basic/patterns/subscriptions`). The result
    /// comes only when the server ends the subscription.
    SubscriptionsListen, "subscriptions/listen", SubscriptionsListenParams, EmptyResult
);

notification!(
    /// `notifications/subscriptions/acknowledged` (2026-07-28; spec:
    /// `basic/patterns/subscriptions`).
    SubscriptionsAcknowledged, "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedParams
);
notification!(
    /// `notifications/initialized` (client → server; spec: `basic/lifecycle`).
    Initialized, "notifications/initialized", InitializedParams
);
notification!(
    /// `notifications/cancelled` (either direction; spec: `basic/utilities/cancellation`).
    Cancelled, "notifications/cancelled", CancelledParams
);
notification!(
    /// `notifications/progress` (either direction; spec: `basic/utilities/progress`).
    Progress, "notifications/progress", ProgressParams
);
notification!(
    /// `notifications/message` (server → client; spec: `server/utilities/logging`).
    LoggingMessage, "notifications/message", LoggingMessageParams
);
notification!(
    /// `notifications/resources/updated` (server → client; spec: `server/resources`).
    ResourceUpdated, "notifications/resources/updated", ResourceUpdatedParams
);
notification!(
    /// `notifications/resources/list_changed` (server → client; spec: `server/resources`).
    ResourceListChanged, "notifications/resources/list_changed", ResourceListChangedParams
);
notification!(
    /// `notifications/tools/list_changed` (server → client; spec: `server/tools`).
    ToolListChanged, "notifications/tools/list_changed", ToolListChangedParams
);
notification!(
    /// `notifications/prompts/list_changed` (server → client; spec: `server/prompts`).
    PromptListChanged, "notifications/prompts/list_changed", PromptListChangedParams
);
notification!(
    /// `notifications/roots/list_changed` (client → server; spec: `client/roots`).
    RootsListChanged, "notifications/roots/list_changed", RootsListChangedParams
);
notification!(
    /// `notifications/elicitation/complete` (server → client; spec: `client/elicitation`).
    ElicitationComplete, "notifications/elicitation/complete", ElicitationCompleteParams
);
notification!(
    /// `notifications/tasks/status` (either direction; spec: `basic/utilities/tasks`).
    TaskStatusNotification, "notifications/tasks/status", TaskStatusParams
);

/// Requests a client sends to a server (2025-11-25).
pub const ALL_CLIENT_REQUESTS: &[&str] = &[
    Initialize::NAME,
    Ping::NAME,
    ListTools::NAME,
    CallTool::NAME,
    ListResources::NAME,
    ListResourceTemplates::NAME,
    ReadResource::NAME,
    Subscribe::NAME,
    Unsubscribe::NAME,
    ListPrompts::NAME,
    GetPrompt::NAME,
    Complete::NAME,
    SetLevel::NAME,
    GetTask::NAME,
    GetTaskPayload::NAME,
    ListTasks::NAME,
    CancelTask::NAME,
];

/// Requests a server sends to a client (2025-11-25).
pub const ALL_SERVER_REQUESTS: &[&str] = &[
    Ping::NAME,
    CreateMessage::NAME,
    Elicit::NAME,
    ListRoots::NAME,
    GetTask::NAME,
    GetTaskPayload::NAME,
    ListTasks::NAME,
    CancelTask::NAME,
];

/// Notifications a client sends to a server (2025-11-25).
pub const ALL_CLIENT_NOTIFICATIONS: &[&str] = &[
    Initialized::NAME,
    Cancelled::NAME,
    Progress::NAME,
    RootsListChanged::NAME,
    TaskStatusNotification::NAME,
];

/// Notifications a server sends to a client (2025-11-25).
pub const ALL_SERVER_NOTIFICATIONS: &[&str] = &[
    Cancelled::NAME,
    Progress::NAME,
    LoggingMessage::NAME,
    ResourceUpdated::NAME,
    ResourceListChanged::NAME,
    ToolListChanged::NAME,
    PromptListChanged::NAME,
    ElicitationComplete::NAME,
    TaskStatusNotification::NAME,
];
