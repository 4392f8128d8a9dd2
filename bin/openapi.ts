/**
 * `npm run openapi`: writes `docs/openapi.json`, the OpenAPI 3.1 description of the proxy, built
 * from what the proxy itself runs on: the request bodies from the zod schemas the handlers
 * validate with (`lambdas/core/schemas.ts`, through zod's JSON Schema output), the paths from the
 * route table (`lambdas/platform/routes.ts`), the error answers from the error table
 * (`lambdas/platform/error-table.ts`) and the gateway's own answers (408, 413, 429, 431, 500)
 * from `lambdas/local/gateway-answers.ts`. `npm run openapi -- --check` only compares, and fails
 * when the committed file is out of date (`test/unit/openapi.test.ts` does the same).
 *
 * Written for generators as well as readers (test/unit/openapi-tools.test.ts runs redocly's
 * recommended rules and openapi-typescript on it): `params`, `keyword` and `kwargs` are open
 * objects and arrays (a bare `{"type": "object"}` becomes `Record<string, never>` in
 * openapi-typescript), and request fields with a default carry it in their description only (a
 * JSON Schema `default` makes openapi-typescript's types require the field).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import {
  baseUrl,
  erpInstanceV1,
  erpInstanceV2,
  jsonObject,
  V1_ACTIONS,
  v1ExecuteSchema,
  v2ExecuteSchema,
  versionSchema,
} from '../lambdas/core/schemas.ts';
import { GATEWAY_ANSWERS, type GatewayAnswer, gatewayBody } from '../lambdas/local/gateway-answers.ts';
import type { About } from '../lambdas/operator/about.ts';
import { AUDIT_OUTCOMES } from '../lambdas/platform/audit/audit-record.ts';
import {
  BRAKE_MODES,
  type Brake,
  MAX_BRAKE_NAME_CHARS,
  MAX_BRAKE_REASON_CHARS,
  MAX_BRAKES,
} from '../lambdas/platform/brakes/brakes.ts';
import {
  type ErrorApi,
  mayHaveRun,
  PROXY_ERROR_ROWS,
  PROXY_ERRORS,
  type ProxyErrorRow,
} from '../lambdas/platform/error-table.ts';
import { AUDIT_MODES, SERVICE_NAME, V1_TRANSPORTS, V2_TRANSPORTS } from '../lambdas/platform/names.ts';
import { PROXY_DESCRIPTION, PROXY_NAME, PROXY_VERSION } from '../lambdas/platform/package-info.ts';
import { ROUTES, type Route } from '../lambdas/platform/routes.ts';
import { MCP_SCOPES } from '../lambdas/protocol/oauth/challenge.ts';

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

/** One API of `GET /_/about`. */
const AboutApiVersionSchema = z.object({ erp: z.string(), upstream: z.string() });
/** `GET /_/about`, every field (`About` in lambdas/operator/about.ts; the two are checked equal below). */
const AboutSchema = z.object({
  name: z.literal(SERVICE_NAME),
  version: z.string(),
  description: z.string(),
  api_versions: z.object({ v1: AboutApiVersionSchema, v2: AboutApiVersionSchema }),
  transports: z.object({ v1: z.enum(V1_TRANSPORTS), v2: z.enum(V2_TRANSPORTS) }),
  settings: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])),
  routes: z.array(
    z.object({
      method: z.enum(['GET', 'POST']),
      path: z.string(),
      auth: z.enum(['api-key', 'public']),
      summary: z.string(),
    }),
  ),
  error_codes: z.array(
    z.object({ code: z.int(), http_status: z.int(), may_have_run: z.boolean(), meaning: z.string() }),
  ),
  key_policies: z
    .boolean()
    .nullable()
    .describe(
      'Whether any proxy key carries a policy (docs/guide/policies.md, "Key policies"), never what they say; null when the keys could not be read.',
    ),
  key_policy_call_rules: z
    .boolean()
    .nullable()
    .describe(
      'Whether any proxy key\'s policy has methods, fields or companies rules (docs/guide/policies.md, "Methods, fields and companies"), never what they say; null when the keys could not be read.',
    ),
  limits: z
    .boolean()
    .nullable()
    .describe(
      "Whether limits are configured (docs/guide/limits.md: ERP_TARGET_LIMITS or a proxy key policy's limits), never what they are; null when the keys could not be read and no ERP has limits.",
    ),
  confirmations: z
    .boolean()
    .nullable()
    .describe(
      "Whether any proxy key's policy has a person confirm MCP writes (confirm: docs/guide/confirmations.md), never which; the OAuth identity map is not read here (an entry may confirm too); null when the keys could not be read.",
    ),
  state_store: z
    .enum(['dynamodb', 'embedded', 'none'])
    .describe(
      'Where the proxy keeps its state (Idempotency-Key records): a DynamoDB table, this process (npm start), or none (keyed writes refused).',
    ),
  brakes_in_force: z
    .number()
    .int()
    .nullable()
    .describe(
      'How many operators\' brakes are in force (docs/operators.md, "Stop an agent now"), never which; null without a state store.',
    ),
  audit: z
    .object({ mode: z.enum(AUDIT_MODES), store: z.enum(['dynamodb', 'embedded', 'none']) })
    .describe(
      'The audit of the calls that can write (docs/guide/audit.md): AUDIT (on, best-effort, off) and where its records go (the audit table, the embedded ring of npm start, or none).',
    ),
  build: z.object({ commit: z.string().nullable(), time: z.string().nullable() }),
  runtime: z.object({
    node: z.string(),
    region: z.string().nullable(),
    function_name: z.string().nullable(),
  }),
});

/** True when `A` and `B` are the same type: `GET /_/about` cannot gain a field the document lacks. */
type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const aboutSchemaIsAbout: SameType<z.infer<typeof AboutSchema>, About> = true;
void aboutSchemaIsAbout;

