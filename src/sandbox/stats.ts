/** Requests seen by the sandbox, by route and status (GET /_sandbox/stats). */
export class Stats {
  private requests = new Map<string, Map<string, number>>();
  private total = 0;

  /** `status` is the HTTP status, or "dropped" when the connection was cut on purpose. */
  record(route: string, status: number | string): void {
    let byStatus = this.requests.get(route);
    if (!byStatus) {
      byStatus = new Map();
      this.requests.set(route, byStatus);
    }
    const key = String(status);
    byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
    this.total++;
  }

  reset(): void {
    this.requests.clear();
    this.total = 0;
  }

  toJson(): { total_requests: number; requests: Record<string, Record<string, number>> } {
    const requests: Record<string, Record<string, number>> = {};
    for (const [route, byStatus] of this.requests) requests[route] = Object.fromEntries(byStatus);
    return { total_requests: this.total, requests };
  }
}
