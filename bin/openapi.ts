/**
 * `npm run openapi`: writes `docs/openapi.json`, the OpenAPI 3.1 description of the proxy, built
 * from what the proxy itself runs on: the request bodies from the zod schemas the handlers
 * validate with (`lambdas/core/schemas.ts`, through zod's JSON Schema output), the paths from the
 * route table (`lambdas/platform/routes.ts`), and the error answers from the error table
 * (`lambdas/platform/error-table.ts`). `npm run openapi -- --check` only compares, and fails when
 * the committed file is out of date (`test/unit/openapi.test.ts` does the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import {
  baseUrl,
  erpInstanceV1,
  erpInstanceV2,
  jsonObject,
  v1ExecuteSchema,
  v2ExecuteSchema,
  versionSchema,
} from '../lambdas/core/schemas.ts';
import {
  type ErrorApi,
  mayHaveRun,
  PROXY_ERROR_ROWS,
  type ProxyErrorRow,
} from '../lambdas/platform/error-table.ts';
import { PROXY_DESCRIPTION, PROXY_NAME, PROXY_VERSION } from '../lambdas/platform/package-info.ts';
import { ROUTES, type Route } from '../lambdas/platform/routes.ts';

/** Where the document is committed, relative to the repository root. */
export const OPENAPI_PATH = 'docs/openapi.json';

type JsonSchema = Record<string, unknown>;
const ref = (id: string): JsonSchema => ({ $ref: `#/components/schemas/${id}` });

// --- Schemas ----------------------------------------------------------------------------------

/** The response shapes: the proxy builds these without zod, so they are written here. */
const EnvelopeErrorSchema = z.object({
  code: z.int(),
  message: z.string(),
  data: z.unknown(),
});
const EnvelopeSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.string().nullable(),
  result: z.unknown(),
  error: EnvelopeErrorSchema.nullable(),
});
const ErrorEnvelopeSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.string().nullable(),
  result: z.null(),
  error: EnvelopeErrorSchema,
});
const VersionResultSchema = z.object({
  version_info: z.tuple([
    z.union([z.int(), z.string()]),
    z.union([z.int(), z.string()]),
    z.int(),
    z.string(),
    z.int(),
    z.string(),
  ]),
  version: z.string(),
});
const VersionEnvelopeSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.string().nullable(),
  result: VersionResultSchema.nullable(),
  error: EnvelopeErrorSchema.nullable(),
});
const LicenseSchema = z.object({
  licensee: z.string(),
  valid_until: z.string(),
  is_valid: z.boolean(),
  reason: z.string().optional(),
});
const GatewayErrorSchema = z.object({ message: z.string() });

