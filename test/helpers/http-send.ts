// Raw HTTP requests for the dashboard's tests: fetch does not let one set Host, and the guards
// (docs/architecture/operators.md) answer by Host, Origin and cookies.
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";

export interface Reply {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
}

/** One request with headers of our choosing; the whole body read as text. */
export function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method, headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** The header of a posted form. */
export const FORM = { "content-type": "application/x-www-form-urlencoded" };

/** The CSRF token of a dashboard page, or undefined when it shows none. */
export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1];
