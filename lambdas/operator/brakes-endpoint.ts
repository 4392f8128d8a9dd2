/**
 * @module operator/brakes-endpoint
 * The operators' brakes (docs/operators.md, "Stop an agent now"), for a proxy key whose
 * policy lists `brakes` in its `apis` (the chain refused every other key): `GET /_/brakes` lists the
 * brakes in force, `POST /_/brakes` sets one, `POST /_/brakes/release` releases one. Each reads the
 * store (strongly consistent), never an instance's copy, and each write is conditional on the
 * version it read (two operators never lose one another's brake); expired brakes are dropped from
 * the item on the next write.
 */
import { randomBytes } from 'node:crypto';
import { type Answer, plainJsonResponse } from '../core/envelope.ts';
import { echoed } from '../platform/bounded-text.ts';
import {
  type Brake,
  type BrakeMode,
  type BrakeScope,
  brakesInForce,
  MAX_BRAKE_NAME_CHARS,
  MAX_BRAKE_REASON_CHARS,
  MAX_BRAKES,
  shownText,
} from '../platform/brakes/brakes.ts';
import type { BrakesStore } from '../platform/brakes/brakes-source.ts';
import { InvalidRequestError, UpstreamUnavailableError } from '../platform/errors.ts';
import { isJsonObject } from '../platform/json.ts';
import { normalizeLimitHost } from '../platform/limits.ts';

/** What the brakes endpoints read and write. */
export interface BrakesEndpointDeps {
  /** `undefined`: no store (deployed without the state table): no brake can be set. */
  readonly brakesStore: BrakesStore | undefined;
  readonly now?: () => number;
}

/** The paths of the brakes endpoints. */
export const BRAKES_PATH = '/_/brakes';
export const BRAKES_RELEASE_PATH = '/_/brakes/release';

/** How many times a write is tried again after another write came first. */
const WRITE_TRIES = 5;

function invalid(message: string): never {
  throw new InvalidRequestError(`Invalid brake: ${message}`);
}

/** A name a scope takes (a key name, an identity entry): shown text, 1 to 256 characters. */
function scopeName(kind: string, value: unknown): string {
  if (typeof value !== 'string') invalid(`scope.${kind}: expected a string`);
  const name = shownText(value);
  if (name === '' || name !== value || name.length > MAX_BRAKE_NAME_CHARS)
    invalid(
      `scope.${kind}: expected a name of 1 to ${MAX_BRAKE_NAME_CHARS} characters, without control characters or surrounding spaces`,
    );
  return name;
}

function scopeOf(value: unknown): BrakeScope {
  if (value === 'all') return 'all';
  if (!isJsonObject(value) || Object.keys(value).length !== 1)
    invalid('scope: expected "all", {"key": NAME}, {"identity": ENTRY} or {"erp": HOST}');
  const [kind, name] = Object.entries(value)[0] as [string, unknown];
  if (kind === 'key') return { key: scopeName(kind, name) };
  if (kind === 'identity') return { identity: scopeName(kind, name) };
  if (kind === 'erp') {
    const host = typeof name === 'string' ? normalizeLimitHost(name) : undefined;
    if (host === undefined)
      invalid(
        'scope.erp: expected a host name or IP address, as ERP_TARGET_LIMITS names an ERP (no scheme, port or path)',
      );
    return { erp: host };
  }
  return invalid(`scope: unknown kind ${JSON.stringify(echoed(kind, 40))}; expected key, identity or erp`);
}

/** The brake a `POST /_/brakes` body asks for (a new id, `set_by`, `set_at`). */
export function brakeOfRequest(body: unknown, setBy: string, now: number): Brake {
  if (!isJsonObject(body)) invalid('expected a JSON object {"scope", "mode", "reason", "expires"}');
  const unknown = Object.keys(body).filter((name) => !['scope', 'mode', 'reason', 'expires'].includes(name));
  if (unknown.length > 0) invalid(`unknown field ${JSON.stringify(echoed(unknown[0] as string, 40))}`);
  const scope = scopeOf(body.scope);
  const { mode, reason, expires } = body;
  if (mode !== 'writes' && mode !== 'all') invalid('mode: expected "writes" or "all"');
  if (typeof reason !== 'string') invalid('reason: expected a string (it is shown to callers)');
  const shown = shownText(reason);
  if (shown === '' || shown.length > MAX_BRAKE_REASON_CHARS)
    invalid(`reason: expected 1 to ${MAX_BRAKE_REASON_CHARS} characters (it is shown to callers)`);
  let until: string | undefined;
  if (expires !== undefined && expires !== null) {
    const at =
      typeof expires === 'string' && /(Z|[+-]\d\d:\d\d)$/.test(expires) ? Date.parse(expires) : Number.NaN;
    if (Number.isNaN(at))
      invalid('expires: expected an ISO 8601 time with a time zone (2026-12-08T06:00:00Z)');
    if (at <= now) invalid('expires: the time has passed');
    until = new Date(at).toISOString();
  }
  return {
    id: `brk_${randomBytes(8).toString('hex')}`,
    scope,
    mode: mode as BrakeMode,
    reason: shown,
    ...(until === undefined ? {} : { expires: until }),
    set_by: setBy,
    set_at: new Date(now).toISOString(),
  };
}

