// The types of cli-bundle.mjs, for the TypeScript that imports it (test/helpers/cli-build.ts).

/** The npm packages bundled into the chunks; every other dependency stays external. */
export declare const BUNDLED_PACKAGES: string[];

/** The worker threads' entries (output name -> source), bundled beside the chunks. */
export declare const WORKER_ENTRIES: Record<string, string>;

/** The name of the file, in each output folder, that says which sources each chunk holds. */
export declare const METAFILE: string;

export interface CliBundle {
  /** The entry's output file name, without extension. */
  name: string;
  /** The module bundled: one that runs the CLI, or exports main. */
  entry: string;
  /** The output folder, emptied first. */
  outdir: string;
  /** The extension of the output files; default ".js". */
  outExtension?: string;
}

/** Bundles the CLI from `entry` into `outdir`: the entry, its chunks, METAFILE. */
export declare function bundleCli(bundle: CliBundle): Promise<void>;

/** The shipped CLI: dist/cli/main.js, which exports main (bin/giftjobs.js runs it). */
export declare const SHIPPED: CliBundle;
