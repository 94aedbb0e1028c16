import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { largeRows } from "./csv.js";
import { writeZip } from "./zip-bomb.js";

const NAMESPACES =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ' +
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ' +
  'xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0"';

/** The start of an .ods file's content.xml, with a hidden table style `hidden`, up to its tables. */
export const CONTENT_START =
  `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${NAMESPACES} office:version="1.3">` +
  '<office:automatic-styles><style:style style:name="hidden" style:family="table">' +
  '<style:table-properties table:display="false"/></style:style></office:automatic-styles>' +
  "<office:body><office:spreadsheet>";
export const CONTENT_END = "</office:spreadsheet></office:body></office:document-content>";

/** A string cell, as LibreOffice writes it. */
export function cell(text: string, attributes = ""): string {
  const escaped = text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  return `<table:table-cell office:value-type="string" ${attributes}><text:p>${escaped}</text:p></table:table-cell>`;
}

/** A number cell. */
export function num(value: string, attributes = ""): string {
  return `<table:table-cell office:value-type="float" office:value="${value}" ${attributes}><text:p>${value}</text:p></table:table-cell>`;
}

/** A row of cells, given as XML or as text (string cells). */
export function row(cells: string[], attributes = ""): string {
  const xml = cells.map((c) => (c.startsWith("<") ? c : cell(c))).join("");
  return `<table:table-row ${attributes}>${xml}</table:table-row>`;
}

export function table(name: string, rows: string[], attributes = ""): string {
  return `<table:table table:name="${name}" ${attributes}>${rows.join("")}</table:table>`;
}

/**
 * Writes an .ods file: its mimetype, a manifest and content.xml from `parts` (each part's text
 * written `times` over: a large sheet from a few KB); `statedSize`, content.xml's size as the zip
 * states it instead of the real one.
 */
export function writeOds(
  path: string,
  parts: { text: string; times?: number }[],
  statedSize?: number,
): Promise<string> {
  return writeZip(path, [
    { name: "mimetype", parts: [{ text: "application/vnd.oasis.opendocument.spreadsheet" }] },
    { name: "content.xml", parts, statedSize },
    {
      name: "META-INF/manifest.xml",
      parts: [
        {
          text: '<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>',
        },
      ],
    },
  ]);
}

/** An .ods file of these tables. */
export function odsFile(path: string, tables: string[]): Promise<string> {
  return writeOds(path, [{ text: CONTENT_START + tables.join("") + CONTENT_END }]);
}

/** A row as LibreOffice saves it: typed cells, the rest of the row's columns one repeated empty cell. */
function savedRow(cells: string[]): string {
  const tail = `<table:table-cell table:number-columns-repeated="${16_384 - cells.length}"/>`;
  return `<table:table-row table:style-name="ro1">${cells.join("")}${tail}</table:table-row>`;
}

const typed = (text: string) =>
  `<table:table-cell office:value-type="string" calcext:value-type="string"><text:p>${text}</text:p></table:table-cell>`;
const float = (value: string) =>
  `<table:table-cell office:value-type="float" office:value="${value}" calcext:value-type="float"><text:p>${value}</text:p></table:table-cell>`;

/**
 * The rows of writeLargeXlsx as an .ods (face values as numbers), a thousand rows to a
 * compressed part: for the import bench.
 */
export async function writeLargeOds(
  index: CatalogIndex,
  path: string,
  rows: number,
  options: { products?: number; referencePrefix?: string } = {},
): Promise<void> {
  const parts = [
    {
      text: `${CONTENT_START}<table:table table:name="Orders">${savedRow(["email", "product_code", "face_value", "reference"].map(typed))}`,
    },
  ];
  let chunk = "";
  let inChunk = 0;
  for (const r of largeRows(index, rows, options)) {
    chunk += savedRow([
      typed(r.email),
      typed(r.code),
      float(String(Number(r.face))),
      typed(r.reference),
    ]);
    if (++inChunk < 1000) continue;
    parts.push({ text: chunk });
    chunk = "";
    inChunk = 0;
  }
  parts.push({ text: `${chunk}</table:table>${CONTENT_END}` });
  await writeOds(path, parts);
}
