/**
 * The servers of the end-to-end benchmark, in processes of their own so that the load generator
 * (autocannon, in the parent) does not share their event loop. Run with `node --import tsx`:
 * - `upstreams`: the ERP double (Odoo 19 mode, not recording requests) and the fast fixed-answer
 *   upstream; reports `{ doubleUrl, fastUrl }`.
 * - `proxies <doubleUrl> <fastUrl>`: the local proxy (the real handlers behind the local server,
 *   LOG_LEVEL INFO, log lines to this process's stdout, which the parent points at /dev/null),
 *   one pass-through floor per upstream, and the observed floor (the floor plus erp-proxy's
 *   request logging and metrics) for the fast upstream; reports their URLs.
 * Both report over IPC and stop when the parent disconnects.
 */
import { startErpDouble } from '../test/erp-double/index.ts';
import { startProxy } from '../test/support/proxy-harness.ts';
import { BENCH_PROXY_KEY } from './fixtures.ts';
import { startFloorProxy } from './floor-proxy.ts';
import { startSmallUpstream } from './upstreams.ts';

const [role, doubleUrl, fastUrl] = process.argv.slice(2);
const closers: Array<() => Promise<void>> = [];

if (role === 'upstreams') {
  const double = await startErpDouble({ mode: '19', recordRequests: false });
  const fast = await startSmallUpstream();
  closers.push(
    () => double.close(),
    () => fast.close(),
  );
  process.send?.({ doubleUrl: double.url, fastUrl: fast.url });
} else if (role === 'proxies' && doubleUrl && fastUrl) {
  // The test harness defaults to DEBUG (for its leak guard); production's default is INFO.
  const proxy = await startProxy({ env: { LOG_LEVEL: 'INFO', PROXY_API_KEY: BENCH_PROXY_KEY } });
  const floorDouble = await startFloorProxy(doubleUrl);
  const floorFast = await startFloorProxy(fastUrl);
  const observedFloorFast = await startFloorProxy(fastUrl, { observed: true });
  closers.push(
    () => proxy.close(),
    () => floorDouble.close(),
    () => floorFast.close(),
    () => observedFloorFast.close(),
  );
  process.send?.({
    proxyUrl: proxy.url,
    floorDoubleUrl: floorDouble.url,
    floorFastUrl: floorFast.url,
    observedFloorFastUrl: observedFloorFast.url,
  });
} else {
  throw new Error(`usage: e2e-servers-child.ts upstreams | proxies <doubleUrl> <fastUrl> (got ${role})`);
}

process.on('disconnect', () => {
  Promise.all(closers.map((close) => close())).finally(() => process.exit(0));
});
