//! Decodes a captured HTTP/1.1 byte stream and prints what h1proto finds in it.
//!
//! ```text
//! cargo run --example decode -- [OPTIONS] [FILE | -]
//!
//!   FILE | -          the captured bytes of one direction of a connection
//!                     (standard input when absent or `-`)
//!   --response        the bytes are responses (the client side); default: requests
//!   --method LIST     the methods of the requests the responses answer, in order,
//!                     comma-separated (`--method GET,HEAD,GET`); repeatable;
//!                     implies --response. Responses beyond the list answer a GET.
//!   --body            print each body, escaped, besides its length
//!   --chunk N         feed the input N bytes at a time (the output is the same
//!                     for every N: decoding does not depend on how bytes arrive)
//! ```
//!
//! Every line starts with the offset in the stream where the element it
//! describes begins (counted from the end of the element before it; for
//! `end`, where the message ends, its last framing bytes included). Heads
//! are shown as they were received (the decoder's wire view): the start
//! line and the field lines in their order and spelling, and trailers
//! likewise. At the end of the input the peer is taken to have closed its
//! side, which ends a close-delimited body and is an error inside any
//! other message. An error is shown at the offset where decoding stopped
//! and with the field at fault, as the error itself gives them.
//!
//! Exit status: 0 when the stream decoded cleanly, 1 on a protocol error,
//! 2 on a usage or I/O error.

use std::fmt::Write as _;
use std::io::{self, Read};
use std::process::ExitCode;

use bytes::{Bytes, BytesMut};
use h1proto::wire::{WireHead, WireTrailers};
use h1proto::{
    Error, Event, KeepAlive, Limits, RequestDecoder, ResponseDecoder, framing::BodyKind,
};
use http::{Method, Request, Response};

const USAGE: &str =
    "usage: decode [--response] [--method GET,HEAD,...] [--body] [--chunk N] [FILE | -]";

struct Options {
    response: bool,
    methods: Vec<Method>,
    body: bool,
    chunk: Option<usize>,
    path: Option<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        response: false,
        methods: Vec::new(),
        body: false,
        chunk: None,
        path: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--response" => opts.response = true,
            "--request" => opts.response = false,
            "--body" => opts.body = true,
            "--method" | "--methods" => {
                let list = args.next().ok_or("--method needs a list of methods")?;
                for name in list.split(',').map(str::trim).filter(|m| !m.is_empty()) {
                    let method = Method::from_bytes(name.as_bytes())
                        .map_err(|_| format!("not a method: {name:?}"))?;
                    opts.methods.push(method);
                }
                opts.response = true;
            }
            "--chunk" => {
                let n = args.next().ok_or("--chunk needs a number of bytes")?;
                match n.parse::<usize>() {
                    Ok(n) if n > 0 => opts.chunk = Some(n),
                    _ => return Err(format!("--chunk needs a positive number, not {n:?}")),
                }
            }
            "-h" | "--help" => return Err(String::new()),
            "-" => opts.path = None,
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            path => {
                if opts.path.is_some() {
                    return Err("only one input file".into());
                }
                opts.path = Some(path.to_owned());
            }
        }
    }
    Ok(opts)
}

