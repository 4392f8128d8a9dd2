/**
 * An unreachable CloudWatch must not hang `GET /_/metrics` until the function times out: the
 * client has connect and request timeouts, so the scrape fails within the aux function's
 * timeout (the default `auxTimeout`, and the shortest one the synth accepts).
 */

import { beforeAll, expect, it, vi } from 'vitest';
import { createCloudWatchMetricsSource } from '../../../lambdas/operator/metrics-source.ts';
import {
  CLOUDWATCH_CALL_MAX_MS,
  CLOUDWATCH_CONNECT_TIMEOUT_MS,
  CLOUDWATCH_MAX_ATTEMPTS,
  CLOUDWATCH_REQUEST_TIMEOUT_MS,
} from '../../../lambdas/platform/aws/cloudwatch-client-limits.ts';
import {
  MIN_ANSWER_MARGIN_SECONDS,
  MIN_AUX_TIMEOUT_SECONDS,
  parseStackConfig,
} from '../../../lib/stack-config.ts';
import { useSilentEndpoint } from '../../support/silent-endpoint.ts';

const DEFAULT_AUX_TIMEOUT_MS = parseStackConfig(() => undefined).auxTimeoutSeconds * 1000;

useSilentEndpoint('AWS_ENDPOINT_URL_CLOUDWATCH');
beforeAll(() => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'not-a-real-secret');
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
});

it('a CloudWatch that never answers fails the scrape within the aux timeout', async () => {
  // The bound, with the margin to answer, fits the shortest aux timeout the synth accepts, and
  // that is at most the default.
  expect(CLOUDWATCH_CALL_MAX_MS).toBe(
    CLOUDWATCH_MAX_ATTEMPTS * (CLOUDWATCH_CONNECT_TIMEOUT_MS + CLOUDWATCH_REQUEST_TIMEOUT_MS),
  );
  expect(CLOUDWATCH_CALL_MAX_MS + MIN_ANSWER_MARGIN_SECONDS * 1000).toBeLessThanOrEqual(
    MIN_AUX_TIMEOUT_SECONDS * 1000,
  );
  expect(MIN_AUX_TIMEOUT_SECONDS * 1000).toBeLessThanOrEqual(DEFAULT_AUX_TIMEOUT_MS);
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
  expect(Date.now() - started).toBeLessThan(DEFAULT_AUX_TIMEOUT_MS);
}, 20_000);
