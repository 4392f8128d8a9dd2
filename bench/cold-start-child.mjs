// One cold start, in a fresh Node process: import a built Lambda bundle and complete one
// invocation of its `handler` with the payload 2.0 event given as JSON in argv, as Lambda would.
// The timings (import, first invocation), the moment the invocation ended (`at`, epoch ms on the
// clock the parent noted the spawn with) and the answer go to fd 3.
// Usage: node cold-start-child.mjs <bundle.mjs> <event-json> <fn>
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [bundle, eventJson, fn] = process.argv.slice(2);
const started = performance.now();
const { handler } = await import(pathToFileURL(bundle).href);
const imported = performance.now();
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: `erp-proxy-${fn}`,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:erp-proxy-${fn}`,
  memoryLimitInMB: '512',
  awsRequestId: 'cold-start',
  logGroupName: 'g',
  logStreamName: 's',
  getRemainingTimeInMillis: () => 28_000,
};
const response = await handler(JSON.parse(eventJson), context);
const invoked = performance.now();
writeSync(
  3,
  JSON.stringify({
    at: performance.timeOrigin + invoked,
    importMs: imported - started,
    invokeMs: invoked - imported,
    statusCode: response.statusCode,
    body: String(response.body).slice(0, 300),
  }),
);
process.exit(0);
