//! A complete server written with the macros: shared state (a notes store standing in for your
//! database), a tool with structured output, a long tool that reports progress and stops when
//! the client cancels, a destructive tool that asks the user first (elicitation), a resource
//! template with a typed variable (`notes://{id}`, `id: i64`), and a prompt; served over stdio,
//! or over Streamable HTTP with `--http ADDR`.
//!
//! ```text
//! cargo run -p mcpkit --example notes                         # stdio (an MCP host runs it)
//! cargo run -p mcpkit --example notes -- --http 127.0.0.1:3000 # http://127.0.0.1:3000/mcp
//! ```
//!
//! Then, with the `mcpkit` tool:
//!
//! ```text
//! mcpkit call add title=groceries "body=milk, eggs" -- cargo run -q -p mcpkit --example notes
//! mcpkit read notes://1 --server http://127.0.0.1:3000/mcp
//! ```
//!
//! The store is a map behind a lock so the example runs anywhere; a real server keeps its
//! connection pool (sqlx, deadpool, …) in the same place, and each method awaits its queries
//! instead.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use mcpkit::server::http::HttpServer;
use mcpkit::server::{CancellationToken, Json};
use mcpkit::types::ErrorObject;
use mcpkit::{stdio, RequestContext, Server};
use serde::Serialize;
use tokio::sync::Mutex;

/// One stored note.
#[derive(Clone, Serialize, schemars::JsonSchema)]
struct Note {
    id: i64,
    title: String,
    body: String,
}

/// The server's state: the notes, by id.
#[derive(Default)]
struct Notes {
    db: Mutex<BTreeMap<i64, Note>>,
}

impl Notes {
    async fn insert(&self, title: String, body: String) -> Note {
        let mut db = self.db.lock().await;
        let id = db.keys().next_back().map_or(1, |last| last + 1);
        let note = Note { id, title, body };
        db.insert(id, note.clone());
        note
    }
}

#[mcpkit::tools]
impl Notes {
    /// Stores a note and returns it.
    #[tool]
    async fn add(&self, title: String, #[arg(description = "The note's text.")] body: String) -> Json<Note> {
        Json(self.insert(title, body).await)
    }

    /// Imports `count` numbered notes, one every 50 ms, reporting progress; stops early when
    /// the client cancels.
    #[tool]
    async fn import(&self, count: u32, cx: RequestContext, cancel: CancellationToken) -> String {
        let count = count.min(1000);
        for i in 1..=count {
            tokio::select! {
                () = cancel.cancelled() => return format!("cancelled after {} notes", i - 1),
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
            self.insert(format!("imported {i}"), String::new()).await;
            cx.progress(f64::from(i), Some(f64::from(count)), None);
        }
        format!("imported {count} notes")
    }

    /// Deletes every note, once the user agrees.
    #[tool(destructive)]
    async fn clear(&self, cx: RequestContext) -> Result<String, mcpkit::Error> {
        if !cx.confirm("Delete every note?").await? {
            return Ok("kept every note".to_owned());
        }
        let mut db = self.db.lock().await;
        let n = db.len();
        db.clear();
        Ok(format!("deleted {n} notes"))
    }

    /// One note, by id.
    #[resource("notes://{id}", mime_type = "text/plain")]
    async fn note(&self, id: i64) -> Result<String, ErrorObject> {
        match self.db.lock().await.get(&id) {
            Some(note) => Ok(format!("# {}\n\n{}", note.title, note.body)),
            None => Err(ErrorObject::resource_not_found(&format!("notes://{id}"))),
        }
    }

    /// Asks the model to summarize every note.
    #[prompt]
    async fn summarize(&self, style: Option<String>) -> String {
        let db = self.db.lock().await;
        let titles: Vec<&str> = db.values().map(|n| n.title.as_str()).collect();
        format!(
            "Summarize these notes ({}): {}",
            style.as_deref().unwrap_or("in one paragraph"),
            titles.join("; ")
        )
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder().name("notes", "1.0.0").tools(Notes::default()).build();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => server.serve(stdio()).await?,
        [flag, addr] if flag == "--http" => {
            let addr: SocketAddr = addr.parse()?;
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("notes: listening on http://{}/mcp", listener.local_addr()?);
            HttpServer::new(server).serve(listener).await?;
        }
        _ => return Err("usage: notes [--http ADDR]".into()),
    }
    Ok(())
}
