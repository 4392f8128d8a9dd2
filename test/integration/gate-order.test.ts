/**
 * The gate's order (docs/design.md, "The order of checks"; core/gate.ts) over real HTTP, on both
 * routes (`POST /v2/erp/execute` and `POST /mcp` tools/call), for a key's limit and an ERP's limit
 * (`ERP_TARGET_LIMITS`: a rate, and `in_flight`), with and without an idempotency key: a call the
 * policy step refuses (model, database, target, API, read-only, a database outside a key's
 * companies, method, field: on /mcp the rules read the tool's declared ERP request, issue 55)
 * never counts, never takes a slot, never reaches the ERP (the double counts its requests) and is
 * never recorded under its key. And a key whose writes a person confirms is never asked about a
 * call its method, field or company rule refuses: no form, no count, no slot, no ERP request;
 * while an asking round, whose run is the form's lookups, takes a slot and counts as one call.
 */
import { describe, expect, it } from 'vitest';
import { FIELDS_GET_KWARGS } from '../../lambdas/core/policy/erp-fields.ts';
import type { ErpDouble } from '../erp-double/types.ts';
import { type Envelope, USERS, useErpDouble, withProxy } from '../support/fixtures.ts';
import {
  erpHeaders,
  isError,
  toolError,
  withConfirmingClient,
  withMcpClient,
} from '../support/mcp-client.ts';
import type { ProxyHarness } from '../support/proxy-harness.ts';

const admin = USERS.adminA;

const KEYS = {
  writer: 'gate-writer-0123456789abcdef',
  reader: 'gate-reader-0123456789abcdef',
  elsewhere: 'gate-elsewhere-0123456789abcdef',
  v1only: 'gate-v1only-0123456789abcdef',
  methods: 'gate-methods-0123456789abcdef',
  fields: 'gate-fields-0123456789abcdef',
  companies: 'gate-companies-0123456789abcdef',
} as const;

/** The keys; `limited`: each with a limit of one call a day (else none: the ERP's limit alone applies). */
function keysJson(limited: boolean): string {
  const limits = limited ? { limits: [{ requests: 1, per: 'day' }] } : {};
  return JSON.stringify({
    keys: [
      {
        name: 'writer',
        key: KEYS.writer,
        policy: { models: ['res.partner'], databases: ['erp_a'], ...limits },
      },
      { name: 'reader', key: KEYS.reader, policy: { access: 'read', ...limits } },
      { name: 'elsewhere', key: KEYS.elsewhere, policy: { targets: ['erp.example.com'], ...limits } },
      { name: 'v1only', key: KEYS.v1only, policy: { apis: ['v1'], ...limits } },
      { name: 'methods', key: KEYS.methods, policy: { methods: { 'res.partner': ['read'] }, ...limits } },
      {
        name: 'fields',
        key: KEYS.fields,
        policy: { fields: { 'res.partner': { deny: ['name'] } }, ...limits },
      },
      { name: 'companies', key: KEYS.companies, policy: { companies: { erp_b: [1] }, ...limits } },
    ],
  });
}

/** What a refused call asks, as one of the policy's rules sees it. */
interface Refused {
  readonly rule: string;
  readonly key: string;
  readonly model: string;
  readonly db: string;
  /** Always a write (the read-only rule), or a write only when an idempotency key is sent. */
  readonly write?: boolean;
}

const REFUSED: readonly Refused[] = [
  { rule: 'model', key: KEYS.writer, model: 'res.users', db: 'erp_a' },
  { rule: 'database', key: KEYS.writer, model: 'res.partner', db: 'erp_b' },
  { rule: 'target', key: KEYS.elsewhere, model: 'res.partner', db: 'erp_a' },
  { rule: 'access', key: KEYS.reader, model: 'res.partner', db: 'erp_a', write: true },
  { rule: 'company', key: KEYS.companies, model: 'res.partner', db: 'erp_a' },
];

/**
 * The ERP calls that reached the double (JSON-2: the execute API and the tools on ERP 19), the
 * proxy's own field lookups for the field rules left out (docs/design.md, "The order of checks": not the caller's calls).
 */
function erpCalls(double: ErpDouble): number {
  return double.requests.filter(
    (request) =>
      request.path.startsWith('/json/2/') &&
      !(request.path.endsWith('/fields_get') && request.body === FIELDS_GET_KWARGS),
  ).length;
}

