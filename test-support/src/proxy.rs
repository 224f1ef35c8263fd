//! What the proxy tests share: the example proxy started in-process on
//! 127.0.0.1:0, scripted upstreams on raw sockets that record every byte
//! that reaches them, and a raw client. Every read has a timeout, so a
//! test that hangs fails instead.
#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use h1proto::{Event, Limits, RequestDecoder, ResponseDecoder};
use http::{HeaderMap, Method, Request, Response};

pub use crate::examples::proxy;

/// How long any single read in these tests may block.
pub const READ_LIMIT: Duration = Duration::from_secs(10);

/// A proxy running in this process until the test process exits.
pub struct Running {
    pub addr: SocketAddr,
    pub proxy: Arc<proxy::Proxy>,
}

/// Starts the example proxy in front of `upstream`, with the session
/// defaults except a short lingering close, after `tweak`.
pub fn start_proxy_with(upstream: &str, tweak: impl FnOnce(&mut proxy::Args)) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let mut args = proxy::Args::new(upstream);
    args.config.timeouts.linger = Duration::from_millis(200);
    tweak(&mut args);
    let running = Arc::new(proxy::Proxy::new(&args).expect("valid arguments"));
    let shared = Arc::clone(&running);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            // The sender lives as long as the proxy: no shutdown.
            let (_stop, stopped) = tokio::sync::watch::channel(false);
            let policy = proxy::common::AcceptPolicy::new(args.max_connections);
            let admission = proxy::common::Admission::new(policy);
            let _ = proxy::run(listener, shared, &admission, stopped).await;
        });
    });
    Running {
        addr,
        proxy: running,
    }
}

/// Starts the proxy with the defaults.
pub fn start_proxy(upstream: SocketAddr) -> Running {
    start_proxy_with(&upstream.to_string(), |_| {})
}

// ------------------------------------------------------------- upstreams

/// A request as an upstream received it.
#[derive(Debug)]
pub struct Received {
    pub head: Request<()>,
    pub body: Vec<u8>,
    pub trailers: Option<HeaderMap>,
    /// The head as it came over the wire.
    pub raw_head: String,
}

/// One connection to a scripted upstream. Everything read is recorded.
pub struct Conn {
    pub stream: TcpStream,
    decoder: RequestDecoder,
    buf: BytesMut,
    record: Recording,
    eof: bool,
}

