/**
 * @module protocol/oauth/identities
 * The operator's map from a person's access token to an ERP connection and a key policy
 * (`MCP_OAUTH_IDENTITIES`, or the secret `MCP_OAUTH_IDENTITIES_SECRET_ID` names; README, "Remote
 * agents with OAuth"):
 *
 * ```json
 * {"identities": [
 *   {"name": "sales", "match": {"claim": "groups", "value": "sales"},
 *    "erp": {"url": "https://erp.example.com", "db": "prod", "user_id": 7, "api_key": "..."},
 *    "policy": {"access": "read", "models": ["res.partner", "sale.*"]}}
 * ]}
 * ```
 *
 * The first entry whose claim matches wins: a string claim equal to `value`, or an array claim
 * containing it (`groups`, Cognito's `cognito:groups`); `sub` names one person. `policy` has the
 * proxy keys' policy format (platform/key-policy.ts). A model never sees `erp.api_key`: the
 * connection comes from here, never from the request. The connection is checked here, once, with
 * the rules of a call's connection (core/mcp/connection.ts): `url` with `erp_instance.url`'s schema
 * (a base URL: no query or fragment), http(s) without user info (what the target policy refuses
 * at call time), `db` and `api_key` as header values. A problem in the document fails it whole,
 * with a message naming the entry's `name` and the field, never an ERP key: locally the proxy
 * does not start; deployed, token callers are answered -32603 until the secret is fixed
 * (`npm run check:identities -- <file>` checks a map before it is put).
 */
import * as z from 'zod/mini';
import { checkConfirmPolicies } from '../../core/confirm/policy.ts';
import { type ErpConnection, headerValueRules } from '../../core/mcp/connection.ts';
import { WRITE_TOOL_NAMES } from '../../core/mcp/write-tools.ts';
import { baseUrl } from '../../core/schemas.ts';
import {
  compileKeyPolicy,
  type KeyPolicy,
  keyPolicySchema,
  strictObjectError,
} from '../../platform/key-policy.ts';
import { lazily } from '../../platform/zod.ts';

/** One person's (or group's) ERP connection and policy. */
export interface Identity {
  readonly name: string;
  /** `issuer`: the token's `iss` must be it (required when several issuers are accepted). */
  readonly match: { readonly claim: string; readonly value: string; readonly issuer?: string };
  /** The connection, checked when the map was read (`uid` for ERP 16-18). */
  readonly erp: ErpConnection;
  readonly policy: KeyPolicy | undefined;
}

/** A database name or an ERP key: it travels upstream as a header value. */
const headerValue = (what: string) =>
  text(what).check(
    z.maxLength(headerValueRules.maxLength, `at most ${headerValueRules.maxLength} characters`),
    z.regex(headerValueRules.pattern, 'printable ASCII, as it travels in a header'),
  );

const text = (what: string) =>
  z.string({ error: `expected a string (${what})` }).check(z.minLength(1, `${what} is not empty`));

const identitiesSchema = lazily(() =>
  z.object(
    {
      identities: z.array(
        z.strictObject(
          {
            name: text('the name'),
            match: z.strictObject(
              { claim: text('the claim'), value: text('the value'), issuer: z.optional(text('the issuer')) },
              { error: strictObjectError(() => 'expected {"claim", "value", "issuer"}') },
            ),
            erp: z.strictObject(
              {
                url: z.pipe(
                  baseUrl(),
                  z.custom<URL>(
                    (url) =>
                      url instanceof URL &&
                      (url.protocol === 'https:' || url.protocol === 'http:') &&
                      url.username === '' &&
                      url.password === '',
                    'expected an http(s) URL without user info',
                  ),
                ),
                db: headerValue('the database'),
                user_id: z.optional(
                  z
                    .number({ error: 'expected the ERP user id (an integer)' })
                    .check(z.int(), z.positive('expected a positive integer')),
                ),
                api_key: headerValue('the ERP API key'),
              },
              { error: strictObjectError(() => 'expected {"url", "db", "user_id", "api_key"}') },
            ),
            policy: z.optional(keyPolicySchema()),
          },
          { error: strictObjectError(() => 'expected an object') },
        ),
        // An empty list is allowed: every signed-in person is refused as unmapped (the stack's first value).
        { error: 'expected a list' },
      ),
    },
    { error: 'expected {"identities": [...]}' },
  ),
);

/**
 * Parses the identity map. Throws an `Error` naming the entry (by its `name`) and the field; the
 * message never holds an ERP key or a value from the document.
 */
export function parseIdentities(
  raw: string,
  options: { readonly issuers?: readonly string[] } = {},
): readonly Identity[] {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error('OAuth identities: not valid JSON');
  }
  const parsed = identitiesSchema().safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const [top, index] = issue.path;
      const where = issue.path.join('.') || 'document';
      if (top !== 'identities' || typeof index !== 'number') return `${where}: ${issue.message}`;
      const name = ((json as { identities: unknown[] }).identities[index] as { name?: unknown } | null)?.name;
      const named =
        typeof name === 'string' && name !== '' ? ` (identity ${JSON.stringify(name.slice(0, 64))})` : '';
      return `${where}${named}: ${issue.message}`;
    });
    throw new Error(`OAuth identities: ${problems.join('; ')}`);
  }
  // With several issuers, `sub` and group names are only unique per issuer: each entry must say whose.
  const issuers = options.issuers ?? [];
  for (const [index, entry] of parsed.data.identities.entries()) {
    const where = `identities.${index}.match.issuer (identity ${JSON.stringify(entry.name.slice(0, 64))})`;
    if (issuers.length > 1 && entry.match.issuer === undefined)
      throw new Error(`OAuth identities: ${where}: required when several issuers are accepted`);
    if (entry.match.issuer !== undefined && issuers.length > 0 && !issuers.includes(entry.match.issuer))
      throw new Error(`OAuth identities: ${where}: not one of MCP_OAUTH_ISSUER`);
  }
  const identities = Object.freeze(
    parsed.data.identities.map((entry) =>
      Object.freeze({
        name: entry.name,
        match: Object.freeze({ ...entry.match }),
        erp: Object.freeze({
          baseUrl: entry.erp.url,
          db: entry.erp.db,
          apiKey: entry.erp.api_key,
          uid: entry.erp.user_id,
        }),
        policy: entry.policy === undefined ? undefined : compileKeyPolicy(entry.policy),
      }),
    ),
  );
  // A policy's `confirm` must name write tools of the MCP tool declarations (core/confirm/policy.ts).
  checkConfirmPolicies(
    'OAuth identities',
    identities.map((identity, index) => ({
      label: `identities.${index}.policy.confirm (identity ${JSON.stringify(identity.name.slice(0, 64))})`,
      policy: identity.policy,
    })),
    WRITE_TOOL_NAMES,
  );
  return identities;
}

/** The first identity whose claim matches the token's claims (see the module header), if any. */
export function matchIdentity(
  identities: readonly Identity[],
  claims: Readonly<Record<string, unknown>>,
): Identity | undefined {
  return identities.find(({ match }) => {
    if (match.issuer !== undefined && claims.iss !== match.issuer) return false;
    // Own properties only: a claim named `constructor` or `__proto__` matches nothing inherited.
    if (!Object.hasOwn(claims, match.claim)) return false;
    const value = claims[match.claim];
    return Array.isArray(value) ? value.includes(match.value) : value === match.value;
  });
}
