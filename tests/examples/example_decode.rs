//! `examples/decode.rs`, run as a user runs it: its output does not depend
//! on how the input is fed (`--chunk N`), as its documentation promises,
//! and trailers are shown as received (order and spelling), at the offset
//! where their section begins.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

/// The example's binary, built with the test's cargo and profile.
fn decode_binary() -> PathBuf {
    static BUILD: Once = Once::new();
    // target/<profile>/deps/<test> -> target/<profile>/examples
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .join("examples");
    BUILD.call_once(|| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--example", "decode"]);
        if dir.parent().and_then(Path::file_name) == Some("release".as_ref()) {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("run cargo build");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
    dir.join("decode")
}

/// The example's output for `input`, fed `chunk` bytes at a time.
fn decode(input: &[u8], args: &[&str], chunk: usize) -> String {
    let path = std::env::temp_dir().join(format!(
        "h1proto-example-decode-{}-{chunk}",
        std::process::id()
    ));
    std::fs::write(&path, input).unwrap();
    let out = Command::new(decode_binary())
        .args(args)
        .args(["--chunk", &chunk.to_string()])
        .arg(&path)
        .output()
        .expect("run the decode example");
    std::fs::remove_file(&path).ok();
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "{out:?}"
    );
    String::from_utf8(out.stdout).unwrap()
}

const CHUNKED_WITH_TRAILERS: &[u8] =
    b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\
5\r\nhello\r\n3;ext=1\r\n, w\r\n0\r\nX-B: 1\r\nx-a: 2\r\nX-b: 3\r\n\r\n\
GET / HTTP/1.1\r\nHost: a\r\n\r\n";

#[test]
fn the_output_is_the_same_for_every_chunk_size() {
    let inputs: [(&[u8], &[&str]); 3] = [
        (CHUNKED_WITH_TRAILERS, &[]),
        (
            include_bytes!("../../examples/captures/pipelined-requests.http"),
            &[],
        ),
        (
            include_bytes!("../../examples/captures/responses.http"),
            &["--method", "HEAD,POST,GET"],
        ),
    ];
    for (input, args) in inputs {
        let whole = decode(input, args, input.len());
        for chunk in [1, 2, 3, 5, 7, 16, 64] {
            assert_eq!(decode(input, args, chunk), whole, "--chunk {chunk}");
        }
    }
}

#[test]
fn trailers_are_shown_as_received_where_their_section_begins() {
    let out = decode(CHUNKED_WITH_TRAILERS, &[], 4);
    let section = CHUNKED_WITH_TRAILERS
        .windows(6)
        .position(|w| w == b"X-B: 1")
        .unwrap();
    let expected = format!(
        "@{section:<6} trailers\n           X-B: 1\n           x-a: 2\n           X-b: 3\n"
    );
    assert!(out.contains(&expected), "{out}");
}
