/**
 * `serveMcp` called directly, as the mcp function calls it once the chain has authenticated the
 * caller and read the body: an answer without HTTP or an ERP (no tool reaches one: a tool that
 * did would fail with an internal error).
 */

import { generatedSealKeys } from '../../lambdas/core/confirm/keys.ts';
import type { McpInbound } from '../../lambdas/core/mcp/connection.ts';
import type { McpDeps } from '../../lambdas/core/mcp/erp-access.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { EmbeddedStateStore } from '../../lambdas/platform/state/state-store-embedded.ts';
import { serveMcp } from '../../lambdas/protocol/mcp/serve.ts';
import type { ErpTransport } from '../../lambdas/upstream/erp-transport.ts';
import { compileTargetPolicy } from '../../lambdas/upstream/target-policy.ts';
import type { VersionClient } from '../../lambdas/upstream/version-client.ts';
import { TEST_PROXY_KEY } from './test-secrets.ts';

/** An HTTP answer: status, content type, body. */
export interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

/**
 * The runtime's MCP parts for a direct `serveMcp` call: the test proxy key's configuration (with
 * `env` over it), the target policy compiled from that same configuration as the runtime does
 * (`createUpstream`), no cached version, `erp` for both transports, one embedded store for the
 * idempotency records and the confirmations, and a seal key generated for the test.
 */
export function mcpDeps(writeTools: boolean, erp: ErpTransport, env: Record<string, string> = {}): McpDeps {
  const config = loadConfig({ PROXY_API_KEY: TEST_PROXY_KEY, ...env });
  const store = new EmbeddedStateStore();
  return {
    config,
    policy: compileTargetPolicy({
      allowedTargets: config.allowedTargets,
      allowedDatabases: config.allowedDatabases,
    }),
    versions: { cached: () => undefined } as unknown as VersionClient,
    named: erp,
    positional: erp,
    writeTools,
    idempotency: { store, ttlSeconds: config.idempotencyTtlSeconds },
    confirm: { keys: generatedSealKeys(), store, ttlSeconds: config.confirmTtlSeconds },
  };
}

/** What serveMcp answers (no ERP: these cases never reach one). */
export async function proxyAnswer(
  writeTools: boolean,
  body: unknown,
  headers: Readonly<Record<string, string>>,
  env: Record<string, string> = {},
): Promise<Answer> {
  const never = { call: () => Promise.reject(new Error('no tool runs in these cases')) };
  const deps = mcpDeps(writeTools, never, env);
  const inbound = mcpInbound(body, headers, {
    erp: {
      from: 'headers',
      headers: { url: 'http://127.0.0.1:9', db: 'erp_a', apiKey: 'b'.repeat(40), userId: '2' },
    },
  });
  const { response } = await serveMcp(inbound, deps);
  return {
    status: response.statusCode,
    contentType: response.headers?.['content-type'],
    body: response.body,
  };
}

/**
 * One `POST /mcp` as the edge hands it to the core: `body` read, `headers` the protocol's, the test
 * proxy key presented, no policy unless `overrides` gives one.
 */
export function mcpInbound(
  body: unknown,
  headers: Readonly<Record<string, string>>,
  overrides: Partial<McpInbound> & Pick<McpInbound, 'erp'>,
): McpInbound {
  return {
    envelopeId: null,
    identity: { kind: 'key', name: 'test' },
    keyPolicy: undefined,
    body: { ok: true, value: body, members: new Map(), tooDeep: false },
    protocolHeaders: headers,
    presentedProxyKey: TEST_PROXY_KEY,
    requestTimeout: undefined,
    responseEncoding: undefined,
    sourceIp: '127.0.0.1',
    remainingMs: undefined,
    ...overrides,
  };
}
