//! The extension API the server core offers: the [`Extension`] trait, the [`MethodTable`] an
//! extension registers into, and the set of a server's extensions. The official extensions
//! (`extensions/`) are built on it as an outside crate would be; the public path of these items
//! is `server::extensions`.

use std::sync::Arc;

use mcpkit_types::ext;
use mcpkit_types::schema::JsonObject;
use mcpkit_types::Era;

use super::methods::Methods;
use super::{RequestContext, ServerBuilder};

/// An extension a server can serve. The official ones are in this module; an implementation
/// of your own can declare an extension whose behaviour it provides through tools and
/// resources ([`Extension::extend`]).
pub trait Extension: Send + Sync + 'static {
    /// The identifier, `prefix/name` (for example `io.modelcontextprotocol/skills`); one that is
    /// not valid ([`mcpkit_types::ext::is_valid_id`]) is not served.
    fn id(&self) -> &str;

    /// The settings object declared under `capabilities.extensions[id]` (default `{}`: support
    /// without settings). A `revision` member names the revision served (SEP-3392).
    fn settings(&self) -> JsonObject {
        JsonObject::new()
    }

    /// Whether the extension is served in `era` (default: both). One that is not is neither
    /// declared nor registered in that era.
    fn serves(&self, era: Era) -> bool {
        let _ = era;
        true
    }

    /// Add what the extension serves through the core methods (tools, resources, prompts,
    /// state) to the server being built. Called once, by [`ServerBuilder::extension`].
    fn extend(&self, builder: ServerBuilder) -> ServerBuilder {
        builder
    }

    /// Register the extension's methods, notifications and result decorations into one era's
    /// method table (called once per era it [serves](Extension::serves)).
    fn register(&self, table: &mut MethodTable<'_>) {
        let _ = table;
    }
}

/// One era's method table, as an extension registers into it.
pub struct MethodTable<'a> {
    pub(crate) era: Era,
    pub(crate) router: &'a mut Methods,
}

impl std::fmt::Debug for MethodTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodTable")
            .field("era", &self.era)
            .finish_non_exhaustive()
    }
}

impl MethodTable<'_> {
    /// The era this table serves.
    pub fn era(&self) -> Era {
        self.era
    }
}

/// The extensions of one server, in the order they were added.
#[derive(Default, Clone)]
pub(crate) struct ExtensionSet {
    list: Vec<Arc<dyn Extension>>,
}

impl std::fmt::Debug for ExtensionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.list.iter().map(|e| e.id())).finish()
    }
}

impl ExtensionSet {
    /// Add `extension`, replacing one with the same identifier. An invalid identifier is
    /// refused (logged), as no client could negotiate it.
    pub(crate) fn add(&mut self, extension: Arc<dyn Extension>) {
        if !ext::is_valid_id(extension.id()) {
            tracing::error!(
                "extension identifier {:?} is not prefix/name; the extension is not served",
                extension.id()
            );
            return;
        }
        self.list.retain(|e| e.id() != extension.id());
        self.list.push(extension);
    }

    /// What the server declares in each era, computed once.
    pub(crate) fn declared(&self) -> Declared {
        let map = |era| {
            let map: JsonObject = self
                .list
                .iter()
                .filter(|e| e.serves(era))
                .map(|e| (e.id().to_owned(), serde_json::Value::Object(e.settings())))
                .collect();
            (!map.is_empty()).then_some(map)
        };
        Declared {
            handshake: map(Era::Handshake),
            stateless: map(Era::Stateless),
        }
    }

    /// Let each extension served in `era` register into that era's table.
    pub(crate) fn register(&self, era: Era, router: &mut Methods) {
        let mut table = MethodTable { era, router };
        for e in self.list.iter().filter(|e| e.serves(era)) {
            e.register(&mut table);
        }
    }
}

/// The `capabilities.extensions` map a server declares in each era (`None`: no extension).
#[derive(Debug, Default)]
pub(crate) struct Declared {
    handshake: Option<JsonObject>,
    stateless: Option<JsonObject>,
}

