//! Fetches URLs like curl, on the `tokio` adapter, with curl's meanings of
//! its options (`--help` lists them):
//!
//! - the body goes to standard output as it arrives, piece by piece, in
//!   bounded memory (a download of any size holds a few read buffers), or
//!   to a file with `-o FILE` (one `-o` per URL, in order; `-` is standard
//!   output);
//! - `-I` sends HEAD and prints the response head, as received;
//! - `-v` prints on standard error what a verbose curl prints: `* `
//!   notes, the request head as `> ` lines, each response head (interim
//!   ones included) as `< ` lines as received, and, after the body, its
//!   trailers;
//! - `-X METHOD` sends another method; `-H 'Name: value'` adds a field or
//!   replaces one the client adds itself (`Host`, `User-Agent`, `Accept`,
//!   `Content-Type`), `-H 'Name:'` removes one, `-H 'Name;'` sends it
//!   empty;
//! - `-d DATA` and `--data-binary DATA` POST `DATA`; `-d @FILE` POSTs the
//!   file without its line breaks (read whole, as curl does);
//!   `--data-binary @FILE` POSTs the file as it is, streamed from disk in
//!   pieces (never read whole into memory).
//!
//! URLs on the same host and port share one connection while the server
//! keeps it open; a URL without a scheme is `http://`. `https://` is
//! refused: the example speaks plain HTTP/1.1 (there is no TLS in the
//! crate). An unknown option is refused by name, with exit status 2 as
//! curl's; a connection that cannot be made exits 7, as curl's, and any
//! other failed fetch 1; an answer of any status is a success (0), as in
//! curl without `-f`.
//!
//! Responses are read with the client's default leniency (a status line
//! without the SP after the code is accepted, nothing else); `--lenient`
//! turns on every response tolerance, to read what curl reads from servers
//! that bend RFC 9112. A refused response is reported with the tolerance that
//! would accept it.
//!
//! ```sh
//! cargo run --example client -- -v http://127.0.0.1:8080/ http://127.0.0.1:8080/nope
//! cargo run --example client -- -o big.iso http://127.0.0.1:8080/big.iso
//! cargo run --example client -- -X PUT -H 'Content-Type: text/plain' -d hi http://127.0.0.1:8080/echo
//! cargo run --example client -- --data-binary @big.iso http://127.0.0.1:8080/echo
//! ```
//!
//! An upload stops as soon as the session says the request is stopped (a
//! final response that is not 2xx came while the body was being sent, RFC
//! 9112 section 9.5): the rest of the file is not read, and the response
//! is printed. The tokio adapter reads beside a write that has to wait, so
//! a server that answers `413` and stops reading is seen at once, not when
//! it gives up on the connection, and the client exits 0 as curl does. An
//! answer that comes while the upload is going (an echo) is printed as it
//! comes.

use std::error::Error;
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use h1proto::adapter::tokio::Client;
use h1proto::conn::State;
use h1proto::wire::WireHead;
use h1proto::{
    ClientSession, Config, ReasonPhrase, SessionError, Step, leniency::ResponseLeniency,
};
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HOST, USER_AGENT};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use tokio::net::TcpStream;

/// What `--help` prints.
pub const USAGE: &str = "\
Usage: client [options...] <url>...
 -d, --data <data>           POST <data>, or with @FILE the file without its line breaks
     --data-binary <data>    POST <data>, or the file's bytes with @FILE (streamed)
 -H, --header <header>       Send 'Name: value'; 'Name:' removes a field, 'Name;' sends it empty
 -h, --help                  This help, then exit
 -I, --head                  Send HEAD and print the response head
 -o, --output <file>         Write the body to <file> instead of stdout (one per URL)
 -X, --request <method>      Send <method> instead of GET (POST with data)
 -v, --verbose               Print the request and response heads on stderr
     --lenient               Accept every response deviation a leniency tolerance allows
