/**
 * The conformance run (bin/mcp-conformance.ts) and the README agree: every scenario of the suite
 * is either run or listed as not applying, with its reason in docs/reference/mcp-protocol.md's table.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { APPLICABLE, NOT_APPLICABLE } from '../../bin/mcp-conformance.ts';

const README = readFileSync(new URL('../../docs/reference/mcp-protocol.md', import.meta.url), 'utf8');
const section = README.slice(
  README.indexOf('**The conformance suite.**'),
  README.indexOf('**What is logged.**'),
);

/** The server scenarios of @modelcontextprotocol/conformance 0.1.16 (`conformance list --server`). */
const SUITE_SCENARIOS = [
  'server-initialize',
  'logging-set-level',
  'ping',
  'completion-complete',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'json-schema-2020-12',
  'elicitation-sep1034-defaults',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'elicitation-sep1330-enums',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'dns-rebinding-protection',
];

describe('the MCP conformance run', () => {
  it('runs or sets aside each scenario of the suite, once', () => {
    const listed = [...APPLICABLE, ...Object.keys(NOT_APPLICABLE)];
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual([...SUITE_SCENARIOS].sort());
  });

  it('is what docs/reference/mcp-protocol.md says: the scenarios run, and each one that does not apply', () => {
    expect(section).toContain(
      `MCP conformance: ${APPLICABLE.length} of ${APPLICABLE.length} applicable scenarios passed`,
    );
    expect(section).toContain(`${Object.keys(NOT_APPLICABLE).length} do not apply`);
    for (const scenario of APPLICABLE) expect(section, scenario).toContain(`\`${scenario}\``);
    const table = section.slice(section.indexOf('| scenarios |'));
    for (const scenario of Object.keys(NOT_APPLICABLE)) expect(table, scenario).toContain(`\`${scenario}\``);
  });
});
