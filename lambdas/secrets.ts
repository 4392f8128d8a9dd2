/**
 * @module secrets
 * Proxy keys and the license: from Secrets Manager through Powertools Parameters (cached for
 * `SECRETS_MAX_AGE`) when deployed, from the environment and `LICENSE_FILE` locally.
 * (Interface fixed here; implementation in progress.)
 */
import type { Config, NamedKey } from './config.ts';

export interface ProxyKeySource {
  /** The current proxy keys; a rotation shows up within the cache age. */
  getKeys(): Promise<readonly NamedKey[]>;
}
