/**
 * Properties of the audit (issue 56; docs/guide/audit.md): ids sort in time order and give their
 * time and partition back; a values digest does not depend on member order but does on number
 * spellings; `GET /_/audit`'s query parser answers any text with a query or a -32600, never
 * anything else; and a reader walking the pages of the embedded ring with the cursor gets every
 * matching record exactly once, newest first, whatever the page size.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callContent } from '../../lambdas/core/audit/call-content.ts';
import { AUDIT_FILTERS, parseAuditQuery } from '../../lambdas/operator/audit-endpoint.ts';
import {
  AUDIT_OUTCOMES,
  type AuditRecord,
  auditIdTime,
  auditShard,
  highestAuditId,
  isAuditId,
  lowestAuditId,
  newAuditId,
} from '../../lambdas/platform/audit/audit-record.ts';
import { EmbeddedAuditStore } from '../../lambdas/platform/audit/audit-store-embedded.ts';
import { InvalidRequestError } from '../../lambdas/platform/errors.ts';
import { generatedSealKey } from '../../lambdas/platform/seal.ts';
import type { ErpCall } from '../../lambdas/upstream/erp-transport.ts';
import { auditRecord } from '../support/audit-records.ts';

const TIME = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2100, 0, 1) });

function call(kwargs: unknown): ErpCall {
  return {
    baseUrl: new URL('http://erp.example'),
    db: 'db',
    apiKey: 'k',
    model: 'res.partner',
    method: 'write',
    kwargsJson: JSON.stringify(kwargs),
  };
}

/** An object with its members in reverse order (the same JSON value for the ERP). */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .reverse()
        .map(([name, member]) => [name, reversed(member)]),
    );
  }
  return value;
}

describe('audit ids', () => {
  it('sort in the order of their times, and give their time, shard and bounds back', () => {
    fc.assert(
      fc.property(TIME, TIME, (a, b) => {
        const [x, y] = [newAuditId(a), newAuditId(b)];
        expect(isAuditId(x)).toBe(true);
        expect(auditIdTime(x)).toBe(a);
        if (a < b) expect(x < y).toBe(true);
        expect(lowestAuditId(a) <= x && x <= highestAuditId(a)).toBe(true);
        expect(auditShard(x)).toBeGreaterThanOrEqual(0);
        expect(auditShard(x)).toBeLessThan(4);
      }),
    );
  });
});

describe('a call content', () => {
  const values = fc.dictionary(
    fc.stringMatching(/^[a-z_][a-z0-9_]{0,7}$/).filter((name) => name !== '__proto__'),
    fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 3 }),
    ),
    { maxKeys: 6 },
  );

  it('is the same whatever the order of the members, and names the fields written', () => {
    fc.assert(
      fc.property(values, fc.array(fc.nat(), { minLength: 1, maxLength: 5 }), (vals, ids) => {
        const one = callContent(call({ ids, vals }));
        const other = callContent(call(reversed({ ids, vals })));
        expect(other.valuesText).toBe(one.valuesText);
        expect(one.ids).toEqual(ids);
        expect(new Set(one.fields)).toEqual(new Set(Object.keys(vals)));
      }),
    );
  });

  it('keeps field names printable and short, and names the fields a default_ context key fills', () => {
    const content = callContent({
      ...call({}),
      kwargsJson: JSON.stringify({
        ids: [1],
        vals: { 'a\u0001b\u202Ec': 1, ['x'.repeat(300)]: 2 },
        context: { default_phone: '1', lang: 'en_US' },
      }),
    });
    expect(content.fields).toEqual(['abc', 'x'.repeat(100), 'phone']);
  });

  it("reads a positional call's ids from its first argument, whatever its named ids say, and counts ids past the safe integers", () => {
    const positional = callContent({
      ...call({ ids: [] }),
      method: 'message_post',
      argsJson: '[[9], 1]',
      kwargsJson: '{"ids": []}',
    });
    expect(positional.ids).toEqual([9]);
    const big = callContent({ ...call({}), kwargsJson: '{"ids": [3, 9007199254740993]}' });
    expect(big.ids).toEqual([3]);
    expect(big.idsCount).toBe(2);
  });

  it('keeps number spellings: 1.0 and 1 are two values (the ERP may read them apart)', () => {
    const a = callContent({ ...call({}), kwargsJson: '{"ids":[1],"vals":{"ref":1.0}}' });
    const b = callContent({ ...call({}), kwargsJson: '{"ids":[1],"vals":{"ref":1}}' });
    expect(a.valuesText).not.toBe(b.valuesText);
  });
});

describe("GET /_/audit's query", () => {
  const names = fc.constantFrom(...AUDIT_FILTERS, 'other');
  it('is read, or refused -32600 naming what is wrong: never another error', () => {
    fc.assert(
      fc.property(fc.dictionary(names, fc.string({ maxLength: 40 }), { maxKeys: 5 }), (params) => {
        try {
          const query = parseAuditQuery(params, Date.UTC(2026, 11, 7), generatedSealKey());
          expect(query.limit).toBeGreaterThanOrEqual(1);
          expect(query.limit).toBeLessThanOrEqual(1000);
          expect(query.since).toBeLessThanOrEqual(query.until);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidRequestError);
        }
      }),
    );
  });
});

/** A finished record at `ms` with these facts. */
const record = (ms: number, model: string, outcome: AuditRecord['outcome'], ids: number[]): AuditRecord =>
  auditRecord(ms, {
    model,
    outcome,
    record_ids: ids,
    erp: { host: 'erp', db: 'db', scheme: 'http' },
    actor_id: 'key:k',
    actor: { key: 'k' },
  });

describe('the pages of the embedded ring', () => {
  it('give every matching record once, newest first, whatever the page size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            at: fc.integer({ min: 0, max: 5 * 86_400_000 }),
            model: fc.constantFrom('res.partner', 'sale.order'),
            outcome: fc.constantFrom(...AUDIT_OUTCOMES),
            id: fc.integer({ min: 1, max: 4 }),
          }),
          { maxLength: 40 },
        ),
        fc.integer({ min: 1, max: 7 }),
        fc.option(fc.constantFrom('res.partner', 'sale.order'), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
        async (entries, limit, model, id) => {
          const start = Date.UTC(2026, 11, 1);
          const store = new EmbeddedAuditStore();
          const records = entries.map((entry) =>
            record(start + entry.at, entry.model, entry.outcome, [entry.id]),
          );
          for (const held of records) {
            await store.finish(held);
            await store.point(held, [
              { model: held.model as string, id: (held.record_ids as number[])[0] as number },
            ]);
          }
          const query = {
            since: start,
            until: start + 5 * 86_400_000,
            limit,
            ...(model === undefined ? {} : { model }),
            ...(id === undefined ? {} : { record: { model: model ?? 'res.partner', id } }),
          };
          const seen: string[] = [];
          let before: string | undefined;
          for (let page = 0; page < 100; page += 1) {
            const answer = await store.list(
              { ...query, ...(before === undefined ? {} : { before }) },
              (held) => held,
            );
            seen.push(...answer.records.map((held) => held.audit_id));
            if (answer.next === undefined) break;
            before = answer.next;
          }
          const expected = records
            .filter(
              (held) =>
                (model === undefined || held.model === model) &&
                (id === undefined ||
                  (held.model === (model ?? 'res.partner') && held.record_ids?.[0] === id)),
            )
            .map((held) => held.audit_id)
            .sort()
            .reverse();
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
