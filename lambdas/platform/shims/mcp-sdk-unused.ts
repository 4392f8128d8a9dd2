/**
 * @module platform/shims/mcp-sdk-unused
 * Stands in, in the Lambda bundles only (esbuild `alias`, lib/proxy-function.ts), for four
 * packages the MCP SDK imports at load time for features `POST /mcp` never uses:
 *
 * - `ajv` and `ajv-formats`: the SDK's default JSON Schema validator, used only to check what a
 *   client answers to an elicitation; the server is given a validator of its own
 *   (core/mcp/serve.ts), so the default is never built;
 * - `zod/v3` and `zod-to-json-schema`: the SDK's support for tools whose schemas are zod 3; every
 *   schema here is zod 4's (`import * as z from 'zod'`).
 *
 * Measured on the mcp bundle: 557 KB without these stand-ins, 344 KB with them, and about 35 ms
 * less of a cold start (import and first tool call, bench/cold-start.ts). Each export throws if it
 * is ever called: a new SDK version that needed one would fail the bundle test
 * (test/infra/bundle.test.ts), which runs the bundled mcp handler, not a production call.
 */

function notBundled(): never {
  throw new Error(
    'erp-proxy: a part of the MCP SDK that this bundle leaves out was used (lambdas/platform/shims/mcp-sdk-unused.ts)',
  );
}

/** `ajv`'s and `ajv-formats`' default exports. */
export default notBundled;
/** `zod-to-json-schema`'s converter, for zod 3 schemas. */
export const zodToJsonSchema = notBundled;
/** `zod/v3`'s `object`, for zod 3 shapes. */
export const object = notBundled;
