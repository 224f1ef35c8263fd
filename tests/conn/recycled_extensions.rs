//! A head's extension map goes round a connection, as its field map does:
//! the encoder keeps the map of a head it wrote (when it held anything),
//! and the connection hands it to its decoder for the next head decoded
//! with the wire view. A proxy forwards each decoded head with its
//! extensions, so in steady state a head decoded with the wire view needs
//! no new map. Counted with a per-thread allocation counter.

use bytes::BytesMut;
use h1proto::{ClientConnection, Config, Event, ServerConnection};
use http::{Request, Response};

/// Allocations this thread made (the binary counts with the test allocator).
fn allocations() -> usize {
    h1proto_test_support::alloc::thread_allocations()
}

fn wire_config() -> Config {
    let mut config = Config::default();
    config.wire_view = true;
    config
}

const REQUEST: &[u8] = b"GET /a HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n";

/// Allocations per exchange on a server connection with the wire view on,
/// in steady state: each request is answered by a response that carries
/// the request's extensions (`forward`, as a proxy forwards a head's
/// extensions) or none (the request's are dropped with it).
fn server_exchange_allocations(forward: bool) -> usize {
    let mut server = ServerConnection::new(wire_config());
    let mut buf = BytesMut::with_capacity(4096);
    let mut exchange = |server: &mut ServerConnection| {
        buf.extend_from_slice(REQUEST);
        let Some(Event::Head { head, .. }) = server.poll_event(&mut buf).unwrap() else {
            panic!("a request head")
        };
        assert!(matches!(
            server.poll_event(&mut buf),
            Ok(Some(Event::End(_)))
        ));
        let (parts, ()) = head.into_parts();
        assert!(parts.extensions.get::<h1proto::wire::WireHead>().is_some());
        let mut res = Response::new("hi");
        if forward {
            *res.extensions_mut() = parts.extensions;
        }
        server.sender().send_response(res).unwrap();
        let out = server.output();
        bytes::Buf::advance(out, bytes::Buf::remaining(out));
    };
    for _ in 0..8 {
        exchange(&mut server);
    }
    let before = allocations();
    for _ in 0..100 {
        exchange(&mut server);
    }
    (allocations() - before) / 100
}

#[test]
fn a_server_connection_reuses_the_extension_map_of_the_response_it_wrote() {
    let recycled = server_exchange_allocations(true);
    let fresh = server_exchange_allocations(false);
    // The request's map serves the next request's head: only the view
    // itself is allocated, where a new map costs its table too.
    assert!(
        recycled < fresh,
        "{recycled} allocations per exchange with the map recycled, {fresh} without"
    );
}

/// The client side: a request forwarded with a decoded head's extensions
/// hands its map to the response decoder.
#[test]
fn a_client_connection_reuses_the_extension_map_of_the_request_it_wrote() {
    let per_exchange = |forward: bool| {
        let mut client = ClientConnection::new(wire_config());
        let mut buf = BytesMut::with_capacity(4096);
        let mut extensions = None;
        let mut exchange = |client: &mut ClientConnection| {
            let mut req = Request::get("http://example.com/a").body("").unwrap();
            if let Some(ext) = extensions.take().filter(|_| forward) {
                *req.extensions_mut() = ext;
            }
            client.sender().send_request(req).unwrap();
            let out = client.output();
            bytes::Buf::advance(out, bytes::Buf::remaining(out));
            buf.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            let Some(Event::Head { head, .. }) = client.poll_event(&mut buf).unwrap() else {
                panic!("a response head")
            };
            assert!(matches!(
                client.poll_event(&mut buf),
                Ok(Some(Event::End(_)))
            ));
            extensions = Some(head.into_parts().0.extensions);
        };
        for _ in 0..8 {
            exchange(&mut client);
        }
        let before = allocations();
        for _ in 0..100 {
            exchange(&mut client);
        }
        (allocations() - before) / 100
    };
    let recycled = per_exchange(true);
    let fresh = per_exchange(false);
    assert!(
        recycled < fresh,
        "{recycled} allocations per exchange with the map recycled, {fresh} without"
    );
}
