import { describe, expect, it } from "vitest";
import { resolveHeader } from "../../../src/import/header/header.js";
import { headerReportLines } from "../../../src/import/header/header-report.js";
import { HEADER_SYNONYMS, synonymField } from "../../../src/import/header/header-synonyms.js";
import type { HeaderReport } from "../../../src/import/readers/csv-rows.js";
import { OrderFileError } from "../../../src/import/readers/order-file-error.js";
import { readAll } from "../../helpers/csv.js";

/** Each spelling a spreadsheet might use of `name`: case, spaces and punctuation changed. */
function spellings(name: string): string[] {
  return [name, name.toUpperCase(), name.toLowerCase(), ` ${name.replaceAll(" ", "_")} `];
}

async function read(text: string, options = {}) {
  const reports: HeaderReport[] = [];
  const items = await readAll(text, { ...options, onHeader: (h) => reports.push(h) });
  return { items, reports };
}

describe("header synonyms", () => {
  it("maps every name of the brief's table to its field, in any case and punctuation", () => {
    const expected: Record<string, string[]> = {
      email: ["Email Address", "E-mail", "Email", "Recipient Email", "Recipient E-mail"],
      face_value: ["Amount", "Value", "Face Value", "Denomination", "Betrag"],
      product_code: ["Product", "Product Code", "SKU", "Product ID"],
      reference: ["Reference", "External ID", "Employee ID", "Ref"],
      template_id: ["Template", "Template ID"],
      description: ["Description", "Note", "Message"],
      send_at: ["Send At", "Send Date", "Delivery Date", "Scheduled At", "Send On"],
      distribution: ["Distribution", "Distribution Method", "Delivery Method"],
      recipient_reference: ["Recipient Reference", "Recipient Ref", "Recipient ID"],
      product_codes: ["Product Codes", "Products", "Product Choice"],
      selection_template_id: ["Selection Template", "Selection Template ID", "Payout Template"],
      currency: ["Currency", "Currency Code"],
    };
    expect(HEADER_SYNONYMS).toEqual(expected);
    for (const [field, names] of Object.entries(expected)) {
      for (const name of names) {
        for (const spelling of spellings(name))
          expect(synonymField(spelling), spelling).toBe(field);
      }
    }
    expect(synonymField("E.Mail")).toBe("email");
    expect(synonymField("product-code")).toBe("product_code");
    expect(synonymField("First Name")).toBeUndefined();
    expect(synonymField("Emails")).toBeUndefined();
  });

  it("imports Email Address,Product Code,Amount as email, product_code, face_value", async () => {
    const { items, reports } = await read("Email Address,Product Code,Amount\na@b.co, X ,1\n");
    expect(items).toEqual([
      {
        kind: "row",
        line: 2,
        fields: { email: "a@b.co", product_code: "X", face_value: "1" },
        cells: ["a@b.co", " X ", "1"],
      },
    ]);
    expect(reports).toEqual([
      {
        line: 1,
        names: ["Email Address", "Product Code", "Amount"],
        renamed: [
          { source: "Email Address", field: "email", by: "synonym" },
          { source: "Product Code", field: "product_code", by: "synonym" },
          { source: "Amount", field: "face_value", by: "synonym" },
        ],
        ignored: [],
        skipped: [],
        by: "search",
      },
    ]);
    expect(headerReportLines(reports[0]!)).toEqual([
      'columns: "Email Address" -> email, "Product Code" -> product_code, "Amount" -> face_value',
    ]);
  });

  it("reports nothing when every header is already a field name", async () => {
    const { reports } = await read(" Email ,PRODUCT_CODE,face_value\na@b.co,X,1\n");
    expect(reports).toEqual([
      {
        line: 1,
        names: [" Email ", "PRODUCT_CODE", "face_value"],
        renamed: [],
        ignored: [],
        skipped: [],
        by: "search",
      },
    ]);
    expect(headerReportLines(reports[0]!)).toEqual([]);
  });

  it("keeps columns that map to nothing out of the fields and names them in one line", async () => {
    const text =
      "First Name,E-mail,SKU,Value,Department,,metadata.Team\nJane,a@b.co,X,1,Sales,z,red\n";
    const { items, reports } = await read(text);
    expect(items).toEqual([
      {
        kind: "row",
        line: 2,
        fields: { email: "a@b.co", product_code: "X", face_value: "1", "metadata.Team": "red" },
        ignored: { "First Name": "Jane", Department: "Sales", "column 6": "z" },
        cells: ["Jane", "a@b.co", "X", "1", "Sales", "z", "red"],
      },
    ]);
    expect(reports[0]?.ignored).toEqual([
      { index: 0, name: "First Name" },
      { index: 4, name: "Department" },
      { index: 5, name: "" },
    ]);
    const lines = headerReportLines(reports[0]!);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(
      /^ignored columns: "First Name", "Department", column 6 \(no name\) \(not sent; .*--strict-columns\)$/,
    );
  });

  it("strictColumns refuses the same file, naming each unknown column", async () => {
    const error = await readAll("First Name,Email,SKU,Amount,Department\n", {
      strictColumns: true,
    }).catch((e) => e);
    expect(error).toBeInstanceOf(OrderFileError);
    expect((error as OrderFileError).errors.map((e) => e.column)).toEqual([
      "First Name",
      "Department",
    ]);
  });

  it("--map wins over the table, and its renames are reported as such", () => {
    const resolved = resolveHeader(["Email Address", "E-mail", "SKU", "Amount"], {
      map: { "Email Address": "reference" },
    });
    expect(resolved).toEqual({
      ok: true,
      fields: ["reference", "email", "product_code", "face_value"],
      renamed: [
        { source: "Email Address", field: "reference", by: "map" },
        { source: "E-mail", field: "email", by: "synonym" },
        { source: "SKU", field: "product_code", by: "synonym" },
        { source: "Amount", field: "face_value", by: "synonym" },
      ],
      ignored: [],
    });
  });

  it("a --map to no field and a metadata column without a key stay errors", () => {
    const bad = resolveHeader(["email", "SKU", "Amount", "Notes", "metadata."], {
      map: { Notes: "notes" },
    });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.errors.map((e) => e.column)).toEqual(["Notes", "metadata."]);
  });

  it("two headers for one field are a duplicate, naming both", () => {
    const resolved = resolveHeader(["Email", "Recipient Email", "SKU", "Amount"]);
    expect(resolved).toEqual({
      ok: false,
      errors: [
        {
          line: 1,
          column: "email",
          message: 'duplicate column email (columns "Email" and "Recipient Email")',
        },
      ],
    });
  });
});
