/**
 * An unreachable Secrets Manager must not hang a request: the provider's client has connect
 * and request timeouts, so the read fails (the request becomes -32603) within seconds.
 */

import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { DEFAULT_PROVIDERS } from '@aws-lambda-powertools/parameters/base';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { createProxyKeySource } from '../../lambdas/platform/secrets.ts';

let server: Server;
const sockets = new Set<Socket>();

beforeAll(async () => {
  // Accepts connections and reads requests, but never answers.
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  vi.stubEnv(
    'AWS_ENDPOINT_URL_SECRETS_MANAGER',
    `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  );
  delete DEFAULT_PROVIDERS.secrets;
});
afterAll(async () => {
  vi.unstubAllEnvs();
  delete DEFAULT_PROVIDERS.secrets;
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
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
