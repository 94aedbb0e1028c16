import { afterEach, describe, expect, it, vi } from "vitest";

// Only the call is stubbed: setting a V8 flag would change the heap of the test's own process.
const setFlagsFromString = vi.fn();
vi.mock("node:v8", () => ({ setFlagsFromString }));

const { limitHeapGrowthForImport } = await import("../../src/import/heap-growth.js");

describe("limitHeapGrowthForImport", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    setFlagsFromString.mockClear();
  });

  it("lets the heap grow to 3x what a collection left alive", () => {
    vi.stubEnv("NODE_OPTIONS", "--max-old-space-size=4096");
    limitHeapGrowthForImport();
    expect(setFlagsFromString).toHaveBeenCalledExactlyOnceWith("--heap-growing-percent=200");
  });

  it("leaves a growth given to Node as it is", () => {
    vi.stubEnv("NODE_OPTIONS", "--heap_growing_percent=50");
    limitHeapGrowthForImport();
    expect(setFlagsFromString).not.toHaveBeenCalled();
  });
});
