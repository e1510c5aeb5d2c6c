//! The macros are sugar over the explicit API: a server built with `#[mcpkit::tools]` (and the
//! free-function forms) and the same server written with `ToolDef` / `PromptDef` /
//! `ResourceDef` / `ResourceTemplateDef` by hand list byte-identical catalogues, and the
//! macro-built handlers answer calls as the hand-written ones do.

use mcpkit::server::{
    Args, CancellationToken, Json, PromptDef, RequestContext, ResourceDef, ResourceTemplateDef, State, ToolDef, Uri,
};
use mcpkit::types::method::{
    CallTool, GetPrompt, ListPrompts, ListResourceTemplates, ListResources, ListTools, Method, ReadResource,
};
use mcpkit::types::schema::{Icon, ToolAnnotations};
use mcpkit::Server;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Serialize, schemars::JsonSchema)]
struct Sum {
    /// The total.
    total: i64,
}

#[derive(Clone)]
struct Greeting(String);

/// `_meta` given as an expression of type `Meta`.
fn review_meta() -> mcpkit::types::schema::Meta {
    let mut meta = mcpkit::types::schema::Meta::new();
    meta.insert("com.example/reviewers".into(), json!(["ann"]));
    meta
}

/// `json` as `_meta` (an object).
fn meta_of(json: Value) -> mcpkit::types::schema::Meta {
    serde_json::from_value(json).unwrap()
}

struct Calc {
    offset: i64,
}

#[mcpkit::tools]
impl Calc {
    /// Adds two numbers.
    #[tool]
    async fn add(&self, a: i64, #[arg(description = "The second term.", default = 1)] b: i64) -> i64 {
        a + b + self.offset
    }

    /// Shouts.
    #[tool(
        name = "shout",
        title = "Shout",
        read_only,
        open_world = false,
        icon = "https://example.com/s.png",
        meta = {"ui": {"resourceUri": "ui://calc/shout"}, "com.example/rank": 1}
    )]
    async fn loud(
        &self,
        text: String,
        cx: RequestContext,
        #[arg(default)] times: Option<usize>,
    ) -> Result<String, String> {
        cx.progress(1.0, None, None);
        if text.is_empty() {
            return Err("nothing to shout".into());
        }
        Ok(text.to_uppercase().repeat(times.unwrap_or(1)))
    }

    /// Adds, as structured output.
    #[tool(idempotent, destructive = false)]
    async fn sum(&self, a: i64, b: i64) -> Json<Sum> {
        Json(Sum { total: a + b })
    }

    /// What time it is.
    #[mcpkit::tool]
    async fn now(_cancel: CancellationToken, State(Greeting(g)): State<Greeting>) -> String {
        format!("{g}: noon")
    }

    /// Reviews code.
    #[prompt(title = "Review", meta = review_meta())]
    async fn review(&self, #[arg(description = "The code.")] code: String, focus: Option<String>) -> String {
        format!("Review for {}:\n{code}", focus.as_deref().unwrap_or("bugs"))
    }

    /// A note.
    #[resource("notes://{id}", mime_type = "text/plain", meta = {"com.example/kind": "note"})]
    async fn note(&self, id: String, Uri(uri): Uri) -> String {
        format!("{uri} is note {id}")
    }

    /// The readme.
    #[resource("file:///readme.md", name = "readme", title = "Read me")]
    async fn readme_file(&self) -> String {
        "# Hi".to_owned()
    }
}

/// Says it back.
#[mcpkit::tool]
async fn echo(#[arg(description = "What to say back.")] message: String) -> String {
    message
}

fn macro_server() -> Server {
    Server::builder()
        .name("calc", "1.0.0")
        .state(Greeting("hello".into()))
        .tools(Calc { offset: 10 })
        .tool(echo_tool())
        .build()
}

