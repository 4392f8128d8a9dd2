/**
 * `npm start`'s banner says which state store the run keeps its idempotency records and limit
 * counters in, and whether limits are on (issue 45): embedded by default; a DynamoDB table at
 * its endpoint with `STATE_TABLE` and `AWS_ENDPOINT_URL_DYNAMODB` (shown without user info);
 * limits named by key (never the key) and by ERP; and whether writes are audited (issue 56), where. Nothing here needs the store itself: the
 * DynamoDB client is loaded on the first call that needs it.
 */
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/proxy-harness.ts';
import { startScript } from '../support/scripts.ts';

/** The banner `npm start` prints with `env`. */
async function banner(env: Record<string, string | undefined>): Promise<string> {
  const script = await startScript('bin/serve.ts', { PORT: String(await freePort()), ...env }, /_\/about\n/);
  await script.stop();
  return script.stdout();
}

const BILLING_KEY = 'billing-key-0123456789abcdef';

describe("npm start's banner: the state store and the limits", () => {
  it('by default: the embedded store, and limits off', { timeout: 60_000 }, async () => {
    const printed = await banner({
      STATE_TABLE: undefined,
      AWS_ENDPOINT_URL_DYNAMODB: undefined,
      ERP_TARGET_LIMITS: undefined,
      PROXY_API_KEYS: undefined,
      PROXY_API_KEY: undefined,
    });
    expect(printed).toMatch(
      /^State store: embedded in this process \(idempotency records and limit counters, lost on restart;/m,
    );
    expect(printed).toMatch(/^Limits: off \(no key policy sets limits, ERP_TARGET_LIMITS is not set\)$/m);
    expect(printed).toMatch(
      /^Audit: on \(a write whose record cannot be written is refused\); records in an embedded ring of the last 10,000 \(the oldest dropped, never refused for room; lost on restart;/m,
    );
  });

  it('a DynamoDB table at its endpoint (no user info), and the limits by key name and ERP', {
    timeout: 60_000,
  }, async () => {
    const printed = await banner({
      STATE_TABLE: 'erp-proxy-state',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://someone:endpoint-password@127.0.0.1:8000',
      ERP_TARGET_LIMITS: JSON.stringify({
        '127.0.0.1': { in_flight: 1 },
        localhost: { requests: 5, per: 'second' },
      }),
      PROXY_API_KEY: undefined,
      PROXY_API_KEYS: JSON.stringify({
        keys: [
          { name: 'billing', key: BILLING_KEY, policy: { limits: [{ requests: 1, per: 'day' }] } },
          { name: 'ops', key: 'ops-key-0123456789abcdef' },
        ],
      }),
    });
    expect(printed).toMatch(/^State store: DynamoDB table erp-proxy-state at http:\/\/127\.0\.0\.1:8000$/m);
    expect(printed).toMatch(
      /^Limits: on: key policies of billing; ERP_TARGET_LIMITS for 127\.0\.0\.1, localhost$/m,
    );
    expect(printed).not.toContain('endpoint-password');
    expect(printed).not.toContain(BILLING_KEY);
  });

  it('the audit: its table at its endpoint, best-effort, or off', { timeout: 60_000 }, async () => {
    const onTable = await banner({
      AUDIT: 'best-effort',
      AUDIT_TABLE: 'erp-proxy-audit',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://someone:endpoint-password@127.0.0.1:8000',
    });
    expect(onTable).toMatch(
      /^Audit: best-effort; records in DynamoDB table erp-proxy-audit at http:\/\/127\.0\.0\.1:8000$/m,
    );
    expect(onTable).not.toContain('endpoint-password');
    expect(await banner({ AUDIT: 'off' })).toMatch(/^Audit: off \(AUDIT=off\): no write is recorded$/m);
  });
});
