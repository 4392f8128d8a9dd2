import { describe, expect, it } from 'vitest';
import { buildAbout } from '../../lambdas/operator/about.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { PROXY_ERROR_ROWS, PROXY_ERRORS } from '../../lambdas/platform/error-table.ts';
import { ROUTES } from '../../lambdas/platform/routes.ts';
import pkg from '../../package.json' with { type: 'json' };

describe('buildAbout', () => {
  it('describes the service from package.json, the route table and the runtime', () => {
    // Prepare
    const config = loadConfig({
      AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-aux',
      AWS_REGION: 'eu-central-1',
      BUILD_COMMIT: 'abc1234',
      BUILD_TIME: '2026-01-15T10:00:00Z',
    });

    // Act
    const about = buildAbout(config);

    // Assess
    expect(about).toMatchObject({
      name: 'erp-proxy',
      version: pkg.version,
      description: pkg.description,
      api_versions: {
        v1: { erp: 'up to 21', upstream: 'POST /jsonrpc execute_kw' },
        v2: { erp: '19 and later', upstream: 'POST /json/2/<model>/<method>' },
      },
      build: { commit: 'abc1234', time: '2026-01-15T10:00:00Z' },
      runtime: { node: process.version, region: 'eu-central-1', function_name: 'erp-proxy-aux' },
    });
    expect(about.routes).toHaveLength(ROUTES.length);
    expect(about.routes).toContainEqual({
      method: 'POST',
      path: '/v2/erp/execute',
      auth: 'api-key',
      summary: 'v2 execute (JSON-2, ERP 19+)',
    });
    expect(about.routes.find((r) => r.path === '/_/about')?.auth).toBe('public');
  });

  it('shows the settings in effect from the catalogue, and never a key, a target or a database', () => {
    const config = loadConfig({
      ERP_V1_TRANSPORT: 'json2',
      ERP_V2_TRANSPORT: 'auto',
      ERP_MAX_TIMEOUT: '20',
      ERP_STRIP_DEBUG: 'yes',
      MCP_WRITE_TOOLS: 'on',
      AUX_PUBLIC: 'metrics',
      ERP_ALLOWED_TARGETS: 'erp.internal.example',
      ERP_ALLOWED_DATABASES: 'secret_db_name',
      PROXY_API_KEY: 'about-test-key-0123456789',
    });
    const about = buildAbout(config);
    expect(about.settings).toEqual({
      ERP_DEFAULT_TIMEOUT: 15,
      ERP_MAX_TIMEOUT: 20,
      ERP_V1_TRANSPORT: 'json2',
      ERP_V2_TRANSPORT: 'auto',
      ERP_STRIP_DEBUG: true,
      SERVER_TIMING: 'on',
      MAX_RESPONSE_BYTES: config.maxResponseBytes,
      MCP_WRITE_TOOLS: true,
      MCP_OAUTH_ISSUER: [],
      SECRETS_MAX_AGE: 300,
      AUX_PUBLIC: ['metrics'],
      IDEMPOTENCY_TTL: 86_400,
      CONFIRM_TTL: 600,
      BRAKES_REFRESH: 5,
      AUDIT: 'on',
      AUDIT_RETENTION_DAYS: 400,
      AUDIT_SEALING: 'compliance',
      AUDIT_SEAL_MINUTES: 5,
    });
    const text = JSON.stringify(about);
    expect(text).not.toContain('erp.internal.example');
    expect(text).not.toContain('secret_db_name');
    expect(text).not.toContain('about-test-key-0123456789');
  });

  it('reports null for an unknown build and runtime', () => {
    // Act
    const about = buildAbout(loadConfig({}));

    // Assess
    expect(about.build).toEqual({ commit: null, time: null });
    expect(about.runtime).toEqual({ node: process.version, region: null, function_name: null });
  });

  it.each([
    ['', 'api-key', 'api-key'],
    ['license', 'public', 'api-key'],
    ['metrics', 'api-key', 'public'],
    ['license,metrics', 'public', 'public'],
  ])('with AUX_PUBLIC=%s, /_/license is %s and /_/metrics is %s', (auxPublic, license, metrics) => {
    // Act
    const about = buildAbout(loadConfig({ AUX_PUBLIC: auxPublic }));

    // Assess
    expect(about.routes.find((r) => r.path === '/_/license')?.auth).toBe(license);
    expect(about.routes.find((r) => r.path === '/_/metrics')?.auth).toBe(metrics);
  });

  it('lists the proxy error codes from the error table: status, whether the call may have run, meaning', () => {
    // Act
    const about = buildAbout(loadConfig({}));

    // Assess
    expect(about.error_codes).toHaveLength(PROXY_ERROR_ROWS.length);
    expect(about.error_codes.map((entry) => entry.code)).toEqual(PROXY_ERROR_ROWS.map((row) => row.code));
    for (const entry of about.error_codes) {
      expect(Object.keys(entry)).toEqual(['code', 'http_status', 'may_have_run', 'meaning']);
      expect(entry.meaning).toMatch(/^\S.*\.$/);
    }
    expect(about.error_codes).toContainEqual({
      code: -32003,
      http_status: 504,
      may_have_run: true,
      meaning: PROXY_ERRORS.upstreamTimeout.meaning,
    });
    expect(about.error_codes).toContainEqual({
      code: -32004,
      http_status: 503,
      may_have_run: false,
      meaning: PROXY_ERRORS.upstreamUnavailable.meaning,
    });
    expect(about.error_codes.find((entry) => entry.code === 0)).toMatchObject({
      http_status: 403,
      may_have_run: false,
    });
    expect(about.error_codes.find((entry) => entry.code === -32603)).toMatchObject({
      http_status: 500,
      may_have_run: true,
    });
  });

  it('is plain JSON', () => {
    // Act
    const about = buildAbout(loadConfig({}));

    // Assess
    expect(JSON.parse(JSON.stringify(about))).toEqual(about);
  });
});
