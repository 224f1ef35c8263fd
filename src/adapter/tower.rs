//! A tower `Service` over one connection, on the tokio driver (feature
//! `tower`).
//!
//! [`serve_connection`] serves any
//! `Service<Request<Incoming>, Response = Response<B>>` whose body `B` is
//! an [`http_body::Body`]: an axum `Router`, a tower-http stack, a
//! hand-written service. It is what hyper's `serve_connection` is to hyper:
//! one connection, the accept loop the application's. Each request goes to
//! the service in turn (pipelined requests are read ahead and answered in
//! order); the session makes every protocol decision, as under
//! [`serve`](super::tokio::serve).
//!
//! - **The request body** is an [`Incoming`], an `http_body::Body` of data
//!   frames and a trailers frame. It streams from the session with
//!   backpressure: a piece is read from the peer only when the body is
//!   polled, one piece at a time, and the first poll is what sends
//!   `100 Continue` to a client that waits for it. A body the service
//!   drops unread is drained or the connection closed after the response,
//!   as the session decides. The body timeout holds for each piece polled;
//!   a body that fails (timeout, malformed chunk) yields an error frame,
//!   the session answers the peer itself, and the connection ends.
//! - **The response body** is sent frame by frame: data, then trailers
//!   (on a chunked body; a body that is not chunked has no place for them,
//!   and they are dropped). A body whose size is known
//!   (`size_hint().exact()`) is sent with `Content-Length`, unless the
//!   service set one; a body all there at its first poll is sent in one
//!   piece with its length; a response to
//!   HEAD, a 204 and a 304 are framed as the session frames them (no body
//!   bytes). Output is corked: when the body's next frame is not ready,
//!   what is queued is written first, so a slow stream is seen as it goes.
//! - **A service that fails** (its `poll_ready` or its future returns an
//!   error, or its response cannot be sent as it is) is answered
//!   `500 Internal Server Error` with `Connection: close`, and
//!   [`serve_connection`] returns the error. A response body that fails
//!   half-way ends the connection: the peer sees the body cut short.
//! - **A service that panics** costs its connection only: the call, its
//!   future and the body's polls run under `catch_unwind`, in the
//!   connection's own task (no task per request).
//!   The peer gets a 500 if no head was sent, and the connection closes.
//!   The panic hook runs as usual (the default one prints the message).
//! - **A client that goes away** while the bridge waits for the service or
//!   for the response body's next frame (it closes its connection, or the
//!   connection fails) has that work dropped, cancelling it, as hyper's
//!   server does, and [`serve_connection`] returns the error
//!   (`UnexpectedEof` for a close): the bridge reads ahead meanwhile
//!   ([`Server::while_connected`]). A client that half-closes after its
//!   request and then reads the answer is served with
//!   [`Server::set_half_close`].
//! - **Graceful shutdown** is the driver's: a [`Server`] given
//!   [`shutdown_on`](Server::shutdown_on) finishes the exchange in progress
//!   and closes, as under `serve`.
//! - **Protocol switches** (`Upgrade`, `CONNECT`): a request that offers
//!   one carries an [`OnUpgrade`] in its extensions. The service answers
//!   `101 Switching Protocols` (or a 2xx to `CONNECT`); once that head is
//!   written, the `OnUpgrade` resolves to an [`Upgraded`]: the
//!   connection's stream, with the bytes the peer sent past the switch
//!   read first. The service usually spawns a task that awaits it. Any
//!   other answer resolves it to an error.
//!
//! ```
//! use axum::{Router, routing::get};
//! use h1proto::Config;
//! use h1proto::adapter::tokio::Server;
//! use h1proto::adapter::tower::serve_connection;
//! use tokio::net::TcpListener;
//!
//! async fn run(listener: TcpListener) -> std::io::Result<()> {
//!     let app = Router::new().route("/", get(|| async { "Hello, World!" }));
//!     loop {
//!         let (stream, _) = listener.accept().await?;
//!         let _ = stream.set_nodelay(true);
//!         let server = Server::new(stream, Config::default());
//!         tokio::spawn(serve_connection(server, app.clone()));
//!     }
//! }
//! # use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! # rt.block_on(async {
//! #     let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
//! #     let addr = listener.local_addr().unwrap();
//! #     tokio::spawn(run(listener));
//! #     let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
//! #     client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").await.unwrap();
//! #     let mut got = String::new();
//! #     client.read_to_string(&mut got).await.unwrap();
//! #     assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
//! #     assert!(got.ends_with("\r\n\r\nHello, World!"), "{got}");
//! # });
//! ```
//!
//! **The client's address**, which hyper's `serve_connection` does not
//! know either: insert it into each request's extensions, with tower's
//! `map_request` (`tower` with its `util` feature, as axum builds it); the
//! router is cloned per connection (a reference count), not rebuilt. A
//! handler takes it with axum's `Extension` extractor, or, inserted as
//! `axum::extract::ConnectInfo(client)` (axum's `tokio` feature, on by
//! default), with `ConnectInfo<SocketAddr>` as under `axum::serve`'s
//! `into_make_service_with_connect_info`.
//!
//! ```no_run
//! use std::net::SocketAddr;
//! use axum::{Extension, Router, routing::get};
//! use h1proto::Config;
//! use h1proto::adapter::tokio::Server;
//! use h1proto::adapter::tower::{Incoming, serve_connection};
//! use tower::ServiceExt;
//!
//! async fn run(listener: tokio::net::TcpListener) -> std::io::Result<()> {
//!     let app = Router::new().route(
//!         "/",
//!         get(|Extension(client): Extension<SocketAddr>| async move { client.to_string() }),
//!     );
//!     loop {
//!         let (stream, client) = listener.accept().await?;
//!         let app = app.clone().map_request(move |mut req: http::Request<Incoming>| {
//!             req.extensions_mut().insert(client);
//!             req
//!         });
//!         tokio::spawn(serve_connection(Server::new(stream, Config::default()), app));
//!     }
//! }
//! ```

