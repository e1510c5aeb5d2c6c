//! Answering the server's own requests during `mcpkit call`: sampling and elicitation.
//!
//! On a terminal (stdin and stderr both) the user is asked on stderr and answers on stdin; an
//! enum field lists its options with their titles (see [`crate::choices`]).
//! Otherwise the request is refused with a line on stderr saying why: sampling gets an error
//! (there is no model here), elicitation is declined.
//!
//! Every line goes through `say` (or `prompt_line`): what the server asks is its own text,
//! shown escaped on a terminal (see [`crate::terminal`]), so a hidden sequence cannot disguise
//! a question, or the URL it asks the user to open.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Arc;

use mcpkit::types::schema::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, JsonObject, SamplingContent,
};
use mcpkit::types::{ErrorCode, ErrorObject};
use mcpkit::ClientBuilder;
use serde_json::Value;
use tokio::sync::Mutex;

use crate::choices::{choices_of, Choices};

/// Whether the user can be asked: stdin and stderr are terminals.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Install sampling and elicitation handlers on `builder`. `bar` is suspended while asking.
pub fn install(builder: ClientBuilder, ask: bool, bar: indicatif::ProgressBar) -> ClientBuilder {
    // One question at a time.
    let gate = Arc::new(Mutex::new(()));
    let (g1, b1) = (gate.clone(), bar.clone());
    builder
        .on_sampling(move |p| {
            let (gate, bar) = (g1.clone(), b1.clone());
            async move {
                if !ask {
                    say("mcpkit call: the server asked for an LLM completion (sampling); refused because stdin is not a terminal");
                    return Err(ErrorObject::new(
                        ErrorCode(-1),
                        "sampling refused: mcpkit is not running interactively",
                    ));
                }
                let _turn = gate.lock().await;
                let answer = blocking(move || bar.suspend(|| ask_sampling(&p))).await.flatten();
                match answer {
                    Some(text) => Ok(CreateMessageResult::text("mcpkit-cli-user", text)),
                    None => Err(ErrorObject::new(ErrorCode(-1), "the user rejected the sampling request")),
                }
            }
        })
        .on_elicitation(move |p| {
            let (gate, bar) = (gate.clone(), bar.clone());
            async move {
                if !ask {
                    say(&format!(
                        "mcpkit call: the server asked for user input (elicitation: {}); declined because stdin is not a terminal",
                        crate::target::one_line(p.message())
                    ));
                    return Ok(ElicitResult::decline());
                }
                let _turn = gate.lock().await;
                Ok(blocking(move || bar.suspend(|| ask_elicitation(&p)))
                    .await
                    .unwrap_or_else(cancel))
            }
        })
}

/// Run a blocking prompt off the async threads; `None` if it panicked.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(f).await.ok()
}

/// One line on stderr: server text, shown escaped on a terminal.
fn say(line: &str) {
    eprintln!("{}", crate::terminal::err(line));
}

/// Ask `question` (server text, shown as `say` shows it) on stderr; the answer from stdin.
fn prompt_line(question: &str) -> Option<String> {
    let question = crate::terminal::err(question);
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    drop(err);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
    }
}

fn ask_sampling(p: &CreateMessageParams) -> Option<String> {
    say(&format!(
        "\nThe server asks for an LLM completion (max {} tokens).",
        p.max_tokens
    ));
    if let Some(s) = &p.system_prompt {
        say(&format!("  system: {s}"));
    }
    for m in &p.messages {
        let role = serde_json::to_value(m.role).ok();
        let role = role.as_ref().and_then(Value::as_str).unwrap_or("?").to_owned();
        for block in m.content.as_slice() {
            match block {
                SamplingContent::Text(t) => say(&format!("  {role}: {}", t.text)),
                other => say(&format!(
                    "  {role}: [{}]",
                    serde_json::to_value(other)
                        .ok()
                        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
                        .unwrap_or_default()
                )),
            }
        }
    }
    let reply = prompt_line("Type the reply (empty line to reject): ")?;
    (!reply.is_empty()).then_some(reply)
}

