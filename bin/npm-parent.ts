/**
 * @module npm-parent
 * The local servers npm starts (`npm start`, `npm run erp-double`, `npm run oauth:try-out`, `npm run state:local`) stop
 * when npm goes: `kill <npm's pid>` makes npm pass SIGTERM to its script shell (`sh -c ...`), which
 * ends without passing it on, and the server would keep listening, orphaned, its port bound.
 */

/**
 * This process's parent as this module was imported, at the start of the server's main module:
 * npm's script shell, long before the server prints the line its user (or a test) waits for.
 */
const STARTING_PARENT = process.ppid;

/**
 * Calls `stop` once this process's parent has gone, when npm runs it as `script` (its
 * `npm_lifecycle_event`). The parent is npm's script shell: the scripts run `node --import tsx`,
 * no launcher in between (`tsx <file>` would put its own process there, which outlives the shell
 * too). When it has gone, the parent is another process. Checked at once (it may have gone
 * already), then every 500 ms on a timer that keeps nothing alive. Run another way
 * (`node --import tsx <file>` from a terminal), nothing is watched: a terminal's hangup reaches the
 * process itself.
 */
export function stopWhenNpmGoes(script: string, stop: () => void): void {
  if (process.env.npm_lifecycle_event !== script) return;
  // Gone already: npm was killed between the server's ready line and this call (seen in CI: the
  // parent read here was already the new one, so no change was ever seen and the port stayed bound).
  if (process.ppid !== STARTING_PARENT) {
    stop();
    return;
  }
  const timer = setInterval(() => {
    if (process.ppid === STARTING_PARENT) return;
    clearInterval(timer);
    stop();
  }, 500);
  timer.unref();
}

/**
 * Stops a local server once, on SIGINT, SIGTERM or when npm goes ({@link stopWhenNpmGoes}):
 * `stop` closes it, then the process exits 0; after `graceMs` it exits whatever `stop` still waits
 * for (a connection that opened late keeps a server's `close` waiting: seen in CI, the port still
 * bound 20 s after npm was killed).
 */
export function stopOnSignals(script: string, stop: () => Promise<unknown>, graceMs = 1_000): void {
  let stopping = false;
  const stopOnce = (): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), graceMs).unref();
    void Promise.resolve()
      .then(stop)
      .finally(() => process.exit(0));
  };
  process.on('SIGINT', stopOnce);
  process.on('SIGTERM', stopOnce);
  stopWhenNpmGoes(script, stopOnce);
}
