/**
 * @module operator/about
 * The body of `GET /_/about`: what this service is, which API versions it speaks to which ERP
 * versions, its routes and how each is authenticated, the proxy's error codes, and the build
 * and runtime it runs on. Nothing secret: the route is public.
 */

import { auditStoreKind } from '../platform/audit/audit-store.ts';
import type { Config } from '../platform/config.ts';
import { mayHaveRun, PROXY_ERROR_ROWS } from '../platform/error-table.ts';
import type { AuditMode } from '../platform/names.ts';
import {
  isAuxPublicName,
  SERVICE_NAME,
  type V1TransportMode,
  type V2TransportMode,
} from '../platform/names.ts';
import { PROXY_DESCRIPTION, PROXY_VERSION } from '../platform/package-info.ts';
import { ROUTES, type Route } from '../platform/routes.ts';
import { aboutSettings } from '../platform/settings.ts';
import { storeLocation } from '../platform/state/store-location.ts';

export interface AboutRoute {
  method: Route['method'];
  path: string;
  /** `api-key` when `x-api-key` is required, `public` otherwise (after `AUX_PUBLIC`). */
  auth: 'api-key' | 'public';
  summary: string;
}

/** One proxy error code, from the error table (`platform/error-table.ts`). */
export interface AboutErrorCode {
  code: number;
  http_status: number;
  /** Whether the ERP call may have run: when `false`, a retry is safe. */
  may_have_run: boolean;
  meaning: string;
}

export interface About {
  name: typeof SERVICE_NAME;
  version: string;
  description: string;
  api_versions: {
    v1: { erp: string; upstream: string };
    v2: { erp: string; upstream: string };
  };
  /** How calls reach the ERP: `ERP_V1_TRANSPORT` and `ERP_V2_TRANSPORT` in effect. */
  transports: { v1: V1TransportMode; v2: V2TransportMode };
  /**
   * The settings in effect that say how this proxy behaves, by environment name (the settings
   * catalogue marks which: never a secret, a target or a database name).
   */
  settings: Record<string, string | number | boolean | string[]>;
  routes: AboutRoute[];
  /**
   * The proxy's own errors, in the order of the README's table, then the v2 plain-text answer
   * (a second -32600, whose code the client never sees: the body is not an envelope).
   */
  error_codes: AboutErrorCode[];
  /**
   * Whether any proxy key carries a policy (README, "Key policies"); never what they say. `null`
   * when the keys could not be read for this answer.
   */
  key_policies: boolean | null;
  /**
   * Whether any proxy key's policy has `methods`, `fields` or `companies` rules
   * (docs/guide/policies.md, "Methods, fields and companies"); never what they say. `null` when the keys could not be read.
   */
  key_policy_call_rules: boolean | null;
  /**
   * Whether limits are configured (README, "Limits": `ERP_TARGET_LIMITS`, or a proxy key policy's
   * `limits`); never what they are. `null` when the keys could not be read and no ERP has limits.
   */
  limits: boolean | null;
  /**
   * Whether any proxy key's policy has a person confirm MCP writes (`confirm`: docs/guide/confirmations.md);
   * never which. The identity map is not read here: an OAuth entry may confirm too. `null` when the
   * keys could not be read.
   */
  confirmations: boolean | null;
  /**
   * Where the proxy keeps its state (idempotency records): `dynamodb` (a table), `embedded` (this
   * process: `npm start`), `none` (a deployed function without a table: calls with an
   * `Idempotency-Key` are refused). README, "Retrying writes safely".
   */
  state_store: 'dynamodb' | 'embedded' | 'none';
  /**
   * How many operators' brakes are in force (docs/operators.md, "Stop an agent now"); never
   * which, whose or why (`GET /_/brakes` lists them, for a key whose policy lists `brakes`). `null`:
   * no state store.
   */
  brakes_in_force: number | null;
  /**
   * The audit of the calls that can write (docs/guide/audit.md): its mode (`AUDIT`) and where its
   * records go: the audit table, the embedded ring of a local run, or none (off, or a function
   * deployed without the table).
   */
  audit: { mode: AuditMode; store: 'dynamodb' | 'embedded' | 'none' };
  build: { commit: string | null; time: string | null };
  runtime: { node: string; region: string | null; function_name: string | null };
}

/** The `AUX_PUBLIC` name of an aux route (`/_/license` → `license`). */
function publicNameOf(path: string): string {
  return path.replace(/^\/_\//, '');
}

/** How a route is authenticated under this configuration. */
export function effectiveAuth(
  route: Pick<Route, 'auth' | 'path'>,
  config: Pick<Config, 'auxPublic'>,
): AboutRoute['auth'] {
  if (route.auth === 'aux-configurable') {
    const name = publicNameOf(route.path);
    return isAuxPublicName(name) && config.auxPublic.has(name) ? 'public' : 'api-key';
  }
  return route.auth;
}

/** The `error_codes` of `GET /_/about`, read from the error table. */
function aboutErrorCodes(): AboutErrorCode[] {
  return PROXY_ERROR_ROWS.map((row) => ({
    code: row.code,
    http_status: row.httpStatus,
    may_have_run: mayHaveRun(row),
    meaning: row.meaning,
  }));
}

/** Builds the `GET /_/about` body. */
export function buildAbout(
  config: Config,
  routes: readonly Route[] = ROUTES,
  keyPolicies: boolean | null = null,
  limits: boolean | null = config.targetLimits.size > 0 ? true : null,
  callRules: boolean | null = keyPolicies === false ? false : null,
  confirmations: boolean | null = null,
  brakesInForce: number | null = null,
): About {
  return {
    name: SERVICE_NAME,
    version: PROXY_VERSION,
    description: PROXY_DESCRIPTION,
    api_versions: {
      v1: { erp: 'up to 21', upstream: 'POST /jsonrpc execute_kw' },
      v2: { erp: '19 and later', upstream: 'POST /json/2/<model>/<method>' },
    },
    transports: { v1: config.v1Transport, v2: config.v2Transport },
    settings: aboutSettings(config),
    routes: routes.map((route) => ({
      method: route.method,
      path: route.path,
      auth: effectiveAuth(route, config),
      summary: route.summary,
    })),
    error_codes: aboutErrorCodes(),
    key_policies: keyPolicies,
    key_policy_call_rules: callRules,
    limits,
    confirmations,
    state_store: storeLocation(config).kind,
    brakes_in_force: brakesInForce,
    audit: { mode: config.audit, store: auditStoreKind(config) },
    build: { commit: config.buildCommit ?? null, time: config.buildTime ?? null },
    runtime: {
      node: process.version,
      region: config.region ?? null,
      function_name: config.functionName ?? null,
    },
  };
}
