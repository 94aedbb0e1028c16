import { writeFile } from "node:fs/promises";
import { constants, crc32, deflateRawSync } from "node:zlib";

/** An entry of writeZip: its text, in parts each written `times` over (many MB from a few KB). */
export interface ZipEntry {
  name: string;
  parts: { text: string; times?: number }[];
  /** Written as the entry's uncompressed size in both headers instead of the real one. */
  statedSize?: number;
}

interface Packed {
  name: Buffer;
  data: Buffer;
  crc: number;
  size: number;
  statedSize: number;
}

/**
 * Deflated without holding `times` copies of a part: each part is compressed once, ending on a
 * full flush (no back-reference leaves it), so copies of its bytes inflate to copies of its
 * text; an empty final block ends the stream.
 */
function pack(entry: ZipEntry): Packed {
  const blocks: Buffer[] = [];
  let crc = 0;
  let size = 0;
  for (const part of entry.parts) {
    const text = Buffer.from(part.text);
    const block = deflateRawSync(text, { finishFlush: constants.Z_FULL_FLUSH, level: 9 });
    for (let i = 0; i < (part.times ?? 1); i++) {
      blocks.push(block);
      crc = crc32(text, crc);
      size += text.length;
    }
  }
  blocks.push(deflateRawSync(Buffer.alloc(0)));
  const data = Buffer.concat(blocks);
  return { name: Buffer.from(entry.name), data, crc, size, statedSize: entry.statedSize ?? size };
}

function header(p: Packed, central: boolean, offset: number): Buffer {
  const b = Buffer.alloc(central ? 46 : 30);
  let at = 0;
  const u32 = (v: number) => {
    b.writeUInt32LE(v >>> 0, at);
    at += 4;
  };
  const u16 = (v: number) => {
    b.writeUInt16LE(v, at);
    at += 2;
  };
  u32(central ? 0x02014b50 : 0x04034b50);
  if (central) u16(20);
  u16(20); // version needed
  u16(0); // flags
  u16(8); // deflate
  u16(0); // time
  u16(0x21); // date: 1980-01-01
  u32(p.crc);
  u32(p.data.length);
  u32(p.statedSize);
  u16(p.name.length);
  u16(0); // extra
  if (central) {
    u16(0); // comment
    u16(0); // disk
    u16(0); // internal attributes
    u32(0); // external attributes
    u32(offset);
  }
  return b;
}

/** Writes a zip of `entries`, deflated, with the sizes each states. */
export async function writeZip(path: string, entries: ZipEntry[]): Promise<string> {
  const packed = entries.map(pack);
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (const p of packed) {
    offsets.push(at);
    const local = header(p, false, 0);
    parts.push(local, p.name, p.data);
    at += local.length + p.name.length + p.data.length;
  }
  const start = at;
  for (const [i, p] of packed.entries()) {
    const central = header(p, true, offsets[i]!);
    parts.push(central, p.name);
    at += central.length + p.name.length;
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(packed.length, 8);
  end.writeUInt16LE(packed.length, 10);
  end.writeUInt32LE(at - start, 12);
  end.writeUInt32LE(start, 16);
  parts.push(end);
  await writeFile(path, Buffer.concat(parts));
  return path;
}

const TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
  '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>';

const RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>';

const WORKBOOK =
  '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">' +
  '<sheets><sheet name="Orders" sheetId="1" r:id="rId1"/></sheets></workbook>';

const WORKBOOK_RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>';

const SHEET_START =
  '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' +
  '<row r="1"><c r="A1" t="inlineStr"><is><t>email</t></is></c><c r="B1" t="inlineStr"><is><t>product_code</t></is></c>' +
  '<c r="C1" t="inlineStr"><is><t>face_value</t></is></c></row>';

/** 1 MB of blank rows: row 2 again and again, its one cell three spaces, 64 bytes a row. */
const FILLER = '<row r="2"><c r="A2" t="inlineStr"><is><t>   </t></is></c></row>'.repeat(16_384);

/**
 * A workbook of one sheet, "Orders", in Excel's order of parts, whose sheet unpacks to about
 * `mb` MB and a few hundred bytes (a header, then blank rows) from a few hundred KB: a decompression bomb. `statedMb`
 * has both headers state that size for the sheet instead of the real one (a crafted file).
 */
export function writeXlsxBomb(
  path: string,
  mb: number,
  options: { statedMb?: number } = {},
): Promise<string> {
  const sheet: ZipEntry = {
    name: "xl/worksheets/sheet1.xml",
    parts: [
      { text: SHEET_START },
      { text: FILLER, times: mb },
      { text: "</sheetData></worksheet>" },
    ],
    ...(options.statedMb === undefined ? {} : { statedSize: options.statedMb * 2 ** 20 }),
  };
  return writeWorkbookOf(path, sheet);
}

function writeWorkbookOf(path: string, sheet: ZipEntry): Promise<string> {
  return writeZip(path, [
    { name: "[Content_Types].xml", parts: [{ text: TYPES }] },
    { name: "_rels/.rels", parts: [{ text: RELS }] },
    { name: "xl/workbook.xml", parts: [{ text: WORKBOOK }] },
    { name: "xl/_rels/workbook.xml.rels", parts: [{ text: WORKBOOK_RELS }] },
    sheet,
  ]);
}

/** A workbook of one sheet, "Orders", whose XML is `xml` as given (damaged, say). */
export function writeXlsxSheet(path: string, xml: string): Promise<string> {
  return writeWorkbookOf(path, { name: "xl/worksheets/sheet1.xml", parts: [{ text: xml }] });
}
