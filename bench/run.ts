/**
 * `npm run bench -- --cold-start` runs only the cold-start part (cold starts and first calls with
 * secrets on the pinned Node 24 and on this machine's Node), prints its rows and writes nothing;
 * `--runs N` sets its rounds (and those of `--idempotency`), `--wait-quiet <minutes>` first waits up
 * to that long for a speed reference at which the budgets are judged, `--before <dir>` also times the
 * bundles of an older checkout (its own node_modules and esbuild settings) on Node 24; `--import-profile` only the CPU
 * profile of each bundle's import (where import time goes), printed the same way; `--body-parse`
 * only the body step with `@middy/http-json-body-parser` against the scanner alone;
 * `--instructions` each function's cold start counted in instructions under callgrind, not timed
 * (bench/instructions.ts; `--runs`, 3 by default, and `--before` as for `--cold-start`; `--state-table`
 * with the state table on DynamoDB Local, as deployed); `--audit` the
 * audit's cost on a write (bench/audit.ts: `AUDIT=off`, the embedded ring and DynamoDB Local, side by side);
 * `--brakes` the brakes' cost (bench/brakes-overhead.ts: warm calls with a fresh copy and with a read
 * on every call, and a cold instance's first call with the state table; `--runs`, 9 by default).
 *
 * `npm run bench`: measures the proxy's cost (handler overhead, end to end over loopback, cold
 * start and bundle size, large answers), prints one table with each budget met or not, and
 * writes it to BENCHMARKS.md with the machine description and the date, keeping the sections
 * written there by hand (the side-by-side runs of past issues) after its own. About 3.5 minutes
 * on 2 cores (the cold-start rounds run on two Nodes: the second adds about a minute). Not part of
 * `npm test`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentSizes } from '../bin/bundle-sizes.ts';
import { auditRows, measureAudit } from './audit.ts';
import { measureBodyParse } from './body-parse.ts';
import { BRAKES_FIRST_CALL_RUNS, measureBrakesFirstCalls, measureBrakesOverhead } from './brakes-overhead.ts';
import { BUNDLE_DIR, FUNCTIONS, lambdaModeEnv, measureColdStart } from './cold-start.ts';
import { measureEndToEnd } from './end-to-end.ts';
import { measureHandlerOverhead } from './handler-overhead.ts';
import { IDEMPOTENCY_RUNS, measureIdempotency } from './idempotency.ts';
import { profileImports, timeTopLevel } from './import-profile.ts';
import { instructionTable, measureInstructions } from './instructions.ts';
import { KEY_COUNT, KEYS_WITH_POLICIES, measureKeyPolicyOverhead } from './key-policy-overhead.ts';
import { measureLargeAnswers } from './large-answers.ts';
import { measureLimitsOverhead } from './limits-overhead.ts';
import { liveTarget, measureProtocolBridge } from './protocol-bridge.ts';
import {
  allRows,
  BUDGETS,
  bodyParseRows,
  brakesFirstCallRows,
  brakesRows,
  coldStartFootnote,
  coldStartRows,
  idempotencyRows,
  importProfileTable,
  keepingHandSections,
  keyPolicyRows,
  limitsRows,
  machine,
  type Results,
  renderMarkdown,
  renderTable,
  summary,
  topLevelTable,
} from './report.ts';
import { progress, speedReference, waitForQuietSpell } from './stats.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const OVERHEAD = { warmup: 500, iterations: 3000 };
/** Per case and runtime (two runtimes, three cases). */
const KEY_POLICY_OVERHEAD = { warmup: 300, iterations: 3000 };
/** Per runtime (three runtimes: no limits, limits for others, limited against DynamoDB Local). */
const LIMITS_OVERHEAD = { warmup: 100, iterations: 1200 };
/**
 * Per runtime (five runtimes: no brakes, two fresh copies, a read on every call embedded and on
 * DynamoDB Local), then new runtimes' first calls per side (with the state table and without).
 */
const BRAKES_OVERHEAD = { warmup: 100, iterations: 1200, newRuntimes: 100 };
const END_TO_END = { warmupSeconds: 1, seconds: 5, concurrency: 16 };
// 25, not 15: this VM has slow spells of a few seconds, and a median of 15 runs still moved by
// 10-15 ms from one bench run to the next (execute bundles 80-107 ms over 7 runs).
const COLD_START_RUNS = 25;
const LARGE_RUNS = 5;
/** Runs of each process under callgrind (`--instructions`): its counts vary by about 1%, not 20. */
const INSTRUCTION_RUNS = 3;
/** Profiled imports per bundle: the median of each part over these. */
const PROFILE_RUNS = 9;
/** Imports per bundle timed module by module, without the profiler. */
const TOP_LEVEL_RUNS = 15;
const BRIDGE = { warmup: 5, calls: 50 };

