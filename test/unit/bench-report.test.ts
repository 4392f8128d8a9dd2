/**
 * The cold-start rows of the benchmark (bench/report.ts, issue 49): the budgets are judged on the
 * pinned Node 24's rows only, in a run whose speed reference is at most 110 ms; the machine's Node
 * is shown without a budget; with `--before`, a row per function says whether this tree is slower.
 * Synthetic results: nothing is measured here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type {
  BenchNode,
  BundleRow,
  ColdStartResult,
  FirstCallRow,
  NodeColdStart,
} from '../../bench/cold-start.ts';
import type { IdempotencyResult } from '../../bench/idempotency.ts';
import {
  BUDGETS,
  budgetsJudged,
  coldStartFootnote,
  coldStartRows,
  HAND_WRITTEN_BELOW,
  idempotencyRows,
  keepingHandSections,
  NOT_JUDGED,
  renderTable,
  summary,
} from '../../bench/report.ts';
import type { FunctionName } from '../../lambdas/platform/routes.ts';

const NODE24: BenchNode = { role: 'lambda', path: '/pinned/node', version: 'v24.21.0', arch: 'x64' };
const MACHINE: BenchNode = { role: 'machine', path: '/usr/bin/node', version: 'v20.20.2', arch: 'x64' };
const FNS: readonly FunctionName[] = ['execute-v1', 'execute-v2', 'version', 'aux', 'mcp'];

function bundle(fn: FunctionName, coldStartMs: number): BundleRow {
  return {
    fn,
    bytes: 1000,
    mapBytes: 1000,
    coldStartMs,
    readyMs: coldStartMs + 40,
    exitMs: 5,
    importMs: coldStartMs / 2,
    invokeMs: coldStartMs / 2,
  };
}

function firstCall(fn: FunctionName, secrets: FirstCallRow['secrets'], firstCallMs: number): FirstCallRow {
  return { fn, secrets, firstCallMs, importMs: 30, invokeMs: firstCallMs - 30 };
}

/** One Node's rows: every bundle at `coldMs` but those in `slow`, the other rows at `otherMs`. */
function nodeRows(
  node: BenchNode,
  coldMs: number,
  options: { slow?: Partial<Record<FunctionName, number>>; firstCallMs?: number; tokenMs?: number } = {},
): NodeColdStart {
  return {
    node,
    bareNodeMs: 40,
    sdkImportMs: 60,
    bundles: FNS.map((fn) => bundle(fn, options.slow?.[fn] ?? coldMs)),
    firstCalls: [
      firstCall('execute-v1', 'extension', options.firstCallMs ?? 90),
      firstCall('execute-v2', 'extension', options.firstCallMs ?? 90),
      firstCall('execute-v1', 'sdk', 300),
    ],
    oauth: [
      { caller: 'proxy key', coldStartMs: coldMs, importMs: 30, invokeMs: 30 },
      { caller: 'access token', coldStartMs: options.tokenMs ?? 100, importMs: 30, invokeMs: 70 },
    ],
    https: { coldStartMs: coldMs + 15, importMs: 30, invokeMs: coldMs - 15 },
  };
}

function result(overrides: Partial<ColdStartResult> = {}): ColdStartResult {
  return {
    runs: 3,
    speedReferenceMs: [95, 100],
    nodes: [nodeRows(NODE24, 60), nodeRows(MACHINE, 50)],
    ...overrides,
  };
}

const rowsOf = (coldStart: ColdStartResult) => coldStartRows({ coldStart });
const find = (rows: ReturnType<typeof rowsOf>, area: string, measurement: string) => {
  const row = rows.find((r) => r.area === area && r.measurement.startsWith(measurement));
  if (row === undefined) throw new Error(`no row ${area} / ${measurement}`);
  return row;
};

