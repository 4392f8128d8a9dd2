/**
 * A server on 127.0.0.1 that accepts connections and reads requests but never answers: an ERP that
 * hangs (a call that may have run), or an AWS endpoint for checking that a client's timeouts fire
 * instead of hanging ({@link useSilentEndpoint}).
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, vi } from 'vitest';

/** A listening silent server: its URL, and `close` (which drops the connections it holds). */
export interface SilentServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Starts a silent server on a free port of 127.0.0.1. */
export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A silent server for the enclosing file's tests: `envName` (such as `AWS_ENDPOINT_URL_CLOUDWATCH`)
 * points the SDK at it until the tests end.
 */
export function useSilentEndpoint(envName: string): void {
  let server: SilentServer | undefined;
  beforeAll(async () => {
    server = await startSilentServer();
    vi.stubEnv(envName, server.url);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await server?.close();
  });
}