let keyCount = 0;
/** A fresh idempotency key (or none). */
function keyFor(keyed: boolean): string | undefined {
  keyCount += 1;
  return keyed ? `gate-order-${process.pid}-${Date.now()}-${keyCount}` : undefined;
}

/** A call on one route: its error code (`undefined`: served), for a key and an ERP connection. */
type Route = (
  proxy: ProxyHarness,
  double: ErpDouble,
  call: { key: string; model: string; db: string; write: boolean; idempotencyKey: string | undefined },
) => Promise<number | undefined>;

const execute: Route = async (proxy, double, call) => {
  const answer = await proxy.post(
    '/v2/erp/execute',
    {
      id: 'gate',
      erp_instance: { url: double.url, db: call.db, api_key: admin.apiKey },
      model_id: call.model,
      method: call.write ? 'create' : 'search_count',
      kwargs: call.write ? { vals_list: [{ name: 'Gate order' }] } : { domain: [] },
    },
    {
      'x-api-key': call.key,
      ...(call.idempotencyKey === undefined ? {} : { 'idempotency-key': call.idempotencyKey }),
    },
  );
  if (answer.status === 200) return undefined;
  return (answer.json as Envelope | undefined)?.error?.code ?? answer.status;
};

const mcp: Route = (proxy, double, call) =>
  withMcpClient(
    proxy.url,
    { 'x-api-key': call.key, ...erpHeaders({ url: double.url, db: call.db, apiKey: admin.apiKey }) },
    async (client) => {
      const result = call.write
        ? await client.callTool({
            name: 'create',
            arguments: {
              model: call.model,
              values: { name: 'Gate order' },
              ...(call.idempotencyKey === undefined ? {} : { idempotency_key: call.idempotencyKey }),
            },
          })
        : await client.callTool({ name: 'search_count', arguments: { model: call.model } });
      return isError(result) ? toolError(result).code : undefined;
    },
  );

const ROUTES = { 'POST /v2/erp/execute': execute, 'POST /mcp tools/call': mcp } as const;

/** Every refused call of the matrix on `route` (the method and field rules' included): each -32008. */
async function sendRefused(
  route: Route,
  proxy: ProxyHarness,
  double: ErpDouble,
  keyed: boolean,
): Promise<readonly (number | undefined)[]> {
  const codes = await Promise.all(
    REFUSED.map((refused) =>
      route(proxy, double, {
        ...refused,
        write: refused.write === true || keyed,
        idempotencyKey: keyFor(keyed),
      }),
    ),
  );
  const ruled = await Promise.all(
    [
      { key: KEYS.methods, write: keyed },
      { key: KEYS.fields, write: true },
    ].map((refused) =>
      route(proxy, double, {
        ...refused,
        model: 'res.partner',
        db: 'erp_a',
        idempotencyKey: keyFor(keyed),
      }),
    ),
  );
  // The API rule: a v1-only key on this route (the chain's step on /mcp, the gate's on execute).
  if (route !== execute) return [...codes, ...ruled];
  return [
    ...codes,
    ...ruled,
    await route(proxy, double, {
      key: KEYS.v1only,
      model: 'res.partner',
      db: 'erp_a',
      write: keyed,
      idempotencyKey: keyFor(keyed),
    }),
  ];
}

