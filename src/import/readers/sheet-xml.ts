/**
 * An element's attributes by their names as written (a prefix kept: `r:id`), values decoded.
 * Read during `open` only: the same object is given for the next tag.
 */
export interface XmlAttributes {
  get(name: string): string | undefined;
}

/** What SheetXml tells of the document, in order; a self-closing tag is an open then a close. */
export interface XmlHandler {
  open(name: string, attributes: XmlAttributes): void;
  text(text: string): void;
  close(name: string): void;
}

const TAB = 9;
const NL = 10;
const CR = 13;
const SPACE = 32;
const BANG = 33;
const DOUBLE_QUOTE = 34;
const SINGLE_QUOTE = 39;
const AMPERSAND = 38;
const SLASH = 47;
const LESS = 60;
const EQUALS = 61;
const GREATER = 62;
const QUESTION = 63;

const TEXT = 0;
const COMMENT = 1;
const CDATA = 2;
const INSTRUCTION = 3;

/** Elements open at once past this are refused: a worksheet nests fewer than ten. */
const MAX_DEPTH = 1000;

/** A tag, entity or instruction still open past this many characters is refused, not held. */
const MAX_MARKUP = 1024 * 1024;

/** A character XML 1.0 does not allow: below U+0020 but tab, LF and CR; U+FFFE, U+FFFF. */
function hasDisallowed(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < SPACE ? code !== TAB && code !== NL && code !== CR : code >= 0xfffe) return true;
  }
  return false;
}

/**
 * No character that needs more than copying: none below U+0020 (tabs and line ends included),
 * no `&`, no `<`, no U+FFFE or U+FFFF. Most values are plain, and one loop is cheaper than the
 * checks it spares.
 */
function isPlain(text: string, from = 0, to = text.length): boolean {
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code < SPACE || code === AMPERSAND || code === LESS || code >= 0xfffe) return false;
  }
  return true;
}

function isSpace(code: number): boolean {
  return code === SPACE || code === NL || code === TAB || code === CR;
}

/** Ends a name: white space, `/`, `>` or `=`. */
function endsName(code: number): boolean {
  return code <= SPACE || code === SLASH || code === GREATER || code === EQUALS;
}

/** A character reference's character, or undefined when it names none XML allows. */
function characterOf(reference: string): string | undefined {
  const hex = reference.startsWith("#x");
  const digits = reference.slice(hex ? 2 : 1);
  if (!(hex ? /^[0-9a-fA-F]{1,6}$/ : /^[0-9]{1,7}$/).test(digits)) return undefined;
  const code = Number.parseInt(digits, hex ? 16 : 10);
  const allowed =
    code === TAB ||
    code === NL ||
    code === CR ||
    (code >= SPACE && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff);
  return allowed ? String.fromCodePoint(code) : undefined;
}

/** The text an entity stands for: the five XML defines and character references, else none. */
function entityText(name: string): string | undefined {
  switch (name) {
    case "lt":
      return "<";
    case "gt":
      return ">";
    case "amp":
      return "&";
    case "apos":
      return "'";
    case "quot":
      return '"';
    default:
      return name.startsWith("#") ? characterOf(name) : undefined;
  }
}

/**
 * The attributes of the tag being read, as where their names and values are in the chunk: no
 * object or string per tag unless a value is asked for (a sheet has about ten tags a row).
 */
class TagAttributes implements XmlAttributes {
  xml = "";
  count = 0;
  /** Name start, name end, value start, value end, for each attribute. */
  private bounds = new Int32Array(64);
  /** Values that are not plain (isPlain), decoded when read. */
  private decoded: (string | undefined)[] | undefined;

  reset(xml: string): void {
    this.xml = xml;
    this.count = 0;
    this.decoded = undefined;
  }

  /** Adds one; answers false when its name is already there. */
  add(nameStart: number, nameEnd: number, valueStart: number, valueEnd: number): boolean {
    if (this.find(this.xml, nameStart, nameEnd) >= 0) return false;
    if (this.count * 4 + 4 > this.bounds.length) {
      const grown = new Int32Array(this.bounds.length * 2);
      grown.set(this.bounds);
      this.bounds = grown;
    }
    const at = this.count++ * 4;
    this.bounds[at] = nameStart;
    this.bounds[at + 1] = nameEnd;
    this.bounds[at + 2] = valueStart;
    this.bounds[at + 3] = valueEnd;
    return true;
  }

