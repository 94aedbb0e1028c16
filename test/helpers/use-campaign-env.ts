import { afterEach } from "vitest";
import type { SandboxOptions } from "../../src/sandbox/index.js";
import type { RunningWorkers, StartWorkersOptions } from "../../src/worker/worker-options.js";
import { type CampaignEnv, campaignEnv, runWorkers } from "./campaign-env.js";

/**
 * A campaign env for each test that asks for one, and in-process workers if it starts them;
 * both closed after the test, the workers first (they still talk to the env's Redis and sandbox).
 * `setup(label, sandbox?)`: the test's sandbox options over the describe's.
 * `work(env, overrides?)`: runWorkers, the overrides replacing its defaults.
 * `stopWorkers()`: for a test that stops them mid-way; the env stays until the test ends.
 */
export function useCampaignEnv(sandboxOptions: SandboxOptions = {}) {
  let env: CampaignEnv | undefined;
  let workers: RunningWorkers | undefined;
  const stopWorkers = async (): Promise<void> => {
    await workers?.close();
    workers = undefined;
  };
  afterEach(async () => {
    await stopWorkers();
    await env?.dispose();
    env = undefined;
  });
  return {
    async setup(label: string, sandbox: SandboxOptions = {}): Promise<CampaignEnv> {
      env = await campaignEnv({ ...sandboxOptions, ...sandbox }, label);
      return env;
    },
    async work(
      e: CampaignEnv,
      overrides: Partial<StartWorkersOptions> = {},
    ): Promise<RunningWorkers> {
      workers = await runWorkers(e, overrides);
      return workers;
    },
    stopWorkers,
  };
}