use std::any::{Any, TypeId};
use std::error::Error as StdError;
use std::fmt;
use std::future::{Future, poll_fn};
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::{Buf, Bytes, BytesMut};
use http::header::CONTENT_LENGTH;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tower_service::Service;

use super::sealed::Runtime as _;
use super::tokio::{Server, Tokio};
use crate::Session;
use crate::framing::BodyKind;

/// The error type tower services and `http_body` bodies convert into.
type BoxError = Box<dyn StdError + Send + Sync>;

/// Serves `service` on `server`'s connection until the connection is over,
/// then closes it (or, after a protocol switch, hands the stream to the
/// request's [`OnUpgrade`]). Make the server with [`Server::new`], and give
/// it [`shutdown_on`](Server::shutdown_on) for a graceful shutdown; the
/// [module documentation](self) has what the bridge does with requests,
/// bodies, errors, panics and switches.
///
/// With a graceful shutdown: the exchange in progress is finished and
/// answered with `Connection: close` once `stop` turns true.
///
/// ```no_run
/// use h1proto::Config;
/// use h1proto::adapter::tokio::Server;
/// use h1proto::adapter::tower::serve_connection;
///
/// async fn handle(
///     stream: tokio::net::TcpStream,
///     app: axum::Router,
///     mut stop: tokio::sync::watch::Receiver<bool>,
/// ) {
///     let mut server = Server::new(stream, Config::default());
///     server.shutdown_on(async move {
///         let _ = stop.wait_for(|&stop| stop).await;
///     });
///     if let Err(err) = serve_connection(server, app).await {
///         eprintln!("connection: {err}");
///     }
/// }
/// ```
///
/// # Errors
///
/// An I/O error; the peer's protocol error or timeout that ended the
/// connection (answered by the session); the service's error, or a panic,
/// as an `io::Error` of kind `Other` (answered with a 500 when no head was
/// sent yet); a response the session refused to send.
pub fn serve_connection<S, Svc, B>(
    server: Server<S>,
    service: Svc,
) -> impl Future<Output = io::Result<()>>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    Svc: Service<Request<Incoming>, Response = Response<B>>,
    Svc::Error: Into<BoxError>,
    B: Body,
    B::Error: Into<BoxError>,
{
    // Not an `async fn`: its arguments would be held twice (as arguments
    // and as the bindings they move into), and the server is 1.5 KiB that
    // every idle connection keeps.
    let (mut server, mut service) = (server, service);
    async move {
        let result = loop {
            let req = match server.next_request().await {
                Ok(Some(req)) => req,
                Ok(None) => break Ok(()),
                Err(err) => break Err(err),
            };
            // Boxed: the exchange's state (the service's future, the
            // body's, the session calls under way) is several KiB, held
            // only while a request is served, not by every idle
            // connection.
            match Box::pin(exchange(&mut server, &mut service, req)).await {
                Ok(None) => {}
                // Boxed: the switch owns the server, and would hold a
                // second one in every connection's future.
                Ok(Some(switch)) => return Box::pin(switch.hand_over(server)).await,
                Err(err) => break Err(err),
            }
        };
        server.close().await;
        result
    }
}

