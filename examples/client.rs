//! Fetches URLs like curl, on the `tokio` adapter: the body goes to
//! standard output; `-v` prints, on standard error, the request head, the
//! interim (1xx) responses, the response head and, after the body, its
//! trailers; `-I` sends HEAD; `-d DATA` POSTs `DATA`. URLs on the same host and
//! port share one connection while the server keeps it open.
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
//! ```

use std::error::Error;
use std::io::{self, Write};

use bytes::Bytes;
use h1proto::adapter::tokio::Client;
use h1proto::{Config, InterimResponses, ReasonPhrase, TrailerFields, leniency::ResponseLeniency};
use http::header::{CONTENT_TYPE, HOST, USER_AGENT};
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

/// What the command line asks for.
#[derive(Debug, Default)]
pub struct Options {
    /// `-v`: status line and fields on standard error.
    pub verbose: bool,
    /// `-I`: HEAD instead of GET.
    pub head: bool,
    /// `-d DATA`: POST `DATA`.
    pub data: Option<String>,
    /// `--lenient`: every response leniency switch on.
    pub lenient: bool,
    /// The URLs, fetched in order.
    pub urls: Vec<Uri>,
}

/// Reads `-v`, `-I`, `-d DATA`, `--lenient` and URLs.
pub fn parse_args(args: &[String]) -> Result<Options, Box<dyn Error>> {
    let mut opts = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-v" => opts.verbose = true,
            "-I" => opts.head = true,
            "--lenient" => opts.lenient = true,
            "-d" => opts.data = Some(args.next().ok_or("-d needs DATA")?.clone()),
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
        return Err("usage: client [-v] [-I] [-d DATA] [--lenient] URL...".into());
    }
    Ok(opts)
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

        let (method, body) = match (&opts.data, opts.head) {
            (_, true) => (Method::HEAD, Bytes::new()),
            (Some(data), false) => (Method::POST, Bytes::from(data.clone())),
            (None, false) => (Method::GET, Bytes::new()),
        };
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, authority)
            .header(USER_AGENT, "h1proto-client/0.1");
        if opts.data.is_some() && !opts.head {
            req = req.header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        }
        let req = req.body(body)?;

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
        let res = client.send(req).await.map_err(|e| fetch_error(uri, e))?;
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
