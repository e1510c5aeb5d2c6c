//! Params decoding of every method and notification, through the descriptors of
//! `mcpkit_types::method` (`parse_params::<M::Params>`). The first byte picks the method, the
//! rest is its `params` member. Property: params that decode re-serialize to JSON that decodes
//! again, and a second round trip changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpkit_types::method::{self, parse_params, Method, NotificationMethod};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

fn round_trip<P: Serialize + DeserializeOwned>(name: &str, raw: Option<&RawValue>) {
    let Ok(params) = parse_params::<P>(raw) else { return };
    let once = serde_json::to_string(&params).unwrap();
    let again: P = serde_json::from_str(&once)
        .unwrap_or_else(|e| panic!("{name}: re-serialized params {once} do not decode: {e}"));
    let twice = serde_json::to_string(&again).unwrap();
    assert_eq!(once, twice, "{name}: params changed on a second round trip");
}

fn request<M: Method>(raw: Option<&RawValue>) {
    round_trip::<M::Params>(M::NAME, raw);
}

fn notification<M: NotificationMethod>(raw: Option<&RawValue>) {
    round_trip::<M::Params>(M::NAME, raw);
}

/// Every descriptor, indexed by the input's first byte.
const DECODERS: &[fn(Option<&RawValue>)] = &[
    request::<method::Initialize>,
    request::<method::Ping>,
    request::<method::ListTools>,
    request::<method::CallTool>,
    request::<method::ListResources>,
    request::<method::ListResourceTemplates>,
    request::<method::ReadResource>,
    request::<method::Subscribe>,
    request::<method::Unsubscribe>,
    request::<method::ListPrompts>,
    request::<method::GetPrompt>,
    request::<method::Complete>,
    request::<method::SetLevel>,
    request::<method::GetTask>,
    request::<method::GetTaskPayload>,
    request::<method::ListTasks>,
    request::<method::CancelTask>,
    request::<method::CreateMessage>,
    request::<method::Elicit>,
    request::<method::ListRoots>,
    request::<method::Discover>,
    request::<method::SubscriptionsListen>,
    notification::<method::SubscriptionsAcknowledged>,
    notification::<method::Initialized>,
    notification::<method::Cancelled>,
    notification::<method::Progress>,
    notification::<method::LoggingMessage>,
    notification::<method::ResourceUpdated>,
    notification::<method::ResourceListChanged>,
    notification::<method::ToolListChanged>,
    notification::<method::PromptListChanged>,
    notification::<method::RootsListChanged>,
    notification::<method::ElicitationComplete>,
    notification::<method::TaskStatusNotification>,
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let decode = DECODERS[usize::from(pick) % DECODERS.len()];
    if text.is_empty() {
        decode(None);
    } else if let Ok(raw) = serde_json::from_str::<&RawValue>(text) {
        decode(Some(raw));
    }
});
