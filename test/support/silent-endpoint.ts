/**
 * An AWS endpoint that accepts connections and reads requests but never answers, on 127.0.0.1,
 * for the enclosing file's tests: `envName` (such as `AWS_ENDPOINT_URL_CLOUDWATCH`) points the
 * SDK at it until the tests end. For checking that a client's timeouts fire instead of hanging.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, vi } from 'vitest';

export function useSilentEndpoint(envName: string): void {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
  });
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    vi.stubEnv(envName, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}