Only http:// URLs (a URL without a scheme is http://); no TLS.
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (stdout, stderr) = (io::stdout(), io::stderr());
    let code = match run(&args, &mut stdout.lock(), &mut stderr.lock()) {
        Ok(()) => 0,
        Err(err) if err.is::<Usage>() => {
            eprintln!("client: {err}");
            eprintln!("client: try 'client --help' for more information");
            2
        }
        Err(err) if err.is::<ConnectFailed>() => {
            eprintln!("client: {err}");
            7
        }
        Err(err) => {
            eprintln!("client: {err}");
            1
        }
    };
    std::process::exit(code);
}

/// The connection could not be made: exit status 7, as curl's.
#[derive(Debug)]
pub struct ConnectFailed(pub String);

impl fmt::Display for ConnectFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for ConnectFailed {}

/// A command line the client cannot run: exit status 2, as curl's.
#[derive(Debug)]
pub struct Usage(pub String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for Usage {}

fn usage(message: impl Into<String>) -> Box<dyn Error> {
    Box::new(Usage(message.into()))
}

/// A request body from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    /// `-d DATA`, `-d @FILE` (its bytes without line breaks),
    /// `--data-binary DATA`: these bytes.
    Bytes(Bytes),
    /// `--data-binary @FILE`: the file's bytes, streamed.
    File(PathBuf),
}

/// The pieces a file is read and sent in: what a write takes at once, and
/// all of a file an upload holds in memory besides what the session
/// queued (at most `Config::flush_threshold`).
pub const PIECE: usize = 64 * 1024;

/// A `-H` option: a field to send, or (`value` `None`) one of the client's
/// own fields to leave out.
#[derive(Debug, Clone)]
pub struct Field {
    /// The field's name.
    pub name: HeaderName,
    /// Its value; `None`: not sent.
    pub value: Option<HeaderValue>,
}

/// What the command line asks for.
#[derive(Debug, Default)]
pub struct Options {
    /// `-h`, `--help`: print the usage and exit.
    pub help: bool,
    /// `-v`: the heads on standard error.
    pub verbose: bool,
    /// `-I`: HEAD, and the response head printed.
    pub head: bool,
    /// `-X METHOD`.
    pub method: Option<Method>,
    /// `-H`, in order.
    pub fields: Vec<Field>,
    /// `-o FILE`, one per URL in order (`-`: standard output).
    pub outputs: Vec<PathBuf>,
    /// `-d DATA`, `--data-binary DATA|@FILE`: POST it.
    pub data: Option<Data>,
    /// `--lenient`: every response leniency tolerance on.
    pub lenient: bool,
    /// The URLs, fetched in order.
    pub urls: Vec<Uri>,
}

