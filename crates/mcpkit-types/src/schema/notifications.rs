//! Notification params shared across features (spec: `basic/utilities/progress`,
//! `basic/utilities/cancellation`, `*_list_changed`).

use serde::{Deserialize, Serialize};

use super::common::{Meta, ProgressToken};
use crate::jsonrpc::RequestId;

/// Params of a notification that takes only an optional `_meta` (spec: `NotificationParams`).
/// Deserializes from `{}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `notifications/initialized`.
pub type InitializedParams = NotificationParams;
/// Params of `notifications/tools/list_changed`.
pub type ToolListChangedParams = NotificationParams;
/// Params of `notifications/prompts/list_changed`.
pub type PromptListChangedParams = NotificationParams;
/// Params of `notifications/resources/list_changed`.
pub type ResourceListChangedParams = NotificationParams;
/// Params of `notifications/roots/list_changed`.
pub type RootsListChangedParams = NotificationParams;

/// Params of `notifications/progress` (spec: `basic/utilities/progress`,
/// `ProgressNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; must increase.
    pub progress: f64,
    /// Total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// Human-readable message (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ProgressParams {
    /// Progress for `token`.
    pub fn new(token: ProgressToken, progress: f64) -> Self {
        ProgressParams {
            progress_token: token,
            progress,
            total: None,
            message: None,
            meta: None,
        }
    }
    /// Sets the total.
    pub fn with_total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }
    /// Sets the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Params of `notifications/cancelled` (spec: `basic/utilities/cancellation`,
/// `CancelledNotificationParams`). `requestId` is optional in 2025-11-25 (absent when cancelling
/// a task via `tasks/cancel` instead) and required before and after.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    /// The request to cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CancelledParams {
    /// Cancels `id`.
    pub fn new(id: RequestId) -> Self {
        CancelledParams {
            request_id: Some(id),
            reason: None,
            meta: None,
        }
    }
    /// Sets the reason.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}
