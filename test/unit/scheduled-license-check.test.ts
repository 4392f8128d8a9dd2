/**
 * The aux function's hourly license check (issue 24): the scheduled event records
 * `LicenseDaysLeft` through Powertools Metrics (EMF) with the name, namespace and dimensions the
 * `LicenseExpiring` alarm reads, and writes one log line, without the API Gateway chain; an API
 * Gateway event is never taken for it, nor it for one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createLambdaHandler } from '../../lambdas/handlers/operator.ts';
import { createRuntime, type Runtime } from '../../lambdas/handlers/runtime.ts';
import { isHttpApiEvent } from '../../lambdas/middleware/types.ts';
import { LocalMetricsStore } from '../../lambdas/operator/local-metrics-store.ts';
import {
  LICENSE_CHECK_LOG_MESSAGE,
  runScheduledLicenseCheck,
} from '../../lambdas/operator/scheduled-license-check.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import {
  evaluateLicense,
  generateKeyPair,
  type LicenseStatus,
  signLicense,
} from '../../lambdas/platform/license.ts';
import { createLogger } from '../../lambdas/platform/logger.ts';
import { createMetrics } from '../../lambdas/platform/metrics/powertools.ts';
import { licenseDaysLeftValue } from '../../lambdas/platform/metrics/record.ts';
import { ROUTES, routeKey } from '../../lambdas/platform/routes.ts';
import { isLicenseCheckEvent, LICENSE_CHECK_EVENT } from '../../lambdas/platform/scheduled-jobs.ts';
import type { LicenseSource } from '../../lambdas/platform/secrets.ts';
import { captureLogLines } from '../support/captured-output.ts';
import { httpApiEvent } from '../support/http-api-event.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const isEmf = (line: Record<string, unknown>): boolean => '_aws' in line;

const DIR = mkdtempSync(join(tmpdir(), 'erp-proxy-license-check-'));
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(() => {
  rmSync(DIR, { recursive: true, force: true });
});

/** A license file valid for `days` more days (UTC), negative for one that has expired. */
function licenseFile(days: number, name = `license-${days}.json`): string {
  const date = new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
  const path = join(DIR, name);
  writeFileSync(path, JSON.stringify({ licensee: 'Example Ltd', valid_until: date }));
  return path;
}

