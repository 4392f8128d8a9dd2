/**
 * `npm run bench -- --instructions` (bench/instructions.ts): cold starts counted by callgrind. The
 * summary is read from valgrind's own log, the command is the one the module header describes,
 * and a real process counted twice gives the same count within the stated 1%. Those real runs
 * need valgrind: with `CI` set (`.ci/run` installs it) its absence fails them, elsewhere they are
 * skipped.
 */
import { describe, expect, it } from 'vitest';
import {
  CALLGRIND_OPTIONS,
  collectedInstructions,
  countInstructions,
  type InstructionResult,
  instructionCommand,
  instructionCountingProblem,
  instructionTable,
  spread,
} from '../../bench/instructions.ts';

/** The end of a real callgrind log (valgrind 3.19, Debian 12). */
const LOG = `==27437== Callgrind, a call-graph generating cache profiler
==27437== Command: node --single-threaded -e 1
==27437==
==27437== Events    : Ir
==27437== Collected : 93823031
==27437==
==27437== I   refs:      93,823,031
`;

/** A child that reports to fd 3 as the cold-start child does, after a little fixed work. */
const REPORTING_SCRIPT =
  "let s = 0; for (let i = 0; i < 200000; i++) s += i % 7; (await import('node:fs')).writeSync(3, JSON.stringify({ statusCode: 200, s }));";

describe('collectedInstructions', () => {
  it("reads the count of callgrind's summary", () => {
    expect(collectedInstructions(LOG)).toBe(93_823_031);
  });

  it("fails naming the log's last lines when there is no summary (the process never ran)", () => {
    expect(() => collectedInstructions('==1== valgrind: failed to start tool\n==1== exiting\n')).toThrow(
      /no "Collected" line .*failed to start tool \| ==1== exiting/,
    );
  });
});

describe('instructionCommand', () => {
  it('runs node under callgrind without address randomization, V8 on one thread and fixed seeds', () => {
    const command = instructionCommand(
      '/opt/node24/bin/node',
      ['child.mjs', 'bundle.mjs'],
      '/tmp/x/valgrind.log',
    );
    expect(command.file).toBe('setarch');
    expect(command.args).toEqual([
      '-R',
      'valgrind',
      ...CALLGRIND_OPTIONS,
      '--log-file=/tmp/x/valgrind.log',
      '/opt/node24/bin/node',
      '--single-threaded',
      '--hash-seed=1',
      '--random-seed=1',
      'child.mjs',
      'bundle.mjs',
    ]);
  });
});

describe('instructionTable', () => {
  const node = { role: 'lambda', path: '/n', version: 'v24.21.0', arch: 'x64' } as const;
  const result: InstructionResult = {
    node,
    runs: 3,
    bare: 94_000_000,
    rows: [
      {
        fn: 'aux',
        instructions: 150_000_000,
        runs: [150_000_000, 151_500_000, 149_000_000],
        before: { instructions: 300_000_000, runs: [300_000_000, 300_000_000, 300_000_000] },
      },
    ],
    before: { tree: '/w/before', commit: 'ccc6d05' },
  };

  it("shows each function's count over bare node, its spread, and the before tree's with the difference", () => {
    const table = instructionTable(result);
    expect(table).toContain('on Node v24.21.0 x64');
    expect(table).toContain('a bare node: 94.0 M');
    expect(table).toContain(
      '| function | this tree, over bare node (median of 3) | spread | before (ccc6d05) |',
    );
    expect(table).toContain('| aux | 150.0 M | 1.67% | 300.0 M | 0.00% | -50.0% |');
    expect(table).toContain('no budget is judged on it');
  });

  it('has no before columns without a before tree, and a dash for the spread of one run', () => {
    const { before: _tree, ...alone } = result;
    const table = instructionTable({
      ...alone,
      runs: 1,
      rows: [{ fn: 'aux', instructions: 150_000_000, runs: [150_000_000] }],
    });
    expect(table).not.toContain('before');
    expect(table).toContain('| aux | 150.0 M | — |');
    expect(spread([5])).toBe('—');
  });

  it('says when every process had the state table (`--state-table`: the first call reads the brakes), and not otherwise', () => {
    expect(instructionTable({ ...result, stateTable: true })).toContain(
      'Every process had the state table (DynamoDB Local), as deployed: the first call reads the brakes.',
    );
    expect(instructionTable(result)).not.toContain('state table');
  });
});

/** Whether valgrind must be there: in CI (`.ci/run` installs it), its absence fails these tests. */
const VALGRIND_REQUIRED = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const counting = instructionCountingProblem() === undefined || VALGRIND_REQUIRED;

describe.runIf(counting)('countInstructions, on this machine', () => {
  it('finds valgrind and setarch -R here', () => {
    expect(instructionCountingProblem()).toBeUndefined();
  });

  it('counts a real process twice to within 1%, with the report it wrote on fd 3', async () => {
    const args = ['--input-type=module', '-e', REPORTING_SCRIPT];
    const env = { PATH: process.env.PATH ?? '' };
    const first = await countInstructions(process.execPath, args, env);
    const second = await countInstructions(process.execPath, args, env);
    expect(first.report).toEqual({ statusCode: 200, s: 599_994 });
    expect(first.instructions).toBeGreaterThan(10_000_000);
    expect(Math.abs(first.instructions - second.instructions) / first.instructions).toBeLessThan(0.01);
  }, 120_000);

  it("fails with the process's own error when it exits non-zero, and when it reports nothing", async () => {
    const env = { PATH: process.env.PATH ?? '' };
    await expect(
      countInstructions(process.execPath, ['-e', "console.error('bundle broke'); process.exit(3)"], env),
    ).rejects.toThrow(/exited with 3: .*bundle broke/s);
    await expect(countInstructions(process.execPath, ['-e', '1'], env)).rejects.toThrow(/no report on fd 3/);
  }, 120_000);
});
