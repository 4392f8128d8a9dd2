/**
 * One ERP, one budget, whatever its name (docs/guide/limits.md, "Per ERP"), over real HTTP: the
 * local server (its embedded store) in front of the ERP double, reached through TCP relays that
 * listen on given loopback addresses, so a test sees which address each connection went to. An
 * `ERP_TARGET_LIMITS` entry keyed by an address binds a call to a host name resolving to it:
 * `localhost`, whichever of its addresses this machine's resolver gives, and a name of a DNS of the
 * test's own with several addresses, one keyed. The connection goes to the address counted, with
 * one lookup per call (none at connect); a name that does not resolve counts by name only; with no
 * entry naming an address, the limits look nothing up.
 */
import { ADDRCONFIG, lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeLimitHost } from '../../lambdas/platform/limits.ts';
import type { BaseLookup } from '../../lambdas/upstream/target-policy.ts';
import type { ErpDouble } from '../erp-double/types.ts';
import { type Envelope, searchCountBody, USERS, useErpDouble, withProxy } from '../support/fixtures.ts';
import { erpHeaders, isError, withMcpClient } from '../support/mcp-client.ts';
import { type ProxyHarness, TEST_PROXY_KEY } from '../support/proxy-harness.ts';

/** A TCP relay on one address: what the proxy connected to it, and sent through it. */
interface Relay {
  readonly host: string;
  /** Connections accepted. */
  connections: number;
  /** Everything the proxy sent through it (request lines, headers, bodies). */
  sent: string;
}

/** `localhost` as a connection of this machine resolves it (`net.connect`'s options). */
const LOCALHOST: readonly LookupAddress[] = await lookupAll('localhost', { all: true, hints: ADDRCONFIG });

const DAY_MS = 86_400_000;

/** How many windows of `ms` the span [from, to] touches. */
function windowsSpanned(from: number, to: number, ms: number): number {
  return Math.floor(to / ms) - Math.floor(from / ms) + 1;
}

/**
 * Relays on each of `hosts`, all on one port, each passing connections on to the double; started
 * before the block's tests, closed after them.
 */
function useRelays(
  hosts: readonly string[],
  double: ErpDouble,
): { readonly port: () => number; readonly at: (host: string) => Relay; reset(): void } {
  const relays = new Map<string, Relay>();
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  let port = 0;
  const listen = (server: Server, host: string, on: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(on, host, () => resolve((server.address() as { port: number }).port));
    });
  const relay = (host: string): Server => {
    const seen: Relay = { host, connections: 0, sent: '' };
    relays.set(host, seen);
    return createServer((socket) => {
      seen.connections += 1;
      const erp = netConnect(double.port, '127.0.0.1');
      for (const end of [socket, erp]) {
        sockets.add(end);
        end.on('close', () => sockets.delete(end));
        end.on('error', () => {
          socket.destroy();
          erp.destroy();
        });
      }
      socket.on('data', (chunk: Buffer) => {
        seen.sent += chunk.toString('latin1');
      });
      socket.pipe(erp).pipe(socket);
    });
  };
  beforeAll(async () => {
    // One port free on every address: the first one's, tried again if another has it taken.
    for (let attempt = 0; attempt < 10 && servers.length < hosts.length; attempt += 1) {
      await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
      try {
        for (const [index, host] of hosts.entries()) {
          const server = relay(host);
          servers.push(server);
          port = await listen(server, host, index === 0 ? 0 : port);
        }
      } catch {
        // EADDRINUSE on a later address: start over on another port.
      }
    }
    if (servers.length < hosts.length) throw new Error(`no port free on all of ${hosts.join(', ')}`);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });
  return {
    port: () => port,
    at: (host) => relays.get(host) as Relay,
    reset() {
      for (const seen of relays.values()) {
        seen.connections = 0;
        seen.sent = '';
      }
    },
  };
}

/** A DNS of the test's own (the target policy still checks its answers), counting its questions. */
function testDns(answers: Readonly<Record<string, readonly string[]>>): BaseLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup: BaseLookup = (hostname, options, callback) => {
    asked.push(hostname);
    if (hostname === 'localhost') return dnsLookup(hostname, options, callback);
    const addresses = answers[hostname];
    setImmediate(() => {
      if (addresses !== undefined)
        return callback(
          null,
          addresses.map((address) => ({ address, family: 4 })),
        );
      const notFound: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      notFound.code = 'ENOTFOUND';
      callback(notFound, []);
    });
  };
  return Object.assign(lookup, { asked });
}

/** A v1 `search_count` through `proxy` at `url`. */
async function v1Read(proxy: ProxyHarness, url: string, id = 'by-address') {
  const answer = await proxy.post('/api/erp/execute', searchCountBody('v1', url, id));
  return { ...answer, envelope: answer.json as Envelope };
}

/** The execute calls that reached the double. */
function executes(double: ErpDouble) {
  return double.requests.filter((request) => request.body.includes('"execute_kw"'));
}

const literal = (address: string): string => (address.includes(':') ? `[${address}]` : address);

