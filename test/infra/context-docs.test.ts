/**
 * The context keys the CDK app reads and the ones docs/deployment.md documents are the same:
 * `CONTEXT_KEYS` (lib/stack-config.ts) is the one list, the parser reads exactly its keys but
 * `stackName` (bin/erp-proxy.ts reads that one), and the "Context parameters" table lists each.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS, type ContextKey, parseStackConfig } from '../../lib/stack-config.ts';

const DEPLOYMENT_MD = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
const TABLE_HEADING = '### Context parameters';
const TABLE_HEADER = '| key | default | sets | meaning |';

/**
 * The keys named in the first column of the context table: every backquoted name of a row
 * (`hostedZoneId`, `hostedZoneName` share one row).
 */
function documentedKeys(markdown: string): string[] {
  const lines = markdown.split('\n');
  const heading = lines.indexOf(TABLE_HEADING);
  if (heading === -1) throw new Error(`docs/deployment.md has no line "${TABLE_HEADING}"`);
  const header = lines.indexOf(TABLE_HEADER, heading);
  if (header === -1)
    throw new Error(`docs/deployment.md: no table "${TABLE_HEADER}" under "${TABLE_HEADING}"`);
  const keys: string[] = [];
  // header + 2: past the |---| separator; the table ends at the first line that is not a row.
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const firstCell = line.split('|')[1] ?? '';
    const names = [...firstCell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
    if (names.length === 0) throw new Error(`docs/deployment.md context table: a row without a key: ${line}`);
    keys.push(...names);
  }
  return keys;
}

/** The keys `parseStackConfig` asks its reader for, with an empty context (all defaults). */
function keysReadByParser(): Set<ContextKey> {
  const read = new Set<ContextKey>();
  parseStackConfig((key) => {
    read.add(key);
    return undefined;
  });
  return read;
}

describe('context keys: code and docs/deployment.md', () => {
  it('finds the table (sanity check)', () => {
    expect(documentedKeys(DEPLOYMENT_MD)).toContain('allowedTargets');
    expect(documentedKeys(DEPLOYMENT_MD)).toContain('hostedZoneName');
  });

  it('lists each key once', () => {
    const keys = documentedKeys(DEPLOYMENT_MD);
    expect(keys.filter((key, at) => keys.indexOf(key) !== at)).toEqual([]);
    expect(new Set(CONTEXT_KEYS).size).toBe(CONTEXT_KEYS.length);
  });

  it('documents exactly the keys of CONTEXT_KEYS', () => {
    expect([...documentedKeys(DEPLOYMENT_MD)].sort()).toEqual([...CONTEXT_KEYS].sort());
  });

  it('CONTEXT_KEYS is what the parser reads, plus stackName, which bin/erp-proxy.ts reads', () => {
    const read = keysReadByParser();
    expect(CONTEXT_KEYS.filter((key) => !read.has(key))).toEqual(['stackName']);
    const app = readFileSync(new URL('../../bin/erp-proxy.ts', import.meta.url), 'utf8');
    expect(app).toContain("context('stackName')");
  });
});
