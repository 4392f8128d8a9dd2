/**
 * @module platform/audit/seal-signer-local
 * The local sealer's signing key (docs/guide/audit.md, "Locally"): a P-256 private key in a PKCS #8
 * PEM file (`AUDIT_SEAL_KEY_FILE`, git-ignored), created on first use with mode 0600 and kept, so a
 * local proxy's seals verify across restarts. Signatures are DER ECDSA over SHA-256, as the stack's
 * KMS key gives them.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { keyPairSigner, type SealSigner } from './audit-chain.ts';

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** The key pair of the file at `path`; `create`: made (P-256, mode 0600) when there is none. */
export async function localSealKeys(
  path: string,
  options: { readonly create: boolean },
): Promise<{ readonly privateKey: KeyObject; readonly publicKey: KeyObject } | undefined> {
  let pem: string;
  try {
    pem = await readFile(path, 'utf8');
  } catch (error) {
    if (code(error) !== 'ENOENT' || !options.create) {
      if (code(error) === 'ENOENT') return undefined;
      throw error;
    }
    const made = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    try {
      await writeFile(path, made.privateKey.export({ type: 'pkcs8', format: 'pem' }), {
        mode: 0o600,
        flag: 'wx',
      });
    } catch (writeError) {
      // Another process made it first: use that one.
      if (code(writeError) !== 'EEXIST') throw writeError;
    }
    pem = await readFile(path, 'utf8');
  }
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error(`${path} is not a P-256 private key`);
  }
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/** The local sealer's signer: the key of `path`, made on first use. */
export function localSealSigner(path: string): SealSigner {
  let keys: ReturnType<typeof localSealKeys> | undefined;
  const held = async () => {
    keys ??= localSealKeys(path, { create: true });
    const pair = await keys;
    if (pair === undefined) throw new Error(`no seal key at ${path}`);
    return keyPairSigner(pair);
  };
  return {
    publicKey: async () => (await held()).publicKey(),
    sign: async (bytes) => (await held()).sign(bytes),
  };
}