  /** The last attribute added's value is `value`, not its text as written. */
  decodedLast(value: string): void {
    this.decoded ??= [];
    this.decoded[this.count - 1] = value;
  }

  get(name: string): string | undefined {
    const k = this.find(name, 0, name.length);
    if (k < 0) return undefined;
    return this.decoded?.[k] ?? this.xml.slice(this.bounds[k * 4 + 2], this.bounds[k * 4 + 3]);
  }

  /** The attribute whose name is `text` from `from` to `to`, or -1. */
  private find(text: string, from: number, to: number): number {
    const length = to - from;
    for (let k = 0; k < this.count; k++) {
      const start = this.bounds[k * 4]!;
      if (this.bounds[k * 4 + 1]! - start !== length) continue;
      let same = true;
      for (let i = 0; i < length && same; i++)
        same = this.xml.charCodeAt(start + i) === text.charCodeAt(from + i);
      if (same) return k;
    }
    return -1;
  }
}

/**
 * A hand-written tokenizer of the XML a worksheet is written in, fed its text a chunk at a time
 * (a tag, an entity or a CRLF may be cut anywhere), telling `handler` what saxes, the parser
 * exceljs uses, would: elements by their names as written (`x:c` stays `x:c`), attributes in
 * either quote with their entities decoded and white space as spaces, text with entities and
 * character references decoded and line ends as LF, CDATA as text; comments, processing
 * instructions and the XML declaration skipped. A DOCTYPE, an unknown entity, a closing tag
 * that does not match, a second root, text outside the root and characters XML does not allow
 * are refused with the character they were found at. Only the open elements' names are held
 * (up to MAX_DEPTH), and at most one unfinished tag or entity (up to MAX_MARKUP) between chunks
 * (docs/architecture/import.md, "Spreadsheets").
 */
export class SheetXml {
  private rest = "";
  /** Characters of the document before `rest`. */
  private base = 0;
  private state = TEXT;
  private readonly elements: string[] = [];
  private sawRoot = false;
  private readonly attributes = new TagAttributes();
  /** Element names seen, so that a name is not cut from the chunk again for each tag. */
  private readonly names: string[] = [];

  /** `part` names the XML in messages: "the sheet's XML", "the shared strings' XML". */
  constructor(
    private readonly handler: XmlHandler,
    private readonly part = "the sheet's XML",
  ) {}

  write(chunk: string): void {
    // Joined, not `+`: V8 makes `+` a cons string, which each charCodeAt of the scan then
    // reads through (the tokenizer took about twice as long on the sheet's chunks).
    const xml = this.rest.length === 0 ? chunk : [this.rest, chunk].join("");
    const at = this.scan(xml);
    if (xml.length - at > MAX_MARKUP) this.fail(at, "markup longer than 1 MB");
    this.rest = xml.slice(at);
    this.base += at;
  }

  /** Reads what can be read of `xml`; answers where the unfinished part left for later begins. */
  private scan(xml: string): number {
    let at = 0;
    while (at < xml.length) {
      if (this.state === TEXT) {
        const lt = xml.indexOf("<", at);
        const end = lt < 0 ? xml.length : lt;
        if (end > at) {
          const stop = this.textUpTo(xml, at, end, lt < 0);
          if (stop < end) return stop;
        }
        if (lt < 0) return xml.length;
        const next = this.markup(xml, lt);
        if (next < 0) return lt;
        at = next;
      } else {
        at = this.skipped(xml, at);
        if (this.state !== TEXT) return at;
      }
    }
    return at;
  }

  /**
   * Inside a comment, a CDATA section or an instruction: answers where it ends (the state back to
   * TEXT), or where what is left for the next chunk begins (a part of its end, or a CR).
   */
  private skipped(xml: string, at: number): number {
    const close = this.state === COMMENT ? "-->" : this.state === CDATA ? "]]>" : "?>";
    const end = xml.indexOf(close, at);
    let stop = end < 0 ? Math.max(at, xml.length - 2) : end;
    if (end < 0 && stop > at && xml.charCodeAt(stop - 1) === CR) stop--;
    if (this.state === CDATA && stop > at) this.handler.text(this.lineEnds(xml.slice(at, stop)));
    if (end < 0) return stop;
    this.state = TEXT;
    return end + close.length;
  }

