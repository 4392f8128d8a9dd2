/**
 * Secret-leak guard, loaded before every test file (vitest `setupFiles`). Everything the
 * process writes to stdout and stderr (the proxy's log lines, EMF records, warnings) is scanned
 * for the proxy keys and ERP keys the tests use; a file that leaks one fails. The proxy's own
 * JSON log lines are kept out of the test output (they are scanned, then dropped).
 */
import { afterAll, expect } from 'vitest';
import { DOUBLE_USERS } from '../erp-double/users.ts';
import { TEST_PROXY_KEY } from './test-secrets.ts';

/** Secrets used across the suites. Extend when a test introduces a new one. */
export const KNOWN_SECRETS: readonly string[] = [
  TEST_PROXY_KEY,
  ...DOUBLE_USERS.map((user) => user.apiKey),
  'billing-key-0123456789',
  'crm-key-0123456789abcd',
  's3cr3tPw',
  // The live suite's ERP keys (../shared/odoo19, odoo18, odoo17 and odoo16's start.sh print them), when set.
  ...['ERP_LIVE', 'ERP_LIVE18', 'ERP_LIVE17', 'ERP_LIVE16']
    .flatMap((prefix) => ['KEY', 'LIMITED_KEY', 'EXPIRED_KEY', 'KEY2'].map((suffix) => `${prefix}_${suffix}`))
    .map((name) => process.env[name] ?? '')
    .filter((key) => key.length >= 16),
];

const leaks: string[] = [];
let scanned = 0;

function scan(chunk: unknown): string {
  const text =
    typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
  scanned += text.length;
  for (const secret of KNOWN_SECRETS) {
    if (text.includes(secret)) leaks.push(`${secret.slice(0, 4)}… in: ${text.slice(0, 200)}`);
  }
  return text;
}

function isProxyLogLine(text: string): boolean {
  return /^\{"(level|_aws)"/.test(text.trimStart());
}

for (const stream of [process.stdout, process.stderr]) {
  const original = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = scan(chunk);
    if (isProxyLogLine(text)) return true;
    return original(chunk, ...rest);
  }) as typeof stream.write;
}

afterAll(() => {
  expect(leaks, `secrets written to stdout/stderr (${scanned} characters scanned)`).toEqual([]);
});
