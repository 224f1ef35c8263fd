//! A two-party harness for the connection scenario tests.
//!
//! [`Pair`] wires a [`ClientConnection`] to a [`ServerConnection`] through
//! memory, in the style of quinn-proto's test pair: each side's output queue
//! is drained with vectored reads (as a socket write would) into the other
//! side's read buffer. There are no sockets and no clocks; the tests decide
//! when bytes move. Raw bytes can be injected on either side to play an
//! HTTP/1.0 peer, a broken peer, or a peer that pipelines.
#![allow(dead_code)]

use std::io::IoSlice;

use bytes::{Buf, BytesMut};
use h1proto::{ClientConnection, Config, Error, Event, KeepAlive, ServerConnection};
use http::{Request, Response};

/// A server-side event.
pub type ServerEvent = Event<Request<()>>;
/// A client-side event.
pub type ClientEvent = Event<Response<()>>;

/// What one drain of an output queue moved.
#[derive(Debug, Default, Clone)]
pub struct Drained {
    /// The bytes, in order.
    pub bytes: Vec<u8>,
    /// How many segments the queue held before the drain.
    pub segments: usize,
}

impl Drained {
    /// The bytes as text (the tests only send ASCII).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// Drains a connection's output the way a socket writer would: vectored
/// slices, then `advance` by what was "written".
pub fn drain(out: &mut h1proto::Segments) -> Drained {
    let mut drained = Drained {
        segments: out.segment_count(),
        ..Drained::default()
    };
    while out.has_remaining() {
        let mut slices = [IoSlice::new(&[]); 64];
        let n = out.io_slices(&mut slices);
        assert!(n > 0, "bytes remain but no slice was produced");
        let mut written = 0;
        for slice in &slices[..n] {
            assert!(!slice.is_empty(), "empty segment in the output queue");
            drained.bytes.extend_from_slice(slice);
            written += slice.len();
        }
        out.advance(written);
    }
    drained
}

/// Polls a server until it has nothing more to say.
pub fn poll_server(
    server: &mut ServerConnection,
    buf: &mut BytesMut,
) -> Result<Vec<ServerEvent>, Error> {
    let mut events = Vec::new();
    while let Some(ev) = server.poll_event(buf)? {
        events.push(ev);
    }
    Ok(events)
}

/// Polls a client until it has nothing more to say.
pub fn poll_client(
    client: &mut ClientConnection,
    buf: &mut BytesMut,
) -> Result<Vec<ClientEvent>, Error> {
    let mut events = Vec::new();
    while let Some(ev) = client.poll_event(buf)? {
        events.push(ev);
    }
    Ok(events)
}

/// A client and a server connected through memory.
pub struct Pair {
    pub client: ClientConnection,
    pub server: ServerConnection,
    /// The server's read buffer: bytes the client wrote, not yet decoded.
    pub server_in: BytesMut,
    /// The client's read buffer: bytes the server wrote, not yet decoded.
    pub client_in: BytesMut,
    /// Every byte the client ever wrote (or was injected towards the server).
    pub client_wire: Vec<u8>,
    /// Every byte the server ever wrote (or was injected towards the client).
    pub server_wire: Vec<u8>,
    /// Every server event so far, in order.
    pub server_events: Vec<ServerEvent>,
    /// Every client event so far, in order.
    pub client_events: Vec<ClientEvent>,
}

impl Default for Pair {
    fn default() -> Self {
        Pair::new()
    }
}

impl Pair {
    /// Both sides with the default configuration.
    pub fn new() -> Self {
        Pair::with_configs(Config::default(), Config::default())
    }

    /// Each side with its own configuration.
    pub fn with_configs(client: Config, server: Config) -> Self {
        Pair {
            client: ClientConnection::new(client),
            server: ServerConnection::new(server),
            server_in: BytesMut::new(),
            client_in: BytesMut::new(),
            client_wire: Vec::new(),
            server_wire: Vec::new(),
            server_events: Vec::new(),
            client_events: Vec::new(),
        }
    }

    /// Moves the client's queued output into the server's read buffer.
    pub fn drain_client(&mut self) -> Drained {
        let d = drain(self.client.output());
        self.server_in.extend_from_slice(&d.bytes);
        self.client_wire.extend_from_slice(&d.bytes);
        d
    }

    /// Moves the server's queued output into the client's read buffer.
    pub fn drain_server(&mut self) -> Drained {
        let d = drain(self.server.output());
        self.client_in.extend_from_slice(&d.bytes);
        self.server_wire.extend_from_slice(&d.bytes);
        d
    }

    /// Bytes from a (pretend) client, straight into the server's buffer.
    pub fn inject_to_server(&mut self, raw: &[u8]) {
        self.server_in.extend_from_slice(raw);
        self.client_wire.extend_from_slice(raw);
    }

