import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";

/** Where browser tests keep their screenshots (kept as CI artefacts). */
export const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));

/**
 * Debian's chromium, headless. The machine's network is closed: without the background-networking
 * flags Chromium keeps trying to reach Google's hosts (scripts/ensure-browser.sh installs it).
 */
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless Chromium, with the artefacts folder made. */
export async function launchBrowser(): Promise<Browser> {
  await mkdir(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
}
