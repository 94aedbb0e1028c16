import cliProgress from "cli-progress";

/** A progress bar on a terminal; nothing at all in --json, CI or a pipe. */
export interface Progress {
  update(value: number, payload?: Record<string, string | number>): void;
  setTotal(total: number): void;
  stop(): void;
}

const NONE: Progress = { update() {}, setTotal() {}, stop() {} };

export function progressBar(enabled: boolean, format: string, total = 0): Progress {
  if (!enabled) return NONE;
  const bar = new cliProgress.SingleBar(
    { format, stream: process.stderr, hideCursor: true, clearOnComplete: false, etaBuffer: 50 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    update: (value, payload) => bar.update(value, payload),
    setTotal: (t) => bar.setTotal(t),
    stop: () => bar.stop(),
  };
}
