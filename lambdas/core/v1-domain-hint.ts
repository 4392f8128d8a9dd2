/**
 * @module core/v1-domain-hint
 * The likeliest first mistake of a v1 caller who knows v2 (README, "From v1 to v2"): v2's domain
 * sent as v1's `params` (`"params": [["is_company", "=", true]]`), where v1 wraps it once more
 * (`"params": [[["is_company", "=", true]]]`: `params` is `[domain]`). The ERP refuses it with a
 * message about its own internals; the proxy appends a hint to that message, and keeps the ERP's
 * code and `data` (its `name` included) as they came.
 *
 * The hint is given only when all three hold: the action reads by domain (`search`,
 * `search_read`, `search_count`); `params[0]` is not a domain (a triple or a field name where a
 * list of conditions belongs, a prefix operator `|`, `&`, `!` being a domain's own first
 * element); and the ERP's message is one these mistakes produce. The messages, from the real
 * Odoo servers and the ERP double (2026-11-27):
 *
 * - Odoo 19 (and the double): `Domain() invalid item in domain: True` (v2's domain as `params`),
 *   `Domain() invalid argument type for domain: 'is_company'` and, in the double,
 *   `Domain() invalid domain: 'is_company'` (one bare condition as `params`);
 * - Odoo 16-18: `'bool' object is not subscriptable` (v2's domain as `params`),
 *   `Domains to normalize must have a 'domain' form: a list or tuple of domain components`
 *   (one bare condition);
 * - `search_count` with one bare condition, every version:
 *   `search_count() takes from 2 to 3 positional arguments but 4 were given`.
 */
import type { ErpCall, ErpOutcome } from '../upstream/erp-transport.ts';

/** What is appended to the ERP's message. */
export const V1_DOMAIN_HINT =
  "v1 hint: `params` is `[domain]`, the domain wrapped in one more list than v2's `kwargs.domain`: " +
  '"params": [[["is_company", "=", true]]]; [[]] matches every record';

/** The v1 actions whose `params[0]` is a domain. */
const DOMAIN_ACTIONS: ReadonlySet<string> = new Set(['search', 'search_read', 'search_count']);

/** The ERP messages a domain sent unwrapped produces (see the module comment). */
const DOMAIN_MISTAKES = [
  /Domain\(\) invalid (item|argument type|domain)/,
  /'bool' object is not subscriptable/,
  /Domains to normalize must have a 'domain' form/,
  /search_count\(\) takes from \d+ to \d+ positional arguments/,
];

const PREFIX_OPERATORS: ReadonlySet<unknown> = new Set(['|', '&', '!']);

/** `params[0]` is not a domain: a field name, or a list whose first item is a field name. */
function unwrapped(argsJson: string | undefined): boolean {
  let params: unknown;
  try {
    params = JSON.parse(argsJson ?? '[]');
  } catch {
    return false;
  }
  if (!Array.isArray(params)) return false;
  const first: unknown = params[0];
  if (typeof first === 'string') return !PREFIX_OPERATORS.has(first);
  return Array.isArray(first) && typeof first[0] === 'string' && !PREFIX_OPERATORS.has(first[0]);
}

/** The outcome, with the hint appended to an ERP error's message where it applies. */
export function withV1DomainHint(call: ErpCall, outcome: ErpOutcome): ErpOutcome {
  if (outcome.kind !== 'erp_error' || !DOMAIN_ACTIONS.has(call.method)) return outcome;
  if (!DOMAIN_MISTAKES.some((pattern) => pattern.test(outcome.message)) || !unwrapped(call.argsJson)) {
    return outcome;
  }
  return { ...outcome, message: `${outcome.message} (${V1_DOMAIN_HINT})` };
}
