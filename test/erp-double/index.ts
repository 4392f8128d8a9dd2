/**
 * @module erp-double
 * An Odoo imitation on real loopback sockets for erp-proxy's integration tests: legacy `/jsonrpc`
 * (16-21), JSON-2 `/json/2/<model>/<method>`, `/web/version` and the `/doc-bearer` method
 * documentation (19-22), reproducing the captures in `../shared/odoo/captures/` (20 and 21: what
 * Odoo published, versions.ts).
 *
 * @example
 * ```ts
 * import { DOUBLE_USERS, startErpDouble } from '../erp-double/index.ts';
 * const erp = await startErpDouble({ mode: '19' });
 * // ... point the proxy at erp.url, assert on erp.requests ...
 * await erp.close();
 * ```
 */
import { RUNTIME_SETTINGS } from '../../lambdas/platform/settings.ts';

export { startErpDouble } from './server.ts';

/**
 * Where `npm run erp-double` listens unless `ERP_DOUBLE_PORT` says otherwise (the settings
 * catalogue's default, 8788): beside the local proxy's 8787, and a port no ERP listens on by
 * default (Odoo: 8069 and 8072), so an example pasted on a machine that runs a real ERP never
 * reaches it by accident.
 */
export const ERP_DOUBLE_DEFAULT_PORT: number = RUNTIME_SETTINGS.erpDoublePort.schema.parse(undefined);
export type { ErpDouble, ErpDoubleOptions, ErpMode, ErpUser, RecordedRequest } from './types.ts';
export {
  DOUBLE_USERS,
  ERP_A_ADMIN_KEY,
  ERP_A_EXPIRED_KEY,
  ERP_A_LIMITED_KEY,
  ERP_B_ADMIN_KEY,
} from './users.ts';
