/**
 * Examples that hit nothing by accident, and do what they say:
 * - every curl of the README and the guides (LOCAL_EXAMPLE_PAGES) runs against the local proxy (with their proxy key) and the
 *   ERP double, and its sample answer is the double's real answer, byte for byte;
 * - no example targets an ERP's default port: the ERP URLs are the double's (8788);
 * - `npm run erp-double` prints a curl through the proxy at `PORT` that works as printed;
 * - `npm start` prints curls for the port it really listens on, aimed at the double's default
 *   address, and warns at start when the license is invalid or within its warning days.
 * The scripts run as users run them (`tsx`, real processes, loopback only); each is stopped by
 * its own process handle.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { RUNTIME_SETTINGS } from '../../lambdas/platform/settings.ts';
import { ERP_DOUBLE_DEFAULT_PORT } from '../erp-double/index.ts';
import { type Envelope, useErpDouble, withProxy } from '../support/fixtures.ts';
import {
  type CurlExample,
  curlCommands,
  LOCAL_EXAMPLE_PAGES,
  localCurlExamples,
} from '../support/readme-examples.ts';
import { startScript } from '../support/scripts.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOUBLE_DEFAULT_URL = `http://127.0.0.1:${ERP_DOUBLE_DEFAULT_PORT}`;
const PROXY_DEFAULT_URL = `http://127.0.0.1:${RUNTIME_SETTINGS.port.schema.parse(undefined)}`;

/** A port free on 127.0.0.1 now (`PORT` must be a real port: 0 is refused). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Sends a curl example as curl would, its base URL and ERP URL replaced. */
async function run(example: CurlExample, proxyUrl: string, erpUrl: string) {
  const url = example.url.replace(/^http:\/\/[^/]+/, proxyUrl);
  const response = await fetch(url, {
    method: example.method,
    headers: example.headers,
    ...(example.body === undefined ? {} : { body: example.body.replaceAll(DOUBLE_DEFAULT_URL, erpUrl) }),
  });
  return { status: response.status, text: await response.text() };
}

/** The ERP URLs an example's body names (`erp_instance.url`, a version call's `url`). */
function erpUrls(example: CurlExample): string[] {
  const body = JSON.parse(example.body ?? '{}') as { url?: string; erp_instance?: { url?: string } };
  return [body.url, body.erp_instance?.url].filter((url): url is string => url !== undefined);
}

describe('the curl examples of the README and the guides', () => {
  const double = useErpDouble();
  const examples = localCurlExamples();

  it('are all found: every page whose sh examples curl the local proxy is one LOCAL_EXAMPLE_PAGES lists', () => {
    const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((path) => path === 'README.md' || path.startsWith('docs/'));
    const callsTheProxy = new RegExp(`curl -si? ${PROXY_DEFAULT_URL.replaceAll('.', '\\.')}/`);
    const shBlocks = (path: string): string[] =>
      readFileSync(join(ROOT, path), 'utf8').match(/^```sh\n[\s\S]*?^```$/gm) ?? [];
    const calling = tracked.filter((path) => shBlocks(path).some((block) => callsTheProxy.test(block)));
    expect(calling.filter((path) => !LOCAL_EXAMPLE_PAGES.includes(path))).toEqual([]);
    expect(calling.length).toBeGreaterThanOrEqual(2);
  });

  it('call the local proxy at its default address and the ERP double at its own, never an ERP port', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const example of examples) {
      expect(example.url.startsWith(`${PROXY_DEFAULT_URL}/`), example.where).toBe(true);
      expect(erpUrls(example), example.where).toEqual(erpUrls(example).map(() => DOUBLE_DEFAULT_URL));
      expect(example.body, example.where).not.toMatch(/:8069\b/);
    }
  });

  it('answer as shown: each sample answer is the double’s real answer, byte for byte', async () => {
    const keys = new Set(examples.map((example) => example.headers['x-api-key']));
    expect(keys.size).toBe(1);
    const [key] = [...keys];
    await withProxy({ env: { PROXY_API_KEY: key ?? '' } }, async (proxy) => {
      for (const example of examples) {
        const answer = await run(example, proxy.url, double.url);
        expect(answer.status, example.where).toBe(200);
        expect((JSON.parse(answer.text) as Envelope).error, example.where).toBeNull();
        if (example.answer !== undefined) expect(answer.text, example.where).toBe(example.answer);
      }
    });
  });
});

