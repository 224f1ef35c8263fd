//! Fetches URLs like curl, on the `tokio` adapter: the body goes to
//! standard output; `-v` prints, on standard error, the request head, the
//! interim (1xx) responses, the response head and, after the body, its
//! trailers; `-I` sends HEAD; `-d DATA` POSTs `DATA`; `--data-binary @FILE`
//! POSTs the file's bytes, streamed from disk in pieces (never read whole
//! into memory), and `--data-binary DATA` the bytes of `DATA`, as curl
//! does. URLs on the same host and port share one connection while the
//! server keeps it open.
//!
//! Responses are read with the client's default leniency (a status line
//! without the SP after the code is accepted, nothing else); `--lenient`
//! turns on every response switch, to read what curl reads from servers
//! that bend RFC 9112. A refused response is reported with the switch that
//! would accept it.
//!
//! ```sh
//! cargo run --example client -- -v http://127.0.0.1:8080/ http://127.0.0.1:8080/nope
//! cargo run --example client -- --lenient http://192.0.2.1/status
//! cargo run --example client -- --data-binary @big.iso http://127.0.0.1:8080/echo
//! ```
//!
//! An upload stops as soon as the session says the request is stopped (a
//! final response that is not 2xx came while the body was being sent, RFC
//! 9112 section 9.5): the rest of the file is not read, and the response
//! is printed. The tokio adapter reads beside a write that has to wait, so
//! a server that answers `413` and stops reading is seen at once, not when
//! it gives up on the connection, and the client exits 0 as curl does.

use std::error::Error;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use h1proto::adapter::tokio::Client;
use h1proto::conn::State;
use h1proto::{
    ClientSession, Config, InterimResponses, ReasonPhrase, SessionError, Step, TrailerFields,
    leniency::ResponseLeniency,
};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, USER_AGENT};
use http::{Method, Request, Uri};
use tokio::net::TcpStream;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (stdout, stderr) = (io::stdout(), io::stderr());
    if let Err(err) = run(&args, &mut stdout.lock(), &mut stderr.lock()) {
        eprintln!("client: {err}");
        std::process::exit(1);
    }
}

/// Connects to `target` (`host:port`) with the response leniency asked for.
async fn connect(target: &str, lenient: bool) -> io::Result<Client<TcpStream>> {
    let stream = TcpStream::connect(target).await?;
    stream.set_nodelay(true)?;
    let mut config = Config::default();
    if lenient {
        config.response_leniency = ResponseLeniency::all();
    }
    Ok(Client::new(stream, config))
}

/// The error for a failed fetch of `uri`: a response refused for something
/// a leniency switch accepts names the switch (the protocol error's own
/// text does) and the option that turns it on.
fn fetch_error(uri: &Uri, err: io::Error) -> Box<dyn Error> {
    let switch = err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<h1proto::Error>())
        .and_then(h1proto::Error::switch);
    match switch {
        Some(switch) => {
            format!("{uri}: {err}; --lenient turns on `{switch}` and every other response switch")
                .into()
        }
        None => format!("{uri}: {err}").into(),
    }
}

/// A request body from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    /// `-d DATA`, `--data-binary DATA`: these bytes.
    Bytes(Bytes),
    /// `--data-binary @FILE`: the file's bytes, streamed.
    File(PathBuf),
}

/// The pieces a file is read and sent in: what a write takes at once, and
/// all of a file an upload holds in memory besides what the session
/// queued (at most `Config::flush_threshold`).
pub const PIECE: usize = 64 * 1024;

/// What the command line asks for.
#[derive(Debug, Default)]
pub struct Options {
    /// `-v`: status line and fields on standard error.
    pub verbose: bool,
    /// `-I`: HEAD instead of GET.
    pub head: bool,
    /// `-d DATA`, `--data-binary DATA|@FILE`: POST it.
    pub data: Option<Data>,
    /// `--lenient`: every response leniency switch on.
    pub lenient: bool,
    /// The URLs, fetched in order.
    pub urls: Vec<Uri>,
}

