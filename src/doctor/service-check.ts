import type { ApiClient } from "../api/client.js";
import { type DoctorCheck, failed, passed } from "./doctor-check.js";

/**
 * GET /v2/balance with the configured URL and key: the service answers and takes the key. The
 * client's errors already say what to check (GIFTJOBS_API_URL when nothing answers,
 * GIFTJOBS_API_KEY on a 401 or 403); the key itself never appears.
 */
export async function serviceCheck(client: ApiClient, apiUrl: string): Promise<DoctorCheck> {
  try {
    const balances = await client.getBalance();
    const currencies = balances.map((b) => b.currency).join(", ") || "none";
    return passed(
      "service",
      `the service at ${apiUrl} takes the API key (balances in ${currencies})`,
    );
  } catch (error) {
    return failed("service", (error as Error).message);
  }
}
