/**
 * @module erp-double/users
 * Default users and API keys of the ERP double.
 */
import type { ErpUser } from './types.ts';

/** The erp_a admin (uid 2) API key. */
export const ERP_A_ADMIN_KEY = '3f1c9a2b7d4e6f8091a2b3c4d5e6f708192a3b4c';
/** The erp_b admin (uid 2) API key. */
export const ERP_B_ADMIN_KEY = '8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b';
/** The erp_a limited user (uid 7) API key. */
export const ERP_A_LIMITED_KEY = '5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b';
/** An expired key of the erp_a admin (uid 2). */
export const ERP_A_EXPIRED_KEY = 'e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3';

/**
 * Default users: admin uid 2 on erp_a and on erp_b (different keys), a limited user (uid 7) on
 * erp_a, and an expired key of the erp_a admin (the captures' "erp_a admin EXPIRED key").
 * Passwords follow the captures: `admin` / `limited`.
 */
export const DOUBLE_USERS: readonly ErpUser[] = Object.freeze([
  { uid: 2, login: 'admin', apiKey: ERP_A_ADMIN_KEY, db: 'erp_a', password: 'admin' },
  { uid: 2, login: 'admin', apiKey: ERP_B_ADMIN_KEY, db: 'erp_b', password: 'admin' },
  { uid: 7, login: 'limited', apiKey: ERP_A_LIMITED_KEY, db: 'erp_a', limited: true, password: 'limited' },
  { uid: 2, login: 'admin', apiKey: ERP_A_EXPIRED_KEY, db: 'erp_a', expired: true },
]);
