/**
 * @module platform/audit/seal-signer-kms
 * The stack's seal signer (docs/guide/audit.md, "Sealed"): an asymmetric KMS key (`ECC_NIST_P256`)
 * whose key policy lets only the sealer's role sign. `Sign` is asked with the seal's SHA-256
 * (`MessageType: DIGEST`, `ECDSA_SHA_256`) and answers a DER signature; `GetPublicKey` answers the
 * key's SPKI DER, read once per instance.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { GetPublicKeyCommand, type KMSClient, SignCommand } from '@aws-sdk/client-kms';
import type { SealSigner } from './audit-chain.ts';

export class KmsSealSigner implements SealSigner {
  #publicKey: Promise<KeyObject> | undefined;

  constructor(
    private readonly client: KMSClient,
    private readonly keyId: string,
  ) {}

  publicKey(): Promise<KeyObject> {
    this.#publicKey ??= this.#readPublicKey().catch((error: unknown) => {
      this.#publicKey = undefined;
      throw error;
    });
    return this.#publicKey;
  }

  async #readPublicKey(): Promise<KeyObject> {
    const answer = await this.client.send(new GetPublicKeyCommand({ KeyId: this.keyId }));
    if (
      answer.PublicKey === undefined ||
      answer.KeySpec !== 'ECC_NIST_P256' ||
      (answer.KeyUsage !== undefined && answer.KeyUsage !== 'SIGN_VERIFY')
    ) {
      throw new Error(`KMS key ${this.keyId} is not an ECC_NIST_P256 signing key`);
    }
    return createPublicKey({ key: Buffer.from(answer.PublicKey), format: 'der', type: 'spki' });
  }

  async sign(bytes: Buffer): Promise<Buffer> {
    const answer = await this.client.send(
      new SignCommand({
        KeyId: this.keyId,
        Message: createHash('sha256').update(bytes).digest(),
        MessageType: 'DIGEST',
        SigningAlgorithm: 'ECDSA_SHA_256',
      }),
    );
    if (answer.Signature === undefined) throw new Error(`KMS key ${this.keyId} returned no signature`);
    return Buffer.from(answer.Signature);
  }
}
