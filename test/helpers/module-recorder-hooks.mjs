// The module hooks of module-recorder.mjs (they run on a thread of their own): each URL an
// import resolves to, appended to the record file as it is resolved.
import { appendFileSync } from "node:fs";

let file;

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  appendFileSync(file, `${result.url}\n`);
  return result;
}