const LAMBDA_CONTEXT = {
  functionName: 'erp-proxy-aux',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:erp-proxy-aux',
  memoryLimitInMB: '256',
  awsRequestId: 'scheduled-invocation-1',
  logGroupName: 'g',
  logStreamName: 's',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

/** A runtime as the deployed aux function builds it (Lambda mode: EMF and log lines on stdout). */
function lambdaRuntime(env: Record<string, string>, license?: LicenseSource): Runtime {
  const config = loadConfig({
    AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-aux',
    PROXY_API_KEY: TEST_PROXY_KEY,
    ...env,
  });
  return createRuntime(config, license ? { license } : {});
}

describe('the scheduled license check, as deployed', () => {
  it('records LicenseDaysLeft as the LicenseExpiring alarm reads it, with one log line and no request line', async () => {
    // Prepare
    const handler = createLambdaHandler(lambdaRuntime({ LICENSE_FILE: licenseFile(42) }));
    const lines = captureLogLines();

    // Act
    const result = await handler({ ...LICENSE_CHECK_EVENT }, LAMBDA_CONTEXT);

    // Assess: the alarm reads namespace ErpProxy, metric LicenseDaysLeft, dimensions {service: erp-proxy} only.
    expect(result).toEqual({ job: 'license-days-left', is_valid: true, license_days_left: 42 });
    const emf = lines().filter(isEmf);
    expect(emf).toHaveLength(1);
    expect(emf[0]).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: 'ErpProxy',
            Dimensions: [['service']],
            Metrics: [{ Name: 'LicenseDaysLeft', Unit: 'Count' }],
          },
        ],
      },
      service: 'erp-proxy',
      LicenseDaysLeft: 42,
    });
    const logs = lines().filter((line) => !isEmf(line));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      level: 'INFO',
      message: LICENSE_CHECK_LOG_MESSAGE,
      job: 'license-days-left',
      is_valid: true,
      license_days_left: 42,
      function_request_id: 'scheduled-invocation-1',
    });
    expect(logs[0]).not.toHaveProperty('correlation_id');
  });

  it('carries no correlation id of a request the execution environment served before', async () => {
    const runtime = lambdaRuntime({ LICENSE_FILE: licenseFile(42) });
    const handler = createLambdaHandler(runtime);
    const lines = captureLogLines();
    const about = ROUTES.find((route) => route.path === '/_/about')!;

    await handler(httpApiEvent(about), LAMBDA_CONTEXT);
    await handler({ ...LICENSE_CHECK_EVENT }, LAMBDA_CONTEXT);

    const logs = lines().filter((line) => !isEmf(line));
    expect(logs.map((line) => line.message)).toEqual(['request', LICENSE_CHECK_LOG_MESSAGE]);
    expect(logs[0]).toHaveProperty('correlation_id', 'req-/_/about');
    expect(logs[1]).not.toHaveProperty('correlation_id');
  });

  it('records 0 when no license is configured, and says why at WARN', async () => {
    // A deployed function without a license reads as "no license configured", as the placeholder does.
    const handler = createLambdaHandler(lambdaRuntime({}));
    const lines = captureLogLines();

    expect(await handler({ ...LICENSE_CHECK_EVENT }, LAMBDA_CONTEXT)).toMatchObject({
      is_valid: false,
      license_days_left: 0,
    });
    expect(lines().find(isEmf)).toMatchObject({ LicenseDaysLeft: 0 });
    // The environment's first license read also gives its once-only warning (platform/license-notice.ts).
    const logs = lines().filter((line) => !isEmf(line));
    expect(logs.map((line) => line.message)).toEqual([
      expect.stringMatching(/^license: the license is not valid \(no license configured/),
      LICENSE_CHECK_LOG_MESSAGE,
    ]);
    expect(logs[1]).toMatchObject({
      level: 'WARN',
      message: LICENSE_CHECK_LOG_MESSAGE,
      is_valid: false,
      license_days_left: 0,
      reason: expect.stringMatching(/^no license configured/),
    });
  });

  it('fails the invocation, records nothing and logs an ERROR when the license secret cannot be read', async () => {
    const unreadable: LicenseSource = {
      getLicense: () =>
        Promise.reject(
          new Error('license secret example could not be read: HTTP 400 (AccessDeniedException)'),
        ),
    };
    const handler = createLambdaHandler(lambdaRuntime({}, unreadable));
    const lines = captureLogLines();

    await expect(handler({ ...LICENSE_CHECK_EVENT }, LAMBDA_CONTEXT)).rejects.toThrow(/could not be read/);
    expect(lines().filter(isEmf)).toEqual([]);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        message: LICENSE_CHECK_LOG_MESSAGE,
        job: 'license-days-left',
      }),
    ]);
  });
});

