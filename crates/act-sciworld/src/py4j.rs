//! py4j's line protocol: encoding calls, decoding replies, and a blocking client.
//!
//! A call is `c\n<target>\n<method>\n<arg>\n...e\n`; the gateway answers with one line such as
//! `!ys<escaped string>`, `!yi42`, `!ylo3` (a reference to a `java.util.List` with id `o3`) or
//! `!xs<message>` (an exception). Strings travel with `\`, newline and carriage return escaped,
//! so every message stays one line.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The id py4j gives the gateway's entry point object (`PythonInterface` in the jar).
pub const ENTRY_POINT: &str = "t";

/// Longest reply line the client accepts (the valid-action JSON reaches a few hundred kilobytes).
pub const MAX_REPLY_BYTES: usize = 64 * 1024 * 1024;

/// One argument of a py4j call.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg<'a> {
    /// A `java.lang.String`.
    Str(&'a str),
    /// A Java `int`.
    Int(i32),
    /// A Java `long`.
    Long(i64),
    /// A Java `boolean`.
    Bool(bool),
    /// A Java `double`.
    Double(f64),
    /// Java `null`.
    Null,
    /// A reference to an object the gateway already holds (for example `o3`).
    Ref(&'a str),
}

/// The kinds of object reference a reply can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    /// Any object (`r`).
    Object,
    /// A `java.util.List` (`l`).
    List,
    /// A `java.util.Set` (`h`).
    Set,
    /// A Java array (`t`).
    Array,
    /// A `java.util.Map` (`a`).
    Map,
    /// A `java.util.Iterator` (`g`).
    Iterator,
}

impl RefKind {
    fn from_tag(tag: char) -> Option<Self> {
        Some(match tag {
            'r' => Self::Object,
            'l' => Self::List,
            'h' => Self::Set,
            't' => Self::Array,
            'a' => Self::Map,
            'g' => Self::Iterator,
            _ => return None,
        })
    }

    fn tag(self) -> char {
        match self {
            Self::Object => 'r',
            Self::List => 'l',
            Self::Set => 'h',
            Self::Array => 't',
            Self::Map => 'a',
            Self::Iterator => 'g',
        }
    }
}

/// A decoded gateway reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A string result.
    Str(String),
    /// An `int` result.
    Int(i32),
    /// A `long` result.
    Long(i64),
    /// A `double` result.
    Double(f64),
    /// A `boolean` result.
    Bool(bool),
    /// A `void` method returned.
    Void,
    /// The method returned `null`.
    Null,
    /// A reference to an object now held by the gateway (free it with [`encode_free`]).
    Ref {
        /// What the reference points to.
        kind: RefKind,
        /// The gateway's id for the object.
        id: String,
    },
    /// Any other successful reply (bytes, decimals, proxies), kept verbatim.
    Other(String),
    /// The Java side raised an exception; the text is the message (a stack trace for string
    /// errors, the object id for reference errors).
    JavaError(String),
}

impl Reply {
    /// A short name for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Reply::Str(_) => "string",
            Reply::Int(_) => "int",
            Reply::Long(_) => "long",
            Reply::Double(_) => "double",
            Reply::Bool(_) => "boolean",
            Reply::Void => "void",
            Reply::Null => "null",
            Reply::Ref { .. } => "object reference",
            Reply::Other(_) => "other value",
            Reply::JavaError(_) => "Java exception",
        }
    }
}

/// Errors of the py4j codec and client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Py4jError {
    /// The connection failed or closed.
    #[error("py4j connection: {0}")]
    Io(#[from] io::Error),
    /// The gateway closed the connection (the JVM most likely exited).
    #[error("py4j gateway closed the connection")]
    Closed,
    /// A reply line did not follow the protocol.
    #[error("malformed py4j reply {line:?}: {reason}")]
    Malformed {
        /// The offending line (truncated).
        line: String,
        /// What was wrong with it.
        reason: &'static str,
    },
    /// A reply exceeded [`MAX_REPLY_BYTES`].
    #[error("py4j reply longer than {MAX_REPLY_BYTES} bytes")]
    TooLong,
    /// The Java method raised an exception.
    #[error("Java exception in {method}: {message}")]
    Java {
        /// The method called.
        method: String,
        /// The exception text.
        message: String,
    },
    /// The reply had a different type from the one the caller expected.
    #[error("{method} returned {got}, expected {expected}")]
    UnexpectedReply {
        /// The method called.
        method: String,
        /// What the caller expected.
        expected: &'static str,
        /// What came back.
        got: &'static str,
    },
}