/** Every named schema, with the descriptions of the schema and of its properties. */
const SCHEMAS: ReadonlyArray<{
  id: string;
  schema: z.core.$ZodType;
  description: string;
  properties?: Record<string, string>;
}> = [
  {
    id: 'V1ExecuteRequest',
    schema: v1ExecuteSchema(),
    description: "Body of the v1 execute endpoints: `execute_kw` over the ERP's /jsonrpc (any ERP up to 21).",
    properties: {
      id: 'Request identifier, echoed in the answer (a ULID by convention).',
      action: 'One of the 9 actions; any other method goes through `call_method` with `fn_name`.',
      model_id: 'ERP model name (dotted), e.g. `res.partner`.',
      params:
        'Positional arguments of `execute_kw`, passed to the ERP byte for byte. For search, search_count and search_read the domain is the first element (wrapped once more than in v2; `[[]]` matches everything).',
      keyword:
        'Named arguments (`fields`, `limit`, `offset`, `order`, `attributes`, `context`...), passed byte for byte.',
      fn_name: 'The method to call; required (non-empty) for `call_method`, else -32002.',
      erp_instance: "The target ERP and the ERP user's credentials.",
    },
  },
  {
    id: 'V2ExecuteRequest',
    schema: v2ExecuteSchema(),
    description:
      'Body of the v2 execute endpoint: JSON-2, `POST /json/2/<model>/<method>` (ERP 19 and later).',
    properties: {
      id: 'Request identifier, echoed in the answer (a ULID by convention).',
      model_id: 'ERP model name (dotted); invalid names or over 256 characters: -32007.',
      method: 'Any public model method (a Python identifier).',
      kwargs:
        "All arguments, named after the method's Python parameters (`domain` unwrapped, `vals_list`, `ids` only for record methods); passed byte for byte. An array here is a plain-text 400.",
      erp_instance: 'The target ERP and an API key of the ERP user (`user_id` is accepted and ignored).',
    },
  },
  {
    id: 'VersionRequest',
    schema: versionSchema(),
    description: 'Body of the version endpoints.',
    properties: { id: 'Request identifier, echoed in the answer.', url: 'Base URL of the target ERP.' },
  },
  {
    id: 'ErpInstanceV1',
    schema: erpInstanceV1(),
    description: 'The target ERP of a v1 call.',
    properties: {
      url: 'Base URL of the ERP (absolute, no query or fragment).',
      db: 'Database name.',
      user_id: 'ERP user id.',
      api_key: 'API key of that ERP user (never the proxy key).',
    },
  },
  {
    id: 'ErpInstanceV2',
    schema: erpInstanceV2(),
    description: 'The target ERP of a v2 call; a v1 `erp_instance` works unchanged.',
    properties: {
      url: "Base URL of the ERP; on multi-tenant hosts the database's own hostname.",
      db: 'Database name (sent as `X-Odoo-Database`).',
      api_key: 'API key of the ERP user (never a password, never the proxy key).',
      user_id: 'Ignored on v2.',
    },
  },
  {
    id: 'Envelope',
    schema: EnvelopeSchema,
    description:
      "Every answer of the execute and version endpoints (except the v2 plain-text 400 and the gateway's own answers). Always check `error`: ERP-side errors come with HTTP 200.",
    properties: {
      jsonrpc: 'Always `2.0`.',
      id: "The request `id`; null when the body could not be read (or a refused call's first 4096 characters hold no string `id`).",
      result: "The ERP's answer; null when `error` is set.",
      error: 'Null on success.',
    },
  },
  {
    id: 'EnvelopeError',
    schema: EnvelopeErrorSchema,
    description:
      "An error. Proxy errors: a negative code (or 0 with HTTP 403: the license), see `x-error-codes`. ERP errors (HTTP 200): 0 on v1 (`data.name` is the exception class); on v2 the ERP's status, 401 key invalid or expired, 403 access denied, 404 not found, 409 lock conflict (the only one worth retrying), 422 arguments or validation, 500 server error, with the ERP's error object as `data`.",
    properties: {
      code: "Proxy code, ERP code (0 on v1, the ERP's HTTP status on v2).",
      message: 'Short, human-readable; never contains a secret.',
      data: "For ERP errors the ERP's error data (`name` is the exception class); null or details otherwise.",
    },
  },
  {
    id: 'ErrorEnvelope',
    schema: ErrorEnvelopeSchema,
    description: 'An envelope that carries a proxy error.',
  },
  {
    id: 'VersionResult',
    schema: VersionResultSchema,
    description:
      "The target's version. `version_info[0]` of 19 or more means v2 is available; the major may be a string (`saas~18`).",
    properties: {
      version_info: '`[major, minor, micro, release_level, serial, edition]`.',
      version: 'The version as the ERP writes it, e.g. `19.0` or `18.0+e-20241113`.',
    },
  },
  {
    id: 'VersionEnvelope',
    schema: VersionEnvelopeSchema,
    description: 'The envelope of a version endpoint.',
  },
  {
    id: 'License',
    schema: LicenseSchema,
    description: 'The license status.',
    properties: {
      licensee: 'Name of the license holder.',
      valid_until: 'Date, `YYYY-MM-DD`.',
      is_valid: 'Whether the license is valid.',
      reason: 'Why it is not valid, when it is not.',
    },
  },
  {
    id: 'GatewayError',
    schema: GatewayErrorSchema,
    description:
      "An answer of API Gateway itself (or the local server's emulation of it), not an envelope: `Not Found`, a body over 6 MB (413), a function that ran out of time (500 `Internal Server Error`).",
  },
];

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** The JSON Schemas of {@link SCHEMAS}, as OpenAPI 3.1 components. */
function componentSchemas(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const { id, schema } of SCHEMAS) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    // Request bodies as callers write them: fields with a default are optional.
    io: 'input',
    // The one custom schema (`jsonObject`) is given its type by `override` below.
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
    override: (ctx) => {
      const schema = ctx.jsonSchema as JsonSchema;
      // `params`/`keyword`/`kwargs` are checked by a predicate (kept as parsed, byte for byte).
      if (ctx.zodSchema === jsonObject()) schema.type = 'object';
      // The base URL's refinement (absolute, no query or fragment) is code; say it as a format.
      if (ctx.zodSchema === baseUrl()) schema.format = 'uri';
      // zod's integer bounds are JavaScript's safe integers: say int64 instead.
      if (schema.type === 'integer' && schema.minimum === -MAX_SAFE && schema.maximum === MAX_SAFE) {
        delete schema.minimum;
        delete schema.maximum;
        schema.format = 'int64';
      }
    },
  });
  const components: Record<string, JsonSchema> = {};
  for (const { id, description, properties } of SCHEMAS) {
    // OpenAPI names the dialect once for the document; a fragment `$id` is not valid JSON Schema.
    const { $schema: _dialect, $id: _id, ...schema } = schemas[id] as JsonSchema;
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const [name, text] of Object.entries(properties ?? {})) {
      const prop = props[name];
      if (prop === undefined) throw new Error(`openapi: ${id} has no property ${name} to describe`);
      props[name] = { description: text, ...prop };
    }
    components[id] = { description, ...schema };
  }
  return components;
}

