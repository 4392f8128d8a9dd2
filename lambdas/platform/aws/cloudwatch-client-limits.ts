/**
 * @module platform/aws/cloudwatch-client-limits
 * The limits of the aux function's CloudWatch client (`operator/metrics-source.ts`), defined
 * here so that the stack (`lib/stack-config.ts`) sizes the shortest aux timeout it accepts from
 * the same numbers: a `GET /_/metrics` whose CloudWatch call fails must still get its answer
 * before Lambda ends the invocation.
 */

/**
 * Connect and per-attempt limits of the CloudWatch client (the SDK's own default is no limit):
 * in a VPC without a `monitoring` endpoint or NAT, a scrape fails within
 * {@link CLOUDWATCH_CALL_MAX_MS} instead of hanging until Lambda ends it.
 */
export const CLOUDWATCH_CONNECT_TIMEOUT_MS = 1_000;
export const CLOUDWATCH_REQUEST_TIMEOUT_MS = 3_000;
export const CLOUDWATCH_MAX_ATTEMPTS = 2;

/**
 * The longest a failing `GetMetricData` call takes: every attempt uses its whole connect and
 * request time, 2 x (1 + 3) s = 8 s. The SDK's back-off before the second attempt (a fraction of
 * a second) is not included; the stack's answer margin covers it.
 */
export const CLOUDWATCH_CALL_MAX_MS =
  CLOUDWATCH_MAX_ATTEMPTS * (CLOUDWATCH_CONNECT_TIMEOUT_MS + CLOUDWATCH_REQUEST_TIMEOUT_MS);