describe.each(LOCALHOST.map((entry) => entry.address))(
  'localhost, its address %s keyed in ERP_TARGET_LIMITS',
  (keyed) => {
    const double = useErpDouble({ mode: '19' });
    const relays = useRelays(
      LOCALHOST.map((entry) => entry.address),
      double,
    );

    it("is refused at the address's in_flight cap and rate, and connects to the address counted", async () => {
      await withProxy(
        {
          env: { ERP_TARGET_LIMITS: JSON.stringify({ [keyed]: { in_flight: 1, requests: 3, per: 'day' } }) },
        },
        async (proxy) => {
          double.reset();
          relays.reset();
          const byName = `http://localhost:${relays.port()}`;
          const byAddress = `http://${literal(keyed)}:${relays.port()}`;
          const shown = normalizeLimitHost(keyed);
          const started = Date.now();
          // Busy: a slow call by name holds the address's one slot; by address and by name, refused.
          double.setDelay(500);
          const slow = v1Read(proxy, byName, 'slow');
          await new Promise((resolve) => setTimeout(resolve, 200));
          const busyByAddress = await v1Read(proxy, byAddress);
          const busyByName = await v1Read(proxy, byName);
          expect((await slow).status).toBe(200);
          double.setDelay(0);
          expect(busyByAddress.status).toBe(429);
          expect(busyByAddress.envelope.error?.message).toBe(
            `The ERP ${shown} is busy: it has 1 call in flight through the proxy, its cap (in_flight); retry after 1 s. The call did not run.`,
          );
          expect(busyByName.status).toBe(429);
          expect(busyByName.envelope.error?.message).toBe(
            'The ERP at the address localhost resolves to is busy: it has 1 call in flight through the proxy, its cap (in_flight); retry after 1 s. The call did not run.',
          );
          // The rate: three calls a day, by either name; the fourth is refused both ways.
          const served = [await v1Read(proxy, byAddress), await v1Read(proxy, byName)];
          expect(served.map((answer) => answer.status)).toEqual([200, 200]);
          expect(served[1]?.headers.get('ratelimit-policy')).toBe('"erp-address-day";q=3;w=86400');
          const usedUpByName = await v1Read(proxy, byName);
          const usedUpByAddress = await v1Read(proxy, byAddress);
          if (windowsSpanned(started, Date.now(), DAY_MS) === 1) {
            expect(usedUpByName.status).toBe(429);
            expect(usedUpByName.envelope.error?.message).toMatch(
              /^Rate limited: the limit of 3 calls per day of the address localhost resolves to is used up; retry after \d+ s\. The call did not run\.$/,
            );
            expect(usedUpByAddress.envelope.error?.message).toContain(
              `the ERP ${shown}'s limit of 3 calls per day is used up`,
            );
            expect(executes(double)).toHaveLength(3);
          }
          // Every connection went to the address counted; none to another address of localhost.
          expect(relays.at(keyed).connections).toBeGreaterThan(0);
          for (const { address } of LOCALHOST)
            if (address !== keyed) expect(relays.at(address).connections, address).toBe(0);
        },
      );
    });
  },
);