/** A name a brake's scope takes (`lambdas/operator/brakes-endpoint.ts` checks the same). */
const BrakeNameSchema = z.string().min(1).max(MAX_BRAKE_NAME_CHARS);
/** What a brake stops (`BrakeScope` in lambdas/platform/brakes/brakes.ts). */
const BrakeScopeSchema = z.union([
  z.literal('all').describe('Every caller.'),
  z
    .strictObject({ key: BrakeNameSchema })
    .describe(
      'The proxy key of that name: its name, not its value, so a key rotated under the same name stays braked. Braked `all`, the key is refused on every route right after its key check (these endpoints included).',
    ),
  z
    .strictObject({ identity: BrakeNameSchema })
    .describe(
      'Everyone signed in with OAuth whom the identity-map entry of that `name` maps: the whole entry (a group), not one person.',
    ),
  z
    .strictObject({ erp: BrakeNameSchema })
    .describe(
      'Every call to that ERP (its version calls included), the host as `ERP_TARGET_LIMITS` names it: lower-cased, no scheme, port or path. DNS is not resolved: another host name of the same ERP is not braked.',
    ),
]);
const brakeModeSchema = () => z.enum(BRAKE_MODES);
/** A brake as `/_/brakes` answers it (`Brake` in lambdas/platform/brakes/brakes.ts; the two are checked equal below). */
const BrakeSchema = z.object({
  id: z.string(),
  scope: BrakeScopeSchema,
  mode: brakeModeSchema(),
  reason: z.string().min(1).max(MAX_BRAKE_REASON_CHARS),
  expires: z.iso.datetime().optional(),
  set_by: z.string(),
  set_at: z.iso.datetime(),
});
const brakeSchemaIsBrake: SameType<z.infer<typeof BrakeSchema>, Brake> = true;
void brakeSchemaIsBrake;
/** `POST /_/brakes`'s body. */
const BrakeRequestSchema = z.strictObject({
  scope: BrakeScopeSchema,
  mode: brakeModeSchema(),
  reason: z.string().min(1).max(MAX_BRAKE_REASON_CHARS),
  expires: z.iso.datetime({ offset: true }).optional(),
});
/** `POST /_/brakes/release`'s body. */
const BrakeReleaseSchema = z.strictObject({ id: z.string() });

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
      'An answer of API Gateway itself (or the local server\'s, which answers the same way), not an envelope: `{"message": "Request Entity Too Large"}` and the like. The message is the status\'s reason phrase.',
  },
  {
    id: 'About',
    schema: AboutSchema,
    description: 'What the service is, as `GET /_/about` answers it (public, never a secret).',
    properties: {
      name: 'Always `erp-proxy`.',
      version: 'The proxy version.',
      description: 'One sentence.',
      api_versions: 'The ERP versions each API serves and the ERP operation it calls.',
      transports: 'How calls reach the ERP: `ERP_V1_TRANSPORT` and `ERP_V2_TRANSPORT` in effect.',
      settings:
        'The settings in effect that say how the proxy behaves, by environment name (never a key, a target or a database).',
      routes: 'Every route, with its authentication under this configuration (`AUX_PUBLIC` applied).',
      error_codes:
        "The proxy's own errors, with their HTTP status and whether the ERP call may have run (a retry is safe only when it did not).",
      build: 'The commit and build time, when the deployment gave them.',
      runtime: 'The Node.js version, and on AWS the region and function name.',
    },
  },
  {
    id: 'BrakeScope',
    schema: BrakeScopeSchema,
    description:
      'What a brake stops (docs/operators.md, "Stop an agent now"): `"all"`, `{"key": NAME}`, `{"identity": ENTRY}` or `{"erp": HOST}`.',
  },
  {
    id: 'Brake',
    schema: BrakeSchema,
    description: "An operator's brake in force, as `GET /_/brakes` lists it.",
    properties: {
      id: "The brake's id (`brk_` and 16 hex digits): `POST /_/brakes/release` takes it; the -32012 message and the log line (`brake_id`) name it.",
      mode: '`writes`: the calls that can write (reads go on); `all`: every call of the scope.',
      reason:
        "The operator's words, shown to every caller the brake stops, agents included, in the -32012 message (control and format characters removed, runs of spaces made one).",
      expires: 'When the brake releases itself (UTC); absent: it holds until released.',
      set_by: 'The name of the proxy key that set it.',
      set_at: 'When it was set (UTC).',
    },
  },
  {
    id: 'BrakeRequest',
    schema: BrakeRequestSchema,
    description:
      'Body of `POST /_/brakes`: the brake to set. A field it does not name, or a value it refuses, is -32600 (HTTP 400), naming the field.',
    properties: {
      mode: '`writes`: the calls that can write (reads go on); `all`: every call of the scope.',
      reason: `Why, 1 to ${MAX_BRAKE_REASON_CHARS} characters once control and format characters are removed and runs of spaces made one. **Shown to every caller the brake stops, agents included**: no secret, nothing internal.`,
      expires:
        'When the brake releases itself: an ISO 8601 time with its zone (`2026-12-08T06:00:00Z`), in the future. Absent: it holds until released. Callers get `Retry-After` only with it.',
    },
  },
  {
    id: 'BrakeRelease',
    schema: BrakeReleaseSchema,
    description: 'Body of `POST /_/brakes/release`.',
    properties: {
      id: 'The id of a brake in force (`GET /_/brakes` lists them); another is -32600 (HTTP 400).',
    },
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
      // `params`/`keyword`/`kwargs` are checked by a predicate (kept as parsed, byte for byte):
      // any JSON object. Said explicitly: generators read a bare `type: object` as "no members".
      if (ctx.zodSchema === jsonObject()) {
        schema.type = 'object';
        schema.additionalProperties = true;
      }
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
      props[name] = describedWithoutDefault(text, prop);
    }
    components[id] = { description, ...schema };
  }
  return components;
}

