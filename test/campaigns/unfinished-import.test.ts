import { describe, expect, it } from "vitest";
import { importWasCutShort, recordingMarked } from "../../src/campaigns/unfinished-import.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";

describe("an import's unfinished mark", () => {
  const r = useRedisPrefix("unfinished");

  it("is gone once the recording ends, and its field with it", async () => {
    const ledger = new Ledger(r.redis, r.prefix);
    await recordingMarked(ledger, "c", async () => {
      expect(await importWasCutShort(ledger, "c")).toBe(true);
    });
    expect(await importWasCutShort(ledger, "c")).toBe(false);
    expect(await ledger.campaigns.meta("c")).not.toHaveProperty("import_unfinished");
  });

  it("stays only when Redis went away: a refusal is an import that ended", async () => {
    const ledger = new Ledger(r.redis, r.prefix);
    const refused = recordingMarked(ledger, "c", async () => {
      throw new Error("the campaign's USD budget would be passed");
    });
    await expect(refused).rejects.toThrow(/budget/);
    expect(await importWasCutShort(ledger, "c")).toBe(false);
    const cut = recordingMarked(ledger, "c", async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:6390");
    });
    await expect(cut).rejects.toThrow(/ECONNREFUSED/);
    expect(await importWasCutShort(ledger, "c")).toBe(true);
  });
});
