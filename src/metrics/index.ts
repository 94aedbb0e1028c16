export { type MetricsServer, startMetricsServer } from "./metrics-server.js";
export { routeLabel } from "./route-label.js";
export { type RunningMetrics, type StartMetricsOptions, startMetrics } from "./start-metrics.js";
export { ORDER_OUTCOMES, WorkerMetrics, type WorkerMetricsOptions } from "./worker-metrics.js";
