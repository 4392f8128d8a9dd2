/**
 * `docs/openapi.json`: the committed file is what `npm run openapi` generates now (from the zod
 * schemas, the route table and the error table), it is a valid OpenAPI 3.1 document for a
 * maintained validator (@seriousme/openapi-schema-validator), and it covers what callers need:
 * the 9 routes, both request bodies, the envelope, every error code with its HTTP status, the v2
 * plain-text 400, and the `x-api-key` and `x-request-timeout` headers.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { OPENAPI_PATH, renderOpenApi } from '../../bin/openapi.ts';
import { V1_ACTIONS } from '../../lambdas/core/schemas.ts';
import { GATEWAY_ANSWERS } from '../../lambdas/local/gateway-answers.ts';
import { buildAbout } from '../../lambdas/operator/about.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { mayHaveRun, PROXY_ERROR_ROWS } from '../../lambdas/platform/error-table.ts';
import { ROUTES } from '../../lambdas/platform/routes.ts';
import { deref, type Json, openApiDocument } from '../support/openapi-doc.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const committed = readFileSync(`${root}${OPENAPI_PATH}`, 'utf8');

const doc = openApiDocument as {
  openapi: string;
  paths: Record<string, Record<string, Json>>;
  components: {
    schemas: Record<string, Json>;
    responses: Record<
      string,
      { description: string; content: Record<string, { schema: Json }>; headers?: Json }
    >;
    securitySchemes: Record<string, Json>;
    parameters: Record<string, Json>;
  };
  'x-error-codes': Json[];
};

/** The error codes a response lists in its envelope schema. */
function envelopeCodes(response: { content: Record<string, { schema: Json }> }): number[] {
  const schema = response.content['application/json']?.schema;
  if (schema === undefined) return [];
  const envelope = (schema.oneOf as Json[] | undefined)?.[0] ?? schema;
  const restriction = (envelope.allOf as Json[])[1] as {
    properties: { error: { properties: { code: { enum: number[] } } } };
  };
  return restriction.properties.error.properties.code.enum;
}

