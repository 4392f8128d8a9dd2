/**
 * The docs site seen in a real browser (issue 46): the built site (test/support/docs-site.ts builds
 * it when stale) served on 127.0.0.1, opened page by page in Debian's headless Chromium driven by
 * playwright-core (`executablePath`: no browser is ever downloaded). Every page renders its content
 * with no console error and no uncaught exception, the local search finds `Idempotency-Key` and
 * `ERP_TARGET_LIMITS`, and the Mermaid picture of a call's path is drawn as an SVG.
 *
 * Chromium is `/usr/bin/chromium` (`apt-get install -y chromium`; `.ci/run` installs it), or
 * `CHROMIUM_PATH`. Without it the file is skipped with a message, except under CI (`CI=true`),
 * where a missing browser fails.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSiteBuilt, serveSite, sitePagePaths } from '../support/docs-site.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/** The flags the browser runs with: headless, as root (no sandbox), and nothing that calls out. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

if (!HAVE_CHROMIUM && !IN_CI) {
  console.warn(
    `docs-site browser test skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
  );
}

describe('the docs site in headless Chromium', () => {
  it.runIf(IN_CI)('has Chromium under CI', () => {
    expect(HAVE_CHROMIUM, `no Chromium at ${CHROMIUM}: .ci/run installs Debian's chromium`).toBe(true);
  });
});

describe.runIf(HAVE_CHROMIUM)('the docs site in headless Chromium', () => {
  let site: { url: string; close: () => Promise<void> } | undefined;
  let context: BrowserContext | undefined;
  let profile = '';

  beforeAll(async () => {
    ensureSiteBuilt();
    site = await serveSite();
    profile = mkdtempSync(join(tmpdir(), 'erp-proxy-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      env: { ...process.env, TMPDIR: profile },
    });
  }, 600_000);

  afterAll(async () => {
    await context?.close();
    await site?.close();
    if (profile !== '') rmSync(profile, { recursive: true, force: true });
  });

  /** Opens `path` in a new tab; the console errors and uncaught exceptions it meets are collected. */
  async function open(path: string): Promise<{ page: Page; errors: string[] }> {
    if (context === undefined || site === undefined) throw new Error('the browser did not start');
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`HTTP ${response.status()}: ${response.url()}`);
    });
    const response = await page.goto(`${site.url}${path}`, { waitUntil: 'networkidle' });
    expect(response?.status(), path).toBe(200);
    return { page, errors };
  }

  it('renders every page, with its one first-level heading and no console error', async () => {
    const paths = sitePagePaths();
    expect(paths.length).toBeGreaterThanOrEqual(20);
    const problems: string[] = [];
    for (const path of paths) {
      const { page, errors } = await open(path);
      const headings = await page.locator('.vp-doc h1').allTextContents();
      if (headings.length !== 1 || (headings[0] ?? '').trim() === '') {
        problems.push(`${path}: ${headings.length} first-level headings, not one`);
      }
      problems.push(...errors.map((error) => `${path}: ${error}`));
      await page.close();
    }
    expect(problems).toEqual([]);
  }, 600_000);

  it("draws the Mermaid picture of a call's path on the home page", async () => {
    const { page, errors } = await open('/');
    const svg = page.locator('.mermaid svg').first();
    await svg.waitFor({ state: 'attached', timeout: 30_000 });
    const text = (await svg.textContent()) ?? '';
    for (const step of ['route and key/token', 'idempotency lookup', 'limits', 'ERP'])
      expect(text).toContain(step);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it.each(['Idempotency-Key', 'ERP_TARGET_LIMITS'])(
    'finds %s with the local search',
    async (term) => {
      const { page, errors } = await open('/');
      await page.locator('.DocSearch-Button').first().click();
      const input = page.locator('#localsearch-input');
      await input.waitFor({ state: 'visible', timeout: 30_000 });
      await input.fill(term);
      const results = page.locator('.results .result');
      await results.first().waitFor({ state: 'visible', timeout: 30_000 });
      expect(await results.count()).toBeGreaterThan(0);
      expect((await results.allTextContents()).join('\n')).toContain(term);
      expect(errors).toEqual([]);
      await page.close();
    },
    120_000,
  );
});
