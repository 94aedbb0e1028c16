/**
 * Requests seen by the sandbox, by route and status, and the most a route had in flight at
 * once (GET /_sandbox/stats): what a client's concurrency looks like from the service's side.
 */
export class Stats {
  private requests = new Map<string, Map<string, number>>();
  private total = 0;
  private inFlight = new Map<string, number>();
  private mostInFlight = new Map<string, number>();

  /** A request of `route` begins; the function returned ends it (call it once). */
  enter(route: string): () => void {
    const now = (this.inFlight.get(route) ?? 0) + 1;
    this.inFlight.set(route, now);
    if (now > (this.mostInFlight.get(route) ?? 0)) this.mostInFlight.set(route, now);
    return () => this.inFlight.set(route, (this.inFlight.get(route) ?? 1) - 1);
  }

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

  /** Counts start again; requests in flight stay counted until they end. */
  reset(): void {
    this.requests.clear();
    this.total = 0;
    this.mostInFlight = new Map(this.inFlight);
  }

  toJson(): {
    total_requests: number;
    requests: Record<string, Record<string, number>>;
    most_in_flight: Record<string, number>;
  } {
    const requests: Record<string, Record<string, number>> = {};
    for (const [route, byStatus] of this.requests) requests[route] = Object.fromEntries(byStatus);
    return {
      total_requests: this.total,
      requests,
      most_in_flight: Object.fromEntries(this.mostInFlight),
    };
  }
}
