//! What the example servers share: their command line and their page.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use h1proto::Config;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Request, Response, StatusCode};

/// The command line of an example server.
#[derive(Debug, Clone)]
pub struct Args {
    /// `--addr HOST:PORT`, by default 127.0.0.1:8080.
    pub addr: String,
    /// The session settings, with `--header-timeout SECS` and
    /// `--idle-timeout SECS` applied over the defaults.
    pub config: Config,
}

/// Reads `--addr`, `--header-timeout` and `--idle-timeout`.
pub fn parse_args(name: &str, mut args: impl Iterator<Item = String>) -> io::Result<Args> {
    let mut parsed = Args {
        addr: String::from("127.0.0.1:8080"),
        config: Config::default(),
    };
    let usage = || {
        let msg = format!(
            "usage: {name} [--addr HOST:PORT] [--header-timeout SECS] [--idle-timeout SECS]"
        );
        io::Error::new(io::ErrorKind::InvalidInput, msg)
    };
    let secs = |value: String| {
        value
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(usage)
    };
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--addr", Some(value)) => parsed.addr = value,
            ("--header-timeout", Some(value)) => parsed.config.timeouts.head = Some(secs(value)?),
            ("--idle-timeout", Some(value)) => parsed.config.timeouts.idle = Some(secs(value)?),
            _ => return Err(usage()),
        }
    }
    Ok(parsed)
}

/// A `text/plain` response. Its fields go into the request's `HeaderMap`,
/// emptied: that storage is reused rather than a new map allocated, and
/// the static field value and body are not copied either.
pub fn text(req: &mut Request<()>, status: StatusCode, body: &'static [u8]) -> Response<Bytes> {
    let mut headers = std::mem::take(req.headers_mut());
    headers.clear();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    let mut res = Response::new(Bytes::from_static(body));
    *res.status_mut() = status;
    *res.headers_mut() = headers;
    res
}

/// The head of the echo: the request's `Content-Length` and
/// `Content-Type`; without a length, the echo is chunked.
pub fn echo_head(req: &Request<()>) -> Response<()> {
    let mut res = Response::new(());
    for name in [http::header::CONTENT_LENGTH, CONTENT_TYPE] {
        if let Some(value) = req.headers().get(&name) {
            res.headers_mut().insert(name, value.clone());
        }
    }
    res
}

/// Whether a connection error is worth a line on standard error: a peer's
/// protocol error was answered, a timeout is policy, and peers vanish.
pub fn worth_logging(err: &io::Error) -> bool {
    use io::ErrorKind::*;
    !matches!(
        err.kind(),
        InvalidData | TimedOut | ConnectionReset | BrokenPipe | UnexpectedEof
    )
}