/// Escapes a string for the wire: `\` becomes `\\`, newline `\n`, carriage return `\r`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// Reverses [`escape`]. A backslash before any other character (which py4j never sends) is kept
/// as it is, together with that character.
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn push_arg(out: &mut String, arg: &Arg<'_>) {
    match arg {
        Arg::Str(s) => {
            out.push('s');
            out.push_str(&escape(s));
        }
        Arg::Int(i) => {
            out.push('i');
            out.push_str(&i.to_string());
        }
        Arg::Long(l) => {
            out.push('L');
            out.push_str(&l.to_string());
        }
        Arg::Bool(b) => {
            out.push('b');
            out.push_str(if *b { "true" } else { "false" });
        }
        Arg::Double(d) => {
            out.push('d');
            if d.is_nan() {
                out.push_str("NaN");
            } else if d.is_infinite() {
                out.push_str(if *d > 0.0 { "Infinity" } else { "-Infinity" });
            } else {
                out.push_str(&format!("{d:?}"));
            }
        }
        Arg::Null => out.push('n'),
        Arg::Ref(id) => {
            out.push('r');
            out.push_str(id);
        }
    }
    out.push('\n');
}

/// Encodes a method call on `target` (an object id such as [`ENTRY_POINT`] or `o3`).
pub fn encode_call(target: &str, method: &str, args: &[Arg<'_>]) -> String {
    let mut out = String::with_capacity(16 + target.len() + method.len());
    out.push_str("c\n");
    out.push_str(target);
    out.push('\n');
    out.push_str(method);
    out.push('\n');
    for arg in args {
        push_arg(&mut out, arg);
    }
    out.push_str("e\n");
    out
}

/// Encodes the command that lets the gateway forget object `id`.
pub fn encode_free(id: &str) -> String {
    format!("m\nd\n{id}\ne\n")
}

fn malformed(line: &str, reason: &'static str) -> Py4jError {
    let shown: String = line.chars().take(200).collect();
    Py4jError::Malformed { line: shown, reason }
}

/// Decodes one reply line (without its trailing newline).
pub fn decode_reply(line: &str) -> Result<Reply, Py4jError> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    let Some(rest) = line.strip_prefix('!') else {
        return Err(malformed(line, "does not start with '!'"));
    };
    let mut chars = rest.chars();
    let status = chars.next().ok_or_else(|| malformed(line, "missing status"))?;
    let body = chars.as_str();
    match status {
        'y' => decode_value(line, body),
        'x' | 'z' => {
            let message = match body.chars().next() {
                Some('s') => unescape(&body[1..]),
                Some(_) | None => body.to_string(),
            };
            Ok(Reply::JavaError(message))
        }
        _ => Err(malformed(line, "unknown status (expected 'y', 'x' or 'z')")),
    }
}

fn decode_value(line: &str, body: &str) -> Result<Reply, Py4jError> {
    let mut chars = body.chars();
    let Some(tag) = chars.next() else {
        // `!y` alone acknowledges commands that return nothing (such as freeing an object).
        return Ok(Reply::Void);
    };
    let value = chars.as_str();
    Ok(match tag {
        's' => Reply::Str(unescape(value)),
        'i' => Reply::Int(value.parse().map_err(|_| malformed(line, "bad int value"))?),
        'L' => Reply::Long(value.parse().map_err(|_| malformed(line, "bad long value"))?),
        'd' => Reply::Double(parse_double(value).ok_or_else(|| malformed(line, "bad double value"))?),
        'b' => match value.to_ascii_lowercase().as_str() {
            "true" => Reply::Bool(true),
            "false" => Reply::Bool(false),
            _ => return Err(malformed(line, "bad boolean value")),
        },
        'v' => Reply::Void,
        'n' => Reply::Null,
        tag => match RefKind::from_tag(tag) {
            Some(kind) => {
                if value.is_empty() {
                    return Err(malformed(line, "reference without an id"));
                }
                Reply::Ref { kind, id: value.to_string() }
            }
            None => Reply::Other(body.to_string()),
        },
    })
}

fn parse_double(value: &str) -> Option<f64> {
    match value {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        v => v.parse().ok(),
    }
}

