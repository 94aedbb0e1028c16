/** Error types of the service and their HTTP statuses (API-NOTES.md). */
const ERROR_STATUS = {
  bad_request: 400,
  invalid_version: 400,
  pagination_error: 400,
  idempotency_validation_error: 400,
  idempotency_in_progress: 400,
  insufficient_funds: 400,
  product_validation_error: 400,
  currency_mismatch: 400,
  payment_method_unavailable: 400,
  invalid_execution_mode: 400,
  insecure_protocol: 400,
  unauthorized: 401,
  invalid_api_key: 401,
  forbidden: 403,
  ordering_restricted: 403,
  not_found: 404,
  version_removed: 410,
  validation_error: 422,
  internal_server_error: 500,
  timeout: 504,
} as const;

export type ErrorType = keyof typeof ERROR_STATUS;

export interface ValidationDetail {
  type: string;
  message: string;
  /** Strings, numbers included: the OpenAPI document types location items as strings. */
  location: string[];
}

/** An error answer of the sandbox: thrown by handlers, written by the server. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;

  constructor(
    readonly type: ErrorType,
    message: string,
    readonly details?: ValidationDetail[],
  ) {
    super(message);
    this.status = ERROR_STATUS[type];
  }

  body(): Record<string, unknown> {
    const body: Record<string, unknown> = {
      type: this.type,
      message: this.message,
      help: `https://docs.sandbox.invalid/errors#${this.type}`,
    };
    if (this.details) body.details = this.details;
    return body;
  }
}

export function isErrorType(value: string): value is ErrorType {
  return Object.hasOwn(ERROR_STATUS, value);
}
