/**
 * `npm run erp-double`: the Odoo imitation the tests use, on 127.0.0.1 (port `ERP_DOUBLE_PORT`,
 * default 8788: no ERP's default port, so the examples never reach a real ERP by accident), so
 * the proxy can be tried without a real ERP. Prints the databases, users and keys to put in
 * `erp_instance`, and a curl through the local proxy at the address `npm start` listens on with
 * the same `PORT` and `HOST`. Test data only: the keys are fixed, public test values. Under npm,
 * it stops when npm goes (bin/npm-parent.ts), as `npm start` does.
 */
import { stopOnSignals } from '../../bin/npm-parent.ts';
import { RUNTIME_SETTINGS } from '../../lambdas/platform/settings.ts';
import { DOUBLE_USERS, type ErpMode, startErpDouble } from './index.ts';

const portSetting = RUNTIME_SETTINGS.erpDoublePort.schema.safeParse(process.env.ERP_DOUBLE_PORT);
if (!portSetting.success) {
  process.stderr.write(
    `ERP_DOUBLE_PORT: ${portSetting.error.issues.map((issue) => issue.message).join('; ')}\n`,
  );
  process.exit(2);
}
const port = portSetting.data;
const mode = (process.env.ERP_DOUBLE_MODE ?? '19') as ErpMode;
if (!['16', '17', '18', '19', '20', '21', '22'].includes(mode)) {
  process.stderr.write('ERP_DOUBLE_MODE must be one of 16, 17, 18, 19, 20, 21, 22\n');
  process.exit(2);
}

/** The local proxy's base URL, as `npm start` reads `PORT` and `HOST` (same defaults, same checks). */
function proxyBaseUrl(): string {
  const proxyPort = RUNTIME_SETTINGS.port.schema.safeParse(process.env.PORT);
  const proxyHost = RUNTIME_SETTINGS.host.schema.safeParse(process.env.HOST);
  const host = proxyHost.success ? proxyHost.data : '<HOST>';
  const shownHost = host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shownHost}:${proxyPort.success ? proxyPort.data : '<PORT>'}`;
}

try {
  // ERP_DOUBLE_JSONRPC=off: an ERP 19-21 whose front proxy blocks /jsonrpc (Odoo keeps it,
  // deprecated, through 21 and removes it in 22: odoo/odoo#252721).
  const jsonRpc = process.env.ERP_DOUBLE_JSONRPC !== 'off';
  const double = await startErpDouble({ mode, port, recordRequests: false, jsonRpc });
  // Armed before the ready text: whoever waits for it may stop npm at once.
  stopOnSignals('erp-double', () => double.close());
  const admin = DOUBLE_USERS.find((u) => u.db === 'erp_a' && u.uid === 2 && !u.expired);
  const lines = [
    `ERP double (imitating Odoo ${mode}${jsonRpc ? '' : ' without /jsonrpc'}) listening on ${double.url}`,
    'Databases: erp_a (demo partners), erp_b. Users for erp_instance:',
    ...DOUBLE_USERS.map(
      (u) =>
        `  db ${u.db}  user_id ${u.uid}  api_key ${u.apiKey}  (${u.expired ? 'expired key' : u.limited ? 'limited user' : 'admin'})`,
    ),
    '',
    `With \`npm start\` running in another terminal (same PORT and HOST; use the proxy key it prints):`,
    `  curl -s ${proxyBaseUrl()}/api/erp/execute -H 'content-type: application/json' -H 'x-api-key: <PROXY_KEY>' \\`,
    `    -d '{"id":"1","action":"search_read","model_id":"res.partner","params":[[["is_company","=",true]]],` +
      `"keyword":{"fields":["name"],"limit":3},"erp_instance":{"url":"${double.url}","db":"erp_a","user_id":2,"api_key":"${admin?.apiKey}"}}'`,
    '',
  ];
  process.stdout.write(lines.join('\n'));
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  process.stderr.write(
    `erp-double: cannot listen on 127.0.0.1:${port}${code === 'EADDRINUSE' ? ' (in use: set ERP_DOUBLE_PORT)' : ''}\n`,
  );
  process.exit(1);
}
