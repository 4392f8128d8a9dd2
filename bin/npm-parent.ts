/**
 * @module npm-parent
 * A long-running npm script (`npm start`, `npm run state:local`) stops when its npm process is
 * killed: `kill <npm's pid>` makes npm pass SIGTERM to the script's shell (`sh -c ...`), which ends
 * without passing it on, and the script would keep running, orphaned.
 */

/**
 * Calls `stop` once this process's parent has gone, when it runs as the npm script `script`
 * (`npm_lifecycle_event`). The script's shell is this process's parent only when the script runs
 * `node --import tsx <file>` (no launcher such as the `tsx` command in between, whose own process
 * would stay). When the shell has gone, the parent is another process. Checked every 500 ms on a
 * timer that keeps nothing alive.
 */
export function stopWhenNpmGoes(script: string, stop: () => void): void {
  if (process.env.npm_lifecycle_event !== script) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, 500);
  timer.unref();
}
