import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readableStack, withReadableStack } from '../../lambdas/platform/stack-trace.ts';

/** A minified bundle with its map beside it, as the stack deploys them, whose function throws. */
const SOURCE = [
  '// line 1',
  'export function outer(): never {',
  '  return inner();',
  '}',
  '',
  'function inner(): never {',
  "  throw new Error('boom from the bundle');",
  '}',
  '',
].join('\n');

let dir: string;
let bundle: string;
let thrown: Error;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stack-trace-'));
  writeFileSync(join(dir, 'thrower.ts'), SOURCE);
  bundle = join(dir, 'out', 'index.mjs');
  await build({
    entryPoints: [join(dir, 'thrower.ts')],
    outfile: bundle,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    sourcemap: true,
    sourcesContent: false,
  });
  // In a plain node (no flags), as on Lambda: vitest would map an imported bundle's stack itself.
  const script = `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)}); try { m.outer(); } catch (e) { process.stdout.write(e.stack); }`;
  thrown = new Error('boom from the bundle');
  thrown.stack = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readableStack', () => {
  it('names the source file, line and column of each bundle frame (no --enable-source-maps)', () => {
    expect(thrown.stack).toMatch(/index\.mjs:1:\d+/);
    const stack = readableStack(thrown.stack ?? '');
    expect(stack).toContain('Error: boom from the bundle');
    // The throw is on line 7, inner() is called from line 3 of thrower.ts.
    expect(stack).toMatch(/thrower\.ts:7:\d+\)/);
    expect(stack).toMatch(/thrower\.ts:3:\d+\)/);
    expect(stack).not.toMatch(/index\.mjs:1:/);
    // Relative to the build directory, without leading ../ segments.
    expect(stack).not.toMatch(/\(\.\.\//);
  });

  it('maps frame lines only: a message quoting a bundle path stays as written; a huge stack is left as it is', () => {
    const url = pathToFileURL(bundle).href;
    const frame = (thrown.stack ?? '').split('\n').find((line) => line.includes('index.mjs')) ?? '';
    const stack = `Error: the caller sent ${url}:1:5 and /x/y.js:2:3\n${frame}`;
    const mapped = readableStack(stack);
    expect(mapped.split('\n')[0]).toBe(`Error: the caller sent ${url}:1:5 and /x/y.js:2:3`);
    expect(mapped.split('\n')[1]).toMatch(/^\s+at .*thrower\.ts:\d+:\d+\)$/);
    const huge = `Error: ${'/a'.repeat(20_000)}\n${frame}`;
    expect(readableStack(huge)).toBe(huge);
  });

  it('leaves frames of files without a map as they are, and text that is no stack', () => {
    const stack = `Error: x\n    at f (${pathToFileURL(join(dir, 'thrower.ts')).href}:3:10)\n    at node:internal/process/task_queues:95:5`;
    expect(readableStack(stack)).toBe(stack);
    expect(readableStack('no frames here')).toBe('no frames here');
    expect(readableStack('Error: y\n    at g (/var/task/missing/index.mjs:1:200)')).toBe(
      'Error: y\n    at g (/var/task/missing/index.mjs:1:200)',
    );
  });
});

describe('withReadableStack', () => {
  it('maps the error and its causes in place, and returns it', () => {
    const outer = new Error('wrapped', { cause: thrown });
    outer.stack = `Error: wrapped\n    at h (${pathToFileURL(bundle).href}:1:5)`;
    expect(withReadableStack(outer)).toBe(outer);
    expect(outer.stack).not.toMatch(/index\.mjs/);
    expect((outer.cause as Error).stack).toMatch(/thrower\.ts:7:/);
  });

  it('returns a frozen error as it is, and anything that is not an Error', () => {
    const frozen = Object.freeze(new Error('frozen'));
    expect(withReadableStack(frozen)).toBe(frozen);
    expect(withReadableStack('text')).toBe('text');
    expect(withReadableStack(undefined)).toBeUndefined();
  });
});
