//! Just enough JSON for the protocol's messages, by hand (no crates): a parser for any JSON
//! value and an encoder for strings. Strings may hold any character; `\u` escapes, including
//! surrogate pairs for characters outside the Basic Multilingual Plane, are decoded.
//!
//! A Rust `String` cannot hold a lone surrogate (`"\ud800"` alone), which JSON allows. The
//! parser replaces one with U+FFFD and counts it in `lone_surrogates`, so that the caller can
//! answer that request with an error instead of a wrong result.

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// The number's text, as written: the protocol only compares numbers for equality.
    Number(String),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }
}

pub struct Parsed {
    pub value: Value,
    pub lone_surrogates: usize,
}

/// Parse one complete JSON text (surrounding whitespace allowed).
pub fn parse(text: &str) -> Result<Parsed, String> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        at: 0,
        lone_surrogates: 0,
    };
    parser.blank();
    let value = parser.value(0)?;
    parser.blank();
    if parser.at != parser.bytes.len() {
        return Err(parser.error("unexpected text after the JSON value"));
    }
    Ok(Parsed {
        value,
        lone_surrogates: parser.lone_surrogates,
    })
}

const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    lone_surrogates: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> String {
        format!("invalid JSON at byte {}: {}", self.at, message)
    }

    fn blank(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.bytes.get(self.at) == Some(&byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected {:?}", byte as char)))
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("unknown literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.bytes.get(self.at) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
            None => Err(self.error("unexpected end of input")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut members = Vec::new();
        self.blank();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.blank();
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(self.error("expected a string key"));
            }
            let key = self.string()?;
            self.blank();
            self.expect(b':')?;
            self.blank();
            let value = self.value(depth + 1)?;
            members.push((key, value));
            self.blank();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut items = Vec::new();
        self.blank();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.blank();
            items.push(self.value(depth + 1)?);
            self.blank();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.at;
        if self.bytes[self.at] == b'-' {
            self.at += 1;
        }
        let digits = |p: &mut Self| {
            let from = p.at;
            while let Some(b'0'..=b'9') = p.bytes.get(p.at) {
                p.at += 1;
            }
            p.at > from
        };
        let first = self.at;
        if !digits(self) {
            return Err(self.error("a number needs digits"));
        }
        if self.bytes[first] == b'0' && self.at - first > 1 {
            return Err(self.error("no leading zeros in numbers"));
        }
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            if !digits(self) {
                return Err(self.error("digits must follow '.'"));
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            if !digits(self) {
                return Err(self.error("digits must follow the exponent"));
            }
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).expect("ASCII digits");
        Ok(Value::Number(text.to_owned()))
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // the opening quote
        let mut out = String::new();
        loop {
            // Copy the run up to the next quote, backslash or control character at once.
            let start = self.at;
            while let Some(&b) = self.bytes.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // The input is a &str and the run stops only at ASCII bytes: valid UTF-8.
            out.push_str(std::str::from_utf8(&self.bytes[start..self.at]).expect("UTF-8 input"));
            match self.bytes.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => return Err(self.error("control character in a string: escape it")),
                None => return Err(self.error("unterminated string")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), String> {
        let byte = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| self.error("unterminated escape"))?;
        self.at += 1;
        let simple = match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(out),
            _ => return Err(self.error("unknown escape")),
        };
        out.push(simple);
        Ok(())
    }

    /// After `\u`: one code unit, or a surrogate pair written as two escapes.
    fn unicode_escape(&mut self, out: &mut String) -> Result<(), String> {
        let unit = self.hex4()?;
        if (0xD800..0xDC00).contains(&unit) && self.bytes[self.at..].starts_with(b"\\u") {
            let save = self.at;
            self.at += 2;
            let low = self.hex4()?;
            if (0xDC00..0xE000).contains(&low) {
                let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                out.push(char::from_u32(code).expect("a surrogate pair is a scalar value"));
                return Ok(());
            }
            self.at = save; // not a pair: the second escape is read on its own
        }
        match char::from_u32(unit) {
            Some(ch) => out.push(ch),
            None => {
                self.lone_surrogates += 1;
                out.push('\u{FFFD}');
            }
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("short \\u escape"))?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return Err(self.error("bad \\u escape"));
        }
        let text = std::str::from_utf8(digits).expect("hex digits are ASCII");
        self.at += 4;
        Ok(u32::from_str_radix(text, 16).expect("four hex digits"))
    }
}

/// Append `text` as a JSON string literal. Non-ASCII characters are written as raw UTF-8
/// (the protocol allows it); quotes, backslashes and control characters are escaped.
pub fn write_string(out: &mut String, text: &str) {
    out.push('"');
    let mut start = 0;
    for (index, byte) in text.bytes().enumerate() {
        let escaped = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1F => "",
            _ => continue,
        };
        out.push_str(&text[start..index]);
        if escaped.is_empty() {
            out.push_str(&format!("\\u{:04x}", byte));
        } else {
            out.push_str(escaped);
        }
        start = index + 1;
    }
    out.push_str(&text[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(json: &str) -> (String, usize) {
        let parsed = parse(json).unwrap();
        (
            parsed.value.as_str().unwrap().to_owned(),
            parsed.lone_surrogates,
        )
    }

    #[test]
    fn escapes_and_surrogate_pairs() {
        assert_eq!(string(r#""a\"\\\/\b\f\n\r\t""#).0, "a\"\\/\u{8}\u{c}\n\r\t");
        assert_eq!(string(r#""caf\u00e9 \ud83d\ude00""#).0, "café 😀");
        assert_eq!(string(r#""\u0000\u2028""#).0, "\u{0}\u{2028}");
        assert_eq!(string("\"raw 😀 é\"").0, "raw 😀 é");
    }

    #[test]
    fn lone_surrogates_are_counted() {
        assert_eq!(string(r#""\ud800x""#), ("\u{FFFD}x".to_owned(), 1));
        assert_eq!(
            string(r#""\udc00\ud800\u0041""#),
            ("\u{FFFD}\u{FFFD}A".to_owned(), 2)
        );
    }

    #[test]
    fn objects_arrays_literals_numbers() {
        let value = parse(r#" {"op": "stream", "n": -1.5e3, "c": [null, true, false, {}]} "#)
            .unwrap()
            .value;
        assert_eq!(value.get("op").and_then(Value::as_str), Some("stream"));
        assert_eq!(value.get("n"), Some(&Value::Number("-1.5e3".into())));
        assert_eq!(
            value.get("c"),
            Some(&Value::Array(vec![
                Value::Null,
                Value::Bool(true),
                Value::Bool(false),
                Value::Object(vec![])
            ]))
        );
    }

    #[test]
    fn invalid_json_is_an_error() {
        for bad in [
            "",
            "{",
            "[1,]",
            "\"a",
            "\"\u{1}\"",
            "01",
            "-",
            "{\"a\" 1}",
            "tru",
            "\"\\x\"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn strings_round_trip() {
        for text in ["", "plain", "q\"b\\s", "\u{0}\u{1f}\n\r\t", "😀 \u{2028} é"] {
            let mut json = String::new();
            write_string(&mut json, text);
            assert_eq!(string(&json).0, text);
        }
    }
}
