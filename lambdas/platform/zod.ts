/**
 * @module platform/zod
 * zod's configuration for the proxy, applied by importing this module for its side effect
 * (`import './zod.ts'`) next to `import * as z from 'zod'`. (Re-exporting the `z` namespace from
 * here would make it a value esbuild cannot tree-shake: the bundle grew from 194 to 558 KB.)
 *
 * `jitless`: zod 4 otherwise compiles each object schema with `new Function` on its first parse.
 * That compile is paid on every cold start (measured: import 46 -> 33 ms, first invocation
 * 35 -> 22 ms for the execute-v1 bundle) while the steady-state cost of small requests is within
 * measurement noise.
 */
import { config } from 'zod';

config({ jitless: true });
