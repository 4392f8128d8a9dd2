/**
 * @module platform/audit/seal-archive-dir
 * A local run's sealed windows (`AUDIT_DIR`, docs/guide/audit.md, "Locally"): the bucket's layout
 * (seal-layout.ts) as files. An object is written to a temporary file and linked to its key, which
 * fails where a file is (so a window is created once, whole, by one sealer); files are read-only
 * (mode 0444). A directory has no versions and no Object Lock: whoever can write it can change a
 * file, which `verify` then names by its hash and signature.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { type ArchivedObject, type SealArchive, SealArchiveError } from './seal-archive.ts';

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

export class DirectorySealArchive implements SealArchive {
  readonly locks = false;

  constructor(readonly where: string) {}

  #path(key: string): string {
    if (key.split('/').some((part) => part === '..' || part === '')) {
      throw new SealArchiveError(`not an archive key: ${key}`);
    }
    return join(this.where, ...key.split('/'));
  }

  /** No lock: a directory has none (`lockUntil` is the bucket's). */
  async create(key: string, body: Buffer, _lockUntil?: Date): Promise<'written' | 'exists'> {
    const path = this.#path(key);
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(temporary, body, { mode: 0o444, flag: 'wx' });
      try {
        await link(temporary, path);
        return 'written';
      } catch (error) {
        if (code(error) === 'EEXIST') return 'exists';
        throw error;
      }
    } catch (error) {
      throw new SealArchiveError(`cannot write ${key} in ${this.where}: ${(error as Error).message}`, {
        cause: error,
      });
    } finally {
      await unlink(temporary).catch(() => undefined);
    }
  }

  async read(key: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.#path(key));
    } catch (error) {
      if (code(error) === 'ENOENT') return undefined;
      throw new SealArchiveError(`cannot read ${key} in ${this.where}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  async list(prefix: string): Promise<ArchivedObject[]> {
    const base = join(this.where, ...prefix.split('/').filter((part) => part !== ''));
    let entries: string[];
    try {
      entries = (await readdir(base, { recursive: true, withFileTypes: true }))
        .filter((entry) => entry.isFile() && !entry.name.endsWith('.tmp'))
        .map((entry) => join(entry.parentPath, entry.name));
    } catch (error) {
      if (code(error) === 'ENOENT') return [];
      throw new SealArchiveError(`cannot list ${prefix} in ${this.where}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return entries
      .map((path) => relative(this.where, path).split(sep).join('/'))
      .sort()
      .map((key) => ({ key, versions: 1, deleted: false }));
  }
}
