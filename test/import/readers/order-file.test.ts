import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { orderFileKind } from "../../../src/import/readers/order-file.js";

const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x08, 0x00]);
const EMPTY_ZIP = Buffer.from([0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0]);
/** A zip whose first entry is an OpenDocument `mimetype`, stored as the format asks, or deflated. */
function odf(kind: string, deflated = false): Buffer {
  const text = Buffer.from(`application/vnd.oasis.opendocument.${kind}`, "latin1");
  const data = deflated ? deflateRawSync(text) : text;
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(deflated ? 8 : 0, 8);
  header.writeUInt32LE(data.length, 18);
  header.writeUInt32LE(text.length, 22);
  header.writeUInt16LE(8, 26);
  return Buffer.concat([header, Buffer.from("mimetype"), data]);
}
const XLS = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const text = (s: string) => Buffer.from(s, "utf8");
const CSV = text("email,product_code,face_value\na@example.com,AMZ-US,25\n");
const TSV = text("email\tproduct_code\tface_value\na@example.com\tAMZ-US\t25\n");
const COMMA = { type: "text", delimiter: "," };
const TAB = { type: "text", delimiter: "\t" };

describe("orderFileKind: by content first, by name second", () => {
  it.each([
    ["orders.xlsx", ZIP],
    ["orders.csv", ZIP],
    ["orders.tsv", ZIP],
    ["orders.txt", ZIP],
    ["orders", ZIP],
    ["ORDERS.XLSX", EMPTY_ZIP],
  ])("%s holding a zip is an .xlsx workbook", (name, sample) => {
    expect(orderFileKind(name, sample)).toEqual({ type: "xlsx" });
  });

  it.each([
    ["orders.csv", CSV, COMMA],
    ["orders.txt", CSV, COMMA],
    ["orders.tsv", CSV, COMMA],
    ["orders.xlsx", CSV, COMMA],
    ["orders", CSV, COMMA],
    ["orders.tsv", TSV, TAB],
    ["orders.csv", TSV, TAB],
    ["orders.txt", TSV, TAB],
    ["orders.xlsx", TSV, TAB],
    // A BOM and blank lines before the header, CRLF line ends.
    ["orders.txt", text("\ufeff\r\n\r\nemail\tproduct_code\tnote, free text\r\n"), TAB],
    // One column: no delimiter to count, the name decides.
    ["orders.tsv", text("email\na@example.com\n"), TAB],
    ["orders.csv", text("email\na@example.com\n"), COMMA],
  ])("%s holding %j is %j", (name, sample, kind) => {
    expect(orderFileKind(name, sample)).toEqual(kind);
  });

  it("an explicit delimiter wins for text, and is refused for a workbook", () => {
    expect(orderFileKind("orders.csv", text("a;b;c\n"), { delimiter: ";" })).toEqual({
      type: "text",
      delimiter: ";",
    });
    expect(orderFileKind("orders.xlsx", text("a;b;c\n"), { delimiter: ";" })).toEqual({
      type: "text",
      delimiter: ";",
    });
    expect(() => orderFileKind("orders.csv", ZIP, { delimiter: ";" })).toThrow(
      "orders.csv is an .xlsx workbook: --delimiter is for CSV files",
    );
  });

  it("refuses what is neither, in one line saying what it is", () => {
    expect(() => orderFileKind("orders.xlsx", text("%PDF-1.4 not a workbook\n"))).toThrow(
      "orders.xlsx is not a spreadsheet: an .xlsx file is a zip archive and this one is not (a renamed file?)",
    );
    expect(() => orderFileKind("orders.xlsx", Buffer.from([1, 0, 2, 44, 9]))).toThrow(
      /orders.xlsx is not a spreadsheet/,
    );
    expect(() => orderFileKind("orders.csv", XLS)).toThrow(/an old .xls workbook\?/);
    expect(() => orderFileKind("orders.csv", Buffer.from([0x65, 0, 0x2c, 0x66]))).toThrow(
      "orders.csv is not a text, .xlsx or .ods file: it holds binary data",
    );
  });
});

describe("OpenDocument and empty workbooks", () => {
  it("a zip whose mimetype says spreadsheet is .ods whatever its name; a zip named .ods is too", () => {
    expect(orderFileKind("orders.xlsx", odf("spreadsheet"))).toEqual({ type: "ods" });
    expect(orderFileKind("orders", odf("spreadsheet"))).toEqual({ type: "ods" });
    expect(orderFileKind("/dev/fd/63", odf("spreadsheet", true))).toEqual({ type: "ods" });
    expect(orderFileKind("orders.ods", ZIP)).toEqual({ type: "ods" });
    expect(() => orderFileKind("orders.ods", odf("spreadsheet"), { delimiter: ";" })).toThrow(
      "orders.ods is an .ods workbook: --delimiter is for CSV files",
    );
  });

  it("another OpenDocument file is refused, naming what it is", () => {
    expect(() => orderFileKind("letter.ods", odf("text"))).toThrow(
      "letter.ods is an OpenDocument file but not a spreadsheet (text): save it as .ods, .xlsx or CSV",
    );
  });

  it.each(["orders.xlsx", "orders.ods", "orders.xlsm"])("%s of 0 bytes is called empty", (name) => {
    expect(() => orderFileKind(name, Buffer.alloc(0))).toThrow(
      `${name} is empty (0 bytes): there is no workbook in it`,
    );
  });

  it("an .ods that is not a zip is refused as a renamed file", () => {
    expect(() => orderFileKind("orders.ods", text("%PDF-1.4\n"))).toThrow(
      "orders.ods is not a spreadsheet: an .ods file is a zip archive and this one is not (a renamed file?)",
    );
  });
});

describe("UTF-16 text with a BOM (Excel's Unicode Text)", () => {
  const utf16le = (s: string) =>
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, "utf16le")]);
  const TEXT = "Email Address\tProduct Code\tAmount\r\na@example.com\tAMZ-US\t25\r\n";

  it("is read as text in its encoding, its delimiter found in its decoded first line", () => {
    expect(orderFileKind("unicode.txt", utf16le(TEXT))).toEqual({ ...TAB, encoding: "utf-16le" });
    expect(orderFileKind("unicode.txt", utf16le(TEXT).swap16())).toEqual({
      ...TAB,
      encoding: "utf-16be",
    });
    expect(orderFileKind("orders.csv", utf16le("email,product_code\r\n"))).toEqual({
      ...COMMA,
      encoding: "utf-16le",
    });
  });

  it("holding a NUL character, it is binary data, refused as such", () => {
    expect(() => orderFileKind("orders.csv", utf16le("a\u0000b,c"))).toThrow(
      "orders.csv is not a text, .xlsx or .ods file: it holds binary data",
    );
  });
});