function storeOf(deps: BrakesEndpointDeps): BrakesStore {
  if (deps.brakesStore === undefined)
    throw new UpstreamUnavailableError(
      'No brakes store: this proxy has no state table (STATE_TABLE), so no brake can be set or read.',
    );
  return deps.brakesStore;
}

/** Reads the store, or says it could not (-32004: nothing changed). */
async function readStore(store: BrakesStore) {
  try {
    return await store.read();
  } catch {
    throw new UpstreamUnavailableError(
      'The brakes could not be read from the state store; nothing changed. Retry shortly.',
    );
  }
}

/**
 * Applies `edit` to the brakes in force and writes them, conditional on the version read. A write
 * whose answer is lost is read back: `done` says whether the store shows it applied.
 */
async function change(
  deps: BrakesEndpointDeps,
  edit: (inForce: readonly Brake[], now: number) => readonly Brake[],
  done: (brakes: readonly Brake[]) => boolean,
): Promise<void> {
  const store = storeOf(deps);
  for (let tries = 0; tries < WRITE_TRIES; tries += 1) {
    const stored = await readStore(store);
    const now = (deps.now ?? Date.now)();
    const next = edit(brakesInForce(stored.brakes, now), now);
    let written: boolean;
    try {
      written = await store.write(next, stored.version);
    } catch {
      const after = await store.read().catch(() => undefined);
      if (after !== undefined && after.version > stored.version && done(after.brakes)) return;
      throw new UpstreamUnavailableError(
        after === undefined
          ? 'The brakes could not be written to the state store, nor read back: the change may have been made; list the brakes (GET /_/brakes) before trying again.'
          : 'The brakes could not be written to the state store; nothing changed. Retry shortly.',
      );
    }
    if (written) return;
  }
  throw new UpstreamUnavailableError('Other writes of the brakes kept coming first; nothing changed. Retry.');
}

function parsed(text: string | undefined): unknown {
  if (text === undefined || text.trim() === '') invalid('expected a JSON body');
  try {
    return JSON.parse(text);
  } catch {
    return invalid('the body is not valid JSON');
  }
}

/** `GET /_/brakes`, `POST /_/brakes` and `POST /_/brakes/release`, for `caller` (the key's name). */
export async function serveBrakes(
  method: string,
  path: string,
  body: string | undefined,
  caller: string,
  deps: BrakesEndpointDeps,
): Promise<Answer> {
  const now = () => (deps.now ?? Date.now)();
  if (method === 'GET') {
    const stored = await readStore(storeOf(deps));
    return plainJsonResponse({ brakes: brakesInForce(stored.brakes, now()) });
  }
  if (path === BRAKES_PATH) {
    const brake = brakeOfRequest(parsed(body), caller, now());
    await change(
      deps,
      (inForce) => {
        if (inForce.length >= MAX_BRAKES)
          invalid(`${MAX_BRAKES} brakes are in force already; release one first (GET /_/brakes lists them)`);
        return [...inForce, brake];
      },
      (brakes) => brakes.some((one) => one.id === brake.id),
    );
    return plainJsonResponse({ brake });
  }
  const request = parsed(body);
  const id = isJsonObject(request) ? request.id : undefined;
  if (typeof id !== 'string' || !isJsonObject(request) || Object.keys(request).length !== 1)
    invalid('expected {"id": "<the brake\'s id>"} (GET /_/brakes lists them)');
  let released: Brake | undefined;
  await change(
    deps,
    (inForce) => {
      released = inForce.find((brake) => brake.id === id);
      if (released === undefined) invalid(`no brake in force has the id ${JSON.stringify(echoed(id, 40))}`);
      return inForce.filter((brake) => brake.id !== id);
    },
    (brakes) => !brakes.some((brake) => brake.id === id),
  );
  return plainJsonResponse({ released });
}