/**
 * A property with its description, its default (if any) moved into the description: the field
 * stays optional for generators (openapi-typescript makes a property with a `default` required).
 */
function describedWithoutDefault(description: string, prop: JsonSchema): JsonSchema {
  if (!('default' in prop)) return { description, ...prop };
  const { default: fallback, ...rest } = prop;
  return { description: `${description} Default: \`${JSON.stringify(fallback)}\`.`, ...rest };
}

// --- Errors -----------------------------------------------------------------------------------

/** The APIs that answer with the envelope (not `mcp`, which speaks MCP's JSON-RPC). */
type EnvelopeApi = Exclude<ErrorApi, 'mcp'>;

/** The rows an API can answer with, grouped by HTTP status (ascending). */
function errorsByStatus(api: EnvelopeApi): Map<number, ProxyErrorRow[]> {
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
function responseName(api: EnvelopeApi, status: string): string {
  const prefix = { v1: 'V1', v2: 'V2', version: 'Version' }[api];
  return status === '200' ? `${prefix}Success` : `${prefix}Error${status}`;
}

/**
 * The gateway's answers every route can get, by component name (its 500 is merged with the
 * proxy's own -32603 into each route's 500).
 */
const GATEWAY_RESPONSES: Readonly<Record<string, GatewayAnswer>> = {
  RequestTimeout: GATEWAY_ANSWERS.requestTimeout,
  PayloadTooLarge: GATEWAY_ANSWERS.tooLarge,
  TooManyRequests: GATEWAY_ANSWERS.throttled,
  RequestHeaderFieldsTooLarge: GATEWAY_ANSWERS.headersTooLarge,
};

/** A gateway answer as a response: its real body, never an envelope. */
function gatewayResponse(answer: GatewayAnswer): Record<string, unknown> {
  return {
    description: `${answer.when} Not an envelope: \`${gatewayBody(answer)}\`.`,
    content: {
      'application/json': { schema: ref('GatewayError'), example: { message: answer.message } },
    },
  };
}

/** References to the gateway's answers, by status, for an operation's responses. */
function gatewayResponseRefs(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(GATEWAY_RESPONSES).map(([name, answer]) => [
      String(answer.status),
      { $ref: `#/components/responses/${name}` },
    ]),
  );
}

/**
 * The 500 of a route: the proxy's -32603 envelope (`meaning` says what fails there), or the
 * gateway's own answer when the function gave none.
 */
function internalErrorResponse(meaning: string): Record<string, unknown> {
  const internal = GATEWAY_ANSWERS.internal;
  return {
    description:
      `${meaning}\n\n` +
      `${internal.when} The gateway then answers itself, not with an envelope: \`${gatewayBody(internal)}\`.`,
    content: {
      'application/json': {
        schema: { oneOf: [errorEnvelopeWith([PROXY_ERRORS.internal.code]), ref('GatewayError')] },
      },
    },
  };
}

/** The error envelope, its `error.code` one of `codes`. */
function errorEnvelopeWith(codes: readonly number[]): JsonSchema {
  return {
    allOf: [
      ref('ErrorEnvelope'),
      {
        type: 'object',
        properties: { error: { type: 'object', properties: { code: { enum: [...new Set(codes)] } } } },
      },
    ],
  };
}

/** The 500 of the operator endpoints. */
const OPERATOR_INTERNAL_ERROR = 'OperatorError500';

/** The shared responses (the aliases of a route answer alike), as OpenAPI components. */
function componentResponses(): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const api of ['v1', 'v2', 'version'] as const) {
    for (const [status, response] of Object.entries(apiResponses(api))) {
      responses[responseName(api, status)] = response;
    }
  }
  for (const [name, answer] of Object.entries(GATEWAY_RESPONSES)) responses[name] = gatewayResponse(answer);
  responses[OPERATOR_INTERNAL_ERROR] = internalErrorResponse(
    `\`${PROXY_ERRORS.internal.code}\`: the endpoint failed: the license secret could not be read (\`/_/license\`), CloudWatch could not be read (\`/_/metrics\`, deployed), or a bug. The details are only in the logs.`,
  );
  return responses;
}

/** An operation's responses: references to its API's components and to the gateway's answers. */
function apiResponseRefs(api: EnvelopeApi): Record<string, unknown> {
  return {
    ...gatewayResponseRefs(),
    ...Object.fromEntries(
      Object.keys(apiResponses(api)).map((status) => [
        status,
        { $ref: `#/components/responses/${responseName(api, status)}` },
      ]),
    ),
  };
}

/** The response header of an answer replayed from an `Idempotency-Key` record. */
const IDEMPOTENT_REPLAYED = { $ref: '#/components/headers/Idempotent-Replayed' };

