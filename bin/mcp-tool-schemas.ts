/**
 * `npx tsx bin/mcp-tool-schemas.ts`: writes lambdas/core/mcp/tool-schemas.json, the JSON Schemas of
 * the MCP tools' arguments that `tools/list` answers, as the SDK's `McpServer` makes them of the
 * tools' zod schemas (so the function converts no schema at run time). `--check` only compares,
 * and fails when the committed file is out of date (test/unit/mcp-protocol.test.ts,
 * "tool-schemas.json", does the same). The file is written as biome formats JSON (run `npx biome format --write` on it after).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { TOOLS } from '../lambdas/core/mcp/tools.ts';

export const TOOL_SCHEMAS_FILE = fileURLToPath(
  new URL('../lambdas/core/mcp/tool-schemas.json', import.meta.url),
);

/** What the SDK's `McpServer` lists for every tool (writes included), tool by tool. */
export async function sdkToolList(): Promise<Record<string, unknown>[]> {
  const server = new McpServer({ name: 'erp-proxy', version: '0' });
  for (const definition of TOOLS) {
    server.registerTool(
      definition.name,
      {
        title: definition.title,
        description: definition.description,
        inputSchema: definition.input(),
        annotations: definition.annotations,
      },
      () => ({ content: [] }),
    );
  }
  // The server's own message, not a client's parse of it (which would reorder the schemas' keys).
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  try {
    const answer = new Promise<JSONRPCMessage>((resolve) => {
      clientSide.onmessage = resolve;
    });
    await clientSide.start();
    await clientSide.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    return ((await answer) as unknown as { result: { tools: Record<string, unknown>[] } }).result.tools;
  } finally {
    await server.close();
  }
}

/** The input JSON Schemas by tool name, as the SDK lists them. */
export async function sdkToolSchemas(): Promise<Record<string, unknown>> {
  return Object.fromEntries((await sdkToolList()).map((tool) => [tool.name, tool.inputSchema]));
}

async function main(argv: readonly string[]): Promise<number> {
  const schemas = await sdkToolSchemas();
  const committed = JSON.parse(readFileSync(TOOL_SCHEMAS_FILE, 'utf8')) as unknown;
  if (JSON.stringify(committed) === JSON.stringify(schemas)) return 0;
  if (argv.includes('--check')) {
    process.stderr.write(`${TOOL_SCHEMAS_FILE} is out of date: run npx tsx bin/mcp-tool-schemas.ts\n`);
    return 1;
  }
  writeFileSync(TOOL_SCHEMAS_FILE, `${JSON.stringify(schemas, null, 2)}\n`);
  process.stdout.write(`wrote ${TOOL_SCHEMAS_FILE}\n`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
