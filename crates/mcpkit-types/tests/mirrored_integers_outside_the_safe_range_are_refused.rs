//! `param_text` mirrors an integer into its `Mcp-Param-*` header only inside JSON's safe range
//! (±(2^53 − 1)). `i64::MIN` is outside it on both sides of the check: it must be refused, not
//! overflow (a panic in a debug build, a negative "absolute value" that passed the check in a
//! release build).

use mcpkit_types::headers::{param_text, ParamKind};
use serde_json::json;

#[test]
fn the_most_negative_integer_is_not_mirrored() {
    assert_eq!(param_text(&json!(i64::MIN), ParamKind::Integer), None);
    assert_eq!(param_text(&json!(i64::MIN + 1), ParamKind::Integer), None);
    assert_eq!(param_text(&json!(u64::MAX), ParamKind::Integer), None);
}

#[test]
fn the_safe_range_is_mirrored_to_its_edges() {
    let max = (1_i64 << 53) - 1;
    assert_eq!(
        param_text(&json!(max), ParamKind::Integer).as_deref(),
        Some("9007199254740991")
    );
    assert_eq!(
        param_text(&json!(-max), ParamKind::Integer).as_deref(),
        Some("-9007199254740991")
    );
    assert_eq!(param_text(&json!(max + 1), ParamKind::Integer), None);
    assert_eq!(param_text(&json!(-max - 1), ParamKind::Integer), None);
    assert_eq!(param_text(&json!(-3.0), ParamKind::Integer).as_deref(), Some("-3"));
}