// --- Errors -----------------------------------------------------------------------------------

/** The rows an API can answer with, grouped by HTTP status (ascending). */
function errorsByStatus(api: ErrorApi): Map<number, ProxyErrorRow[]> {
  const byStatus = new Map<number, ProxyErrorRow[]>();
  const rows = PROXY_ERROR_ROWS.filter((row) => row.apis.includes(api));
  for (const row of [...rows].sort((a, b) => a.httpStatus - b.httpStatus)) {
    byStatus.set(row.httpStatus, [...(byStatus.get(row.httpStatus) ?? []), row]);
  }
  return byStatus;
}

function describeRow(row: ProxyErrorRow): string {
  const ran = mayHaveRun(row) ? 'The call may have run.' : 'The call did not run.';
  const shape = row.answer === 'text' ? ' (plain text, no envelope)' : '';
  return `\`${row.code}\`${shape}: ${row.meaning} ${ran}`;
}

/** The component name of an API's response for a status, e.g. `V2Error400`. */
function responseName(api: ErrorApi, status: string): string {
  const prefix = { v1: 'V1', v2: 'V2', version: 'Version' }[api];
  return status === '200' ? `${prefix}Success` : `${prefix}Error${status}`;
}

/** The shared responses of each API (the aliases of a route answer alike), as OpenAPI components. */
function componentResponses(): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const api of ['v1', 'v2', 'version'] as const) {
    for (const [status, response] of Object.entries(apiResponses(api))) {
      responses[responseName(api, status)] = response;
    }
  }
  return responses;
}

/** An operation's responses: references to its API's components. */
function apiResponseRefs(api: ErrorApi): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(apiResponses(api)).map((status) => [
      status,
      { $ref: `#/components/responses/${responseName(api, status)}` },
    ]),
  );
}

/** The responses of an execute or version operation: the envelope, each error status, the gateway's. */
function apiResponses(api: ErrorApi): Record<string, unknown> {
  const success = api === 'version' ? 'VersionEnvelope' : 'Envelope';
  const responses: Record<string, unknown> = {
    '200': {
      description:
        api === 'version'
          ? 'The version, in an envelope.'
          : "The ERP's answer, or an ERP-side error (`error` set, HTTP 200): always check `error`.",
      content: { 'application/json': { schema: ref(success) } },
    },
  };
  for (const [status, rows] of errorsByStatus(api)) {
    const envelopeRows = rows.filter((row) => row.answer === 'envelope');
    const textRows = rows.filter((row) => row.answer === 'text');
    const content: Record<string, unknown> = {};
    if (envelopeRows.length > 0) {
      const envelope = {
        allOf: [
          ref('ErrorEnvelope'),
          {
            type: 'object',
            properties: {
              error: { type: 'object', properties: { code: { enum: envelopeRows.map((row) => row.code) } } },
            },
          },
        ],
      };
      // A function that runs out of time is answered by the gateway itself.
      content['application/json'] = {
        schema: status === 500 ? { oneOf: [envelope, ref('GatewayError')] } : envelope,
      };
    }
    if (textRows.length > 0) {
      content['text/plain'] = {
        schema: {
          type: 'string',
          description: 'The field and the problem, e.g. `kwargs: expected object, received array`.',
        },
        example: 'kwargs: expected object, received array\n',
      };
    }
    const response: Record<string, unknown> = {
      description: rows.map(describeRow).join('\n\n'),
      content,
    };
    if (rows.some((row) => row.code === -32004)) {
      response.headers = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
    }
    responses[String(status)] = response;
  }
  responses['413'] = {
    description: 'The body is over 6 MB (answered by the gateway, not an envelope).',
    content: { 'application/json': { schema: ref('GatewayError') } },
  };
  return responses;
}