describe('docs/openapi.json', () => {
  it('is what npm run openapi generates now (run it after changing a schema, a route or an error)', () => {
    expect(committed).toBe(renderOpenApi());
  });

  it('npm run openapi -- --check passes on the committed file', () => {
    const output = execFileSync(process.execPath, ['--import', 'tsx', 'bin/openapi.ts', '--check'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(output).toBe('');
  });

  it('is a valid OpenAPI 3.1 document whose references all resolve', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(committed) as Json);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(() => validator.resolveRefs()).not.toThrow();
  });

  it('is checked by a validator that does refuse a broken document', async () => {
    const broken = JSON.parse(committed) as Json;
    delete broken.info;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("describes the route table: the specification's 9 routes and POST /mcp", () => {
    const described = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(described.sort()).toEqual(ROUTES.map((route) => `${route.method} ${route.path}`).sort());
    expect(described).toContain('POST /mcp');
  });

  it("gives each operation the summary /_/about shows: the route table's, written once", () => {
    const about = buildAbout(loadConfig({ PROXY_API_KEY: 'openapi-summary-key-0123' }));
    for (const route of ROUTES) {
      const operation = doc.paths[route.path]?.[route.method.toLowerCase()] as { summary?: string };
      const shown = about.routes.find((r) => r.method === route.method && r.path === route.path);
      expect(operation?.summary, `${route.method} ${route.path}`).toBe(route.summary);
      expect(shown?.summary, `${route.method} ${route.path}`).toBe(operation?.summary);
    }
  });

  it('keeps POST /mcp small: the key (or a bearer token), the ERP headers, the answers before MCP', () => {
    const mcp = doc.paths['/mcp']?.post as Json;
    expect(mcp.security).toEqual([{ proxyApiKey: [] }, { proxyBearer: [] }]);
    expect(doc.components.securitySchemes.proxyBearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const headers = (mcp.parameters as Json[]).map((parameter) => parameter.name ?? parameter.$ref);
    expect(headers).toEqual([
      'accept',
      'x-erp-url',
      'x-erp-db',
      'x-erp-api-key',
      'x-erp-user-id',
      '#/components/parameters/RequestTimeout',
    ]);
    const responses = mcp.responses as Record<string, { description: string }>;
    expect(Object.keys(responses).sort()).toEqual([
      '200',
      '202',
      '400',
      '401',
      '403',
      '406',
      '408',
      '413',
      '415',
      '429',
      '431',
      '500',
      '503',
    ]);
    expect(responses['401']?.description).toContain('`-32000`');
    expect(responses['403']?.description).toContain('`0`');
    // OAuth on: the challenges (README, "Remote agents with OAuth").
    expect(responses['401']?.description).toContain('resource_metadata');
    expect(responses['403']?.description).toContain('insufficient_scope');
    expect(responses['503']?.description).toContain('`-32004`');
  });

  it('gives both request bodies from the zod schemas, with their required fields', () => {
    const { schemas } = doc.components;
    expect(schemas.V1ExecuteRequest?.required).toEqual(['id', 'action', 'model_id', 'erp_instance']);
    expect(schemas.V2ExecuteRequest?.required).toEqual([
      'id',
      'model_id',
      'method',
      'kwargs',
      'erp_instance',
    ]);
    expect(schemas.VersionRequest?.required).toEqual(['id', 'url']);
    expect(schemas.ErpInstanceV1?.required).toEqual(['url', 'db', 'user_id', 'api_key']);
    expect(schemas.ErpInstanceV2?.required).toEqual(['url', 'db', 'api_key']);
    const v2 = schemas.V2ExecuteRequest?.properties as Record<string, Json>;
    expect(v2.kwargs).toMatchObject({ type: 'object', additionalProperties: true });
    const v1 = schemas.V1ExecuteRequest?.properties as Record<string, Json>;
    expect(v1.action?.enum).toEqual([...V1_ACTIONS]);
    // Defaults in the description only: a JSON Schema `default` makes generated types require it.
    expect(v1.params).toMatchObject({ type: 'array', items: {} });
    expect(v1.params).not.toHaveProperty('default');
    expect(v1.params?.description).toMatch(/Default: `\[\]`\.$/);
    expect(v1.keyword).toMatchObject({ type: 'object', additionalProperties: true });
    expect(v1.keyword).not.toHaveProperty('default');
    expect(v1.keyword?.description).toMatch(/Default: `\{\}`\.$/);
    const v1Instance = schemas.ErpInstanceV1?.properties as Record<string, Json>;
    expect(v1Instance.user_id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(v1Instance.url).toMatchObject({ type: 'string', format: 'uri' });
    expect(schemas.Envelope?.required).toEqual(['jsonrpc', 'id', 'result', 'error']);
  });

  it('lists every row of the error table, with its HTTP status, under the endpoints that answer it', () => {
    expect(doc['x-error-codes']).toEqual(
      PROXY_ERROR_ROWS.map((row) => ({
        code: row.code,
        http_status: row.httpStatus,
        answer: row.answer === 'envelope' ? 'envelope' : 'text/plain',
        may_have_run: mayHaveRun(row),
        apis: [...row.apis],
        meaning: row.meaning,
      })),
    );
    const operations = {
      v1: doc.paths['/api/erp/execute']?.post,
      v2: doc.paths['/v2/erp/execute']?.post,
      version: doc.paths['/api/erp/version']?.post,
    } as const;
    for (const row of PROXY_ERROR_ROWS) {
      // /mcp answers tool failures as tool results (HTTP 200); its few HTTP errors are checked above.
      for (const api of row.apis.filter((name) => name !== 'mcp')) {
        const responses = operations[api]?.responses as Record<string, unknown>;
        const response = deref<{ description: string; content: Record<string, { schema: Json }> }>(
          responses[String(row.httpStatus)],
        );
        expect(response.description).toContain(`\`${row.code}\``);
        if (row.answer === 'envelope') expect(envelopeCodes(response)).toContain(row.code);
        else expect(Object.keys(response.content)).toContain('text/plain');
      }
    }
  });

  it("documents v2's plain-text 400 beside its -32007 envelope", () => {
    const response = deref<{ content: Record<string, Json> }>(
      (doc.paths['/v2/erp/execute']?.post?.responses as Json | undefined)?.['400'],
    );
    expect(Object.keys(response.content).sort()).toEqual(['application/json', 'text/plain']);
    expect(envelopeCodes(response as never)).toEqual([-32007]);
  });

  it('answers a keyless call to /_/license and /_/metrics with the -32000 envelope', () => {
    for (const path of ['/_/license', '/_/metrics']) {
      const responses = doc.paths[path]?.get?.responses as Record<string, Json> | undefined;
      const response = responses?.['401'] as
        | { content: Record<string, { schema: { allOf: Json[] } }> }
        | undefined;
      expect(response?.content['application/json']?.schema.allOf[0]).toEqual({
        $ref: '#/components/schemas/ErrorEnvelope',
      });
    }
  });

  it("lists the gateway's own answers (408, 413, 429, 431, 500) with their real body on every route", () => {
    const gateway = [
      GATEWAY_ANSWERS.requestTimeout,
      GATEWAY_ANSWERS.tooLarge,
      GATEWAY_ANSWERS.throttled,
      GATEWAY_ANSWERS.headersTooLarge,
    ];
    for (const route of ROUTES) {
      const responses = doc.paths[route.path]?.[route.method.toLowerCase()]?.responses as Record<
        string,
        unknown
      >;
      for (const answer of gateway) {
        const response = deref<{
          description: string;
          content: Record<string, { schema: Json; example: Json }>;
        }>(responses[String(answer.status)]);
        if (answer === GATEWAY_ANSWERS.throttled && ['execute-v1', 'execute-v2'].includes(route.fn)) {
          // The proxy's own limits answer 429 too (-32004): both bodies (README, "Limits").
          const schema = response.content['application/json']?.schema as { oneOf: Json[] };
          expect(schema.oneOf).toHaveLength(2);
          expect(JSON.stringify(schema.oneOf[0])).toContain('-32004');
          expect(schema.oneOf[1]).toEqual({ $ref: '#/components/schemas/GatewayError' });
          expect(response.description).toContain(JSON.stringify({ message: answer.message }));
          expect(response.description).toContain('`-32004`');
          continue;
        }
        expect(response.content['application/json']?.schema).toEqual({
          $ref: '#/components/schemas/GatewayError',
        });
        expect(response.content['application/json']?.example).toEqual({ message: answer.message });
        expect(response.description).toContain(JSON.stringify({ message: answer.message }));
      }
      // 500: the proxy's -32603 envelope, or the gateway's answer when the function gave none
      // (POST /mcp answers a JSON-RPC error instead: MCP's own protocol).
      if (route.fn === 'mcp') continue;
      const internal = deref<{ description: string; content: Record<string, { schema: { oneOf: Json[] } }> }>(
        responses['500'],
      );
      expect(internal.content['application/json']?.schema.oneOf).toHaveLength(2);
      expect(internal.content['application/json']?.schema.oneOf[1]).toEqual({
        $ref: '#/components/schemas/GatewayError',
      });
      expect(internal.description).toContain('`-32603`');
      expect(internal.description).toContain(JSON.stringify({ message: 'Internal Server Error' }));
      // Every operation has a 4XX (redocly's operation-4xx-response), /_/about included.
      expect(Object.keys(responses).some((status) => status.startsWith('4'))).toBe(true);
    }
  });

  it('types every field of /_/about, and documents the failure of /_/metrics', () => {
    const about = doc.components.schemas.About as { properties: Record<string, Json>; required: string[] };
    expect(about.required.sort()).toEqual([
      'api_versions',
      'audit',
      'brakes_in_force',
      'build',
      'confirmations',
      'description',
      'error_codes',
      'key_policies',
      'key_policy_call_rules',
      'limits',
      'name',
      'routes',
      'runtime',
      'settings',
      'state_store',
      'transports',
      'version',
    ]);
    const metrics = doc.paths['/_/metrics']?.get?.responses as Record<string, unknown>;
    expect(deref<{ description: string }>(metrics['500']).description).toMatch(
      /CloudWatch could not be read/,
    );
  });

  it('passes on Retry-After with -32004', () => {
    const response = doc.components.responses.V1Error503;
    expect(response?.headers).toHaveProperty('Retry-After');
  });

  it('names the x-api-key, x-request-timeout and Idempotency-Key headers where they apply', () => {
    expect(doc.components.securitySchemes.proxyApiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
    expect(doc.components.parameters.RequestTimeout).toMatchObject({
      name: 'x-request-timeout',
      in: 'header',
    });
    for (const route of ROUTES) {
      const operation = doc.paths[route.path]?.[route.method.toLowerCase()] as Json;
      const security = operation.security as Json[];
      if (route.auth === 'public') expect(security).toEqual([]);
      else expect(security).toContainEqual({ proxyApiKey: [] });
      // The routes that call an ERP (the aux function's `/_/audit` reads the proxy's own table).
      if (route.auth === 'api-key' && route.fn !== 'mcp' && route.fn !== 'aux') {
        // Idempotency-Key: the execute routes only (README, "Retrying writes safely").
        const execute = route.fn === 'execute-v1' || route.fn === 'execute-v2';
        expect(operation.parameters).toEqual([
          { $ref: '#/components/parameters/RequestTimeout' },
          ...(execute ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
        ]);
      }
    }
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
      // The header's value: a key of at most 255 characters, or one quoted with every character
      // escaped (2 + 2 x 255); the pattern is held to the parser by idempotency-key.property.test.ts.
      schema: { minLength: 1, maxLength: 512 },
    });
  });

  it('documents the replay header and the -32010/-32011 answers of the execute routes', () => {
    const responses = doc.components.responses as Record<string, { headers?: Json; description?: string }>;
    for (const api of ['V1', 'V2']) {
      expect(responses[`${api}Success`]?.headers, api).toHaveProperty('Idempotent-Replayed');
      expect(responses[`${api}Error504`]?.headers, api).toHaveProperty('Idempotent-Replayed');
      expect(responses[`${api}Error409`]?.headers, api).toHaveProperty('Retry-After');
      expect(responses[`${api}Error409`]?.description, api).toContain('-32010');
      expect(responses[`${api}Error422`]?.description, api).toContain('-32011');
    }
    expect(responses.VersionSuccess?.headers).not.toHaveProperty('Idempotent-Replayed');
    expect((doc.components as unknown as { headers: Json }).headers).toHaveProperty('Idempotent-Replayed');
  });

  it("documents the operators' brakes: their bodies and answers, the -32012 of a braked key on every keyed route", () => {
    type Response = { description: string; content: Record<string, { schema: Json }> };
    type Operation = {
      requestBody?: { content: Record<string, { schema: Json }> };
      responses: Record<string, Response>;
    };
    const operation = (method: string, path: string) => doc.paths[path]?.[method] as Operation;
    const body = (method: string, path: string) =>
      operation(method, path).requestBody?.content['application/json']?.schema;
    expect(body('post', '/_/brakes')).toEqual({ $ref: '#/components/schemas/BrakeRequest' });
    expect(body('post', '/_/brakes/release')).toEqual({ $ref: '#/components/schemas/BrakeRelease' });
    expect(operation('get', '/_/brakes').requestBody).toBeUndefined();
    const request = doc.components.schemas.BrakeRequest as {
      required: string[];
      additionalProperties: boolean;
    };
    expect(request.required.sort()).toEqual(['mode', 'reason', 'scope']);
    expect(request.additionalProperties).toBe(false);
    expect(JSON.stringify(doc.components.schemas.BrakeScope)).toContain('"const":"all"');
    const brake = doc.components.schemas.Brake as { required: string[] };
    expect(brake.required.sort()).toEqual(['id', 'mode', 'reason', 'scope', 'set_at', 'set_by']);
    for (const [method, path, member] of [
      ['get', '/_/brakes', 'brakes'],
      ['post', '/_/brakes', 'brake'],
      ['post', '/_/brakes/release', 'released'],
    ] as const) {
      const { responses } = operation(method, path);
      const answer = responses['200']?.content['application/json']?.schema as { required: string[] };
      expect(answer.required, path).toEqual([member]);
      expect(responses['403']?.description, path).toContain('does not list `brakes`');
      expect(envelopeCodes(responses['503'] as Response), path).toEqual([-32004, -32012]);
      if (method === 'post') expect(envelopeCodes(responses['400'] as Response), path).toEqual([-32600]);
    }
    expect(operation('get', '/_/audit').responses['403']?.description).toContain('does not list `audit`');
    // A key braked `all` is refused on every keyed route: the operator endpoints say so too.
    for (const route of ROUTES.filter((r) => r.fn === 'aux' && r.auth !== 'public')) {
      const responses = operation(route.method.toLowerCase(), route.path).responses;
      expect(envelopeCodes(responses['503'] as Response), route.path).toContain(-32012);
    }
    expect(doc.components.responses.V2Error503?.description).toContain('`-32012`');
    expect(JSON.stringify(operation('post', '/mcp').responses['503'])).toContain('-32012');
  });

  it("names every answer's request (Request-Id, apigw-requestid), and where execute's and MCP's time went (Server-Timing)", () => {
    type Response = { $ref?: string; headers?: Record<string, unknown> };
    const responses = doc.components.responses as Record<string, Response>;
    const named = (response: Response | undefined) => Object.keys(response?.headers ?? {});
    for (const [name, response] of Object.entries(responses)) {
      const gateway = ['RequestTimeout', 'PayloadTooLarge', 'TooManyRequests', 'RequestHeaderFieldsTooLarge'];
      if (gateway.includes(name)) {
        expect(named(response), name).toContain('apigw-requestid');
        expect(named(response), name).not.toContain('Request-Id');
        continue;
      }
      expect(named(response), name).toEqual(expect.arrayContaining(['Request-Id', 'apigw-requestid']));
      if (/^V[12]/.test(name)) expect(named(response), name).toContain('Server-Timing');
      else expect(named(response), name).not.toContain('Server-Timing');
    }
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, Response> }>>;
    for (const [status, response] of Object.entries(paths['/mcp']?.post?.responses ?? {})) {
      if (response.$ref !== undefined) continue;
      expect(named(response), `POST /mcp ${status}`).toEqual(
        expect.arrayContaining(['Request-Id', 'apigw-requestid', 'Server-Timing']),
      );
    }
    const about = paths['/_/about']?.get?.responses['200'];
    expect(named(about)).toEqual(['Request-Id', 'apigw-requestid']);
    expect((doc.components as unknown as { headers: Json }).headers).toEqual(
      expect.objectContaining({
        'Request-Id': expect.anything(),
        'apigw-requestid': expect.anything(),
        'Server-Timing': expect.anything(),
      }),
    );
  });
});
