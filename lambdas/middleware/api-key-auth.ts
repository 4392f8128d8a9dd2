/**
 * @module middleware/api-key-auth
 * `x-api-key` authentication (README, Calling the proxy): the presented key is compared in constant
 * time against every configured proxy key; the matching key's name is recorded for logs. `POST /mcp`
 * also takes the key as `Authorization: Bearer <key>` (README, "Agents (MCP)"), since many MCP
 * clients can set no other header for authentication.
 */
import { checkKeyBrake } from '../core/brakes-check.ts';
import { withFacts } from '../core/request-facts.ts';
import { type Credential, presentedCredential } from '../platform/bearer.ts';
import type { BrakesSource } from '../platform/brakes/brakes-source.ts';
import { AuthenticationError } from '../platform/errors.ts';
import type { KeyPolicy } from '../platform/key-policy.ts';
import { findCallerKey, type ProxyKeySource } from '../platform/secrets.ts';
import { type NoValues, type Step, step } from './step.ts';
import type { ProxyEvent } from './types.ts';

export interface ApiKeyAuthOptions {
  /** When it returns true for a request, the key is not required (e.g. `AUX_PUBLIC`). */
  readonly isPublic?: (event: ProxyEvent) => boolean;
  /**
   * Also take the key from `Authorization: Bearer <key>` when `x-api-key` is absent (`POST /mcp`).
   * `x-api-key`, when sent, is the one checked.
   */
  readonly bearer?: boolean;
  /** The operators' brakes: a key braked `all` is refused (-32012) right after it is checked. */
  readonly brakes?: BrakesSource | undefined;
}

/** A proxy key as presented: the key and the header it came in. */
export type PresentedKey = Extract<Credential, { readonly kind: 'key' }>;

/** The proxy key a request presents, and the header it came in; `undefined` when none. */
export function presentedProxyKey(
  event: ProxyEvent,
  options: Pick<ApiKeyAuthOptions, 'bearer'> = {},
): PresentedKey | undefined {
  const credential = presentedCredential(event.headers ?? {}, options);
  return credential?.kind === 'key' ? credential : undefined;
}

/**
 * What the step returns: the name of the proxy key that authenticated the caller, and that key's
 * policy (README, "Key policies"; `undefined` for a key without one).
 */
export interface Authenticated {
  readonly callerName: string;
  readonly policy: KeyPolicy | undefined;
}

/** What the step returns where a request may be public: no caller and no policy then. */
export interface MaybeAuthenticated {
  readonly callerName: string | undefined;
  readonly policy: KeyPolicy | undefined;
}

/**
 * The key check as a step: it returns the caller's key name (a value for later steps, a fact for
 * the log). With `isPublic`, a public request passes without one (`caller` is then `undefined`).
 */
export function apiKeyAuth(
  keys: ProxyKeySource,
  options: ApiKeyAuthOptions & { readonly isPublic: (event: ProxyEvent) => boolean },
): Step<NoValues, MaybeAuthenticated>;
export function apiKeyAuth(keys: ProxyKeySource, options?: ApiKeyAuthOptions): Step<NoValues, Authenticated>;
export function apiKeyAuth(
  keys: ProxyKeySource,
  options: ApiKeyAuthOptions = {},
): Step<NoValues, MaybeAuthenticated> {
  return step<NoValues, MaybeAuthenticated>('apiKeyAuth', async (event) => {
    if (options.isPublic?.(event)) return { values: { callerName: undefined, policy: undefined } };
    const caller = await checkProxyKey(keys, presentedProxyKey(event, options), options);
    return { values: caller, facts: { callerKeyName: caller.callerName } };
  });
}

/**
 * The caller of a presented proxy key (its name and policy), or the 401 saying what is wrong:
 * the key check of {@link apiKeyAuth}, for a credential the edge has read (`POST /mcp`'s step).
 */
export async function checkProxyKey(
  keys: ProxyKeySource,
  presented: PresentedKey | undefined,
  options: Pick<ApiKeyAuthOptions, 'bearer' | 'brakes'> = {},
): Promise<Authenticated> {
  // An old copy of the brakes is read alongside the keys (a cold start pays one wait, not two);
  // the key check below shares that read. At most one read per instance per interval, whoever asks.
  // Awaited whatever the keys say (a refused key included: a frozen Lambda keeps no read in flight).
  const { brakes } = options;
  const prefetch =
    brakes !== undefined && brakes.fresh(Date.now()) === undefined ? brakes.read(Date.now()) : undefined;
  const named = prefetch === undefined ? keys.getKeys() : keys.getKeys().finally(() => prefetch);
  const caller = findCallerKey(await named, presented?.key);
  if (!caller) {
    const missing = options.bearer
      ? 'Authentication failed: send the proxy key in the x-api-key header or as Authorization: Bearer <key>'
      : 'Authentication failed: the x-api-key header is missing';
    throw new AuthenticationError(
      presented
        ? `Authentication failed: the ${presented.header} ${presented.header === 'x-api-key' ? 'header' : 'token'} does not match a proxy key`
        : missing,
    );
  }
  if (options.brakes !== undefined) {
    try {
      // Synchronous while the instance's copy of the brakes is fresh.
      const pending = checkKeyBrake(options.brakes, caller.name);
      if (pending !== undefined) await pending;
    } catch (error) {
      throw withFacts(error, { callerKeyName: caller.name });
    }
  }
  return { callerName: caller.name, policy: caller.policy };
}