/// One request, from the service's call to the end of its response.
/// `Some` after a protocol switch: the stream goes to the request's
/// [`OnUpgrade`]. The common case (no request body, a response body that
/// is all there at once) awaits nothing but the service; a request body
/// and a streamed response are driven in boxed futures of their own, so
/// that this one stays small (it is boxed for every request).
fn exchange<S, Svc, B>(
    server: &mut Server<S>,
    service: &mut Svc,
    req: Request<()>,
) -> impl Future<Output = io::Result<Option<Switch>>>
where
    S: AsyncRead + AsyncWrite + Unpin,
    Svc: Service<Request<Incoming>, Response = Response<B>>,
    Svc::Error: Into<BoxError>,
    B: Body,
    B::Error: Into<BoxError>,
{
    // Made before the future: what it holds is the request to hand the
    // service, not also the head it was made from.
    let (length, offers_switch) = server.session.request_framing();
    let connect = req.method() == Method::CONNECT;
    let switch = offers_switch.then(Switch::new);
    let (chan, mut req) = if length == Some(0) || server.is_request_body_read() {
        (None, req.map(|()| Incoming::empty()))
    } else {
        let chan = ChanGuard(Arc::new(Chan::default()));
        let body = Incoming::new(chan.0.clone(), length);
        (Some(chan), req.map(|()| body))
    };
    if let Some(switch) = &switch {
        req.extensions_mut().insert(switch.on_upgrade());
    }
    let call = Call {
        service,
        state: CallState::Ready(Some(req)),
    };
    async move {
        let mut body_failed = None;
        let mut driver = BodyDriver {
            chan: chan.as_ref().map(|c| &*c.0),
            failed: &mut body_failed,
        };
        let answer = if driver.chan.is_none() {
            server.while_connected(call).await
        } else {
            Box::pin(driver.run(server, call)).await
        };
        // The client gone first: nothing to answer, nobody to answer.
        let answer = answer?;
        respond(server, &mut driver, answer, connect, switch).await
    }
}

/// What the service answered, sent: `Some` after a protocol switch.
async fn respond<S, B>(
    server: &mut Server<S>,
    driver: &mut BodyDriver<'_>,
    answer: io::Result<Response<B>>,
    connect: bool,
    switch: Option<Switch>,
) -> io::Result<Option<Switch>>
where
    S: AsyncRead + AsyncWrite + Unpin,
    B: Body,
    B::Error: Into<BoxError>,
{
    let res = match answer {
        Ok(res) => res,
        Err(err) => return Err(driver.failure().unwrap_or_else(|| fail(server, err))),
    };

    let (parts, body) = res.into_parts();
    let status = parts.status;
    let sent = if status == StatusCode::SWITCHING_PROTOCOLS || (connect && status.is_success()) {
        // A protocol switch: its body, if any, is not sent.
        match server.sender().send_head(parts) {
            Ok(_) => Ok(true),
            Err(err) => Err(fail(server, io::Error::other(err))),
        }
    } else {
        let bodiless = status.is_informational()
            || status == StatusCode::NO_CONTENT
            || status == StatusCode::NOT_MODIFIED;
        let mut body = pin!(body);
        // Before the first frame is taken: the hint is of what is left.
        let length = body.size_hint().exact();
        match poll_once(body.as_mut()).await {
            // The whole body at once (a `Full`, a `String`): one message,
            // its length set from it.
            Poll::Ready(Ok(None)) => send_whole(server, parts, Bytes::new(), bodiless),
            Poll::Ready(Ok(Some(frame))) if frame.is_data() && body.is_end_stream() => {
                let data = frame
                    .into_data()
                    .map(|mut d| d.copy_to_bytes(d.remaining()));
                send_whole(server, parts, data.unwrap_or_default(), bodiless)
            }
            // Failed before its head was sent: a 500 can still be.
            Poll::Ready(Err(err)) => Err(fail(server, err)),
            first => {
                let mut parts = parts;
                if !bodiless && !parts.headers.contains_key(CONTENT_LENGTH) {
                    if let Some(n) = length {
                        parts.headers.insert(CONTENT_LENGTH, HeaderValue::from(n));
                    }
                }
                match server.sender().send_head(parts) {
                    Ok(kind) => {
                        let chunked = kind == BodyKind::Chunked;
                        Box::pin(stream(server, driver, body, first, chunked)).await
                    }
                    Err(err) => Err(fail(server, io::Error::other(err))),
                }
            }
        }
    };
    if let Some(err) = driver.failure() {
        return Err(err);
    }
    let switched = sent? && server.is_switched();
    Ok(switch.filter(|_| switched))
}

