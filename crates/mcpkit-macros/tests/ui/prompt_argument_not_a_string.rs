/// Asks for a summary.
#[mcpkit::prompt]
async fn summarize(text: String, max_words: u32) -> String {
    format!("Summarize in {max_words} words: {text}")
}

fn main() {}