  /**
   * Text from `from` to `to`; at the end of the chunk an entity or CR that may go on in the next
   * one is left for it. Answers where the text read stops.
   */
  private textUpTo(xml: string, from: number, to: number, chunkEnd: boolean): number {
    let stop = to;
    if (chunkEnd) {
      const amp = xml.lastIndexOf("&", to - 1);
      if (amp >= from && xml.indexOf(";", amp) < 0) stop = amp;
      else if (xml.charCodeAt(to - 1) === CR) stop = to - 1;
    }
    if (stop > from) this.text(xml, from, stop);
    return stop;
  }

  private text(xml: string, from: number, to: number): void {
    const raw = xml.slice(from, to);
    if (this.elements.length === 0) {
      if (raw.trim() !== "") this.fail(from, "text outside the root element");
      return;
    }
    if (isPlain(raw)) {
      this.handler.text(raw);
      return;
    }
    if (hasDisallowed(raw)) this.fail(from, "a character XML does not allow");
    const text = this.lineEnds(raw);
    this.handler.text(text.includes("&") ? this.entities(text, from) : text);
  }

  /** XML's line ends: CRLF and a lone CR are read as LF. */
  private lineEnds(text: string): string {
    return text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
  }

  private entities(text: string, at: number): string {
    let decoded = "";
    let from = 0;
    for (let amp = text.indexOf("&"); amp >= 0; amp = text.indexOf("&", from)) {
      const semicolon = text.indexOf(";", amp);
      if (semicolon < 0) this.fail(at, "an entity without its ';'");
      const name = text.slice(amp + 1, semicolon);
      const value = entityText(name);
      if (value === undefined) this.fail(at, `an unknown entity &${name.slice(0, 20)};`);
      decoded += text.slice(from, amp) + value;
      from = semicolon + 1;
    }
    return decoded + text.slice(from);
  }

  /** The markup at `lt`: answers where it ends, or -1 when it goes on in the next chunk. */
  private markup(xml: string, lt: number): number {
    if (lt + 1 >= xml.length) return -1;
    const code = xml.charCodeAt(lt + 1);
    if (code === SLASH) return this.closingTag(xml, lt);
    if (code === QUESTION) {
      this.state = INSTRUCTION;
      return lt + 2;
    }
    if (code !== BANG) return this.openingTag(xml, lt);
    if (xml.startsWith("<!--", lt)) {
      this.state = COMMENT;
      return lt + 4;
    }
    if (xml.startsWith("<![CDATA[", lt)) {
      if (this.elements.length === 0) this.fail(lt, "CDATA outside the root element");
      this.state = CDATA;
      return lt + 9;
    }
    const begun = xml.slice(lt);
    if (begun.length < 9 && ("<![CDATA[".startsWith(begun) || "<!--".startsWith(begun))) return -1;
    return this.fail(lt, "a DOCTYPE or declaration, which a worksheet has none of");
  }

  private closingTag(xml: string, lt: number): number {
    const open = this.elements[this.elements.length - 1];
    const gt = lt + 2 + (open?.length ?? 0);
    // Mostly the open element's name then `>`, compared where it is: no string cut.
    if (open !== undefined && gt < xml.length && xml.charCodeAt(gt) === GREATER) {
      if (xml.startsWith(open, lt + 2)) {
        this.elements.pop();
        this.handler.close(open);
        return gt + 1;
      }
    }
    return this.otherClosingTag(xml, lt);
  }

  /** A closing tag with space before its `>`, one that does not match, or one not whole. */
  private otherClosingTag(xml: string, lt: number): number {
    const gt = xml.indexOf(">", lt + 2);
    if (gt < 0) return -1;
    const name = xml.slice(lt + 2, gt).trimEnd();
    const open = this.elements.pop();
    if (name !== open)
      this.fail(
        lt,
        open === undefined
          ? `</${name}> with no element open`
          : `</${name}> where </${open}> was expected`,
      );
    this.handler.close(name);
    return gt + 1;
  }