fn read_input(path: Option<&str>) -> io::Result<Vec<u8>> {
    match path {
        Some(path) => std::fs::read(path),
        None => {
            let mut input = Vec::new();
            io::stdin().read_to_end(&mut input)?;
            Ok(input)
        }
    }
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(opts) => opts,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("decode: {msg}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let input = match read_input(opts.path.as_deref()) {
        Ok(input) => input,
        Err(err) => {
            eprintln!(
                "decode: cannot read {}: {err}",
                opts.path.as_deref().unwrap_or("standard input")
            );
            return ExitCode::from(2);
        }
    };

    let chunk = opts.chunk.unwrap_or(input.len().max(1));
    let clean = if opts.response {
        let mut dec = ResponseDecoder::new(Limits::default());
        dec.set_wire_view(true);
        for method in &opts.methods {
            dec.expect_response_to(method);
        }
        run(&input, chunk, &opts, &mut dec)
    } else {
        let mut dec = RequestDecoder::new(Limits::default());
        dec.set_wire_view(true);
        run(&input, chunk, &opts, &mut dec)
    };
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The two decoders behind one face, so one loop drives either.
trait Decoder {
    type Head: ShowHead + h1proto::MessageHead<Interim: ShowHead>;
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Self::Head>>, Error>;
    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Self::Head>>, Error>;
    fn is_closed(&self) -> bool;
    fn is_switched(&self) -> bool;
    fn consumed(&self) -> u64;
    fn wire_trailers(&self) -> Option<&WireTrailers>;
}

macro_rules! decoder {
    ($ty:ty, $head:ty) => {
        impl Decoder for $ty {
            type Head = $head;
            fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<$head>>, Error> {
                <$ty>::decode(self, buf)
            }
            fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Event<$head>>, Error> {
                <$ty>::decode_eof(self, buf)
            }
            fn is_closed(&self) -> bool {
                <$ty>::is_closed(self)
            }
            fn is_switched(&self) -> bool {
                <$ty>::is_switched(self)
            }
            fn consumed(&self) -> u64 {
                <$ty>::consumed(self)
            }
            fn wire_trailers(&self) -> Option<&WireTrailers> {
                <$ty>::wire_trailers(self)
            }
        }
    };
}

decoder!(RequestDecoder, Request<()>);
decoder!(ResponseDecoder, Response<()>);

/// Prints the events of one stream; returns `false` on a protocol error.
fn run<D: Decoder>(input: &[u8], chunk: usize, opts: &Options, dec: &mut D) -> bool {
    let mut printer = Printer {
        show_body: opts.body,
        mark: 0,
        body: None,
        messages: 0,
    };
    let mut buf = BytesMut::new();
    let mut pieces = input.chunks(chunk);
    let mut eof = false;
    loop {
        let result = if eof {
            dec.decode_eof(&mut buf)
        } else {
            dec.decode(&mut buf)
        };
        let consumed = dec.consumed() as usize;
        match result {
            Ok(Some(event)) => printer.event(event, consumed, dec.wire_trailers()),
            Ok(None) => match pieces.next() {
                Some(piece) if !dec.is_closed() && !dec.is_switched() => {
                    buf.extend_from_slice(piece);
                }
                _ if !eof => eof = true,
                _ => break,
            },
            Err(err) => {
                printer.flush_body();
                let at = err.offset().unwrap_or(consumed as u64);
                println!(
                    "@{at:<6} error: {err}\n         kind: {:?}, suggested status: {}\n         decoding stopped at byte {at} of {}",
                    err.kind(),
                    err.status(),
                    input.len(),
                );
                if let Some(field) = err.field() {
                    println!("         field at fault: {}", escape(field));
                }
                return false;
            }
        }
    }
    printer.flush_body();

    let left = input.len() - dec.consumed() as usize;
    let at = input.len() - left;
    if dec.is_switched() {
        println!("@{at:<6} switched protocols: {left} bytes belong to the new protocol");
    } else if left > 0 {
        println!("@{at:<6} closed: {left} bytes after the last message were not parsed");
    }
    println!(
        "{} message{}, {} bytes, clean end",
        printer.messages,
        if printer.messages == 1 { "" } else { "s" },
        input.len()
    );
    true
}

struct Printer {
    show_body: bool,
    /// Stream offset where the element being decoded begins.
    mark: usize,
    /// Body bytes seen since the last other event: (offset, length, bytes).
    body: Option<(usize, usize, Vec<u8>)>,
    messages: usize,
}

impl Printer {
    fn event<H: ShowHead + h1proto::MessageHead<Interim: ShowHead>>(
        &mut self,
        event: Event<H>,
        consumed: usize,
        trailers: Option<&WireTrailers>,
    ) {
        if !matches!(event, Event::Data(_)) {
            self.flush_body();
        }
        let at = self.mark;
        self.mark = consumed;
        match event {
            Event::Head { head, body } => {
                let wire = head.wire();
                println!(
                    "@{at:<6} {}    [body: {}]",
                    escape(wire.start_line()),
                    body_kind(body)
                );
                print_lines(wire);
            }
            Event::Interim(head) => {
                let wire = head.wire();
                println!("@{at:<6} {}    [interim]", escape(wire.start_line()));
                print_lines(wire);
            }
            Event::Data(data) => self.data(at, data),
            Event::Trailers(_) => {
                // The section's own offset: where the last chunk's line
                // ended, whatever the reads.
                let wire = trailers.expect("the wire view is on");
                println!("@{:<6} trailers", consumed - wire.bytes().len());
                for (name, value) in wire.fields() {
                    println!("           {}: {}", escape(name), escape(value));
                }
            }
            Event::End(verdict) => {
                self.messages += 1;
                let verdict = match verdict {
                    KeepAlive::Reusable => "reusable".to_owned(),
                    KeepAlive::Close(reason) => format!("close ({reason:?})"),
                };
                // Where the message ends (its last framing bytes may have
                // come with the last data or after it).
                println!("@{consumed:<6} end          [connection: {verdict}]");
            }
            _ => println!("@{at:<6} (an event this tool does not know yet)"),
        }
    }

    fn data(&mut self, at: usize, data: Bytes) {
        let body = self.body.get_or_insert_with(|| (at, 0, Vec::new()));
        body.1 += data.len();
        if self.show_body {
            body.2.extend_from_slice(&data);
        }
    }

    fn flush_body(&mut self) {
        if let Some((at, len, bytes)) = self.body.take() {
            println!("@{at:<6} data {len} bytes");
            if self.show_body {
                println!("         \"{}\"", escape(&bytes));
            }
        }
    }
}

/// A decoded head, shown through its wire view.
trait ShowHead {
    fn wire(&self) -> &WireHead;
}

/// Requests have no interim responses.
impl ShowHead for std::convert::Infallible {
    fn wire(&self) -> &WireHead {
        match *self {}
    }
}

impl ShowHead for Request<()> {
    fn wire(&self) -> &WireHead {
        self.extensions().get().expect("the wire view is on")
    }
}

impl ShowHead for Response<()> {
    fn wire(&self) -> &WireHead {
        self.extensions().get().expect("the wire view is on")
    }
}

fn body_kind(body: BodyKind) -> String {
    match body {
        BodyKind::Empty => "none".into(),
        BodyKind::Length(n) => format!("content-length {n}"),
        BodyKind::Chunked => "chunked".into(),
        BodyKind::CloseDelimited => "until the connection closes".into(),
    }
}

/// The field lines of a head, as received.
fn print_lines(wire: &WireHead) {
    for (name, value) in wire.fields() {
        println!("           {}: {}", escape(name), escape(value));
    }
}

/// Printable ASCII as is; everything else as an escape.
fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'\r' => out.push_str("\\r"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out
}