impl Conn {
    /// Reads more bytes; `false` at the end of the stream (or an error).
    fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) | Err(_) => {
                self.eof = true;
                false
            }
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                self.record.lock().unwrap().extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// The next request head, its body left to read; `None` once the
    /// connection ended (or sent something h1proto refuses).
    pub fn read_head(&mut self) -> Option<Request<()>> {
        loop {
            match self.decoder.decode(&mut self.buf) {
                Ok(Some(Event::Head { head, .. })) => return Some(head),
                Ok(Some(_)) => {}
                Ok(None) => {
                    if !self.fill() {
                        return None;
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// The rest of the current request: its body and trailers; `None` if
    /// the connection ended inside it.
    pub fn read_rest(&mut self) -> Option<(Vec<u8>, Option<HeaderMap>)> {
        let mut body = Vec::new();
        let mut trailers = None;
        loop {
            let event = if self.eof {
                self.decoder.decode_eof(&mut self.buf)
            } else {
                self.decoder.decode(&mut self.buf)
            };
            match event {
                Ok(Some(Event::Data(d))) => body.extend_from_slice(&d),
                Ok(Some(Event::Trailers(t))) => trailers = Some(t),
                Ok(Some(Event::End(_))) => return Some((body, trailers)),
                Ok(Some(_)) => {}
                Ok(None) if self.eof => return None,
                Ok(None) => {
                    self.fill();
                }
                Err(_) => return None,
            }
        }
    }

    /// The next whole request; `None` once the connection ended.
    pub fn read_request(&mut self) -> Option<Received> {
        let start = self.record.lock().unwrap().len() - self.buf.len();
        let head = self.read_head()?;
        let raw = self.record.lock().unwrap()[start..].to_vec();
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(raw.len(), |i| i + 4);
        let raw_head = String::from_utf8_lossy(&raw[..end]).into_owned();
        let (body, trailers) = self.read_rest()?;
        Some(Received {
            head,
            body,
            trailers,
            raw_head,
        })
    }

    pub fn write(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
    }

    /// Waits (bounded) for the peer to close; `true` if it did.
    pub fn wait_for_close(&mut self) -> bool {
        let deadline = Instant::now() + READ_LIMIT;
        while Instant::now() < deadline {
            if !self.fill() {
                return true;
            }
        }
        false
    }
}

/// What one upstream connection received, shared with its script.
type Recording = Arc<Mutex<Vec<u8>>>;

/// A scripted upstream on 127.0.0.1:0: each connection is handed to the
/// script on its own thread. It records what every connection received.
pub struct Upstream {
    pub addr: SocketAddr,
    conns: Arc<Mutex<Vec<Recording>>>,
    finished: Arc<AtomicUsize>,
}

impl Upstream {
    pub fn start(script: impl Fn(&mut Conn) + Send + Sync + 'static) -> Upstream {
        Upstream::start_lagging(Duration::ZERO, script)
    }

    /// As [`start`](Self::start), but each accepted connection is counted
    /// (and handed to the script) only `lag` after `accept` returned it:
    /// an accepting thread that a loaded machine runs late, made
    /// deterministic.
    pub fn start_lagging(
        lag: Duration,
        script: impl Fn(&mut Conn) + Send + Sync + 'static,
    ) -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let conns: Arc<Mutex<Vec<Recording>>> = Arc::default();
        let finished = Arc::new(AtomicUsize::new(0));
        let script = Arc::new(script);
        let (list, done) = (Arc::clone(&conns), Arc::clone(&finished));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                if !lag.is_zero() {
                    std::thread::sleep(lag);
                }
                stream.set_read_timeout(Some(READ_LIMIT)).unwrap();
                let record = Arc::new(Mutex::new(Vec::new()));
                list.lock().unwrap().push(Arc::clone(&record));
                let (script, done) = (Arc::clone(&script), Arc::clone(&done));
                std::thread::spawn(move || {
                    let mut conn = Conn {
                        stream,
                        decoder: RequestDecoder::new(Limits::default()),
                        buf: BytesMut::new(),
                        record,
                        eof: false,
                    };
                    script(&mut conn);
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        Upstream {
            addr,
            conns,
            finished,
        }
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.conns.lock().unwrap().len()
    }

    /// What each connection received, in the order they were accepted.
    pub fn received(&self) -> Vec<Vec<u8>> {
        let conns = self.conns.lock().unwrap();
        conns.iter().map(|c| c.lock().unwrap().clone()).collect()
    }

    /// Waits (bounded) until every accepted connection's script returned.
    /// Only the connections accepted so far count: see
    /// [`wait_settled`](Self::wait_settled).
    pub fn wait_idle(&self) -> bool {
        self.wait_settled(0)
    }

    /// Waits (bounded) until at least `opened` connections were accepted
    /// and every accepted connection's script returned. A connection the
    /// proxy opened waits complete in the kernel's accept queue from the
    /// moment its `connect` returns, but the accepting thread may take it
    /// from there much later: after the proxy closed it, and after the
    /// client saw the end of the exchange it belonged to. Counting on
    /// [`accepted`](Self::accepted) alone then misses it, and the next
    /// exchange finds it among its own.
    pub fn wait_settled(&self, opened: usize) -> bool {
        let deadline = Instant::now() + READ_LIMIT;
        while Instant::now() < deadline {
            let accepted = self.accepted();
            if accepted >= opened && self.finished.load(Ordering::SeqCst) == accepted {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }
}

/// An address where nothing listens.
pub fn unused_addr() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

// ---------------------------------------------------------------- clients

/// A response as a client received it.
#[derive(Debug)]
pub struct Got {
    pub interim: Vec<Response<()>>,
    pub head: Response<()>,
    pub body: Vec<u8>,
    pub trailers: Option<HeaderMap>,
    /// Everything read for this response (heads included).
    pub raw: String,
}

impl Got {
    pub fn status(&self) -> u16 {
        self.head.status().as_u16()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.headers().get(name).and_then(|v| v.to_str().ok())
    }
}

/// A raw client connection to the proxy.
pub struct Client {
    pub stream: TcpStream,
    decoder: ResponseDecoder,
    buf: BytesMut,
    raw: Vec<u8>,
    eof: bool,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(READ_LIMIT)).unwrap();
        Client {
            stream,
            decoder: ResponseDecoder::new(Limits::default()),
            buf: BytesMut::new(),
            raw: Vec::new(),
            eof: false,
        }
    }

    /// Sends raw bytes; the responses to expect are told with `expect`.
    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// Declares that a response to `method` is due.
    pub fn expect(&mut self, method: &Method) {
        self.decoder.expect_response_to(method);
    }

    /// Sends a request and reads its response.
    pub fn request(&mut self, method: &Method, bytes: &[u8]) -> Got {
        self.expect(method);
        self.send(bytes);
        self.response().expect("a response")
    }

    fn fill(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk)?;
        self.buf.extend_from_slice(&chunk[..n]);
        self.raw.extend_from_slice(&chunk[..n]);
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// The next interim head only (for a client waiting for
    /// `100 Continue`); `None` if a final head or the end came first.
    pub fn interim(&mut self) -> Option<Response<()>> {
        loop {
            match self.decoder.decode(&mut self.buf) {
                Ok(Some(Event::Interim(head))) => return Some(head),
                Ok(Some(_)) | Err(_) => return None,
                Ok(None) => {
                    if !self.fill().ok()? {
                        return None;
                    }
                }
            }
        }
    }

    /// The next response, interim heads gathered; `Err` with what was
    /// read when the connection ended first or the bytes were refused.
    pub fn response(&mut self) -> Result<Got, String> {
        let mut interim = Vec::new();
        let mut head = None;
        let mut body = Vec::new();
        let mut trailers = None;
        self.raw.clear();
        self.raw.extend_from_slice(&self.buf);
        loop {
            let event = if self.eof {
                self.decoder.decode_eof(&mut self.buf)
            } else {
                self.decoder.decode(&mut self.buf)
            };
            match event {
                Ok(Some(Event::Interim(h))) => interim.push(h),
                Ok(Some(Event::Head { head: h, .. })) => head = Some(h),
                Ok(Some(Event::Data(d))) => body.extend_from_slice(&d),
                Ok(Some(Event::Trailers(t))) => trailers = Some(t),
                Ok(Some(Event::End(_))) => {
                    return Ok(Got {
                        interim,
                        head: head.expect("a head before the end"),
                        body,
                        trailers,
                        raw: String::from_utf8_lossy(&self.raw).into_owned(),
                    });
                }
                Ok(Some(_)) => {}
                Ok(None) if self.eof => {
                    return Err(String::from_utf8_lossy(&self.raw).into_owned());
                }
                Ok(None) => {
                    if let Err(err) = self.fill() {
                        let raw = String::from_utf8_lossy(&self.raw);
                        return Err(format!("{err} after {raw:?}"));
                    }
                }
                Err(err) => {
                    let raw = String::from_utf8_lossy(&self.raw);
                    return Err(format!("{err} in {raw:?}"));
                }
            }
        }
    }

    /// `true` when the proxy closed the connection (bounded wait); bytes
    /// that still come are read and dropped.
    pub fn is_closed_by_peer(&mut self) -> bool {
        let deadline = Instant::now() + READ_LIMIT;
        while Instant::now() < deadline {
            match self.fill() {
                Ok(false) | Err(_) => return true,
                Ok(true) => {}
            }
        }
        false
    }

    /// Shuts down the sending half.
    pub fn shutdown_write(&self) {
        let _ = self.stream.shutdown(Shutdown::Write);
    }
}

/// A GET request for `path`.
pub fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: example.com\r\n\r\n").into_bytes()
}

/// A response with a `Content-Length` body.
pub fn ok(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
