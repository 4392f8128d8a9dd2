/**
 * Writes you can retry, on the real Odoo 19 and 16 (issue 39; README, "Retrying writes safely"):
 * a create sent five times with one `Idempotency-Key` makes one record, on v1 and on v2 (over
 * JSON-2 on 19, over execute_kw on 16 with `ERP_V2_TRANSPORT=auto`); every answer after the first
 * is the first one replayed, with its own `id`. The ERP itself counts the records; what the test
 * creates is deleted again; ids are discovered, never assumed. The proxy keeps its records in its
 * embedded store (the DynamoDB store's behaviour is the integration suite's).
 */
import { describe, expect, it } from 'vitest';
import {
  adminInstance,
  erpResult,
  LIVE16,
  LIVE19,
  type LiveServer,
  liveName,
  useCleanup,
  useLiveProxy,
  v2Instance,
} from './live-env.ts';

interface Envelope {
  id: string | null;
  result: unknown;
  error: { code: number; message: string } | null;
}

/** How many partners carry `name` (archived ones included), as the ERP itself counts them. */
async function partnersNamed(server: LiveServer, name: string): Promise<number> {
  return (await erpResult(server, 'res.partner', 'search_count', {
    domain: [['name', '=', name]],
    context: { active_test: false },
  })) as number;
}

describe.each([LIVE19, LIVE16])('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(
    server.title('Idempotency-Key: one record per key'),
    () => {
      const proxy = useLiveProxy(server);
      const cleanup = useCleanup(server);

      it.each([
        [
          'v1',
          '/api/erp/execute',
          (name: string, id: string) => ({
            id,
            action: 'create',
            model_id: 'res.partner',
            params: [{ name }],
            erp_instance: adminInstance(server),
          }),
        ],
        [
          'v2',
          '/v2/erp/execute',
          (name: string, id: string) => ({
            id,
            model_id: 'res.partner',
            method: 'create',
            kwargs: { vals_list: [{ name }] },
            erp_instance: v2Instance(server),
          }),
        ],
      ] as const)('%s: a create sent five times with one key makes one record', async (_api, path, body) => {
        const name = liveName(`idempotent ${path}`);
        const key = `live-${Date.now()}-${Math.random().toString(36).slice(2)}`;
        const answers: { status: number; replayed: string | null; envelope: Envelope }[] = [];
        for (let i = 0; i < 5; i += 1) {
          const answer = await proxy().harness.post(path, body(name, `try-${i}`), { 'idempotency-key': key });
          answers.push({
            status: answer.status,
            replayed: answer.headers.get('idempotent-replayed'),
            envelope: answer.json as Envelope,
          });
        }
        const [first, ...rest] = answers;
        if (first === undefined) throw new Error('no answer');
        cleanup.track('res.partner', first.envelope.result);
        expect(first.status, JSON.stringify(first.envelope)).toBe(200);
        expect(first.envelope.error).toBeNull();
        expect(first.replayed).toBeNull();
        for (const [i, answer] of rest.entries()) {
          expect(answer.status).toBe(200);
          expect(answer.replayed).toBe('true');
          expect(answer.envelope).toEqual({ ...first.envelope, id: `try-${i + 1}` });
        }
        expect(await partnersNamed(server, name)).toBe(1);
      });
    },
  );
});
