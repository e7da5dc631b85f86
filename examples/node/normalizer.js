// @ts-check
/**
 * A streaming normalizer for the spec's default profile (SPEC.md): the `think` grammar
 * (`<think>`, `<thinking>` and their closes), exact matching, starting outside reasoning,
 * native reasoning authoritative (`native_only`), an unclosed block's text kept as thinking.
 *
 * The only state carried between chunks is the held-back suffix that could still become a
 * delimiter (at most 10 ASCII characters), the inside/outside state and two native-reasoning
 * fields. Delimiters are ASCII, so slicing at a `<` never splits a surrogate pair.
 */

/** @typedef {{assistant: string, thinking: string}} Delta */
/** @typedef {{content?: string | null, reasoning?: string | null}} Chunk */

/** @type {ReadonlyArray<readonly [string, boolean]>} (delimiter, whether it closes a block) */
const DELIMITERS = [
  ["<think>", false],
  ["</think>", true],
  ["<thinking>", false],
  ["</thinking>", true],
];
const LONGEST = 11;

export class Normalizer {
  constructor() {
    /** @type {boolean} */
    this.inside = false;
    /** Held-back text: a proper prefix of a delimiter at the end of the content so far. */
    this.carry = "";
    /** @type {boolean} */
    this.nativeSeen = false;
    /**
     * How many leading characters of the carry are body text that arrived before the first
     * native reasoning: under `native_only` they still go to thinking (SPEC.md 5.3).
     */
    this.keep = 0;
  }

  /**
   * Process one chunk; returns what it releases. Native reasoning comes before content.
   * @param {Chunk} chunk
   * @returns {Delta}
   */
  feed(chunk) {
    const delta = { assistant: "", thinking: "" };
    const reasoning = text(chunk.reasoning, "reasoning");
    const content = text(chunk.content, "content");
    if (reasoning) {
      if (!this.nativeSeen) {
        this.nativeSeen = true;
        if (this.inside) this.keep = this.carry.length;
      }
      delta.thinking += reasoning;
    }
    if (content) {
      const whole = this.carry + content;
      this.carry = "";
      this.scan(whole, delta);
    }
    return delta;
  }

  /**
   * End of stream: release everything held back, then start over.
   * @returns {Delta}
   */
  finish() {
    const delta = { assistant: "", thinking: "" };
    this.route(this.carry, delta);
    this.inside = false;
    this.carry = "";
    this.nativeSeen = false;
    this.keep = 0;
    return delta;
  }

  /**
   * @param {string} whole the carry followed by the new content
   * @param {Delta} delta
   */
  scan(whole, delta) {
    let routed = 0; // text before this index has been routed
    let at = whole.indexOf("<");
    while (at !== -1) {
      const match = DELIMITERS.find(([delimiter]) => whole.startsWith(delimiter, at));
      if (match) {
        this.route(whole.slice(routed, at), delta);
        // An open inside a block is ignored (6.1); a close outside is an orphan, removed
        // with the text before it kept (6.5).
        this.inside = !match[1];
        routed = at + match[0].length;
        this.keep = 0;
        at = whole.indexOf("<", routed);
        continue;
      }
      if (whole.length - at < LONGEST) {
        const rest = whole.slice(at);
        if (DELIMITERS.some(([delimiter]) => delimiter.startsWith(rest))) {
          // It may still become a delimiter: hold it back until the next chunk.
          this.route(whole.slice(routed, at), delta);
          this.carry = rest;
          return;
        }
      }
      at = whole.indexOf("<", at + 1);
    }
    this.route(whole.slice(routed), delta);
  }

  /**
   * @param {string} piece
   * @param {Delta} delta
   */
  route(piece, delta) {
    if (!piece) return;
    if (!this.inside) {
      delta.assistant += piece;
    } else if (!this.nativeSeen) {
      delta.thinking += piece;
    } else {
      // native_only: body text that arrived after native reasoning is dropped.
      const kept = Math.min(this.keep, piece.length);
      delta.thinking += piece.slice(0, kept);
      this.keep -= kept;
    }
  }
}

/**
 * A chunk field: a string, or null / undefined for no text.
 * @param {unknown} value
 * @param {string} name
 * @returns {string}
 */
function text(value, name) {
  if (value === null || value === undefined) return "";
  if (typeof value !== "string") throw new TypeError(`\`${name}\` must be a string or null`);
  return value;
}

/**
 * A whole stream: one delta per chunk, then the flush delta.
 * @param {Iterable<Chunk>} chunks
 * @returns {Delta[]}
 */
export function normalizeStream(chunks) {
  const normalizer = new Normalizer();
  /** @type {Delta[]} */
  const deltas = [];
  for (const chunk of chunks) deltas.push(normalizer.feed(chunk));
  deltas.push(normalizer.finish());
  return deltas;
}

/**
 * The non-streaming form: the message as a one-chunk stream, its two deltas joined.
 * @param {string | null} content
 * @param {string | null} reasoning
 * @returns {Delta}
 */
export function normalizeWhole(content, reasoning) {
  const [first, last] = normalizeStream([{ content, reasoning }]);
  return {
    assistant: first.assistant + last.assistant,
    thinking: first.thinking + last.thinking,
  };
}
