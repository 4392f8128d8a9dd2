/**
 * The client package as it is published: `npm run build -w client` (the package's own
 * `tsc -p client/tsconfig.json`) emits ESM and type declarations for every entry that
 * `client/package.json` names, the built module loads in plain Node, and the package has no
 * runtime dependencies.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const clientDir = join(root, 'client');
const manifest = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8')) as {
  name: string;
  type: string;
  main: string;
  types: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  exports: Record<string, { types: string; default: string } | string>;
  files: string[];
  scripts: Record<string, string>;
};

describe('the @erp-proxy/client package', () => {
  let outDir = '';

  beforeAll(() => {
    outDir = mkdtempSync(join(tmpdir(), 'erp-proxy-client-build-'));
    // The package's own build (its `build` script), into a scratch directory.
    execFileSync(
      process.execPath,
      [
        join(root, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(clientDir, 'tsconfig.json'),
        '--outDir',
        outDir,
      ],
      { stdio: 'pipe' },
    );
  }, 120_000);

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('is an ESM package without runtime dependencies, built by tsc', () => {
    expect(manifest.name).toBe('@erp-proxy/client');
    expect(manifest.type).toBe('module');
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    expect(manifest.scripts.build).toBe('tsc -p tsconfig.json');
    expect(manifest.files).toEqual(['dist', 'README.md']);
    expect(existsSync(join(clientDir, 'README.md'))).toBe(true);
  });

  it('emits the module and the declarations that package.json points to', () => {
    const entry = manifest.exports['.'];
    if (typeof entry !== 'object')
      throw new Error('client/package.json: exports["."] must name types and default');
    for (const file of [entry.default, entry.types, manifest.main, manifest.types]) {
      expect(file).toMatch(/^\.\/dist\//);
      expect(existsSync(join(outDir, file.replace(/^\.\/dist\//, '')))).toBe(true);
    }
    const declarations = readFileSync(join(outDir, 'index.d.ts'), 'utf8');
    expect(declarations).toContain('ErpProxy');
    expect(readFileSync(join(outDir, 'proxy.d.ts'), 'utf8')).toMatch(/declare class ErpProxy/);
  });

  it('loads in plain Node and exports the interface', async () => {
    const built = (await import(pathToFileURL(join(outDir, 'index.js')).href)) as Record<string, unknown>;
    for (const name of ['ErpProxy', 'ErpProxyError', 'ErpError', 'ErpTarget']) {
      expect(typeof built[name]).toBe('function');
    }
  });
});
