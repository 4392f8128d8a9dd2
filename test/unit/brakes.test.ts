/**
 * The operators' brakes as logic (docs/operators.md, "Stop an agent now"): which brake stops a
 * call, an instance's copy and its refresh, the set request's checks, the endpoints' conditional
 * writes, and the gate's `brakes` step (after the policy, before the idempotency lookup).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { brakeSubject, checkBrakes } from '../../lambdas/core/brakes-check.ts';
import { passGate } from '../../lambdas/core/gate.ts';
import { brakesLine } from '../../lambdas/local/banner.ts';
import { runBrakesAge } from '../../lambdas/operator/brakes-age.ts';
import { brakeOfRequest, serveBrakes } from '../../lambdas/operator/brakes-endpoint.ts';
import { LocalMetricsStore } from '../../lambdas/operator/local-metrics-store.ts';
import {
  type Brake,
  type BrakeScope,
  brakeFor,
  brakeRefusal,
  keyStopped,
  NO_BRAKES,
  parseBrakeList,
  type StoredBrakes,
  shownText,
} from '../../lambdas/platform/brakes/brakes.ts';
import { type BrakesStore, createBrakesSource } from '../../lambdas/platform/brakes/brakes-source.ts';
import { EmbeddedBrakesStore } from '../../lambdas/platform/brakes/brakes-store.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { BrakedError, InvalidRequestError, KeyPolicyRefusedError } from '../../lambdas/platform/errors.ts';
import type { KeyPolicy } from '../../lambdas/platform/key-policy.ts';
import { createMetrics } from '../../lambdas/platform/metrics/powertools.ts';
import { compileTargetPolicy } from '../../lambdas/upstream/target-policy.ts';

const NOW = Date.parse('2026-12-07T12:00:00Z');

function brake(scope: BrakeScope, mode: Brake['mode'], extra: Partial<Brake> = {}): Brake {
  return {
    id: `brk_${Math.random().toString(16).slice(2, 10)}`,
    scope,
    mode,
    reason: 'Stop.',
    set_by: 'operator',
    set_at: new Date(NOW - 60_000).toISOString(),
    ...extra,
  };
}

const names = fc.constantFrom('agent', 'other', 'ops');
const hosts = fc.constantFrom('erp.example.com', '10.0.0.1', 'other.example.com');
const scopes: fc.Arbitrary<BrakeScope> = fc.oneof(
  fc.constant('all' as const),
  names.map((key) => ({ key })),
  names.map((identity) => ({ identity })),
  hosts.map((erp) => ({ erp })),
);
const subjects = fc.record({
  key: fc.option(names, { nil: undefined }),
  identity: fc.option(names, { nil: undefined }),
  erp: fc.option(hosts, { nil: undefined }),
  writes: fc.boolean(),
});

describe('which brake stops a call', () => {
  it('a writes brake never stops a call that cannot write; a brake stops only the calls its scope names; an expired one none', () => {
    fc.assert(
      fc.property(
        scopes,
        fc.constantFrom('writes', 'all'),
        subjects,
        fc.boolean(),
        (scope, mode, subject, expired) => {
          const one = brake(scope, mode as Brake['mode'], {
            expires: new Date(NOW + (expired ? -1 : 1) * 60_000).toISOString(),
          });
          const stopped = brakeFor([one], subject, NOW) !== undefined;
          const named =
            scope === 'all' ||
            ('key' in scope && subject.key === scope.key) ||
            ('identity' in scope && subject.identity === scope.identity) ||
            ('erp' in scope && subject.erp === scope.erp);
          expect(stopped).toBe(!expired && named && (mode === 'all' || subject.writes));
        },
      ),
    );
  });

  it('of several, the one that holds longest: without an expiry first, else the latest expiry', () => {
    const soon = brake('all', 'all', { expires: new Date(NOW + 60_000).toISOString() });
    const later = brake('all', 'all', { expires: new Date(NOW + 120_000).toISOString() });
    const forever = brake('all', 'all');
    const subject = { key: 'agent', writes: false };
    expect(brakeFor([soon, later], subject, NOW)).toBe(later);
    expect(brakeFor([soon, forever, later], subject, NOW)).toBe(forever);
    expect(brakeRefusal(later, NOW).headers['Retry-After']).toBe('120');
    expect(brakeRefusal(forever, NOW).headers['Retry-After']).toBeUndefined();
    expect(brakeRefusal(forever, NOW)).toBeInstanceOf(BrakedError);
    expect(brakeRefusal({ ...forever, reason: 'ERP upgrade' }, NOW).message).toMatch(
      /^Stopped by an operator: ERP upgrade\. The call did not run; this brake \(brk_\w+\) holds until an operator releases it\.$/,
    );
    expect(brakeRefusal(forever, NOW).httpStatus).toBe(503);
  });

  it('a key is stopped on every route only by a brake of its name in mode all', () => {
    const subjectBrakes = [
      brake('all', 'all'),
      brake({ key: 'agent' }, 'writes'),
      brake({ identity: 'agent' }, 'all'),
    ];
    expect(keyStopped(subjectBrakes, 'agent', NOW)).toBeUndefined();
    const revoked = brake({ key: 'agent' }, 'all');
    expect(keyStopped([...subjectBrakes, revoked], 'agent', NOW)).toBe(revoked);
    expect(keyStopped([revoked], 'other', NOW)).toBeUndefined();
  });

  it('an OAuth caller is read by its identity-map entry, a key by its name, the ERP as the limits name it', () => {
    expect(
      brakeSubject({ kind: 'key', name: 'agent' }, new URL('http://ERP.Example.com:8069/'), true),
    ).toEqual({
      key: 'agent',
      erp: 'erp.example.com',
      writes: true,
    });
    expect(
      brakeSubject(
        { kind: 'oauth', issuer: 'https://id', subject: 'p1', entry: 'sales' },
        new URL('http://[::ffff:10.0.0.1]/'),
        false,
      ),
    ).toEqual({ identity: 'sales', erp: '10.0.0.1', writes: false });
  });

  it('a damaged store item is a failed read, never "no brakes"', () => {
    expect(() => parseBrakeList('{}')).toThrow();
    expect(() => parseBrakeList('[{"id":"x"}]')).toThrow();
    expect(() => parseBrakeList('not json')).toThrow();
    const one = brake({ erp: 'erp.example.com' }, 'all');
    expect(parseBrakeList(JSON.stringify([one]))).toEqual([one]);
  });
});

/** Lets the microtasks queued so far run (a read asks its store in one). */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A store whose reads the test answers one by one. */
function controlledStore() {
  const reads: { resolve: (stored: StoredBrakes) => void; reject: (error: Error) => void }[] = [];
  const store: BrakesStore = {
    read: () => new Promise((resolve, reject) => reads.push({ resolve, reject })),
    write: async () => true,
  };
  return { store, reads };
}

