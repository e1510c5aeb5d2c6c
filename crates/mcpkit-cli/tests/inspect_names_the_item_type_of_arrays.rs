//! `mcpkit inspect` shows an array argument with its items' type (`array of string`, nested
//! `array of array of number`, `array of integer|null` for an optional one), not a bare
//! `array`; one without `items` stays `array`. Piped, so the arguments column is not cut to a
//! terminal's width.

use assert_cmd::Command;

use crate::support::handshake_only::config;

#[test]
fn array_arguments_show_their_item_type() {
    let (_dir, config) = config();
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("COLUMNS")
        .env_remove("RUST_LOG")
        .args(["inspect", "--server", "notes", "--config"])
        .arg(&config)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    insta::assert_snapshot!(stdout);
    assert!(
        stdout.contains(
            "values: array of string, [grid: array of array of number], [ids: array of integer|null], [any: array]"
        ),
        "{stdout}"
    );
}
