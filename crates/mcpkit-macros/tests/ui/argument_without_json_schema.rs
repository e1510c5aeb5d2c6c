struct Point {
    x: i64,
}

/// Moves to a point.
#[mcpkit::tool]
async fn go(to: Point) -> String {
    format!("{}", to.x)
}

fn main() {}
