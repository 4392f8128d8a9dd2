/**
 * Each function reads only settings the stack gives it (docs/design.md, "The usual changes": a
 * setting). The settings catalogue's `readBy` decides which variables the stack writes into each
 * function's environment; a function whose code reads a setting its `readBy` leaves out would run,
 * deployed, with the default whatever the operator set. So this test builds each function the way
 * Lambda does: its `Config` from the environment the synthesized stack gives it (plus what Lambda
 * itself sets), its runtime and handler from its own factories, and sends it the requests it
 * serves (successes, ERP errors, compressed answers, the scheduled job) over loopback to the ERP
 * double and a Parameters and Secrets extension emulator. Every `Config` property the code reads
 * is recorded, and each must be a setting whose `readBy` names the function and whose variable is
 * in its environment (local-only settings, such as `LICENSE_FILE`, are read and unset on AWS).
 *
 * The other direction (a `readBy` naming a function that never reads the setting) is checked too,
 * for the settings these requests reach.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createExecuteV1Runtime, createHandler as executeV1 } from '../../lambdas/handlers/execute-v1.ts';
import { createExecuteV2Runtime, createHandler as executeV2 } from '../../lambdas/handlers/execute-v2.ts';
import { createMcpRuntime, createHandler as mcp } from '../../lambdas/handlers/mcp.ts';
import { createOperatorRuntime, createLambdaHandler as operator } from '../../lambdas/handlers/operator.ts';
import { createVersionRuntime, createHandler as version } from '../../lambdas/handlers/version.ts';
import { type Config, loadConfig } from '../../lambdas/platform/config.ts';
import { signLicense } from '../../lambdas/platform/license.ts';
import type { FunctionName } from '../../lambdas/platform/names.ts';
import { findRoute } from '../../lambdas/platform/routes.ts';
import { BRAKES_AGE_EVENT, LICENSE_CHECK_EVENT } from '../../lambdas/platform/scheduled-jobs.ts';
import { RUNTIME_SETTINGS, type Setting } from '../../lambdas/platform/settings.ts';
import { ErpProxyStack, FUNCTION_IDS } from '../../lib/erp-proxy-stack.ts';
import { parseStackConfig } from '../../lib/stack-config.ts';
import { ERP_A_ADMIN_KEY, type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import { testApp } from '../support/cdk-app.ts';
import { httpApiEvent, lambdaContext } from '../support/http-api-event.ts';
import {
  EXAMPLE_IDENTITIES_SECRET_ARN,
  EXAMPLE_KEYS_SECRET_ARN,
  EXAMPLE_LICENSE_SECRET_ARN,
  TEST_PROXY_KEY,
} from '../support/test-secrets.ts';

const FUNCTION_NAMES = Object.keys(FUNCTION_IDS) as FunctionName[];
const SESSION_TOKEN = 'session-token-of-the-function';
const cloudWatch = mockClient(CloudWatchClient);
const CATALOGUE = RUNTIME_SETTINGS as Readonly<Record<string, Setting>>;
/** The audit digest secret the stack creates: its ARN is known at deploy time only, so one stands in. */
const AUDIT_DIGEST_SECRET_ARN =
  'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ErpProxy-AuditDigestSecret-AbCdEf';
/** A key whose policy lists `audit`, for `GET /_/audit` (the test's other calls use TEST_PROXY_KEY). */
const AUDITOR_KEY = 'test-auditor-key-0123456789abcdef';
/** The proxy keys in the JSON form: the callers' key without a policy, and the auditor's. */
const PROXY_KEYS_DOCUMENT = JSON.stringify({
  keys: [
    { name: 'caller', key: TEST_PROXY_KEY },
    { name: 'auditor', key: AUDITOR_KEY, policy: { apis: ['audit'] } },
  ],
});

/**
 * The catalogue entries a `Config` property comes from: its own name, or the settings `loadConfig`
 * combines into it.
 */
function settingsOf(property: string): string[] {
  const combined: Record<string, string[]> = {
    runtime: ['functionName'],
    logLevel: ['logLevel', 'powertoolsLogLevel'],
    localKeys: ['proxyApiKey', 'proxyApiKeys'],
    generatedKey: ['proxyApiKey', 'proxyApiKeys'],
  };
  const from = combined[property] ?? (property in CATALOGUE ? [property] : undefined);
  if (from === undefined) throw new Error(`Config.${property} comes from no setting this test knows`);
  return from;
}

