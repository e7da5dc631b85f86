//! A reasoning-channel normalizer speaking the conformance suite's protocol, version 1
//! (docs/PROTOCOL.md): one JSON request per line on stdin, one response line per request on
//! stdout, in order. Standard library only.
//!
//!     cargo build --release
//!     conformance run --impl "rust=cmd:target/release/think-normalizer"

mod json;
mod normalizer;

use std::io::{self, BufRead, BufReader, BufWriter, Write};

use json::{write_string, Value};
use normalizer::{Delta, Normalizer};

const HELLO: &str = concat!(
    r#"{"protocol":1,"implementation":{"name":"think-normalizer","version":""#,
    env!("CARGO_PKG_VERSION"),
    r#"","language":"rust"},"options":{}}"#
);

/// What to do after a request: answer it, or stop.
enum Outcome {
    Reply(String),
    Bye,
}

fn main() -> io::Result<()> {
    let mut input = BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut output = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        // Split on the `\n` byte only: U+2028 and friends are text, not line breaks.
        if input.read_until(b'\n', &mut line)? == 0 {
            break; // end of input: exit as after `bye`
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match handle(&line) {
            Outcome::Reply(reply) => {
                output.write_all(reply.as_bytes())?;
                output.write_all(b"\n")?;
            }
            Outcome::Bye => break,
        }
        // Flush once the requests already read are answered: the harness pipelines, and is
        // waiting for these replies before it sends more.
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

fn handle(line: &[u8]) -> Outcome {
    let request = match std::str::from_utf8(line)
        .map_err(|e| e.to_string())
        .and_then(json::parse)
    {
        Ok(parsed) => parsed,
        Err(message) => {
            // Without an id the harness cannot match a reply; it restarts the process.
            eprintln!("think-normalizer: unreadable request: {message}");
            return Outcome::Reply(error_reply(None, &format!("unreadable request: {message}")));
        }
    };
    let id = request.value.get("id");
    let op = request
        .value
        .get("op")
        .and_then(Value::as_str)
        .unwrap_or("");
    if op == "bye" {
        return Outcome::Bye;
    }
    if op == "hello" {
        return Outcome::Reply(match request.value.get("protocol") {
            Some(Value::Number(version)) if version == "1" => HELLO.to_owned(),
            _ => r#"{"error":"think-normalizer speaks protocol version 1 only"}"#.to_owned(),
        });
    }
    if request.lone_surrogates > 0 {
        let message = "the request holds a lone surrogate (\\ud800-\\udfff alone), which a Rust \
                       String cannot represent";
        return Outcome::Reply(error_reply(id, message));
    }
    Outcome::Reply(match op {
        "stream" => match request.value.get("chunks") {
            Some(Value::Array(chunks)) => stream_reply(id, chunks),
            _ => error_reply(id, "a stream request needs a `chunks` array"),
        },
        "whole" => whole_reply(id, &request.value),
        _ => unsupported_reply(id, &format!("unknown op {op:?}")),
    })
}

/// A chunk's `content` or `reasoning`: a string, or null / absent.
fn text_field<'a>(object: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(format!("`{key}` must be a string or null")),
    }
}

fn stream_reply(id: Option<&Value>, chunks: &[Value]) -> String {
    let mut normalizer = Normalizer::new();
    let mut deltas = Vec::with_capacity(chunks.len() + 1);
    for chunk in chunks {
        let fields =
            text_field(chunk, "content").and_then(|c| Ok((c, text_field(chunk, "reasoning")?)));
        match fields {
            Ok((content, reasoning)) => deltas.push(normalizer.feed(content, reasoning)),
            Err(message) => return error_reply(id, &message),
        }
    }
    deltas.push(normalizer.finish());
    let mut out = String::with_capacity(32 + deltas.len() * 32);
    out.push_str("{\"id\":");
    write_id(&mut out, id);
    out.push_str(",\"deltas\":[");
    for (index, delta) in deltas.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_delta(&mut out, delta);
    }
    out.push_str("]}");
    out
}

/// The non-streaming form: the message as a one-chunk stream, its two deltas joined.
fn whole_reply(id: Option<&Value>, request: &Value) -> String {
    let fields =
        text_field(request, "content").and_then(|c| Ok((c, text_field(request, "reasoning")?)));
    let (content, reasoning) = match fields {
        Ok(fields) => fields,
        Err(message) => return error_reply(id, &message),
    };
    let mut normalizer = Normalizer::new();
    let mut joined = normalizer.feed(content, reasoning);
    let last = normalizer.finish();
    joined.assistant.push_str(&last.assistant);
    joined.thinking.push_str(&last.thinking);
    let mut out = String::from("{\"id\":");
    write_id(&mut out, id);
    out.push_str(",\"assistant\":");
    write_string(&mut out, &joined.assistant);
    out.push_str(",\"thinking\":");
    write_string(&mut out, &joined.thinking);
    out.push('}');
    out
}

fn write_delta(out: &mut String, delta: &Delta) {
    out.push_str("{\"assistant\":");
    write_string(out, &delta.assistant);
    out.push_str(",\"thinking\":");
    write_string(out, &delta.thinking);
    out.push('}');
}

/// The request's id, copied back unchanged (it is a string in protocol 1).
fn write_id(out: &mut String, id: Option<&Value>) {
    match id {
        Some(Value::String(text)) => write_string(out, text),
        Some(Value::Number(number)) => out.push_str(number),
        _ => out.push_str("null"),
    }
}

fn error_reply(id: Option<&Value>, message: &str) -> String {
    keyed_reply(id, "error", message)
}

fn unsupported_reply(id: Option<&Value>, message: &str) -> String {
    keyed_reply(id, "unsupported", message)
}

fn keyed_reply(id: Option<&Value>, key: &str, message: &str) -> String {
    let mut out = String::from("{\"id\":");
    write_id(&mut out, id);
    out.push_str(&format!(",\"{key}\":"));
    write_string(&mut out, message);
    out.push('}');
    out
}