/// Reads the command line: the options of [`USAGE`] (a short option's
/// value may follow it in the same word, `-XPUT`, as in curl) and URLs.
///
/// # Errors
///
/// [`Usage`] for an unknown option, a missing or invalid value, or no URL;
/// a plain error for a URL the client cannot fetch (`https://`).
pub fn parse_args(args: &[String]) -> Result<Options, Box<dyn Error>> {
    let mut opts = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        // `-XPUT`: a short option with its value attached.
        let (option, attached) = match arg.as_bytes() {
            [b'-', b'o' | b'H' | b'X' | b'd', _, ..] => (&arg[..2], Some(arg[2..].to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = |what: &str| match attached.clone() {
            Some(value) => Ok(value),
            None => args
                .next()
                .cloned()
                .ok_or_else(|| usage(format!("option {option}: requires {what}"))),
        };
        match option {
            "-h" | "--help" => opts.help = true,
            "-v" | "--verbose" => opts.verbose = true,
            "-I" | "--head" => opts.head = true,
            "--lenient" => opts.lenient = true,
            "-o" | "--output" => opts.outputs.push(PathBuf::from(value("a file name")?)),
            "-X" | "--request" => {
                let method = value("a method")?;
                let method = Method::from_bytes(method.as_bytes())
                    .map_err(|_| usage(format!("option {option}: invalid method {method:?}")))?;
                opts.method = Some(method);
            }
            "-H" | "--header" => opts.fields.push(parse_field(&value("a header")?)?),
            "-d" | "--data" => {
                let data = value("data")?;
                opts.data = Some(Data::Bytes(match data.strip_prefix('@') {
                    // As curl: the file's bytes without its line breaks.
                    Some(path) => {
                        let mut bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
                        bytes.retain(|&b| b != b'\r' && b != b'\n');
                        Bytes::from(bytes)
                    }
                    None => Bytes::from(data),
                }));
            }
            "--data-binary" => {
                let data = value("data or @FILE")?;
                opts.data = Some(match data.strip_prefix('@') {
                    Some(path) => Data::File(PathBuf::from(path)),
                    None => Data::Bytes(Bytes::from(data)),
                });
            }
            _ if arg.starts_with('-') && arg.len() > 1 => {
                return Err(usage(format!("option {arg}: is unknown")));
            }
            url => opts.urls.push(parse_url(url)?),
        }
    }
    if opts.urls.is_empty() && !opts.help {
        return Err(usage("no URL specified"));
    }
    Ok(opts)
}

/// `-H`'s three forms, as curl reads them.
fn parse_field(line: &str) -> Result<Field, Box<dyn Error>> {
    let invalid = || usage(format!("option -H: invalid header {line:?}"));
    let (name, value) = match line.split_once(':') {
        Some((name, value)) if value.trim().is_empty() => (name, None),
        Some((name, value)) => (name, Some(value.trim())),
        // `Name;`: the field with an empty value.
        None => (line.strip_suffix(';').ok_or_else(invalid)?, Some("")),
    };
    let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| invalid())?;
    let value = match value {
        Some(value) => Some(HeaderValue::from_str(value).map_err(|_| invalid())?),
        None => None,
    };
    Ok(Field { name, value })
}

/// An `http://` URL (the scheme may be left out); `https://` and other
/// schemes are refused with what to do instead.
fn parse_url(url: &str) -> Result<Uri, Box<dyn Error>> {
    let full = match url.split_once("://") {
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("http") => url.to_owned(),
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("https") => {
            return Err(format!(
                "{url}: https:// is not supported: this example speaks plain HTTP/1.1 \
                 and has no TLS; use an http:// URL"
            )
            .into());
        }
        Some((scheme, _)) => {
            return Err(
                format!("{url}: protocol \"{scheme}\" is not supported (http:// only)").into(),
            );
        }
        None => format!("http://{url}"),
    };
    let uri: Uri = full
        .parse()
        .map_err(|e| usage(format!("{url}: not a URL ({e})")))?;
    if uri.host().is_none_or(str::is_empty) {
        return Err(usage(format!("{url}: no host")));
    }
    Ok(uri)
}

/// Connects to `target` (`host:port`) with the response leniency asked
/// for; the wire view is on, so that heads print as received.
async fn connect(target: &str, lenient: bool) -> io::Result<Client<TcpStream>> {
    let stream = TcpStream::connect(target).await?;
    stream.set_nodelay(true)?;
    let mut config = Config::default();
    config.wire_view = true;
    if lenient {
        config.response_leniency = ResponseLeniency::all();
    }
    Ok(Client::new(stream, config))
}

/// The error for a failed fetch of `uri`: a response refused for something
/// a leniency tolerance accepts names the tolerance (the protocol error's
/// own text does) and the option that turns it on.
fn fetch_error(uri: &Uri, err: io::Error) -> Box<dyn Error> {
    let tolerance = err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<h1proto::Error>())
        .and_then(h1proto::Error::tolerance);
    match tolerance {
        Some(tolerance) => format!(
            "{uri}: {err}; --lenient turns on `{tolerance}` and every other response tolerance"
        )
        .into(),
        None => format!("{uri}: {err}").into(),
    }
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

/// An `-o` file, created at the first write or flush.
struct LazyFile {
    path: PathBuf,
    file: Option<File>,
}

impl LazyFile {
    fn file(&mut self) -> io::Result<&mut File> {
        let file = match self.file.take() {
            Some(file) => file,
            None => File::create(&self.path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path.display())))?,
        };
        Ok(self.file.insert(file))
    }
}