describe("an instance's copy of the brakes", () => {
  it('is read when older than BRAKES_REFRESH, by one read that every call meanwhile shares; fresh, it costs nothing', async () => {
    const { store, reads } = controlledStore();
    const source = createBrakesSource({ store, refreshMs: 5_000, readTimeoutMs: 10_000 });
    expect(source.fresh(NOW)).toBeUndefined();
    const first = source.read(NOW);
    const second = source.current(NOW + 10);
    await tick();
    expect(reads).toHaveLength(1);
    const stopped = brake('all', 'writes');
    reads[0]?.resolve({ version: 1, brakes: [stopped] });
    expect(await first).toEqual([stopped]);
    expect(await second).toEqual([stopped]);
    // Fresh for an interval from the moment the read was sent.
    expect(source.fresh(NOW + 4_999)).toEqual([stopped]);
    expect(source.fresh(NOW + 5_000)).toBeUndefined();
    expect(reads).toHaveLength(1);
  });

  it('keeps the brakes it last read when a read fails, and serves without when it never read any (fail open); each reported', async () => {
    const { store, reads } = controlledStore();
    const failures: string[] = [];
    const source = createBrakesSource({
      store,
      refreshMs: 1_000,
      readTimeoutMs: 50,
      onReadFailure: ({ kept }) => failures.push(kept),
    });
    const never = source.read(NOW);
    await tick();
    reads[0]?.reject(new Error('down'));
    expect(await never).toEqual([]);
    expect(failures).toEqual(['none']);
    // The next read waits an interval.
    expect(source.fresh(NOW + 999)).toEqual([]);
    const stopped = brake({ key: 'agent' }, 'all');
    const ok = source.read(NOW + 1_000);
    await tick();
    reads[1]?.resolve({ version: 3, brakes: [stopped] });
    expect(await ok).toEqual([stopped]);
    // A read that does not answer within its time limit: the last brakes stay.
    const slow = source.read(NOW + 2_000);
    expect(await slow).toEqual([stopped]);
    expect(failures).toEqual(['none', 'last']);
  });

  it("a read's own time limit is at most half the refresh", async () => {
    const { store } = controlledStore();
    const source = createBrakesSource({ store, refreshMs: 100 });
    const started = Date.now();
    expect(await source.read(NOW)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('the set request', () => {
  it('strips control, bidirectional and zero-width characters from the reason, and bounds it', () => {
    expect(shownText('Stop\u202e now\u200b.\u0007\nNext\u2028line')).toBe('Stop now . Next line');
    const set = brakeOfRequest({ scope: 'all', mode: 'writes', reason: ' Stop\u202e! ' }, 'ops', NOW);
    expect(set).toMatchObject({
      scope: 'all',
      mode: 'writes',
      reason: 'Stop !',
      set_by: 'ops',
      set_at: new Date(NOW).toISOString(),
    });
    expect(() =>
      brakeOfRequest({ scope: 'all', mode: 'writes', reason: 'x'.repeat(301) }, 'ops', NOW),
    ).toThrow(InvalidRequestError);
    expect(() => brakeOfRequest({ scope: 'all', mode: 'writes', reason: '\u200b' }, 'ops', NOW)).toThrow(
      /reason/,
    );
  });

  it('names an ERP as the limits name it, and refuses what is not a host', () => {
    expect(
      brakeOfRequest({ scope: { erp: 'ERP.Example.com.' }, mode: 'all', reason: 'r' }, 'ops', NOW).scope,
    ).toEqual({
      erp: 'erp.example.com',
    });
    expect(
      brakeOfRequest({ scope: { erp: '::ffff:10.0.0.1' }, mode: 'all', reason: 'r' }, 'ops', NOW).scope,
    ).toEqual({
      erp: '10.0.0.1',
    });
    for (const erp of ['http://erp.example.com', 'erp.example.com:8069', '*.example.com', 3]) {
      expect(() => brakeOfRequest({ scope: { erp }, mode: 'all', reason: 'r' }, 'ops', NOW)).toThrow(
        /scope.erp/,
      );
    }
  });

  it('refuses unknown fields, scopes and modes, names with control characters, and an expiry that passed or has no zone', () => {
    const bad: unknown[] = [
      { scope: 'all', mode: 'all', reason: 'r', extra: 1 },
      { scope: 'every', mode: 'all', reason: 'r' },
      { scope: { key: 'a', erp: 'b' }, mode: 'all', reason: 'r' },
      { scope: { team: 'a' }, mode: 'all', reason: 'r' },
      { scope: { key: 'a\u0000b' }, mode: 'all', reason: 'r' },
      { scope: { key: '' }, mode: 'all', reason: 'r' },
      { scope: 'all', mode: 'reads', reason: 'r' },
      { scope: 'all', mode: 'all', reason: 'r', expires: '2026-12-07T11:00:00Z' },
      { scope: 'all', mode: 'all', reason: 'r', expires: '2026-12-08T11:00:00' },
      [],
    ];
    for (const body of bad)
      expect(() => brakeOfRequest(body, 'ops', NOW), JSON.stringify(body)).toThrow(InvalidRequestError);
    const until = brakeOfRequest(
      { scope: 'all', mode: 'all', reason: 'r', expires: '2026-12-07T13:30:00+01:00' },
      'ops',
      NOW,
    );
    expect(until.expires).toBe('2026-12-07T12:30:00.000Z');
  });
});

describe('the brakes endpoints', () => {
  const body = JSON.stringify({ scope: { key: 'agent' }, mode: 'all', reason: 'Revoked.' });

  it('write conditional on the version read: a write another came before is read again and tried again', async () => {
    const embedded = new EmbeddedBrakesStore();
    let raced = false;
    const store: BrakesStore = {
      read: () => embedded.read(),
      async write(brakes, expected) {
        if (!raced) {
          raced = true;
          // Another operator's brake lands between this read and this write.
          await embedded.write([brake('all', 'writes', { id: 'brk_theirs' })], expected);
        }
        return embedded.write(brakes, expected);
      },
    };
    await serveBrakes('POST', '/_/brakes', body, 'ops', { brakesStore: store });
    const listed = await serveBrakes('GET', '/_/brakes', undefined, 'ops', { brakesStore: store });
    const { brakes } = JSON.parse(listed.response.body) as { brakes: Brake[] };
    expect(brakes.map((one) => one.id)).toContain('brk_theirs');
    expect(brakes).toHaveLength(2);
    expect((await embedded.read()).version).toBe(2);
  });

  it('hold at most 100 brakes, drop expired ones on the next write, and release by id', async () => {
    const store = new EmbeddedBrakesStore();
    const old = brake('all', 'all', { id: 'brk_old', expires: new Date(NOW - 1).toISOString() });
    await store.write([old, ...Array.from({ length: 99 }, (_, i) => brake({ key: `k${i}` }, 'all'))], 0);
    const deps = { brakesStore: store, now: () => NOW };
    await serveBrakes('POST', '/_/brakes', body, 'ops', deps);
    expect((await store.read()).brakes.map((one) => one.id)).not.toContain('brk_old');
    await expect(serveBrakes('POST', '/_/brakes', body, 'ops', deps)).rejects.toThrow(
      /100 brakes are in force/,
    );
    const id = (await store.read()).brakes[0]?.id as string;
    const released = await serveBrakes('POST', '/_/brakes/release', JSON.stringify({ id }), 'ops', deps);
    expect(JSON.parse(released.response.body).released.id).toBe(id);
    await expect(
      serveBrakes('POST', '/_/brakes/release', JSON.stringify({ id }), 'ops', deps),
    ).rejects.toThrow(/no brake in force has the id/);
    await expect(serveBrakes('POST', '/_/brakes', '{', 'ops', deps)).rejects.toThrow(/not valid JSON/);
  });

  it('say so when there is no store, and when it cannot be read (-32004, nothing changed)', async () => {
    await expect(
      serveBrakes('GET', '/_/brakes', undefined, 'ops', { brakesStore: undefined }),
    ).rejects.toThrow(/no state table/);
    const down: BrakesStore = {
      read: async () => {
        throw new Error('ECONNREFUSED');
      },
      write: async () => true,
    };
    await expect(serveBrakes('POST', '/_/brakes', body, 'ops', { brakesStore: down })).rejects.toMatchObject({
      code: -32004,
    });
  });
});

describe("the gate's brakes step", () => {
  const config = loadConfig({ PROXY_API_KEY: 'k'.repeat(32) });
  const policy = compileTargetPolicy({
    allowedTargets: config.allowedTargets,
    allowedDatabases: config.allowedDatabases,
  });
  const target = new URL('http://127.0.0.1:9');
  const readsOf = (brakes: readonly Brake[]) => {
    let reads = 0;
    const source = createBrakesSource({
      store: {
        read: async () => {
          reads += 1;
          return { version: 1, brakes };
        },
        write: async () => true,
      },
      refreshMs: 60_000,
    });
    return { source, reads: () => reads };
  };
  const inbound = (keyPolicy?: KeyPolicy) => ({
    identity: { kind: 'key', name: 'agent' } as const,
    keyPolicy,
    remainingMs: undefined,
  });

  it('stops a write under a writes brake before anything later runs; lets a read through; a caller the policy refuses learns nothing of them', async () => {
    const { source, reads } = readsOf([brake({ key: 'agent' }, 'writes', { reason: 'Loop.' })]);
    const deps = { config, policy, idempotency: { store: undefined, ttlSeconds: 60 }, brakes: source };
    let ran = 0;
    const run = async () => {
      ran += 1;
      return 'ran';
    };
    const readOnly: KeyPolicy = {
      apis: undefined,
      access: 'write',
      models: { exact: new Set(['res.partner']), prefixes: [] },
      targets: undefined,
      databases: undefined,
      limits: undefined,
      confirm: undefined,
      methods: undefined,
      fields: undefined,
      companies: undefined,
    } as KeyPolicy;
    // Refused by the policy: the brakes are never read.
    await expect(
      passGate(
        {
          inbound: inbound(readOnly),
          question: { model: 'res.users', method: 'create', target, db: 'a' },
          once: undefined,
          run,
        },
        deps,
      ),
    ).rejects.toBeInstanceOf(KeyPolicyRefusedError);
    expect(reads()).toBe(0);
    // A write (a call the audit would open: `audit` set) is stopped; the run never starts.
    const write = passGate(
      {
        inbound: inbound(),
        question: { model: 'res.partner', method: 'create', target, db: 'a' },
        once: undefined,
        run,
        audit: {
          api: 'v1',
          erp: { url: target, db: 'a', uid: 2, apiKey: 'x' },
          factsOf: () => ({}),
        } as never,
      },
      { ...deps },
    );
    await expect(write).rejects.toMatchObject({ code: -32012, message: expect.stringContaining('Loop.') });
    expect(ran).toBe(0);
    // A read passes, and the copy, fresh now, is not read again.
    await expect(
      passGate(
        {
          inbound: inbound(),
          question: { model: 'res.partner', method: 'read', target, db: 'a' },
          once: undefined,
          run,
        },
        deps,
      ),
    ).resolves.toMatchObject({ value: 'ran' });
    expect(reads()).toBe(1);
    expect(NO_BRAKES.brakes).toEqual([]);
  });
});

describe("the brakes' report and banner", () => {
  it('records the oldest brake in force, in minutes (0 without one), as OldestBrakeAge, and names them in its line', async () => {
    const store = new EmbeddedBrakesStore();
    const metricsStore = new LocalMetricsStore();
    const metrics = createMetrics(loadConfig({}), { store: metricsStore });
    const lines: { level: string; fields: Record<string, unknown> }[] = [];
    const logger = {
      removeKeys: () => {},
      info: (_: string, fields: Record<string, unknown>) => lines.push({ level: 'info', fields }),
      warn: (_: string, fields: Record<string, unknown>) => lines.push({ level: 'warn', fields }),
      error: (_: string, fields: Record<string, unknown>) => lines.push({ level: 'error', fields }),
    } as unknown as Logger;
    expect(await runBrakesAge({ brakesStore: store, metrics, logger, now: () => NOW })).toMatchObject({
      brakes_in_force: 0,
      oldest_brake_minutes: 0,
    });
    await store.write(
      [
        brake('all', 'writes', { set_at: new Date(NOW - 95 * 60_000).toISOString() }),
        brake({ key: 'a' }, 'all', { set_at: new Date(NOW - 5 * 60_000).toISOString() }),
        brake('all', 'all', {
          set_at: new Date(NOW - 300 * 60_000).toISOString(),
          expires: new Date(NOW - 1).toISOString(),
        }),
      ],
      0,
    );
    expect(await runBrakesAge({ brakesStore: store, metrics, logger, now: () => NOW })).toMatchObject({
      brakes_in_force: 2,
      oldest_brake_minutes: 95,
    });
    metrics.publishStoredMetrics();
    const values = metricsStore
      .recentRecords()
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => 'OldestBrakeAge' in record)
      .map((record) => record.OldestBrakeAge);
    expect(values).toEqual([0, 95]);
    expect(lines[1]).toMatchObject({
      level: 'warn',
      fields: {
        brakes: [
          { scope: 'all', mode: 'writes' },
          { scope: 'key', mode: 'all' },
        ],
      },
    });
    expect(JSON.stringify(lines)).not.toContain('Stop.');
  });

  it('the npm start banner lists the brakes in force, or says there are none', async () => {
    const store = new EmbeddedBrakesStore();
    expect(await brakesLine(store, NOW)).toMatch(/^Brakes: none in force/);
    await store.write([brake({ erp: 'erp.example.com' }, 'all', { id: 'brk_1', reason: 'Maintenance.' })], 0);
    const line = await brakesLine(store, NOW);
    expect(line).toContain('Brakes: 1 in force');
    expect(line).toContain('brk_1: every call of ERP erp.example.com, by operator since');
    expect(line).toContain('Maintenance.');
    expect(await brakesLine(undefined)).toBe('Brakes: no state store');
  });
});

describe('what a review found', () => {
  it('an answer that comes after its time limit is taken when it comes; a store that throws at once is a failed read', async () => {
    const { store, reads } = controlledStore();
    const failures: string[] = [];
    const source = createBrakesSource({
      store,
      refreshMs: 5_000,
      readTimeoutMs: 20,
      onReadFailure: ({ kept }) => failures.push(kept),
    });
    expect(await source.read(NOW)).toEqual([]);
    expect(failures).toEqual(['none']);
    const late = brake({ key: 'agent' }, 'all');
    reads[0]?.resolve({ version: 1, brakes: [late] });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(source.fresh(NOW + 1)).toEqual([late]);

    const throwing = createBrakesSource({
      store: {
        read: () => {
          throw new Error('at once');
        },
        write: async () => true,
      },
      refreshMs: 1_000,
      onReadFailure: () => {
        throw new Error('a report that fails');
      },
    });
    expect(await throwing.read(NOW)).toEqual([]);
  });

  it('a key stopped by several brakes is named by the one that holds longest', () => {
    const soon = brake({ key: 'agent' }, 'all', { expires: new Date(NOW + 600_000).toISOString() });
    const forever = brake({ key: 'agent' }, 'all');
    expect(keyStopped([soon, forever], 'agent', NOW)).toBe(forever);
  });

  it('a write whose answer is lost is read back: applied, it is answered as done; not, as nothing changed', async () => {
    const embedded = new EmbeddedBrakesStore();
    const lost = (apply: boolean): BrakesStore => ({
      read: () => embedded.read(),
      async write(brakes, expected) {
        if (apply) await embedded.write(brakes, expected);
        throw new Error('socket hang up');
      },
    });
    const body = JSON.stringify({ scope: 'all', mode: 'writes', reason: 'Lost.' });
    const set = await serveBrakes('POST', '/_/brakes', body, 'ops', { brakesStore: lost(true) });
    expect(JSON.parse(set.response.body).brake.reason).toBe('Lost.');
    await expect(serveBrakes('POST', '/_/brakes', body, 'ops', { brakesStore: lost(false) })).rejects.toThrow(
      /nothing changed/,
    );
  });
});

describe('an erp brake of an address', () => {
  it('binds a host name that resolves to it, asking the resolver only while such a brake is in force', async () => {
    const asked: string[] = [];
    const addresses = async (hostname: string) => {
      asked.push(hostname);
      return hostname === 'erp.example.com' ? ['10.0.0.1', '10.0.0.2'] : ['10.0.0.9'];
    };
    const source = (brakes: readonly Brake[]) =>
      createBrakesSource({
        store: { read: async () => ({ version: 1, brakes }), write: async () => true },
        refreshMs: 60_000,
      });
    const subject = (host: string) =>
      brakeSubject({ kind: 'key', name: 'agent' }, new URL(`http://${host}/`), false);
    const byAddress = source([brake({ erp: '10.0.0.2' }, 'all', { reason: 'Down.' })]);
    await byAddress.read(Date.now());
    await expect(
      checkBrakes(byAddress, subject('erp.example.com'), undefined, addresses),
    ).rejects.toMatchObject({
      code: -32012,
    });
    await expect(
      Promise.resolve(checkBrakes(byAddress, subject('other.example.com'), undefined, addresses)),
    ).resolves.toBeUndefined();
    expect(asked).toEqual(['erp.example.com', 'other.example.com']);
    // A brake of a name binds that name only, and never asks the resolver.
    const byName = source([brake({ erp: 'erp.example.com' }, 'all')]);
    await byName.read(Date.now());
    expect(() => checkBrakes(byName, subject('erp.example.com'), undefined, addresses)).toThrow(BrakedError);
    expect(checkBrakes(byName, subject('10.0.0.1'), undefined, addresses)).toBeUndefined();
    expect(asked).toHaveLength(2);
  });
});
