/**
 * @module operator/audit-endpoint
 * `GET /_/audit` (docs/guide/audit.md, "Finding a record"): the audit records of the calls that can
 * write, newest first, for a proxy key whose policy lists `audit` in its `apis` (the chain refused
 * every other key), narrowed to what the key's `targets` and `databases` reach. Filters: `since`,
 * `until` (UTC ISO 8601 with `Z`, or epoch ms), `model`, `record` (`model:id`), `actor`, `outcome`,
 * `erp`, `db`; `limit` (default 100, at most 1,000) and the opaque `cursor` of the page before.
 * Every filter is served by Queries of the store (platform/audit/), never a Scan.
 */

import { type Answer, plainJsonResponse } from '../core/envelope.ts';
import { checkKeyPolicy } from '../core/key-policy-check.ts';
import {
  AUDIT_OUTCOMES,
  type AuditOutcome,
  type AuditRecord,
  asRead,
  isAuditId,
} from '../platform/audit/audit-record.ts';
import type { AuditQuery, AuditReader } from '../platform/audit/audit-store.ts';
import { echoed } from '../platform/bounded-text.ts';
import type { Config } from '../platform/config.ts';
import { MODEL_NAME } from '../platform/erp-names.ts';
import { InvalidRequestError, UpstreamUnavailableError } from '../platform/errors.ts';
import { pendingMaxMs } from '../platform/function-timeout.ts';
import type { KeyPolicy } from '../platform/key-policy.ts';
import type { AuditMode } from '../platform/names.ts';
import { type SealKey, seal, unseal } from '../platform/seal.ts';

/** What `GET /_/audit` reads with: `AUDIT` and the audit's reader (`undefined`: none). */
export interface AuditReading {
  readonly mode: AuditMode;
  readonly store: AuditReader | undefined;
  /**
   * The key that seals a page's `next_cursor` (deployed, derived from the proxy keys' secret, the
   * same on every instance; locally, generated at start): a cursor can name a record the reader
   * may not see (where its reading stopped), so it is sealed, never readable.
   */
  readonly cursorKey: () => Promise<SealKey>;
  readonly now?: () => number;
}

/** HKDF's purpose for the cursor's key: keys derived from the same secret for anything else differ. */
export const CURSOR_KEY_PURPOSE = 'erp-proxy audit cursor v1';

/** Records a page holds by default, and at most. */
export const AUDIT_PAGE = Object.freeze({ default: 100, max: 1_000 });
/** The window a query reads when it names no `since`: the last 30 days before `until`. */
export const DEFAULT_AUDIT_WINDOW_MS = 30 * 86_400_000;
/** How far past now an `until` is taken as given (clocks of the writing functions may run ahead). */
const UNTIL_SKEW_MS = 60_000;

/** The query parameters `GET /_/audit` takes (any other is refused, so a typo is not a silent no-op). */
export const AUDIT_FILTERS = Object.freeze([
  'since',
  'until',
  'model',
  'record',
  'actor',
  'outcome',
  'erp',
  'db',
  'limit',
  'cursor',
] as const);

function invalid(message: string): InvalidRequestError {
  return new InvalidRequestError(`GET /_/audit: ${message}`);
}

/** A time parameter: UTC ISO 8601 ending in `Z`, or epoch milliseconds. */
function timeOf(name: string, text: string): number {
  if (/^\d{1,15}$/.test(text)) return Number(text);
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z$/.test(text)) {
    const ms = Date.parse(text);
    if (!Number.isNaN(ms)) return ms;
  }
  throw invalid(
    `${name} must be a UTC time such as 2026-12-07T09:00:00Z, or epoch milliseconds; got ${JSON.stringify(echoed(text))}`,
  );
}

/** The opaque cursor of a page's end: its `audit_id`, sealed. */
export function cursorOf(auditId: string, key: SealKey): string {
  return seal(Buffer.from(`a1:${auditId}`, 'utf8'), key);
}

/** The `audit_id` a cursor this endpoint gave seals. */
function cursorId(text: string, key: SealKey): string {
  const opened = unseal(text, (id) => (id === key.id ? key : undefined));
  const decoded = opened.ok ? opened.plaintext.toString('utf8') : '';
  const id = decoded.startsWith('a1:') ? decoded.slice(3) : '';
  if (!isAuditId(id)) {
    throw invalid(
      'cursor is not one this endpoint gave (or the proxy keys changed since): pass next_cursor as it came, or start again without it',
    );
  }
  return id;
}

/** The actor filter: `key:<name>`, `oauth:<issuer> <sub>`, `oauth-entry:<issuer> <entry>`, or a bare key name. */
function actorOf(text: string): string {
  return /^(key|oauth|oauth-entry):/.test(text) ? text : `key:${text}`;
}

