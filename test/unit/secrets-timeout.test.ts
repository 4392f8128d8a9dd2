/**
 * An unreachable Secrets Manager must not hang a request: the provider's client has connect
 * and request timeouts, so the read fails (the request becomes -32603) within seconds.
 */

import { DEFAULT_PROVIDERS } from '@aws-lambda-powertools/parameters/base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { createProxyKeySource } from '../../lambdas/platform/secrets.ts';
import { useSilentEndpoint } from '../support/silent-endpoint.ts';

useSilentEndpoint('AWS_ENDPOINT_URL_SECRETS_MANAGER');
// A provider built before this file would keep its own client.
beforeAll(() => {
  delete DEFAULT_PROVIDERS.secrets;
});
afterAll(() => {
  delete DEFAULT_PROVIDERS.secrets;
});

it('a Secrets Manager that never answers fails the key read instead of hanging', async () => {
  const keys = createProxyKeySource(
    loadConfig({ PROXY_KEYS_SECRET_ID: 'erp-proxy/keys', AWS_LAMBDA_FUNCTION_NAME: 'f' }),
  );
  const outcome = await keys.getKeys().then(
    () => 'resolved',
    (error: Error) => error.message,
  );
  expect(outcome).toContain('erp-proxy/keys');
}, 15_000);
