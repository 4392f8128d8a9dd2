/**
 * @module middleware/mcp-auth
 * Who calls `POST /mcp` (README, "Agents (MCP)" and "Remote agents with OAuth"): a proxy key
 * (`x-api-key`, or `Authorization: Bearer <key>`), or, when OAuth is on, an access token
 * (`Authorization: Bearer <JWT>`). The two are told apart by the bearer value's shape: a JWT
 * (three base64url parts, the first a JSON header naming `alg`) is a token, anything else a key;
 * `x-api-key`, when sent, always wins. The credential is read here, once
 * (`platform/bearer.ts`), and leaves as values: the caller, its policy, the key it presented and,
 * for a token, the signed-in person. Checked before the body is read, as the key is on every
 * endpoint.
 */

import type { CallerIdentity } from '../core/inbound-call.ts';
import { presentedCredential } from '../platform/bearer.ts';
import type { BrakesSource } from '../platform/brakes/brakes-source.ts';
import { AuthenticationError } from '../platform/errors.ts';
import type { ProxyKeySource } from '../platform/secrets.ts';
import {
  authenticateToken,
  challengeHeaders,
  type OAuthCaller,
  type OAuthResourceServer,
} from '../protocol/oauth/resource-server.ts';
import { type Authenticated, checkProxyKey } from './api-key-auth.ts';
import { type NoValues, type Step, step } from './step.ts';

/** What the step returns: the caller, its policy, and who it is as a value for the core. */
export interface McpAuthenticated extends Authenticated {
  readonly callerIdentity: CallerIdentity;
  /** The proxy key the caller presented (an ERP key equal to it is refused); none for a token. */
  readonly presentedProxyKey: string | undefined;
  /** The signed-in person, for a token caller: the identity-map entry, subject and scopes. */
  readonly oauth: OAuthCaller | undefined;
}

/** What a key refusal's 401 adds with OAuth on: the other way in. */
const OR_SIGN_IN =
  '; or sign in with OAuth and send the access token as Authorization: Bearer <token> ' +
  '(WWW-Authenticate names where to sign in)';

/**
 * The `/mcp` caller check: proxy keys as `apiKeyAuth` checks them, and access tokens through
 * `oauth` (absent: OAuth off, every bearer value is a key). With OAuth on, a refused or missing
 * credential answers 401 with `WWW-Authenticate` naming the protected resource metadata, so a
 * connector can find where to sign in, and a text naming both ways in.
 */
export function mcpAuth(
  keys: ProxyKeySource,
  oauth: OAuthResourceServer | undefined,
  brakes?: BrakesSource,
): Step<NoValues, McpAuthenticated> {
  return step<NoValues, McpAuthenticated>('mcpAuth', async (event) => {
    const credential = presentedCredential(event.headers ?? {}, {
      bearer: true,
      tokens: oauth !== undefined,
    });
    const key = credential?.kind === 'key' ? credential : undefined;
    if (oauth && credential?.kind === 'token') {
      const { caller, policy } = await authenticateToken(oauth, credential.token);
      const name = caller.identity.name;
      return {
        values: {
          callerName: name,
          policy,
          callerIdentity: {
            kind: 'oauth',
            issuer: caller.issuer,
            subject: caller.subject,
            entry: name,
            ...(caller.clientId === undefined ? {} : { clientId: caller.clientId }),
          },
          presentedProxyKey: undefined,
          oauth: caller,
        },
        facts: { callerKeyName: name },
      };
    }
    try {
      const { callerName: caller, policy } = await checkProxyKey(keys, key, { bearer: true, brakes });
      return {
        values: {
          callerName: caller,
          policy,
          callerIdentity: { kind: 'key', name: caller },
          presentedProxyKey: key?.key,
          oauth: undefined,
        },
        facts: { callerKeyName: caller },
      };
    } catch (error) {
      // With OAuth on, a 401 also says where to sign in (MCP authorization: discovery).
      if (oauth && error instanceof AuthenticationError)
        throw new AuthenticationError(`${error.message}${OR_SIGN_IN}`, {
          headers: challengeHeaders(oauth.resource),
        });
      throw error;
    }
  });
}