/** `x-error-codes`: the error table, for generators and readers. */
function errorCodes(): unknown[] {
  return PROXY_ERROR_ROWS.map((row) => ({
    code: row.code,
    http_status: row.httpStatus,
    answer: row.answer === 'envelope' ? 'envelope' : 'text/plain',
    may_have_run: mayHaveRun(row),
    apis: [...row.apis],
    meaning: row.meaning,
  }));
}

// --- Paths ------------------------------------------------------------------------------------

const OPERATIONS: Readonly<
  Record<
    string,
    { id: string; summary: string; description: string; tag: string; body?: string; api?: ErrorApi }
  >
> = {
  'POST /api/erp/execute': {
    id: 'executeV1',
    summary: 'v1 execute (execute_kw over /jsonrpc)',
    description: 'Runs one of the 9 actions on the target ERP (any version up to 21).',
    tag: 'v1',
    body: 'V1ExecuteRequest',
    api: 'v1',
  },
  'POST /v1/erp/execute': {
    id: 'executeV1Alias',
    summary: 'v1 execute (alias of /api/erp/execute)',
    description: 'The same as `POST /api/erp/execute`.',
    tag: 'v1',
    body: 'V1ExecuteRequest',
    api: 'v1',
  },
  'POST /api/erp/version': {
    id: 'version',
    summary: 'ERP version of a target',
    description:
      'Asks the target `GET /web/version` (ERP 19+), else `/jsonrpc` `common.version`; cached per URL for 5 minutes. It only reads, so a -32003 here is safe to retry.',
    tag: 'version',
    body: 'VersionRequest',
    api: 'version',
  },
  'POST /v1/erp/version': {
    id: 'versionV1Alias',
    summary: 'ERP version of a target (alias of /api/erp/version)',
    description: 'The same as `POST /api/erp/version`.',
    tag: 'version',
    body: 'VersionRequest',
    api: 'version',
  },
  'POST /v2/erp/execute': {
    id: 'executeV2',
    summary: 'v2 execute (JSON-2, ERP 19+)',
    description:
      'Calls any public method of a model with named arguments. A body that cannot be decoded into the request shape is answered with a plain-text 400 naming the field.',
    tag: 'v2',
    body: 'V2ExecuteRequest',
    api: 'v2',
  },
  'POST /v2/erp/version': {
    id: 'versionV2',
    summary: 'ERP version of a target (same as v1)',
    description: 'The same as `POST /api/erp/version`.',
    tag: 'version',
    body: 'VersionRequest',
    api: 'version',
  },
  'GET /_/license': {
    id: 'license',
    summary: 'License status',
    description: 'Needs `x-api-key` unless the operator set `AUX_PUBLIC=license`.',
    tag: 'operator',
  },
  'GET /_/about': {
    id: 'about',
    summary: 'Service description',
    description:
      'Name, version, supported APIs and ERP ranges, routes, build and runtime, and `error_codes` (the error table). Public.',
    tag: 'operator',
  },
  'GET /_/metrics': {
    id: 'metrics',
    summary: 'Prometheus metrics',
    description:
      'Prometheus text exposition. Needs `x-api-key` unless the operator set `AUX_PUBLIC=metrics`.',
    tag: 'operator',
  },
};

function security(route: Route): unknown[] {
  if (route.auth === 'public') return [];
  if (route.auth === 'aux-configurable') return [{ proxyApiKey: [] }, {}];
  return [{ proxyApiKey: [] }];
}

const UNAUTHORIZED = {
  description: '`-32000`: `x-api-key` missing or not a proxy key (unless `AUX_PUBLIC` lists the endpoint).',
  content: {
    'application/json': {
      schema: {
        allOf: [
          ref('ErrorEnvelope'),
          {
            type: 'object',
            properties: { error: { type: 'object', properties: { code: { const: -32000 } } } },
          },
        ],
      },
    },
  },
};

