/**
 * Where a bundle's import time goes: each handler is bundled with the stack's esbuild settings,
 * with one change, a line break every {@link PROFILE_LINE_LIMIT} characters or so (esbuild
 * `lineLimit`; the code is the deployed, minified code), so that a line of the bundle maps to
 * one source file through the source map. Each bundle is imported in fresh `node` processes
 * (Lambda mode, NODE_OPTIONS as deployed) under V8's CPU profiler, interleaved across the
 * functions. The samples taken between the start and the end of the import are attributed to
 * what was running: a module of the bundle (a package of node_modules, or one of the project's
 * own files), the loading of a Node built-in module, V8 parsing and compiling the bundle, Node
 * reading the source map (`--enable-source-maps`), garbage collection, or the rest of Node's ESM
 * loader. A module's part is the time spent in its own code, including its top-level statements:
 * the zod schemas a project module builds at load count as zod.
 *
 * The profiler slows the process down (about twice here: it records every compiled function),
 * so the shares are what counts; the profiled milliseconds weigh them.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { type FunctionName, HANDLER_ENTRIES } from '../lambdas/platform/routes.ts';
import { esbuildOptions } from '../lib/proxy-function.ts';
import { median } from './stats.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Characters per line of the profiled bundle (the deployed one has a few lines of 10-40 KB). */
const PROFILE_LINE_LIMIT = 100;
/** Sampling interval of the profiler, in microseconds. */
const SAMPLING_INTERVAL_US = 100;

/** The subset of V8's `.cpuprofile` format read here. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
      readonly columnNumber: number;
    };
    readonly children?: readonly number[];
    readonly positionTicks?: readonly { readonly line: number; readonly ticks: number }[];
  }[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Which bundles are imported, how often, where they are built, in what environment. */
export interface ImportRunOptions {
  readonly runs: number;
  readonly functions: readonly FunctionName[];
  readonly bundleDir: string;
  readonly env: NodeJS.ProcessEnv;
}

/** One bundle's import, profiled: milliseconds (profiled clock) by what was running. */
export interface ImportProfile {
  readonly fn: FunctionName;
  readonly runs: number;
  /** Median profiled duration of the import (the window the samples were taken from). */
  readonly importMs: number;
  /** Median milliseconds per part; the parts of one run add up to its import. */
  readonly parts: ReadonlyMap<string, number>;
}

/** Parts with these names are not modules; the report explains them. */
export const PART = {
  compile: 'V8: parse and compile the bundle',
  sourceMap: 'source map (--enable-source-maps)',
  gc: 'garbage collection',
  builtins: 'Node built-in modules, while compiling (unnamed)',
  read: 'Node: read and decode the bundle file',
  resolve: 'Node: resolve import specifiers',
  loader: 'Node: ESM loader, other',
  idle: 'idle (waiting on the file system)',
} as const;

/** Who a part's time belongs to: the project's code, its dependencies, or Node and V8 themselves. */
export type PartOwner = 'project' | 'dependencies' | 'node';

export function ownerOfPart(part: string): PartOwner {
  if (part.startsWith('lambdas/')) return 'project';
  if ((Object.values(PART) as string[]).includes(part) || part.startsWith('node:')) return 'node';
  // esbuild's helpers and the require shim are the bundler's, counted with Node and V8.
  return part.startsWith('bundle code without a source') ? 'node' : 'dependencies';
}

/** A file of the bundle as a part: `zod`, `@middy/core`, or a project path such as `lambdas/core/schemas.ts`. */
export function moduleOfSource(source: string): string {
  const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  return pkg?.[1] ?? source;
}

/**
 * The part a sample belongs to, from its stack (leaf first). Bundle code is mapped to its source
 * module; Node's own code is named by what it was doing for the import.
 */
function partOfStack(
  stack: readonly CpuProfile['nodes'][number][],
  line: number | undefined,
  bundleUrl: string,
  moduleAt: (line: number, column: number) => string,
): string {
  const [leaf] = stack;
  if (!leaf) return PART.loader;
  const frame = leaf.callFrame;
  if (frame.functionName === '(garbage collector)') return PART.gc;
  if (frame.functionName === '(idle)') return PART.idle;
  if (frame.url === bundleUrl)
    return moduleAt(line ?? frame.lineNumber, line === undefined ? frame.columnNumber : 0);
  if (stack.some((node) => node.callFrame.url.includes('source_map'))) return PART.sourceMap;
  // Loading a built-in module: named by the outermost public one on the stack (`node:zlib`),
  // unnamed while it is being compiled (it is not on the stack yet).
  if (stack.some((node) => node.callFrame.functionName === 'compileForInternalLoader')) {
    const outermost = stack.filter((node) => /^node:(?!internal\/)/.test(node.callFrame.url)).at(-1);
    return outermost ? `${outermost.callFrame.url} (built-in module)` : PART.builtins;
  }
  if (frame.functionName === 'compileSourceTextModule') return PART.compile;
  // Bundle code calling into Node (a built-in's function): counted with the caller's module.
  const caller = stack.find((node) => node.callFrame.url === bundleUrl);
  if (caller) return moduleAt(caller.callFrame.lineNumber, caller.callFrame.columnNumber);
  const names = stack.map((node) => node.callFrame.functionName);
  if (names.includes('getSource') || names.includes('readFileHandle') || names.includes('stringify'))
    return PART.read;
  if (names.includes('defaultResolve')) return PART.resolve;
  return PART.loader;
}

