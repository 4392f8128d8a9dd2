/**
 * @module core/mcp/binary-fields
 * The fields the read tools (`search_read`, `read`) ask for when the caller names none (README,
 * "Binary fields"): never a binary field's content, on any ERP version and under either reading
 * of what ERP 20 does with binaries. ERP 16-19 honour `bin_size` (the tools' default context):
 * "all fields" is safe there. On ERP 20 and later `bin_size` is reported ignored (a peer: the
 * content comes inline) or a binary reads as `{filename, size}` (odoo/odoo#266082, content only
 * with `include_binary_content`): the tools then name every field of the model but the binary
 * ones, read once from `fields_get` and kept per target, database, model and ERP version.
 */
import type { ErpVersion } from '../../upstream/erp-answer.ts';
import { majorVersion } from '../../upstream/version-client.ts';

/** The first ERP version whose binaries do not follow `bin_size` (either reading). */
const FIRST_WITHOUT_BIN_SIZE_MAJOR = 20;
/** How long the field list of one model is kept (as the version: an upgrade changes it). */
const TTL_MS = 5 * 60 * 1000;
const MAX_ENTRIES = 500;

/** What the read tools need of the ERP access (`ErpAccess`, at the policy step) to choose their fields. */
export interface FieldSource {
  version(): Promise<ErpVersion>;
  /** Which ERP and database the calls go to (a cache key; holds no key). */
  targetKey(): string;
  /** The proxy's own `fields_get` (its answer not filtered by the caller's policy: it is kept per target). */
  describe(model: string, kwargs: Record<string, unknown>): Promise<{ readonly value: unknown }>;
  /** The test of the fields of `model` the caller's policy denies (taken out of the kept list). */
  deniedFields(model: string): Promise<((field: string) => boolean) | undefined>;
}

const cache = new Map<string, { fields: readonly string[]; expires: number }>();

/** The names of the fields of a `fields_get` answer that are not binary (an image field is binary too). */
export function nonBinaryFields(description: unknown): string[] {
  if (description === null || typeof description !== 'object' || Array.isArray(description)) return [];
  return Object.entries(description as Record<string, unknown>)
    .filter(([, field]) => (field as { type?: unknown } | null)?.type !== 'binary')
    .map(([name]) => name);
}

/**
 * The `fields` a read tool sends: `given` when the caller named fields (a binary field named
 * comes back as the ERP gives it); otherwise `undefined` (every field) below ERP 20, and every
 * field but the binary ones from ERP 20 on.
 */
export async function fieldsToRead(
  erp: FieldSource,
  model: string,
  given: readonly string[] | undefined,
): Promise<readonly string[] | undefined> {
  if (given !== undefined && given.length > 0) return given;
  const version = await erp.version();
  const major = majorVersion(version);
  if (major === undefined || major < FIRST_WITHOUT_BIN_SIZE_MAJOR) return given;
  const key = `${erp.targetKey()}\n${model}\n${version.version}`;
  const cached = cache.get(key);
  const fields =
    cached && cached.expires > Date.now() ? cached.fields : await describedFields(erp, model, key);
  // The list is kept per target; each caller's denied fields are taken out after it.
  const denied = await erp.deniedFields(model);
  return denied === undefined ? fields : fields.filter((field) => !denied(field));
}

async function describedFields(erp: FieldSource, model: string, key: string): Promise<readonly string[]> {
  const fields = nonBinaryFields((await erp.describe(model, { attributes: ['type'] })).value);
  cache.delete(key);
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(key, { fields, expires: Date.now() + TTL_MS });
  return fields;
}