describe('printed curls use the ports in use', () => {
  const double = useErpDouble();

  it('npm run erp-double: its curl reaches the proxy at PORT, and the double where it listens', async () => {
    await withProxy({}, async (proxy) => {
      const { port } = new URL(proxy.url);
      const script = await startScript(
        'test/erp-double/main.ts',
        { ERP_DOUBLE_PORT: '0', PORT: port, HOST: '127.0.0.1' },
        /-d '[^']*'\n/,
      );
      try {
        const printed = script.stdout();
        const doubleUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(printed)?.[1];
        expect(doubleUrl).toBeDefined();
        const [curl, ...others] = curlCommands(printed.slice(printed.indexOf('curl')), 'erp-double output');
        expect(others).toEqual([]);
        expect(curl?.url).toBe(`${proxy.url}/api/erp/execute`);
        expect(erpUrls(curl as CurlExample)).toEqual([doubleUrl]);
        expect(printed).not.toMatch(/:8069\b/);
        // As printed, with the proxy key in place of <PROXY_KEY>.
        const example = {
          ...(curl as CurlExample),
          headers: { ...curl?.headers, 'x-api-key': TEST_PROXY_KEY },
        };
        const answer = await run(example, proxy.url, doubleUrl ?? '');
        expect(answer.status).toBe(200);
        const envelope = JSON.parse(answer.text) as Envelope;
        expect(envelope.error).toBeNull();
        expect(envelope.result).toHaveLength(3);
      } finally {
        await script.stop();
      }
    });
  });

  it("npm start: its curls reach the port it listens on, and the ERP double's default address", async () => {
    const port = await freePort();
    const script = await startScript(
      'bin/serve.ts',
      { PORT: String(port), PROXY_API_KEY: undefined },
      /_\/about\n/,
    );
    try {
      const printed = script.stdout();
      expect(printed).toContain(`erp-proxy listening on http://127.0.0.1:${port}`);
      expect(printed).not.toMatch(/:8069\b/);
      const curls = curlCommands(printed.slice(printed.indexOf('curl')), 'npm start output');
      expect(curls.map((curl) => curl.route.path)).toEqual([
        '/api/erp/version',
        '/api/erp/execute',
        '/_/about',
      ]);
      for (const curl of curls) {
        expect(curl.url.startsWith(`http://127.0.0.1:${port}/`)).toBe(true);
        expect(erpUrls(curl)).toEqual(erpUrls(curl).map(() => DOUBLE_DEFAULT_URL));
      }
      // The generated key is in the curls; the version call works as printed (the double moved).
      const version = await run(curls[0] as CurlExample, `http://127.0.0.1:${port}`, double.url);
      expect(version.status).toBe(200);
      expect((JSON.parse(version.text) as Envelope).result).toMatchObject({ version: '19.0' });
    } finally {
      await script.stop();
    }
  });
});

describe("npm start's curls name the operator's key without printing it", () => {
  /** The `x-api-key` header of each printed curl that has one, with these keys configured. */
  async function printedKeys(env: Record<string, string | undefined>): Promise<string[]> {
    const script = await startScript(
      'bin/serve.ts',
      { PORT: String(await freePort()), ...env },
      /_\/about\n/,
    );
    await script.stop();
    const printed = script.stdout();
    return curlCommands(printed.slice(printed.indexOf('curl')), 'npm start output').flatMap((curl) =>
      curl.headers['x-api-key'] === undefined ? [] : [curl.headers['x-api-key']],
    );
  }

  it("named keys (PROXY_API_KEYS): the first key's name; one plain PROXY_API_KEY: the variable", async () => {
    const billing = 'billing-key-0123456789abcdef';
    const [named, plain] = await Promise.all([
      printedKeys({
        PROXY_API_KEY: undefined,
        PROXY_API_KEYS: JSON.stringify({
          keys: [
            { name: 'billing', key: billing },
            { name: 'ops', key: 'ops-key-0123456789abcdef' },
          ],
        }),
      }),
      printedKeys({ PROXY_API_KEY: TEST_PROXY_KEY, PROXY_API_KEYS: undefined }),
    ]);
    expect(named).toEqual(['<your proxy key "billing">', '<your proxy key "billing">']);
    expect(plain).toEqual(['<your PROXY_API_KEY>', '<your PROXY_API_KEY>']);
    expect([...named, ...plain].join('\n')).not.toContain(billing);
    expect(plain.join('\n')).not.toContain(TEST_PROXY_KEY);
  });
});

describe('npm start warns when the license is invalid or within its warning days', () => {
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-license-start-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A license file valid until `days` days from today (UTC); negative: expired. */
  function licenseFile(name: string, days: number): string {
    const date = new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ licensee: 'ACME', valid_until: date }));
    return file;
  }

  /** What `npm start` prints with this license: the banner's license line, and stderr. */
  async function startWith(env: Record<string, string>): Promise<{ line: string; stderr: string }> {
    const script = await startScript(
      'bin/serve.ts',
      { PORT: String(await freePort()), ...env },
      /_\/about\n/,
    );
    await script.stop();
    return { line: /^License: .*$/m.exec(script.stdout())?.[0] ?? '', stderr: script.stderr() };
  }

  it('expired, expiring, and valid (with the default and a larger LICENSE_WARNING_DAYS)', async () => {
    const [expired, expiring, valid, validWarned] = await Promise.all([
      startWith({ LICENSE_FILE: licenseFile('expired', -3) }),
      startWith({ LICENSE_FILE: licenseFile('expiring', 3) }),
      startWith({ LICENSE_FILE: licenseFile('valid', 100) }),
      startWith({ LICENSE_FILE: licenseFile('valid-warned', 100), LICENSE_WARNING_DAYS: '200' }),
    ]);
    expect(expired.line).toMatch(/^License: NOT VALID \(license expired on \d{4}-\d\d-\d\d\)$/);
    expect(expired.stderr).toMatch(
      /WARNING: the license is not valid \(license expired on \d{4}-\d\d-\d\d\)/,
    );
    expect(expiring.line).toMatch(/^License: ACME, valid until/);
    expect(expiring.stderr).toMatch(
      /WARNING: the license of ACME expires on \d{4}-\d\d-\d\d \(in [23] days\)/,
    );
    expect(valid.line).toMatch(/^License: ACME, valid until/);
    expect(valid.stderr).not.toContain('WARNING');
    expect(validWarned.stderr).toMatch(/WARNING: the license of ACME expires on .* \(in (99|100) days\)/);
  });
});
