//! The client example, run as a process as a user runs it, uploading a
//! 64 MiB file to a server that refuses it at once and stops reading: the
//! refusal is printed at once, and the client exits by itself, as curl
//! does, instead of waiting in a write the server will never take.

use h1proto_test_support::process as server_process;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn an_early_413_during_a_64_mib_upload_is_printed_at_once_and_the_client_exits() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // The server: reads the head, answers 413, then reads nothing more and
    // keeps the connection open until the test ends.
    let (done, hold) = mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            assert_eq!(conn.read(&mut byte).unwrap(), 1, "closed in the head");
            head.push(byte[0]);
        }
        conn.write_all(
            b"HTTP/1.1 413 Content Too Large\r\nContent-Length: 10\r\n\
              Connection: close\r\n\r\ntoo large\n",
        )
        .unwrap();
        let _ = hold.recv_timeout(Duration::from_secs(30));
        String::from_utf8(head).unwrap()
    });

    // More than every socket buffer on the way holds (a sparse file:
    // 64 MiB of zeros, read from disk like any other).
    let path = std::env::temp_dir().join(format!("h1proto-upload-{}.bin", std::process::id()));
    std::fs::File::create(&path)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();

    let binary = server_process::binary("client");
    let started = Instant::now();
    let mut client = Command::new(binary)
        .args(["-v", "--data-binary"])
        .arg(format!("@{}", path.display()))
        .arg(format!("http://{addr}/upload"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = client.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(10) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = started.elapsed();
    if status.is_none() {
        let _ = client.kill();
    }
    let output = client.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&path);
    drop(done);
    let head = server.join().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        status.is_some(),
        "the client was still running after {took:?}: {err}"
    );
    assert!(
        took < Duration::from_secs(2),
        "the client took {took:?} to show the refusal and exit: {err}"
    );
    assert!(head.contains("content-length: 67108864\r\n"), "{head}");
    assert!(
        err.contains("< HTTP/1.1 413 Content Too Large\r\n"),
        "{err}"
    );
    assert_eq!(out, "too large\n");
    // curl exits 0 once it printed the response, whatever its status.
    assert!(output.status.success(), "{:?}: {err}", output.status);
}

/// Both example servers echo a body as it arrives: the client example
/// takes the echo in while it uploads, so a file larger than every socket
/// buffer on the way comes back whole instead of both sides waiting for
/// the other to read.
#[test]
fn a_64_mib_upload_to_a_streamed_echo_comes_back_whole() {
    const LEN: u64 = 64 << 20;
    let path = std::env::temp_dir().join(format!("h1proto-echo-{}.bin", std::process::id()));
    // Not all zeros: a byte out of place would show.
    let piece: Vec<u8> = (0..=250u8).cycle().take(1 << 20).collect();
    let mut file = std::fs::File::create(&path).unwrap();
    for _ in 0..LEN >> 20 {
        file.write_all(&piece).unwrap();
    }
    drop(file);
    for name in server_process::SERVERS {
        let server = server_process::Server::start(name, &server_process::Launch::default());
        let started = Instant::now();
        let output = Command::new(server_process::binary("client"))
            .arg("--data-binary")
            .arg(format!("@{}", path.display()))
            .arg(format!("http://{}/echo", server.addr))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let took = started.elapsed();
        assert!(
            output.status.success(),
            "{name}: {:?} after {took:?}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.stdout.len() as u64, LEN, "{name}");
        assert!(
            output.stdout.chunks(1 << 20).all(|chunk| chunk == piece),
            "{name}: the echo differs"
        );
    }
    let _ = std::fs::remove_file(&path);
}
