/**
 * @module middleware/api-key-auth
 * `x-api-key` authentication (README, Calling the proxy): the presented key is compared in constant
 * time against every configured proxy key; the matching key's name is recorded for logs.
 */
import { AuthenticationError } from '../platform/errors.ts';
import { findCallerKey, type ProxyKeySource } from '../platform/secrets.ts';
import type { ProxyMiddleware, ProxyRequest } from './types.ts';

export interface ApiKeyAuthOptions {
  /** When it returns true for a request, the key is not required (e.g. `AUX_PUBLIC`). */
  readonly isPublic?: (request: ProxyRequest) => boolean;
}

export function apiKeyAuth(keys: ProxyKeySource, options: ApiKeyAuthOptions = {}): ProxyMiddleware {
  const apiKeyAuthBefore = async (request: ProxyRequest): Promise<void> => {
    if (options.isPublic?.(request)) return;
    const presented = request.event.headers?.['x-api-key'];
    const caller = findCallerKey(await keys.getKeys(), presented);
    if (!caller) {
      throw new AuthenticationError(
        presented
          ? 'Authentication failed: the x-api-key header does not match a proxy key'
          : 'Authentication failed: the x-api-key header is missing',
      );
    }
    request.context.proxy.callerKeyName = caller.name;
  };
  return { before: apiKeyAuthBefore };
}
