import { describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import { MalformedResponseError } from "../../src/api/errors/index.js";

function clientAnswering(status: number, body: Uint8Array | string, version?: string): ApiClient {
  const stub: typeof fetch = async () =>
    new Response(body, {
      status,
      headers: version ? { "x-api-version": version } : {},
    });
  return new ApiClient({ baseUrl: "http://api.invalid", apiKey: "k", fetch: stub });
}

const GET = { method: "GET", path: "/v2/product" } as const;

describe("ApiClient.requestRaw", () => {
  it("returns the body's bytes exactly as received beside the same parse as request()", async () => {
    const bytes = Buffer.from('\ufeff{"catalog":[{"code":"A","name":"Caf\\u00e9 日本"}]}', "utf8");
    const client = clientAnswering(200, bytes, "2024-01-01");
    const raw = await client.requestRaw(GET);
    const plain = await client.request(GET);
    expect(raw.bytes.equals(bytes)).toBe(true);
    expect(raw.body).toEqual({ catalog: [{ code: "A", name: "Café 日本" }] });
    expect(plain).toEqual({ status: 200, body: raw.body, apiVersion: "2024-01-01" });
    expect(raw).toMatchObject({ status: 200, apiVersion: "2024-01-01" });
  });

  it("decodes bad UTF-8 as request() does, with U+FFFD, and keeps the bytes", async () => {
    const bytes = Buffer.concat([Buffer.from('{"n":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const client = clientAnswering(200, bytes);
    const raw = await client.requestRaw(GET);
    expect(raw.body).toEqual({ n: "\ufffd" });
    expect(raw.body).toEqual((await client.request(GET)).body);
    expect(raw.bytes.equals(bytes)).toBe(true);
  });

  it("fails as request() fails: HTTP errors and bodies that are not JSON", async () => {
    for (const client of [
      clientAnswering(404, '{"error":{"type":"not_found","message":"no such page"}}'),
      clientAnswering(200, "{not json"),
    ]) {
      const plain = await client.request(GET).catch((error: unknown) => error);
      const raw = await client.requestRaw(GET).catch((error: unknown) => error);
      expect(plain).toBeInstanceOf(Error);
      expect(raw).toBeInstanceOf((plain as Error).constructor);
      expect((raw as Error).message).toBe((plain as Error).message);
    }
    const notJson = await clientAnswering(200, "{not json")
      .requestRaw(GET)
      .catch((e: unknown) => e);
    expect(notJson).toBeInstanceOf(MalformedResponseError);
  });
});
