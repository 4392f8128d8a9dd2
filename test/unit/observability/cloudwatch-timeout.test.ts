/**
 * An unreachable CloudWatch must not hang `GET /_/metrics` until the function times out: the
 * client has connect and request timeouts, so the scrape fails within the aux function's 10 s.
 */

import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import {
  CLOUDWATCH_CONNECT_TIMEOUT_MS,
  CLOUDWATCH_MAX_ATTEMPTS,
  CLOUDWATCH_REQUEST_TIMEOUT_MS,
  createCloudWatchMetricsSource,
} from '../../../lambdas/operator/metrics-source.ts';

let server: Server;
const sockets = new Set<Socket>();

beforeAll(async () => {
  // Accepts connections and reads requests, but never answers.
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  vi.stubEnv('AWS_ENDPOINT_URL_CLOUDWATCH', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'not-a-real-secret');
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
});
afterAll(async () => {
  vi.unstubAllEnvs();
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

it('a CloudWatch that never answers fails the scrape within the aux timeout', async () => {
  // The bound itself fits the aux function's 10 s timeout.
  expect(
    CLOUDWATCH_MAX_ATTEMPTS * (CLOUDWATCH_CONNECT_TIMEOUT_MS + CLOUDWATCH_REQUEST_TIMEOUT_MS),
  ).toBeLessThan(10_000);
  const source = createCloudWatchMetricsSource({
    metricsWindowSeconds: 300,
    metricsCacheSeconds: 60,
    metricsNamespace: 'ErpProxy',
    serviceName: 'erp-proxy',
    region: 'eu-west-1',
  });
  const started = Date.now();
  const outcome = await source.snapshot().then(
    () => 'resolved',
    (error: Error) => error.message,
  );
  expect(outcome).toMatch(/^CloudWatch GetMetricData failed/);
  expect(Date.now() - started).toBeLessThan(10_000);
}, 20_000);
