/**
 * The built docs site for the browser test (test/browser/docs-site.test.ts): built with
 * `npm run docs:build` when `docs/.vitepress/dist/` is missing or older than any file the site is
 * made from (.ci/run builds it just before the tests, so there it is fresh), and served read-only
 * on 127.0.0.1 by a small static server (any free port), as `vitepress preview` would serve it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SITE_DIR = join(ROOT, 'docs', '.vitepress', 'dist');

/** The files the site is made from: docs/ (its build folders left out) and the files it includes. */
function sourceFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter(
      (path) => !path.startsWith(join('.vitepress', 'dist')) && !path.startsWith(join('.vitepress', 'cache')),
    )
    .map((path) => join(ROOT, 'docs', path));
  const included = ['README.md', 'CHANGELOG.md', 'BENCHMARKS.md', 'client/README.md'].map((path) =>
    join(ROOT, path),
  );
  return [...docs, ...included].filter((path) => statSync(path).isFile());
}

/** Whether the built site is older than a file it is made from (or missing). */
export function siteIsStale(): boolean {
  const index = join(SITE_DIR, 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return sourceFiles().some((path) => statSync(path).mtimeMs > built);
}

/** Builds the site when it is stale (`npm run docs:build`, which fails on a dead link). */
export function ensureSiteBuilt(): void {
  if (!siteIsStale()) return;
  execFileSync('npm', ['run', '-s', 'docs:build'], { cwd: ROOT, stdio: 'pipe', encoding: 'utf8' });
}

/** The site's pages, as URL paths (`/guide/limits.html`), the 404 page left out. */
export function sitePagePaths(): string[] {
  return readdirSync(SITE_DIR, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.html') && path !== '404.html')
    .map((path) => `/${path.split(sep).join('/')}`)
    .sort();
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Serves `dir` on 127.0.0.1 (a free port); `/` is `index.html`, a path without extension its `.html`. */
export async function serveSite(dir = SITE_DIR): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname);
    const wanted = path.endsWith('/') ? `${path}index.html` : extname(path) === '' ? `${path}.html` : path;
    const file = normalize(join(dir, wanted));
    if (!file.startsWith(dir + sep) || !existsSync(file) || !statSync(file).isFile()) {
      response.writeHead(404, { 'content-type': TYPES['.html'] });
      response.end(existsSync(join(dir, '404.html')) ? readFileSync(join(dir, '404.html')) : 'Not Found');
      return;
    }
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    response.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