/**
 * `--runs N`, `--before <dir>` (the cold-start part) and `--wait-quiet <minutes>` (the cold-start
 * and Idempotency-Key parts: first wait up to that long for a spell whose speed reference lets the
 * budgets be judged) of the command line.
 */
interface CommandOptions {
  readonly runs?: number;
  readonly before?: string;
  readonly waitQuietMinutes?: number;
}

function commandOptions(argv: readonly string[]): CommandOptions {
  const optionValue = (name: string): string | undefined => {
    const at = argv.indexOf(name);
    if (at === -1) return undefined;
    const value = argv[at + 1];
    if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
    return value;
  };
  const runs = optionValue('--runs');
  const before = optionValue('--before');
  const waitQuiet = optionValue('--wait-quiet');
  if (waitQuiet !== undefined && !(Number(waitQuiet) > 0 && Number(waitQuiet) <= 24 * 60)) {
    throw new Error(
      `--wait-quiet ${waitQuiet}: minutes to wait for a quiet spell, more than 0, at most 1440`,
    );
  }
  if (runs !== undefined && !(Number.isInteger(Number(runs)) && Number(runs) >= 1)) {
    throw new Error(`--runs ${runs}: a whole number of rounds, at least 1`);
  }
  if (before !== undefined && !existsSync(join(resolve(before), 'lib', 'proxy-function.ts'))) {
    throw new Error(`--before ${before}: not a checkout of this project (no lib/proxy-function.ts)`);
  }
  return {
    ...(runs === undefined ? {} : { runs: Number(runs) }),
    ...(before === undefined ? {} : { before: resolve(before) }),
    ...(waitQuiet === undefined ? {} : { waitQuietMinutes: Number(waitQuiet) }),
  };
}

/** With `--wait-quiet`, waits for a spell in which the budgets can be judged, and says how it went. */
async function quietSpell(options: CommandOptions): Promise<void> {
  if (options.waitQuietMinutes === undefined) return;
  progress(
    `waiting up to ${options.waitQuietMinutes} min for a speed reference ≤ ${BUDGETS.speedReferenceMs} ms`,
  );
  const { quiet, readings } = await waitForQuietSpell({
    minutes: options.waitQuietMinutes,
    boundMs: BUDGETS.speedReferenceMs,
  });
  progress(
    quiet
      ? `quiet spell after ${readings.length} reading(s): measuring now`
      : `no quiet spell in ${options.waitQuietMinutes} min (lowest ${Math.min(...readings).toFixed(0)} ms): measuring anyway, budgets not judged`,
  );
}

/** The cold-start part alone (`--cold-start`): its rows on stdout, BENCHMARKS.md untouched. */
async function coldStartOnly(options: CommandOptions): Promise<void> {
  progress(`machine: ${machine()}`);
  const runs = options.runs ?? COLD_START_RUNS;
  await quietSpell(options);
  progress(
    `cold start (${runs} rounds of fresh processes per bundle and Node${options.before ? `; before: ${options.before}` : ''})`,
  );
  const coldStart = await measureColdStart({ runs, ...(options.before ? { before: options.before } : {}) });
  const rows = coldStartRows({ coldStart });
  process.stdout.write(`\n${renderTable(rows)}\n\n${summary(rows)}\n${coldStartFootnote(coldStart)}\n`);
}

/**
 * Cold starts counted in instructions (`--instructions`, bench/instructions.ts): the table on
 * stdout, BENCHMARKS.md untouched. `--runs N` (3 by default), `--before <dir>` as for `--cold-start`;
 * `--state-table`: every process with the state table on DynamoDB Local, as deployed (the first call
 * reads the brakes).
 */
async function instructionsOnly(options: CommandOptions): Promise<void> {
  if (options.waitQuietMinutes !== undefined) {
    throw new Error(
      "--wait-quiet: an instruction count does not depend on the machine's speed (leave it out)",
    );
  }
  progress(`machine: ${machine()}`);
  const runs = options.runs ?? INSTRUCTION_RUNS;
  progress(
    `cold starts counted in instructions (${runs} run(s) of each function${options.before ? ` and of ${options.before}'s` : ''}${process.argv.includes('--state-table') ? ', the state table on DynamoDB Local' : ''}; about 15 s each)`,
  );
  const stateTable = process.argv.includes('--state-table');
  const result = await measureInstructions({
    runs,
    ...(options.before ? { before: options.before } : {}),
    ...(stateTable ? { stateTable } : {}),
  });
  process.stdout.write(`\n${instructionTable(result)}\n`);
}

