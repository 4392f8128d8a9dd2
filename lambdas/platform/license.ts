/**
 * @module platform/license
 * The license document and its evaluation (docs/operators-license.md). Pure logic: no I/O, no clock
 * unless the caller leaves `now` out. A license is JSON
 * `{"licensee":"...","valid_until":"YYYY-MM-DD","signature":"<base64>"}`; the signature is
 * Ed25519 over the canonical message `${licensee}\n${valid_until}`.
 *
 * Nothing here puts a signature or a key into a reason text: reasons are shown to clients.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';

/** What `GET /_/license` answers (plus `days_left`, used by the alarm and the CLI). */
export interface LicenseStatus {
  licensee: string;
  valid_until: string;
  is_valid: boolean;
  /** Why the license is not valid; absent when it is. */
  reason?: string;
  /** Whole days from today (UTC) to `valid_until`: 0 on the last day, negative once expired, null when malformed. */
  days_left: number | null;
}

/** A well-formed license document. */
export interface License {
  licensee: string;
  valid_until: string;
  signature?: string;
}

export interface EvaluateOptions {
  /** Ed25519 verification key (PEM SPKI, base64 DER SPKI or base64 raw 32 bytes). Without it the signature is not checked. */
  publicKey?: string | undefined;
  /** The current time (defaults to the clock); only its UTC date matters. */
  now?: Date | undefined;
}

const DAY_MS = 86_400_000;
const MAX_LICENSEE_LENGTH = 200;
// DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): SEQUENCE { SEQUENCE { OID 1.3.101.112 } BIT STRING }.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** True when `text` is a real calendar date written `YYYY-MM-DD` (rejects 2026-02-30). */
export function isIsoDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const time = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === text;
}

const VALID_UNTIL_MESSAGE = 'valid_until must be a date YYYY-MM-DD';

type FieldsCheck = { ok: true; license: License } | { ok: false; reason: string };

/**
 * The fields of a license document, or the first reason they are malformed, fields in document
 * order (licensee, valid_until, signature). `licensee` is trimmed; other members are ignored.
 * Written out rather than as a zod schema: the checks are few, and building a schema at load
 * was the largest top-level cost of this module on every cold start (bench/import-profile.ts).
 */
function checkLicenseFields(value: Readonly<Record<string, unknown>>): FieldsCheck {
  const fail = (reason: string): FieldsCheck => ({ ok: false, reason });
  const { licensee: rawLicensee, valid_until, signature } = value;
  if (typeof rawLicensee !== 'string') {
    return fail(rawLicensee === undefined ? 'license is missing licensee' : 'licensee must be a string');
  }
  const licensee = rawLicensee.trim();
  if (licensee.length === 0) return fail('license is missing licensee');
  if (licensee.length > MAX_LICENSEE_LENGTH) {
    return fail(`licensee must be at most ${MAX_LICENSEE_LENGTH} characters`);
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(licensee)) return fail('licensee must not contain control characters');
  if (typeof valid_until !== 'string') {
    return fail(valid_until === undefined ? 'license is missing valid_until' : VALID_UNTIL_MESSAGE);
  }
  if (!isIsoDate(valid_until)) return fail(VALID_UNTIL_MESSAGE);
  if (signature === undefined) return { ok: true, license: { licensee, valid_until } };
  if (typeof signature !== 'string') return fail('signature must be a base64 string');
  return { ok: true, license: { licensee, valid_until, signature } };
}

/** The message a license signature covers. */
export function canonicalLicenseMessage(licensee: string, validUntil: string): Buffer {
  return Buffer.from(`${licensee}\n${validUntil}`, 'utf8');
}

/**
 * Parses a license document (JSON text, bytes or an already parsed value).
 * Returns the license, or the reason it is malformed.
 */
export function parseLicense(raw: unknown): { ok: true; license: License } | { ok: false; reason: string } {
  let value = raw;
  if (raw instanceof Uint8Array) value = Buffer.from(raw).toString('utf8');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return { ok: false, reason: 'license is not valid JSON' };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'license must be a JSON object' };
  }
  return checkLicenseFields(value as Record<string, unknown>);
}

/**
 * Reads an Ed25519 public key given as PEM (SPKI), base64 DER SPKI, or base64 of the raw 32
 * bytes. PEM pasted into an environment variable with literal `\n` or spaces is accepted too.
 * Returns `undefined` when the text is none of these.
 */