/** Parses the query string's parameters into a query (see the module header); refuses what it cannot read. */
export function parseAuditQuery(
  params: Readonly<Record<string, string | undefined>>,
  now: number,
  cursorKey: SealKey,
): AuditQuery {
  for (const name of Object.keys(params)) {
    if (!(AUDIT_FILTERS as readonly string[]).includes(name)) {
      throw invalid(
        `unknown parameter ${JSON.stringify(echoed(name))}; the filters are ${AUDIT_FILTERS.join(', ')}`,
      );
    }
  }
  const get = (name: (typeof AUDIT_FILTERS)[number]): string | undefined => {
    const value = params[name];
    return value === undefined || value === '' ? undefined : value;
  };
  const untilText = get('until');
  // No record is newer than now: a later `until` reads as now (a far one would walk empty days).
  const until = untilText === undefined ? now : Math.min(timeOf('until', untilText), now + UNTIL_SKEW_MS);
  const sinceText = get('since');
  const since = sinceText === undefined ? until - DEFAULT_AUDIT_WINDOW_MS : timeOf('since', sinceText);
  if (since > until) throw invalid('since is after until');
  const limitText = get('limit');
  let limit: number = AUDIT_PAGE.default;
  if (limitText !== undefined) {
    if (!/^\d{1,5}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > AUDIT_PAGE.max) {
      throw invalid(`limit must be an integer from 1 to ${AUDIT_PAGE.max}`);
    }
    limit = Number(limitText);
  }
  const model = get('model');
  if (model !== undefined && !MODEL_NAME.test(model))
    throw invalid('model is not a model name (res.partner)');
  const recordText = get('record');
  let record: AuditQuery['record'];
  if (recordText !== undefined) {
    const match = /^([^:]+):(\d{1,15})$/.exec(recordText);
    if (match === null || !MODEL_NAME.test(match[1] as string)) {
      throw invalid('record must be model:id, such as res.partner:42');
    }
    record = { model: match[1] as string, id: Number(match[2]) };
  }
  const outcome = get('outcome');
  if (outcome !== undefined && !(AUDIT_OUTCOMES as readonly string[]).includes(outcome)) {
    throw invalid(`outcome must be one of ${AUDIT_OUTCOMES.join(', ')}`);
  }
  const actor = get('actor');
  const erp = get('erp');
  const db = get('db');
  const cursor = get('cursor');
  return {
    since,
    until,
    limit,
    ...(model === undefined ? {} : { model }),
    ...(record === undefined ? {} : { record }),
    ...(actor === undefined ? {} : { actor: actorOf(actor) }),
    ...(outcome === undefined ? {} : { outcome: outcome as AuditOutcome }),
    ...(erp === undefined ? {} : { erp: erp.toLowerCase() }),
    ...(db === undefined ? {} : { db }),
    ...(cursor === undefined ? {} : { before: cursorId(cursor, cursorKey) }),
  };
}

/** Whether a key with `policy` may see `record` (its `targets` and `databases`; a name its targets must resolve is not shown). */
export function auditVisible(policy: KeyPolicy | undefined, record: AuditRecord): boolean {
  if (policy === undefined) return true;
  try {
    const pending = checkKeyPolicy(
      { ...policy, apis: undefined },
      {
        target: new URL(
          `${record.erp.scheme}://${record.erp.host}${record.erp.port === undefined ? '' : `:${record.erp.port}`}`,
        ),
        db: record.erp.db,
      },
      () => Promise.reject(new Error('not resolved for the audit')),
    );
    if (pending === undefined) return true;
    pending.catch(() => undefined);
    return false;
  } catch {
    return false;
  }
}

/** Answers `GET /_/audit` for a key with `policy` (the chain checked it lists `audit`). */
export async function serveAudit(
  params: Readonly<Record<string, string | undefined>>,
  policy: KeyPolicy | undefined,
  deps: { readonly config: Config; readonly auditReading: AuditReading },
): Promise<Answer> {
  const now = (deps.auditReading.now ?? Date.now)();
  const cursorKey = await deps.auditReading.cursorKey();
  const query = parseAuditQuery(params, now, cursorKey);
  const { store } = deps.auditReading;
  if (store === undefined) {
    throw new UpstreamUnavailableError(
      deps.auditReading.mode === 'off'
        ? 'The audit is off on this proxy (AUDIT=off): there are no records to read.'
        : 'No audit store is configured for this function: ask an operator.',
    );
  }
  const maxPending = pendingMaxMs(deps.config);
  let page: Awaited<ReturnType<typeof store.list>>;
  try {
    page = await store.list(query, (record) =>
      auditVisible(policy, record) ? asRead(record, now, maxPending) : undefined,
    );
  } catch (error) {
    throw new UpstreamUnavailableError('The audit table could not be read: retry shortly.', {
      headers: { 'retry-after': '1' },
      cause: error,
    });
  }
  return plainJsonResponse({
    records: page.records,
    next_cursor: page.next === undefined ? null : cursorOf(page.next, cursorKey),
  });
}
