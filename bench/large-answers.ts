/**
 * Large answers: `search_read` results of 1 MB and 5 MB through the v1 and v2 handlers, with and
 * without `accept-encoding: gzip`. The upstream runs in this (parent) process and serves
 * pre-built bodies; each case runs in a fresh child (large-answer-child.ts) so that its peak
 * memory is its own. Added latency = handler time − upstream time (median over the runs).
 */
import { fork } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LargeAnswerReport } from './large-answer-child.ts';
import { median, progress } from './stats.ts';
import { LARGE_SIZES, type LargeSize, startLargeUpstream } from './upstreams.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

export interface LargeAnswerRow {
  readonly kind: 'v1' | 'v2';
  readonly size: LargeSize;
  readonly gzip: boolean;
  /** Bytes of the upstream answer (the JSON the ERP sent). */
  readonly answerBytes: number;
  readonly addedMedianMs: number;
  readonly upstreamMedianMs: number;
  /** Growth of the child's peak RSS over its baseline, in bytes. */
  readonly peakGrowthBytes: number;
  /** The baseline's `maxRSS` minus the RSS right before the call (how loose the baseline is). */
  readonly baselineSlackBytes: number;
  readonly statusCode: number;
  readonly errorCode: number | null;
  readonly responseBytes: number;
}

function runCase(args: string[]): Promise<LargeAnswerReport> {
  return new Promise((resolvePromise, reject) => {
    const child = fork(join(HERE, 'large-answer-child.ts'), args, {
      cwd: resolve(HERE, '..'),
      execArgv: ['--expose-gc', '--import', 'tsx'],
      // WARN lines (the -32009 refusals) go to stderr: shown only if the case fails.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    let report: LargeAnswerReport | undefined;
    child.on('message', (message) => {
      report = message as LargeAnswerReport;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (report) resolvePromise(report);
      else
        reject(
          new Error(`large-answer-child ${args.join(' ')} exited with ${code} and no report\n${stderr}`),
        );
    });
  });
}

export async function measureLargeAnswers(options: { runs: number }): Promise<LargeAnswerRow[]> {
  const upstream = await startLargeUpstream();
  const rows: LargeAnswerRow[] = [];
  try {
    for (const size of Object.keys(LARGE_SIZES) as LargeSize[]) {
      for (const kind of ['v1', 'v2'] as const) {
        for (const gzip of [false, true]) {
          const report = await runCase([
            kind,
            size,
            gzip ? 'gzip' : 'identity',
            upstream.url,
            String(options.runs),
          ]);
          const row: LargeAnswerRow = {
            kind,
            size,
            gzip,
            answerBytes: upstream.sizes[size]?.[kind] ?? Number.NaN,
            addedMedianMs: median(report.addedMs),
            upstreamMedianMs: median(report.upstreamMs),
            peakGrowthBytes: (report.peakMaxRssKb - report.baselineMaxRssKb) * 1024,
            baselineSlackBytes: (report.baselineMaxRssKb - report.rssBeforeKb) * 1024,
            statusCode: report.statusCode,
            errorCode: report.errorCode,
            responseBytes: report.responseBytes,
          };
          rows.push(row);
          progress(
            `  ${kind} ${size} ${gzip ? 'gzip' : 'identity'}: +${row.addedMedianMs.toFixed(1)} ms, ` +
              `peak +${(row.peakGrowthBytes / 1048576).toFixed(1)} MB` +
              (row.errorCode === null ? '' : ` (answered ${row.errorCode})`),
          );
        }
      }
    }
  } finally {
    await upstream.close();
  }
  return rows;
}
