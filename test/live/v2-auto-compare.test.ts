/**
 * v2 on Odoo 16-18 over execute_kw (`ERP_V2_TRANSPORT=auto`) against v2 on Odoo 19+ over JSON-2,
 * side by side: every row of the README's "From v1 to v2" table in its v2 form, and every v2
 * operation the README documents, run as the same call on both real servers (19 against each of
 * 18, 17 and 16). A success must
 * have the same result shape (test/erp-double/capture-replay.ts `structureDifferences`: types,
 * keys, items; not values or counts, which are each server's data); a failure the same error code
 * and `data.name`. Needs both servers (`ERP_LIVE_*` and `ERP_LIVE18_*`, `ERP_LIVE17_*` or `ERP_LIVE16_*`). Writes only records it
 * creates and deletes again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { structureDifferences } from '../erp-double/capture-replay.ts';
import {
  type Cleanup,
  discoverIds,
  erpCall,
  LIVE_BEFORE_19,
  LIVE19,
  type LiveProxy,
  type LiveServer,
  liveName,
  type ProxyAnswer,
  useCleanup,
  useLiveProxy,
  v2Instance,
} from './live-env.ts';

/** What one side of a case may use: its proxy, its server, discovered companies and its cleanup. */
interface Side {
  readonly proxy: LiveProxy;
  readonly server: LiveServer;
  readonly companies: number[];
  readonly cleanup: Cleanup;
}

/** A partner of the side's own, deleted after the file. */
const ownPartner = async (side: Side, what: string): Promise<number> =>
  (await side.cleanup.create('res.partner', [{ name: liveName(`compare ${what}`) }]))[0] ?? 0;

/** A partner id that no longer exists on the side's server. */
async function deletedPartner(side: Side): Promise<number> {
  const id = await ownPartner(side, 'deleted');
  await erpCall(side.server, 'res.partner', 'unlink', { ids: [id] });
  return id;
}

/** The same v2 call on each side; `track` tells which results are new records to delete after. */
const CASES: ReadonlyArray<{
  name: string;
  track?: boolean;
  needs?: 'limited' | 'expired';
  run: (side: Side) => Promise<ProxyAnswer>;
}> = [
  {
    name: 'search_read {domain, fields, limit, offset, order}',
    run: ({ proxy, companies }) =>
      proxy.v2('search_read', {
        domain: [['id', 'in', companies]],
        fields: ['name', 'is_company', 'country_id', 'create_date'],
        limit: 2,
        offset: 1,
        order: 'id desc',
      }),
  },
  {
    name: 'search {domain, limit, offset, order}',
    run: ({ proxy, companies }) =>
      proxy.v2('search', { domain: [['id', 'in', companies]], limit: 2, offset: 1, order: 'id asc' }),
  },
  {
    name: 'search_count {domain}',
    run: ({ proxy, companies }) => proxy.v2('search_count', { domain: [['id', 'in', companies]] }),
  },
  {
    name: 'read {ids, fields}',
    run: ({ proxy, companies }) => proxy.v2('read', { ids: companies, fields: ['name', 'country_id'] }),
  },
  {
    name: 'read of a deleted record: []',
    run: async (side) => side.proxy.v2('read', { ids: [await deletedPartner(side)] }),
  },
  {
    name: 'fields_get {attributes, allfields}',
    run: ({ proxy }) =>
      proxy.v2('fields_get', { allfields: ['name', 'email'], attributes: ['type', 'string'] }),
  },
  {
    name: 'create {vals_list: [vals]}: a list of ids',
    track: true,
    run: ({ proxy }) => proxy.v2('create', { vals_list: [{ name: liveName('compare create') }] }),
  },
  {
    name: 'create {vals_list: vals} (one dict): still a list',
    track: true,
    run: ({ proxy }) => proxy.v2('create', { vals_list: { name: liveName('compare create one') } }),
  },
  {
    name: 'write {ids, vals}',
    run: async (side) =>
      side.proxy.v2('write', { ids: [await ownPartner(side, 'write')], vals: { phone: '+1 555 0142' } }),
  },
  {
    name: 'unlink {ids}',
    run: async (side) => side.proxy.v2('unlink', { ids: [await ownPartner(side, 'unlink')] }),
  },
  {
    name: 'a method by name: name_search {name, limit}',
    run: ({ proxy }) => proxy.v2('name_search', { name: 'a', limit: 3 }),
  },
  {
    name: 'a record method: copy {ids}: a list of ids',
    track: true,
    run: async (side) => side.proxy.v2('copy', { ids: [await ownPartner(side, 'copy')] }),
  },
  {
    name: 'a method that returns None: action_archive {ids}: null',
    run: async (side) => side.proxy.v2('action_archive', { ids: [await ownPartner(side, 'archive')] }),
  },
  {
    name: 'kwargs.context: search_count with active_test false',
    run: ({ proxy }) =>
      proxy.v2('search_count', { domain: [['active', '=', false]], context: { active_test: false } }),
  },
  // Failures: the same code and data.name on both.
  {
    name: 'a wrong key (401)',
    run: ({ proxy, server }) =>
      proxy.v2(
        'search_count',
        { domain: [] },
        { instance: v2Instance(server, 'not-a-valid-key-0000000000000000') },
      ),
  },
  {
    name: 'an expired key (401)',
    needs: 'expired',
    run: ({ proxy, server }) =>
      proxy.v2('search_count', { domain: [] }, { instance: v2Instance(server, server.expiredKey ?? '') }),
  },
  {
    name: 'the limited user creating a partner (403)',
    needs: 'limited',
    run: ({ proxy, server }) =>
      proxy.v2(
        'create',
        { vals_list: [{ name: liveName('compare limited') }] },
        { instance: v2Instance(server, server.limited?.key ?? '', server.limited?.uid ?? 0) },
      ),
  },
  {
    name: 'a private method (403)',
    run: ({ proxy, companies }) => proxy.v2('_compute_display_name', { ids: companies.slice(0, 1) }),
  },
  {
    name: 'an unknown model (404)',
    run: ({ proxy }) => proxy.v2('search_count', { domain: [] }, { model: 'res.partnerx' }),
  },
  {
    name: 'an unknown method (404)',
    run: ({ proxy, companies }) => proxy.v2('no_such_method', { ids: companies.slice(0, 1) }),
  },
  {
    name: 'a deleted record to write (404)',
    run: async (side) =>
      side.proxy.v2('write', { ids: [await deletedPartner(side)], vals: { comment: 'gone' } }),
  },
  {
    name: 'a partner without a name (422)',
    track: true,
    run: ({ proxy }) => proxy.v2('create', { vals_list: [{ comment: liveName('compare no name') }] }),
  },
  {
    name: 'an unknown argument (422)',
    run: ({ proxy }) => proxy.v2('search_count', { domain: [], no_such_argument: 1 }),
  },
  {
    name: 'an unknown argument the method passes further in (search_read: 500 TypeError)',
    run: ({ proxy }) =>
      proxy.v2('search_read', { domain: [], fields: ['name'], limit: 1, no_such_argument: 1 }),
  },
  {
    name: 'ids on a model method (422)',
    run: ({ proxy, companies }) => proxy.v2('search_count', { ids: companies, domain: [] }),
  },
  {
    name: 'an unknown field in the domain (500)',
    run: ({ proxy }) => proxy.v2('search_count', { domain: [['no_such_field', '=', 1]] }),
  },
];

