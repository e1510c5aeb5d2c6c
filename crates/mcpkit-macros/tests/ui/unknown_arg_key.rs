/// Adds.
#[mcpkit::tool]
async fn add(a: i64, #[arg(descripton = "The second term.")] b: i64) -> i64 {
    a + b
}

fn main() {}