export function parsePublicKey(text: string): KeyObject | undefined {
  let body = text.trim().replace(/\\n/g, '\n');
  const pem = /-----BEGIN PUBLIC KEY-----([\s\S]*?)-----END PUBLIC KEY-----/.exec(body);
  if (pem) body = pem[1] ?? '';
  else if (body.includes('-----')) return undefined;
  body = body.replace(/\s+/g, '');
  if (!BASE64.test(body)) return undefined;
  const bytes = Buffer.from(body, body.includes('-') || body.includes('_') ? 'base64url' : 'base64');
  let der: Buffer;
  if (bytes.length === 32) der = Buffer.concat([ED25519_SPKI_PREFIX, bytes]);
  else if (bytes.length === ED25519_SPKI_PREFIX.length + 32) der = bytes;
  else return undefined;
  try {
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** Today's date in UTC, `YYYY-MM-DD`. */
export function utcDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Whole days from the UTC date of `now` to `date` (a valid `YYYY-MM-DD`). */
export function daysUntil(date: string, now: Date): number {
  return Math.round((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${utcDate(now)}T00:00:00Z`)) / DAY_MS);
}

/** The UTC date of `now` plus whole `years`, `YYYY-MM-DD`; Feb 29 rolls over to Mar 1. */
export function addUtcYears(now: Date, years: number): string {
  const date = new Date(Date.UTC(now.getUTCFullYear() + years, now.getUTCMonth(), now.getUTCDate()));
  return utcDate(date);
}

/**
 * Evaluates a license: valid when it is well-formed, `valid_until` is today or later (UTC; the
 * last day is still valid), and, when `publicKey` is given, its signature verifies.
 *
 * @example
 * evaluateLicense('{"licensee":"ACME","valid_until":"2030-01-31"}', { now: new Date('2030-01-31T23:59:59Z') })
 * // → { licensee: 'ACME', valid_until: '2030-01-31', is_valid: true, days_left: 0 }
 */
export function evaluateLicense(raw: unknown, options: EvaluateOptions = {}): LicenseStatus {
  const now = options.now ?? new Date();
  const document = checkDocument(raw, options.publicKey);
  if (!document.ok)
    return { licensee: '', valid_until: '', is_valid: false, reason: document.reason, days_left: null };

  const { licensee, valid_until, problem } = document;
  const days_left = daysUntil(valid_until, now);
  // Same field order in every status: {licensee, valid_until, is_valid, reason?, days_left}.
  const invalid = (reason: string): LicenseStatus => ({
    licensee,
    valid_until,
    is_valid: false,
    reason,
    days_left,
  });
  if (problem !== undefined) return invalid(problem);
  if (days_left < 0) return invalid(`license expired on ${valid_until}`);
  return { licensee, valid_until, is_valid: true, days_left };
}

/** What a license document says regardless of the date: its fields, or why it cannot be valid. */
type DocumentCheck =
  | { readonly ok: true; readonly licensee: string; readonly valid_until: string; readonly problem?: string }
  | { readonly ok: false; readonly reason: string };

let lastDocument:
  | { readonly raw: string; readonly publicKey: string | undefined; readonly check: DocumentCheck }
  | undefined;

/**
 * Parsing, the key and the signature depend only on the document text and the key, yet the
 * license is evaluated on every call: the result for the last text is kept, and only the date is
 * checked again each time.
 */
function checkDocument(raw: unknown, publicKey: string | undefined): DocumentCheck {
  if (typeof raw === 'string' && lastDocument?.raw === raw && lastDocument.publicKey === publicKey) {
    return lastDocument.check;
  }
  const check = checkDocumentUncached(raw, publicKey);
  if (typeof raw === 'string') lastDocument = { raw, publicKey, check };
  return check;
}

function checkDocumentUncached(raw: unknown, publicKey: string | undefined): DocumentCheck {
  const parsed = parseLicense(raw);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const { licensee, valid_until, signature } = parsed.license;
  if (publicKey === undefined) return { ok: true, licensee, valid_until };
  const key = parsePublicKey(publicKey);
  const problem = !key
    ? 'LICENSE_PUBLIC_KEY is not a valid Ed25519 public key'
    : signature === undefined || signature.trim() === ''
      ? 'license signature is missing'
      : !verifySignature(key, licensee, valid_until, signature)
        ? 'license signature does not verify'
        : undefined;
  return problem === undefined
    ? { ok: true, licensee, valid_until }
    : { ok: true, licensee, valid_until, problem };
}

function verifySignature(key: KeyObject, licensee: string, validUntil: string, signature: string): boolean {
  const text = signature.trim();
  if (!BASE64.test(text)) return false;
  const bytes = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
  if (bytes.length !== 64) return false;
  try {
    return verify(null, canonicalLicenseMessage(licensee, validUntil), key, bytes);
  } catch {
    return false;
  }
}

/** A fresh Ed25519 key pair for issuing licenses. */
export interface LicenseKeyPair {
  /** PKCS#8 PEM: keep it secret. */
  privateKeyPem: string;
  /** SPKI PEM. */
  publicKeyPem: string;
  /** The SPKI DER as one base64 line, the form to put in `LICENSE_PUBLIC_KEY`. */
  publicKeyBase64: string;
}

/** Creates an Ed25519 key pair for signing licenses. */
export function generateKeyPair(): LicenseKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    publicKeyBase64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  };
}

/**
 * Issues a signed license. Throws an `Error` (without key material in its message) when the
 * licensee or date is malformed or the private key is not an Ed25519 PEM private key.
 */
export function signLicense(licensee: string, validUntil: string, privateKeyPem: string): Required<License> {
  const checked = checkLicenseFields({ licensee, valid_until: validUntil });
  if (!checked.ok) throw new Error(checked.reason);
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch {
    throw new Error('the private key is not a PEM private key');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the private key is not an Ed25519 key');
  const { licensee: name, valid_until } = checked.license;
  const signature = sign(null, canonicalLicenseMessage(name, valid_until), key).toString('base64');
  return { licensee: name, valid_until, signature };
}
