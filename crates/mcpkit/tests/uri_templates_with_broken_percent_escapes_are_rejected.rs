//! A URI template whose `%` is not followed by two hex digits is rejected with an error; it
//! used to panic inside the RFC 6570 checker when a multi-byte character followed `%X` (found
//! by the `uri_template` fuzz target, fuzz/README.md).
#![cfg(feature = "server")]

use mcpkit::server::uri_template::UriTemplate;

#[test]
fn a_percent_sign_before_a_multi_byte_character_is_an_error_not_a_panic() {
    for template in [
        "x://a%f\u{34f}b",
        "x://%\u{e9}",
        "x://{a}%e\u{1f600}",
        "x://%",
        "x://%g0",
        "x://{%zz}",
    ] {
        let parsed = std::panic::catch_unwind(|| UriTemplate::parse(template));
        let parsed = parsed.unwrap_or_else(|_| panic!("parsing {template:?} panicked"));
        assert!(parsed.is_err(), "{template:?} was accepted");
    }
}

#[test]
fn percent_escapes_still_parse() {
    let t = UriTemplate::parse("x://a%20b/{name}").unwrap();
    assert_eq!(t.matches("x://a%20b/c").unwrap()["name"], "c");
    assert!(UriTemplate::parse("x://{na%41me}").is_ok());
}
