/**
 * The AWS SDK signer's hash interface over `node:crypto` (what `@smithy/hash-node` does), for the
 * tests that check our SigV4 signature against `@smithy/signature-v4`.
 */
import { createHash, createHmac } from 'node:crypto';

function bytes(data: ArrayBuffer | ArrayBufferView | string): string | Uint8Array {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** The SDK's hash interface over node:crypto (what @smithy/hash-node does). */
export class NodeSha256 {
  readonly #hash;
  constructor(secret?: ArrayBuffer | ArrayBufferView | string) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: ArrayBuffer | ArrayBufferView | string): void {
    this.#hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }
}
