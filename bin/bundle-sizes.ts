/**
 * `npm run docs:sizes`: writes the bundle sizes that docs/reference/performance.md and BENCHMARKS.md state, from a
 * build of the five functions as the stack builds them (bin/function-bundles.ts), into the block
 * between {@link SIZES_BEGIN} and {@link SIZES_END} of each. Never typed by hand: after a change
 * to the functions' code, run it (`npm run bench` writes the same block into BENCHMARKS.md).
 * `npm run docs:sizes -- --check` only compares, and fails when a block is stale
 * (test/infra/bundle.test.ts does the same with its own build).
 *
 * Sizes are whole KB (1024 bytes) of each `index.mjs` (minified; the source map beside it is not
 * deployed code and not counted), and of each package shipped beside it (lib/proxy-function.ts, `VENDORED`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_NAMES, type FunctionName } from '../lambdas/platform/names.ts';
import { buildFunctionBundles, type FunctionBundle } from './function-bundles.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The documents that state the sizes, relative to the root. */
export const SIZE_DOCUMENTS = Object.freeze(['docs/reference/performance.md', 'BENCHMARKS.md']);

export const SIZES_BEGIN =
  '<!-- bundle-sizes: written by `npm run docs:sizes` from a build as the stack bundles; do not edit -->';
export const SIZES_END = '<!-- /bundle-sizes -->';

/**
 * The most bytes each function's `index.mjs` may have (bench/README.md; test/infra/bundle.test.ts
 * holds every bundle to it). A bundle's import on Node 24 grows with its size (V8 parses and
 * compiles all of it): these fit the cold-start budget of 75 ms (issue 49, BENCHMARKS.md "Cold
 * starts on Node 24"), with a few KB of room each. The mcp budget came down from 400 KB when jose
 * moved beside the bundle. Issue 54's readers, which read a call as Odoo runs it
 * (core/policy/odoo-arguments.ts, unreadable.ts, the field rule's related fields and display names,
 * mended twice after black-box reviews) and the confirmation form's escapes, grew every function
 * that checks key policies: execute-v1 249 -> 261 KB, execute-v2 242 -> 254 KB, mcp 336 -> 350 KB
 * (BENCHMARKS.md "Issue 54" gives the cold-start instructions they cost, counted side by side with
 * 637c1a9): the execute budgets went from 250 to 270 KB, mcp's from 345 to 360 KB, each with the
 * few KB of room the others have. Issue 56's audit (a record opened, written pending and ended on
 * every write; the DynamoDB writer in execute and mcp, the reader and `GET /_/audit` in aux, the
 * gate's two steps and the settings in all) grew execute-v1 262 -> 283 KB, execute-v2 256 -> 276 KB,
 * version 209 -> 214 KB, aux 170 -> 189 KB and mcp 355 -> 376 KB; counted side by side with
 * 13fca5a their cold starts cost +2.6%, +2.8%, +0.5%, +2.9% and +2.4% instructions over bare
 * node (the issue's bound is +3%; BENCHMARKS.md "Issue 56"): the budgets went to 285, 285, 220, 195
 * and 380 KB. Issue 57's sealing added seven settings and three metrics to the catalogues every
 * function carries (the sealer's code is in its own function): execute-v1 290.7 -> 293.6 KB, mcp
 * 386.6 -> 389.6 KB, after their texts were cut from 3.8 KB to 2.9 KB; counted side by side with
 * ba2cad2 the cold starts cost +0.4% (execute-v1), +0.5% (execute-v2, version, mcp) and +0.8% (aux)
 * instructions over bare node (BENCHMARKS.md "Issue 57"): the execute budgets went to 288 KB, mcp's
 * to 383 KB. Issue 58 (the brakes: their store client and copy in every function, the version
 * function's first DynamoDB client among them, the gate's step, `/_/brakes` in aux; `Request-Id`,
 * `traceparent` and `Server-Timing` in every chain; the ERP's address pinned from the limits to the
 * connection) grew every bundle by 12 to 18 KB, of which moving the settings' documentation texts
 * out of the bundles (lib/setting-texts.ts) took back 10 KB: execute-v1 287 -> 291 KB, execute-v2
 * 280 -> 284 KB, version 217 -> 226 KB, aux 193 -> 198 KB, mcp 381 -> 386 KB. Counted side by side
 * with 5eb630c their cold starts cost +1.6%, +0.4%, +2.2%, +4.5% (aux, the operator endpoints) and
 * +1.7% instructions over bare node (BENCHMARKS.md "Issue 58"): the budgets went to 294, 294, 228,
 * 200 and 388 KB, each with the few KB of room the others have.
 */
export const BUNDLE_BUDGETS: Readonly<Record<FunctionName, number>> = Object.freeze({
  'execute-v1': 294 * 1024,
  'execute-v2': 294 * 1024,
  version: 228 * 1024,
  aux: 200 * 1024,
  mcp: 388 * 1024,
});

const kb = (bytes: number): string => `${Math.round(bytes / 1024)} KB`;

/** The block's text (markers included) for these bundles. */
export function renderSizes(
  bundles: Readonly<Record<FunctionName, Pick<FunctionBundle, 'bytes' | 'vendored'>>>,
): string {
  const rows = FUNCTION_NAMES.map((fn) => {
    const { bytes, vendored } = bundles[fn];
    const budget = BUNDLE_BUDGETS[fn];
    const beside = vendored
      .map((sdk) => `\`${sdk.pkg}\`, ${kb(sdk.bytes)}, imported on first use`)
      .join('; ');
    return `| ${fn} | ${kb(bytes)} | ${budget === undefined ? '—' : `≤ ${kb(budget)}`} | ${beside || '—'} |`;
  });
  return [
    SIZES_BEGIN,
    '| function | `index.mjs` (minified) | budget | shipped beside it |',
    '| --- | --- | --- | --- |',
    ...rows,
    SIZES_END,
  ].join('\n');
}

/** `text` with its sizes block replaced by `block`; throws when it has no (or a broken) block. */
export function withSizes(text: string, block: string, name: string): string {
  const begin = text.indexOf(SIZES_BEGIN);
  const end = text.indexOf(SIZES_END, begin);
  if (begin < 0 || end < 0)
    throw new Error(`${name} has no bundle-sizes block (${SIZES_BEGIN} ... ${SIZES_END})`);
  return `${text.slice(0, begin)}${block}${text.slice(end + SIZES_END.length)}`;
}

/** The sizes block of a fresh build. */
export async function currentSizes(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-bundle-sizes-'));
  try {
    return renderSizes(await buildFunctionBundles(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  const block = await currentSizes();
  const stale: string[] = [];
  for (const name of SIZE_DOCUMENTS) {
    const path = join(ROOT, name);
    const text = readFileSync(path, 'utf8');
    const updated = withSizes(text, block, name);
    if (updated === text) continue;
    stale.push(name);
    if (!check) writeFileSync(path, updated);
  }
  if (check && stale.length > 0) {
    process.stderr.write(`bundle sizes out of date in ${stale.join(', ')}: run npm run docs:sizes\n`);
    return 1;
  }
  if (!check)
    process.stdout.write(`${stale.length > 0 ? `wrote ${stale.join(', ')}` : 'up to date'}\n${block}\n`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