describe('coldStartRows (issue 49 budgets)', () => {
  it('holds the issue 49 budgets', () => {
    expect(BUDGETS.coldStartMs).toBe(75);
    expect(BUDGETS.firstCallMs).toBe(110);
    expect(BUDGETS.tokenFirstCallMs).toBe(120);
    expect(BUDGETS.speedReferenceMs).toBe(110);
  });

  it('meets every budget when the Node 24 rows are within them, and says which Node each row used', () => {
    const rows = rowsOf(result());
    expect(summary(rows)).toBe(`All ${rows.filter((r) => r.met !== undefined).length} budgets met.`);
    // 5 bundles, the mcp bundle with OAuth and the proxy key, the token call, 2 first calls with secrets.
    expect(rows.filter((r) => r.met === true)).toHaveLength(9);
    expect(rows.every((r) => r.area === 'Cold start' || /Node v2[04]\./.test(r.area))).toBe(true);
    expect(rows.filter((r) => r.met !== undefined).every((r) => r.area.includes('Node v24.21.0'))).toBe(true);
    expect(find(rows, 'Cold start (Node v24.21.0)', 'bare `node` start').measurement).toContain('arm64');
    expect(find(rows, 'Cold start', 'speed reference').result).toBe('95.0 ms before, 100 ms after');
  });

  it('shows the first call to an https: ERP on each Node beside the http: row, without a budget', () => {
    const rows = rowsOf(result());
    const https = rows.filter((r) =>
      r.measurement.startsWith('execute-v1 bundle, first call to an https: ERP'),
    );
    expect(https.map((r) => r.area)).toEqual([
      'Cold start (Node v24.21.0)',
      'Cold start (Node v20.20.2, machine)',
    ]);
    expect(https.map((r) => r.result)).toEqual([
      '75.0 ms over bare node (import 30.0 ms, first invocation 45.0 ms); +15.0 ms against the http: row',
      '65.0 ms over bare node (import 30.0 ms, first invocation 35.0 ms); +15.0 ms against the http: row',
    ]);
    expect(https.every((r) => r.met === undefined && r.budget.startsWith('— (informative'))).toBe(true);
  });

  it('reports a Node 24 bundle over 75 ms as missed, and the same time on the machine Node without a budget', () => {
    const rows = rowsOf(
      result({
        nodes: [nodeRows(NODE24, 60, { slow: { mcp: 80 } }), nodeRows(MACHINE, 50, { slow: { mcp: 80 } })],
      }),
    );
    const node24 = find(rows, 'Cold start (Node v24.21.0)', 'mcp bundle: import');
    expect(node24).toMatchObject({ met: false, budget: '≤ 75 ms', note: '+5.000 ms' });
    const machine = find(rows, 'Cold start (Node v20.20.2, machine)', 'mcp bundle: import');
    expect(machine.met).toBeUndefined();
    expect(machine.note).toBe('no budget; Node 24 +0.000 ms');
    expect(summary(rows)).toContain(
      'not met: Cold start (Node v24.21.0) / mcp bundle: import + first invocation.',
    );
    expect(renderTable(rows)).toContain('**NOT met** (+5.000 ms)');
  });

  it('holds the first call with secrets to 110 ms and the access-token call to 120 ms on Node 24', () => {
    const rows = rowsOf(
      result({ nodes: [nodeRows(NODE24, 60, { firstCallMs: 111, tokenMs: 119 }), nodeRows(MACHINE, 50)] }),
    );
    const secrets = rows.filter(
      (r) => r.area === 'First call (Node v24.21.0)' && r.measurement.includes('localhost API'),
    );
    expect(secrets.map((r) => [r.budget, r.met])).toEqual([
      ['≤ 110 ms', false],
      ['≤ 110 ms', false],
    ]);
    expect(
      find(rows, 'First call (Node v24.21.0)', 'mcp bundle with OAuth configured as deployed, first call'),
    ).toMatchObject({
      budget: '≤ 120 ms',
      met: true,
    });
    expect(
      find(rows, 'Cold start (Node v24.21.0)', 'mcp bundle with OAuth configured as deployed ('),
    ).toMatchObject({
      budget: '≤ 75 ms',
      met: true,
    });
  });

  it('does not judge a run whose speed reference is above 110 ms, and says so', () => {
    const rows = rowsOf(
      result({ speedReferenceMs: [100, 111], nodes: [nodeRows(NODE24, 200), nodeRows(MACHINE, 50)] }),
    );
    expect(budgetsJudged([100, 111])).toBe(false);
    expect(budgetsJudged([110, 110])).toBe(true);
    expect(rows.some((r) => r.met !== undefined)).toBe(false);
    expect(find(rows, 'Cold start (Node v24.21.0)', 'execute-v1 bundle: import')).toMatchObject({
      budget: '≤ 75 ms',
      note: NOT_JUDGED,
      unjudged: true,
    });
    expect(find(rows, 'Cold start', 'speed reference').note).toBe(NOT_JUDGED);
    expect(summary(rows)).toBe(`9 budgets not judged (${NOT_JUDGED}).`);
    expect(NOT_JUDGED).toBe('speed reference above 110 ms: budgets not judged');
    expect(coldStartFootnote(result({ speedReferenceMs: [100, 111] }))).toContain(NOT_JUDGED);
  });

  it('with a before tree, shows it beside each Node 24 row and misses "not slower than before" when slower', () => {
    const rows = rowsOf(
      result({
        before: {
          tree: '/work/wt-before',
          commit: 'ccc6d05',
          bundles: FNS.map((fn) => bundle(fn, 58)),
          differenceMs: { 'execute-v1': 2, 'execute-v2': -1, version: 0, aux: -3, mcp: -10 },
        },
      }),
    );
    expect(find(rows, 'Cold start (Node v24.21.0)', 'execute-v1 bundle: import').result).toContain(
      'before (ccc6d05): 58.0 ms',
    );
    const notSlower = rows.filter((r) => r.measurement.includes('not slower than before (ccc6d05'));
    expect(notSlower.map((r) => [r.measurement.split(' ')[0], r.met])).toEqual([
      ['execute-v1', false],
      ['execute-v2', true],
      ['version', true],
      ['aux', true],
      ['mcp', true],
    ]);
    expect(notSlower.every((r) => r.area === 'Cold start (Node v24.21.0)' && r.budget === '≤ before')).toBe(
      true,
    );
    expect(
      find(rows, 'Cold start (Node v20.20.2, machine)', 'execute-v1 bundle: import').result,
    ).not.toContain('before');
  });

  it('names the Nodes, the arm64 caveat and the speed reference under the rows', () => {
    const footnote = coldStartFootnote(result());
    expect(footnote).toContain('Node v24.21.0 x64, pinned');
    expect(footnote).toContain('Node v20.20.2 x64, this machine');
    expect(footnote).toContain('arm64');
    expect(footnote).toContain('budgets judged (≤ 110 ms)');
  });
});

