import { describe, expect, it } from "vitest";
import { ReferenceTracker } from "../../../src/import/validation/reference-tracker.js";
import { validateRow } from "../../../src/import/validation/row-validation.js";
import { INVISIBLE } from "../../../src/orders/quoted.js";
import { readAll } from "../../helpers/csv.js";

const BASE = { email: "jane@example.com", product_code: "AMZ-US", face_value: "25" };

function errorsOf(fields: Record<string, string>, line = 2) {
  const result = validateRow({ line, fields: { ...BASE, ...fields } });
  return result.ok ? [] : result.errors;
}

describe("validateRow", () => {
  it("reads a decimal comma only when told, and never guesses at a '.' beside it", () => {
    let told = 0;
    const comma = { decimalComma: true, onDecimalComma: () => told++ };
    const read = validateRow({ line: 2, fields: { ...BASE, face_value: "25,50" } }, comma);
    expect(read).toMatchObject({ ok: true, row: { face_value: "25.50" } });
    expect(told).toBe(1);
    // Whole numbers need no mark; a '.' is a thousands separator in such files: refused.
    expect(validateRow({ line: 2, fields: BASE }, comma)).toMatchObject({ ok: true });
    for (const value of ["1.000,00", "25.50", "25,5,0", "-25,50", "€25,50"]) {
      const result = validateRow({ line: 3, fields: { ...BASE, face_value: value } }, comma);
      expect(result.ok, value).toBe(false);
    }
    // Assumed (a ';' file): both marks read, never both in one value.
    const either = { decimalComma: "either" as const };
    for (const [value, read] of [
      ["25,50", "25.50"],
      ["25.50", "25.50"],
      ["25", "25"],
    ] as const) {
      const result = validateRow({ line: 2, fields: { ...BASE, face_value: value } }, either);
      expect(result).toMatchObject({ ok: true, row: { face_value: read } });
    }
    const both = validateRow({ line: 2, fields: { ...BASE, face_value: "1.000,00" } }, either);
    expect(both.ok).toBe(false);
    // Without the option a comma value is refused, and the message names the option.
    expect(errorsOf({ face_value: "25,50" })).toEqual([
      {
        line: 2,
        column: "face_value",
        message: `face_value "25,50" has ',' as its decimal mark: pass --decimal-comma to read it as 25.50`,
      },
    ]);
  });

  it("accepts a good row and applies the default template", () => {
    const result = validateRow(
      {
        line: 4,
        fields: {
          ...BASE,
          description: "Thanks!",
          reference: " R1 ",
          "metadata.team": "ops",
          "metadata.empty": "",
        },
      },
      { defaultTemplateId: "T-DEFAULT" },
    );
    expect(result).toEqual({
      ok: true,
      row: {
        line: 4,
        ...BASE,
        template_id: "T-DEFAULT",
        template_source: "default",
        description: "Thanks!",
        reference: "R1",
        metadata: { team: "ops" },
      },
    });
  });

  it("prefers the row's template, and has none without a default", () => {
    const own = validateRow(
      { line: 2, fields: { ...BASE, template_id: " T-ROW " } },
      { defaultTemplateId: "T" },
    );
    expect(own.ok && [own.row.template_id, own.row.template_source]).toEqual(["T-ROW", "row"]);
    const none = validateRow({ line: 2, fields: BASE });
    expect(none.ok && [none.row.template_id, none.row.template_source]).toEqual([
      undefined,
      "none",
    ]);
  });

  it("takes only the e-mail addresses the service takes, and echoes hostile ones harmlessly", () => {
    const cases: [string, RegExp][] = [
      ["josé@example.com", /"é": the service takes e-mail addresses in ASCII only/],
      ["ÄÖÜ@example.com", /ASCII only/],
      ["jane@bücher.example", /ASCII only/],
      ["jane@example.com\u200b", /invisible or control character \(U\+200B\)/],
      ["\u202Ejane@example.com", /invisible or control character \(U\+202E\)/],
      ["jane\u0000@example.com", /invisible or control character \(U\+0000\)/],
      ["jane\uD800@example.com", /invisible or control character \(U\+D800\)/],
      ["jane_(work)@example.com", /is not a valid e-mail address/],
      // Past `~` but ASCII (DEL), and below the space (a tab): controls all the same.
      ["jane\u007f@example.com", /invisible or control character \(U\+007F\)/],
      ["jane\t@example.com", /invisible or control character \(U\+0009\)/],
      // 255 characters, and 254 that are 259 UTF-16 units: the limit counts characters.
      [`${"a".repeat(243)}@example.com`, /longer than 254 characters/],
      [`${"\u{1F600}".repeat(127)}@a.io`, /ASCII only/],
    ];
    for (const [email, reason] of cases) {
      const [error] = errorsOf({ email });
      expect(error?.message, email).toMatch(reason);
      // Nothing invisible reaches the terminal: it is written as \u{...}.
      expect(error!.message).not.toMatch(INVISIBLE);
    }
    expect(errorsOf({ email: "jane@example.com\u200b" })[0]!.message).toContain(
      '"jane@example.com\\u{200b}"',
    );
    // An echo is cut to a readable length.
    const [long] = errorsOf({ email: `${"x".repeat(5000)}\u200b@example.com` });
    expect(long!.message.length).toBeLessThan(200);
    expect(errorsOf({ email: "jane@xn--bcher-kva.example" })).toEqual([]);
  });

  it("checks e-mail syntax", () => {
    for (const ok of ["a@b.co", "first.last+tag@sub.example.org", "O'Brien@example.ie"]) {
      expect(errorsOf({ email: ok })).toEqual([]);
    }
    for (const bad of [
      "",
      "a",
      "a@b",
      "a@@b.co",
      "a b@c.co",
      "a@b.co,c@d.co",
      "a@.co",
      "a@b.",
      "@b.co",
      "a@b..co",
    ]) {
      const errors = errorsOf({ email: bad });
      expect(errors, bad).toHaveLength(1);
      expect(errors[0]).toMatchObject({ line: 2, column: "email" });
    }
  });

  it("requires product_code", () => {
    expect(errorsOf({ product_code: "" })).toEqual([
      {
        line: 2,
        column: "product_code",
        message: "product_code is required (or product_codes, or selection_template_id)",
      },
    ]);
  });

  it("accepts only plain positive decimals as face_value", () => {
    for (const ok of ["1", "10.5", "10.50", "0.01", "1000000"])
      expect(errorsOf({ face_value: ok })).toEqual([]);
    for (const bad of [
      "1e3",
      "$10",
      "1,000",
      "1 000",
      "NaN",
      "-5",
      "0",
      "0.00",
      "",
      "10.",
      ".5",
      "Infinity",
      "10 USD",
    ]) {
      const errors = errorsOf({ face_value: bad });
      expect(errors, bad).toHaveLength(1);
      expect(errors[0]).toMatchObject({ line: 2, column: "face_value" });
    }
    expect(errorsOf({ face_value: "0" })[0]?.message).toMatch(/more than zero/);
  });

  it("refuses a face value the service's JSON number would round, naming it", () => {
    expect(errorsOf({ face_value: "123456789012345678.5" })).toEqual([
      {
        line: 2,
        column: "face_value",
        message:
          "face_value 123456789012345678.5 has more digits than the service's JSON number keeps: it would be sent rounded",
      },
    ]);
    expect(errorsOf({ face_value: "1000000.50" })).toEqual([]);
  });

  it("limits description to 128 characters, counting characters not UTF-16 units", () => {
    expect(errorsOf({ description: "é".repeat(128) })).toEqual([]);
    expect(errorsOf({ description: "🎁".repeat(128) })).toEqual([]);
    expect(errorsOf({ description: "x".repeat(129) })).toEqual([
      {
        line: 2,
        column: "description",
        message: "description is 129 characters, at most 128 allowed",
      },
    ]);
  });

  it("limits metadata to 20 non-empty keys of 40 characters and values of 200", () => {
    const twenty: Record<string, string> = {};
    for (let i = 0; i < 25; i++) twenty[`metadata.k${i}`] = i < 20 ? "v" : "";
    expect(errorsOf(twenty)).toEqual([]);
    expect(errorsOf({ ...twenty, "metadata.k24": "v" })).toEqual([
      {
        line: 2,
        column: "metadata",
        message: "row has 21 non-empty metadata cells, at most 20 allowed",
      },
    ]);
    const longKey = `metadata.${"k".repeat(41)}`;
    expect(errorsOf({ [longKey]: "v" })[0]).toMatchObject({
      column: longKey,
      message: expect.stringMatching(/longer than 40/),
    });
    expect(errorsOf({ [longKey]: "" })).toEqual([]);
    expect(errorsOf({ "metadata.k": "v".repeat(201) })[0]).toMatchObject({
      column: "metadata.k",
      message: "metadata value is 201 characters, at most 200 allowed",
    });
  });

  it("reports every problem of a row at once", () => {
    const errors = errorsOf({ email: "nope", face_value: "1e3", product_code: "" }, 9);
    expect(errors.map((e) => [e.line, e.column])).toEqual([
      [9, "email"],
      [9, "product_code"],
      [9, "face_value"],
    ]);
  });

  it("refuses a reference used twice, naming the first line", () => {
    const references = new ReferenceTracker();
    expect(validateRow({ line: 2, fields: { ...BASE, reference: "R1" } }, { references }).ok).toBe(
      true,
    );
    expect(validateRow({ line: 3, fields: { ...BASE, reference: "R2" } }, { references }).ok).toBe(
      true,
    );
    const again = validateRow({ line: 7, fields: { ...BASE, reference: "R1 " } }, { references });
    expect(again.ok ? [] : again.errors).toEqual([
      { line: 7, column: "reference", message: 'reference "R1" is already used on line 2' },
    ]);
    expect(references.size).toBe(2);
  });

  it("names the right line for rows after multi-line quoted fields, read from CSV", async () => {
    const text =
      "email,product_code,face_value,description\r\n" +
      'a@b.co,X,1,"two\r\nlines"\r\n' + // 2-3
      "bad,X,1,\r\n" + // 4
      '"a@b.co",X,"1,5","x\r\n\r\ny"\r\n' + // 5-7
      "a@b.co,,2,ok\r\n"; // 8
    const errors = [];
    for (const item of await readAll(text)) {
      if (item.kind !== "row") continue;
      const result = validateRow(item);
      if (!result.ok) errors.push(...result.errors.map((e) => `${e.line}:${e.column}`));
    }
    expect(errors).toEqual(["4:email", "5:face_value", "8:product_code"]);
  });
});
