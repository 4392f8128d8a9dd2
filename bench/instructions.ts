/**
 * @module bench/instructions
 * Cold starts counted in instructions (`npm run bench -- --instructions`): each
 * function's fresh process, the same import and first invocation as the timed cold-start rows
 * (bench/cold-start.ts), run on the pinned Node 24 under valgrind's callgrind, which counts every
 * instruction the process executes, in every thread.
 *
 * Why: this VM's speed moves the timed rows by tens of percent from one minute to the next (its
 * speed reference read 160 ms at its lowest in three sessions, never the 110 ms at which the budgets
 * are judged). An instruction count does not move with the machine: the same bundle, event and
 * Node give the same count, to within about 1% (1.24% the widest seen for a bundle, 0.001% for a
 * process without I/O), whatever else runs. To get there the process runs
 * with V8 on one thread (`--single-threaded`: no background compiler or collector threads, whose
 * share would vary), fixed hash and random seeds, and no address randomization (`setarch -R`); what
 * is left to vary is the event loop's timing around the ERP request.
 *
 * It is not a time. Cache misses, page faults, the file reads and the kernel's work are not in it,
 * and an instruction of the parser costs less than one of the garbage collector: so no budget is
 * judged on it. It says whether a change makes a cold start do more work or less, and how much,
 * where a timed comparison on this VM needs many rounds to see a few percent.
 *
 * `--state-table` gives every process the state table as deployed (`STATE_TABLE`, on a DynamoDB
 * Local this run starts; Java needed): each function then reads the operators' brakes on its first
 * call (issue 58), so the count includes the brakes' DynamoDB client (its module's initialisation,
 * the client, the request's signing and the answer) and one read, as a deployed cold start does.
 * Without it the store is `none` in Lambda mode: the bundles carry the client but never run it.
 * Before the runs, one counted process of this tree's version bundle against a table holding a
 * brake on every call must be refused (-32012): the read completes under callgrind within its own
 * time limit, rather than failing open.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrakesStore } from '../lambdas/platform/brakes/brakes-source.ts';
import { createBrakesStore } from '../lambdas/platform/brakes/brakes-store.ts';
import { loadConfig } from '../lambdas/platform/config.ts';
import type { FunctionName } from '../lambdas/platform/routes.ts';
import {
  createStateTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  stateTableEnv,
} from '../test/support/dynamodb-local.ts';
import {
  BARE_READY,
  type BenchNode,
  BUNDLE_DIR,
  benchNodes,
  buildBundles,
  buildTreeBundles,
  CHILD,
  FUNCTIONS,
  functionEvents,
  lambdaModeEnv,
  spawnReporting,
  treeCommit,
} from './cold-start.ts';
import { benchBrake, isGoodAnswer } from './fixtures.ts';
import { median, progress } from './stats.ts';
import { startSmallUpstream } from './upstreams.ts';

/** valgrind's options: callgrind counting every instruction, writing only its summary (to the log). */
export const CALLGRIND_OPTIONS = Object.freeze([
  '--tool=callgrind',
  '--callgrind-out-file=/dev/null',
  // V8 writes machine code into memory it then runs: valgrind must see those writes.
  '--smc-check=all-non-file',
]);

/** Node and V8 flags that make a process do the same work from one run to the next. */
export const REPEATABLE_NODE_FLAGS = Object.freeze(['--single-threaded', '--hash-seed=1', '--random-seed=1']);

/** The instructions callgrind's summary says the process executed (`==123== Collected : 93823031`). */
export function collectedInstructions(log: string): number {
  const found = /^==\d+== Collected : (\d+)\s*$/m.exec(log);
  if (found === null) {
    throw new Error(`no "Collected" line in valgrind's log: ${log.trim().split('\n').slice(-5).join(' | ')}`);
  }
  return Number(found[1]);
}

/** The command that runs `node args` under callgrind, its log going to `logFile`. */
export function instructionCommand(
  node: string,
  args: readonly string[],
  logFile: string,
): { readonly file: string; readonly args: readonly string[] } {
  return {
    file: 'setarch',
    args: [
      '-R',
      'valgrind',
      ...CALLGRIND_OPTIONS,
      `--log-file=${logFile}`,
      node,
      ...REPEATABLE_NODE_FLAGS,
      ...args,
    ],
  };
}

/** One process's count and the JSON object it wrote to fd 3. */
export interface CountedProcess {
  readonly instructions: number;
  readonly report: Record<string, unknown>;
}