/** `config` with every property read recorded in `reads`. */
function recording(config: Config, reads: Set<string>): Config {
  return new Proxy(config, {
    get(target, property, receiver) {
      if (typeof property === 'string') reads.add(property);
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * DynamoDB for the functions (`AWS_ENDPOINT_URL_DYNAMODB`, a local-only setting, stands in for the
 * region's endpoint): an empty audit table for the aux function's `GET /_/audit`, and no brakes item
 * for every function's read of the brakes. Records each operation and table.
 */
async function startDynamoDb(calls: string[]): Promise<Server> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const operation = String(request.headers['x-amz-target'] ?? '').replace(/^DynamoDB_20120810\./, '');
      const { TableName } = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
        TableName?: string;
      };
      calls.push(`${operation} ${TableName}`);
      response
        .writeHead(200, { 'content-type': 'application/x-amz-json-1.0' })
        .end(operation === 'Query' ? '{"Items":[],"Count":0,"ScannedCount":0}' : '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** A Parameters and Secrets extension emulator serving the two secrets. */
async function startExtension(secrets: Record<string, string>): Promise<Server> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const value = secrets[url.searchParams.get('secretId') ?? ''];
    if (request.headers['x-aws-parameters-secrets-token'] !== SESSION_TOKEN || value === undefined) {
      response
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"__type":"ResourceNotFoundException"}');
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ Name: 'secret', SecretString: value }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

interface Built {
  readonly handler: Handler;
}

/** Each function's handler, built from its own factories over `config`. */
const FACTORIES: Record<FunctionName, (config: Config) => Built> = {
  'execute-v1': (config) => ({ handler: executeV1(createExecuteV1Runtime(config)) as Handler }),
  'execute-v2': (config) => ({ handler: executeV2(createExecuteV2Runtime(config)) as Handler }),
  version: (config) => ({ handler: version(createVersionRuntime(config)) as Handler }),
  aux: (config) => ({ handler: operator(createOperatorRuntime(config)) as Handler }),
  mcp: (config) => ({ handler: mcp(createMcpRuntime(config)) as Handler }),
};

/** The requests each function serves: JSON bodies over its routes, and the scheduled job. */
function requestsFor(fn: FunctionName, erp: ErpDouble): unknown[] {
  const instance = { url: erp.url, db: 'erp_a', user_id: 2, api_key: ERP_A_ADMIN_KEY };
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    httpApiEvent(findRoute('POST', path) ?? { method: 'POST', path }, {
      headers: {
        'content-type': 'application/json',
        'x-api-key': TEST_PROXY_KEY,
        'x-request-timeout': '20',
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const gzip = { 'accept-encoding': 'gzip' };
  switch (fn) {
    case 'execute-v1': {
      const call = (action: string, model: string, params: unknown[], keyword: unknown = {}) => ({
        id: 'a',
        action,
        model_id: model,
        params,
        keyword,
        erp_instance: instance,
      });
      return [
        post('/api/erp/execute', call('search_read', 'res.partner', [[]], { fields: ['name'] }), gzip),
        post('/api/erp/execute', call('search_count', 'res.partnerx', [[]])),
        post('/api/erp/execute', call('read', 'res.partner', [[999999], ['name']])),
      ];
    }
    case 'execute-v2': {
      const call = (model: string, method: string, kwargs: unknown) => ({
        id: 'a',
        model_id: model,
        method,
        kwargs,
        erp_instance: instance,
      });
      return [
        post('/v2/erp/execute', call('res.partner', 'search_read', { domain: [], fields: ['name'] }), gzip),
        post('/v2/erp/execute', call('res.partnerx', 'search_count', { domain: [] })),
      ];
    }
    case 'version':
      return [
        post('/api/erp/version', { id: 'v', url: erp.url }, gzip),
        post('/v2/erp/version', { id: 'v', url: erp.url }),
      ];
    case 'mcp': {
      const headers = {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        'x-erp-url': erp.url,
        'x-erp-db': 'erp_a',
        'x-erp-api-key': ERP_A_ADMIN_KEY,
        'x-erp-user-id': '2',
      };
      const message = (id: number, method: string, params: unknown) => ({
        jsonrpc: '2.0',
        id,
        method,
        params,
      });
      return [
        // From a browser page of an allowed origin (the stack's mcpAllowedOrigins): served.
        post('/mcp', message(1, 'tools/list', {}), { ...headers, origin: 'https://agents.example.com' }),
        post(
          '/mcp',
          message(2, 'tools/call', {
            name: 'search_read',
            arguments: { model: 'res.partner', fields: ['name'] },
          }),
          { ...headers, ...gzip },
        ),
        post(
          '/mcp',
          message(3, 'tools/call', { name: 'read', arguments: { model: 'res.partnerx', ids: [1] } }),
          headers,
        ),
        post('/mcp', message(4, 'tools/call', { name: 'erp_version', arguments: {} }), headers),
      ];
    }
    case 'aux': {
      const get = (path: string, key = TEST_PROXY_KEY) =>
        httpApiEvent(findRoute('GET', path) ?? { method: 'GET', path }, {
          headers: { 'x-api-key': key },
        });
      return [
        get('/_/about'),
        get('/_/license'),
        get('/_/metrics'),
        get('/_/audit', AUDITOR_KEY),
        { ...LICENSE_CHECK_EVENT },
        { ...BRAKES_AGE_EVENT },
      ];
    }
  }
}

describe('each function reads only the settings the stack gives it (settings catalogue readBy)', () => {
  let erp: ErpDouble;
  let extension: Server;
  let dynamodb: Server;
  const dynamodbCalls: string[] = [];
  const dynamodbCallsOf = {} as Record<FunctionName, string[]>;
  const environments = {} as Record<FunctionName, Record<string, string>>;
  const reads = {} as Record<FunctionName, Set<string>>;

  beforeAll(async () => {
    erp = await startErpDouble({ port: 0 });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const license = signLicense(
      'Function settings test',
      '2099-12-31',
      privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    );
    extension = await startExtension({
      [EXAMPLE_KEYS_SECRET_ARN]: PROXY_KEYS_DOCUMENT,
      [EXAMPLE_LICENSE_SECRET_ARN]: JSON.stringify(license),
      [EXAMPLE_IDENTITIES_SECRET_ARN]: '{"identities":[]}',
      [AUDIT_DIGEST_SECRET_ARN]: 'a'.repeat(64),
    });
    dynamodb = await startDynamoDb(dynamodbCalls);
    // Every setting with a context key set, so the stack writes each one a function may read.
    const app = testApp({
      allowedTargets: '127.0.0.0/8',
      licensePublicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      buildCommit: '0123456789abcdef0123456789abcdef01234567',
      buildTime: '2026-11-27T00:00:00Z',
      proxyKeysSecretArn: EXAMPLE_KEYS_SECRET_ARN,
      licenseSecretArn: EXAMPLE_LICENSE_SECRET_ARN,
      // OAuth on /mcp, with the values the stack would otherwise derive from what it builds.
      mcpOauthIssuers: 'https://id.example.com',
      mcpOauthAudience: 'https://erp.example.com/mcp',
      mcpOauthIdentitiesSecretArn: EXAMPLE_IDENTITIES_SECRET_ARN,
      mcpAllowedOrigins: 'https://agents.example.com',
    });
    const stack = new ErpProxyStack(app, 'ErpProxy', {
      config: parseStackConfig((key) => app.node.tryGetContext(key)),
    });
    const template = Template.fromStack(stack);
    const port = String((extension.address() as AddressInfo).port);
    for (const fn of FUNCTION_NAMES) {
      const id = stack.getLogicalId(stack.functions[fn].function.node.defaultChild as CfnElement);
      const props = (
        template.findResources('AWS::Lambda::Function')[id] as { Properties: Record<string, unknown> }
      ).Properties;
      const variables = (props.Environment as { Variables: Record<string, unknown> }).Variables;
      const env: Record<string, string> = {};
      // The tables' names and the audit digest secret's ARN are known at deploy time only: values
      // of the same shape stand in.
      const refOf = (construct: { node: { defaultChild?: unknown } }) =>
        JSON.stringify({ Ref: stack.getLogicalId(construct.node.defaultChild as CfnElement) });
      const standIns: Record<string, string> = {
        [refOf(stack.stateTable)]: 'ErpProxy-StateTable-TEST',
        [refOf(stack.auditTable)]: 'ErpProxy-AuditTable-TEST',
        [refOf(stack.auditDigestSecret)]: AUDIT_DIGEST_SECRET_ARN,
      };
      for (const [name, value] of Object.entries(variables)) {
        if (typeof value === 'string') env[name] = value;
        else if (standIns[JSON.stringify(value)] !== undefined) env[name] = standIns[JSON.stringify(value)]!;
        else throw new Error(`${fn}: ${name} is not a plain value in the template`);
      }
      // What Lambda sets itself, and the emulator's port in place of the extension's.
      Object.assign(env, {
        AWS_LAMBDA_FUNCTION_NAME: `erp-proxy-${fn}`,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'ASIAFUNCTIONROLE',
        AWS_SECRET_ACCESS_KEY: 'secret-of-the-function-role',
        AWS_SESSION_TOKEN: SESSION_TOKEN,
        PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: port,
      });
      // Every function's reads of the brakes, and the aux function's audit reads, go to the DynamoDB
      // stand-in (these requests make no write).
      env.AWS_ENDPOINT_URL_DYNAMODB = `http://127.0.0.1:${(dynamodb.address() as AddressInfo).port}`;
      environments[fn] = env;
    }
    // `/_/metrics` on AWS reads CloudWatch: an empty answer, without credentials or network.
    cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
    for (const fn of FUNCTION_NAMES) {
      reads[fn] = new Set();
      const { handler } = FACTORIES[fn](recording(loadConfig(environments[fn]), reads[fn]));
      const before = dynamodbCalls.length;
      for (const event of requestsFor(fn, erp)) {
        const answer = (await handler(event, lambdaContext(fn))) as { statusCode?: number; body?: string };
        // Each request is served (an ERP error is an answer too), not refused by the key, the license or the target policy.
        if (answer.statusCode !== undefined) {
          expect(answer.statusCode, `${fn}: ${answer.body?.slice(0, 300)}`).toBe(200);
        }
      }
      dynamodbCallsOf[fn] = dynamodbCalls.slice(before);
    }
  }, 60_000);

  afterAll(async () => {
    vi.unstubAllEnvs();
    cloudWatch.restore();
    await erp?.close();
    await new Promise<void>((resolve) => (extension ? extension.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (dynamodb ? dynamodb.close(() => resolve()) : resolve()));
  });

  it('serves GET /_/audit from the audit table the stack names, with Queries only', () => {
    expect(dynamodbCallsOf.aux).toContain('Query ErpProxy-AuditTable-TEST');
    expect(dynamodbCalls.filter((call) => call.includes('AuditTable'))).toEqual(
      dynamodbCallsOf.aux.filter((call) => call.startsWith('Query ')),
    );
  });

  it.each(FUNCTION_NAMES)(
    '%s reads the brakes from the state table the stack names, with GetItem only',
    (fn) => {
      const stateCalls = dynamodbCallsOf[fn].filter((call) => !call.includes('AuditTable'));
      expect(stateCalls.length, fn).toBeGreaterThan(0);
      expect(new Set(stateCalls), fn).toEqual(new Set(['GetItem ErpProxy-StateTable-TEST']));
    },
  );

  it.each(FUNCTION_NAMES)('%s: every setting it reads lists it in readBy, and the stack writes it', (fn) => {
    const missing: string[] = [];
    for (const property of reads[fn]) {
      for (const key of settingsOf(property)) {
        const setting = CATALOGUE[key] as Setting;
        // Read on AWS too, but unset there by design (README, Configuration: "local only").
        if (setting.notDeployable?.by === 'local') continue;
        const inEnvironment = setting.env !== undefined && setting.env in environments[fn];
        if (!setting.readBy.includes(fn) || !inEnvironment) {
          missing.push(`${key} (${setting.env}; readBy: ${setting.readBy.join(', ') || 'none'})`);
        }
      }
    }
    expect(missing, `${fn} reads these, but the stack does not give them to it`).toEqual([]);
  });

  it.each(FUNCTION_NAMES)('%s: every setting whose readBy names it is read by it', (fn) => {
    const read = new Set([...reads[fn]].flatMap(settingsOf));
    const unread = Object.entries(CATALOGUE)
      // Lambda sets these for every function, and the AWS SDK reads them from the process's own
      // environment (AWS_REGION), not from Config.
      .filter(([, setting]) => setting.notDeployable?.by !== 'lambda')
      .filter(([key, setting]) => setting.readBy.includes(fn) && !read.has(key))
      .map(([key]) => key);
    expect(unread, `readBy names ${fn}, but its code never read these`).toEqual([]);
  });
});
