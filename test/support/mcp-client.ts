/**
 * MCP clients as agents have them, configured only with the proxy's `/mcp` URL and headers: the
 * SDK 1.x `Client` (`@modelcontextprotocol/sdk`, the legacy revisions: `initialize`, then
 * 2025-11-25) and the official v2 client (`@modelcontextprotocol/client`) pinned to the stateless
 * 2026-07-28 revision; and readers of tool results. Shared by the integration and live suites.
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { TOOLS } from '../../lambdas/core/mcp/tools.ts';

/** The read tools, in the order `tools/list` gives them; the write tools come after. */
export const READ_TOOLS: readonly string[] = TOOLS.filter((tool) => !tool.writes).map((tool) => tool.name);
export const WRITE_TOOLS: readonly string[] = TOOLS.filter((tool) => tool.writes).map((tool) => tool.name);

/** What the tests use of either client (the SDK 1.x `Client` and the v2 one). */
export interface AgentClient {
  listTools(): Promise<{ readonly tools: readonly { readonly name: string }[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

/** Deletes a record with the `unlink` tool and checks that it is gone (archived records included). */
export async function unlinkAndCheckGone(client: AgentClient, model: string, id: number): Promise<void> {
  expect(json(await client.callTool({ name: 'unlink', arguments: { model, ids: [id] } }))).toBe(true);
  const left = await client.callTool({
    name: 'search_count',
    arguments: { model, domain: [['id', '=', id]], context: { active_test: false } },
  });
  expect(json(left)).toBe(0);
}

/** The ERP connection headers of an MCP client's configuration. */
export function erpHeaders(connection: {
  url: string;
  db: string;
  apiKey: string;
  uid?: number | undefined;
}): Record<string, string> {
  return {
    'x-erp-url': connection.url,
    'x-erp-db': connection.db,
    'x-erp-api-key': connection.apiKey,
    ...(connection.uid === undefined ? {} : { 'x-erp-user-id': String(connection.uid) }),
  };
}

/** An SDK client connected to `<proxyUrl>/mcp` with these headers; `errors` collects what it reports. */
export async function connectMcp(
  proxyUrl: string,
  headers: Record<string, string>,
): Promise<{ client: Client; errors: Error[] }> {
  const client = new Client({ name: 'erp-proxy-tests', version: '1.0.0' });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  const transport = new StreamableHTTPClientTransport(new URL(`${proxyUrl}/mcp`), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return { client, errors };
}

/** Runs `test` with a connected client, and closes it whatever happens. */
export async function withMcpClient<T>(
  proxyUrl: string,
  headers: Record<string, string>,
  test: (client: Client, errors: Error[]) => Promise<T>,
): Promise<T> {
  const { client, errors } = await connectMcp(proxyUrl, headers);
  try {
    return await test(client, errors);
  } finally {
    await client.close();
  }
}

/** The stateless revision the v2 client is pinned to. */
export const MODERN_VERSION = '2026-07-28';

/**
 * The official v2 client pinned to {@link MODERN_VERSION} (no fallback to `initialize`), connected
 * to `<proxyUrl>/mcp` with these headers; `errors` collects what it reports.
 */
export async function connectModernMcp(
  proxyUrl: string,
  headers: Record<string, string>,
): Promise<{ client: ModernClient; errors: Error[] }> {
  const client = new ModernClient(
    { name: 'erp-proxy-tests', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN_VERSION } } },
  );
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  const transport = new ModernTransport(new URL(`${proxyUrl}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return { client, errors };
}

/** Runs `test` with a connected v2 client pinned to 2026-07-28, and closes it whatever happens. */
export async function withModernMcpClient<T>(
  proxyUrl: string,
  headers: Record<string, string>,
  test: (client: ModernClient, errors: Error[]) => Promise<T>,
): Promise<T> {
  const { client, errors } = await connectModernMcp(proxyUrl, headers);
  try {
    return await test(client, errors);
  } finally {
    await client.close();
  }
}

/** An answer a person gives a confirmation form (an elicitation result's `action`). */
export type FormAnswer = 'accept' | 'decline' | 'cancel';

/**
 * The v2 client pinned to 2026-07-28, declaring form elicitation and answering every form with
 * `answer` (`undefined`: declaring no elicitation at all), connected to `<proxyUrl>/mcp` with these
 * headers; `forms` collects the messages it was shown. Closed whatever happens.
 */
export async function withConfirmingClient<T>(
  proxyUrl: string,
  headers: Record<string, string>,
  answer: FormAnswer | undefined,
  test: (client: ModernClient, forms: string[]) => Promise<T>,
): Promise<T> {
  const forms: string[] = [];
  const client = new ModernClient(
    { name: 'erp-proxy-tests', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: MODERN_VERSION } },
      capabilities: answer === undefined ? {} : { elicitation: { form: {} } },
    },
  );
  if (answer !== undefined) {
    client.setRequestHandler('elicitation/create', async (request) => {
      forms.push((request.params as { message: string }).message);
      return { action: answer };
    });
  }
  await client.connect(new ModernTransport(new URL(`${proxyUrl}/mcp`), { requestInit: { headers } }));
  try {
    return await test(client, forms);
  } finally {
    await client.close();
  }
}

/** The two clients an agent may have, each with how to run a test with it connected. */
export const AGENT_CLIENTS: readonly {
  readonly label: string;
  readonly era: 'legacy' | 'modern';
  readonly withClient: <T>(
    proxyUrl: string,
    headers: Record<string, string>,
    test: (client: AgentClient, errors: Error[]) => Promise<T>,
  ) => Promise<T>;
}[] = [
  { label: 'the SDK 1.x client (initialize, 2025-11-25)', era: 'legacy', withClient: withMcpClient },
  { label: 'the v2 client pinned to 2026-07-28', era: 'modern', withClient: withModernMcpClient },
];

/** The texts of a tool result. */
export function texts(result: unknown): string[] {
  return ((result as CallToolResult).content ?? []).map((item) => (item.type === 'text' ? item.text : ''));
}

/** A successful tool result's JSON (its first text). */
export function json(result: unknown): unknown {
  return JSON.parse(texts(result)[0] ?? 'null');
}

/** What a failed tool result says. */
export interface ToolError {
  source: string;
  code: number;
  name?: string;
  message: string;
  retry_safe: boolean;
  retry: string;
}

/** The error of a failed tool result (it must be one). */
export function toolError(result: unknown): ToolError {
  expect((result as CallToolResult).isError, texts(result)[0]).toBe(true);
  return (json(result) as { error: ToolError }).error;
}

/** Whether a tool result is a failure. */
export function isError(result: unknown): boolean {
  return (result as CallToolResult).isError === true;
}