impl Write for LazyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

/// Where a response goes as it arrives: its body (and, with `-I`, its
/// heads) to `out`, with `-v` its heads and trailers to `err`.
struct Sink<'a> {
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    verbose: bool,
    /// `-I`: the heads go to `out` too.
    heads: bool,
}

impl Sink<'_> {
    /// A response head: an interim one or the final one.
    fn head(&mut self, res: &Response<()>) -> io::Result<()> {
        let synthesized;
        let bytes: &[u8] = match res.extensions().get::<WireHead>() {
            Some(wire) => wire.bytes(),
            None => {
                synthesized = head_bytes(res);
                &synthesized
            }
        };
        if self.verbose {
            for line in bytes.split_inclusive(|&b| b == b'\n') {
                self.err.write_all(b"< ")?;
                self.err.write_all(line)?;
            }
            self.err.flush()?;
        }
        if self.heads {
            self.out.write_all(bytes)?;
        }
        // An `-o` file exists once a response came, even one without a
        // body.
        self.out.flush()
    }

    /// A piece of the body, shown at once.
    fn data(&mut self, data: &[u8]) -> io::Result<()> {
        self.out.write_all(data)?;
        self.out.flush()
    }

    /// The end of the response: its trailers, with `-v`.
    fn end(&mut self, client: &Client<TcpStream>) -> io::Result<()> {
        if !self.verbose {
            return Ok(());
        }
        if let Some(wire) = client.wire_trailers() {
            for line in wire.bytes().split_inclusive(|&b| b == b'\n') {
                if line.trim_ascii().is_empty() {
                    continue;
                }
                self.err.write_all(b"< ")?;
                self.err.write_all(line)?;
            }
        } else if let Some(trailers) = client.trailers() {
            for (name, value) in trailers {
                self.err.write_all(b"< ")?;
                self.err.write_all(name.as_str().as_bytes())?;
                self.err.write_all(b": ")?;
                self.err.write_all(value.as_bytes())?;
                self.err.write_all(b"\r\n")?;
            }
        }
        self.err.flush()
    }
}

/// A response head written out, for a head without its wire view.
fn head_bytes(res: &Response<()>) -> Vec<u8> {
    let reason = match res.extensions().get::<ReasonPhrase>() {
        Some(reason) => String::from_utf8_lossy(reason.as_bytes()).into_owned(),
        None => res.status().canonical_reason().unwrap_or("").to_owned(),
    };
    let mut out = format!("{:?} {} {reason}\r\n", res.version(), res.status().as_u16());
    for (name, value) in res.headers() {
        out += &format!("{name}: {}\r\n", String::from_utf8_lossy(value.as_bytes()));
    }
    out += "\r\n";
    out.into_bytes()
}

/// `true` for a 1xx head after which the final one follows.
fn is_interim(res: &Response<()>) -> bool {
    res.status().is_informational() && res.status() != StatusCode::SWITCHING_PROTOCOLS
}

/// Reads the response to the request sent last and hands it to `sink` as
/// it comes: the heads (interim ones first) unless `head_read`, then the
/// body piece by piece, then the trailers.
async fn receive(
    client: &mut Client<TcpStream>,
    sink: &mut Sink<'_>,
    head_read: bool,
) -> io::Result<()> {
    if !head_read {
        loop {
            let res = client
                .next_response()
                .await?
                .ok_or(io::ErrorKind::UnexpectedEof)?;
            sink.head(&res)?;
            if !is_interim(&res) {
                break;
            }
        }
    }
    while let Some(data) = client.read_data().await? {
        sink.data(&data)?;
    }
    sink.end(client)
}

/// `true` while the request's body is still wanted: the session stops it
/// when a final response that is not 2xx arrives first.
fn sending(client: &Client<TcpStream>) -> bool {
    client.connection().send_state() == State::Body
}

/// What of the response an upload takes in while it sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// The heads, until the final one.
    Head,
    /// The body's pieces.
    Body,
    /// Nothing: the response is in.
    Nothing,
}

