export * from "./client.js";
export { errorFromResponse } from "./error-from-response.js";
export * from "./errors/index.js";
export * from "./order-estimate.js";
export * from "./order-request.js";
export * from "./product-query.js";
export * from "./schemas.js";
