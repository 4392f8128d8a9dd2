/**
 * What the process writes to stdout and stderr during a test. Powertools' Logger and Metrics
 * print through private `Console`s bound to the streams (not the global console), so the helpers
 * spy on the streams' `write`; `vi.restoreAllMocks()` ends the capture.
 */
import { vi } from 'vitest';

/** Captures both streams from now on; the returned function gives the non-empty lines so far. */
export function captureOutputLines(): () => string[] {
  const chunks: string[] = [];
  const record = (chunk: unknown): boolean => {
    chunks.push(String(chunk));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(record);
  vi.spyOn(process.stderr, 'write').mockImplementation(record);
  return () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line.trim() !== '');
}

/** As {@link captureOutputLines}, each line parsed as JSON (log lines and EMF records). */
export function captureLogLines(): () => Record<string, unknown>[] {
  const lines = captureOutputLines();
  return () => lines().map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * The proxy's JSON log lines and EMF records written while `act` runs, passed on to the streams as
 * well (the leak guard still scans them), the spies removed afterwards.
 */
export async function logLinesDuring(act: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const keep = (chunk: unknown): void => {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
    if (/^\{"(level|_aws)"/.test(text)) lines.push(text);
  };
  const spies = [process.stdout, process.stderr].map((stream) => {
    const write = stream.write.bind(stream);
    return vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk);
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write);
  });
  try {
    await act();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines;
}