/** The responses of an execute or version operation: the envelope, each error status, the gateway's. */
function apiResponses(api: EnvelopeApi): Record<string, unknown> {
  const success = api === 'version' ? 'VersionEnvelope' : 'Envelope';
  const responses: Record<string, unknown> = {
    '200': {
      description:
        api === 'version'
          ? 'The version, in an envelope.'
          : "The ERP's answer, or an ERP-side error (`error` set, HTTP 200): always check `error`.",
      content: { 'application/json': { schema: ref(success) } },
      // Rate limits' headers, and a write with an Idempotency-Key answered from its record.
      ...(api === 'version'
        ? {}
        : { headers: { ...RATE_LIMIT_HEADERS, 'Idempotent-Replayed': IDEMPOTENT_REPLAYED } }),
    },
  };
  for (const [status, rows] of errorsByStatus(api)) {
    if (status === GATEWAY_ANSWERS.internal.status) {
      // A function that crashed or ran out of time is answered by the gateway itself.
      responses[String(status)] = internalErrorResponse(rows.map(describeRow).join('\n\n'));
      continue;
    }
    const envelopeRows = rows.filter((row) => row.answer === 'envelope');
    const textRows = rows.filter((row) => row.answer === 'text');
    const content: Record<string, unknown> = {};
    if (envelopeRows.length > 0) {
      content['application/json'] = { schema: errorEnvelopeWith(envelopeRows.map((row) => row.code)) };
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
    const headers: Record<string, unknown> = {};
    if (rows.some((row) => row.code === -32004 || row.code === PROXY_ERRORS.idempotencyInProgress.code)) {
      headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    }
    if (api !== 'version' && rows.some((row) => row.code === PROXY_ERRORS.upstreamTimeout.code)) {
      // A keyed write whose first attempt's outcome is unknown is replayed as -32003.
      headers['Idempotent-Replayed'] = IDEMPOTENT_REPLAYED;
    }
    if (status === GATEWAY_ANSWERS.throttled.status) {
      // The proxy's own limits and the gateway's throttle both answer 429: two bodies.
      const throttled = GATEWAY_ANSWERS.throttled;
      response.description = `${response.description}\n\n${throttled.when} The gateway then answers itself, not with an envelope: \`${gatewayBody(throttled)}\`.`;
      response.content = {
        'application/json': {
          schema: { oneOf: [errorEnvelopeWith(envelopeRows.map((row) => row.code)), ref('GatewayError')] },
        },
      };
      Object.assign(headers, RATE_LIMIT_HEADERS);
    }
    if (Object.keys(headers).length > 0) response.headers = headers;
    responses[String(status)] = response;
  }
  return responses;
}

/** The headers of an answer to a rate-limited call (draft-ietf-httpapi-ratelimit-headers). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
  RateLimit: { $ref: '#/components/headers/RateLimit' },
} as const;

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

/**
 * An operation of the document: an envelope endpoint names its request body and API (its answers
 * come from the error table); an operator endpoint gives its own 200 answer, so a new one cannot
 * borrow another's (`paths` throws without it). Its summary is the route's own (the route table's
 * `summary`, which `GET /_/about` shows too): written once, there.
 */
interface Operation {
  readonly id: string;
  readonly description: string;
  readonly tag: string;
  readonly body?: string;
  readonly api?: EnvelopeApi;
  /** The 200 response of an operator endpoint. */
  readonly answer?: { readonly description: string; readonly content: Record<string, unknown> };
  /** The key policy API an operator endpoint needs (`operator` unless it says). */
  readonly policyApi?: 'audit' | 'brakes';
  /** An operator endpoint's request body: a schema of {@link SCHEMAS}. */
  readonly request?: string;
  /** An operator endpoint's own error answers, by status, besides every keyed endpoint's. */
  readonly errors?: Readonly<Record<string, unknown>>;
}

/** The 200 of both protected resource metadata routes (RFC 9728). */
const PROTECTED_RESOURCE_ANSWER = {
  description: 'The protected resource metadata of `/mcp` (RFC 9728).',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['resource', 'authorization_servers', 'scopes_supported', 'bearer_methods_supported'],
        properties: {
          resource: {
            type: 'string',
            description: 'The public `/mcp` URL: the audience tokens must carry.',
          },
          authorization_servers: { type: 'array', items: { type: 'string' } },
          scopes_supported: { type: 'array', items: { enum: [...MCP_SCOPES] } },
          bearer_methods_supported: { type: 'array', items: { const: 'header' } },
          resource_name: { type: 'string' },
        },
      },
    },
  },
};

/** The -32600 of a brakes endpoint whose body it refuses. */
function brakeInvalid(): Record<string, unknown> {
  return {
    description:
      '`-32600`: the body is not JSON, or not a brake the endpoint takes (`Invalid brake: ...` names the field), or the id names no brake in force, or the most brakes are in force already.',
    content: { 'application/json': { schema: errorEnvelopeWith([PROXY_ERRORS.invalidRequest.code]) } },
  };
}

