/**
 * The import rule of `lambdas/` (docs/design.md): folders are ranked
 *
 *   handlers -> middleware, operator -> protocol -> core -> upstream -> platform
 *
 * and a module imports only from its own folder or a folder listed after it. `local/` (the
 * local server) may import `handlers/` and `platform/`. Nothing under `lambdas/` imports `lib/`,
 * `bin/`, `bench/` or `test/`; `lib/` (the CDK stack) imports only `lambdas/platform/` from
 * `lambdas/`. Only import specifiers count (static, `export ... from`, side-effect and dynamic
 * `import()`): a path written in a string, such as a handler entry file, is not an import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Folder ranks: a folder may import itself and folders of a higher rank. `middleware/` and
 * `operator/` share a rank: neither imports the other.
 */
const RANK: Readonly<Record<string, number>> = {
  handlers: 0,
  middleware: 1,
  operator: 1,
  protocol: 2,
  core: 3,
  upstream: 4,
  platform: 5,
};

/** Folders outside the ranking, with the folders each may import (besides itself). */
const SIDE_FOLDERS: Readonly<Record<string, readonly string[]>> = {
  local: ['handlers', 'platform'],
};

/** Top-level folders `lambdas/` must never reach into. */
const FORBIDDEN_FROM_LAMBDAS = ['lib', 'bin', 'bench', 'test'];

/** The most `.ts` files allowed directly in `lambdas/` (everything else lives in a role folder). */
const MAX_ROOT_FILES = 3;

/** Repository-relative paths (with `/`) of the `.ts` files under `dir`. */
function typeScriptFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...typeScriptFiles(path));
    else if (entry.name.endsWith('.ts')) found.push(path);
  }
  return found.sort();
}

/**
 * The relative import specifiers of a file, resolved to repository-relative paths. The
 * TypeScript scanner finds every form (static, re-export, side-effect, dynamic) and skips
 * comments and strings.
 */
function relativeImports(file: string): string[] {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
    .map((specifier) =>
      relative(repoRoot, resolve(repoRoot, dirname(file), specifier))
        .split(sep)
        .join('/'),
    );
}

/** The role folder of a path under `lambdas/` (`lambdas/core/x.ts` is `core`); `''` for a root file. */
function lambdasFolder(path: string): string {
  const parts = path.split('/');
  return parts.length > 2 ? parts[1]! : '';
}

/** Why `from` may not import `to` (both under `lambdas/`), or `undefined` when it may. */
function lambdasViolation(from: string, to: string): string | undefined {
  const top = to.split('/')[0]!;
  if (FORBIDDEN_FROM_LAMBDAS.includes(top)) return `lambdas/ never imports ${top}/`;
  if (top !== 'lambdas') return undefined; // package.json and the like
  const source = lambdasFolder(from);
  const target = lambdasFolder(to);
  if (source === target) return undefined;
  // Root files sit above every folder; no folder imports them.
  if (source === '') return undefined;
  if (target === '') return `${source}/ may not import a file at the root of lambdas/`;
  const side = SIDE_FOLDERS[source];
  if (side !== undefined) {
    return side.includes(target) ? undefined : `${source}/ may import only ${side.join('/ and ')}/`;
  }
  const sourceRank = RANK[source];
  const targetRank = RANK[target];
  if (sourceRank === undefined) return `${source}/ is not a known layer of lambdas/`;
  if (targetRank === undefined) return `${target}/ is not a layer ${source}/ may import`;
  if (targetRank > sourceRank) return undefined;
  return targetRank === sourceRank
    ? `${source}/ and ${target}/ are one layer: neither imports the other`
    : `${target}/ is listed before ${source}/`;
}

/** Every `from -> to (why)` breaking the rule, sorted. */
function violations(files: readonly string[], judge: (from: string, to: string) => string | undefined) {
  const found: string[] = [];
  for (const from of files) {
    for (const to of relativeImports(from)) {
      const why = judge(from, to);
      if (why !== undefined) found.push(`${from} -> ${to} (${why})`);
    }
  }
  return found.sort();
}

/**
 * The import circles among `files` (type-only imports count: a circle of types is still two
 * modules that cannot be read one after the other), each as the path that closes it. A
 * depth-first search; each circle is reported once, from the first module of it the search meets.
 */
