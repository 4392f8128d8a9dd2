import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { ProxyContext } from '../../../lambdas/core/request-facts.ts';
import { licenseCheck } from '../../../lambdas/middleware/license-check.ts';
import { LicenseError } from '../../../lambdas/platform/errors.ts';
import type { LicenseStatus } from '../../../lambdas/platform/license.ts';
import type { LicenseSource } from '../../../lambdas/platform/secrets.ts';

function sourceOf(status: LicenseStatus): LicenseSource {
  return { getLicense: async () => status };
}

function chain(source: LicenseSource) {
  let handlerCalls = 0;
  const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, ProxyContext>()
    .use(licenseCheck(source))
    .handler(async () => {
      handlerCalls++;
      return { statusCode: 200, body: '{}' };
    });
  const event = { rawPath: '/v1/erp/execute' } as APIGatewayProxyEventV2;
  const context = {
    proxy: { api: 'v1', startedAt: 0, envelopeId: null },
  } as unknown as ProxyContext;
  return { invoke: () => handler(event, context), calls: () => handlerCalls };
}

describe('licenseCheck middleware', () => {
  it('lets the request through when the license is valid', async () => {
    // Prepare
    const { invoke, calls } = chain(
      sourceOf({ licensee: 'ACME', valid_until: '2099-12-31', is_valid: true, days_left: 1000 }),
    );

    // Act
    const response = await invoke();

    // Assess
    expect(response).toEqual({ statusCode: 200, body: '{}' });
    expect(calls()).toBe(1);
  });

  it.each([
    ['expired', 'license expired on 2026-01-31'],
    ['unsigned', 'license signature is missing'],
    ['not configured', 'no license configured'],
  ])('refuses with a LicenseError (code 0, HTTP 403) when the license is %s', async (_case, reason) => {
    // Prepare
    const { invoke, calls } = chain(
      sourceOf({ licensee: 'ACME', valid_until: '2026-01-31', is_valid: false, reason, days_left: -3 }),
    );

    // Act
    const error = await invoke().catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(LicenseError);
    expect(error).toMatchObject({
      code: 0,
      httpStatus: 403,
      message: `License invalid: ${reason}. Operators: see GET /_/license.`,
    });
    expect(calls()).toBe(0);
  });

  it('lets a failure to read the license propagate unchanged (it becomes an internal error)', async () => {
    // Prepare
    const failure = new Error('license secret erp-proxy/license could not be read: throttled');
    const { invoke } = chain({ getLicense: async () => Promise.reject(failure) });

    // Act
    const error = await invoke().catch((e: unknown) => e);

    // Assess
    expect(error).toBe(failure);
  });
});
