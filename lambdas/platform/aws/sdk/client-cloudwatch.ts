/**
 * @module platform/aws/sdk/client-cloudwatch
 * Entry of the CloudWatch client shipped with the aux function (lib/proxy-function.ts,
 * `VENDORED`): exactly what `operator/metrics-source.ts` imports from
 * `@aws-sdk/client-cloudwatch`, so esbuild keeps nothing else of the package.
 */
export { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
