/**
 * The real ERPs the live suite knows, by the prefix of their variables and the major version each
 * must report (test/live/live-env.ts builds its servers from this list; the leak guard scans for
 * their keys). `ERP_LIVE` is exactly an Odoo 19 since `ERP_LIVE20` exists (issue 42).
 */
export const LIVE_SERVER_PREFIXES = [
  { prefix: 'ERP_LIVE', major: 19, orLater: false },
  { prefix: 'ERP_LIVE20', major: 20, orLater: false },
  { prefix: 'ERP_LIVE18', major: 18, orLater: false },
  { prefix: 'ERP_LIVE17', major: 17, orLater: false },
  { prefix: 'ERP_LIVE16', major: 16, orLater: false },
] as const;

/** The variables of a live server that hold ERP keys (suffixes after its prefix). */
export const LIVE_KEY_SUFFIXES = ['KEY', 'LIMITED_KEY', 'EXPIRED_KEY', 'KEY2', 'MCP_KEY'] as const;