/** Where each bundle's import time goes: CPU profiles, and each module's top-level code without the profiler. */
async function profileBundleImports() {
  const options = { functions: FUNCTIONS, bundleDir: BUNDLE_DIR, env: lambdaModeEnv() };
  const importProfile = await profileImports({ ...options, runs: PROFILE_RUNS });
  const topLevel = await timeTopLevel({ ...options, runs: TOP_LEVEL_RUNS });
  return { importProfile, topLevel };
}

/** The import profile alone (`--import-profile`): its table on stdout, BENCHMARKS.md untouched. */
async function importProfileOnly(): Promise<void> {
  progress(`machine: ${machine()}`);
  const speed = speedReference();
  progress(
    `import profile (${PROFILE_RUNS} profiled imports, ${TOP_LEVEL_RUNS} timed by module, per bundle); ` +
      `speed reference ${speed.toFixed(1)} ms`,
  );
  const { importProfile, topLevel } = await profileBundleImports();
  process.stdout.write(`\n${importProfileTable(importProfile)}\n\n${topLevelTable(topLevel)}\n`);
}

/** The body parse alone (`--body-parse`): its rows on stdout, BENCHMARKS.md untouched. */
async function bodyParseOnly(): Promise<void> {
  progress(`machine: ${machine()}`);
  const before = speedReference();
  progress(`speed reference: ${before.toFixed(1)} ms`);
  const rows = bodyParseRows({ bodyParse: await measureBodyParse() });
  const after = speedReference();
  process.stdout.write(
    `\n${renderTable(rows)}\n\nspeed reference ${before.toFixed(0)} ms at the start, ${after.toFixed(0)} ms at the end\n`,
  );
}

/** The key-policy rows alone (`--key-policies`): on stdout, BENCHMARKS.md untouched. */
async function keyPoliciesOnly(): Promise<void> {
  progress(`machine: ${machine()}`);
  const speed = speedReference();
  progress(
    `key policies: ${KEY_COUNT} keys, none or ${KEYS_WITH_POLICIES} with policies (${KEY_POLICY_OVERHEAD.iterations} calls per case and runtime); speed reference ${speed.toFixed(1)} ms`,
  );
  const rows = keyPolicyRows(await measureKeyPolicyOverhead(KEY_POLICY_OVERHEAD));
  const after = speedReference();
  process.stdout.write(
    `\n${renderTable(rows)}\n\n${summary(rows)}\nspeed reference ${speed.toFixed(1)} ms at the start, ${after.toFixed(1)} ms at the end\n`,
  );
}

/** The limits' rows alone (`--limits`): on stdout, BENCHMARKS.md untouched. */
async function limitsOnly(): Promise<void> {
  progress(`machine: ${machine()}`);
  const speed = speedReference();
  progress(
    `limits: execute-v1, ${LIMITS_OVERHEAD.iterations} calls per runtime; speed reference ${speed.toFixed(1)} ms`,
  );
  const rows = limitsRows(await measureLimitsOverhead(LIMITS_OVERHEAD));
  const after = speedReference();
  process.stdout.write(
    `\n${renderTable(rows)}\n\n${summary(rows)}\nspeed reference ${speed.toFixed(1)} ms at the start, ${after.toFixed(1)} ms at the end\n`,
  );
}

/**
 * The brakes' rows alone (`--brakes`, bench/brakes-overhead.ts): the warm rows, then a cold
 * instance's first calls (`--runs N`, `--wait-quiet`); on stdout, BENCHMARKS.md untouched.
 */
async function brakesOnly(options: CommandOptions): Promise<void> {
  progress(`machine: ${machine()}`);
  const speed = speedReference();
  progress(
    `brakes: execute-v1, ${BRAKES_OVERHEAD.iterations} calls per runtime (DynamoDB Local); speed reference ${speed.toFixed(1)} ms`,
  );
  const warm = brakesRows(await measureBrakesOverhead(BRAKES_OVERHEAD));
  const after = speedReference();
  progress(`speed reference ${after.toFixed(1)} ms after the warm rows`);
  await quietSpell(options);
  const runs = options.runs ?? BRAKES_FIRST_CALL_RUNS;
  progress(`brakes: a cold instance's first call (${runs} rounds of fresh processes per case and Node)`);
  const cold = brakesFirstCallRows(await measureBrakesFirstCalls({ runs }));
  process.stdout.write(
    `\n${renderTable(warm)}\n\n${summary(warm)}\nspeed reference ${speed.toFixed(1)} ms at the start, ${after.toFixed(1)} ms at the end\n` +
      `\n${renderTable(cold)}\n`,
  );
}

/** The audit's rows alone (`--audit`, bench/audit.ts): on stdout. */
async function auditOnly(): Promise<void> {
  progress(`machine: ${machine()}`);
  const rows = auditRows(await measureAudit());
  process.stdout.write(`\n${renderTable(rows)}\n`);
}