/** Attributes the samples of `profile` taken in [fromUs, toUs] (V8 profile clock, µs). */
export function attributeImport(
  profile: CpuProfile,
  bundleFile: string,
  map: SourceMap,
  fromUs: number,
  toUs: number,
): Map<string, number> {
  const bundleUrl = pathToFileURL(bundleFile).href;
  const bundleDir = dirname(bundleFile);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const moduleCache = new Map<string, string>();
  const moduleAt = (line: number, column: number): string => {
    const key = `${line}:${column}`;
    let part = moduleCache.get(key);
    if (part === undefined) {
      const entry = map.findEntry(line, column) as { originalSource?: string };
      part = entry.originalSource
        ? moduleOfSource(relative(ROOT, resolve(bundleDir, entry.originalSource)))
        : 'bundle code without a source (esbuild helpers, the require shim)';
      moduleCache.set(key, part);
    }
    return part;
  };
  // A node's self time is spread over the lines its position ticks name (1-based).
  const lineShares = new Map<number, { line: number; share: number }[]>();
  for (const node of profile.nodes) {
    const ticks = node.positionTicks ?? [];
    const total = ticks.reduce((sum, tick) => sum + tick.ticks, 0);
    if (total > 0)
      lineShares.set(
        node.id,
        ticks.map((tick) => ({ line: tick.line - 1, share: tick.ticks / total })),
      );
  }
  const parts = new Map<string, number>();
  const add = (part: string, us: number) => parts.set(part, (parts.get(part) ?? 0) + us);
  let time = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i] ?? 0;
    // A sample stands for the interval up to the next one.
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (time < fromUs || time > toUs) continue;
    const stack: CpuProfile['nodes'][number][] = [];
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parentOf.get(id)) {
      const node = byId.get(id);
      if (node) stack.push(node);
    }
    const leafId = profile.samples[i] as number;
    const shares = byId.get(leafId)?.callFrame.url === bundleUrl ? lineShares.get(leafId) : undefined;
    if (shares) {
      for (const { line, share } of shares) add(partOfStack(stack, line, bundleUrl, moduleAt), us * share);
    } else {
      add(partOfStack(stack, undefined, bundleUrl, moduleAt), us);
    }
  }
  return new Map([...parts].map(([part, us]) => [part, us / 1000]));
}

/** The child: reports the monotonic clock (µs, the profile's clock) around the import on fd 3. */
const PROFILED_CHILD = `
const now = () => Number(process.hrtime.bigint() / 1000n);
const from = now();
await import(process.argv[1]);
const to = now();
(await import('node:fs')).writeSync(3, JSON.stringify({ from, to }));
`;

/** Runs `node` with `args`; the child reports one JSON object on fd 3. */
function runChild(args: readonly string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit', 'pipe'] });
    let report = '';
    child.stdio[3]?.on('data', (chunk: Buffer) => {
      report += chunk.toString('utf8');
    });
    child.on('error', fail);
    child.on('exit', (code) =>
      code === 0
        ? done(JSON.parse(report) as unknown)
        : fail(new Error(`node ${args.join(' ').slice(0, 120)} exited with ${code}`)),
    );
  });
}

/**
 * Profiles the import of each function's (unminified) bundle `runs` times, interleaved, and
 * returns the median milliseconds of each part.
 */