/// Reads `-v`, `-I`, `-d DATA`, `--data-binary DATA|@FILE`, `--lenient`
/// and URLs.
pub fn parse_args(args: &[String]) -> Result<Options, Box<dyn Error>> {
    const USAGE: &str =
        "usage: client [-v] [-I] [-d DATA] [--data-binary DATA|@FILE] [--lenient] URL...";
    let mut opts = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-v" => opts.verbose = true,
            "-I" => opts.head = true,
            "--lenient" => opts.lenient = true,
            "-h" | "--help" => return Err(USAGE.into()),
            "-d" => {
                let data = args.next().ok_or("-d needs DATA")?;
                opts.data = Some(Data::Bytes(Bytes::from(data.clone())));
            }
            "--data-binary" => {
                let data = args.next().ok_or("--data-binary needs DATA or @FILE")?;
                opts.data = Some(match data.strip_prefix('@') {
                    Some(path) => Data::File(PathBuf::from(path)),
                    None => Data::Bytes(Bytes::from(data.clone())),
                });
            }
            url => {
                let uri: Uri = url.parse()?;
                if uri.scheme_str() != Some("http") || uri.host().is_none() {
                    return Err(format!("{url}: only http://HOST[:PORT]/PATH URLs").into());
                }
                opts.urls.push(uri);
            }
        }
    }
    if opts.urls.is_empty() {
        return Err(USAGE.into());
    }
    Ok(opts)
}

/// A request body, ready to send.
enum Body {
    Bytes(Bytes),
    /// An open file and its length.
    File((File, u64)),
}

/// Opens `path` for an upload: the file and its length.
fn open_file(path: &Path) -> Result<(File, u64), Box<dyn Error>> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let len = file.metadata()?.len();
    Ok((file, len))
}

/// `true` while the request's body is still wanted: the session stops it
/// when a final response that is not 2xx arrives first.
fn sending(client: &Client<TcpStream>) -> bool {
    client.connection().send_state() == State::Body
}

/// Sends `head`, then `file` in pieces of [`PIECE`] bytes, each written
/// before the next is read, and reads the response, gathering it while
/// the file is still going out: a server may answer as it reads (an
/// echo), and would stop reading once its answer is not read. Stops
/// reading the file as soon as the session says the request is stopped.
async fn upload(
    client: &mut Client<TcpStream>,
    head: Request<()>,
    mut file: File,
) -> io::Result<http::Response<Bytes>> {
    client.sender().send_head(head)?;
    let mut answer = None;
    while sending(client) {
        let mut piece = BytesMut::zeroed(PIECE);
        // A read from disk blocks the runtime's one thread briefly; it
        // drives nothing else.
        let n = loop {
            match file.read(&mut piece) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                read => break read?,
            }
        };
        if n == 0 {
            client.sender().finish(None)?;
            break;
        }
        piece.truncate(n);
        client.sender().send_data(piece.freeze())?;
        // Writes while more than `Config::flush_threshold` is queued, and
        // takes in what the server answers meanwhile.
        let gathering = answer.is_none();
        if let Some(res) = client.call(|s, now| turn(s, now, gathering)).await? {
            answer = Some(res);
        }
    }
    let res = match answer {
        Some(res) => res,
        None => client.call(ClientSession::next_full_response).await?,
    };
    res.ok_or_else(|| io::ErrorKind::UnexpectedEof.into())
}

/// One turn of an upload: ready once no more than `Config::flush_threshold`
/// is queued, or, while `gathering`, once the whole response came (which
/// a refusal makes the session withdraw the request for).
fn turn(
    session: &mut ClientSession,
    now: Instant,
    gathering: bool,
) -> Result<Step<Option<Option<http::Response<Bytes>>>>, SessionError> {
    let flushed = session.poll_flush(now)?;
    if gathering {
        if let Step::Ready(res) = session.next_full_response(now)? {
            return Ok(Step::Ready(Some(res)));
        }
    }
    Ok(match flushed {
        Step::Ready(()) => Step::Ready(None),
        Step::Io(io) => Step::Io(io),
    })
}