fn one() -> i64 {
    1
}

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    /// The second term.
    #[serde(default = "one")]
    b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ShoutArgs {
    text: String,
    #[serde(default)]
    times: Option<usize>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SumArgs {
    a: i64,
    b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ReviewArgs {
    /// The code.
    code: String,
    focus: Option<String>,
}

#[derive(Deserialize)]
struct NoteArgs {
    id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// What to say back.
    message: String,
}

fn explicit_server() -> Server {
    let offset = 10;
    Server::builder()
        .name("calc", "1.0.0")
        .state(Greeting("hello".into()))
        .tool(
            ToolDef::new("add", move |Args(a): Args<AddArgs>| async move { a.a + a.b + offset })
                .description("Adds two numbers."),
        )
        .tool(
            ToolDef::new("shout", |Args(a): Args<ShoutArgs>, _cx: RequestContext| async move {
                Ok::<_, String>(a.text.to_uppercase().repeat(a.times.unwrap_or(1)))
            })
            .description("Shouts.")
            .title("Shout")
            .annotations(ToolAnnotations::default().read_only(true).open_world(false))
            .icons(vec![Icon::new("https://example.com/s.png")])
            .meta(meta_of(
                json!({"ui": {"resourceUri": "ui://calc/shout"}, "com.example/rank": 1}),
            )),
        )
        .tool(
            ToolDef::new(
                "sum",
                |Args(a): Args<SumArgs>| async move { Json(Sum { total: a.a + a.b }) },
            )
            .description("Adds, as structured output.")
            .annotations(ToolAnnotations::default().idempotent(true).destructive(false)),
        )
        .tool(
            ToolDef::new("now", |State(Greeting(g)): State<Greeting>| async move {
                format!("{g}: noon")
            })
            .description("What time it is."),
        )
        .prompt(
            PromptDef::new("review", |Args(r): Args<ReviewArgs>| async move {
                format!("{}{}", r.code, r.focus.unwrap_or_default())
            })
            .description("Reviews code.")
            .title("Review")
            .meta(review_meta()),
        )
        .resource_template(
            ResourceTemplateDef::new("notes://{id}", "note", |Args(n): Args<NoteArgs>| async move { n.id })
                .unwrap()
                .description("A note.")
                .mime_type("text/plain")
                .meta(meta_of(json!({"com.example/kind": "note"}))),
        )
        .resource(
            ResourceDef::new("file:///readme.md", "readme", || async { "# Hi".to_owned() })
                .description("The readme.")
                .title("Read me"),
        )
        .tool(ToolDef::new("echo", |Args(e): Args<EchoArgs>| async move { e.message }).description("Says it back."))
        .build()
}

async fn list<M: Method>(server: &Server) -> Value
where
    M::Params: Default,
{
    serde_json::to_value(server.call::<M>(Default::default()).await.unwrap()).unwrap()
}

#[tokio::test]
async fn both_servers_list_the_same_tools() {
    let (made, written) = (macro_server(), explicit_server());
    let tools = list::<ListTools>(&made).await;
    assert_eq!(tools, list::<ListTools>(&written).await);
    // Not vacuous: the pieces the macro read are there.
    assert_eq!(tools["tools"].as_array().unwrap().len(), 5);
    assert_eq!(tools["tools"][0]["inputSchema"]["properties"]["b"]["default"], json!(1));
    assert_eq!(
        tools["tools"][0]["inputSchema"]["properties"]["b"]["description"],
        json!("The second term.")
    );
    assert_eq!(tools["tools"][0]["inputSchema"]["required"], json!(["a"]));
    assert_eq!(
        tools["tools"][1]["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(tools["tools"][2]["outputSchema"]["required"], json!(["total"]));
    assert_eq!(tools["tools"][3]["inputSchema"], json!({"type": "object"}));
    assert_eq!(
        tools["tools"][1]["_meta"],
        json!({"ui": {"resourceUri": "ui://calc/shout"}, "com.example/rank": 1})
    );
}

#[tokio::test]
async fn both_servers_list_the_same_prompts_and_resources() {
    let (made, written) = (macro_server(), explicit_server());
    let prompts = list::<ListPrompts>(&made).await;
    assert_eq!(prompts, list::<ListPrompts>(&written).await);
    assert_eq!(prompts["prompts"][0]["arguments"][0]["description"], json!("The code."));
    assert_eq!(
        prompts["prompts"][0]["_meta"],
        json!({"com.example/reviewers": ["ann"]})
    );
    assert_eq!(
        list::<ListResources>(&made).await,
        list::<ListResources>(&written).await
    );
    let templates = list::<ListResourceTemplates>(&made).await;
    assert_eq!(templates, list::<ListResourceTemplates>(&written).await);
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], json!("notes://{id}"));
    assert_eq!(
        templates["resourceTemplates"][0]["_meta"],
        json!({"com.example/kind": "note"})
    );
}

async fn call(server: &Server, name: &str, arguments: Value) -> Value {
    let params = serde_json::from_value(json!({"name": name, "arguments": arguments})).unwrap();
    serde_json::to_value(server.call::<CallTool>(params).await.unwrap()).unwrap()
}

#[tokio::test]
async fn the_macro_built_handlers_run() {
    let server = macro_server();
    assert_eq!(
        call(&server, "add", json!({"a": 2})).await["content"][0]["text"],
        json!("13")
    );
    assert_eq!(
        call(&server, "shout", json!({"text": "hi", "times": 2})).await["content"][0]["text"],
        json!("HIHI")
    );
    assert_eq!(
        call(&server, "shout", json!({"text": ""})).await["isError"],
        json!(true)
    );
    assert_eq!(
        call(&server, "sum", json!({"a": 2, "b": 3})).await["structuredContent"],
        json!({"total": 5})
    );
    assert_eq!(
        call(&server, "now", json!({})).await["content"][0]["text"],
        json!("hello: noon")
    );
    assert_eq!(
        call(&server, "echo", json!({"message": "x"})).await["content"][0]["text"],
        json!("x")
    );
    // Bad arguments are a tool execution error, as for a hand-written `Args<T>`.
    assert_eq!(call(&server, "add", json!({"a": "two"})).await["isError"], json!(true));

    let params = serde_json::from_value(json!({"name": "review", "arguments": {"code": "fn x() {}"}})).unwrap();
    let prompt = serde_json::to_value(server.call::<GetPrompt>(params).await.unwrap()).unwrap();
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        json!("Review for bugs:\nfn x() {}")
    );

    let params = serde_json::from_value(json!({"uri": "notes://7"})).unwrap();
    let read = serde_json::to_value(server.call::<ReadResource>(params).await.unwrap()).unwrap();
    assert_eq!(read["contents"][0]["text"], json!("notes://7 is note 7"));
}