/// What one turn of an upload brought.
enum Up {
    /// No more than `Config::flush_threshold` is queued: the next piece
    /// may go.
    Written,
    /// A response head (`None`: no response is due, the server closed).
    Head(Option<Response<()>>),
    /// A piece of the response body (`None`: its end).
    Data(Option<Bytes>),
}

/// Sends `head`, then `file` in pieces of [`PIECE`] bytes, each written
/// before the next is read, and hands what the server answers meanwhile
/// to `sink` as it comes: a server may answer as it reads (an echo), and
/// would stop reading once its answer is not read. Stops reading the file
/// as soon as the session says the request is stopped.
async fn upload(
    client: &mut Client<TcpStream>,
    head: Request<()>,
    mut file: File,
    sink: &mut Sink<'_>,
) -> io::Result<()> {
    client.sender().send_head(head)?;
    let mut want = Want::Head;
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
        loop {
            match client.call(|s, now| turn(s, now, want)).await? {
                Up::Written => break,
                Up::Head(None) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Up::Head(Some(res)) => {
                    sink.head(&res)?;
                    if !is_interim(&res) {
                        want = Want::Body;
                    }
                }
                Up::Data(Some(data)) => sink.data(&data)?,
                Up::Data(None) => {
                    sink.end(client)?;
                    want = Want::Nothing;
                }
            }
        }
    }
    match want {
        Want::Head => receive(client, sink, false).await,
        Want::Body => receive(client, sink, true).await,
        Want::Nothing => Ok(()),
    }
}

/// One turn of an upload: what of the response came (as `want` asks), or,
/// once no more than `Config::flush_threshold` is queued, [`Up::Written`].
fn turn(session: &mut ClientSession, now: Instant, want: Want) -> Result<Step<Up>, SessionError> {
    let flushed = session.poll_flush(now)?;
    match want {
        Want::Head => {
            if let Step::Ready(head) = session.next_response(now)? {
                return Ok(Step::Ready(Up::Head(head)));
            }
        }
        Want::Body => {
            if let Step::Ready(data) = session.read_data(now)? {
                return Ok(Step::Ready(Up::Data(data)));
            }
        }
        Want::Nothing => {}
    }
    Ok(match flushed {
        Step::Ready(()) => Step::Ready(Up::Written),
        Step::Io(io) => Step::Io(io),
    })
}

/// Builds the request for `uri`: the method, the client's own fields
/// (`Host`, `User-Agent`, `Accept`, and with a body `Content-Type` and a
/// file's `Content-Length`) with `-H` applied over them.
fn request(opts: &Options, uri: &Uri, body: Option<&Body>) -> Result<Request<()>, Box<dyn Error>> {
    let host = uri.host().unwrap_or_default();
    let authority = uri.authority().map_or(host, |a| a.as_str());
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let method = match (&opts.method, opts.head, body) {
        (Some(method), _, _) => method.clone(),
        (None, true, _) => Method::HEAD,
        (None, false, Some(_)) => Method::POST,
        (None, false, None) => Method::GET,
    };
    let mut req = Request::builder().method(method).uri(path).body(())?;
    let fields = req.headers_mut();
    fields.insert(HOST, HeaderValue::from_str(authority)?);
    fields.insert(USER_AGENT, HeaderValue::from_static("h1proto-client/0.1"));
    fields.insert(ACCEPT, HeaderValue::from_static("*/*"));
    if body.is_some() {
        fields.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
    }
    if let Some(Body::File((_, len))) = body {
        fields.insert(CONTENT_LENGTH, HeaderValue::from(*len));
    }
    // `-H`: the first of a name replaces the client's own, later ones
    // add to it.
    let mut seen: Vec<&HeaderName> = Vec::new();
    for field in &opts.fields {
        if !seen.contains(&&field.name) {
            seen.push(&field.name);
            fields.remove(&field.name);
        }
        if let Some(value) = &field.value {
            fields.append(field.name.clone(), value.clone());
        }
    }
    Ok(req)
}

