/**
 * @module platform/audit/digest-key
 * The key of the audit's HMACs (values, ERP keys, idempotency keys, id lists): a plain hash of a
 * phone number can be guessed, an HMAC under a key the reader does not hold cannot. Deployed, the
 * text of a secret the stack creates (`AUDIT_DIGEST_SECRET_ID`), read on the first record that
 * needs it (never at cold start) and cached like every secret read; locally `AUDIT_DIGEST_KEY`, or
 * a key generated at start. Each key has an id (`digest_key_id`), a hash of it, so a digest stays
 * checkable by whoever holds the key after a rotation.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { secretDocument } from '../secrets.ts';

/** One digest key and its id. */
export interface DigestKey {
  readonly id: string;
  readonly key: Buffer;
}

/** The current digest key (reading the secret when its cached copy is old). */
export type DigestKeySource = () => Promise<DigestKey>;

/** A key of `text` (32+ characters); its id is a hash that says nothing of it. */
export function digestKeyOf(text: string): DigestKey {
  const trimmed = text.trim();
  if (trimmed.length < 32) throw new Error('the audit digest key needs at least 32 characters');
  return {
    id: createHash('sha256')
      .update(`erp-proxy audit digest key id\n${trimmed}`, 'utf8')
      .digest('hex')
      .slice(0, 16),
    key: Buffer.from(trimmed, 'utf8'),
  };
}

/** HMAC-SHA-256 of `text` under `key`, base64url. */
export function hmacOf(key: DigestKey, text: string): string {
  return createHmac('sha256', key.key).update(text, 'utf8').digest('base64url');
}

/** The digest key of the configuration (see the module header). */
export function createDigestKeySource(
  config: Pick<
    Config,
    | 'auditDigestSecretId'
    | 'auditDigestKey'
    | 'secretsMaxAgeSeconds'
    | 'secretsExtensionPort'
    | 'awsSessionToken'
  >,
): DigestKeySource {
  const secretId = config.auditDigestSecretId;
  if (secretId !== undefined) {
    const document = secretDocument(config, secretId, 'audit digest', digestKeyOf);
    return () => document.read();
  }
  const key = digestKeyOf(config.auditDigestKey ?? randomBytes(32).toString('base64url'));
  return async () => key;
}
