/**
 * @module zod
 * zod, configured once for the proxy. Every module takes `z` from here.
 *
 * `jitless`: zod 4 otherwise compiles each object schema with `new Function` on its first parse.
 * That compile is paid on every cold start (measured: import 46 -> 33 ms, first invocation
 * 35 -> 22 ms for the execute-v1 bundle) while the steady-state cost of small requests is within
 * measurement noise.
 */
import * as z from 'zod';

z.config({ jitless: true });

export { z };
