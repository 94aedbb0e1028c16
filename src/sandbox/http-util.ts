import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "./api-error.js";

/** The 429 of the service has its own shape, not the usual error body. */
export class RateExceeded extends Error {
  override readonly name = "RateExceeded";
}

const RATE_EXCEEDED_BODY = '{"error":"rate exceeded"}';

const MAX_BODY_BYTES = 10 * 1024 * 1024;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** The error type each error answer carried, for the order-attempt hook (see noteErrorType). */
const errorTypes = new WeakMap<ServerResponse, string>();

/** Remembers the error type of `res`'s answer, from its JSON body (a replayed refusal). */
export function noteErrorType(res: ServerResponse, body: string): void {
  try {
    const type = (JSON.parse(body) as { type?: unknown }).type;
    if (typeof type === "string") errorTypes.set(res, type);
  } catch {
    // Not an error body: nothing to remember.
  }
}

/** The error type `res` was answered with, if it was an error answer. */
export function errorTypeOf(res: ServerResponse): string | undefined {
  return errorTypes.get(res);
}

/** Writes an error thrown by a handler: ApiError, RateExceeded, or anything else as a 500. */
export function sendError(res: ServerResponse, error: unknown): void {
  if (error instanceof RateExceeded) {
    errorTypes.set(res, "rate_limited");
    sendJson(res, 429, RATE_EXCEEDED_BODY);
    return;
  }
  const apiError =
    error instanceof ApiError
      ? error
      : new ApiError("internal_server_error", `Sandbox failure: ${(error as Error)?.message}`);
  errorTypes.set(res, apiError.type);
  sendJson(res, apiError.status, JSON.stringify(apiError.body()));
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new ApiError("bad_request", "The request body is too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

/** A header as one string: the first value when repeated, undefined when absent. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
