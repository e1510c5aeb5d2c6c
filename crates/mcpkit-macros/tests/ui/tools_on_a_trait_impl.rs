struct Calc;

#[mcpkit::tools]
impl Default for Calc {
    fn default() -> Self {
        Calc
    }
}

fn main() {}