/// Encodes a reply line (the gateway's side); used by tests and fake gateways.
pub fn encode_reply(reply: &Reply) -> String {
    let mut out = String::from("!");
    match reply {
        Reply::Str(s) => {
            out.push_str("ys");
            out.push_str(&escape(s));
        }
        Reply::Int(i) => out.push_str(&format!("yi{i}")),
        Reply::Long(l) => out.push_str(&format!("yL{l}")),
        Reply::Double(d) => {
            let mut arg = String::new();
            push_arg(&mut arg, &Arg::Double(*d));
            out.push('y');
            out.push_str(arg.trim_end_matches('\n'));
        }
        Reply::Bool(b) => out.push_str(&format!("yb{b}")),
        Reply::Void => out.push_str("yv"),
        Reply::Null => out.push_str("yn"),
        Reply::Ref { kind, id } => {
            out.push('y');
            out.push(kind.tag());
            out.push_str(id);
        }
        Reply::Other(body) => {
            out.push('y');
            out.push_str(body);
        }
        Reply::JavaError(message) => {
            out.push_str("xs");
            out.push_str(&escape(message));
        }
    }
    out.push('\n');
    out
}

/// A blocking py4j client on one TCP connection; calls are strictly request / reply.
#[derive(Debug)]
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    line: Vec<u8>,
}