impl Declared {
    /// The map declared in `era`.
    pub(crate) fn of(&self, era: Era) -> Option<&JsonObject> {
        match era {
            Era::Handshake => self.handshake.as_ref(),
            Era::Stateless => self.stateless.as_ref(),
        }
    }

    /// The settings declared for `id` in `era`.
    pub(crate) fn settings(&self, era: Era, id: &str) -> Option<&JsonObject> {
        self.of(era)?.get(id)?.as_object()
    }
}

impl RequestContext {
    /// The settings the client declared for extension `id` (from its `initialize` capabilities,
    /// or this request's `_meta` on the stateless wire); `None` when it did not declare it.
    pub fn client_extension(&self, id: &str) -> Option<JsonObject> {
        self.client_capabilities().extension(id).cloned()
    }

    /// Whether extension `id` is in use for this request: this server serves it in the
    /// request's era and the client declared it at the same revision. Behaviour that changes
    /// a core result applies only then; otherwise the core behaviour stands.
    pub fn uses_extension(&self, id: &str) -> bool {
        let era = self.protocol_version().era();
        match self.server.inner.extensions.settings(era, id) {
            Some(ours) => ext::negotiated(ours, self.client_capabilities().extension(id)),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    // An extension registers its own method into each era's table and decorates a core result
    // through `Methods::wrap`; the tables run with no transport (`Server::call_as`).

    use super::*;
    use crate::server::Call;
    use crate::wire::to_raw;
    use mcpkit_types::method::{ListTools, Method};
    use mcpkit_types::schema::{ListToolsResult, PaginatedParams, RequestParams};
    use mcpkit_types::ProtocolVersion;
    use serde_json::{json, Value};

    /// `example/echo-era`: answers with the era whose table served it.
    struct EchoEra;

    impl Method for EchoEra {
        const NAME: &'static str = "example/echoEra";
        type Params = RequestParams;
        type Result = Value;
    }

    struct Example;

    impl Extension for Example {
        fn id(&self) -> &str {
            "com.example/echo"
        }

        fn register(&self, table: &mut MethodTable<'_>) {
            table.router.request::<EchoEra, _, _>(|call: Call, _| async move {
                let era = format!("{:?}", call.era);
                call.finish(to_raw(&json!({ "era": era }))?, None)
            });
            // Decorate `tools/list`: mark each page as seen by the extension.
            table.router.wrap(|name, entry| {
                if name != ListTools::NAME {
                    return entry;
                }
                Box::new(move |call| {
                    let answer = entry(call);
                    Box::pin(async move {
                        let mut page: Value = serde_json::from_str(answer.await?.get())
                            .map_err(|e| mcpkit_types::ErrorObject::internal(e.to_string()))?;
                        page["_meta"] = json!({ "com.example/echo": true });
                        to_raw(&page)
                    })
                })
            });
        }
    }

    fn server() -> crate::Server {
        crate::Server::builder().enable_tools().extension(Example).build()
    }

    #[tokio::test]
    async fn an_extension_method_is_served_in_each_era() {
        let s = server();
        let handshake = s.call::<EchoEra>(RequestParams::default()).await.unwrap();
        assert_eq!(handshake, json!({ "era": "Handshake" }));
        let stateless = s
            .call_as::<EchoEra>(ProtocolVersion::V2026_07_28, RequestParams::default())
            .await
            .unwrap();
        assert_eq!(stateless["era"], "Stateless");
        assert_eq!(stateless["resultType"], "complete");
    }

    #[tokio::test]
    async fn an_extension_decorates_a_core_result() {
        let page: ListToolsResult = server().call::<ListTools>(PaginatedParams::default()).await.unwrap();
        assert_eq!(
            page.meta.and_then(|m| m.get("com.example/echo").cloned()),
            Some(json!(true))
        );
        // Without the extension the page is as before.
        let plain = crate::Server::builder().enable_tools().build();
        let page: ListToolsResult = plain.call::<ListTools>(PaginatedParams::default()).await.unwrap();
        assert!(page.meta.is_none());
    }

    #[test]
    fn the_declaration_is_computed_per_era() {
        let s = server();
        assert_eq!(
            serde_json::to_value(s.capabilities().extensions).unwrap(),
            json!({ "com.example/echo": {} })
        );
    }
}