/// The service's answer to one request: `poll_ready`, then `call`, then
/// its future (boxed: an exchange is boxed whole, and a small box is
/// cheaper to make than a large one), each under `catch_unwind`.
struct Call<'a, Svc: Service<Request<Incoming>>> {
    service: &'a mut Svc,
    state: CallState<Svc::Future>,
}

// The request is moved in and out once: boxing it would cost an
// allocation per request for nothing.
#[allow(clippy::large_enum_variant)]
enum CallState<F> {
    /// Waiting for the service to be ready.
    Ready(Option<Request<Incoming>>),
    Running(Pin<Box<F>>),
}

impl<Svc, B> Future for Call<'_, Svc>
where
    Svc: Service<Request<Incoming>, Response = Response<B>>,
    Svc::Error: Into<BoxError>,
{
    type Output = io::Result<Response<B>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let CallState::Ready(req) = &mut this.state {
            match caught(|| this.service.poll_ready(cx)) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(panic)) => return Poll::Ready(Err(panic)),
                Poll::Ready(Ok(Err(err))) => return Poll::Ready(Err(io::Error::other(err))),
                Poll::Ready(Ok(Ok(()))) => {}
            }
            let Some(req) = req.take() else {
                return Poll::Ready(Err(io::Error::other("polled after its end")));
            };
            match caught(|| Poll::Ready(Box::pin(this.service.call(req)))) {
                Poll::Ready(Ok(fut)) => this.state = CallState::Running(fut),
                Poll::Ready(Err(panic)) => return Poll::Ready(Err(panic)),
                Poll::Pending => return Poll::Pending,
            }
        }
        let CallState::Running(fut) = &mut this.state else {
            return Poll::Pending;
        };
        caught(|| fut.as_mut().poll(cx)).map(|answer| match answer {
            Ok(Ok(res)) => Ok(res),
            Ok(Err(err)) => Err(io::Error::other(err)),
            Err(panic) => Err(panic),
        })
    }
}

/// Answers a service that failed: a 500 and a close, when no head was
/// sent yet. Returns `err`.
fn fail<S>(server: &mut Server<S>, err: io::Error) -> io::Error {
    server.shutdown(Tokio::now());
    let mut res = Response::new(Bytes::new());
    *res.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    let _ = server.sender().send_response(res);
    err
}

/// Sends the rest of a response body whose head is queued, frame by
/// frame, from `next` on (the first frame, or `Pending`). A trailers
/// frame is sent when the body is `chunked`, and dropped otherwise (a
/// `Content-Length` body, or one to an HTTP/1.0 client, has nowhere to
/// put them), as hyper drops them. `Ok(false)`: not a switch.
async fn stream<S, B>(
    server: &mut Server<S>,
    driver: &mut BodyDriver<'_>,
    mut body: Pin<&mut B>,
    mut next: Poll<io::Result<Option<Frame<B::Data>>>>,
    chunked: bool,
) -> io::Result<bool>
where
    S: AsyncRead + AsyncWrite + Unpin,
    B: Body,
    B::Error: Into<BoxError>,
{
    loop {
        let frame = match next {
            Poll::Ready(frame) => frame?,
            Poll::Pending => {
                // The body waits for something else than the request body:
                // what is queued leaves meanwhile.
                if !driver.is_wanted() {
                    server.flush().await?;
                }
                let frame = poll_fn(|cx| poll_frame(body.as_mut(), cx));
                driver.run(server, frame).await??
            }
        };
        match frame.map(Frame::into_data) {
            None => {
                server.sender().finish(None)?;
                return Ok(false);
            }
            Some(Ok(mut data)) => {
                if data.has_remaining() {
                    server
                        .send_data(data.copy_to_bytes(data.remaining()))
                        .await?;
                }
            }
            Some(Err(frame)) => {
                let trailers = frame.into_trailers().ok().filter(|_| chunked);
                server.sender().finish(trailers)?;
                return Ok(false);
            }
        }
        next = poll_once(body.as_mut()).await;
    }
}

