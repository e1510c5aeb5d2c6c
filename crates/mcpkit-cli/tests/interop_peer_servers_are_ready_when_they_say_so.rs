//! The interop tests' peer servers (`support::PeerServer`) are used once they say they are
//! listening, on the port they say, not as soon as some process accepts on a port picked for
//! them. A peer stand-in first holds its port with a listener that drops every connection (as a
//! process that grabbed a released port, or a server still starting, would), and only then
//! serves and prints its banner: a request right after `start` must be answered.

use std::io::{Read, Write};
use std::path::Path;

use crate::support;

/// Binds the port it is given (0: any), drops connections for 1.5 s, then prints
/// `listening on http://127.0.0.1:PORT/mcp` and answers every request with 200 "ready".
const STAND_IN: &str = r#"
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
s.settimeout(0.05)
end = time.time() + 1.5
while time.time() < end:
    try:
        s.accept()[0].close()
    except socket.timeout:
        pass
s.settimeout(None)
print("listening on http://127.0.0.1:%d/mcp" % s.getsockname()[1], flush=True)
while True:
    c = s.accept()[0]
    c.recv(65536)
    c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nready")
    c.close()
"#;

#[test]
fn a_peer_server_is_used_once_it_says_it_listens() {
    let server = support::PeerServer::start(Path::new("python3"), &["-c", STAND_IN]);
    let authority = server.base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream
        .write_all(format!("GET /mcp HTTP/1.1\r\nhost: {authority}\r\n\r\n").as_bytes())
        .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    assert!(
        reply.starts_with("HTTP/1.1 200") && reply.ends_with("ready"),
        "reply: {reply:?}"
    );
}