/// Writes `req`'s head as `> ` lines, the way a verbose curl does.
fn print_request(err: &mut dyn Write, req: &Request<()>) -> io::Result<()> {
    let target = req.uri().path_and_query().map_or("/", |p| p.as_str());
    write!(err, "> {} {target} {:?}\r\n", req.method(), req.version())?;
    for (name, value) in req.headers() {
        err.write_all(b"> ")?;
        err.write_all(name.as_str().as_bytes())?;
        err.write_all(b": ")?;
        err.write_all(value.as_bytes())?;
        err.write_all(b"\r\n")?;
    }
    err.write_all(b"> \r\n")
}

/// Fetches every URL of `args`, writing bodies to `out` (or their `-o`
/// files) and, with `-v`, what a verbose curl would say to `err`, on a
/// runtime of its own (one thread); `--help` writes the usage to `out`.
///
/// # Errors
///
/// [`Usage`] for a command line the client cannot run; any other error
/// for a fetch that failed (the URLs before it were fetched).
pub fn run(
    args: &[String],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Box<dyn Error>> {
    let opts = parse_args(args)?;
    if opts.help {
        out.write_all(USAGE.as_bytes())?;
        return Ok(());
    }
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
    for (i, uri) in opts.urls.iter().enumerate() {
        let host = uri.host().unwrap_or_default();
        let port = uri.port_u16().unwrap_or(80);
        let target = format!("{host}:{port}");

        // The body: none, bytes, or a file opened now (so that a missing
        // one fails before anything is sent), sent with its length.
        let body = match (&opts.data, opts.head) {
            (Some(Data::Bytes(data)), false) => Some(Body::Bytes(data.clone())),
            (Some(Data::File(path)), false) => Some(Body::File(open_file(path)?)),
            _ => None,
        };
        let req = request(opts, uri, body.as_ref())?;
        // `-o FILE` for this URL: created once the response comes, as curl
        // does (a failed connection leaves no empty file behind).
        let mut file = match opts.outputs.get(i) {
            Some(path) if path.as_os_str() != "-" => Some(LazyFile {
                path: path.clone(),
                file: None,
            }),
            _ => None,
        };

        let reuse = match &mut open {
            Some((t, c)) => *t == target && c.is_reusable(),
            None => false,
        };
        if reuse {
            if opts.verbose {
                writeln!(err, "* Re-using existing connection with host {host}")?;
            }
        } else {
            if opts.verbose {
                writeln!(err, "*   Trying {target}...")?;
            }
            let client = connect(&target, opts.lenient).await.map_err(|e| {
                ConnectFailed(format!("failed to connect to {host} port {port}: {e}"))
            })?;
            open = Some((target.clone(), client));
            if opts.verbose {
                writeln!(err, "* Connected to {host} port {port}")?;
            }
        }
        let (_, client) = open.as_mut().expect("a connection is open");
        if opts.verbose {
            print_request(err, &req)?;
        }
        let mut sink = Sink {
            out: match &mut file {
                Some(file) => file,
                None => &mut *out,
            },
            err: &mut *err,
            verbose: opts.verbose,
            heads: opts.head,
        };
        let fetched = match body {
            None => match client.sender().send_request(req.map(|()| Bytes::new())) {
                Ok(()) => receive(client, &mut sink, false).await,
                Err(e) => Err(e.into()),
            },
            Some(Body::Bytes(data)) => match client.sender().send_request(req.map(|()| data)) {
                Ok(()) => receive(client, &mut sink, false).await,
                Err(e) => Err(e.into()),
            },
            Some(Body::File((file, _))) => upload(client, req, file, &mut sink).await,
        };
        fetched.map_err(|e| fetch_error(uri, e))?;
        if !client.is_reusable() {
            if opts.verbose {
                writeln!(err, "* Closing connection to {target}")?;
            }
            open = None;
        } else if opts.verbose {
            writeln!(err, "* Connection to host {host} left intact")?;
        }
    }
    Ok(())
}