export async function profileImports(options: ImportRunOptions): Promise<ImportProfile[]> {
  const bundles = new Map<FunctionName, { file: string; map: SourceMap }>();
  for (const fn of options.functions) {
    const file = join(options.bundleDir, 'profile', fn, 'index.mjs');
    await build({
      ...esbuildOptions(resolve(ROOT, HANDLER_ENTRIES[fn]), file),
      lineLimit: PROFILE_LINE_LIMIT,
    });
    const payload = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as SourceMapPayload;
    bundles.set(fn, { file, map: new SourceMap(payload) });
  }
  const samples = new Map<FunctionName, { total: number[]; parts: Map<string, number>[] }>(
    options.functions.map((fn) => [fn, { total: [], parts: [] }]),
  );
  const work = mkdtempSync(join(tmpdir(), 'erp-proxy-import-profile-'));
  try {
    for (let run = 0; run < options.runs; run++) {
      for (const fn of options.functions) {
        const bundle = bundles.get(fn);
        if (!bundle) continue;
        const dir = join(work, `${fn}-${run}`);
        mkdirSync(dir);
        const window = (await runChild(
          [
            '--cpu-prof',
            `--cpu-prof-dir=${dir}`,
            `--cpu-prof-interval=${SAMPLING_INTERVAL_US}`,
            '--input-type=module',
            '-e',
            PROFILED_CHILD,
            pathToFileURL(bundle.file).href,
          ],
          options.env,
        )) as { from: number; to: number };
        const [name] = readdirSync(dir).filter((file) => file.endsWith('.cpuprofile'));
        if (!name) throw new Error(`no CPU profile for ${fn}`);
        const profile = JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile;
        const parts = attributeImport(profile, bundle.file, bundle.map, window.from, window.to);
        samples.get(fn)?.total.push((window.to - window.from) / 1000);
        samples.get(fn)?.parts.push(parts);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return options.functions.map((fn) => {
    const { total, parts } = samples.get(fn) ?? { total: [], parts: [] };
    const names = new Set(parts.flatMap((run) => [...run.keys()]));
    return {
      fn,
      runs: total.length,
      importMs: median(total),
      parts: new Map([...names].map((name) => [name, median(parts.map((run) => run.get(name) ?? 0))])),
    };
  });
}

/** One bundle's top-level code, timed without the profiler: milliseconds by module. */
export interface TopLevelTimes {
  readonly fn: FunctionName;
  readonly runs: number;
  /** Median whole import. */
  readonly importMs: number;
  /** Median time before the bundle's first statement runs: read, compile, link, built-in modules. */
  readonly beforeCodeMs: number;
  /** Median milliseconds of each module's top-level statements, calls they make included. */
  readonly modules: ReadonlyMap<string, number>;
}

/**
 * Puts a call to `globalThis.__erpProxyMark` before each module's code in an unminified bundle:
 * esbuild starts each one with a `// path` comment at the start of a line.
 */
export function markModules(code: string): string {
  return code.replace(
    /^\/\/ (\S+\.(?:[cm]?[jt]s|json))$/gm,
    (comment, path: string) =>
      `globalThis.__erpProxyMark(${JSON.stringify(moduleOfSource(path))});\n${comment}`,
  );
}

/** The child: times the import and the marks on fd 3. */
const MARKS_CHILD = `
const marks = [];
globalThis.__erpProxyMark = (name) => marks.push([name, performance.now()]);
const from = performance.now();
await import(process.argv[1]);
const to = performance.now();
(await import('node:fs')).writeSync(3, JSON.stringify({ from, to, marks }));
`;

/**
 * Times the top-level code of each module of each function's bundle: the bundle is built without
 * minification, with a mark before each module's code (in the order esbuild runs them), and
 * imported in fresh processes; a module's time runs from its mark to the next one. A module whose
 * code esbuild wraps to run later (a target of a dynamic `import()`, and what it imports) counts
 * where it is first run.
 */
export async function timeTopLevel(options: ImportRunOptions): Promise<TopLevelTimes[]> {
  const files = new Map<FunctionName, string>();
  for (const fn of options.functions) {
    const file = join(options.bundleDir, 'top-level', fn, 'index.mjs');
    const result = await build({
      ...esbuildOptions(resolve(ROOT, HANDLER_ENTRIES[fn]), file),
      minify: false,
      sourcemap: false,
      write: false,
    });
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, markModules(result.outputFiles?.[0]?.text ?? ''));
    files.set(fn, file);
  }
  const runs = new Map<FunctionName, { whole: number[]; before: number[]; modules: Map<string, number>[] }>(
    options.functions.map((fn) => [fn, { whole: [], before: [], modules: [] }]),
  );
  for (let run = 0; run < options.runs; run++) {
    for (const fn of options.functions) {
      const file = files.get(fn);
      const times = runs.get(fn);
      if (!file || !times) continue;
      const report = await runChild(
        ['--input-type=module', '-e', MARKS_CHILD, pathToFileURL(file).href],
        options.env,
      );
      const { from, to, marks } = report as { from: number; to: number; marks: [string, number][] };
      const modules = new Map<string, number>();
      marks.forEach(([name, at], index) => {
        const end = marks[index + 1]?.[1] ?? to;
        modules.set(name, (modules.get(name) ?? 0) + end - at);
      });
      times.whole.push(to - from);
      times.before.push((marks[0]?.[1] ?? to) - from);
      times.modules.push(modules);
    }
  }
  return options.functions.map((fn) => {
    const { whole, before, modules } = runs.get(fn) ?? { whole: [], before: [], modules: [] };
    const names = new Set(modules.flatMap((run) => [...run.keys()]));
    return {
      fn,
      runs: whole.length,
      importMs: median(whole),
      beforeCodeMs: median(before),
      modules: new Map([...names].map((name) => [name, median(modules.map((run) => run.get(name) ?? 0))])),
    };
  });
}
