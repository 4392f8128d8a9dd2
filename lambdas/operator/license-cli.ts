/**
 * @module operator/license-cli
 * `npm run license -- keygen | issue | verify`: create a signing key pair, issue a signed
 * license, check one. In-process (`runLicenseCli`) so tests drive it without a child process;
 * `bin/license.ts` only wires `process.argv` and the exit code.
 *
 * Exit codes: 0 success (verify: license valid), 1 failure (verify: license invalid, or a file
 * could not be read or written), 2 usage (`--help`, unknown command or option, missing value).
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  daysUntil,
  evaluateLicense,
  generateKeyPair,
  isIsoDate,
  parsePublicKey,
  signLicense,
} from '../platform/license.ts';

/** Where the CLI writes; `process.stdout` / `process.stderr` fit. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export const LICENSE_CLI_USAGE = `Usage: npm run license -- <command> [options]

Commands:
  keygen [--out-dir DIR] [--force]
      Create an Ed25519 key pair: DIR/license-private.pem (mode 0600, keep it secret) and
      DIR/license-public.pem (DIR defaults to the current directory). Prints the public key as
      one base64 line, the value for LICENSE_PUBLIC_KEY.
  issue --licensee NAME --valid-until YYYY-MM-DD --private-key FILE
      Print a signed license JSON document (put it in the license secret or LICENSE_FILE).
  verify --license FILE [--public-key FILE_OR_BASE64] [--now YYYY-MM-DD]
      Print {licensee, valid_until, is_valid, reason?, days_left}. Exit 0 when valid, 1 when not.
      Without --public-key the signature is not checked.

Exit codes: 0 ok, 1 invalid license or failure, 2 usage.
`;

class UsageError extends Error {}

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

function parseOptions(args: string[], options: OptionSpec): Record<string, string | boolean | undefined> {
  try {
    const { values } = parseArgs({ args, options, strict: true, allowPositionals: false });
    return values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function requiredString(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'error';
    throw new Error(`cannot read ${what} ${path} (${code})`);
  }
}

async function keygen(args: string[], io: CliIo): Promise<number> {
  const values = parseOptions(args, { 'out-dir': { type: 'string' }, force: { type: 'boolean' } });
  const outDir = resolve(typeof values['out-dir'] === 'string' ? values['out-dir'] : '.');
  const privatePath = join(outDir, 'license-private.pem');
  const publicPath = join(outDir, 'license-public.pem');
  const force = values.force === true;
  if (!force && (existsSync(privatePath) || existsSync(publicPath))) {
    io.stderr.write(`error: ${privatePath} or ${publicPath} already exists; pass --force to replace them\n`);
    return 1;
  }
  const pair = generateKeyPair();
  try {
    await mkdir(outDir, { recursive: true });
    await writeFile(privatePath, pair.privateKeyPem, { mode: 0o600, flag: force ? 'w' : 'wx' });
    // `mode` only applies to a new file: an overwritten one (--force) keeps its old mode.
    await chmod(privatePath, 0o600);
    await writeFile(publicPath, pair.publicKeyPem, { mode: 0o644, flag: force ? 'w' : 'wx' });
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'error';
    io.stderr.write(`error: cannot write the key files in ${outDir} (${code})\n`);
    return 1;
  }
  io.stderr.write(
    `wrote ${privatePath} (private: keep it secret, never deploy it)\n` +
      `wrote ${publicPath}\n` +
      'set LICENSE_PUBLIC_KEY to this line:\n',
  );
  io.stdout.write(`${pair.publicKeyBase64}\n`);
  return 0;
}

async function issue(args: string[], io: CliIo): Promise<number> {
  const values = parseOptions(args, {
    licensee: { type: 'string' },
    'valid-until': { type: 'string' },
    'private-key': { type: 'string' },
  });
  const licensee = requiredString(values, 'licensee');
  const validUntil = requiredString(values, 'valid-until');
  const keyPath = requiredString(values, 'private-key');
  if (!isIsoDate(validUntil)) throw new UsageError('--valid-until must be a date YYYY-MM-DD');
  const privateKeyPem = await readText(keyPath, 'private key file');
  const license = signLicense(licensee, validUntil, privateKeyPem);
  if (daysUntil(validUntil, new Date()) < 0) {
    io.stderr.write(`warning: ${validUntil} is in the past: this license is already expired\n`);
  }
  io.stdout.write(`${JSON.stringify(license, null, 2)}\n`);
  return 0;
}

async function verifyCommand(args: string[], io: CliIo): Promise<number> {
  const values = parseOptions(args, {
    license: { type: 'string' },
    'public-key': { type: 'string' },
    now: { type: 'string' },
  });
  const licensePath = requiredString(values, 'license');
  const keyOption = values['public-key'];
  const nowOption = values.now;
  let now: Date | undefined;
  if (typeof nowOption === 'string') {
    if (!isIsoDate(nowOption)) throw new UsageError('--now must be a date YYYY-MM-DD');
    now = new Date(`${nowOption}T12:00:00Z`);
  }
  let publicKey: string | undefined;
  if (typeof keyOption === 'string') {
    // A path to a PEM file, or the key itself (the LICENSE_PUBLIC_KEY form).
    publicKey = existsSync(keyOption) ? await readText(keyOption, 'public key file') : keyOption;
    if (parsePublicKey(publicKey) === undefined) {
      io.stderr.write('error: --public-key is neither a readable key file nor an Ed25519 public key\n');
      return 1;
    }
  } else {
    io.stderr.write('note: no --public-key given, the signature is not checked\n');
  }
  const text = await readText(licensePath, 'license file');
  const status = evaluateLicense(text, { publicKey, now });
  io.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
  return status.is_valid ? 0 : 1;
}

/**
 * Runs the license CLI with `argv` (the arguments after the script name) and returns the exit
 * code. Never throws: failures are printed to `io.stderr` without a stack trace.
 *
 * @example
 * process.exitCode = await runLicenseCli(process.argv.slice(2), process);
 */
export async function runLicenseCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (
      command === undefined ||
      command === '--help' ||
      command === '-h' ||
      command === 'help' ||
      rest.includes('--help') ||
      rest.includes('-h')
    ) {
      io.stderr.write(LICENSE_CLI_USAGE);
      return 2;
    }
    switch (command) {
      case 'keygen':
        return await keygen(rest, io);
      case 'issue':
        return await issue(rest, io);
      case 'verify':
        return await verifyCommand(rest, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`error: ${error.message}\n\n${LICENSE_CLI_USAGE}`);
      return 2;
    }
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
