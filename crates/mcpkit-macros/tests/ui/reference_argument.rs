/// Says it back.
#[mcpkit::tool]
async fn echo(message: &str) -> String {
    message.to_owned()
}

fn main() {}