/** What must agree: the HTTP status, and the result's structure or the error's code and name. */
function outcome(answer: ProxyAnswer): { status: number; error?: { code: unknown; name: unknown } } {
  const { error } = answer.envelope;
  return error
    ? { status: answer.status, error: { code: error.code, name: error.data?.name } }
    : { status: answer.status };
}

describe.each(LIVE_BEFORE_19)('$label', (older) => {
  const skipReason = LIVE19.skipReason ?? older.skipReason;
  describe.skipIf(skipReason !== undefined)(
    `v2 on ${older.label} over execute_kw against v2 on ${LIVE19.label} over JSON-2${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    () => {
      const json2 = useLiveProxy(LIVE19);
      const executeKw = useLiveProxy(older);
      const cleanups = { json2: useCleanup(LIVE19), executeKw: useCleanup(older) };
      const sides: { json2?: Side; executeKw?: Side } = {};

      beforeAll(async () => {
        for (const [key, proxy, server] of [
          ['json2', json2, LIVE19],
          ['executeKw', executeKw, older],
        ] as const) {
          const companies = await discoverIds(server, 'res.partner', [['is_company', '=', true]], 3);
          sides[key] = { proxy: proxy(), server, companies, cleanup: cleanups[key] };
        }
      });

      it.each(CASES.map((testCase) => [testCase.name, testCase] as const))('%s', async (_name, testCase) => {
        const pair = [sides.json2, sides.executeKw].filter((side): side is Side => side !== undefined);
        expect(pair).toHaveLength(2);
        const lacking = pair.filter((side) =>
          testCase.needs === 'limited'
            ? !side.server.limited
            : testCase.needs === 'expired' && !side.server.expiredKey,
        );
        if (lacking.length > 0) {
          process.stderr.write(
            `v2 comparison, ${testCase.name}: skipped (${lacking[0]?.server.optionalSkip('LIMITED_KEY', 'EXPIRED_KEY')})\n`,
          );
          return;
        }

        // Act: the same call on both servers.
        const [overJson2, overExecuteKw] = await Promise.all(pair.map((side) => testCase.run(side)));
        if (!overJson2 || !overExecuteKw) throw new Error('a side gave no answer');
        for (const [side, answer] of [
          [pair[0], overJson2],
          [pair[1], overExecuteKw],
        ] as const)
          if (testCase.track && !answer.envelope.error)
            side?.cleanup.track('res.partner', answer.envelope.result);

        // Assess: same status and error code and name; the same result structure.
        expect(
          outcome(overExecuteKw),
          `execute_kw (${older.label}) against JSON-2 (${LIVE19.label})`,
        ).toEqual(outcome(overJson2));
        if (!overJson2.envelope.error)
          expect(structureDifferences(overJson2.envelope.result, overExecuteKw.envelope.result)).toEqual([]);
      });
    },
  );
});
