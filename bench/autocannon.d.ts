/** The part of autocannon 8's programmatic API the benchmarks use (the package has no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds. */
    timeout?: number;
  }

  export interface Result {
    errors: number;
    timeouts: number;
    non2xx: number;
    start: Date;
    finish: Date;
    requests: { average: number; total: number };
  }

  /** Emits `response` (client, statusCode, resBytes, responseTime in fractional ms) per answer. */
  export interface Instance extends EventEmitter {
    stop(): void;
  }

  export default function autocannon(
    options: Options,
    callback: (error: Error | null, result: Result) => void,
  ): Instance;
}