  /** A start tag or a self-closing one, with its attributes. */
  private openingTag(xml: string, lt: number): number {
    const length = xml.length;
    let i = lt + 1;
    while (i < length && !endsName(xml.charCodeAt(i))) i++;
    if (i >= length) return -1;
    if (i === lt + 1) this.fail(lt, "a tag without a name");
    const nameEnd = i;
    this.attributes.reset(xml);
    for (;;) {
      while (i < length && isSpace(xml.charCodeAt(i))) i++;
      if (i >= length) return -1;
      const code = xml.charCodeAt(i);
      if (code === GREATER) return this.opened(this.name(xml, lt + 1, nameEnd), false, lt, i + 1);
      if (code === SLASH) {
        if (i + 1 >= length) return -1;
        if (xml.charCodeAt(i + 1) !== GREATER) this.fail(i, "'/' in a tag not followed by '>'");
        return this.opened(this.name(xml, lt + 1, nameEnd), true, lt, i + 2);
      }
      i = this.attribute(xml, i);
      if (i < 0) return -1;
    }
  }

  /** The attribute at `at` added to the tag's: answers where it ends, or -1 (not here). */
  private attribute(xml: string, at: number): number {
    const length = xml.length;
    let i = at;
    while (i < length && !endsName(xml.charCodeAt(i))) i++;
    const nameEnd = i;
    while (i < length && isSpace(xml.charCodeAt(i))) i++;
    if (i >= length) return -1;
    if (nameEnd === at || xml.charCodeAt(i) !== EQUALS)
      this.fail(at, "an attribute without a value");
    i++;
    while (i < length && isSpace(xml.charCodeAt(i))) i++;
    if (i >= length) return -1;
    const quote = xml.charCodeAt(i);
    if (quote !== DOUBLE_QUOTE && quote !== SINGLE_QUOTE)
      this.fail(i, "an attribute value not quoted");
    const close = xml.indexOf(quote === DOUBLE_QUOTE ? '"' : "'", i + 1);
    if (close < 0) return -1;
    if (!this.attributes.add(at, nameEnd, i + 1, close))
      this.fail(at, `the attribute ${xml.slice(at, nameEnd)} twice`);
    if (!isPlain(xml, i + 1, close))
      this.attributes.decodedLast(this.attributeValue(xml.slice(i + 1, close), i + 1));
    const after = close + 1;
    if (after < length && !isSpace(xml.charCodeAt(after))) {
      const code = xml.charCodeAt(after);
      if (code !== GREATER && code !== SLASH) this.fail(after, "no space between attributes");
    }
    return after;
  }

  /** An attribute's value as XML reads it: entities decoded, tabs and line ends as spaces. */
  private attributeValue(raw: string, at: number): string {
    if (raw.includes("<")) this.fail(at, "'<' in an attribute value");
    if (hasDisallowed(raw)) this.fail(at, "a character XML does not allow");
    const spaced = /[\t\n\r]/.test(raw) ? raw.replace(/\r\n|[\t\n\r]/g, " ") : raw;
    return spaced.includes("&") ? this.entities(spaced, at) : spaced;
  }

  /** The element name from `from` to `to`: one seen before when it is (up to 32 kept). */
  private name(xml: string, from: number, to: number): string {
    const { names } = this;
    for (let k = 0; k < names.length; k++) {
      const known = names[k]!;
      if (known.length === to - from && xml.startsWith(known, from)) return known;
    }
    const name = xml.slice(from, to);
    if (names.length < 32) names.push(name);
    return name;
  }

  private opened(name: string, selfClosing: boolean, lt: number, end: number): number {
    if (this.elements.length === 0 && this.sawRoot) this.fail(lt, "a second root element");
    this.sawRoot = true;
    this.handler.open(name, this.attributes);
    if (selfClosing) this.handler.close(name);
    else if (this.elements.push(name) > MAX_DEPTH) this.fail(lt, "elements nested too deep");
    return end;
  }

  private fail(at: number, message: string): never {
    throw new Error(`${this.part} is damaged at character ${this.base + at + 1}: ${message}`);
  }
}
