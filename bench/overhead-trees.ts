/**
 * Handler overhead of two trees, side by side in one run: `npm run bench:trees -- <before> <after>`
 * (two checkouts of this repository, each with its node_modules; a worktree of an older commit,
 * say). Each turn runs `measureHandlerOverhead` (bench/handler-overhead.ts) of each tree in a fresh
 * process, the trees taking turns, so a slow spell of the machine hits both alike; it prints each
 * turn's medians and, per case, the median of the turns' medians and their difference. Nothing is
 * written to BENCHMARKS.md: copy the rows where they belong.
 *
 * `--key-policies` measures `measureKeyPolicyOverhead` (bench/key-policy-overhead.ts) instead, and
 * pairs the newer tree's row of 25 policies with the rules that read a call (the caller's without)
 * with the older tree's row of 25 policies: what a key without such a rule pays for them (issue 48).
 * With `--one-process` too, both trees' handlers are loaded into this one process (the older
 * tree's modules from its own files and node_modules) and take turns in ABBA blocks over many
 * rounds, as the variants of one tree do: the machine's drift from one process to the next, which
 * on a shared VM is larger than the differences looked for, is out of the comparison.
 *
 * `--mcp` measures the mcp function's handler instead (bench/mcp-overhead.ts), both trees in this
 * one process in ABBA blocks: a `tools/call` by a key without a policy and by one with a rule.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  KEY_POLICY_CASES,
  KEY_POLICY_VARIANTS,
  type KeysMode,
  measureKeyPolicyOverhead,
  treeModules,
  variant,
} from './key-policy-overhead.ts';
import { measureMcpOverhead } from './mcp-overhead.ts';
import { median, speedReference } from './stats.ts';
import { printResult, runInTree } from './trees.ts';

interface TreeRow {
  readonly label: string;
  readonly medianMs: number;
}

/** What each tree measures: the handler overhead, or the key policies' rows. */
type Part = 'overhead' | 'key-policies';

/** One measurement of `tree`, in a process of its own started in that tree. */
function measure(tree: string, iterations: number, part: Part): TreeRow[] {
  const file = part === 'overhead' ? 'bench/handler-overhead.ts' : 'bench/key-policy-overhead.ts';
  const module = pathToFileURL(resolve(tree, file)).href;
  const call =
    part === 'overhead'
      ? `(await measureHandlerOverhead({ warmup: 500, iterations: ${iterations} })).rows`
      : `await measureKeyPolicyOverhead({ warmup: 300, iterations: ${iterations} })`;
  const script = `
    const { measureHandlerOverhead, measureKeyPolicyOverhead } = await import(${JSON.stringify(module)});
    const rows = ${call};
    ${printResult('rows.map((r) => ({ label: r.label, medianMs: r.medianMs }))')}`;
  return runInTree(tree, script, 'no measurement printed') as TreeRow[];
}

/** Both trees' key-policy variants in this one process, many rounds of ABBA blocks. */
async function oneProcess(before: string, after: string, turns: number): Promise<void> {
  const older = await treeModules(before);
  const speedBefore = speedReference();
  const rows = await measureKeyPolicyOverhead(
    { warmup: 500, iterations: 1000 * turns, rounds: 6 * turns },
    () => [
      variant('none', older, 'before'),
      variant('policies', older, 'before'),
      variant('none'),
      variant('policies'),
      variant('rules'),
    ],
  );
  process.stdout.write(
    `\nspeed reference ${speedBefore.toFixed(0)} ms before, ${speedReference().toFixed(0)} ms after\n`,
  );
  const medianOf = (label: string): number | undefined => rows.find((row) => row.label === label)?.medianMs;
  process.stdout.write(`\n| case | ${before} | ${after} | difference of the medians |\n|---|---|---|---|\n`);
  const pairs: readonly (readonly [KeysMode, KeysMode])[] = [
    ['none', 'none'],
    ['policies', 'policies'],
    ['policies', 'rules'],
  ];
  for (const { label: caseLabel } of KEY_POLICY_CASES) {
    for (const [olderMode, newerMode] of pairs) {
      const old = medianOf(`${caseLabel}, before: ${KEY_POLICY_VARIANTS[olderMode]}`);
      const now = medianOf(`${caseLabel}, ${KEY_POLICY_VARIANTS[newerMode]}`);
      if (old === undefined || now === undefined) continue;
      process.stdout.write(
        `| ${caseLabel}: ${KEY_POLICY_VARIANTS[olderMode]} → ${KEY_POLICY_VARIANTS[newerMode]} | ${old.toFixed(3)} ms | ${now.toFixed(3)} ms | ${signed(now - old)} |\n`,
      );
    }
  }
}

