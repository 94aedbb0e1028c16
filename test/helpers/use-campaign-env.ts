import { afterEach } from "vitest";
import type { SandboxOptions } from "../../src/sandbox/index.js";
import { type CampaignEnv, campaignEnv, runWorkers } from "./campaign-env.js";

/**
 * A campaign env for each test that asks for one, and in-process workers if it starts them;
 * both closed after the test. `setup(label)` makes the env, `work(env)` starts the workers.
 */
export function useCampaignEnv(sandboxOptions: SandboxOptions = {}) {
  let env: CampaignEnv | undefined;
  let workers: Awaited<ReturnType<typeof runWorkers>> | undefined;
  afterEach(async () => {
    await workers?.close();
    workers = undefined;
    await env?.dispose();
    env = undefined;
  });
  return {
    async setup(label: string): Promise<CampaignEnv> {
      env = await campaignEnv(sandboxOptions, label);
      return env;
    },
    async work(e: CampaignEnv): Promise<void> {
      workers = await runWorkers(e);
    },
  };
}