describe('a name with several addresses, one of them keyed', () => {
  const double = useErpDouble({ mode: '19' });
  const relays = useRelays(['127.0.0.2', '127.0.0.3'], double);
  const ANSWERS = {
    'erp.test': ['127.0.0.2', '127.0.0.3'],
    'meta.test': ['127.0.0.3', '169.254.169.254'],
  };
  const allowed = '127.0.0.0/8,::1/128,localhost,gone.test';

  it('connects every request of a call to the keyed address (its version lookups too), with one lookup per call and none at connect', async () => {
    const dns = testDns(ANSWERS);
    await withProxy(
      {
        env: {
          ERP_ALLOWED_TARGETS: allowed,
          ERP_V1_TRANSPORT: 'json2',
          ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.3': { requests: 100, per: 'day' } }),
        },
        overrides: { dnsLookup: dns },
      },
      async (proxy) => {
        double.reset();
        relays.reset();
        const url = `http://erp.test:${relays.port()}`;
        // v1 over JSON-2 on a new proxy: the transport asks the ERP's version first, within the call.
        for (let i = 0; i < 3; i += 1) {
          const answer = await v1Read(proxy, url, `v1-${i}`);
          expect(answer.status).toBe(200);
          expect(answer.headers.get('ratelimit-policy')).toBe('"erp-address-day";q=100;w=86400');
        }
        expect(relays.at('127.0.0.3').sent).toContain('GET /web/version');
        expect(relays.at('127.0.0.3').sent).toContain('POST /json/2/res.partner/search_count');
        expect(relays.at('127.0.0.2').connections).toBe(0);
        // The ERP saw the name the caller used.
        expect(double.requests.every((request) => request.headers.host === `erp.test:${relays.port()}`)).toBe(
          true,
        );
        // One lookup per call, at the limits: none when connecting.
        expect(dns.asked).toEqual(['erp.test', 'erp.test', 'erp.test']);
      },
    );
  });

  it("connects an MCP tool's requests to the keyed address too", async () => {
    const dns = testDns(ANSWERS);
    await withProxy(
      {
        env: {
          ERP_ALLOWED_TARGETS: allowed,
          ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.3': { in_flight: 1 } }),
        },
        overrides: { dnsLookup: dns },
      },
      async (proxy) => {
        double.reset();
        relays.reset();
        const url = `http://erp.test:${relays.port()}`;
        const admin = USERS.adminA;
        const headers = erpHeaders({ url, db: admin.db, apiKey: admin.apiKey, uid: admin.uid });
        await withMcpClient(proxy.url, { 'x-api-key': TEST_PROXY_KEY, ...headers }, async (client) => {
          const result = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
          expect(isError(result)).toBe(false);
        });
        expect(relays.at('127.0.0.3').sent).toContain('POST /json/2/res.partner/search_count');
        expect(relays.at('127.0.0.2').sent).not.toContain('/json/2/res.partner/search_count');
      },
    );
  });

  it('counts a name that does not resolve by name only; its connection fails as it would have (-32004), with no second lookup', async () => {
    // `gone.test` does not resolve at first; later it resolves to the keyed 127.0.0.3.
    const dns = testDns(ANSWERS);
    const answers: Record<string, readonly string[]> = ANSWERS;
    await withProxy(
      {
        env: {
          ERP_ALLOWED_TARGETS: allowed,
          ERP_TARGET_LIMITS: JSON.stringify({
            'gone.test': { requests: 2, per: 'day' },
            '127.0.0.3': { requests: 1, per: 'day' },
          }),
        },
        overrides: {
          dnsLookup: (hostname, options, callback) =>
            dns.asked.includes('gone.test') && hostname === 'gone.test'
              ? testDns({ ...answers, 'gone.test': ['127.0.0.3'] })(hostname, options, callback)
              : dns(hostname, options, callback),
        },
      },
      async (proxy) => {
        double.reset();
        relays.reset();
        const url = `http://gone.test:${relays.port()}`;
        const started = Date.now();
        const first = await v1Read(proxy, url);
        expect(first.envelope.error).toMatchObject({
          code: -32004,
          message: 'Cannot resolve ERP host gone.test (DNS). The call did not run; retrying is safe.',
        });
        // Counted by name only; the connect did not ask again (which would have reached 127.0.0.3).
        expect(first.headers.get('ratelimit-policy')).toBe('"erp-day";q=2;w=86400');
        expect(relays.at('127.0.0.3').connections).toBe(0);
        expect(dns.asked).toEqual(['gone.test']);
        // Resolving now: counted against the name and the address, and connected there.
        const second = await v1Read(proxy, url);
        expect(second.status).toBe(200);
        expect(second.headers.get('ratelimit-policy')).toBe(
          '"erp-day";q=2;w=86400, "erp-address-day";q=1;w=86400',
        );
        expect(relays.at('127.0.0.3').connections).toBe(1);
        if (windowsSpanned(started, Date.now(), DAY_MS) === 1) {
          const byAddress = await v1Read(proxy, `http://127.0.0.3:${relays.port()}`);
          expect(byAddress.envelope.error?.message).toContain("the ERP 127.0.0.3's limit of 1 call per day");
        }
      },
    );
  });

  it('refuses a name resolving to a refused address as it does with no entry naming an address', async () => {
    const answers: Awaited<ReturnType<typeof v1Read>>[] = [];
    for (const limits of [{ 'meta.test': { in_flight: 1 } }, { '127.0.0.3': { in_flight: 1 } }]) {
      const dns = testDns(ANSWERS);
      await withProxy(
        { env: { ERP_TARGET_LIMITS: JSON.stringify(limits) }, overrides: { dnsLookup: dns } },
        async (proxy) => {
          double.reset();
          answers.push(await v1Read(proxy, `http://meta.test:${relays.port()}`));
          expect(double.requests).toHaveLength(0);
        },
      );
    }
    const [atConnect, atLimits] = answers;
    expect(atLimits?.status).toBe(atConnect?.status);
    expect(atLimits?.envelope.error).toEqual(atConnect?.envelope.error);
    expect(atLimits?.envelope.error).toMatchObject({
      code: -32008,
      message: 'Target meta.test refused: it does not resolve to an address this proxy may reach',
    });
  });

  it('looks nothing up at the limits when no entry names an address: a kept-alive connection asks no resolver', async () => {
    const dns = testDns(ANSWERS);
    await withProxy(
      {
        env: {
          ERP_TARGET_LIMITS: JSON.stringify({ 'erp.test': { requests: 100, per: 'day', in_flight: 4 } }),
        },
        overrides: { dnsLookup: dns },
      },
      async (proxy) => {
        relays.reset();
        for (let i = 0; i < 3; i += 1)
          expect((await v1Read(proxy, `http://erp.test:${relays.port()}`, `n${i}`)).status).toBe(200);
        // The first connection's lookup only; the next calls ride it.
        expect(dns.asked).toEqual(['erp.test']);
        expect(relays.at('127.0.0.2').connections + relays.at('127.0.0.3').connections).toBe(1);
      },
    );
  });
});