/**
 * Runs `node args` under callgrind (see the module header). The process must write one JSON object
 * to fd 3 and exit 0; its stderr and valgrind's log are kept for the error when it does not.
 */
export async function countInstructions(
  node: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<CountedProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-callgrind-'));
  try {
    const logFile = join(dir, 'valgrind.log');
    const command = instructionCommand(node, args, logFile);
    const run = await spawnReporting(command.file, command.args, env, 'pipe');
    // valgrind writes its own failures to its log, not to stderr.
    const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    const what = `node ${args.join(' ').slice(0, 120)} under callgrind`;
    if (run.code !== 0) {
      const said = `${run.stderr.trim()}\n${log.trim().split('\n').slice(-5).join('\n')}`.trim();
      throw new Error(`${what} exited with ${run.code ?? run.signal}: ${said.slice(-800)}`);
    }
    const instructions = collectedInstructions(log);
    let report: Record<string, unknown>;
    try {
      report = JSON.parse(run.report) as Record<string, unknown>;
    } catch {
      throw new Error(`${what}: no report on fd 3 (${run.report.slice(0, 200)})`);
    }
    return { instructions, report };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether valgrind and `setarch -R` can run here; otherwise what to install or allow. */
export function instructionCountingProblem(): string | undefined {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    return "valgrind not found: counting instructions needs Debian's valgrind (apt-get install valgrind)";
  }
  try {
    // A container's seccomp profile may refuse turning address randomization off.
    execFileSync('setarch', ['-R', 'true'], { stdio: 'ignore' });
  } catch {
    return "setarch -R failed: counting instructions needs util-linux's setarch and leave to turn address randomization off";
  }
  return undefined;
}

/** Millions of instructions, one decimal. */
const millions = (count: number) => `${(count / 1e6).toFixed(1)} M`;

/** One function's counts: this tree's, and the before tree's when one was given. */
export interface InstructionRow {
  readonly fn: FunctionName;
  /** Median over the runs, minus bare node's median. */
  readonly instructions: number;
  /** Every run's count, minus bare node's median. */
  readonly runs: readonly number[];
  readonly before?: { readonly instructions: number; readonly runs: readonly number[] };
}

export interface InstructionResult {
  readonly node: BenchNode;
  readonly runs: number;
  /** A bare node's count (median): it starts and runs its first line of ES module code. */
  readonly bare: number;
  readonly rows: readonly InstructionRow[];
  /** The before tree (`--before`): its directory and commit. */
  readonly before?: { readonly tree: string; readonly commit: string };
  /** `--state-table`: every process had the state table (DynamoDB Local), as deployed. */
  readonly stateTable?: true;
}

/**
 * Counts each function's cold start on the pinned Node 24, `runs` times (and the before tree's,
 * right after this tree's, with this tree's events), and a bare node's. Each answer must be the
 * good one, as in the timed rows.
 */
export async function measureInstructions(options: {
  readonly runs: number;
  readonly before?: string;
  /** Give every process the state table on a DynamoDB Local (`--state-table`). */
  readonly stateTable?: boolean;
}): Promise<InstructionResult> {
  const problem = instructionCountingProblem();
  if (problem !== undefined) throw new Error(problem);
  const node = benchNodes().find((candidate) => candidate.role === 'lambda');
  if (node === undefined) throw new Error('the pinned Node 24 is missing');
  progress(`  Node ${node.version} ${node.arch}, under callgrind (V8 single-threaded)`);
  const bundles = await buildBundles();
  const beforeBundles =
    options.before === undefined
      ? undefined
      : buildTreeBundles(options.before, join(BUNDLE_DIR, 'before'), FUNCTIONS);
  const upstream = await startSmallUpstream();
  const dynamo = options.stateTable ? await startDynamoDbLocal() : undefined;
  try {
    const env = { ...lambdaModeEnv(), ...(dynamo === undefined ? {} : await stateTable(dynamo, 'no brake')) };
    const events = functionEvents(upstream.url);
    const count = async (what: string, fn: FunctionName, bundle: string): Promise<number> => {
      const { instructions, report } = await countInstructions(
        node.path,
        [CHILD, bundle, events[fn], fn],
        env,
      );
      const statusCode = Number(report.statusCode);
      const body = String(report.body);
      if (!isGoodAnswer(fn, statusCode, body)) {
        throw new Error(`${what} ${fn}: unexpected answer ${statusCode} ${body}`);
      }
      return instructions;
    };
    if (dynamo !== undefined) {
      progress(
        '  the state table on DynamoDB Local: checking that a brake read under callgrind stops a call',
      );
      const stopped = await countInstructions(
        node.path,
        [CHILD, bundles.version, events.version, 'version'],
        { ...lambdaModeEnv(), ...(await stateTable(dynamo, 'a brake on every call')) },
      );
      if (!String(stopped.report.body).includes('-32012')) {
        throw new Error(
          `the version bundle under callgrind, a brake on every call: not refused (${String(stopped.report.statusCode)} ${String(stopped.report.body)}); its read of the brakes failed or timed out`,
        );
      }
    }
    const bare: number[] = [];
    const mine = new Map<FunctionName, number[]>();
    const theirs = new Map<FunctionName, number[]>();
    for (let run = 0; run < options.runs; run++) {
      progress(`  run ${run + 1}/${options.runs}: bare node and ${FUNCTIONS.length} functions`);
      bare.push(
        (await countInstructions(node.path, ['--input-type=module', '-e', BARE_READY], env)).instructions,
      );
      for (const fn of FUNCTIONS) {
        const own = await count('this tree', fn, bundles[fn]);
        mine.set(fn, [...(mine.get(fn) ?? []), own]);
        const before = beforeBundles?.[fn];
        const other = before === undefined ? undefined : await count('before', fn, before);
        if (other !== undefined) theirs.set(fn, [...(theirs.get(fn) ?? []), other]);
        progress(
          `    ${fn}: ${millions(own)}${other === undefined ? '' : ` (before: ${millions(other)})`}, bare node included`,
        );
      }
    }
    const bareMedian = median(bare);
    const overBare = (counts: readonly number[]) => counts.map((value) => value - bareMedian);
    return {
      node,
      runs: options.runs,
      bare: bareMedian,
      rows: FUNCTIONS.map((fn): InstructionRow => {
        const own = overBare(mine.get(fn) ?? []);
        const other = theirs.get(fn);
        return {
          fn,
          instructions: median(own),
          runs: own,
          ...(other === undefined
            ? {}
            : { before: { instructions: median(overBare(other)), runs: overBare(other) } }),
        };
      }),
      ...(options.before === undefined
        ? {}
        : { before: { tree: options.before, commit: treeCommit(options.before) } }),
      ...(dynamo === undefined ? {} : { stateTable: true as const }),
    };
  } finally {
    await upstream.close();
    await dynamo?.stop();
  }
}

/** A fresh state table on `dynamo`, with no brake or with one on every call, and the settings naming it. */
async function stateTable(
  dynamo: DynamoDbLocal,
  brakes: 'no brake' | 'a brake on every call',
): Promise<Record<string, string>> {
  const env = stateTableEnv(dynamo.endpoint, await createStateTable(dynamo.endpoint, 'bench-instructions'));
  if (brakes === 'a brake on every call') {
    const store = createBrakesStore(loadConfig(env)) as BrakesStore;
    await store.write([benchBrake('brk-bench-all', 'all', 'all')], 0);
  }
  return env;
}

/** How far apart a row's runs were, as a share of their median. */
export function spread(runs: readonly number[]): string {
  if (runs.length < 2) return '—';
  const middle = median(runs);
  return `${(((Math.max(...runs) - Math.min(...runs)) / middle) * 100).toFixed(2)}%`;
}

/** The counts as a Markdown table, with the before tree's beside them when there is one. */
export function instructionTable(result: InstructionResult): string {
  const before = result.before;
  const header = [
    'function',
    `this tree, over bare node (median of ${result.runs})`,
    'spread',
    ...(before === undefined ? [] : [`before (${before.commit})`, 'spread', 'difference']),
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of result.rows) {
    const cells = [row.fn, millions(row.instructions), spread(row.runs)];
    if (before !== undefined) {
      cells.push(
        ...(row.before === undefined
          ? ['—', '—', '—']
          : [
              millions(row.before.instructions),
              spread(row.before.runs),
              `${row.instructions >= row.before.instructions ? '+' : ''}${(((row.instructions - row.before.instructions) / row.before.instructions) * 100).toFixed(1)}%`,
            ]),
      );
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return [
    `Instructions of a cold start (import + first invocation) on Node ${result.node.version} ${result.node.arch}, ` +
      `counted by callgrind (V8 single-threaded); a bare node: ${millions(result.bare)}.` +
      (result.stateTable
        ? ' Every process had the state table (DynamoDB Local), as deployed: the first call reads the brakes.'
        : ''),
    '',
    ...lines,
    '',
    'A count, not a time: no budget is judged on it (bench/instructions.ts says why).',
  ].join('\n');
}
