/// Logs a line.
#[mcpkit::tool]
async fn log(line: String) {
    println!("{line}");
}

fn main() {}
