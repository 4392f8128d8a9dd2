/**
 * Handler overhead of two trees, side by side in one run: `npm run bench:trees -- <before> <after>`
 * (two checkouts of this repository, each with its node_modules; a worktree of an older commit,
 * say). Each turn runs `measureHandlerOverhead` (bench/handler-overhead.ts) of each tree in a fresh
 * process, the trees taking turns, so a slow spell of the machine hits both alike; it prints each
 * turn's medians and, per case, the median of the turns' medians and their difference. Nothing is
 * written to BENCHMARKS.md: copy the rows where they belong.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './stats.ts';

const MARK = 'OVERHEAD-ROWS ';

interface TreeRow {
  readonly label: string;
  readonly medianMs: number;
}

/** One measurement of `tree`, in a process of its own started in that tree. */
function measure(tree: string, iterations: number): TreeRow[] {
  const module = pathToFileURL(resolve(tree, 'bench/handler-overhead.ts')).href;
  const script = `
    const { measureHandlerOverhead } = await import(${JSON.stringify(module)});
    const result = await measureHandlerOverhead({ warmup: 500, iterations: ${iterations} });
    process.stdout.write(${JSON.stringify(MARK)} + JSON.stringify(result.rows.map((r) => ({ label: r.label, medianMs: r.medianMs }))) + '\\n');
    process.exit(0);`;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: tree,
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = output.split('\n').find((text) => text.startsWith(MARK));
  if (line === undefined) throw new Error(`${tree}: no measurement printed`);
  return JSON.parse(line.slice(MARK.length)) as TreeRow[];
}

function main(): void {
  const args = process.argv.slice(2).filter((arg) => arg !== '--');
  const turnsAt = args.indexOf('--turns');
  const turns = turnsAt === -1 ? 4 : Number(args[turnsAt + 1]);
  const trees = turnsAt === -1 ? args : [...args.slice(0, turnsAt), ...args.slice(turnsAt + 2)];
  if (trees.length !== 2 || !Number.isInteger(turns) || turns < 1) {
    process.stderr.write('usage: npm run bench:trees -- <before-tree> <after-tree> [--turns N]\n');
    process.exit(2);
  }
  const [before, after] = trees as [string, string];
  const samples = new Map<string, { before: number[]; after: number[] }>();
  for (let turn = 1; turn <= turns; turn++) {
    for (const [side, tree] of [
      ['before', before],
      ['after', after],
    ] as const) {
      for (const row of measure(tree, 3000)) {
        const entry = samples.get(row.label) ?? { before: [], after: [] };
        entry[side].push(row.medianMs);
        samples.set(row.label, entry);
      }
      process.stderr.write(`turn ${turn}/${turns}: ${side} measured\n`);
    }
  }
  process.stdout.write(
    `\n| case | ${before} (medians, ms) | ${after} (medians, ms) | difference of the medians |\n|---|---|---|---|\n`,
  );
  for (const [label, entry] of samples) {
    const difference = median(entry.after) - median(entry.before);
    const list = (values: number[]) => values.map((value) => value.toFixed(3)).join(', ');
    process.stdout.write(
      `| ${label} | ${list(entry.before)} | ${list(entry.after)} | ${difference >= 0 ? '+' : ''}${difference.toFixed(3)} ms |\n`,
    );
  }
}

main();