/** Both trees' mcp handlers in this one process (bench/mcp-overhead.ts). */
async function mcpTrees(before: string, after: string, turns: number): Promise<void> {
  const speedBefore = speedReference();
  const rows = await measureMcpOverhead([before, after], {
    warmup: 300,
    iterations: 1000 * turns,
    rounds: 6 * turns,
  });
  process.stdout.write(
    `\nspeed reference ${speedBefore.toFixed(0)} ms before, ${speedReference().toFixed(0)} ms after\n`,
  );
  process.stdout.write(`\n| case | ${before} | ${after} | difference of the medians |\n|---|---|---|---|\n`);
  for (const label of new Set(rows.map((row) => row.label))) {
    const old = rows.find((row) => row.label === label && row.tree === before)?.medianMs;
    const now = rows.find((row) => row.label === label && row.tree === after)?.medianMs;
    if (old === undefined || now === undefined) continue;
    process.stdout.write(
      `| ${label} | ${old.toFixed(3)} ms | ${now.toFixed(3)} ms | ${signed(now - old)} |\n`,
    );
  }
}

async function main(): Promise<void> {
  const part: Part = process.argv.includes('--key-policies') ? 'key-policies' : 'overhead';
  const inOneProcess = process.argv.includes('--one-process');
  const args = process.argv
    .slice(2)
    .filter((arg) => !['--', '--key-policies', '--one-process', '--mcp'].includes(arg));
  const turnsAt = args.indexOf('--turns');
  const turns = turnsAt === -1 ? 4 : Number(args[turnsAt + 1]);
  const trees = turnsAt === -1 ? args : [...args.slice(0, turnsAt), ...args.slice(turnsAt + 2)];
  if (trees.length !== 2 || !Number.isInteger(turns) || turns < 1) {
    process.stderr.write(
      'usage: npm run bench:trees -- <before-tree> <after-tree> [--turns N] [--key-policies [--one-process] | --mcp]\n',
    );
    process.exit(2);
  }
  const [before, after] = trees as [string, string];
  if (process.argv.includes('--mcp')) {
    await mcpTrees(before, after, turns);
    process.exit(0);
  }
  if (inOneProcess) {
    if (part !== 'key-policies') {
      process.stderr.write('--one-process goes with --key-policies\n');
      process.exit(2);
    }
    await oneProcess(before, after, turns);
    process.exit(0);
  }
  const samples = new Map<string, { before: number[]; after: number[] }>();
  for (let turn = 1; turn <= turns; turn++) {
    for (const [side, tree] of [
      ['before', before],
      ['after', after],
    ] as const) {
      for (const row of measure(tree, part === 'overhead' ? 3000 : 1500, part)) {
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
    // A row only the newer tree has (a variant the older one does not know): no difference.
    const difference = entry.before.length === 0 ? undefined : median(entry.after) - median(entry.before);
    const list = (values: number[]) => values.map((value) => value.toFixed(3)).join(', ');
    process.stdout.write(
      `| ${label} | ${list(entry.before)} | ${list(entry.after)} | ${difference === undefined ? '—' : signed(difference)} |\n`,
    );
  }
  if (part === 'key-policies') pairRules(samples, before, after);
}

const signed = (ms: number): string => `${ms >= 0 ? '+' : ''}${ms.toFixed(3)} ms`;

/**
 * The newer tree's rows of keys with the rules that read a call, each beside the older tree's row
 * of the same keys with policies only: the caller's key has no such rule, so it should pay nothing.
 */
function pairRules(
  samples: ReadonlyMap<string, { before: number[]; after: number[] }>,
  before: string,
  after: string,
): void {
  process.stdout.write(
    `\n| case | ${before}: ${KEY_POLICY_VARIANTS.policies} | ${after}: ${KEY_POLICY_VARIANTS.rules} | difference of the medians |\n|---|---|---|---|\n`,
  );
  for (const [label, entry] of samples) {
    if (!label.endsWith(`, ${KEY_POLICY_VARIANTS.rules}`)) continue;
    const base = samples.get(label.replace(KEY_POLICY_VARIANTS.rules, KEY_POLICY_VARIANTS.policies));
    if (base === undefined || base.before.length === 0) continue;
    const caseName = label.slice(0, -`, ${KEY_POLICY_VARIANTS.rules}`.length);
    const older = median(base.before);
    const newer = median(entry.after);
    process.stdout.write(
      `| ${caseName} | ${older.toFixed(3)} ms | ${newer.toFixed(3)} ms | ${signed(newer - older)} |\n`,
    );
  }
}

await main();