const OPERATIONS: Readonly<Record<string, Operation>> = {
  'POST /api/erp/execute': {
    id: 'executeV1',
    description: `Runs one of the ${V1_ACTIONS.length} actions on the target ERP (any version up to 21).`,
    tag: 'v1',
    body: 'V1ExecuteRequest',
    api: 'v1',
  },
  'POST /v1/erp/execute': {
    id: 'executeV1Alias',
    description: 'The same as `POST /api/erp/execute`.',
    tag: 'v1',
    body: 'V1ExecuteRequest',
    api: 'v1',
  },
  'POST /api/erp/version': {
    id: 'version',
    description:
      'Asks the target `GET /web/version` (ERP 19+), else `/jsonrpc` `common.version`; cached per URL for 5 minutes. It only reads, so a -32003 here is safe to retry.',
    tag: 'version',
    body: 'VersionRequest',
    api: 'version',
  },
  'POST /v1/erp/version': {
    id: 'versionV1Alias',
    description: 'The same as `POST /api/erp/version`.',
    tag: 'version',
    body: 'VersionRequest',
    api: 'version',
  },
  'POST /v2/erp/execute': {
    id: 'executeV2',
    description:
      'Calls any public method of a model with named arguments. A body that cannot be decoded into the request shape is answered with a plain-text 400 naming the field.',
    tag: 'v2',
    body: 'V2ExecuteRequest',
    api: 'v2',
  },
  'POST /v2/erp/version': {
    id: 'versionV2',
    description: 'The same as `POST /api/erp/version`.',
    tag: 'version',
    body: 'VersionRequest',
    api: 'version',
  },
  'GET /_/license': {
    id: 'license',
    description: 'Needs `x-api-key` unless the operator set `AUX_PUBLIC=license`.',
    tag: 'operator',
    answer: {
      description: 'The license status.',
      content: { 'application/json': { schema: ref('License') } },
    },
  },
  'GET /_/about': {
    id: 'about',
    description:
      'Name, version, supported APIs and ERP ranges, routes, build and runtime, and `error_codes` (the error table). Public.',
    tag: 'operator',
    answer: {
      description: 'The service description.',
      content: { 'application/json': { schema: ref('About') } },
    },
  },
  'GET /_/metrics': {
    id: 'metrics',
    description:
      'Prometheus text exposition. Needs `x-api-key` unless the operator set `AUX_PUBLIC=metrics`.',
    tag: 'operator',
    answer: {
      description: 'The service metrics, Prometheus text exposition (`text/plain; version=0.0.4`).',
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
  },
  'GET /_/audit': {
    id: 'audit',
    description:
      'The audit records of the calls that can write, newest first (docs/guide/audit.md). Needs the `x-api-key` of a key whose policy lists `audit` in its `apis` (never public); its `targets` and `databases` narrow what it sees. Query parameters: `since`, `until` (UTC ISO 8601 with `Z`, or epoch ms; default the last 30 days), `model`, `record` (`model:id`), `actor` (`key:<name>`, `oauth:<issuer> <sub>`, or a key name), `outcome`, `erp`, `db`, `limit` (1-1000, default 100), `cursor` (the `next_cursor` of the page before).',
    tag: 'operator',
    policyApi: 'audit',
    answer: {
      description: 'A page of audit records (`schema: 1`) and the cursor of the next page (`null`: no more).',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['records', 'next_cursor'],
            properties: {
              records: {
                type: 'array',
                description: 'Audit records, newest first (docs/guide/audit.md, "What a record holds").',
                items: {
                  type: 'object',
                  required: ['schema', 'audit_id', 'time', 'api', 'actor_id', 'actor', 'erp', 'outcome'],
                  properties: {
                    schema: { const: 1 },
                    audit_id: { type: 'string', description: 'Time-ordered and unique (a ULID).' },
                    time: { type: 'string', format: 'date-time' },
                    api: { enum: ['v1', 'v2', 'mcp'] },
                    actor_id: { type: 'string' },
                    actor: { type: 'object' },
                    erp: { type: 'object' },
                    outcome: { enum: ['pending', ...AUDIT_OUTCOMES] },
                  },
                },
              },
              next_cursor: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
  },
  'GET /_/brakes': {
    id: 'listBrakes',
    description: `The operators' brakes in force (docs/operators.md, "Stop an agent now"), read from the state store itself (strongly consistent), not an instance's copy; expired brakes are left out. Needs the \`x-api-key\` of a key whose policy lists \`brakes\` in its \`apis\` (never public). At most ${MAX_BRAKES}. \`npm run brakes -- list\` prints them.`,
    tag: 'operator',
    policyApi: 'brakes',
    answer: {
      description: 'The brakes in force, oldest first.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['brakes'],
            properties: { brakes: { type: 'array', items: ref('Brake') } },
          },
        },
      },
    },
    errors: { '503': brakedKey(true) },
  },
  'POST /_/brakes': {
    id: 'setBrake',
    description: `Sets a brake: every instance refuses the calls it stops (-32012, HTTP 503, the reason in the message, \`Retry-After\` only when it expires) from \`BRAKES_REFRESH\` seconds (default 5) after it is set, until it is released or expires. \`writes\` stops the calls that can write (reads go on); \`all\` every call of the scope. Written conditional on the version read, so two operators never lose one another's brake; at most ${MAX_BRAKES} in force (then -32600). Needs a key whose policy lists \`brakes\`. \`npm run brakes -- set\` does the same.`,
    tag: 'operator',
    policyApi: 'brakes',
    request: 'BrakeRequest',
    answer: {
      description: 'The brake set, with its `id`, `set_by` and `set_at`.',
      content: {
        'application/json': {
          schema: { type: 'object', required: ['brake'], properties: { brake: ref('Brake') } },
        },
      },
    },
    errors: {
      '400': brakeInvalid(),
      '503': brakedKey(true),
    },
  },
  'POST /_/brakes/release': {
    id: 'releaseBrake',
    description:
      'Releases a brake in force, by its id: every instance serves the calls it stopped again from `BRAKES_REFRESH` seconds after. Needs a key whose policy lists `brakes`. `npm run brakes -- release <id>` does the same.',
    tag: 'operator',
    policyApi: 'brakes',
    request: 'BrakeRelease',
    answer: {
      description: 'The brake released.',
      content: {
        'application/json': {
          schema: { type: 'object', required: ['released'], properties: { released: ref('Brake') } },
        },
      },
    },
    errors: {
      '400': brakeInvalid(),
      '503': brakedKey(true),
    },
  },
  'GET /.well-known/oauth-protected-resource/mcp': {
    id: 'oauthProtectedResource',
    description:
      'Where an MCP client signs in to call `/mcp` with an access token (docs/guide/oauth.md): the authorization servers and scopes. Public; 404 while OAuth is off.',
    tag: 'agents',
    answer: PROTECTED_RESOURCE_ANSWER,
  },
  'GET /.well-known/oauth-protected-resource': {
    id: 'oauthProtectedResourceRoot',
    description:
      'The same document as `GET /.well-known/oauth-protected-resource/mcp`, for clients that try the root form.',
    tag: 'agents',
    answer: PROTECTED_RESOURCE_ANSWER,
  },
  'POST /mcp': {
    id: 'mcp',
    description:
      "One MCP JSON-RPC message per request (`initialize`, `tools/list`, `tools/call`...), as an MCP client's `StreamableHTTPClientTransport` sends it; answered in JSON, never as an event stream. The ERP connection comes from the `x-erp-*` headers, never from tool arguments. Tools and their answers: docs/guide/mcp.md. `GET` and `DELETE` answer 405.",
    tag: 'agents',
  },
};

