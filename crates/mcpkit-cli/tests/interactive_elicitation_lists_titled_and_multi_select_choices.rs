//! Interactive elicitation in `mcpkit call` lists the options of every enum shape with their
//! titles — plain `enum`, titled `oneOf`, legacy `enumNames`, and the multi-selects
//! (`items.enum`, titled `items.anyOf`) — takes an answer by number, value or title, re-asks
//! after an answer that is not a choice, and sends the values (an array for a multi-select).
//! A real terminal session: `mcpkit call test_elicitation_sep1330_enums` (the reference
//! server's SEP-1330 fixture) runs under `script`, which gives it a pseudo-terminal.
#![cfg(unix)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Waits for `marker` in the output after `from`; returns where it ends.
fn wait_for(out: &Mutex<Vec<u8>>, marker: &str, from: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = String::from_utf8_lossy(&out.lock().unwrap()).into_owned();
        if let Some(i) = text.get(from..).and_then(|t| t.find(marker)) {
            return from + i + marker.len();
        }
        assert!(Instant::now() < deadline, "no {marker:?} in the session:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_user_picks_titled_and_multi_select_choices_by_number_value_or_title() {
    if !Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipped: `script` (util-linux) is not installed, so no pseudo-terminal");
        return;
    }
    let command = format!("'{}' call test_elicitation_sep1330_enums", env!("CARGO_BIN_EXE_mcpkit"));
    let mut session = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = Arc::new(Mutex::new(Vec::new()));
    let mut stdout = session.stdout.take().unwrap();
    let sink = out.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let mut stdin = session.stdin.take().unwrap();
    let mut at = 0;
    let mut answer = |marker: &str, line: &str, at: &mut usize| {
        *at = wait_for(&out, marker, *at);
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    answer("[a] ", "a", &mut at);
    answer("  untitledSingle (string: pick one: 1-3)", "2", &mut at);
    answer("  titledSingle (string: pick one: 1-3)", "Second Option", &mut at);
    answer("  legacyEnum (string: pick one: 1-3)", "opt3", &mut at);
    answer(
        "  untitledMulti (array: pick 1 to 3 of 1-3, comma-separated)",
        "1, 3",
        &mut at,
    );
    answer(
        "  titledMulti (array: pick 1 to 3 of 1-3, comma-separated)",
        "9",
        &mut at,
    );
    at = wait_for(&out, "is not a choice", at);
    answer("  titledMulti (array:", "2,third choice", &mut at);
    wait_for(&out, "Elicitation completed", at);
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(20);
    while session.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "mcpkit call did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    reader.join().unwrap();
    let text = String::from_utf8_lossy(&out.lock().unwrap()).replace('\r', "");

    // The options, with their titles and numbers.
    for listed in [
        "    2) option2",
        "    1) First Option (value1)",
        "    2) Second Option (value2)",
        "    3) Option Three (opt3)",
        "    3) Third Choice (value3)",
    ] {
        assert!(text.contains(listed), "{listed:?} not listed:\n{text}");
    }
    // The values went back: the const for a titled option, arrays for the multi-selects.
    let result = text.lines().find(|l| l.starts_with("Elicitation completed")).unwrap();
    let content: serde_json::Value = serde_json::from_str(result.split_once("content=").unwrap().1).unwrap();
    assert_eq!(
        content,
        serde_json::json!({
            "untitledSingle": "option2",
            "titledSingle": "value2",
            "legacyEnum": "opt3",
            "untitledMulti": ["option1", "option3"],
            "titledMulti": ["value2", "value3"]
        }),
        "{text}"
    );
}
