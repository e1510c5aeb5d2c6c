/// Reads.
#[mcpkit::tool(read_only = "yes")]
async fn read() -> String {
    String::new()
}

fn main() {}
