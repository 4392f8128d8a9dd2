/**
 * The proxy's JSON log lines (and EMF records) written while a piece of a test runs, caught on
 * their way to stdout and stderr and passed on (the leak guard still scans them).
 */
import { vi } from 'vitest';

/** The proxy's JSON lines (`{"level"...` or `{"_aws"...`) written to stdout or stderr while `act` runs. */
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
