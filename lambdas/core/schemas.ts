/**
 * @module core/schemas
 * zod schemas of the request bodies (README, "Calling the proxy") and the one function
 * that turns a zod failure into a short, field-naming message.
 *
 * Building a schema is cold-start work, so it is kept small: the schemas use `zod/mini` (the same
 * core, checks and messages as zod's classic API, without the methods classic puts on every
 * schema object; building the v1 schema on a first request took 3.3 ms instead of 6.2 ms on a
 * loaded 2-core VM), and each is built on its first use ({@link lazily}), so a function builds
 * only the schema of its own endpoint. Every message is the schemas' own: none comes from a zod
 * locale.
 */

import * as z from 'zod/mini';
import { MAX_NAME_LENGTH, MODEL_NAME } from '../platform/erp-names.ts';
import { isJsonObject } from '../platform/json.ts';
import { lazily } from '../platform/zod.ts';

/** The 9 v1 actions (README, "Calling the proxy"). */
export const V1_ACTIONS = [
  'search_count',
  'search',
  'read',
  'fields_get',
  'search_read',
  'create',
  'write',
  'unlink',
  'call_method',
] as const;
export type V1Action = (typeof V1_ACTIONS)[number];

/**
 * Longest host name accepted in a target URL: DNS's own limit (RFC 1035: 253 characters without
 * the trailing dot), so no error message or log line can repeat a longer one.
 */
export const MAX_HOST_NAME_LENGTH = 253;

/**
 * A base URL the proxy can append `/jsonrpc` or `/json/2/...` to, parsed here once: the parsed
 * `URL` goes on to the target policy and the transports (the JSON Schema shows the text).
 */
export const baseUrl = lazily(() =>
  z.pipe(
    z
      .string({ error: (issue) => typeError(issue.input, 'string') })
      .check(z.minLength(1, 'must not be empty')),
    z.transform((value: string, payload) => {
      // zod/mini hands a transform the parse payload itself: its issues are pushed there.
      const problem = (message: string) => payload.issues.push({ code: 'custom', message, input: value });
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        problem('must be an absolute URL such as https://erp.example.com');
        return z.NEVER;
      }
      let valid = true;
      if (url.search !== '' || url.hash !== '') {
        problem('must be a base URL, without query or fragment');
        valid = false;
      }
      if (url.hostname.replace(/\.$/, '').length > MAX_HOST_NAME_LENGTH) {
        problem(`the host name is longer than ${MAX_HOST_NAME_LENGTH} characters`);
        valid = false;
      }
      return valid ? url : z.NEVER;
    }),
  ),
);

function typeError(input: unknown, expected: string): string {
  if (input === undefined) return 'is required';
  return `expected ${expected}, received ${describe(input)}`;
}

function describe(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'array';
  return typeof input;
}

const requiredString = lazily(() => z.string({ error: (issue) => typeError(issue.input, 'string') }));
/**
 * A JSON object, kept as the very object that was parsed: `params`, `keyword` and `kwargs` pass
 * through untouched (a `z.record` would copy it and drop an own `__proto__` key on the way).
 */
export const jsonObject = lazily(() =>
  z.custom<Record<string, unknown>>(isJsonObject, {
    error: (issue) => typeError(issue.input, 'object'),
  }),
);

export const erpInstanceV1 = lazily(() =>
  z.object(
    {
      url: baseUrl(),
      db: requiredString().check(z.minLength(1, 'must not be empty')),
      user_id: z
        .number({ error: (issue) => typeError(issue.input, 'integer') })
        .check(z.int('expected integer, received a fractional number')),
      api_key: requiredString().check(z.minLength(1, 'must not be empty')),
    },
    { error: (issue) => typeError(issue.input, 'object') },
  ),
);

export const erpInstanceV2 = lazily(() =>
  z.object(
    {
      url: baseUrl(),
      db: requiredString(),
      api_key: requiredString(),
      // A v1-shaped instance object works unchanged on v2 (README): `user_id` is accepted, ignored.
      user_id: z.optional(z.unknown()),
    },
    { error: (issue) => typeError(issue.input, 'object') },
  ),
);

export const v1ExecuteSchema = lazily(() =>
  z.object({
    id: requiredString(),
    action: z.enum(V1_ACTIONS, {
      error: (issue) =>
        issue.input === undefined
          ? 'is required'
          : `must be one of ${V1_ACTIONS.join(', ')}; use call_method with fn_name for any other method`,
    }),
    // The one name grammar (platform/erp-names.ts), before any rule reads the name.
    model_id: requiredString().check(
      z.minLength(1, 'must not be empty'),
      z.maxLength(MAX_NAME_LENGTH, `is longer than ${MAX_NAME_LENGTH} characters`),
      z.regex(
        MODEL_NAME,
        'expected an ERP model name such as res.partner (letters, digits, _ and single dots)',
      ),
    ),
    params: z._default(z.array(z.unknown(), { error: (issue) => typeError(issue.input, 'array') }), []),
    keyword: z._default(jsonObject(), {}),
    // Only read for call_method; null counts as absent (-32002 there, ignored otherwise).
    fn_name: z.nullish(z.string({ error: (issue) => typeError(issue.input, 'string') })),
    erp_instance: erpInstanceV1(),
  }),
);
export type V1ExecuteRequest = z.infer<ReturnType<typeof v1ExecuteSchema>>;

export const v2ExecuteSchema = lazily(() =>
  z.object({
    id: requiredString(),
    model_id: requiredString(),
    method: requiredString(),
    kwargs: jsonObject(),
    erp_instance: erpInstanceV2(),
  }),
);
export type V2ExecuteRequest = z.infer<ReturnType<typeof v2ExecuteSchema>>;

export const versionSchema = lazily(() =>
  z.object({
    id: requiredString(),
    url: baseUrl(),
  }),
);
export type VersionRequest = z.infer<ReturnType<typeof versionSchema>>;

/** `kwargs: expected object, received array; id: is required` */
export function describeIssues(error: z.core.$ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join('.') : 'body';
      const message = issue.message.replace(/^Invalid input: /, '');
      return `${path}: ${message}`;
    })
    .join('; ');
}

/** Model and method names: the one grammar (platform/erp-names.ts). */
export {
  isMethodName,
  isModelName,
  MAX_NAME_LENGTH,
  METHOD_NAME,
  MODEL_NAME,
} from '../platform/erp-names.ts';
/** A value that can be sent as an HTTP header value unchanged (defined with the transports that send it). */
export { HEADER_SAFE } from '../upstream/erp-transport.ts';
