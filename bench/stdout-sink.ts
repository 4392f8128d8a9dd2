/**
 * Keeps terminal I/O out of a measurement: while active, `process.stdout.write` receives every
 * string the logger formats (so the formatting work still happens) and drops it.
 */

export interface StdoutSink {
  /** Lines (writes) and bytes received while active. */
  readonly writes: number;
  readonly bytes: number;
  restore(): void;
}

export function sinkStdout(): StdoutSink {
  const original = process.stdout.write;
  let writes = 0;
  let bytes = 0;
  const sink = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    writes += 1;
    bytes += typeof chunk === 'string' ? chunk.length : chunk.byteLength;
    const callback = rest.find((arg): arg is () => void => typeof arg === 'function');
    if (callback) queueMicrotask(callback);
    return true;
  };
  process.stdout.write = sink as typeof process.stdout.write;
  return {
    get writes() {
      return writes;
    },
    get bytes() {
      return bytes;
    },
    restore() {
      process.stdout.write = original;
    },
  };
}