function security(route: Route): unknown[] {
  if (route.auth === 'public') return [];
  if (route.auth === 'aux-configurable') return [{ proxyApiKey: [] }, {}];
  return [{ proxyApiKey: [] }];
}

const UNAUTHORIZED = {
  description: '`-32000`: `x-api-key` missing or not a proxy key (unless `AUX_PUBLIC` lists the endpoint).',
  content: { 'application/json': { schema: errorEnvelopeWith([PROXY_ERRORS.authentication.code]) } },
};

/** The -32008 of an operator endpoint whose API (`operator`, `audit`, `brakes`) the key's policy does not list. */
function policyRefused(api: string): Record<string, unknown> {
  return {
    description: `\`-32008\`: the proxy key's policy does not list \`${api}\` in its \`apis\` (docs/guide/policies.md, "Key policies")${api === 'operator' ? '' : `; \`${api}\` is never implied: a key without a policy is refused too`}; the message names the rule, never the key.`,
    content: { 'application/json': { schema: errorEnvelopeWith([PROXY_ERRORS.keyPolicyRefused.code]) } },
  };
}

/**
 * The 503 of a keyed operator endpoint: -32012, the calling key braked `all`; with `storeFailure`
 * (the brakes endpoints), also -32004, the brakes store could not be read or written.
 */
function brakedKey(storeFailure = false): Record<string, unknown> {
  const braked = `\`${PROXY_ERRORS.braked.code}\`: an operator braked the calling key \`all\` (docs/operators.md, "Stop an agent now"): it is refused on every route, this one included, until the brake is released (with another key) or expires (\`Retry-After\` only then); the message gives the operator's reason.`;
  const store = `\`${PROXY_ERRORS.upstreamUnavailable.code}\`: the brakes could not be read or written in the state store, or this proxy has none: nothing changed; retry shortly.`;
  return {
    description: storeFailure ? `${store}\n\n${braked}` : braked,
    headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
    content: {
      'application/json': {
        schema: errorEnvelopeWith([
          ...(storeFailure ? [PROXY_ERRORS.upstreamUnavailable.code] : []),
          PROXY_ERRORS.braked.code,
        ]),
      },
    },
  };
}

/** The responses of an operator endpoint: its answer, the -32000 when keyed, the 500, the gateway's. */
function operatorResponses(route: Route, operation: Operation): Record<string, unknown> {
  const key = `${route.method} ${route.path}`;
  if (operation.answer === undefined)
    throw new Error(`openapi: no answer (200 response) for the route ${key}`);
  const own: Record<string, unknown> = { '200': operation.answer };
  if (route.auth !== 'public') {
    own['401'] = UNAUTHORIZED;
    own['403'] = policyRefused(operation.policyApi ?? 'operator');
    own['503'] = brakedKey();
  }
  Object.assign(own, operation.errors);
  own['500'] = { $ref: `#/components/responses/${OPERATOR_INTERNAL_ERROR}` };
  return { ...gatewayResponseRefs(), ...own };
}

/** The answers of the OAuth protected resource metadata routes: the document, or 404 while OAuth is off. */
function protectedResourceResponses(route: Route, operation: Operation): Record<string, unknown> {
  if (operation.answer === undefined)
    throw new Error(`openapi: no answer (200 response) for the route ${route.method} ${route.path}`);
  return {
    ...gatewayResponseRefs(),
    '200': operation.answer,
    '404': {
      description: `OAuth is off (\`MCP_OAUTH_ISSUER\` unset): \`${gatewayBody(GATEWAY_ANSWERS.notFound)}\`.`,
      content: { 'application/json': { schema: ref('GatewayError') } },
    },
  };
}

/** A header of the MCP client's configuration. */
function mcpHeader(name: string, required: boolean, description: string): Record<string, unknown> {
  return { name, in: 'header', required, description, schema: { type: 'string' } };
}

/** The JSON-RPC error response of `POST /mcp` (no `result`, `id` null) with one of these codes. */
function mcpErrorSchema(rows: readonly ProxyErrorRow[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: 'null' },
      error: {
        type: 'object',
        // Two rows may share a code (-32008: a key's policy, an OAuth identity): each code once.
        properties: {
          code: { enum: [...new Set(rows.map((row) => row.code))] },
          message: { type: 'string' },
        },
      },
    },
  };
}