/// A frame of `body`, its error or panic as an `io::Error`.
fn poll_frame<B>(
    body: Pin<&mut B>,
    cx: &mut Context<'_>,
) -> Poll<io::Result<Option<Frame<B::Data>>>>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    caught(|| body.poll_frame(cx)).map(|polled| match polled {
        Ok(None) => Ok(None),
        Ok(Some(Ok(frame))) => Ok(Some(frame)),
        Ok(Some(Err(err))) => Err(io::Error::other(err)),
        Err(panic) => Err(panic),
    })
}

/// Polls `body` once for a frame: the frame, or `Pending`.
async fn poll_once<B>(mut body: Pin<&mut B>) -> Poll<io::Result<Option<Frame<B::Data>>>>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    poll_fn(|cx| Poll::Ready(poll_frame(body.as_mut(), cx))).await
}

/// Queues a response whose body is all there: `Content-Length` from it
/// (the session frames HEAD, 204 and 304 without body bytes).
fn send_whole<S>(
    server: &mut Server<S>,
    parts: http::response::Parts,
    data: Bytes,
    bodiless: bool,
) -> io::Result<bool> {
    let sent = if bodiless && data.is_empty() {
        // No `Content-Length: 0` on a 204 or 304: the head, and the end.
        let mut sender = server.sender();
        sender.send_head(parts).and_then(|_| sender.finish(None))
    } else {
        server
            .sender()
            .send_response(Response::from_parts(parts, data))
    };
    match sent {
        Ok(()) => Ok(false),
        Err(err) => Err(fail(server, io::Error::other(err))),
    }
}

/// Runs `f` under `catch_unwind`: a panic becomes an `io::Error`.
fn caught<T>(f: impl FnOnce() -> Poll<T>) -> Poll<Result<T, io::Error>> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(poll) => poll.map(Ok),
        Err(panic) => {
            let msg = (panic.downcast_ref::<&str>().copied())
                .or(panic.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("a panic");
            Poll::Ready(Err(io::Error::other(format!(
                "the service panicked: {msg}"
            ))))
        }
    }
}

// ---- The request body ----------------------------------------------------

/// The body of a request served through [`serve_connection`]: an
/// [`http_body::Body`] of data frames, then a trailers frame when the
/// request has trailers. It is read from the connection as it is polled,
/// one piece at a time (the first poll sends `100 Continue` to a client
/// that waits for it); [`size_hint`](Body::size_hint) is exact for a body
/// framed by `Content-Length`.
///
/// Its errors are `io::Error`s: the peer's protocol error or timeout
/// while the body was read (the session has answered it, and the
/// connection ends), or the body polled after its exchange ended unread
/// (the response was complete; what was left of the body is the
/// session's to drain or refuse).
///
/// A handler that counts the bytes as they come, never holding the body
/// whole:
///
/// ```
/// use h1proto::adapter::tower::Incoming;
/// use http_body_util::BodyExt;
///
/// async fn count(req: http::Request<Incoming>) -> std::io::Result<u64> {
///     let mut body = req.into_body();
///     let mut n = 0;
///     while let Some(frame) = body.frame().await {
///         if let Ok(data) = frame?.into_data() {
///             n += data.len() as u64;
///         }
///     }
///     Ok(n)
/// }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # assert_eq!(rt.block_on(count(http::Request::new(Incoming::empty()))).unwrap(), 0);
/// ```
pub struct Incoming {
    chan: Option<Arc<Chan>>,
    /// The length still to come, when known.
    remaining: Option<u64>,
}

