import { describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import { ApiError } from "../../src/api/errors/index.js";

function clientAnswering(status: number, body: Uint8Array | string, version?: string): ApiClient {
  const stub: typeof fetch = async () =>
    new Response(body, {
      status,
      headers: version ? { "x-api-version": version } : {},
    });
  return new ApiClient({ baseUrl: "http://api.invalid", apiKey: "k", fetch: stub });
}

const GET = { method: "GET", path: "/v2/product" } as const;

describe("ApiClient.requestBytes", () => {
  it("returns the body's bytes exactly as received, BOM and bad UTF-8 included", async () => {
    for (const bytes of [
      Buffer.from('\ufeff{"catalog":[{"code":"A","name":"Caf\\u00e9 日本"}]}', "utf8"),
      Buffer.concat([Buffer.from('{"n":"'), Buffer.from([0xff]), Buffer.from('"}')]),
      Buffer.from("{not json"),
    ]) {
      const response = await clientAnswering(200, bytes, "2024-01-01").requestBytes(GET);
      expect(response.bytes.equals(bytes)).toBe(true);
      expect(response).toMatchObject({ status: 200, apiVersion: "2024-01-01" });
    }
  });

  it("fails on an HTTP error exactly as request() does", async () => {
    const client = clientAnswering(404, '{"error":{"type":"not_found","message":"no such page"}}');
    const plain = await client.request(GET).catch((error: unknown) => error);
    const bytes = await client.requestBytes(GET).catch((error: unknown) => error);
    expect(plain).toBeInstanceOf(ApiError);
    expect(bytes).toBeInstanceOf((plain as Error).constructor);
    expect(bytes).toMatchObject({ status: 404 });
    expect((bytes as Error).message).toBe((plain as Error).message);
  });
});
