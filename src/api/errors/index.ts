export {
  ApiError,
  type ApiErrorInit,
  type ApiErrorName,
  ApiVersionError,
  answeredUnderKey,
  apiError,
  type ErrorDetail,
  InsufficientFundsError,
  kindOf,
  MalformedResponseError,
  OrderingRestrictedError,
  type Outcome,
  UnauthorizedError,
  ValidationError,
} from "./api-error.js";
export { RefusedRequestError } from "./refused-request-error.js";
export { nothingSent, ServiceUnreachableError } from "./service-unreachable-error.js";