impl Incoming {
    /// An empty body: a request without one.
    pub fn empty() -> Self {
        Incoming {
            chan: None,
            remaining: Some(0),
        }
    }

    fn new(chan: Arc<Chan>, length: Option<u64>) -> Self {
        Incoming {
            chan: Some(chan),
            remaining: length,
        }
    }
}

impl Default for Incoming {
    fn default() -> Self {
        Incoming::empty()
    }
}

impl fmt::Debug for Incoming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Incoming")
            .field("streaming", &self.chan.is_some())
            .field("remaining", &self.remaining)
            .finish()
    }
}

impl Body for Incoming {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let Some(chan) = &self.chan else {
            return Poll::Ready(None);
        };
        let mut state = chan.lock();
        if let Some(frame) = state.frame.take() {
            drop(state);
            if let (Some(data), Some(n)) = (frame.data_ref(), &mut self.remaining) {
                *n = n.saturating_sub(data.len() as u64);
            }
            return Poll::Ready(Some(Ok(frame)));
        }
        let end = match std::mem::replace(&mut state.end, End::Ended) {
            End::Open => {
                state.end = End::Open;
                state.wanted = true;
                match &state.reader {
                    Some(waker) if waker.will_wake(cx.waker()) => {}
                    _ => state.reader = Some(cx.waker().clone()),
                }
                let driver = state.driver.take();
                drop(state);
                if let Some(driver) = driver {
                    driver.wake();
                }
                return Poll::Pending;
            }
            end => end,
        };
        drop(state);
        self.chan = None;
        self.remaining = Some(0);
        Poll::Ready(match end {
            End::Open | End::Ended => None,
            End::Failed(err) => Some(Err(err)),
            End::Abandoned => Some(Err(io::Error::other(
                "the request body was polled after its response was complete",
            ))),
        })
    }

    fn is_end_stream(&self) -> bool {
        self.chan.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match self.remaining {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}

/// Between an [`Incoming`] and the connection's task: at most one frame
/// waits in it (the backpressure), and the body's poll asks for the next.
#[derive(Default)]
struct Chan(Mutex<ChanState>);

#[derive(Default)]
struct ChanState {
    /// The body was polled and waits for a frame.
    wanted: bool,
    /// A frame read and not yet taken.
    frame: Option<Frame<Bytes>>,
    end: End,
    /// The body's waker.
    reader: Option<Waker>,
    /// The connection task's, while it waits for `wanted`.
    driver: Option<Waker>,
}

/// How the body ended, once it did.
#[derive(Default)]
enum End {
    #[default]
    Open,
    Ended,
    Failed(io::Error),
    /// The exchange ended before the body did.
    Abandoned,
}

impl Chan {
    fn lock(&self) -> MutexGuard<'_, ChanState> {
        // A panic while the lock is held leaves the state consistent: no
        // code that can panic runs under it.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Hands the body what the session read, and wakes it.
    fn deliver(&self, read: Result<Option<Bytes>, io::Error>, trailers: Option<HeaderMap>) {
        let mut state = self.lock();
        state.wanted = false;
        match read {
            Ok(Some(data)) => state.frame = Some(Frame::data(data)),
            Ok(None) => {
                state.frame = trailers.map(Frame::trailers);
                state.end = End::Ended;
            }
            Err(err) => state.end = End::Failed(err),
        }
        let reader = state.reader.take();
        drop(state);
        if let Some(reader) = reader {
            reader.wake();
        }
    }
}

/// Ends the body's exchange: a body polled later gets an error.
struct ChanGuard(Arc<Chan>);

impl Drop for ChanGuard {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        if matches!(state.end, End::Open) {
            state.end = End::Abandoned;
            state.frame = None;
            if let Some(reader) = state.reader.take() {
                drop(state);
                reader.wake();
            }
        }
    }
}

/// Reads the request body for its [`Incoming`] while the connection's
/// task waits for something else (the service's future, the response
/// body's next frame).
struct BodyDriver<'a> {
    chan: Option<&'a Chan>,
    /// The error that ended the body, as the session reported it.
    failed: &'a mut Option<io::Error>,
}

