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
