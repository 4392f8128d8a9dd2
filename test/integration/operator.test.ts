/**
 * The operator endpoints over real HTTP: `/_/about`, `/_/license`, `/_/metrics`, their auth
 * (`AUX_PUBLIC`), and the license refusing execute and version calls while aux keeps working.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, signLicense } from '../../lambdas/platform/license.ts';
import { ROUTES } from '../../lambdas/platform/routes.ts';
import { type Envelope, USERS, useErpAndProxy, withProxy } from '../support/fixtures.ts';
import { type ProxyOptions, TEST_PROXY_KEY } from '../support/proxy-harness.ts';

const KEY = { 'x-api-key': TEST_PROXY_KEY };

describe('operator endpoints', () => {
  const { double, proxy } = useErpAndProxy();

  it('/_/about is public and describes the service', async () => {
    const answer = await proxy.get('/_/about');
    expect(answer.status).toBe(200);
    const about = answer.json as Record<string, unknown>;
    expect(about.name).toBe('erp-proxy');
    expect(about.version).toMatch(/^0\.9\./);
    expect(about.api_versions).toEqual({
      v1: expect.objectContaining({ erp: 'up to 21' }),
      v2: expect.objectContaining({ erp: '19 and later' }),
    });
    expect((about.routes as unknown[]).length).toBe(ROUTES.length);
    expect(about.runtime).toEqual(expect.objectContaining({ node: process.version }));
    expect(about.error_codes).toContainEqual({
      code: -32003,
      http_status: 504,
      may_have_run: true,
      meaning: expect.stringContaining('may have run'),
    });
  });

  it('/_/license and /_/metrics need x-api-key: -32000 envelope with 401', async () => {
    for (const path of ['/_/license', '/_/metrics']) {
      const answer = await proxy.get(path);
      expect(answer.status).toBe(401);
      const envelope = answer.json as Envelope;
      expect(envelope.error?.code).toBe(-32000);
      expect(envelope.id).toBeNull();
    }
  });

  it('/_/license shows the development license of a local run', async () => {
    const answer = await proxy.get('/_/license', KEY);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      licensee: expect.stringMatching(/development/i),
      valid_until: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      is_valid: true,
    });
  });

  it('/_/metrics counts requests after traffic, in Prometheus text', async () => {
    for (let i = 0; i < 3; i += 1) {
      await proxy.post('/api/erp/execute', {
        id: `m${i}`,
        action: 'search_count',
        model_id: 'res.partner',
        params: [[]],
        erp_instance: { url: double.url, db: 'erp_a', user_id: 2, api_key: USERS.adminA.apiKey },
      });
    }
    await proxy.post('/api/erp/execute', '{bad', {});
    const answer = await proxy.get('/_/metrics', KEY);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(answer.text).toContain('# TYPE erp_proxy_requests gauge');
    // What a Prometheus text-format parser makes of the whole answer (more in prometheus-parser.test.ts).
    const families = parsePrometheusTextFormat(answer.text);
    expect(families.length).toBeGreaterThanOrEqual(7);
    for (const family of families) {
      expect(['GAUGE', 'HISTOGRAM', 'SUMMARY'], family.name).toContain(family.type);
      expect(family.name.endsWith('_total'), family.name).toBe(false);
    }
    expect(answer.text).toMatch(/^erp_proxy_requests\{api="v1",outcome="success"\} 3$/m);
    expect(answer.text).toMatch(/^erp_proxy_errors\{api="v1",code="-32700"\} 1$/m);
    expect(answer.text).toMatch(/^erp_proxy_upstream_latency_seconds_count\{api="v1"\} 3$/m);
    expect(answer.text).toMatch(/^erp_proxy_upstream_latency_seconds_bucket\{api="v1",le="60"\} 3$/m);
    expect(answer.text).toMatch(/^erp_proxy_proxy_overhead_seconds_sum\{api="v1"\} \d+(\.\d+)?(e-\d+)?$/m);
    expect(answer.text).not.toContain('_milliseconds');
  });
});

describe('AUX_PUBLIC', () => {
  it('serves the listed endpoints without a key, and only those', async () => {
    await withProxy({ env: { AUX_PUBLIC: 'metrics' } }, async (proxy) => {
      expect((await proxy.get('/_/metrics')).status).toBe(200);
      expect((await proxy.get('/_/license')).status).toBe(401);
    });
  });
});

describe('license enforcement', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'erp-proxy-license-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A proxy that reads `license` from a LICENSE_FILE. */
  const licensed = (license: unknown, env: Record<string, string> = {}): ProxyOptions => {
    const file = join(dir, `license-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(license));
    return { env: { LICENSE_FILE: file, ...env } };
  };

  it('an expired LICENSE_FILE refuses execute and version calls with 403 / code 0; aux keeps working', async () => {
    await withProxy(licensed({ licensee: 'ACME', valid_until: '2020-01-31' }), async (proxy) => {
      const execute = await proxy.post('/v2/erp/execute', {
        id: 'lic',
        model_id: 'res.partner',
        method: 'x',
        kwargs: {},
      });
      expect(execute.status).toBe(403);
      const envelope = execute.json as Envelope;
      expect(envelope.id).toBe('lic');
      expect(envelope.error?.code).toBe(0);
      expect(envelope.error?.message).toContain('expired on 2020-01-31');

      const version = await proxy.post('/api/erp/version', { id: 'lic', url: 'http://127.0.0.1:1' });
      expect(version.status).toBe(403);

      const license = await proxy.get('/_/license', KEY);
      expect(license.status).toBe(200);
      expect(license.json).toEqual({
        licensee: 'ACME',
        valid_until: '2020-01-31',
        is_valid: false,
        reason: expect.stringContaining('expired'),
      });
      expect((await proxy.get('/_/about')).status).toBe(200);
      expect((await proxy.get('/_/metrics', KEY)).status).toBe(200);
    });
  });

  it('the key is checked before the license: a wrong key is still -32000', async () => {
    await withProxy(licensed({ licensee: 'ACME', valid_until: '2020-01-31' }), async (proxy) => {
      const answer = await proxy.post('/api/erp/execute', { id: 'x' }, { 'x-api-key': 'wrong' });
      expect(answer.status).toBe(401);
    });
  });

  it('with LICENSE_PUBLIC_KEY, a correctly signed license is accepted and a tampered one refused', async () => {
    const keys = generateKeyPair();
    const signed = signLicense('ACME', '2999-12-31', keys.privateKeyPem);
    const verifying = { LICENSE_PUBLIC_KEY: keys.publicKeyBase64 };
    await withProxy(licensed(signed, verifying), async (good) => {
      expect((await good.get('/_/license', KEY)).json).toEqual(expect.objectContaining({ is_valid: true }));
    });
    await withProxy(licensed({ ...signed, licensee: 'Someone else' }, verifying), async (tampered) => {
      const refused = await tampered.post('/api/erp/version', { id: 't', url: 'http://127.0.0.1:1' });
      expect(refused.status).toBe(403);
      expect((refused.json as Envelope).error?.message).toMatch(/signature/);
      // A license that serves no call has 0 days left for the expiry alarm, whatever its date
      // (0 seconds in Prometheus's base unit).
      const metrics = await tampered.get('/_/metrics', KEY);
      expect(metrics.text).toMatch(/^erp_proxy_license_remaining_seconds 0$/m);
    });
  });
});
