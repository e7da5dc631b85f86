//! A streaming normalizer for the spec's default profile (SPEC.md): the `think` grammar
//! (`<think>`, `<thinking>` and their closes), exact matching, starting outside reasoning,
//! native reasoning authoritative (`native_only`), an unclosed block's text kept as thinking.
//!
//! The only state carried between chunks is the held-back suffix that could still become a
//! delimiter (at most 10 ASCII characters), the inside/outside state and two native-reasoning
//! fields. All delimiters are ASCII and start with `<`, so the scan works on bytes and every
//! index it slices at is a character boundary.

/// One output step: the text each channel gained.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Delta {
    pub assistant: String,
    pub thinking: String,
}

/// (delimiter, whether it closes a block). None is a prefix of another (SPEC.md 2.1).
const DELIMITERS: [(&str, bool); 4] = [
    ("<think>", false),
    ("</think>", true),
    ("<thinking>", false),
    ("</thinking>", true),
];
const LONGEST: usize = 11;

#[derive(Debug, Default)]
pub struct Normalizer {
    inside: bool,
    /// Held-back text: a proper prefix of a delimiter at the end of the content so far.
    carry: String,
    native_seen: bool,
    /// How many leading bytes of the carry are body text that arrived before the first
    /// native reasoning: under `native_only` they still go to thinking (SPEC.md 5.3).
    keep: usize,
}

impl Normalizer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Process one chunk; returns what it releases. Native reasoning comes before content.
    pub fn feed(&mut self, content: Option<&str>, reasoning: Option<&str>) -> Delta {
        let mut delta = Delta::default();
        if let Some(reasoning) = reasoning.filter(|r| !r.is_empty()) {
            if !self.native_seen {
                self.native_seen = true;
                if self.inside {
                    self.keep = self.carry.len();
                }
            }
            delta.thinking.push_str(reasoning);
        }
        if let Some(content) = content.filter(|c| !c.is_empty()) {
            let text = if self.carry.is_empty() {
                content.to_owned()
            } else {
                let mut text = std::mem::take(&mut self.carry);
                text.push_str(content);
                text
            };
            self.scan(&text, &mut delta);
        }
        delta
    }

    /// End of stream: release everything held back, then start over.
    pub fn finish(&mut self) -> Delta {
        let mut delta = Delta::default();
        let text = std::mem::take(&mut self.carry);
        self.route(&text, &mut delta);
        *self = Self::new();
        delta
    }

    fn scan(&mut self, text: &str, delta: &mut Delta) {
        let bytes = text.as_bytes();
        let mut routed = 0; // text before this index has been routed
        let mut at = 0;
        while let Some(offset) = bytes[at..].iter().position(|&b| b == b'<') {
            at += offset;
            let rest = &text[at..];
            if let Some(&(delimiter, close)) = DELIMITERS.iter().find(|(d, _)| rest.starts_with(d))
            {
                self.route(&text[routed..at], delta);
                // An open inside a block is ignored (6.1); a close outside is an orphan,
                // removed with the text before it kept (6.5).
                self.inside = !close;
                at += delimiter.len();
                routed = at;
                self.keep = 0;
                continue;
            }
            if rest.len() < LONGEST && DELIMITERS.iter().any(|(d, _)| d.starts_with(rest)) {
                // It may still become a delimiter: hold it back until the next chunk.
                self.route(&text[routed..at], delta);
                self.carry = rest.to_owned();
                return;
            }
            at += 1;
        }
        self.route(&text[routed..], delta);
    }

    fn route(&mut self, text: &str, delta: &mut Delta) {
        if text.is_empty() {
            return;
        }
        if !self.inside {
            delta.assistant.push_str(text);
        } else if !self.native_seen {
            delta.thinking.push_str(text);
        } else {
            // native_only: body text that arrived after native reasoning is dropped.
            let kept = self.keep.min(text.len());
            delta.thinking.push_str(&text[..kept]);
            self.keep -= kept;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(chunks: &[(Option<&str>, Option<&str>)]) -> Vec<(String, String)> {
        let mut normalizer = Normalizer::new();
        let mut deltas: Vec<Delta> = chunks
            .iter()
            .map(|(c, r)| normalizer.feed(*c, *r))
            .collect();
        deltas.push(normalizer.finish());
        deltas
            .into_iter()
            .map(|d| (d.assistant, d.thinking))
            .collect()
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(a, t)| (a.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn split_close_is_held_back() {
        let got = stream(&[(Some("<think>abc</thi"), None), (Some("nk>Final"), None)]);
        assert_eq!(got, pairs(&[("", "abc"), ("Final", ""), ("", "")]));
    }

    #[test]
    fn held_back_text_is_flushed() {
        assert_eq!(
            stream(&[(Some("x <think"), None)]),
            pairs(&[("x ", ""), ("<think", "")])
        );
    }

    #[test]
    fn orphan_close_keeps_the_text_before_it() {
        assert_eq!(
            stream(&[(Some("...done</think>answer"), None)])[0].0,
            "...doneanswer"
        );
    }

    #[test]
    fn held_back_character_belongs_to_its_arrival() {
        let got = stream(&[(Some("<think>ab<"), None), (Some("c</think>x"), Some("R"))]);
        assert_eq!(got, pairs(&[("", "ab"), ("x", "R<"), ("", "")]));
    }
}
