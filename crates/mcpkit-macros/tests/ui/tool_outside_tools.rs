struct Calc;

impl Calc {
    #[mcpkit::tool]
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
