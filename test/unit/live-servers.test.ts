/**
 * The live suite's servers (test/support/live-servers.ts): each prefix promises one exact major
 * version, so `checkServerVersion` fails the cases of `ERP_LIVE_*` pointed at an Odoo 20, and
 * those of `ERP_LIVE20_*` pointed at a 19 (issue 42).
 */
import { describe, expect, it } from 'vitest';
import { LIVE_KEY_SUFFIXES, LIVE_SERVER_PREFIXES } from '../support/live-servers.ts';

describe('live servers', () => {
  it('ERP_LIVE is exactly 19 and ERP_LIVE20 exactly 20; no prefix takes a later major', () => {
    expect(LIVE_SERVER_PREFIXES.map(({ prefix, major }) => [prefix, major])).toEqual([
      ['ERP_LIVE', 19],
      ['ERP_LIVE20', 20],
      ['ERP_LIVE18', 18],
      ['ERP_LIVE17', 17],
      ['ERP_LIVE16', 16],
    ]);
    expect(LIVE_SERVER_PREFIXES.every((server) => !server.orLater)).toBe(true);
  });

  it('the leak guard knows the optional MCP-scoped key', () => {
    expect(LIVE_KEY_SUFFIXES).toContain('MCP_KEY');
  });
});