/** The Idempotency-Key rows alone (`--idempotency`, bench/idempotency.ts): on stdout. */
async function idempotencyOnly(options: CommandOptions): Promise<void> {
  progress(`machine: ${machine()}`);
  await quietSpell(options);
  const rows = idempotencyRows(await measureIdempotency({ runs: options.runs ?? IDEMPOTENCY_RUNS }));
  process.stdout.write(`\n${renderTable(rows)}\n\n${summary(rows)}\n`);
}

async function main(): Promise<void> {
  const options = commandOptions(process.argv);
  if (process.argv.includes('--limits')) return limitsOnly();
  if (process.argv.includes('--body-parse')) return bodyParseOnly();
  if (process.argv.includes('--instructions')) return instructionsOnly(options);
  if (process.argv.includes('--cold-start')) return coldStartOnly(options);
  if (process.argv.includes('--key-policies')) return keyPoliciesOnly();
  if (process.argv.includes('--import-profile')) return importProfileOnly();
  if (process.argv.includes('--idempotency')) return idempotencyOnly(options);
  if (process.argv.includes('--audit')) return auditOnly();
  if (process.argv.includes('--brakes')) return brakesOnly(options);
  const startedAt = new Date();
  const loadAverage = loadavg();
  const t0 = performance.now();
  progress(`machine: ${machine()}`);
  const speedAtStart = speedReference();
  progress(`speed reference: ${speedAtStart.toFixed(1)} ms`);

  progress(`1/5 handler overhead (${OVERHEAD.iterations} calls per handler, in-process)`);
  const overhead = await measureHandlerOverhead(OVERHEAD);
  progress(`  key policies (${KEY_COUNT} keys, none or ${KEYS_WITH_POLICIES} with policies, side by side)`);
  const keyPolicies = await measureKeyPolicyOverhead(KEY_POLICY_OVERHEAD);
  progress('  limits (none, for others only, limited against DynamoDB Local; side by side)');
  const limits = await measureLimitsOverhead(LIMITS_OVERHEAD);
  progress('  brakes (none, a fresh copy, a read on every call: embedded and DynamoDB Local; side by side)');
  const brakes = await measureBrakesOverhead(BRAKES_OVERHEAD);

  progress(
    `2/5 cold start (${COLD_START_RUNS} rounds of fresh processes per bundle, on Node 24 and this Node)`,
  );
  const coldStart = await measureColdStart({
    runs: COLD_START_RUNS,
    ...(options.before ? { before: options.before } : {}),
  });
  progress(
    `  import profile (${PROFILE_RUNS} profiled imports, ${TOP_LEVEL_RUNS} timed by module, per bundle)`,
  );
  const { importProfile, topLevel } = await profileBundleImports();

  progress('3/5 large answers (1 MB and 5 MB, v1 and v2, with and without gzip; one child process each)');
  const largeAnswers = await measureLargeAnswers({ runs: LARGE_RUNS });

  progress(`4/5 end to end over loopback (autocannon, ${END_TO_END.seconds} s per run; 14 runs, about 85 s)`);
  const endToEnd = await measureEndToEnd(END_TO_END);
  progress(
    `5/5 v1 over /jsonrpc and over JSON-2 (${BRIDGE.calls} interleaved calls each; ERP double${liveTarget() ? ' and the live ERP' : ''})`,
  );
  const bridge = await measureProtocolBridge(BRIDGE);
  progress(
    '  the body parse: @middy/http-json-body-parser against the scanner alone (in-process, interleaved)',
  );
  const bodyParse = await measureBodyParse();
  const speedAtEnd = speedReference();
  const bundleSizes = await currentSizes();

  const results: Results = {
    startedAt,
    seconds: (performance.now() - t0) / 1000,
    loadAverage,
    speedReferenceMs: [speedAtStart, speedAtEnd],
    overhead,
    overheadSettings: OVERHEAD,
    keyPolicies,
    limits,
    brakes,
    endToEnd,
    endToEndSettings: END_TO_END,
    coldStart,
    importProfile,
    topLevel,
    largeAnswers,
    largeRuns: LARGE_RUNS,
    bridge,
    bodyParse,
    bundleSizes,
  };
  const rows = allRows(results);
  // The generated sections are replaced; the hand-written side-by-side sections stay (after them).
  const file = join(ROOT, 'BENCHMARKS.md');
  const existing = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  writeFileSync(file, keepingHandSections(renderMarkdown(results), existing));
  process.stdout.write(`\n${renderTable(rows)}\n\n${summary(rows)}\n`);
  progress(`wrote BENCHMARKS.md (${Math.round(results.seconds)} s)`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
