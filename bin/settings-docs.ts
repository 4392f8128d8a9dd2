/**
 * `npm run docs:settings`: writes the configuration tables of docs/reference/configuration.md and docs/deployment.md
 * from the settings catalogue (lib/settings-docs.ts). `-- --check` only compares, and fails when a
 * committed table is out of date (test/infra/settings-catalogue.test.ts does the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GENERATED_TABLES, withTable } from '../lib/settings-docs.ts';

function main(argv: readonly string[]): number {
  let stale = 0;
  for (const table of GENERATED_TABLES) {
    const path = fileURLToPath(new URL(`../${table.file}`, import.meta.url));
    const committed = readFileSync(path, 'utf8');
    const rendered = withTable(committed, table);
    if (rendered === committed) continue;
    if (argv.includes('--check')) {
      process.stderr.write(
        `${table.file}: the "${table.id}" settings table is out of date: run npm run docs:settings\n`,
      );
      stale += 1;
    } else {
      writeFileSync(path, rendered);
      process.stdout.write(`wrote the "${table.id}" settings table of ${table.file}\n`);
    }
  }
  return stale === 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