impl BodyDriver<'_> {
    /// `true` while the body waits for a frame.
    fn is_wanted(&self) -> bool {
        self.chan.is_some_and(|chan| chan.lock().wanted)
    }

    /// The error that ended the request body, if one did.
    fn failure(&mut self) -> Option<io::Error> {
        self.failed.take()
    }

    /// Awaits `fut`, reading a piece of the request body whenever the body
    /// asks for one meanwhile, and watching the client otherwise
    /// ([`Server::while_connected`]: the error says it went first, and
    /// `fut` is dropped).
    async fn run<S, F>(&mut self, server: &mut Server<S>, fut: F) -> io::Result<F::Output>
    where
        S: AsyncRead + AsyncWrite + Unpin,
        F: Future,
    {
        let mut fut = pin!(fut);
        let Some(chan) = self.chan else {
            return server.while_connected(fut).await;
        };
        loop {
            let read = {
                let mut read = pin!(async {
                    let gone = poll_fn(|cx| {
                        {
                            let mut state = chan.lock();
                            if state.wanted {
                                return Poll::Ready(None);
                            }
                            match &state.driver {
                                Some(waker) if waker.will_wake(cx.waker()) => {}
                                _ => state.driver = Some(cx.waker().clone()),
                            }
                        }
                        server.poll_gone(cx).map(Some)
                    })
                    .await;
                    if let Some(gone) = gone {
                        return Err(gone);
                    }
                    let read = server.read_data().await;
                    let trailers = match read {
                        Ok(None) => server.trailers().cloned(),
                        _ => None,
                    };
                    Ok((read, trailers))
                });
                // The future first: once it is ready, a read under way is
                // dropped (the session keeps what came) and the body asks
                // again. Once the body failed, the future has had its
                // poll with the error: the session answered the client,
                // and an answer still to come could not be sent.
                let raced = poll_fn(|cx| match fut.as_mut().poll(cx) {
                    Poll::Ready(out) => Poll::Ready(Raced::Done(out)),
                    Poll::Pending if self.failed.is_some() => Poll::Ready(Raced::BodyFailed),
                    Poll::Pending => read.as_mut().poll(cx).map(Raced::Read),
                });
                match raced.await {
                    Raced::Done(out) => return Ok(out),
                    Raced::Read(read) => read?,
                    Raced::BodyFailed => {
                        let failed = self.failed.take();
                        return Err(failed.unwrap_or_else(|| io::Error::other("the body failed")));
                    }
                }
            };
            let (read, trailers) = read;
            let read = read.map_err(|err| {
                let copy = io::Error::new(err.kind(), err.to_string());
                *self.failed = Some(err);
                copy
            });
            chan.deliver(read, trailers);
        }
    }
}

/// How [`BodyDriver::run`]'s race of its future against the request
/// body's reads came out.
enum Raced<O, R> {
    /// The future is ready.
    Done(O),
    /// A piece of the body was read for it, or the client went.
    Read(R),
    /// The body failed and the future, polled with the error, is not done.
    BodyFailed,
}

// ---- Protocol switches -----------------------------------------------------

/// In the extensions of a request that offers a protocol switch (an
/// `Upgrade` field, or `CONNECT`): a future that resolves to the
/// connection's stream once the service's `101` (or 2xx to `CONNECT`) has
/// been written, or to an error when the answer was anything else or the
/// connection ended first. Clones share one stream: the first to be
/// polled after the switch takes it.
///
/// ```no_run
/// use h1proto::adapter::tower::OnUpgrade;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// async fn upgrade(mut req: http::Request<h1proto::adapter::tower::Incoming>)
///     -> http::Response<String>
/// {
///     let Some(on_upgrade) = req.extensions_mut().remove::<OnUpgrade>() else {
///         return http::Response::new("no upgrade offered".into());
///     };
///     tokio::spawn(async move {
///         let Ok(mut io) = on_upgrade.await else { return };
///         let mut buf = [0u8; 1024];
///         // An echo, in the new protocol.
///         while let Ok(n @ 1..) = io.read(&mut buf).await {
///             if io.write_all(&buf[..n]).await.is_err() {
///                 break;
///             }
///         }
///     });
///     http::Response::builder()
///         .status(101)
///         .header("upgrade", "echo")
///         .header("connection", "upgrade")
///         .body(String::new())
///         .unwrap()
/// }
/// ```
#[derive(Clone)]
pub struct OnUpgrade {
    slot: Arc<Mutex<UpgradeSlot>>,
}