function importCircles(files: readonly string[]): string[] {
  const known = new Set(files);
  const graph = new Map(files.map((file) => [file, relativeImports(file).filter((to) => known.has(to))]));
  const state = new Map<string, 'open' | 'done'>();
  const circles: string[] = [];
  const visit = (file: string, path: readonly string[]): void => {
    const here = [...path, file];
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') circles.push([...here.slice(here.indexOf(next)), next].join(' -> '));
      else if (state.get(next) === undefined) visit(next, here);
    }
    state.set(file, 'done');
  };
  for (const file of files) if (state.get(file) === undefined) visit(file, []);
  return circles;
}

describe('the import rule of lambdas/ (unit cases)', () => {
  it.each([
    ['lambdas/handlers/chain.ts', 'lambdas/middleware/observe.ts'],
    ['lambdas/handlers/chain.ts', 'lambdas/platform/config.ts'],
    ['lambdas/operator/about.ts', 'lambdas/core/envelope.ts'],
    ['lambdas/core/forward.ts', 'lambdas/upstream/http-client.ts'],
    ['lambdas/upstream/http-client.ts', 'lambdas/upstream/target-policy.ts'],
    ['lambdas/platform/metrics.ts', 'lambdas/platform/shims/stream-web.ts'],
    ['lambdas/local/server.ts', 'lambdas/handlers/runtime.ts'],
    ['lambdas/local/server.ts', 'lambdas/platform/config.ts'],
    ['lambdas/platform/package-info.ts', 'package.json'],
  ])('allows %s -> %s', (from, to) => {
    expect(lambdasViolation(from, to)).toBeUndefined();
  });

  it.each([
    ['lambdas/platform/metrics.ts', 'lambdas/core/request-facts.ts'],
    ['lambdas/upstream/erp-transport.ts', 'lambdas/core/envelope.ts'],
    ['lambdas/core/forward.ts', 'lambdas/middleware/types.ts'],
    ['lambdas/operator/endpoints.ts', 'lambdas/handlers/runtime.ts'],
    ['lambdas/middleware/observe.ts', 'lambdas/operator/prometheus.ts'],
    ['lambdas/local/server.ts', 'lambdas/core/envelope.ts'],
    ['lambdas/handlers/chain.ts', 'lambdas/local/server.ts'],
    ['lambdas/platform/routes.ts', 'lib/erp-proxy-stack.ts'],
    ['lambdas/core/forward.ts', 'test/support/fixtures.ts'],
    ['lambdas/core/forward.ts', 'bin/serve.ts'],
    ['lambdas/core/forward.ts', 'lambdas/index.ts'],
  ])('refuses %s -> %s', (from, to) => {
    expect(lambdasViolation(from, to)).toBeTypeOf('string');
  });

  it('finds every import form and skips comments and strings', () => {
    const { importedFiles } = ts.preProcessFile(
      [
        "import { a } from './a.ts';",
        "import type { B } from '../b.ts';",
        "export { c } from './c.ts';",
        "export * from './d.ts';",
        "import './e.ts';",
        "const f = await import('./f.ts');",
        "// import { g } from './g.ts';",
        "const entry = 'lambdas/handlers/h.ts';",
      ].join('\n'),
      true,
      true,
    );
    expect(importedFiles.map((imported) => imported.fileName)).toEqual([
      './a.ts',
      '../b.ts',
      './c.ts',
      './d.ts',
      './e.ts',
      './f.ts',
    ]);
  });
});

/** The one module that reads the environment (the settings catalogue's parser). */
const CONFIG_MODULE = 'lambdas/platform/config.ts';

/**
 * Where a file reaches the environment other than through the configuration: every `process`
 * that is not a member access of another name than `env` (`process.env`, `process['env']`,
 * `const { env } = process`, `Reflect.get(process, ...)`, `process` passed on). Comments and
 * strings are not code: the TypeScript parser skips them.
 */
