/**
 * @module platform/bearer
 * How `POST /mcp` tells the two kinds of `Authorization: Bearer` value apart (README, "Remote
 * agents with OAuth"): an access token is a JWT; anything else is a proxy key. Proxy keys of
 * JWT shape are refused where the keys are read (platform/config.ts), so the rule never misreads one.
 */

/**
 * Whether an `Authorization: Bearer` value is an access token (a JWT: three base64url parts, the
 * first a JSON object naming `alg`) rather than a proxy key. Proxy keys are never JWT-shaped: the
 * ones the stack generates are hex, and a configured key of that shape is refused at load
 * (`parseProxyKeys`).
 */
export function isAccessToken(value: string): boolean {
  const parts = value.split('.');
  if (parts.length !== 3 || !parts.every((part, index) => index === 2 || /^[A-Za-z0-9_-]+$/.test(part)))
    return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0] ?? '', 'base64url').toString('utf8'));
    return (
      typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string'
    );
  } catch {
    return false;
  }
}
