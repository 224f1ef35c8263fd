//! Chunk extensions through sessions (`Config::chunk_extensions`): each
//! one is handed out with the first body piece of its chunk, or with the
//! end of the body for the last-chunk's, however the bytes were split; a
//! session forwards them with `send_chunk_extensions`, both ways, as a
//! proxy built on sessions does.

use h1proto_test_support::session as session_support;

use std::time::Instant;

use bytes::Bytes;
use h1proto::{ChunkExtensions, ClientSession, Io, ServerSession, Session, SessionError, Step};
use http::{Request, Response};
use session_support::{Harness, test_config};

/// A chunked request whose chunks carry extensions, and its last-chunk.
const REQUEST: &str = "POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\
    5;sig=ab12\r\nhello\r\n\
    1\r\n,\r\n\
    6;part=\"two words\";x\r\n world\r\n\
    0;done\r\n\r\n";

/// What a reader of the body sees: each run of data with the extensions
/// that came with its first piece (`None`: a chunk without any, which
/// continues the run before it), then the last-chunk's.
#[derive(Debug, PartialEq)]
struct Seen {
    runs: Vec<(Option<String>, String)>,
    last: Option<String>,
}

/// A session's `read_data`.
type ReadData<S> = fn(&mut S, Instant) -> Result<Step<Option<Bytes>>, SessionError>;

fn text(ext: Option<&ChunkExtensions>) -> Option<String> {
    ext.map(|e| String::from_utf8(e.as_bytes().to_vec()).unwrap())
}

/// Reads the rest of a body with `read`, noting the extensions `ext`
/// gives after each piece.
fn read_body<S: Session>(
    h: &mut Harness<S>,
    read: ReadData<S>,
    ext: fn(&S) -> Option<&ChunkExtensions>,
) -> Seen {
    let mut seen = Seen {
        runs: Vec::new(),
        last: None,
    };
    while let Some(piece) = h.call(read).ready() {
        let piece = String::from_utf8(piece.to_vec()).unwrap();
        match text(ext(&h.s)) {
            Some(e) => seen.runs.push((Some(e), piece)),
            None => match seen.runs.last_mut() {
                Some((_, run)) => run.push_str(&piece),
                None => seen.runs.push((None, piece)),
            },
        }
    }
    seen.last = text(ext(&h.s));
    seen
}

fn config(on: bool) -> h1proto::Config {
    let mut config = test_config();
    config.chunk_extensions = on;
    config
}

fn expected() -> Seen {
    Seen {
        runs: vec![
            (Some(";sig=ab12".into()), "hello,".into()),
            (Some(";part=\"two words\";x".into()), " world".into()),
        ],
        last: Some(";done".into()),
    }
}

#[test]
fn a_server_session_hands_out_each_chunks_extensions_with_its_first_piece() {
    for read_size in 1..=REQUEST.len() {
        let t0 = Instant::now();
        let mut h = Harness::new(ServerSession::new(config(true), t0), t0);
        h.read_size = read_size;
        h.send(REQUEST);
        let req = h.call(ServerSession::next_request).ready().unwrap();
        assert_eq!(req.uri(), "/up");
        assert_eq!(h.s.chunk_extensions(), None, "before any piece");
        let seen = read_body(
            &mut h,
            ServerSession::read_data,
            ServerSession::chunk_extensions,
        );
        assert_eq!(seen, expected(), "read {read_size} bytes at a time");

        // The next request starts with none.
        h.s.sender().send_response(Response::new("")).unwrap();
        h.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        h.call(ServerSession::next_request).ready().unwrap();
        assert_eq!(h.s.chunk_extensions(), None);
    }
}

#[test]
fn without_the_option_sessions_read_no_extensions() {
    let t0 = Instant::now();
    let mut h = Harness::new(ServerSession::new(config(false), t0), t0);
    h.send(REQUEST);
    h.call(ServerSession::next_request).ready().unwrap();
    let seen = read_body(
        &mut h,
        ServerSession::read_data,
        ServerSession::chunk_extensions,
    );
    assert_eq!(
        seen,
        Seen {
            runs: vec![(None, "hello, world".into())],
            last: None,
        }
    );
}

/// A relay: the server session reads the request's chunks and sends them
/// back in a chunked response with their extensions, and a client session
/// reads the same extensions with the same data.
#[test]
fn sessions_forward_chunk_extensions_both_ways() {
    for read_size in [1, 7, usize::MAX] {
        let t0 = Instant::now();
        let mut client = Harness::new(ClientSession::new(config(true), t0), t0);
        let mut server = Harness::new(ServerSession::new(config(true), t0), t0);
        client.read_size = read_size;
        server.read_size = read_size;

        // The client writes the request with the session API.
        let req = Request::post("/up")
            .header("host", "a")
            .header("transfer-encoding", "chunked")
            .body(())
            .unwrap();
        client.s.sender().send_head(req).unwrap();
        for (ext, data) in [
            (Some(";sig=ab12"), "hello"),
            (None, ","),
            (Some(";x"), " world"),
        ] {
            if let Some(ext) = ext {
                client
                    .s
                    .sender()
                    .send_chunk_extensions(ChunkExtensions::new(ext).unwrap())
                    .unwrap();
            }
            client.s.sender().send_data(data).unwrap();
        }
        client
            .s
            .sender()
            .send_chunk_extensions(ChunkExtensions::new(";done").unwrap())
            .unwrap();
        client.s.sender().finish(None).unwrap();
        assert_eq!(
            client.call(ClientSession::next_response).blocked(),
            Io::Read
        );
        server.send(client.take_wire());

        // The server relays every piece with its extensions.
        server.call(ServerSession::next_request).ready().unwrap();
        server
            .s
            .sender()
            .send_head(
                Response::builder()
                    .header("transfer-encoding", "chunked")
                    .body(())
                    .unwrap(),
            )
            .unwrap();
        let mut relayed = Seen {
            runs: Vec::new(),
            last: None,
        };
        while let Some(piece) = server.call(ServerSession::read_data).ready() {
            if let Some(ext) = server.s.chunk_extensions().cloned() {
                relayed.runs.push((text(Some(&ext)), String::new()));
                server.s.sender().send_chunk_extensions(ext).unwrap();
            }
            relayed
                .runs
                .last_mut()
                .unwrap()
                .1
                .push_str(std::str::from_utf8(&piece).unwrap());
            server.s.sender().send_data(piece).unwrap();
        }
        if let Some(ext) = server.s.chunk_extensions().cloned() {
            relayed.last = text(Some(&ext));
            server.s.sender().send_chunk_extensions(ext).unwrap();
        }
        server.s.sender().finish(None).unwrap();
        let sent = Seen {
            runs: vec![
                (Some(";sig=ab12".into()), "hello,".into()),
                (Some(";x".into()), " world".into()),
            ],
            last: Some(";done".into()),
        };
        assert_eq!(relayed, sent, "read {read_size} bytes at a time");
        assert_eq!(server.call(ServerSession::next_request).blocked(), Io::Read);

        // The client reads what the client sent, extensions and all.
        client.send(server.take_wire());
        let res = client.call(ClientSession::next_response).ready().unwrap();
        assert_eq!(res.status(), 200);
        let seen = read_body(
            &mut client,
            ClientSession::read_data,
            ClientSession::chunk_extensions,
        );
        assert_eq!(seen, sent, "read {read_size} bytes at a time");
    }
}