/** The JSON-RPC error `POST /mcp` answers before it handles the message, for rows of the error table. */
function mcpErrorResponse(rows: readonly ProxyErrorRow[], description: string): Record<string, unknown> {
  return {
    description: `${description} ${rows.map((row) => `\`${row.code}\`: ${row.meaning}`).join(' ')}`,
    content: { 'application/json': { schema: mcpErrorSchema(rows) } },
  };
}

/** `POST /mcp`: kept small; MCP's own specification describes the messages. */
function mcpOperation(route: Route, operation: Operation): Record<string, unknown> {
  const message = {
    type: 'object',
    description: 'A JSON-RPC 2.0 message of MCP (a batch is refused: -32600).',
    required: ['jsonrpc'],
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'integer'] },
      method: { type: 'string' },
    },
  };
  return {
    operationId: operation.id,
    summary: route.summary,
    description: operation.description,
    tags: [operation.tag],
    security: [{ proxyApiKey: [] }, { proxyBearer: [] }],
    parameters: [
      mcpHeader('accept', true, 'Must name both `application/json` and `text/event-stream` (MCP).'),
      mcpHeader('x-erp-url', false, "The ERP's base URL (needed by every tool)."),
      mcpHeader('x-erp-db', false, 'The ERP database (needed by every tool but `erp_version`).'),
      mcpHeader('x-erp-api-key', false, "The ERP user's API key (needed by every tool but `erp_version`)."),
      mcpHeader('x-erp-user-id', false, "The ERP user's id: needed for ERP 16-18 only."),
      { $ref: '#/components/parameters/RequestTimeout' },
    ],
    requestBody: { required: true, content: { 'application/json': { schema: message } } },
    responses: {
      // The gateway's own answers (408, 413, 429, 431), as on every route.
      ...gatewayResponseRefs(),
      '200': {
        description:
          'The JSON-RPC response. A tool that fails answers a result with `isError: true` (HTTP 200) whose text gives the code, the message, the ERP exception name and whether retrying is safe.',
        content: { 'application/json': { schema: message } },
      },
      '202': { description: 'A notification or response was accepted (no body).' },
      '400': mcpErrorResponse(
        [PROXY_ERRORS.parse, PROXY_ERRORS.invalidRequest],
        'The body is not one MCP message.',
      ),
      '401': {
        ...mcpErrorResponse(
          [PROXY_ERRORS.authentication],
          'No valid proxy key, and (OAuth on) no valid access token. With OAuth on, `WWW-Authenticate: Bearer resource_metadata="<the protected resource metadata URL>"` says where to sign in, with `error="invalid_token"` and its description for a refused token.',
        ),
        headers: {
          'WWW-Authenticate': {
            description: 'Bearer challenge (OAuth on only).',
            schema: { type: 'string' },
          },
        },
      },
      '403': {
        ...mcpErrorResponse(
          [PROXY_ERRORS.license, PROXY_ERRORS.keyPolicyRefused, PROXY_ERRORS.identityRefused],
          'No valid license, or the proxy key\'s policy does not list `mcp` in its `apis` (-32008, before any MCP processing); with OAuth, a person the identity map does not name, or scopes that do not allow the call (`WWW-Authenticate: Bearer error="insufficient_scope", scope=...`).',
        ),
        headers: {
          'WWW-Authenticate': {
            description: 'Bearer insufficient_scope challenge (OAuth on only).',
            schema: { type: 'string' },
          },
        },
      },
      '503': mcpErrorResponse(
        [PROXY_ERRORS.upstreamUnavailable, PROXY_ERRORS.braked],
        "OAuth on: the authorization server's keys could not be read to check the access token; nothing was called. A proxy key an operator braked `all` gets -32012 from its first message, before any MCP processing (a JSON-RPC error, not a tool error; other brakes stop a `tools/call` with a tool error).",
      ),
      '406': {
        description: 'The `accept` header does not name both `application/json` and `text/event-stream`.',
      },
      '415': { description: 'The body is not `application/json`.' },
      ...gatewayResponseRefs(),
      '500': {
        description:
          `\`${PROXY_ERRORS.internal.code}\`: ${PROXY_ERRORS.internal.meaning}\n\n` +
          `${GATEWAY_ANSWERS.internal.when} The gateway then answers itself: \`${gatewayBody(GATEWAY_ANSWERS.internal)}\`.`,
        content: {
          'application/json': {
            schema: { oneOf: [mcpErrorSchema([PROXY_ERRORS.internal]), ref('GatewayError')] },
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
    if (route.fn === 'mcp' && route.method === 'POST') {
      result[route.path] = {
        ...result[route.path],
        [route.method.toLowerCase()]: mcpOperation(route, operation),
      };
      continue;
    }
    const entry: Record<string, unknown> = {
      operationId: operation.id,
      summary: route.summary,
      description: operation.description,
      tags: [operation.tag],
      security: security(route),
    };
    if (operation.body !== undefined && operation.api !== undefined) {
      entry.parameters = [
        { $ref: '#/components/parameters/RequestTimeout' },
        ...(operation.api === 'version' ? [] : [{ $ref: '#/components/parameters/IdempotencyKey' }]),
      ];
      entry.requestBody = {
        required: true,
        content: { 'application/json': { schema: ref(operation.body) } },
      };
      entry.responses = apiResponseRefs(operation.api);
    } else if (route.fn === 'mcp') {
      entry.responses = protectedResourceResponses(route, operation);
    } else {
      if (operation.request !== undefined) {
        entry.requestBody = {
          required: true,
          content: { 'application/json': { schema: ref(operation.request) } },
        };
      }
      entry.responses = operatorResponses(route, operation);
    }
    result[route.path] = { ...result[route.path], [route.method.toLowerCase()]: entry };
  }
  return result;
}

// --- Document ---------------------------------------------------------------------------------

/** A response of the document, as the walk below reads it. */
type ResponseObject = { $ref?: string; headers?: Record<string, unknown> };

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/**
 * Adds the headers that name a request and say where its time went to every response: the
 * functions' answers carry `Request-Id` and API Gateway's `apigw-requestid`, execute's and MCP's
 * `Server-Timing` too; the gateway's own answers (`GATEWAY_RESPONSES`) carry `apigw-requestid`.
 */
function withAnswerHeaders(document: {
  readonly paths: Record<string, unknown>;
  readonly components: { readonly responses: Record<string, unknown> };
}): void {
  const add = (response: ResponseObject, timed: boolean, gateway = false): void => {
    if (response.$ref !== undefined) return;
    response.headers = {
      ...response.headers,
      ...(gateway ? {} : { 'Request-Id': header('Request-Id') }),
      'apigw-requestid': header('apigw-requestid'),
      ...(timed ? { 'Server-Timing': header('Server-Timing') } : {}),
    };
  };
  type Operations = Record<string, { operationId?: string; responses?: Record<string, ResponseObject> }>;
  for (const operations of Object.values(document.paths as Record<string, Operations>)) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {}))
        add(response, operation.operationId === 'mcp');
    }
  }
  for (const [name, response] of Object.entries(
    document.components.responses as Record<string, ResponseObject>,
  )) {
    add(response, /^V[12]/.test(name), name in GATEWAY_RESPONSES);
  }
}

