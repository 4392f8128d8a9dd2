/**
 * Running code in another checkout of this repository (a tree: an older commit's worktree, with
 * its own node_modules), for the side-by-side benchmarks (bench/overhead-trees.ts, `--before` of
 * bench/cold-start.ts): a script run by that tree's tsx in a process started there, whose result
 * comes back as one marked line of JSON on its standard output.
 */
import { execFileSync } from 'node:child_process';

/** The line a script run in a tree prints its result on. */
const RESULT_MARK = 'TREE-RESULT ';

/** The statements that print `expression` (JavaScript, evaluated in the script) as its result and exit. */
export function printResult(expression: string): string {
  return `process.stdout.write(${JSON.stringify(RESULT_MARK)} + JSON.stringify(${expression}) + '\\n');
    process.exit(0);`;
}

/**
 * Runs `script` (an ES module's code, ending with {@link printResult}) with `tree`'s tsx, in `tree`,
 * and returns the result it printed; throws `${tree}: ${missing}` when it printed none.
 */
export function runInTree(tree: string, script: string, missing: string): unknown {
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: tree,
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = output.split('\n').find((text) => text.startsWith(RESULT_MARK));
  if (line === undefined) throw new Error(`${tree}: ${missing}`);
  return JSON.parse(line.slice(RESULT_MARK.length)) as unknown;
}
