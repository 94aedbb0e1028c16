import { openCurrentSnapshot } from "../catalog/current-snapshot.js";
import type { Stores } from "../stores/stores.js";
import { type DoctorCheck, failed, passed } from "./doctor-check.js";

/**
 * The current catalog snapshot exists and is younger than `maxAgeHours`, in the stores being
 * opened (`opening`: the data dir's files, or PostgreSQL, which must answer, its schema current).
 */
export async function snapshotCheck(
  opening: Promise<Stores>,
  maxAgeHours: number,
  now = Date.now(),
): Promise<DoctorCheck> {
  let snapshot: Awaited<ReturnType<typeof openCurrentSnapshot>>;
  let where: string;
  try {
    const { catalog } = await opening;
    where = catalog.where;
    snapshot = await openCurrentSnapshot(catalog);
  } catch (error) {
    return failed("catalog", `the current snapshot cannot be read: ${(error as Error).message}`);
  }
  if (!snapshot)
    return failed("catalog", `no catalog snapshot in ${where}: run giftjobs catalog sync`);
  const hours = (now - Date.parse(snapshot.manifest.fetched_at)) / 3_600_000;
  const age = hours < 1 ? `${Math.round(hours * 60)} min` : `${hours.toFixed(1)} h`;
  const what = `snapshot ${snapshot.name} (${snapshot.manifest.product_count} products) is ${age} old`;
  if (hours > maxAgeHours) {
    return failed(
      "catalog",
      `${what}, over ${maxAgeHours} h: is the nightly sync running? (giftjobs catalog schedule, and a worker serving the catalog queue)`,
    );
  }
  return passed("catalog", what);
}
