/**
 * @module middleware/mcp-auth
 * Who calls `POST /mcp` (README, "Agents (MCP)" and "Remote agents with OAuth"): a proxy key
 * (`x-api-key`, or `Authorization: Bearer <key>`), or, when OAuth is on, an access token
 * (`Authorization: Bearer <JWT>`). The two are told apart by the bearer value's shape: a JWT
 * (three base64url parts, the first a JSON header naming `alg`) is a token, anything else a key;
 * `x-api-key`, when sent, always wins. Checked before the body is read, as the key is on every
 * endpoint.
 */
import { AuthenticationError } from '../platform/errors.ts';
import type { ProxyKeySource } from '../platform/secrets.ts';
import { isAccessToken } from '../protocol/oauth/challenge.ts';
import {
  authenticateToken,
  challengeHeaders,
  type OAuthCaller,
  type OAuthResourceServer,
} from '../protocol/oauth/resource-server.ts';
import { type Authenticated, apiKeyAuth, BEARER } from './api-key-auth.ts';
import { type NoValues, type Step, step } from './step.ts';

/** What the step returns: the caller, its policy, and the signed-in person for a token caller. */
export interface McpAuthenticated extends Authenticated {
  readonly oauth: OAuthCaller | undefined;
}

/**
 * The `/mcp` caller check: proxy keys as {@link apiKeyAuth} checks them, and access tokens through
 * `oauth` (absent: OAuth off, every bearer value is a key). With OAuth on, a refused or missing
 * credential answers 401 with `WWW-Authenticate` naming the protected resource metadata, so a
 * connector can find where to sign in.
 */
export function mcpAuth(
  keys: ProxyKeySource,
  oauth: OAuthResourceServer | undefined,
): Step<NoValues, McpAuthenticated> {
  const byKey = apiKeyAuth(keys, { bearer: true });
  return step<NoValues, McpAuthenticated>('mcpAuth', async (event, known) => {
    const headers = event.headers ?? {};
    const bearer = BEARER.exec(headers.authorization ?? '')?.[1];
    if (oauth && headers['x-api-key'] === undefined && bearer !== undefined && isAccessToken(bearer)) {
      const { caller, policy } = await authenticateToken(oauth, bearer);
      return {
        values: { caller: caller.identity.name, policy, oauth: caller },
        facts: { callerKeyName: caller.identity.name },
      };
    }
    try {
      const { values, facts } = await byKey.run(event, known);
      return { values: { ...values, oauth: undefined }, ...(facts ? { facts } : {}) };
    } catch (error) {
      // With OAuth on, a 401 also says where to sign in (MCP authorization: discovery).
      if (oauth && error instanceof AuthenticationError)
        throw new AuthenticationError(error.message, { headers: challengeHeaders(oauth.resource) });
      throw error;
    }
  });
}
