// The SQL examples of docs/catalog-database.md run as written, on a fresh connection to a synced
// catalog. The page tells the reader to set the search path to the schema first (`giftjobs` by
// default); the test sets it the same way, to its own schema.
import { readFileSync } from "node:fs";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useCatalogFixture } from "../helpers/catalog-fixture.js";
import { useTestDatabase } from "../helpers/database.js";
import { control } from "../helpers/sandbox.js";

const PAGE = new URL("../../docs/catalog-database.md", import.meta.url);
const SET_PATH = /^SET search_path TO (\w+);$/;

/** The page's ```sql blocks, each a list of statements (comments kept). */
function sqlExamples(page: string): string[][] {
  return [...page.matchAll(/```sql\n([\s\S]*?)```/g)].map(([, body]) =>
    body!
      .split(/;\s*\n/)
      .map((statement) => statement.trim())
      .filter((statement) => statement.replace(/^--.*$/gm, "").trim() !== "")
      .map((statement) => `${statement.replace(/;$/, "")};`),
  );
}

describe("docs/catalog-database.md: the SQL examples", () => {
  const fx = useCatalogFixture();
  const db = useTestDatabase("docs_sql");

  it("run as written after the SET search_path the page says, and answer what they say", async () => {
    await fx.sync({ database: db.database });
    const products = fx.sandbox.state.catalog.products;
    // A product the first example lists until it is made unorderable, when the second lists it.
    const changed = products.find(
      (p) => p.is_orderable && p.countries_redeemable_in.includes("GB"),
    )!;
    await control(fx.sandbox, `/_sandbox/products/${changed.code}`, { is_orderable: false });
    await fx.sync({ database: db.database });

    const examples = sqlExamples(readFileSync(PAGE, "utf8"));
    expect(examples.length).toBe(2);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const answers: Record<string, unknown>[][] = [];
    try {
      for (const statements of examples) {
        // Each example sets the path first, to the settings' default schema.
        expect(SET_PATH.exec(statements[0]!)?.[1]).toBe("giftjobs");
        for (const [i, statement] of statements.entries()) {
          const text = i === 0 ? `SET search_path TO ${db.schema};` : statement;
          answers.push((await client.query(text)).rows);
        }
      }
    } finally {
      await client.end();
    }
    const [, ofCountry, unorderable, overrides, journal] = answers;
    expect(ofCountry!.length).toBeGreaterThan(0);
    expect(ofCountry!.map((row) => row.code)).not.toContain(changed.code);
    expect(unorderable!.map((row) => row.code)).toEqual([changed.code]);
    expect(overrides).toEqual([]);
    expect(journal).toEqual([]);
  });
});