impl Client {
    /// Wraps a connected stream; `timeout` bounds every reply (None: wait for ever).
    pub fn new(stream: TcpStream, timeout: Option<Duration>) -> Result<Self, Py4jError> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(timeout)?;
        let writer = stream.try_clone()?;
        Ok(Self { reader: BufReader::with_capacity(1 << 16, stream), writer, line: Vec::with_capacity(1 << 12) })
    }

    /// Sends one raw command and reads its one-line reply.
    pub fn round_trip(&mut self, command: &str) -> Result<Reply, Py4jError> {
        self.writer.write_all(command.as_bytes())?;
        self.writer.flush()?;
        self.line.clear();
        let read = (&mut self.reader).take(MAX_REPLY_BYTES as u64 + 1).read_until(b'\n', &mut self.line)?;
        if read == 0 {
            return Err(Py4jError::Closed);
        }
        if self.line.last() != Some(&b'\n') {
            return Err(if self.line.len() > MAX_REPLY_BYTES { Py4jError::TooLong } else { Py4jError::Closed });
        }
        let text = String::from_utf8_lossy(&self.line);
        decode_reply(&text)
    }

    /// Calls `method` on `target`; a Java exception becomes [`Py4jError::Java`].
    pub fn call(&mut self, target: &str, method: &str, args: &[Arg<'_>]) -> Result<Reply, Py4jError> {
        match self.round_trip(&encode_call(target, method, args))? {
            Reply::JavaError(message) => Err(Py4jError::Java { method: method.to_string(), message }),
            reply => Ok(reply),
        }
    }

    /// Calls a method on the entry point that returns a string.
    pub fn call_string(&mut self, method: &str, args: &[Arg<'_>]) -> Result<String, Py4jError> {
        match self.call(ENTRY_POINT, method, args)? {
            Reply::Str(s) => Ok(s),
            other => Err(unexpected(method, "string", &other)),
        }
    }

    /// Calls a method on the entry point that returns an `int` (or a boxed `Integer`).
    pub fn call_int(&mut self, method: &str, args: &[Arg<'_>]) -> Result<i64, Py4jError> {
        match self.call(ENTRY_POINT, method, args)? {
            Reply::Int(i) => Ok(i64::from(i)),
            Reply::Long(l) => Ok(l),
            other => Err(unexpected(method, "int", &other)),
        }
    }

    /// Calls a method on the entry point that returns a `double`.
    pub fn call_double(&mut self, method: &str, args: &[Arg<'_>]) -> Result<f64, Py4jError> {
        match self.call(ENTRY_POINT, method, args)? {
            Reply::Double(d) => Ok(d),
            other => Err(unexpected(method, "double", &other)),
        }
    }

    /// Calls a method on the entry point that returns a `boolean`.
    pub fn call_bool(&mut self, method: &str, args: &[Arg<'_>]) -> Result<bool, Py4jError> {
        match self.call(ENTRY_POINT, method, args)? {
            Reply::Bool(b) => Ok(b),
            other => Err(unexpected(method, "boolean", &other)),
        }
    }

    /// Calls a method on the entry point that returns a `java.util.List`, reads every element as
    /// text (strings as they are, numbers in decimal) and frees the list on the Java side.
    pub fn call_list(&mut self, method: &str, args: &[Arg<'_>]) -> Result<Vec<String>, Py4jError> {
        let id = match self.call(ENTRY_POINT, method, args)? {
            Reply::Ref { kind: RefKind::List, id } => id,
            other => return Err(unexpected(method, "list", &other)),
        };
        let items = self.read_list(method, &id);
        // Free the list even when reading it failed part-way, unless the connection is gone.
        let freed = match &items {
            Err(Py4jError::Io(_) | Py4jError::Closed | Py4jError::TooLong) => Ok(Reply::Void),
            _ => self.round_trip(&encode_free(&id)),
        };
        let items = items?;
        freed?;
        Ok(items)
    }

    fn read_list(&mut self, method: &str, id: &str) -> Result<Vec<String>, Py4jError> {
        let size = match self.call(id, "size", &[])? {
            Reply::Int(n) => usize::try_from(n).map_err(|_| unexpected(method, "list size", &Reply::Int(n)))?,
            other => return Err(unexpected(method, "list size", &other)),
        };
        let mut items = Vec::with_capacity(size);
        for index in 0..size {
            let index = i32::try_from(index).unwrap_or(i32::MAX);
            let item = match self.call(id, "get", &[Arg::Int(index)])? {
                Reply::Str(s) => s,
                Reply::Int(i) => i.to_string(),
                Reply::Long(l) => l.to_string(),
                other => return Err(unexpected(method, "string or int list element", &other)),
            };
            items.push(item);
        }
        Ok(items)
    }
}

fn unexpected(method: &str, expected: &'static str, got: &Reply) -> Py4jError {
    Py4jError::UnexpectedReply { method: method.to_string(), expected, got: got.kind_name() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodes_calls_like_the_python_client() {
        let call = encode_call(ENTRY_POINT, "load", &[Arg::Str("boil"), Arg::Int(3), Arg::Str(""), Arg::Bool(false)]);
        assert_eq!(call, "c\nt\nload\nsboil\ni3\ns\nbfalse\ne\n");
        assert_eq!(encode_call("o7", "size", &[]), "c\no7\nsize\ne\n");
        assert_eq!(encode_free("o7"), "m\nd\no7\ne\n");
    }

    #[test]
    fn escapes_newlines_and_backslashes() {
        assert_eq!(escape("a\nb\\c\rd"), "a\\nb\\\\c\\rd");
        assert_eq!(unescape("a\\nb\\\\c\\rd"), "a\nb\\c\rd");
        // `\\n` is an escaped backslash followed by a plain n.
        assert_eq!(unescape("\\\\n"), "\\n");
        assert_eq!(unescape("tab\\t end\\"), "tab\\t end\\");
    }

    #[test]
    fn decodes_observed_replies() {
        assert_eq!(
            decode_reply("!ysThis room is called the hallway.\\n\tthe agent\n").unwrap(),
            Reply::Str("This room is called the hallway.\n\tthe agent".into())
        );
        assert_eq!(decode_reply("!yi30").unwrap(), Reply::Int(30));
        assert_eq!(decode_reply("!yd0.08333333333333333").unwrap(), Reply::Double(0.08333333333333333));
        assert_eq!(decode_reply("!ybfalse").unwrap(), Reply::Bool(false));
        assert_eq!(decode_reply("!yv").unwrap(), Reply::Void);
        assert_eq!(decode_reply("!y").unwrap(), Reply::Void);
        assert_eq!(decode_reply("!yn").unwrap(), Reply::Null);
        assert_eq!(decode_reply("!ylo12").unwrap(), Reply::Ref { kind: RefKind::List, id: "o12".into() });
        assert_eq!(
            decode_reply("!xspy4j.Py4JException: Method nosuch([]) does not exist\\n\tat x").unwrap(),
            Reply::JavaError("py4j.Py4JException: Method nosuch([]) does not exist\n\tat x".into())
        );
        assert_eq!(decode_reply("!ys").unwrap(), Reply::Str(String::new()));
    }

    #[test]
    fn rejects_malformed_replies() {
        for line in ["", "ys", "!", "!q", "!yinot", "!ybmaybe", "!yd1.2.3", "!yl"] {
            assert!(decode_reply(line).is_err(), "{line:?} was accepted");
        }
    }

    /// A one-connection fake gateway answering each command with the next canned reply; returns
    /// the commands it received.
    fn fake_gateway(replies: Vec<&'static str>) -> (std::net::SocketAddr, std::thread::JoinHandle<Vec<String>>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let handle = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut writer = stream;
            let mut commands = Vec::new();
            for reply in replies {
                let mut command = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap() == 0 {
                        return commands;
                    }
                    command.push_str(&line);
                    if line == "e\n" {
                        break;
                    }
                }
                commands.push(command);
                writer.write_all(reply.as_bytes()).unwrap();
            }
            commands
        });
        (address, handle)
    }

    #[test]
    fn client_reads_lists_and_frees_them() {
        let (address, server) = fake_gateway(vec!["!ylo4\n", "!yi2\n", "!ysboil\n", "!ysmelt\n", "!yv\n"]);
        let mut client = Client::new(TcpStream::connect(address).unwrap(), Some(Duration::from_secs(5))).unwrap();
        assert_eq!(client.call_list("getTaskNames", &[]).unwrap(), vec!["boil", "melt"]);
        drop(client);
        let commands = server.join().unwrap();
        assert_eq!(
            commands,
            vec![
                "c\nt\ngetTaskNames\ne\n",
                "c\no4\nsize\ne\n",
                "c\no4\nget\ni0\ne\n",
                "c\no4\nget\ni1\ne\n",
                "m\nd\no4\ne\n"
            ]
        );
    }

    #[test]
    fn client_reports_exceptions_wrong_types_and_closed_connections() {
        let (address, server) = fake_gateway(vec!["!xspy4j.Py4JException: no\n", "!yi3\n"]);
        let mut client = Client::new(TcpStream::connect(address).unwrap(), Some(Duration::from_secs(5))).unwrap();
        let err = client.call_string("nosuch", &[]).unwrap_err();
        assert!(matches!(err, Py4jError::Java { .. }), "{err}");
        let err = client.call_string("getNumMoves", &[]).unwrap_err();
        assert!(err.to_string().contains("getNumMoves returned int, expected string"), "{err}");
        server.join().unwrap();
        let err = client.call_string("step", &[Arg::Str("look around")]).unwrap_err();
        assert!(matches!(err, Py4jError::Closed | Py4jError::Io(_)), "{err}");
    }

    fn reply_strategy() -> impl Strategy<Value = Reply> {
        prop_oneof![
            any::<String>().prop_map(Reply::Str),
            any::<i32>().prop_map(Reply::Int),
            any::<i64>().prop_map(Reply::Long),
            any::<f64>().prop_filter("NaN never compares equal", |d| !d.is_nan()).prop_map(Reply::Double),
            any::<bool>().prop_map(Reply::Bool),
            Just(Reply::Void),
            Just(Reply::Null),
            "o[0-9]{1,6}".prop_map(|id| Reply::Ref { kind: RefKind::List, id }),
            any::<String>().prop_map(Reply::JavaError),
        ]
    }

    proptest! {
        #[test]
        fn escape_round_trips(text in any::<String>()) {
            let escaped = escape(&text);
            prop_assert!(!escaped.contains('\n') && !escaped.contains('\r'));
            prop_assert_eq!(unescape(&escaped), text);
        }

        #[test]
        fn replies_round_trip(reply in reply_strategy()) {
            let line = encode_reply(&reply);
            prop_assert_eq!(line.matches('\n').count(), 1);
            prop_assert_eq!(decode_reply(&line).unwrap(), reply);
        }

        #[test]
        fn string_arguments_stay_on_one_line_each(args in proptest::collection::vec(any::<String>(), 0..6)) {
            let args: Vec<Arg<'_>> = args.iter().map(|s| Arg::Str(s)).collect();
            let call = encode_call(ENTRY_POINT, "step", &args);
            // c, target, method, one line per argument, e.
            prop_assert_eq!(call.matches('\n').count(), 4 + args.len());
        }

        #[test]
        fn decoding_never_panics(line in any::<String>()) {
            let _ = decode_reply(&line);
        }

        #[test]
        fn decoding_prefixed_noise_never_panics(tag in "[!][xyz]?[a-zA-Z]?", rest in any::<String>()) {
            let _ = decode_reply(&format!("{tag}{rest}"));
        }

        #[test]
        fn unescape_never_panics(text in any::<String>()) {
            let _ = unescape(&text);
        }
    }
}