    /// Bytes from a (pretend) server, straight into the client's buffer.
    pub fn inject_to_client(&mut self, raw: &[u8]) {
        self.client_in.extend_from_slice(raw);
        self.server_wire.extend_from_slice(raw);
    }

    /// Polls the server until `Ok(None)`; returns the new events.
    pub fn poll_server(&mut self) -> Result<Vec<ServerEvent>, Error> {
        let events = poll_server(&mut self.server, &mut self.server_in)?;
        self.server_events.extend(events.iter().cloned());
        Ok(events)
    }

    /// Polls the client until `Ok(None)`; returns the new events.
    pub fn poll_client(&mut self) -> Result<Vec<ClientEvent>, Error> {
        let events = poll_client(&mut self.client, &mut self.client_in)?;
        self.client_events.extend(events.iter().cloned());
        Ok(events)
    }

    /// Runs both sides until no byte moves and no event comes: client
    /// output to the server, server events to `handler` (which answers
    /// through the connection), server output to the client, client events.
    /// Returns the client events of the whole run. Panics on a protocol
    /// error, and after 10 000 rounds (a livelock).
    pub fn run(
        &mut self,
        mut handler: impl FnMut(&mut ServerConnection, &ServerEvent),
    ) -> Vec<ClientEvent> {
        let mut client_events = Vec::new();
        for _ in 0..10_000 {
            let mut progress = !self.drain_client().bytes.is_empty();
            loop {
                let ev = self.server.poll_event(&mut self.server_in).expect("server");
                let Some(ev) = ev else { break };
                progress = true;
                handler(&mut self.server, &ev);
                self.server_events.push(ev);
            }
            progress |= !self.drain_server().bytes.is_empty();
            let events = self.poll_client().expect("client");
            progress |= !events.is_empty();
            client_events.extend(events);
            if !progress {
                return client_events;
            }
        }
        panic!("the pair did not go idle");
    }
}

/// A GET request for `path`, with an empty body.
pub fn get(path: &str) -> Request<&'static str> {
    Request::get(path)
        .header("host", "example.com")
        .body("")
        .unwrap()
}

/// The verdict of an `End` event, `None` for other events.
pub fn end_of<H: h1proto::MessageHead>(ev: &Event<H>) -> Option<KeepAlive> {
    match ev {
        Event::End(verdict) => Some(*verdict),
        _ => None,
    }
}

/// The bytes of a `Data` event, `None` for other events.
pub fn data_of<H: h1proto::MessageHead>(ev: &Event<H>) -> Option<&[u8]> {
    match ev {
        Event::Data(d) => Some(d),
        _ => None,
    }
}

/// The verdict of the last event, if it is an `End`.
pub fn last_end<H: h1proto::MessageHead>(events: &[Event<H>]) -> Option<KeepAlive> {
    events.last().and_then(end_of)
}

/// A request with this method, path and body.
pub fn request(method: http::Method, path: &str, body: &'static str) -> Request<&'static str> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("host", "example.com")
        .body(body)
        .unwrap()
}

/// The `(status, body)` of each response in a run of client events, with
/// the data of each response concatenated; checks the event grammar
/// (Head, Data*, Trailers?, End) on the way.
pub fn responses(events: &[ClientEvent]) -> Vec<(u16, Vec<u8>)> {
    let mut out: Vec<(u16, Vec<u8>)> = Vec::new();
    let mut open = false;
    for ev in events {
        match ev {
            Event::Head { head, .. } => {
                assert!(!open, "head inside a message: {events:?}");
                open = true;
                out.push((head.status().as_u16(), Vec::new()));
            }
            Event::Data(d) => {
                assert!(open, "data outside a message");
                out.last_mut().unwrap().1.extend_from_slice(d);
            }
            Event::Trailers(_) => assert!(open, "trailers outside a message"),
            Event::End(_) => {
                assert!(open, "end outside a message");
                open = false;
            }
            Event::Interim(_) => assert!(!open, "interim inside a message"),
            _ => panic!("unknown event {ev:?}"),
        }
    }
    assert!(!open, "unfinished message: {events:?}");
    out
}

/// The request heads among server events.
pub fn request_heads(events: &[ServerEvent]) -> Vec<&Request<()>> {
    events
        .iter()
        .filter_map(|ev| match ev {
            Event::Head { head, .. } => Some(head),
            _ => None,
        })
        .collect()
}

/// The concatenated `Data` of a run of events.
pub fn body_of<H: h1proto::MessageHead>(events: &[Event<H>]) -> Vec<u8> {
    let mut body = Vec::new();
    for ev in events {
        if let Event::Data(d) = ev {
            body.extend_from_slice(d);
        }
    }
    body
}

/// Text of some bytes, for assertions on the wire.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
