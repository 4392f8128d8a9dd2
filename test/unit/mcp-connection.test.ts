/**
 * The words of a tool failure for a caller signed in with OAuth (core/mcp/connection.ts,
 * `inConnectionWords`): every advice and proxy message the tools can give names the operator's
 * identity-map entry, never an `x-erp-*` header or the MCP client's configuration; a proxy-key
 * caller's text is left as it is.
 */
import { describe, expect, it } from 'vitest';
import { erpFailure, proxyFailure } from '../../lambdas/core/mcp/answers.ts';
import { inConnectionWords, type McpErp } from '../../lambdas/core/mcp/connection.ts';
import * as errors from '../../lambdas/platform/errors.ts';
import { KeyPolicyRefusedError, ProxyError } from '../../lambdas/platform/errors.ts';
import { KEY_POLICY_RULES, type KeyPolicyRule } from '../../lambdas/platform/key-policy.ts';
import type { ErpVersion } from '../../lambdas/upstream/erp-answer.ts';

const identity: McpErp = {
  from: 'identity',
  identity: 'sales',
  connection: { baseUrl: new URL('https://erp.example.com'), db: 'prod', apiKey: 'k'.repeat(40), uid: 7 },
};
const headers: McpErp = {
  from: 'headers',
  headers: { url: 'https://erp.example.com', db: 'prod', apiKey: 'k'.repeat(40), userId: '7' },
};

/** Every proxy error class, with a message naming each erp_instance field as upstream/ writes them. */
const MESSAGE =
  'Check the URL (url on the version endpoints, erp_instance.url on execute). Check erp_instance.url, ' +
  'erp_instance.db, erp_instance.user_id and erp_instance.api_key. Raise x-request-timeout for slow calls.';
const proxyErrors = (Object.values(errors) as unknown[])
  .filter(
    (value): value is new (message: string) => ProxyError =>
      typeof value === 'function' && value.prototype instanceof ProxyError && value !== errors.InternalError,
  )
  .map((ErrorClass) => new ErrorClass(MESSAGE));

/** Every text a tool failure shows: the ERP's codes and the proxy's classes, for a read and a write tool. */
const failures = [
  ...[400, 401, 403, 404, 409, 422, 500].map((code) => erpFailure(code, 'ERP says no', { name: 'x' })),
  // A 401 of an ERP whose keys have scopes (19.4+) has advice of its own.
  erpFailure(401, 'ERP says no', { name: 'x' }, {
    version: '19.4',
    version_info: [19, 4, 0, 'final', 0, ''],
  } as ErpVersion),
  ...proxyErrors.flatMap((error) => [proxyFailure(error, true), proxyFailure(error, false)]),
];

describe('a tool failure in the words of the connection', () => {
  it('covers the failures (sanity check)', () => {
    expect(proxyErrors.length).toBeGreaterThanOrEqual(12);
    expect(failures.some(({ retry }) => /x-erp-/.test(retry))).toBe(true);
    expect(failures.some(({ message }) => /x-erp-/.test(message))).toBe(true);
  });

  it("for a token caller: never an x-erp-* header or the MCP client's configuration", () => {
    for (const { message, retry } of failures)
      for (const text of [message, retry]) {
        const worded = inConnectionWords(text, identity);
        expect(worded, text).not.toMatch(/x-erp|header|MCP client's configuration/);
        if (/x-erp-/.test(text)) expect(worded, text).toContain('identity map entry "sales"');
      }
  });

  it('names the field of the entry for each header', () => {
    expect(inConnectionWords('Check the x-erp-url header.', identity)).toBe(
      `Check erp.url of the operator's identity map entry "sales".`,
    );
    expect(
      inConnectionWords(
        "tell the user what it says (x-erp-url, x-erp-db in the MCP client's configuration).",
        identity,
      ),
    ).toBe(`tell the user what it says (erp.url, erp.db of the operator's identity map entry "sales").`);
  });

  it("for a proxy-key caller: the text as it is (the headers are the client's)", () => {
    for (const { message, retry } of failures) {
      expect(inConnectionWords(message, headers)).toBe(message);
      expect(inConnectionWords(retry, headers)).toBe(retry);
    }
  });
});

describe("a key policy refusal's advice, by whose policy it is", () => {
  const refusals = KEY_POLICY_RULES.flatMap((rule) =>
    [true, false].map((readOnly) => ({ rule, readOnly, error: new KeyPolicyRefusedError('no', rule) })),
  );

  it("for a token caller: the identity map entry's policy, never a key or an x-erp-* header", () => {
    for (const { rule, readOnly, error } of refusals) {
      const { retry } = proxyFailure(error, readOnly, 'sales');
      const worded = inConnectionWords(retry, identity);
      expect(worded, rule).not.toMatch(/x-erp|header|\bkeys?\b|key's|MCP client's configuration/);
      expect(worded, rule).toContain(`identity map entry "sales"`);
      expect(worded, rule).toMatch(/^The call did not run\. /);
    }
  });

  it("for a proxy-key caller: the key's policy, and the header of the connection it names", () => {
    for (const { rule, readOnly, error } of refusals) {
      const { retry } = proxyFailure(error, readOnly);
      expect(inConnectionWords(retry, headers), rule).toBe(retry);
      expect(retry, rule).toMatch(/This key's policy/);
      expect(retry, rule).not.toContain('identity map');
    }
    const advice = (rule: KeyPolicyRule) => proxyFailure(new KeyPolicyRefusedError('no', rule), true).retry;
    expect(advice('database')).toContain('the x-erp-db header');
    expect(advice('target')).toContain('the x-erp-url header');
  });
});
