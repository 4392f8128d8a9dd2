/**
 * The five functions' bundles built as the stack builds them (`lib/proxy-function.ts`: esbuild
 * with the stack's options, each function's vendored AWS SDK client beside its `index.mjs`), into
 * a folder of the caller's: for the bundle test, the Node 24 bundle check
 * (`bin/node24-bundles.ts`) and the documented sizes (`bin/bundle-sizes.ts`).
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { FUNCTION_NAMES, type FunctionName } from '../lambdas/platform/names.ts';
import { HANDLER_ENTRIES } from '../lambdas/platform/routes.ts';
import {
  esbuildOptions,
  FUNCTION_VENDORED,
  vendoredDir,
  vendoredOptions,
  vendoredPackageJson,
} from '../lib/proxy-function.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface FunctionBundle {
  /** The handler module, `<dir>/<function>/index.mjs`. */
  readonly file: string;
  /** Its size in bytes (the source map beside it not counted). */
  readonly bytes: number;
  /** What esbuild put in it (which source files, how many bytes of each). */
  readonly metafile: Metafile;
  /** Each vendored SDK client shipped beside it: its `index.mjs` and size in bytes. */
  readonly vendored: readonly { readonly pkg: string; readonly file: string; readonly bytes: number }[];
}

/** Builds every function's bundle into `dir` (one folder per function, as the stack deploys them). */
export async function buildFunctionBundles(dir: string): Promise<Record<FunctionName, FunctionBundle>> {
  const bundles = {} as Record<FunctionName, FunctionBundle>;
  for (const fn of FUNCTION_NAMES) {
    const file = join(dir, fn, 'index.mjs');
    // The metafile says which source files the bundle holds; it changes nothing in the output.
    const result = await build({
      ...esbuildOptions(resolve(ROOT, HANDLER_ENTRIES[fn]), file),
      metafile: true,
    });
    const vendored = [];
    for (const pkg of FUNCTION_VENDORED[fn] ?? []) {
      const options = vendoredOptions(ROOT, pkg, dirname(file));
      const sdk = await build({ ...options, metafile: true });
      writeFileSync(join(dirname(file), vendoredDir(pkg), 'package.json'), vendoredPackageJson(pkg));
      vendored.push({
        pkg,
        file: String(options.outfile),
        bytes: outputBytes(sdk.metafile, String(options.outfile)),
      });
    }
    bundles[fn] = { file, bytes: outputBytes(result.metafile, file), metafile: result.metafile, vendored };
  }
  return bundles;
}

/** The size esbuild wrote for `file` (its metafile names outputs relative to the working directory). */
function outputBytes(metafile: Metafile, file: string): number {
  const found = Object.entries(metafile.outputs).find(([out]) => resolve(out) === resolve(file));
  if (found === undefined) throw new Error(`esbuild wrote no ${file}`);
  return found[1].bytes;
}