function environmentReads(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && node.text === 'process') {
      const parent = node.parent;
      const member =
        parent !== undefined && ts.isPropertyAccessExpression(parent) && parent.expression === node
          ? parent.name.text
          : undefined;
      // The name of a property or a declaration (`{ process: 1 }`, `x.process`) is not the global.
      const named =
        parent !== undefined &&
        ((ts.isPropertyAccessExpression(parent) && parent.name === node) ||
          (ts.isPropertyAssignment(parent) && parent.name === node));
      if (!named && (member === undefined || member === 'env')) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart());
        found.push(`${file}:${line + 1}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The sub-folders of core/ that only the MCP tools use, and those that must not reach into them. */
const CORE_MCP = 'lambdas/core/mcp/';
const BELOW_CORE_MCP = ['lambdas/core/confirm/', 'lambdas/core/policy/'];

describe('layering of the repository', () => {
  const lambdasFiles = typeScriptFiles('lambdas');

  it('finds the modules (sanity check)', () => {
    expect(lambdasFiles).toContain('lambdas/handlers/chain.ts');
    expect(lambdasFiles).toContain('lambdas/platform/config.ts');
  });

  it('lambdas/: a module imports only its own folder or a folder listed after it', () => {
    expect(violations(lambdasFiles, lambdasViolation)).toEqual([]);
  });

  it('lambdas/ has no import circle (issue 34: envelope -> request-facts -> response-encoding -> envelope was one)', () => {
    expect(importCircles(lambdasFiles)).toEqual([]);
  });

  it('lambdas/ imports none of the CDK packages (the runtime bundles must not carry the stack)', () => {
    const cdkImports = lambdasFiles.flatMap((file) =>
      ts
        .preProcessFile(readFileSync(join(repoRoot, file), 'utf8'), true, true)
        .importedFiles.map((imported) => imported.fileName)
        .filter((name) => /^(aws-cdk-lib|constructs|cdk-nag|aws-cdk)(\/|$)/.test(name))
        .map((name) => `${file} -> ${name}`),
    );
    expect(cdkImports).toEqual([]);
  });

  it('no two modules under lambdas/ share a file name (one name per thing)', () => {
    const byName = new Map<string, string[]>();
    for (const file of lambdasFiles) {
      const name = file.split('/').pop() as string;
      byName.set(name, [...(byName.get(name) ?? []), file]);
    }
    expect([...byName.values()].filter((files) => files.length > 1)).toEqual([]);
  });

  it('lambdas/ reads the environment only in platform/config.ts (no process.env, no `const { env } = process`)', () => {
    const reads = lambdasFiles
      .filter((file) => file !== CONFIG_MODULE)
      .flatMap((file) => environmentReads(file, readFileSync(join(repoRoot, file), 'utf8')));
    expect(reads).toEqual([]);
    // The check finds every spelling (and passes the others).
    const spellings = [
      'const { env } = process;',
      "const e = process['env'];",
      'const e = process.env.X;',
      "Reflect.get(process, 'env');",
      'const p = process; p.env;',
    ];
    for (const spelling of spellings) expect(environmentReads('x.ts', spelling), spelling).toHaveLength(1);
    expect(
      environmentReads(
        'x.ts',
        "process.getBuiltinModule('node:http'); // process.env\nconst s = 'process.env'; x.process; ({ process: 1 });",
      ),
    ).toEqual([]);
  });

  it('core/confirm/ and core/policy/ import nothing of core/mcp/ (the arrows inside core/ go down)', () => {
    const upward = lambdasFiles
      .filter((file) => BELOW_CORE_MCP.some((folder) => file.startsWith(folder)))
      .flatMap((file) =>
        relativeImports(file)
          .filter((to) => to.startsWith(CORE_MCP))
          .map((to) => `${file} -> ${to}`),
      );
    expect(upward).toEqual([]);
  });

  it(`lambdas/ holds at most ${MAX_ROOT_FILES} .ts files directly`, () => {
    const rootFiles = lambdasFiles.filter((file) => lambdasFolder(file) === '');
    expect(rootFiles.length, rootFiles.join(', ')).toBeLessThanOrEqual(MAX_ROOT_FILES);
  });

  it('lib/ imports nothing from lambdas/ but lambdas/platform/', () => {
    const libViolation = (_from: string, to: string): string | undefined =>
      to.startsWith('lambdas/') && !to.startsWith('lambdas/platform/')
        ? 'lib/ may import only lambdas/platform/'
        : undefined;
    expect(violations(typeScriptFiles('lib'), libViolation)).toEqual([]);
  });

  it('client/src has no import cycle (a target depends on the ProxyCalls interface, not on the proxy class)', () => {
    const clientFiles = typeScriptFiles('client/src');
    const edges = new Map(
      clientFiles.map((file) => [file, relativeImports(file).map((to) => to.replace(/\.js$/, '.ts'))]),
    );
    const cycles: string[] = [];
    const visit = (file: string, path: readonly string[]): void => {
      for (const to of edges.get(file) ?? []) {
        const at = path.indexOf(to);
        if (at >= 0) cycles.push([...path.slice(at), to].join(' -> '));
        else visit(to, [...path, to]);
      }
    };
    for (const file of clientFiles) visit(file, [file]);
    expect(clientFiles).toContain('client/src/target.ts');
    expect([...new Set(cycles)]).toEqual([]);
  });
});
