/**
 * The floor for any Node proxy: a minimal `node:http` pass-through written only for the
 * benchmark. It forwards the method, path and POST body to one upstream over a keep-alive
 * `http.Agent` and pipes the answer back: no parsing, validation, auth, logging or metrics.
 */
import { Agent, createServer, request } from 'node:http';
import { listen, type RunningServer } from './upstreams.ts';

export function startFloorProxy(upstreamUrl: string, maxSockets = 16): Promise<RunningServer> {
  const target = new URL(upstreamUrl);
  const agent = new Agent({ keepAlive: true, maxSockets });
  const server = createServer((req, res) => {
    const headers: Record<string, string> = {};
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    if (req.headers['content-length']) headers['content-length'] = req.headers['content-length'];
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
      (answer) => {
        const out: Record<string, string> = {};
        if (answer.headers['content-type']) out['content-type'] = answer.headers['content-type'];
        if (answer.headers['content-length']) out['content-length'] = answer.headers['content-length'];
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  return listen(server).then((running) => ({
    ...running,
    close: async () => {
      await running.close();
      agent.destroy();
    },
  }));
}