fn ask_elicitation(p: &ElicitParams) -> ElicitResult {
    match p {
        ElicitParams::Url(u) => {
            say(&format!(
                "\nThe server asks you to open a URL: {}\n  {}",
                u.message, u.url
            ));
            match prompt_line("Open it, then press Enter to accept (d = decline, c = cancel): ").as_deref() {
                Some("d") => ElicitResult::decline(),
                Some("c") | None => cancel(),
                Some(_) => ElicitResult::accept_empty(),
            }
        }
        ElicitParams::Form(f) => {
            say(&format!("\nThe server asks: {}", f.message));
            match prompt_line("Answer (a), decline (d) or cancel (c)? [a] ").as_deref() {
                Some("d") => return ElicitResult::decline(),
                Some("c") | None => return cancel(),
                _ => {}
            }
            let schema = f.requested_schema.as_object();
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut content = JsonObject::new();
            let empty = JsonObject::new();
            let props = f.requested_schema.properties().unwrap_or(&empty);
            for (name, prop) in props {
                let choices = choices_of(prop);
                if let Some(c) = &choices {
                    say(&format!("  {name}:"));
                    for option in c.listing() {
                        say(&option);
                    }
                }
                let question = field_question(name, prop, required.contains(&name.as_str()), choices.as_ref());
                loop {
                    let Some(line) = prompt_line(&question) else {
                        return cancel();
                    };
                    if line.is_empty() {
                        if let Some(d) = prop.get("default") {
                            content.insert(name.clone(), d.clone());
                            break;
                        }
                        if !required.contains(&name.as_str()) {
                            break;
                        }
                        say(&format!("  {name} is required"));
                        continue;
                    }
                    let answer = match &choices {
                        Some(c) => c.answer(&line),
                        None => field_value(&line, prop),
                    };
                    match answer {
                        Ok(v) => {
                            content.insert(name.clone(), v);
                            break;
                        }
                        Err(e) => say(&format!("  {e}")),
                    }
                }
            }
            ElicitResult::accept(content)
        }
    }
}

fn cancel() -> ElicitResult {
    let mut r = ElicitResult::decline();
    r.action = mcpkit::types::schema::ElicitAction::Cancel;
    r
}

/// The question for one field: `  name (type[: how to pick][, required]) description [default]: `.
fn field_question(name: &str, prop: &Value, required: bool, choices: Option<&Choices>) -> String {
    let ty = prop.get("type").and_then(Value::as_str).unwrap_or("string");
    let mut q = format!("  {name} ({ty}");
    if let Some(c) = choices {
        q.push_str(&format!(": {}", c.hint()));
    }
    if required {
        q.push_str(", required");
    }
    q.push(')');
    if let Some(d) = prop.get("description").and_then(Value::as_str) {
        q.push_str(&format!(" {d}"));
    }
    if let Some(d) = prop.get("default") {
        q.push_str(&format!(" [{d}]"));
    }
    q.push_str(": ");
    q
}

/// Convert one typed answer.
pub fn field_value(line: &str, prop: &Value) -> Result<Value, String> {
    let ty = prop.get("type").and_then(Value::as_str).unwrap_or("string");
    let v = match ty {
        "integer" => line
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("{line:?} is not an integer"))?,
        "number" => match serde_json::from_str::<Value>(line.trim()) {
            Ok(v @ Value::Number(_)) => v,
            _ => return Err(format!("{line:?} is not a number")),
        },
        "boolean" => match line.trim() {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => return Err("answer yes or no".to_owned()),
        },
        "array" => Value::Array(
            line.split(',')
                .map(|s| Value::String(s.trim().to_owned()))
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
                .collect(),
        ),
        _ => Value::String(line.to_owned()),
    };
    if let Some(choices) = prop.get("enum").and_then(Value::as_array) {
        if !choices.contains(&v) {
            return Err(format!("choose one of {}", Value::Array(choices.clone())));
        }
    }
    Ok(v)
}