/** The OpenAPI 3.1 document of the proxy. */
export function buildOpenApiDocument(): Record<string, unknown> {
  const document = {
    openapi: '3.1.0',
    info: {
      title: PROXY_NAME,
      version: PROXY_VERSION,
      description: `${PROXY_DESCRIPTION}\n\nA JSON-RPC 2.0 style envelope, not REST: ERP-side errors come back with HTTP 200 and \`error\` set, so always check \`error\`. \`x-error-codes\` lists the proxy's error codes with their HTTP statuses and whether the ERP call may have run (a retry is safe only when it did not). The gateway's own answers (\`GatewayError\`, not envelopes) are listed under each operation; besides them, a path or method no route has gets ${GATEWAY_ANSWERS.notFound.status} \`${gatewayBody(GATEWAY_ANSWERS.notFound)}\`, and the local server answers a request that is not HTTP with ${GATEWAY_ANSWERS.badRequest.status} \`${gatewayBody(GATEWAY_ANSWERS.badRequest)}\`. Generated by \`npm run openapi\` from the proxy's own schemas, routes and error table.`,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: 'http://127.0.0.1:8787', description: 'The local server (`npm start`)' }],
    tags: [
      { name: 'v1', description: 'execute_kw over /jsonrpc (any ERP up to 21)' },
      { name: 'v2', description: 'JSON-2 (ERP 19 and later)' },
      { name: 'version', description: 'The version of a target ERP' },
      {
        name: 'operator',
        description: "License, service description, metrics, the audit, the operators' brakes",
      },
      { name: 'agents', description: 'MCP (Model Context Protocol) tools for AI agents' },
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
        proxyBearer: {
          type: 'http',
          scheme: 'bearer',
          description: '`POST /mcp` only: the proxy key as `Authorization: Bearer <key>`.',
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
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes a write safe to retry (docs/guide/retrying-writes.md): a call that can write runs at most once per key and caller; the same key and request again gets the first answer (`Idempotent-Replayed: true`), with this request\'s `id`. A fresh value (a ULID or UUID) per logical operation, reused on its retries. Another request with the same key: 422 -32011; while the first runs: 409 -32010. Reads are served as usual and not recorded. Kept for `IDEMPOTENCY_TTL` (24 h). One item (draft-ietf-httpapi-idempotency-key-header): the key as sent, or a structured-field string (`"K"` is the key `K`; `\\"` and `\\\\` are its escapes), 1 to 255 visible ASCII characters without a comma either way. A comma (a list, or the header sent twice, which arrives joined by a comma) or an empty value: 400 -32600 naming the header, before any ERP traffic.',
          schema: {
            type: 'string',
            minLength: 1,
            maxLength: 512,
            // A key as sent (not starting with a quote), or a structured-field string whose escapes
            // are `\"` and `\\`; no comma either way (test/property/idempotency-key.property.test.ts).
            pattern:
              '^(?:[\\x21\\x23-\\x2B\\x2D-\\x7E][\\x21-\\x2B\\x2D-\\x7E]{0,254}|"(?:[\\x21\\x23-\\x2B\\x2D-\\x5B\\x5D-\\x7E]|\\\\["\\\\]){1,255}")$',
          },
        },
      },
      headers: {
        'Retry-After': {
          description:
            "On -32004: with HTTP 429, the proxy's own limits, whole seconds (at least 1: until the window ends, or 1 for an in-flight cap); with 503, passed on from the ERP or the proxy in front of it when it gave one (1 when the idempotency store could not be reached). On -32010, when to ask again with the same Idempotency-Key. On -32012 (an operator's brake, HTTP 503), only when the brake expires by itself: the seconds until it does; without it, the brake holds until an operator releases it.",
          schema: { type: 'string' },
        },
        'RateLimit-Policy': {
          description:
            'On the answers of calls rate limits applied to (docs/guide/limits.md): each limit as `"<scope>-<period>";q=<requests>;w=<window seconds>` (draft-ietf-httpapi-ratelimit-headers), e.g. `"key-minute";q=60;w=60`.',
          schema: { type: 'string' },
        },
        RateLimit: {
          description:
            'With `RateLimit-Policy`: each limit\'s calls left in its window and the seconds until it ends, `"key-minute";r=59;t=42`.',
          schema: { type: 'string' },
        },
        'Idempotent-Replayed': {
          description:
            '`true`: the answer of an earlier call with the same Idempotency-Key, replayed from its record without running the call again (on a 504 -32003: its outcome is unknown, and it will not run again under that key).',
          schema: { type: 'string', const: 'true' },
        },
        'Request-Id': {
          description:
            'The request\'s id: the request id of its log line and of its audit record (docs/guide/errors.md, "Naming a call"). Deployed, API Gateway\'s request id, as in `apigw-requestid`; locally a UUID. Send it when reporting a problem.',
          schema: { type: 'string' },
        },
        'apigw-requestid': {
          description:
            "API Gateway's request id, which it adds to every answer, its own included (those carry no `Request-Id`: read this one then); the local server sends it too, on every answer.",
          schema: { type: 'string' },
        },
        'Server-Timing': {
          description:
            'Where the time went, in milliseconds (W3C Server Timing): `erp` (the ERP requests; absent when none was sent), `store` (the state store and the audit, when used) and `proxy` (the rest), e.g. `erp;dur=41.2, store;dur=3.05, proxy;dur=0.9`. Left out with `SERVER_TIMING=off`.',
          schema: { type: 'string' },
        },
      },
    },
    'x-error-codes': errorCodes(),
  };
  withAnswerHeaders(document);
  return document;
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
