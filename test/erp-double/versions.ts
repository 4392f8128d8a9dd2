/**
 * @module erp-double/versions
 * What each imitated Odoo version reports (`common.version`, `/web/version`) and which endpoints it has.
 */
import type { ErpMode } from './types.ts';

/** `odoo.release` values of one imitated version. */
export interface ReleaseInfo {
  version: string;
  versionInfo: readonly [number, number, number, string, number, string];
  serie: string;
}

const RELEASES: Readonly<Record<ErpMode, ReleaseInfo>> = {
  '16': { version: '16.0', versionInfo: [16, 0, 0, 'final', 0, ''], serie: '16.0' },
  '17': { version: '17.0', versionInfo: [17, 0, 0, 'final', 0, ''], serie: '17.0' },
  // An enterprise nightly: `version` gets a suffix, `version_info` does not (Odoo's `/web/version`, `odoo/service/common.py`).
  '18': { version: '18.0+e-20241113', versionInfo: [18, 0, 0, 'final', 0, ''], serie: '18.0' },
  '19': { version: '19.0', versionInfo: [19, 0, 0, 'final', 0, ''], serie: '19.0' },
  '21': { version: '21.0', versionInfo: [21, 0, 0, 'final', 0, ''], serie: '21.0' },
  '22': { version: '22.0', versionInfo: [22, 0, 0, 'final', 0, ''], serie: '22.0' },
};

/** Release info of a mode. */
export function releaseOf(mode: ErpMode): ReleaseInfo {
  return RELEASES[mode];
}

/** `common.version()` / `/web/webclient/version_info` result (RPC_VERSION_1). */
export function rpcVersion(mode: ErpMode): Record<string, unknown> {
  const release = RELEASES[mode];
  return {
    server_version: release.version,
    server_version_info: [...release.versionInfo],
    server_serie: release.serie,
    protocol_version: 1,
  };
}

/** `/jsonrpc` exists up to and including the 21 line (removed in 22). */
export function hasJsonRpc(mode: ErpMode): boolean {
  return mode !== '22';
}

/** JSON-2, `/web/version` and the `X-Odoo-Database` header exist from 19 on. */
export function isModern(mode: ErpMode): boolean {
  return mode === '19' || mode === '21' || mode === '22';
}

/** JSON-RPC `error.code` for ordinary exceptions: 200 up to 18.0, 0 from saas-18.1 on. */
export function jsonRpcErrorCode(mode: ErpMode): number {
  return Number(mode) >= 19 ? 0 : 200;
}