/// Writes a response head the way a verbose curl does: the status line
/// (with the reason phrase as received) and the fields.
fn print_head<B>(err: &mut dyn Write, res: &http::Response<B>) -> io::Result<()> {
    let reason = match res.extensions().get::<ReasonPhrase>() {
        Some(reason) => String::from_utf8_lossy(reason.as_bytes()).into_owned(),
        None => res.status().canonical_reason().unwrap_or("").to_owned(),
    };
    writeln!(
        err,
        "< {:?} {} {reason}",
        res.version(),
        res.status().as_u16()
    )?;
    for (name, value) in res.headers() {
        writeln!(
            err,
            "< {name}: {}",
            String::from_utf8_lossy(value.as_bytes())
        )?;
    }
    writeln!(err, "<")
}

/// Fetches every URL of `args`, writing bodies to `out` and, with `-v`,
/// what a verbose curl would say to `err`, on a runtime of its own (one
/// thread).
pub fn run(
    args: &[String],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Box<dyn Error>> {
    let opts = parse_args(args)?;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(fetch(&opts, out, err))
}

/// Fetches every URL of `opts`.
async fn fetch(
    opts: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Box<dyn Error>> {
    // The open connection and the host:port it goes to.
    let mut open: Option<(String, Client<TcpStream>)> = None;
    for uri in &opts.urls {
        let host = uri.host().unwrap_or_default();
        let port = uri.port_u16().unwrap_or(80);
        let target = format!("{host}:{port}");
        let authority = uri.authority().map_or(host, |a| a.as_str());
        let path = uri.path_and_query().map_or("/", |p| p.as_str());

        // The body: none, bytes, or a file opened now (so that a missing
        // one fails before anything is sent), sent with its length.
        let body = match (&opts.data, opts.head) {
            (Some(Data::Bytes(data)), false) => Some(Body::Bytes(data.clone())),
            (Some(Data::File(path)), false) => Some(Body::File(open_file(path)?)),
            _ => None,
        };
        let method = match (&body, opts.head) {
            (_, true) => Method::HEAD,
            (Some(_), false) => Method::POST,
            (None, false) => Method::GET,
        };
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, authority)
            .header(USER_AGENT, "h1proto-client/0.1");
        if body.is_some() {
            req = req.header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        }
        if let Some(Body::File((_, len))) = &body {
            req = req.header(CONTENT_LENGTH, *len);
        }
        let req = req.body(())?;

        let reuse = match &mut open {
            Some((t, c)) => *t == target && c.is_reusable(),
            None => false,
        };
        if reuse {
            if opts.verbose {
                writeln!(err, "* Re-using existing connection to {target}")?;
            }
        } else {
            open = Some((target.clone(), connect(&target, opts.lenient).await?));
            if opts.verbose {
                writeln!(err, "* Connected to {target}")?;
            }
        }
        let (_, client) = open.as_mut().expect("a connection is open");
        if opts.verbose {
            writeln!(err, "> {} {} {:?}", req.method(), path, req.version())?;
            for (name, value) in req.headers() {
                writeln!(
                    err,
                    "> {name}: {}",
                    String::from_utf8_lossy(value.as_bytes())
                )?;
            }
            writeln!(err, ">")?;
        }
        let res = match body {
            None => client.send(req.map(|()| Bytes::new())).await,
            Some(Body::Bytes(data)) => client.send(req.map(|()| data)).await,
            Some(Body::File((file, _))) => upload(client, req, file).await,
        };
        let res = res.map_err(|e| fetch_error(uri, e))?;
        if opts.verbose {
            // Interim responses (`100 Continue`, `103 Early Hints`) first,
            // as curl shows them.
            if let Some(InterimResponses(interim)) = res.extensions().get() {
                for head in interim {
                    print_head(err, head)?;
                }
            }
            print_head(err, &res)?;
        }
        out.write_all(res.body())?;
        out.flush()?;
        if let (true, Some(TrailerFields(trailers))) = (opts.verbose, res.extensions().get()) {
            for (name, value) in trailers {
                writeln!(
                    err,
                    "< {name}: {}",
                    String::from_utf8_lossy(value.as_bytes())
                )?;
            }
        }
        if !client.is_reusable() {
            if opts.verbose {
                writeln!(err, "* Closing connection to {target}")?;
            }
            open = None;
        }
    }
    Ok(())
}
