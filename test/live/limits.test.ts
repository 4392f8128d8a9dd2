/**
 * The in-flight cap against the real Odoo 19 (README, "Limits"): with `in_flight` 2 at its host,
 * twenty parallel reads through the proxy are each either answered or refused with 429 (-32004,
 * `Retry-After: 1`), and none times out: the ERP never queues more than the cap, so no caller waits
 * on it past its budget.
 */
import { describe, expect, it } from 'vitest';
import { LIVE19, useLiveProxy } from './live-env.ts';

const server = LIVE19;

describe.skipIf(server.skipReason !== undefined)(server.title('limits: an in-flight cap of 2'), () => {
  const host = server.url ? new URL(server.url).hostname : '127.0.0.1';
  const proxy = useLiveProxy(server, { ERP_TARGET_LIMITS: JSON.stringify({ [host]: { in_flight: 2 } }) });

  it('answers or refuses (429) each of twenty parallel reads, refusing some; none times out', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        proxy().v2('search_read', { domain: [], fields: ['name'], limit: 80 }, { model: 'res.partner' }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
    expect(statuses).toContain(200);
    // The cap applied: twenty reads sent at once cannot all fit in 2 slots, so some were refused
    // (a host name the setting did not match would let all twenty through, and fail here).
    expect(statuses).toContain(429);
    for (const answer of answers) {
      if (answer.status === 200) {
        expect(answer.envelope.error).toBeNull();
        expect(Array.isArray(answer.envelope.result)).toBe(true);
      } else {
        expect(answer.envelope.error?.code).toBe(-32004);
        expect(answer.raw.headers.get('retry-after')).toBe('1');
      }
    }
    // No -32003 anywhere: nobody waited on the ERP past its budget.
    expect(answers.some((answer) => answer.envelope.error?.code === -32003)).toBe(false);
  });
});
