import { createReadStream, type ReadStream, WriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Readable, Transform, TransformCallback } from "node:stream";
import { UserError } from "../../errors/user-error.js";
import { type ZipEntryInfo, zipEntries } from "./zip-entry-sizes.js";

const MB = 2 ** 20;

/**
 * What a workbook may unpack to (docs/architecture/import.md, "Spreadsheets", "Unpacked size"): all
 * its entries together, and by default an entry past `ratioFrom` bytes at most `ratio` times its
 * packed size (a sheet of real rows packs to a tenth or so; a zip bomb to a thousandth).
 */
const UNZIPPED_LIMITS = { bytes: 200 * MB, ratio: 100, ratioFrom: 10 * MB } as const;

/** The limits of one read; no `ratio` when the caller gave its own limit. */
export interface UnzippedLimits {
  bytes: number;
  ratio?: number;
  ratioFrom: number;
}

/**
 * The limits for `maxBytes` (the `maxUnzippedBytes` option, `--max-unzipped-mb`): given, it is
 * the operator's word that the file may unpack that far, so the ratio is no longer checked.
 */
export function unzippedLimits(maxBytes?: number): UnzippedLimits {
  if (maxBytes === undefined) return { ...UNZIPPED_LIMITS };
  return { bytes: maxBytes, ratioFrom: UNZIPPED_LIMITS.ratioFrom };
}