describe('what the check records for each license', () => {
  const now = new Date('2030-01-10T12:00:00Z');
  const { privateKeyPem, publicKeyBase64 } = generateKeyPair();
  const signed = (validUntil: string) =>
    JSON.stringify(signLicense('Example Ltd', validUntil, privateKeyPem));
  const otherKey = generateKeyPair().privateKeyPem;
  const cases: [string, LicenseStatus, number][] = [
    ['valid, 20 days left', evaluateLicense(signed('2030-01-30'), { publicKey: publicKeyBase64, now }), 20],
    ['valid, its last day', evaluateLicense(signed('2030-01-10'), { publicKey: publicKeyBase64, now }), 0],
    ['expired 9 days ago', evaluateLicense(signed('2030-01-01'), { publicKey: publicKeyBase64, now }), -9],
    [
      'a bad signature, dated next year',
      evaluateLicense(JSON.stringify(signLicense('Example Ltd', '2031-01-10', otherKey)), {
        publicKey: publicKeyBase64,
        now,
      }),
      0,
    ],
    ['malformed', evaluateLicense('{"licensee":"Example Ltd"}', { now }), 0],
    ['not JSON', evaluateLicense('not json', { now }), 0],
  ];

  it.each(cases)('%s', async (_what, status, expected) => {
    expect(licenseDaysLeftValue(status)).toBe(expected);
    const store = new LocalMetricsStore();
    const config = loadConfig({ LOG_LEVEL: 'SILENT' });
    const deps = {
      license: { getLicense: async () => status },
      metrics: createMetrics(config, { store }),
      logger: createLogger(config),
    };

    expect((await runScheduledLicenseCheck(deps)).license_days_left).toBe(expected);

    const records = store.recentRecords().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toEqual([expect.objectContaining({ LicenseDaysLeft: expected, service: 'erp-proxy' })]);
  });
});

describe('which invocation is which', () => {
  const about = ROUTES.find((route) => route.path === '/_/about')!;

  it('takes the exact scheduled event, and nothing API Gateway can send, for the check', () => {
    expect(isLicenseCheckEvent(LICENSE_CHECK_EVENT)).toBe(true);
    expect(isLicenseCheckEvent(JSON.parse(JSON.stringify(LICENSE_CHECK_EVENT)))).toBe(true);
    for (const route of ROUTES) {
      const body = JSON.stringify(LICENSE_CHECK_EVENT);
      const event = httpApiEvent(route, {
        body,
        rawQueryString: 'erp_proxy_job=license-days-left',
        queryStringParameters: { erp_proxy_job: 'license-days-left' },
        headers: { erp_proxy_job: 'license-days-left' },
      });
      expect(isLicenseCheckEvent(event), routeKey(route)).toBe(false);
      expect(isHttpApiEvent(event), routeKey(route)).toBe(true);
      // Even with the job's field beside API Gateway's, it is a request.
      expect(isLicenseCheckEvent({ ...event, ...LICENSE_CHECK_EVENT })).toBe(false);
    }
    expect(isHttpApiEvent(LICENSE_CHECK_EVENT)).toBe(false);
  });

  it.each([
    ['another job', { erp_proxy_job: 'something-else' }],
    ['the job with another field', { ...LICENSE_CHECK_EVENT, version: '2.0' }],
    [
      "EventBridge's own scheduled event (a rule without the constant input)",
      { version: '0', source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} },
    ],
    ['an API Gateway REST (payload 1.0) event', { httpMethod: 'GET', path: '/_/about', requestContext: {} }],
    ['nothing', null],
    ['a list', [LICENSE_CHECK_EVENT]],
  ])('refuses %s: neither the check nor a request', async (_what, event) => {
    const handler = createLambdaHandler(lambdaRuntime({ LICENSE_FILE: licenseFile(42) }));
    const lines = captureLogLines();

    await expect(handler(event, LAMBDA_CONTEXT)).rejects.toThrow(/neither an API Gateway HTTP API/);
    expect(lines()).toEqual([]);
  });

  it('serves an API Gateway request through the operator chain, never as the check', async () => {
    const handler = createLambdaHandler(lambdaRuntime({ LICENSE_FILE: licenseFile(42) }));
    const lines = captureLogLines();

    const response = await handler(
      httpApiEvent(about, { body: JSON.stringify(LICENSE_CHECK_EVENT) }),
      LAMBDA_CONTEXT,
    );

    expect(response).toMatchObject({ statusCode: 200 });
    const logged = lines();
    expect(logged.filter((line) => !isEmf(line)).map((line) => line.message)).toEqual(['request']);
    expect(logged.some((line) => 'LicenseDaysLeft' in line)).toBe(false);
  });
});
