// The worksheet XML tokenizer (src/import/readers/sheet-xml.ts): what it tells of the XML a
// sheet may be written in, whatever the chunks, and what it refuses.
import { describe, expect, it } from "vitest";
import { SheetXml, type XmlAttributes } from "../../../src/import/readers/sheet-xml.js";

/** The attributes a test asks for, in this order, of every element. */
const ASKED = ["r", "s", "t", "r:id", "xml:space", "x"];

/** The events of `xml` cut into chunks of `chunk` characters, texts joined, as lines. */
function events(xml: string, chunk: number): string[] {
  const seen: string[] = [];
  let text = "";
  const flush = () => {
    if (text !== "") seen.push(`text ${JSON.stringify(text)}`);
    text = "";
  };
  const tokenizer = new SheetXml({
    open(name: string, attributes: XmlAttributes) {
      flush();
      const asked = ASKED.filter((a) => attributes.get(a) !== undefined);
      seen.push(
        `<${[name, ...asked.map((a) => `${a}=${JSON.stringify(attributes.get(a))}`)].join(" ")}>`,
      );
    },
    text(value: string) {
      text += value;
    },
    close(name: string) {
      flush();
      seen.push(`</${name}>`);
    },
  });
  for (let i = 0; i < xml.length; i += chunk) tokenizer.write(xml.slice(i, i + chunk));
  flush();
  return seen;
}

/** The same events whatever the chunks: cut at every size from 1 to 12, and whole. */
function eventsAnyChunks(xml: string): string[] {
  const whole = events(xml, xml.length);
  for (let chunk = 1; chunk <= 12; chunk++) expect(events(xml, chunk)).toEqual(whole);
  return whole;
}

describe("SheetXml", () => {
  it("decodes the five entities and character references, one cut anywhere", () => {
    const xml = "<v>a &lt;&gt;&amp;&apos;&quot; &#10;&#x41;&#X42;&#128512;</v>";
    expect(() => events("<v>&#X42;</v>", 100)).toThrow(/unknown entity &#X42;/);
    expect(eventsAnyChunks(xml.replace("&#X42;", ""))).toEqual([
      "<v>",
      `text ${JSON.stringify("a <>&'\" \nA😀")}`,
      "</v>",
    ]);
  });

  it("reads attributes in either quote, in any order, prefixed, with entities and white space", () => {
    const xml = `<?xml version="1.0"?><x:c t='s' x = "a&amp;b" r="A1" r:id='q"&#9;\r\nz' xml:space="preserve"/>`;
    expect(eventsAnyChunks(xml)).toEqual([
      `<x:c r="A1" t="s" r:id="q\\"\\t z" xml:space="preserve" x="a&b">`,
      "</x:c>",
    ]);
  });

  it("takes CDATA as text, skips comments and instructions, reads CRLF and CR as LF", () => {
    const xml =
      "<!-- before --><sheet><!-- <c r='Z9'> --><?pi <v>?><t><![CDATA[a<b]]&]]>\r\nc\rd</t>" +
      "<t><![CDATA[x\r\ny]]></t><t></t></sheet><!-- after -->";
    expect(eventsAnyChunks(xml)).toEqual([
      "<sheet>",
      "<t>",
      `text ${JSON.stringify("a<b]]&\nc\nd")}`,
      "</t>",
      "<t>",
      `text ${JSON.stringify("x\ny")}`,
      "</t>",
      "<t>",
      "</t>",
      "</sheet>",
    ]);
  });

  it("allows white space in closing tags and between attributes, and after the root", () => {
    expect(eventsAnyChunks('<a\n r="1"\t><b\n/></a >\n')).toEqual([
      '<a r="1">',
      "<b>",
      "</b>",
      "</a>",
    ]);
  });

  it.each([
    ["<a><b></a>", /character 7: <\/a> where <\/b> was expected/],
    ["<a></a></b>", /<\/b> with no element open/],
    ["<a>&nbsp;</a>", /unknown entity &nbsp;/],
    ["<a>&#0;</a>", /unknown entity &#0;/],
    ["<a>a & b</a>", /entity without its ';'/],
    ["<a r=1/>", /not quoted/],
    ['<a r="1"r="2"/>', /no space between attributes/],
    ['<a r="1" r="2"/>', /the attribute r twice/],
    ["<a r/>", /attribute without a value/],
    ['<a r="<"/>', /'<' in an attribute value/],
    ["<!DOCTYPE a><a/>", /DOCTYPE/],
    ["x<a/>", /text outside the root element/],
    ["<a/><b/>", /a second root element/],
    ["<a>\u0001</a>", /a character XML does not allow/],
    ["<a/ >", /'\/' in a tag not followed by '>'/],
    ["< a/>", /a tag without a name/],
    ["<a>".repeat(1001), /elements nested too deep/],
  ])("refuses %j, saying where", (xml, message) => {
    for (const chunk of [1, 3, xml.length]) {
      expect(() => events(xml, chunk)).toThrow(/^the sheet's XML is damaged at character \d+: /);
      expect(() => events(xml, chunk)).toThrow(message);
    }
  });

  it("holds no more than a megabyte of one unfinished tag or entity", () => {
    const tokenizer = new SheetXml({ open() {}, text() {}, close() {} });
    tokenizer.write('<a><b r="');
    const value = "x".repeat(64 * 1024);
    expect(() => {
      for (let i = 0; i < 20; i++) tokenizer.write(value);
    }).toThrow(/markup longer than 1 MB/);
  });
});
