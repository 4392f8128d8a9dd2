/** The part of parse-prometheus-text-format 1.1.1 the tests use (the package has no types). */
declare module 'parse-prometheus-text-format' {
  export interface ParsedSample {
    readonly labels?: Record<string, string>;
    readonly value?: string;
    readonly buckets?: Record<string, string>;
    readonly quantiles?: Record<string, string>;
    readonly count?: string;
    readonly sum?: string;
  }
  export interface ParsedFamily {
    readonly name: string;
    readonly help: string;
    readonly type: 'COUNTER' | 'GAUGE' | 'SUMMARY' | 'HISTOGRAM' | 'UNTYPED';
    readonly metrics: readonly ParsedSample[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
