import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OrderFileError } from "../../../src/import/readers/order-file-error.js";
import { readAll, streamOf } from "../../helpers/csv.js";
import { readOrderRows } from "../../helpers/read-items.js";

const HEADER = "email,product_code,face_value";

function rowsOf(items: Awaited<ReturnType<typeof readAll>>) {
  return items.map((item) => (item.kind === "row" ? { line: item.line, ...item.fields } : item));
}

async function headerErrors(text: string, options = {}) {
  try {
    await readAll(text, options);
  } catch (error) {
    expect(error).toBeInstanceOf(OrderFileError);
    return (error as OrderFileError).errors;
  }
  throw new Error("expected a header error");
}

describe("readOrderRows", () => {
  const dir = mkdtempSync(join(tmpdir(), "giftjobs-csv-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a plain LF file and trims email, product_code and face_value only", async () => {
    const items = await readAll(
      `${HEADER},description\n a@b.co , X1 , 10.50 ,  keep spaces \nc@d.co,X2,5,\n`,
    );
    expect(rowsOf(items)).toEqual([
      {
        line: 2,
        email: "a@b.co",
        product_code: "X1",
        face_value: "10.50",
        description: "  keep spaces ",
      },
      { line: 3, email: "c@d.co", product_code: "X2", face_value: "5", description: "" },
    ]);
  });

  for (const chunk of [1, 3, 64 * 1024]) {
    it(`gives start lines of multi-line records, LF and CRLF, BOM (chunks of ${chunk})`, async () => {
      const lf =
        `\ufeff${HEADER},description\n` +
        "a@b.co,X1,1,one\n" + // 2
        "\n" + // 3 blank
        'a@b.co,X1,2,"multi\nline\n""quoted"", text"\n' + // 4-6
        "a@b.co,X1,3,after\n" + // 7
        "\n\n" + // 8, 9
        'a@b.co,X1,4,"x\n\ny"\n' + // 10-12
        "a@b.co,X1,5,last"; // 13, no final newline
      for (const text of [lf, lf.replace(/\n/g, "\r\n")]) {
        const items = await readAll(text, {}, chunk);
        const lines = items.map((item) => item.line);
        expect(lines).toEqual([2, 4, 7, 10, 13]);
        const second = items[1];
        expect(second?.kind === "row" && second.fields.description).toBe(
          text.includes("\r\n") ? 'multi\r\nline\r\n"quoted", text' : 'multi\nline\n"quoted", text',
        );
      }
    });
  }

  it("reads ';' files with quoted delimiters and a header after blank lines", async () => {
    const text = `\n\nemail;product_code;face_value;description\n"a@b.co";X1;"7";"a; b, c"\n`;
    const items = await readAll(text, { delimiter: ";" });
    expect(rowsOf(items)).toEqual([
      { line: 4, email: "a@b.co", product_code: "X1", face_value: "7", description: "a; b, c" },
    ]);
  });

  it("skips blank lines and rows of empty cells", async () => {
    const items = await readAll(`${HEADER}\n\n,,\n  \na@b.co,X,1\n`);
    expect(items.map((i) => i.line)).toEqual([5]);
  });

  it("reports rows with too many or too few fields and reads on", async () => {
    const items = await readAll(`${HEADER}\na@b.co,X,1,extra\n"a\nb",X\na@b.co,X,2\n`);
    expect(items).toEqual([
      {
        kind: "error",
        line: 2,
        error: { line: 2, column: "", message: "row has 4 fields, header has 3" },
        cells: ["a@b.co", "X", "1", "extra"],
      },
      {
        kind: "error",
        line: 3,
        error: { line: 3, column: "", message: "row has 2 fields, header has 3" },
        cells: ["a\nb", "X"],
      },
      {
        kind: "row",
        line: 5,
        fields: { email: "a@b.co", product_code: "X", face_value: "2" },
        cells: ["a@b.co", "X", "2"],
      },
    ]);
  });

  it("renames headers with --map before checking them, metadata columns included", async () => {
    const text = "Email Address,SKU,Amount,metadata.CostCenter\na@b.co,X,1,42\n";
    const items = await readAll(text, {
      map: { "Email Address": "email", SKU: "product_code", Amount: "face_value" },
    });
    expect(rowsOf(items)).toEqual([
      { line: 2, email: "a@b.co", product_code: "X", face_value: "1", "metadata.CostCenter": "42" },
    ]);
  });

  it("matches known headers case- and space-insensitively", async () => {
    const items = await readAll(" Email ,PRODUCT_CODE,Face_Value\na@b.co,X,1\n");
    expect(rowsOf(items)).toEqual([
      { line: 2, email: "a@b.co", product_code: "X", face_value: "1" },
    ]);
  });

  it("with strictColumns refuses unknown, duplicate and missing headers, naming line and column", async () => {
    const errors = await headerErrors("email,Colour,face_value,email,metadata.\nx\n", {
      strictColumns: true,
    });
    expect(errors).toEqual([
      {
        line: 1,
        column: "Colour",
        message: expect.stringMatching(/^unknown column "Colour".*--map/),
      },
      { line: 1, column: "email", message: "duplicate column email" },
      {
        line: 1,
        column: "metadata.",
        message: expect.stringMatching(/^unknown column "metadata\."/),
      },
      {
        line: 1,
        column: "product_code",
        message:
          'missing required column product_code; the file\'s headers: "email", "Colour", "face_value", "email", "metadata."; name its column with --map \'Header=product_code\'',
      },
    ]);
  });

  it("names a duplicate created by --map", async () => {
    const errors = await headerErrors("email,Mail,product_code,face_value\n", {
      map: { Mail: "email" },
    });
    expect(errors).toEqual([
      { line: 1, column: "email", message: 'duplicate column email (columns "email" and "Mail")' },
    ]);
  });

  it("hints at --delimiter when a ';' file is read with ','", async () => {
    const errors = await headerErrors("email;product_code;face_value\na;b;c\n");
    expect(errors[0]?.message).toMatch(/--delimiter ';'/);
  });

  it("refuses an empty file and a header with a blank line before it", async () => {
    await expect(readAll("")).rejects.toThrow(/no header row/);
    const errors = await headerErrors("\nemail,product_code\n");
    expect(errors).toEqual([
      {
        line: 2,
        column: "face_value",
        message: `missing required column face_value; the file's headers: "email", "product_code"`,
      },
    ]);
  });

  it("stops with a file error naming the line of a quote that never closes", async () => {
    const error = await readAll(`${HEADER}\na@b.co,X,1\n\na@b.co,"X,1\nmore\n`).catch((e) => e);
    expect(error).toBeInstanceOf(OrderFileError);
    expect(error.errors[0]).toMatchObject({
      line: 4,
      message: expect.stringMatching(/never closed/),
    });
  });

  it("keeps stray quotes inside unquoted cells", async () => {
    const items = await readAll(`${HEADER},description\na@b.co,X,1,5" screen\n`);
    expect(items[0]?.kind === "row" && items[0].fields.description).toBe('5" screen');
  });

  it("refuses a bad delimiter", async () => {
    await expect(readAll(HEADER, { delimiter: ",," })).rejects.toThrow(/--delimiter/);
  });

  it("reads a file by path, and names a missing one", async () => {
    const path = join(dir, "orders.csv");
    writeFileSync(path, `\ufeff${HEADER}\r\na@b.co,X,1\r\n`);
    const lines: number[] = [];
    for await (const item of readOrderRows(path)) lines.push(item.line);
    expect(lines).toEqual([2]);
    const missing = join(dir, "nope.csv");
    const consume = async () => {
      for await (const _ of readOrderRows(missing)) {
      }
    };
    await expect(consume()).rejects.toThrow(/cannot read .*nope\.csv/);
  });

  it("stops reading when the consumer stops", async () => {
    const source = streamOf(`${HEADER}\n${"a@b.co,X,1\n".repeat(1000)}`, 64);
    for await (const item of readOrderRows(source)) {
      expect(item.line).toBe(2);
      break;
    }
  });
});