describe.each(Object.entries(ROUTES))('%s: a call the policy refuses', (_name, route) => {
  const double = useErpDouble({ mode: '19' });

  describe.each([false, true])('with an idempotency key: %s', (keyed) => {
    it("never counts against the key's limit, and is never recorded under its key", async () => {
      await withProxy(
        { env: { PROXY_API_KEY: '', PROXY_API_KEYS: keysJson(true), MCP_WRITE_TOOLS: 'true' } },
        async (proxy) => {
          double.reset();
          // The model rule's refused call with a key: the same key then serves an allowed call.
          const idempotencyKey = keyFor(keyed);
          const first = await route(proxy, double, {
            key: KEYS.writer,
            model: 'res.users',
            db: 'erp_a',
            write: keyed,
            idempotencyKey,
          });
          expect(first).toBe(-32008);
          expect(await sendRefused(route, proxy, double, keyed)).toEqual(
            Array((route === execute ? 8 : 7) as number).fill(-32008),
          );
          expect(erpCalls(double)).toBe(0);
          // Each key's one call a day is still there: the refusals did not count.
          const writer = await route(proxy, double, {
            key: KEYS.writer,
            model: 'res.partner',
            db: 'erp_a',
            write: keyed,
            idempotencyKey,
          });
          expect(writer).toBeUndefined();
          const reader = await route(proxy, double, {
            key: KEYS.reader,
            model: 'res.partner',
            db: 'erp_a',
            write: false,
            idempotencyKey: undefined,
          });
          expect(reader).toBeUndefined();
          // The field rule's refusal did not count either.
          const fields = await route(proxy, double, {
            key: KEYS.fields,
            model: 'res.partner',
            db: 'erp_a',
            write: false,
            idempotencyKey: undefined,
          });
          expect(fields).toBeUndefined();
          expect(erpCalls(double)).toBe(3);
        },
      );
    });

    it("never counts against the ERP's rate", async () => {
      await withProxy(
        {
          env: {
            PROXY_API_KEY: '',
            PROXY_API_KEYS: keysJson(false),
            MCP_WRITE_TOOLS: 'true',
            ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.1': { requests: 1, per: 'day' } }),
          },
        },
        async (proxy) => {
          double.reset();
          await sendRefused(route, proxy, double, keyed);
          expect(erpCalls(double)).toBe(0);
          const allowed = { key: KEYS.writer, model: 'res.partner', db: 'erp_a', write: keyed };
          expect(await route(proxy, double, { ...allowed, idempotencyKey: keyFor(keyed) })).toBeUndefined();
          // The ERP's one call a day is now used: the limit holds.
          expect(await route(proxy, double, { ...allowed, idempotencyKey: keyFor(keyed) })).toBe(-32004);
          expect(erpCalls(double)).toBe(1);
        },
      );
    });

    it("never takes the ERP's in-flight slot: refused by the policy while a served call holds it", async () => {
      await withProxy(
        {
          env: {
            PROXY_API_KEY: '',
            PROXY_API_KEYS: keysJson(false),
            MCP_WRITE_TOOLS: 'true',
            ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.1': { in_flight: 1 } }),
          },
        },
        async (proxy) => {
          double.reset();
          double.setDelay(1_500);
          try {
            const allowed = { key: KEYS.writer, model: 'res.partner', db: 'erp_a', write: keyed };
            const served = route(proxy, double, { ...allowed, idempotencyKey: keyFor(keyed) });
            // Wait until the served call holds the slot (it reached the ERP).
            await expect.poll(() => double.inFlight, { interval: 20, timeout: 10_000 }).toBe(1);
            // Every rule refuses before the limits, on both routes: -32008, never -32004.
            const codes = await sendRefused(route, proxy, double, keyed);
            expect(codes).toEqual(Array((route === execute ? 8 : 7) as number).fill(-32008));
            expect(await served).toBeUndefined();
            expect(erpCalls(double)).toBe(1);
            expect(double.maxInFlight).toBe(1);
          } finally {
            double.setDelay(0);
          }
        },
      );
    });
  });
});

/** Keys whose writes a person confirms, each with one rule that refuses the create below, and one call a day. */
const CONFIRMING = {
  method: 'gate-confirm-method-0123456789abcdef',
  field: 'gate-confirm-field-0123456789abcdef',
  company: 'gate-confirm-company-0123456789abcdef',
  /** Without a policy: its call holds the ERP's slot. */
  holder: 'gate-confirm-holder-0123456789abcdef',
  /** No rule, `confirm: "writes"` and two calls a day: the asking round and the accepted one. */
  asked: 'gate-confirm-asked-0123456789abcdef',
} as const;

/** A confirming key's entry: its one rule, `confirm: "writes"` and one call a day. */
const confirming = (name: string, key: string, rule: Record<string, unknown>) => ({
  name,
  key,
  policy: { ...rule, confirm: 'writes', limits: [{ requests: 1, per: 'day' }] },
});

const CONFIRMING_KEYS = JSON.stringify({
  keys: [
    confirming('method', CONFIRMING.method, { methods: { 'res.partner': ['search_count'] } }),
    confirming('field', CONFIRMING.field, { fields: { 'res.partner': { deny: ['email'] } } }),
    confirming('company', CONFIRMING.company, { companies: { erp_a: [1] } }),
    { name: 'holder', key: CONFIRMING.holder },
    {
      name: 'asked',
      key: CONFIRMING.asked,
      policy: { confirm: 'writes', limits: [{ requests: 2, per: 'day' }] },
    },
  ],
});