function sizeText(bytes: number): string {
  if (bytes >= 10 * MB) return `${Math.round(bytes / MB)} MB`;
  if (bytes >= MB) return `${(bytes / MB).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/** How to get a genuine workbook past the limits, in the words of the CLI. */
function raiseHint(bytes?: number): string {
  const at = bytes === undefined ? "N" : String(Math.ceil(bytes / MB));
  return `if the workbook is genuine, raise the limit with --max-unzipped-mb ${at}`;
}

/** Entry names come from the file: quoted, so that none can break the line. */
const quoted = (name: string) => JSON.stringify(name);

function largest(entries: readonly ZipEntryInfo[]): ZipEntryInfo {
  return entries.reduce((a, b) => (b.size > a.size ? b : a));
}

/**
 * Refuses a workbook from what its zip's central directory states, before anything is unpacked
 * or written: its entries together past `limits.bytes`, or an entry grown past the ratio. A
 * directory that cannot be read is no refusal (UnzipGuard still counts). Returns whether it
 * was read.
 */
export async function checkZipDirectory(
  path: string,
  label: string,
  limits: UnzippedLimits,
): Promise<boolean> {
  const entries = await zipEntries(path);
  if (entries === undefined || entries.length === 0) return false;
  const total = entries.reduce((sum, entry) => sum + entry.size, 0);
  if (total > limits.bytes) {
    const big = largest(entries);
    throw new UserError(
      `${label}: refused before unpacking: its entries would unpack to ${sizeText(total)}, past the limit of ${sizeText(limits.bytes)} ` +
        `(${quoted(big.name)} alone ${sizeText(big.size)}); ${raiseHint(total)}`,
    );
  }
  for (const entry of entries) {
    const refusal = ratioRefusal(limits, {
      name: entry.name,
      bytes: entry.size,
      packed: entry.compressedSize,
      over: "",
    });
    if (refusal)
      throw new UserError(`${label}: refused before unpacking: ${refusal}; ${raiseHint(total)}`);
  }
  return true;
}

/**
 * Why an entry unpacked to `bytes` from `packed` is refused for its ratio, if it is; `over` is
 * "over " while it is still unpacking (its bytes so far).
 */
function ratioRefusal(
  limits: UnzippedLimits,
  { name, bytes, packed, over }: { name: string; bytes: number; packed: number; over: string },
): string | undefined {
  if (limits.ratio === undefined || bytes <= limits.ratioFrom) return undefined;
  if (bytes <= limits.ratio * packed) return undefined;
  const times = packed > 0 ? `${over}${Math.round(bytes / packed)} times` : "endlessly more than";
  return (
    `${quoted(name)} unpacks to ${over}${sizeText(bytes)} from ${sizeText(packed)}, ${times} its packed size ` +
    `(a zip bomb? at most ${limits.ratio} times for an entry past ${sizeText(limits.ratioFrom)})`
  );
}

/** An entry of unzipper 0.10's Parse stream (a PassThrough), as much as the guard touches. */
type ZipEntryStream = Transform & {
  path: string;
  vars?: { compressedSize?: number };
  _transform(chunk: Buffer, encoding: BufferEncoding, callback: TransformCallback): void;
};

/** unzipper's Parse stream, as much as the guard touches. */
interface ParseStream {
  once(event: "pipe", listener: (source: Readable) => void): void;
  on(event: "error", listener: (error: Error) => void): void;
  push(chunk: unknown): boolean;
  destroy(error?: Error): void;
}

type ParseFactory = (options?: object) => ParseStream;
type TmpCleanup = (next?: () => void) => void;
type TmpFileCallback = (error: Error | null, path: string, fd: number, cleanup: TmpCleanup) => void;

/** The guard of each read, by the file stream given to exceljs (see UnzipGuard.open). */
const guards = new WeakMap<Readable, UnzipGuard>();
/** The temporary files tmp made for exceljs, by path, with tmp's own removal (fd closed too). */
const temporaryFiles = new Map<string, TmpCleanup>();
let hooked = false;

/**
 * Hooks, once per process, the modules exceljs itself requires (it looks both functions up on
 * each read): unzipper's `Parse`, so that the guard of the file piped into it sees its entries;
 * tmp's `file`, so that the temporary file of a read that is stopped can be removed at once.
 */
function hookExceljs(): void {
  if (hooked) return;
  hooked = true;
  const fromExceljs = createRequire(createRequire(import.meta.url).resolve("exceljs"));
  const unzipper = fromExceljs("unzipper") as { Parse: ParseFactory };
  const parse = unzipper.Parse;
  unzipper.Parse = function guardedParse(options?: object): ParseStream {
    const stream = parse(options);
    stream.once("pipe", (source) => guards.get(source)?.watch(stream));
    return stream;
  };
  const tmp = fromExceljs("tmp") as { file: (...args: unknown[]) => unknown };
  const file = tmp.file;
  tmp.file = function trackedFile(this: unknown, ...args: unknown[]): unknown {
    const last = args.length - 1;
    const callback = args[last] as TmpFileCallback;
    args[last] = ((error, path, fd, cleanup) => {
      if (error) return callback(error, path, fd, cleanup);
      const remove: TmpCleanup = (next) => {
        temporaryFiles.delete(path);
        return cleanup(next);
      };
      temporaryFiles.set(path, remove);
      return callback(error, path, fd, remove);
    }) satisfies TmpFileCallback;
    return file.apply(this, args);
  };
}

/**
 * Destroys a temporary file exceljs was writing with `error` (it listens for it) and removes it,
 * tmp's own descriptor too.
 */
async function removeFile(file: WriteStream, error: Error): Promise<void> {
  if (!file.closed) {
    const closed = new Promise<void>((resolve) => file.once("close", () => resolve()));
    file.destroy(error);
    await closed;
  }
  const path = String(file.path);
  const cleanup = temporaryFiles.get(path);
  if (cleanup) await new Promise<void>((resolve) => cleanup(() => resolve()));
  else await rm(path, { force: true });
}

/**
 * Counts the bytes a workbook's entries unpack to as exceljs inflates them, and stops the read
 * past the limits: the sizes a zip states can be false (a crafted file), the bytes cannot. An
 * entry's bytes are counted as they leave the inflater; past a limit nothing more is written to
 * the entry (so nothing more is inflated), the file and the inflaters are closed, and the zip
 * parser, the entries and the temporary files exceljs writes are destroyed with the refusal, a
 * one-line UserError (`failure`): exceljs, which waits on one of them, throws it. `close`
 * removes the temporary files.
 */
export class UnzipGuard {
  failure: UserError | undefined;
  private total = 0;
  private source: ReadStream | undefined;
  private parse: ParseStream | undefined;
  private readonly entries: ZipEntryStream[] = [];
  private readonly inflaters: Readable[] = [];
  private readonly files: WriteStream[] = [];
  private removing: Promise<unknown> = Promise.resolve();

  /**
   * `fileBytes`: the file's size, an entry's packed size when its header does not say;
   * `stated`: whether checkZipDirectory read sizes the file then exceeded.
   */
  constructor(
    private readonly label: string,
    private readonly limits: UnzippedLimits,
    private readonly fileBytes: number,
    private readonly stated: boolean,
  ) {}

  /** The file as a stream for exceljs's reader, its entries counted. */
  open(path: string): ReadStream {
    hookExceljs();
    const source = createReadStream(path);
    source.on("error", (error) =>
      this.fail(new UserError(`cannot read ${this.label}: ${error.message}`)),
    );
    guards.set(source, this);
    this.source = source;
    return source;
  }

  /** Called by the hooked `Parse` once this guard's file is piped into it. */
  watch(parse: ParseStream): void {
    this.parse = parse;
    // Destroyed with the refusal, which exceljs hears of when it is waiting for an entry.
    parse.on("error", () => {});
    const push = parse.push;
    parse.push = (chunk: unknown) => {
      if (chunk !== null && typeof chunk === "object" && "path" in chunk)
        this.watchEntry(chunk as ZipEntryStream);
      return push.call(parse, chunk);
    };
  }

  /** Waits until the temporary files a refusal left are removed. */
  async close(): Promise<void> {
    await this.removing;
  }

  private watchEntry(entry: ZipEntryStream): void {
    const packed = entry.vars?.compressedSize || this.fileBytes;
    let bytes = 0;
    this.entries.push(entry);
    // An entry exceljs drains unread has no listener of its own for the refusal.
    entry.on("error", () => {});
    entry.on("pipe", (inflater: Readable) => this.inflaters.push(inflater));
    const transform = entry._transform;
    entry._transform = (chunk, encoding, callback) => {
      bytes += chunk.length;
      this.total += chunk.length;
      const refusal = this.refusal(entry.path, bytes, packed);
      // No callback: nothing more is written to the entry, so nothing more is inflated.
      if (refusal) return this.fail(new UserError(refusal));
      transform.call(entry, chunk, encoding, callback);
    };
    const pipe = entry.pipe;
    entry.pipe = <T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }) => {
      const piped = pipe.call(entry, destination, options) as T;
      if (!(destination instanceof WriteStream)) return piped;
      this.files.push(destination);
      // A temporary file begun after the refusal (exceljs was on its way) fails at once.
      if (this.failure) this.removeFiles();
      return piped;
    };
  }

  private refusal(name: string, bytes: number, packed: number): string | undefined {
    // Past checkZipDirectory, a file that passes a limit unpacks to more than it states.
    const stated = this.stated ? ", more than the zip's directory states (a crafted file?)" : "";
    if (this.total > this.limits.bytes) {
      const limit = sizeText(this.limits.bytes);
      return `${this.label}: ${quoted(name)} unpacks past the limit of ${limit} for the whole workbook${stated}; ${raiseHint()}`;
    }
    const ratio = ratioRefusal(this.limits, { name, bytes, packed, over: "over " });
    return ratio && `${this.label}: ${ratio}${stated}; ${raiseHint()}`;
  }

  private fail(error: UserError): void {
    if (this.failure) return;
    this.failure = error;
    this.source?.unpipe();
    this.source?.destroy();
    for (const inflater of this.inflaters) inflater.destroy();
    for (const entry of this.entries) entry.destroy(error);
    this.parse?.destroy(error);
    this.removeFiles();
  }

  /** Each temporary file fails with the refusal (exceljs waits for it), then goes. */
  private removeFiles(): void {
    const files = this.files.splice(0);
    const removed = files.map((file) => removeFile(file, this.failure!).catch(() => {}));
    this.removing = Promise.all([this.removing, ...removed]);
  }
}
