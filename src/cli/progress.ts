import { writeSync } from "node:fs";
import { createRequire } from "node:module";
import type * as CliProgress from "cli-progress";
import { setStderrOverlay } from "../log.js";

/** A progress bar on a terminal; nothing at all in --json, CI or a pipe. */
export interface Progress {
  update(value: number, payload?: Record<string, string | number>): void;
  setTotal(total: number): void;
  stop(): void;
}

const NONE: Progress = { update() {}, setTotal() {}, stop() {} };

/**
 * A bar on the last line of stderr. While it is drawn, log lines go above it (the logger clears
 * the bar, writes the line, draws the bar again: see setStderrOverlay), never into it.
 */
export function progressBar(enabled: boolean, format: string, total = 0): Progress {
  if (!enabled) return NONE;
  // Loaded for a bar drawn only: a command in a pipe or CI does not load it
  // (docs/architecture/command-line.md, "Start-up").
  const cliProgress = createRequire(import.meta.url)("cli-progress") as typeof CliProgress;
  const bar = new cliProgress.SingleBar(
    {
      format,
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
      // Drawn again after each log line, even when nothing in it changed.
      forceRedraw: true,
      // A total of 0 (not known yet) is an empty bar, not a full one.
      emptyOnZero: true,
    },
    cliProgress.Presets.shades_classic,
  );
  // The bar stays at the bottom while log lines go above it: cli-progress's saving of the cursor
  // at start and restoring it at stop would move the cursor back up over those lines.
  const terminal = (bar as unknown as { terminal: { cursorSave(): void; cursorRestore(): void } })
    .terminal;
  terminal.cursorSave = () => {};
  terminal.cursorRestore = () => {};
  bar.start(total, 0, blankPayload(format));
  let stopped = false;
  setStderrOverlay({
    clear: () => writeSync(2, "\r\x1b[2K"),
    redraw: () => bar.render(),
  });
  return {
    update: (value, payload) => bar.update(value, payload),
    setTotal: (t) => bar.setTotal(t),
    stop: () => {
      if (stopped) return;
      stopped = true;
      setStderrOverlay(undefined);
      bar.stop();
    },
  };
}

const BUILT_IN = new Set([
  "bar",
  "percentage",
  "total",
  "value",
  "eta",
  "duration",
  "eta_formatted",
  "duration_formatted",
  "value_formatted",
  "total_formatted",
]);

/** Every payload field of the format, empty: no `{rate}` shown before the first update. */
function blankPayload(format: string): Record<string, string> {
  const payload: Record<string, string> = {};
  for (const [, name] of format.matchAll(/\{(\w+)\}/g))
    if (name && !BUILT_IN.has(name)) payload[name] = "";
  return payload;
}