/** The create each confirming key's rule refuses: a method it does not list, a denied field, a company it does not name. */
const REFUSED_CREATES = [
  { rule: 'method', key: CONFIRMING.method, values: { name: 'Gate confirm' } },
  { rule: 'field', key: CONFIRMING.field, values: { name: 'Gate confirm', email: 'gate@example.com' } },
  { rule: 'company', key: CONFIRMING.company, values: { name: 'Gate confirm', company_id: 2 } },
] as const;

/** The confirming keys' proxy: the write tools on, one call in flight at the ERP at most. */
const CONFIRMING_ENV = {
  PROXY_API_KEY: '',
  PROXY_API_KEYS: CONFIRMING_KEYS,
  MCP_WRITE_TOOLS: 'true',
  ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.1': { in_flight: 1 } }),
};

/**
 * Runs `test` while the holder key's read (slowed by the double) holds the ERP's one slot, and
 * checks that read was served.
 */
async function whileTheSlotIsHeld(
  proxy: ProxyHarness,
  double: ErpDouble,
  test: () => Promise<void>,
): Promise<void> {
  double.setDelay(1_500);
  const served = withMcpClient(
    proxy.url,
    { 'x-api-key': CONFIRMING.holder, ...erpHeaders({ url: double.url, db: 'erp_a', apiKey: admin.apiKey }) },
    async (other) =>
      isError(await other.callTool({ name: 'search_count', arguments: { model: 'res.partner' } })),
  );
  try {
    await expect.poll(() => double.inFlight, { interval: 20, timeout: 10_000 }).toBe(1);
    await test();
    expect(await served).toBe(false);
  } finally {
    double.setDelay(0);
  }
}

describe('POST /mcp tools/call: a confirming key is never asked about a call a rule refuses', () => {
  const double = useErpDouble({ mode: '19' });

  describe.each([false, true])('with an idempotency key: %s', (keyed) => {
    it.each(REFUSED_CREATES)(
      "the $rule rule: -32008 with no form, under an in-flight cap held by another call, and the day's call left free",
      async ({ rule, key, values }) => {
        await withProxy({ env: CONFIRMING_ENV }, async (proxy) => {
          double.reset();
          const headers = {
            'x-api-key': key,
            ...erpHeaders({ url: double.url, db: 'erp_a', apiKey: admin.apiKey }),
          };
          const idempotencyKey = keyFor(keyed);
          await withConfirmingClient(proxy.url, headers, 'accept', async (client, forms) => {
            // Another key's call holds the ERP's one slot.
            await whileTheSlotIsHeld(proxy, double, async () => {
              const result = await client.callTool({
                name: 'create',
                arguments: {
                  model: 'res.partner',
                  values,
                  ...(idempotencyKey === undefined ? {} : { idempotency_key: idempotencyKey }),
                },
              });
              const error = toolError(result);
              expect(error.code).toBe(-32008);
              expect(error.message).toContain(
                rule === 'method' ? 'create' : rule === 'field' ? 'email' : 'compan',
              );
            });
            // Nobody was asked; only the other key's read reached the ERP.
            expect(forms).toEqual([]);
            expect(erpCalls(double)).toBe(1);
            // The key's one call a day is still there: the refusal did not count.
            const read = await client.callTool({
              name: 'search_count',
              arguments: { model: 'res.partner' },
            });
            expect(isError(read)).toBe(false);
            expect(erpCalls(double)).toBe(2);
          });
        });
      },
    );
  });

  it("an asking round (the form's display-name lookups) takes an in-flight slot and counts as one call; the accepted round one more", async () => {
    await withProxy({ env: CONFIRMING_ENV }, async (proxy) => {
      double.reset();
      const connection = erpHeaders({ url: double.url, db: 'erp_a', apiKey: admin.apiKey });
      const create = {
        name: 'create',
        arguments: { model: 'res.partner', values: { name: 'Gate asked' } },
      };
      await withConfirmingClient(
        proxy.url,
        { 'x-api-key': CONFIRMING.asked, ...connection },
        'accept',
        async (client, forms) => {
          // Under the cap held by another call, the asking round waits for no one: -32004, no form.
          await whileTheSlotIsHeld(proxy, double, async () => {
            expect(toolError(await client.callTool(create)).code).toBe(-32004);
            expect(forms).toEqual([]);
          });
          // With the slot free: asked, accepted, written; the two rounds are the day's two calls.
          expect(isError(await client.callTool(create))).toBe(false);
          expect(forms).toHaveLength(1);
          const over = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
          expect(toolError(over).code).toBe(-32004);
        },
      );
    });
  });
});
