#[mcpkit::tools]
struct Calc {
    offset: i64,
}

fn main() {}
