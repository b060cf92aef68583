/**
 * Sealing secrets at rest: AES-256-GCM under the key in STEWARD_SECRETS_KEY, a fresh 96-bit nonce per seal, and
 * additional data that binds each ciphertext to its row (so a sealed value moved to another row does not open).
 * Each key has an id (the start of its SHA-256), stored with every row, so older keys can still open their rows
 * until those are sealed again under the current key.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { StewardError } from '../engine/errors.ts';

/** A 256-bit key and its id. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

/** A sealed value: the key it was sealed with, the nonce, and ciphertext followed by the 16-byte tag. */
export interface Sealed {
  keyId: string;
  nonce: Buffer;
  ciphertext: Buffer;
}

const TAG_BYTES = 16;

/** Reads a key written as base64 (or hex) of 32 random bytes, e.g. `openssl rand -base64 32`. */
export function parseSecretKey(text: string, name = 'STEWARD_SECRETS_KEY'): SecretKey {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) {
    throw new StewardError(
      'config',
      `${name} must be 32 random bytes in base64 (e.g. the output of \`openssl rand -base64 32\`); it decodes to ${key.length} bytes`,
    );
  }
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 16), key };
}

/** Seals with the current key; opens with it or any older key still listed. */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();

  constructor(
    private readonly current: SecretKey,
    older: readonly SecretKey[] = [],
  ) {
    for (const k of [current, ...older]) this.keys.set(k.id, k.key);
  }

  /** The id of the key new seals use. */
  get currentKeyId(): string {
    return this.current.id;
  }

  seal(plaintext: string, boundTo: string): Sealed {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { keyId: this.current.id, nonce, ciphertext: body };
  }

  /** Throws `StewardError('config')` for a key it does not hold, and for a value that fails authentication. */
  open(sealed: Sealed, boundTo: string): string {
    const key = this.keys.get(sealed.keyId);
    if (!key) {
      throw new StewardError(
        'config',
        `a stored secret was sealed with key ${sealed.keyId}, which is neither STEWARD_SECRETS_KEY nor in STEWARD_SECRETS_OLD_KEYS`,
      );
    }
    const body = sealed.ciphertext;
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.nonce);
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch (cause) {
      throw new StewardError(
        'config',
        `a stored secret failed authentication (key ${sealed.keyId}): altered or moved`,
        {
          cause,
        },
      );
    }
  }
}
