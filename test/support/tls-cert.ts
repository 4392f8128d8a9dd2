/**
 * A self-signed certificate for 127.0.0.1, made by `openssl` (an EC P-256 key, valid a day), for
 * the loopback TLS servers of the tests and benchmarks. A process trusts it through a `ca` option
 * or `NODE_EXTRA_CA_CERTS` (its `certFile`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LoopbackCert {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly certFile: string;
  readonly keyFile: string;
}

/** Writes `cert.pem` and `key.pem` into `dir` (made if needed) and returns them. */
export function loopbackCert(dir: string): LoopbackCert {
  mkdirSync(dir, { recursive: true });
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(certFile), key: readFileSync(keyFile), certFile, keyFile };
}
