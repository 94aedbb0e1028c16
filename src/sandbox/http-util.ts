import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "./api-error.js";

/** The 429 of the service has its own shape, not the usual error body. */
export class RateExceeded extends Error {
  override readonly name = "RateExceeded";
}

export const RATE_EXCEEDED_BODY = '{"error":"rate exceeded"}';

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

/** Writes an error thrown by a handler: ApiError, RateExceeded, or anything else as a 500. */
export function sendError(res: ServerResponse, error: unknown): void {
  if (error instanceof RateExceeded) {
    sendJson(res, 429, RATE_EXCEEDED_BODY);
    return;
  }
  const apiError =
    error instanceof ApiError
      ? error
      : new ApiError("internal_server_error", `Sandbox failure: ${(error as Error)?.message}`);
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