describe('idempotencyRows', () => {
  const keyed = (node: BenchNode, withMs: number) => ({
    node,
    bareNodeMs: 40,
    without: { firstCallMs: 70, invokeMs: 30 },
    with: { firstCallMs: withMs, invokeMs: withMs - 40 },
  });
  const idempotency = (speed: [number, number], node24WithMs: number): IdempotencyResult => ({
    runs: 3,
    speedReferenceMs: speed,
    firstCalls: [keyed(NODE24, node24WithMs), keyed(MACHINE, 130)],
    warm: { calls: 10, withoutMs: 1, freshKeyMs: 3, replayMs: 2 },
  });

  it('holds the first keyed write on Node 24 to 110 ms; the machine Node has no budget', () => {
    const rows = idempotencyRows(idempotency([90, 95], 111));
    const budgeted = rows.filter((r) => r.met !== undefined);
    expect(budgeted).toHaveLength(1);
    expect(budgeted[0]).toMatchObject({
      area: 'First call (Node v24.21.0)',
      measurement: 'execute-v1 bundle, a create with an Idempotency-Key (DynamoDB Local)',
      budget: '≤ 110 ms',
      met: false,
    });
    expect(idempotencyRows(idempotency([90, 95], 100)).find((r) => r.met !== undefined)?.met).toBe(true);
  });

  it('is not judged above a speed reference of 110 ms', () => {
    const rows = idempotencyRows(idempotency([90, 140], 200));
    expect(rows.some((r) => r.met !== undefined)).toBe(false);
    expect(summary(rows)).toBe(`1 budget not judged (${NOT_JUDGED}).`);
  });
});

describe('keepingHandSections: a full npm run bench keeps the hand-written sections of BENCHMARKS.md', () => {
  const generated = `# Benchmarks\n\nGenerated.\n\n## Results\n\nnew rows\n\n## Method\n\nnew method\n\n${HAND_WRITTEN_BELOW}\n`;
  const handWritten = [
    '## Cold starts on Node 24 (issue 49)\n\nby hand\n\n```\n## not a heading: inside a fence\n```\n',
    '### a subsection\n\nstays with it\n',
  ].join('\n');

  it('keeps what is below the line and replaces what is above, whatever its headings', () => {
    const existing = `# Benchmarks\n\n## Results (renamed since)\n\nold rows\n\n${HAND_WRITTEN_BELOW}\n\n${handWritten}`;
    const written = keepingHandSections(generated, existing);
    expect(written.startsWith(generated.trimEnd())).toBe(true);
    expect(written).not.toContain('old rows');
    expect(written.endsWith(`${handWritten.trim()}\n`)).toBe(true);
    expect(written.split(HAND_WRITTEN_BELOW)).toHaveLength(2);
    // Written again over itself: the same text.
    expect(keepingHandSections(generated, written)).toBe(written);
  });

  it('from a file without the line: the sections whose heading the generator does not write, in order', () => {
    const existing = [
      '# Benchmarks\n\nGenerated before.\n',
      '## Results\n\nold rows\n',
      '## Body parse (issue 34)\n\nby hand, between generated sections\n',
      '## Method\n\nold method\n',
      handWritten,
    ].join('\n');
    const written = keepingHandSections(generated, existing);
    expect(written).not.toContain('old rows');
    expect(written).not.toContain('old method');
    expect(written).not.toContain('Generated before.');
    const below = written.indexOf(HAND_WRITTEN_BELOW);
    const body = written.indexOf('## Body parse (issue 34)');
    expect(body).toBeGreaterThan(below);
    expect(written.indexOf('## Cold starts on Node 24 (issue 49)')).toBeGreaterThan(body);
    expect(written).toContain('```\n## not a heading: inside a fence\n```');
    expect(written).toContain('### a subsection\n\nstays with it');
    expect(written.match(/^## Results$/gm)).toHaveLength(1);
  });

  it('writes the generated text alone when there is no file yet, or nothing written by hand', () => {
    expect(keepingHandSections(generated, undefined)).toBe(generated);
    expect(keepingHandSections(generated, generated)).toBe(generated);
  });

  it('keeps every hand-written section of the real BENCHMARKS.md', () => {
    const real = readFileSync(new URL('../../BENCHMARKS.md', import.meta.url), 'utf8');
    const written = keepingHandSections(generated, real);
    const headings = real.match(/^## .*(?:issue|side by side).*$/gm) ?? [];
    expect(headings.length).toBeGreaterThan(5);
    for (const heading of headings) expect(written, heading).toContain(heading);
  });
});