#[derive(Default)]
struct UpgradeSlot {
    /// The stream, or why there is none, once the exchange decided.
    value: Option<io::Result<Upgraded>>,
    decided: bool,
    waker: Option<Waker>,
}

impl fmt::Debug for OnUpgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnUpgrade").finish_non_exhaustive()
    }
}

impl Future for OnUpgrade {
    type Output = io::Result<Upgraded>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if !slot.decided {
            slot.waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        Poll::Ready(
            slot.value.take().unwrap_or_else(|| {
                Err(io::Error::other("the upgraded stream was taken by a clone"))
            }),
        )
    }
}

/// The exchange's end of an [`OnUpgrade`]: dropped without
/// [`hand_over`](Self::hand_over), it resolves the future to an error.
struct Switch {
    slot: Arc<Mutex<UpgradeSlot>>,
}

impl Switch {
    fn new() -> Self {
        Switch {
            slot: Arc::default(),
        }
    }

    fn on_upgrade(&self) -> OnUpgrade {
        OnUpgrade {
            slot: self.slot.clone(),
        }
    }

    fn decide(&self, value: io::Result<Upgraded>) {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if slot.decided {
            return;
        }
        slot.value = Some(value);
        slot.decided = true;
        let waker = slot.waker.take();
        drop(slot);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Writes the switch's head, then hands the stream over.
    async fn hand_over<S>(self, server: Server<S>) -> io::Result<()>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        match server.into_parts().await {
            Ok((io, read_ahead)) => {
                self.decide(Ok(Upgraded {
                    io: Box::new(io),
                    read_ahead,
                }));
                Ok(())
            }
            Err(err) => {
                self.decide(Err(io::Error::new(err.kind(), err.to_string())));
                Err(err)
            }
        }
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        self.decide(Err(io::Error::other(
            "the connection did not switch protocols",
        )));
    }
}

/// The stream a protocol switch handed over ([`OnUpgrade`]): it reads the
/// bytes the peer sent past the switch first, then from the stream.
///
/// ```no_run
/// use h1proto::adapter::tower::OnUpgrade;
/// use tokio::net::TcpStream;
///
/// async fn take(on_upgrade: OnUpgrade) -> std::io::Result<()> {
///     let upgraded = on_upgrade.await?;
///     // The socket itself, and what the peer sent past the switch.
///     let Ok((stream, read_ahead)) = upgraded.downcast::<TcpStream>() else {
///         return Err(std::io::Error::other("not a TCP connection"));
///     };
///     println!("{} bytes came with the request", read_ahead.len());
///     drop(stream);
///     Ok(())
/// }
/// ```
pub struct Upgraded {
    io: Box<dyn Stream>,
    read_ahead: BytesMut,
}

/// What [`Upgraded`] holds: the connection's stream, of any type.
trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {
    /// The stream's own type.
    fn stream_type(&self) -> TypeId;

    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {
    fn stream_type(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

impl Upgraded {
    /// The stream as the type it was served as (a `TcpStream`, say), and
    /// the bytes the peer sent past the switch, not yet read; the
    /// `Upgraded` back when `T` is not that type.
    ///
    /// # Errors
    ///
    /// `self`, when the stream is not a `T`.
    pub fn downcast<T: 'static>(self) -> Result<(T, BytesMut), Self> {
        let Upgraded { io, read_ahead } = self;
        if io.stream_type() != TypeId::of::<T>() {
            return Err(Upgraded { io, read_ahead });
        }
        match io.into_any().downcast::<T>() {
            Ok(io) => Ok((*io, read_ahead)),
            Err(_) => unreachable!("the type was checked"),
        }
    }

    /// The bytes the peer sent past the switch that have not been read
    /// yet.
    pub fn read_ahead(&self) -> &[u8] {
        &self.read_ahead
    }
}

impl fmt::Debug for Upgraded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upgraded")
            .field("read_ahead", &self.read_ahead.len())
            .finish_non_exhaustive()
    }
}

impl AsyncRead for Upgraded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.read_ahead.is_empty() {
            let n = self.read_ahead.len().min(buf.remaining());
            buf.put_slice(&self.read_ahead.split_to(n));
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Upgraded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
