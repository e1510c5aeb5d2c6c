use mcpkit::server::Args;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greet {
    name: String,
}

/// Greets.
#[mcpkit::tool]
async fn greet(Args(g): Args<Greet>, loud: bool) -> String {
    if loud { g.name.to_uppercase() } else { g.name }
}

fn main() {}
