/**
 * The lists that docs/design.md's walks ("The usual changes") keep in step by hand, where the code
 * cannot derive one from the other: a v1 action and an MCP tool each appear in the guides
 * (docs/guide/calling.md, docs/guide/mcp.md; and the client) as well as in the code, and an operator endpoint's answer is described in the OpenAPI
 * document by hand. Each check names what to add when it fails.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../bin/openapi.ts';
import { TOOLS } from '../../lambdas/core/mcp/tools.ts';
import { V1_ACTIONS } from '../../lambdas/core/schemas.ts';
import { ROUTES } from '../../lambdas/platform/routes.ts';
import { BUILT_IN_SIGNATURES } from '../../lambdas/upstream/method-signatures.ts';

/** The guide that lists the v1 actions, the From v1 to v2 table and the routes (it was the README's). */
const calling = readFileSync(new URL('../../docs/guide/calling.md', import.meta.url), 'utf8');
/** The guide that holds the tool table (it was the README's "Agents (MCP)"). */
const mcpGuide = readFileSync(new URL('../../docs/guide/mcp.md', import.meta.url), 'utf8');

/** The rows of the Markdown table whose header line is `header`, as arrays of trimmed cells. */
function tableRows(text: string, header: string): string[][] {
  const lines = text.split('\n');
  const start = lines.indexOf(header);
  if (start === -1) throw new Error(`no table with the header ${header}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The first `code span` of a Markdown cell or line. */
function firstCode(text: string): string | undefined {
  return /`([^`]+)`/.exec(text)?.[1];
}

describe('a v1 action (V1_ACTIONS in lambdas/core/schemas.ts)', () => {
  const actions: readonly string[] = V1_ACTIONS;

  it('has a built-in signature, so it can be translated to JSON-2 without asking the ERP (lambdas/upstream/method-signatures.ts)', () => {
    const missing = actions.filter((action) => action !== 'call_method' && !BUILT_IN_SIGNATURES.has(action));
    expect(missing).toEqual([]);
  });

  it('is listed in docs/guide/calling.md ("Actions:", and the count in "one of N actions")', () => {
    const paragraph = /^Actions: ([\s\S]*?) for any other method/m.exec(calling)?.[1] ?? '';
    const listed = [...paragraph.matchAll(/`([^`]+)`/g)]
      .map((match) => match[1])
      .filter((name) => name !== 'fn_name');
    expect(listed).toEqual([...actions]);
    expect(calling).toContain(`one of ${actions.length} actions`);
  });

  it('has its row in the "From v1 to v2" table of docs/guide/calling.md', () => {
    const rows = tableRows(calling, '| v1 | v2 |').map((row) => firstCode(row[0] ?? ''));
    expect(actions.filter((action) => !rows.includes(action))).toEqual([]);
  });

  it('is a V1Action of the client (client/src/types.ts)', () => {
    const types = readFileSync(new URL('../../client/src/types.ts', import.meta.url), 'utf8');
    const union = /export type V1Action =([^;]+);/.exec(types)?.[1] ?? '';
    expect([...union.matchAll(/'([^']+)'/g)].map((match) => match[1])).toEqual([...actions]);
  });
});

describe('an MCP tool (TOOLS in lambdas/core/mcp/tools.ts)', () => {
  it("has its row in docs/guide/mcp.md's tool table, in the order tools/list gives them, with its annotations", () => {
    const rows = tableRows(mcpGuide, '| tool | what | arguments | annotations |').map((row) => [
      firstCode(row[0] ?? ''),
      row[3],
    ]);
    const expected = TOOLS.map(({ name, annotations }) => [
      name,
      annotations.readOnlyHint
        ? 'read-only'
        : [
            'write',
            annotations.destructiveHint ? 'destructive' : '',
            annotations.idempotentHint ? 'idempotent' : '',
          ]
            .filter((word) => word !== '')
            .join(', '),
    ]);
    expect(rows).toEqual(expected);
  });
});

describe('a route (lambdas/platform/routes.ts)', () => {
  it("is counted in docs/guide/calling.md's sentence on the OpenAPI document", () => {
    expect(calling).toContain(`description of the ${ROUTES.length} routes`);
  });
});

describe('an operator endpoint (a route of the aux function in lambdas/platform/routes.ts)', () => {
  it("has its own OpenAPI 200 answer (bin/openapi.ts OPERATIONS, `answer`), not another endpoint's", () => {
    const document = buildOpenApiDocument() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const answers = ROUTES.filter((route) => route.fn === 'aux').map((route) =>
      JSON.stringify(document.paths[route.path]?.[route.method.toLowerCase()]?.responses['200']),
    );
    expect(answers.every((answer) => answer !== undefined)).toBe(true);
    expect(new Set(answers).size).toBe(answers.length);
  });
});
