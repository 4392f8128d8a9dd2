/**
 * @module protocol/oauth/vendored-jose
 * Entry of the `jose` shipped beside the mcp function's bundle (lib/proxy-function.ts,
 * `VENDORED`): exactly what `token-verifier.ts` and `issuer-http.ts` use of it, so esbuild keeps
 * nothing else of the package. The mcp bundle imports `jose` on the first access token only.
 */
export { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
