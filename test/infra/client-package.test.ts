/**
 * The client package as another repository gets it: `npm pack -w client` (its `prepack` cleans
 * and builds `dist/`) gives a tarball of the built ESM code, its type declarations, the README
 * and package.json, nothing else; `npm install <tarball> --offline` installs it into a scratch
 * project outside this repository (no runtime dependency, so no registry); there the client
 * README's first example type-checks (strict, against the installed declarations) and runs
 * against the local proxy and the ERP double. One pack and one install per run.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USERS, useErpAndProxy } from '../support/fixtures.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const clientDir = join(root, 'client');
const manifest = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  type: string;
  main: string;
  types: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  exports: Record<string, { types: string; default: string } | string>;
  files: string[];
  scripts: Record<string, string>;
};

const run = promisify(execFile);

/**
 * npm without the network: everything here must work offline. Asynchronous, as every child
 * process of this file that takes seconds: the local proxy and the double answer from this
 * process, and vitest's own timers keep running.
 */
async function npm(args: readonly string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', [...args, '--offline', '--no-audit', '--no-fund'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  return stdout;
}

/**
 * The bound of the steps that run `tsc` (the pack's build, the example's type check). Alone on
 * this 2-core machine `tsc` takes about 7 s; in a full `npm test` beside other test files, the
 * four Odoo servers and other engineers' runs it took over 20 s once (vitest's default bound,
 * where it failed). Six times the quiet time, with room to spare.
 */
const TSC_BOUND_MS = 60_000;

/** The first `ts` code block of the client README. */
function firstReadmeExample(): string {
  const readme = readFileSync(join(clientDir, 'README.md'), 'utf8');
  const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (example === undefined) throw new Error('client/README.md has no ts example');
  return example;
}

describe('the @erp-proxy/client package', () => {
  it('is an ESM package without runtime dependencies, built by tsc on pack', () => {
    expect(manifest.name).toBe('@erp-proxy/client');
    expect(manifest.type).toBe('module');
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    expect(manifest.scripts.build).toBe('tsc -p tsconfig.json');
    expect(manifest.scripts.prepack).toBe('npm run clean && npm run build');
    expect(manifest.files).toEqual(['dist', 'README.md']);
  });
});

describe('the packed client, installed into a project outside the repository', () => {
  const { double, proxy } = useErpAndProxy();
  let work = '';
  let tarball = '';
  let packed: string[] = [];
  let scratch = '';

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'erp-proxy-client-pack-'));
    const output = await npm(['pack', '-w', 'client', '--pack-destination', work, '--json'], root);
    const [report] = JSON.parse(output.slice(output.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    tarball = join(work, report?.filename ?? '');
    packed = (report?.files ?? []).map((file) => file.path).sort();
    // A project of its own, outside this repository (no workspace, no node_modules above it).
    scratch = join(work, 'consumer');
    execFileSync('mkdir', [scratch]);
    writeFileSync(
      join(scratch, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await npm(['install', tarball], scratch);
  }, 2 * TSC_BOUND_MS);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the tarball holds the built code, its declarations, the README and package.json, nothing else', () => {
    expect(relative(root, work).startsWith('..')).toBe(true);
    expect(packed).toContain('package.json');
    expect(packed).toContain('README.md');
    const entry = manifest.exports['.'];
    if (typeof entry !== 'object')
      throw new Error('client/package.json: exports["."] must name types and default');
    for (const file of [entry.default, entry.types, manifest.main, manifest.types]) {
      expect(packed).toContain(file.replace(/^\.\//, ''));
    }
    for (const name of ['errors', 'index', 'proxy', 'target']) {
      expect(packed).toContain(`dist/${name}.js`);
      expect(packed).toContain(`dist/${name}.d.ts`);
    }
    expect(packed.filter((path) => !/^dist\/[\w-]+\.(js|d\.ts)$/.test(path))).toEqual([
      'README.md',
      'package.json',
    ]);
  });

  it('installs from the tarball offline, as a file: dependency, and loads in plain Node', async () => {
    const consumer = JSON.parse(readFileSync(join(scratch, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(consumer.dependencies['@erp-proxy/client']).toMatch(/^file:.*erp-proxy-client-.*\.tgz$/);
    const script = "import('@erp-proxy/client').then((m) => console.log(Object.keys(m).sort().join(',')))";
    const exported = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: scratch,
      encoding: 'utf8',
    });
    for (const name of ['ErpError', 'ErpProxy', 'ErpProxyError', 'ErpTarget'])
      expect(exported).toContain(name);
  });

  it(
    "type-checks and runs the client README's first example against the local proxy and the double",
    async () => {
      // Prepare: the example as written, compiled strictly against the installed package.
      writeFileSync(join(scratch, 'example.ts'), firstReadmeExample());
      writeFileSync(
        join(scratch, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noUncheckedIndexedAccess: true,
            skipLibCheck: false,
            // Node's types come from this repository: the scratch project installs nothing else.
            typeRoots: [join(root, 'node_modules/@types')],
            types: ['node'],
          },
          files: ['example.ts'],
        }),
      );

      // Act: type-check and emit, then run what was emitted.
      await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
        cwd: scratch,
      });
      // Asynchronously: the proxy and the double answer from this process.
      const { stdout } = await run(process.execPath, ['example.js'], {
        cwd: scratch,
        encoding: 'utf8',
        env: {
          ...process.env,
          ERP_PROXY_URL: proxy.url,
          PROXY_API_KEY: TEST_PROXY_KEY,
          ERP_URL: double.url,
          ERP_API_KEY: USERS.adminA.apiKey,
        },
      });

      // Assess
      expect(stdout).toMatch(/^\d+ companies; partner \d+ created, updated and archived\n$/);
    },
    TSC_BOUND_MS,
  );
});