function auxResponses(path: string): Record<string, unknown> {
  if (path === '/_/license') {
    return {
      '200': {
        description: 'The license status.',
        content: { 'application/json': { schema: ref('License') } },
      },
      '401': UNAUTHORIZED,
    };
  }
  if (path === '/_/metrics') {
    return {
      '200': {
        description: 'The service metrics.',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      '401': UNAUTHORIZED,
    };
  }
  return {
    '200': {
      description: 'The service description.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              version: { type: 'string' },
              error_codes: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    code: { type: 'integer' },
                    http_status: { type: 'integer' },
                    may_have_run: { type: 'boolean' },
                    meaning: { type: 'string' },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}

function paths(): Record<string, unknown> {
  const result: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const key = `${route.method} ${route.path}`;
    const operation = OPERATIONS[key];
    if (operation === undefined) throw new Error(`openapi: no description for the route ${key}`);
    const entry: Record<string, unknown> = {
      operationId: operation.id,
      summary: operation.summary,
      description: operation.description,
      tags: [operation.tag],
      security: security(route),
    };
    if (operation.body !== undefined && operation.api !== undefined) {
      entry.parameters = [{ $ref: '#/components/parameters/RequestTimeout' }];
      entry.requestBody = {
        required: true,
        content: { 'application/json': { schema: ref(operation.body) } },
      };
      entry.responses = apiResponseRefs(operation.api);
    } else {
      entry.responses = auxResponses(route.path);
    }
    result[route.path] = { ...result[route.path], [route.method.toLowerCase()]: entry };
  }
  return result;
}

// --- Document ---------------------------------------------------------------------------------

/** The OpenAPI 3.1 document of the proxy. */
export function buildOpenApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: PROXY_NAME,
      version: PROXY_VERSION,
      description: `${PROXY_DESCRIPTION}\n\nA JSON-RPC 2.0 style envelope, not REST: ERP-side errors come back with HTTP 200 and \`error\` set, so always check \`error\`. \`x-error-codes\` lists the proxy's error codes with their HTTP statuses and whether the ERP call may have run (a retry is safe only when it did not). Generated by \`npm run openapi\` from the proxy's own schemas, routes and error table.`,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: 'http://127.0.0.1:8787', description: 'The local server (`npm start`)' }],
    tags: [
      { name: 'v1', description: 'execute_kw over /jsonrpc (any ERP up to 21)' },
      { name: 'v2', description: 'JSON-2 (ERP 19 and later)' },
      { name: 'version', description: 'The version of a target ERP' },
      { name: 'operator', description: 'License, service description, metrics' },
    ],
    paths: paths(),
    components: {
      schemas: componentSchemas(),
      responses: componentResponses(),
      securitySchemes: {
        proxyApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'A proxy key (never an ERP key: those travel in `erp_instance.api_key`).',
        },
      },
      parameters: {
        RequestTimeout: {
          name: 'x-request-timeout',
          in: 'header',
          required: false,
          description:
            'Upstream timeout in whole seconds. Missing, non-numeric, negative or 0: the proxy default (`ERP_DEFAULT_TIMEOUT`, 15). Capped at `ERP_MAX_TIMEOUT` (25) and at the Lambda time left minus 1.5 s, so the proxy answers -32003 itself.',
          schema: { type: 'integer', format: 'int64', minimum: 0 },
        },
      },
      headers: {
        'Retry-After': {
          description: 'On -32004, passed on from the ERP or the proxy in front of it when it gave one.',
          schema: { type: 'string' },
        },
      },
    },
    'x-error-codes': errorCodes(),
  };
}

/** The document as committed: two-space JSON and a final newline. */
export function renderOpenApi(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}

function main(argv: readonly string[]): number {
  const target = fileURLToPath(new URL(`../${OPENAPI_PATH}`, import.meta.url));
  const rendered = renderOpenApi();
  if (argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(target, 'utf8');
    } catch {
      // Missing counts as out of date.
    }
    if (committed === rendered) return 0;
    process.stderr.write(`${OPENAPI_PATH} is out of date: run npm run openapi\n`);
    return 1;
  }
  writeFileSync(target, rendered);
  process.stdout.write(`wrote ${OPENAPI_PATH}\n`);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
