// The e2ee library's operations done again with node's built-in crypto (OpenSSL), as the
// baselines of bench/e2ee.ts: the same KDF inputs, the same AEAD with the same AAD, the same
// DHs and signature check, step for step. Only the cryptographic work is reproduced: no wire
// objects, no input validation, no state-unchanged-on-failure bookkeeping, so each ratio says
// what the whole library path costs against native primitives doing the same cryptography.

import { Buffer } from 'node:buffer';
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';

// Raw keys go in and out as JWK: node takes no raw X25519/Ed25519 bytes, and its DER (PKCS#8 /
// SPKI) import goes through OpenSSL 3's decoder search, about 15 times slower than JWK here, which
// would make the baselines look worse than node really is. Own keys stay KeyObjects, as a native
// implementation would keep them; a peer's public key is imported from its raw bytes each time.
const CURVE = { ed25519: 'Ed25519', x25519: 'X25519' } as const;
const b64 = (raw: Uint8Array) => Buffer.from(raw).toString('base64url');
// A private JWK must carry `x`, but node derives the public key from `d` and ignores it.
const privateKey = (kind: 'ed25519' | 'x25519', raw: Uint8Array): KeyObject =>
  createPrivateKey({ key: { kty: 'OKP', crv: CURVE[kind], d: b64(raw), x: '' }, format: 'jwk' });
const publicKey = (kind: 'ed25519' | 'x25519', raw: Uint8Array): KeyObject =>
  createPublicKey({ key: { kty: 'OKP', crv: CURVE[kind], x: b64(raw) }, format: 'jwk' });
const jwk = (key: KeyObject) => key.export({ format: 'jwk' }) as { x: string; d?: string };
const rawPublic = (key: KeyObject): Buffer => Buffer.from(jwk(key).x, 'base64url');

export interface KeyPair {
  publicKey: Buffer;
  privateKey: KeyObject;
}

export function x25519Keygen(): KeyPair {
  const pair = generateKeyPairSync('x25519');
  return { publicKey: rawPublic(pair.publicKey), privateKey: pair.privateKey };
}

/** Ed25519 identity; the seed is kept for the spec's conversion to an X25519 secret. */
export function ed25519Keygen(): KeyPair & { seed: Buffer } {
  const pair = generateKeyPairSync('ed25519');
  return {
    publicKey: rawPublic(pair.publicKey),
    privateKey: pair.privateKey,
    seed: Buffer.from(jwk(pair.privateKey).d!, 'base64url'),
  };
}

export const dh = (own: KeyObject, theirs: Uint8Array): Buffer =>
  diffieHellman({ privateKey: own, publicKey: publicKey('x25519', theirs) });

const hkdf = (ikm: Uint8Array, salt: Uint8Array, info: string, length: number): Buffer =>
  Buffer.from(hkdfSync('sha256', ikm, salt, info, length));

/** The spec's Ed25519 → X25519 secret conversion: SHA-512 of the seed, first 32 bytes, clamped. */
function edSecretToX(seed: Uint8Array): KeyObject {
  const s = createHash('sha512').update(seed).digest().subarray(0, 32);
  s[0]! &= 248;
  s[31]! &= 127;
  s[31]! |= 64;
  return privateKey('x25519', s);
}

const P = 2n ** 255n - 19n;
/** Public conversion u = (1 + y) / (1 - y) mod p; node has none, so BigInt does it. */
function edPublicToX(pub: Uint8Array): Buffer {
  const le = Buffer.from(pub);
  le[31]! &= 0x7f;
  const y = BigInt(`0x${Buffer.from(le).reverse().toString('hex')}`);
  let inverse = 1n;
  for (let b = (1n - y + P) % P, e = P - 2n; e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) inverse = (inverse * b) % P;
  return Buffer.from((((1n + y) * inverse) % P).toString(16).padStart(64, '0'), 'hex').reverse();
}

const chainStep = (chainKey: Uint8Array, info: string) => ({
  messageKey: hkdf(Buffer.of(1), chainKey, info, 32),
  nextChainKey: hkdf(Buffer.of(2), chainKey, info, 32),
});

const rootStep = (rootKey: Uint8Array, dhOut: Uint8Array) => {
  const out = hkdf(dhOut, rootKey, 'chatsvc-ratchet', 64);
  return { rootKey: out.subarray(0, 32), chainKey: out.subarray(32) };
};

function seal(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Buffer {
  const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
  if (aad) cipher.setAAD(aad, { plaintextLength: plaintext.length });
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function open(key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad?: Uint8Array): Buffer {
  const decipher = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
  if (aad) decipher.setAAD(aad, { plaintextLength: sealed.length - 16 });
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]);
}

interface Sent {
  header: { ratchetKey: Buffer; previousChainLength: number; messageNumber: number };
  ciphertext: Buffer;
  nonce: Buffer;
}

const aad = (ad: Uint8Array, header: Sent['header']) =>
  Buffer.concat([
    ad,
    Buffer.from(
      JSON.stringify({
        ratchet_key: Array.from(header.ratchetKey),
        previous_chain_length: header.previousChainLength,
        message_number: header.messageNumber,
      }),
    ),
  ]);

/** One side of a Double Ratchet session, in-order delivery only (what the figures exercise). */
export class NodeRatchet {
  private sending: Buffer | null = null;
  private receiving: Buffer | null = null;
  private sent = 0;
  private previous = 0;
  private remote: Buffer | null;

  constructor(
    private readonly ad: Uint8Array,
    private rootKey: Buffer,
    private self: KeyPair,
    remote: Buffer | null,
  ) {
    this.remote = remote;
    if (remote) {
      const root = rootStep(rootKey, dh(self.privateKey, remote));
      this.rootKey = root.rootKey;
      this.sending = root.chainKey;
    }
  }

  static initiator(ad: Uint8Array, sharedSecret: Buffer, signedPrekey: Buffer): NodeRatchet {
    return new NodeRatchet(ad, sharedSecret, x25519Keygen(), signedPrekey);
  }

  static responder(ad: Uint8Array, sharedSecret: Buffer, signedPrekey: KeyPair): NodeRatchet {
    return new NodeRatchet(ad, sharedSecret, signedPrekey, null);
  }

  encrypt(plaintext: Uint8Array): Sent {
    const { messageKey, nextChainKey } = chainStep(this.sending!, 'chatsvc-msg-key');
    const header = { ratchetKey: this.self.publicKey, previousChainLength: this.previous, messageNumber: this.sent };
    const nonce = randomBytes(12);
    this.sending = nextChainKey;
    this.sent += 1;
    return { header, nonce, ciphertext: seal(messageKey, nonce, plaintext, aad(this.ad, header)) };
  }

  decrypt(message: Sent): Buffer {
    if (!this.remote || !message.header.ratchetKey.equals(this.remote)) {
      const received = rootStep(this.rootKey, dh(this.self.privateKey, message.header.ratchetKey));
      this.self = x25519Keygen();
      const sending = rootStep(received.rootKey, dh(this.self.privateKey, message.header.ratchetKey));
      this.rootKey = sending.rootKey;
      this.previous = this.sent;
      this.sending = sending.chainKey;
      this.sent = 0;
      this.receiving = received.chainKey;
      this.remote = message.header.ratchetKey;
    }
    const { messageKey, nextChainKey } = chainStep(this.receiving!, 'chatsvc-msg-key');
    this.receiving = nextChainKey;
    return open(messageKey, message.nonce, message.ciphertext, aad(this.ad, message.header));
  }
}

export interface NodeIdentity {
  identity: KeyPair & { seed: Buffer };
  signedPrekey: KeyPair & { signature: Buffer };
  oneTimePrekey: KeyPair;
}

export function nodeIdentity(): NodeIdentity {
  const identity = ed25519Keygen();
  const spk = x25519Keygen();
  return {
    identity,
    signedPrekey: { ...spk, signature: sign(null, spk.publicKey, identity.privateKey) },
    oneTimePrekey: x25519Keygen(),
  };
}

const x3dhSecret = (dhs: Buffer[]) =>
  hkdf(Buffer.concat([Buffer.alloc(32, 0xff), ...dhs]), Buffer.alloc(32), 'chatsvc-x3dh-shared-secret', 32);

/** A whole X3DH handshake: Alice's session, her first message, Bob's session from it. */
export function nodeX3dhSetup(
  alice: KeyPair & { seed: Buffer },
  bob: NodeIdentity,
  plaintext: Uint8Array,
): { a: NodeRatchet; b: NodeRatchet; plaintext: Buffer } {
  // Initiator.
  if (
    !verify(null, bob.signedPrekey.publicKey, publicKey('ed25519', bob.identity.publicKey), bob.signedPrekey.signature)
  ) {
    throw new Error('bad signature');
  }
  const ephemeral = x25519Keygen();
  const sharedSecret = x3dhSecret([
    dh(edSecretToX(alice.seed), bob.signedPrekey.publicKey),
    dh(ephemeral.privateKey, edPublicToX(bob.identity.publicKey)),
    dh(ephemeral.privateKey, bob.signedPrekey.publicKey),
    dh(ephemeral.privateKey, bob.oneTimePrekey.publicKey),
  ]);
  const ad = Buffer.concat([alice.publicKey, bob.identity.publicKey]);
  const a = NodeRatchet.initiator(ad, sharedSecret, bob.signedPrekey.publicKey);
  const first = a.encrypt(plaintext);
  // Responder.
  const theirSecret = x3dhSecret([
    dh(bob.signedPrekey.privateKey, edPublicToX(alice.publicKey)),
    dh(edSecretToX(bob.identity.seed), ephemeral.publicKey),
    dh(bob.signedPrekey.privateKey, ephemeral.publicKey),
    dh(bob.oneTimePrekey.privateKey, ephemeral.publicKey),
  ]);
  const b = NodeRatchet.responder(ad, theirSecret, bob.signedPrekey);
  return { a, b, plaintext: b.decrypt(first) };
}

/** A sender-key chain: chain step and AEAD without AAD. */
export class NodeSenderKey {
  private iteration = 0;
  constructor(private chainKey: Buffer = randomBytes(32)) {}

  encrypt(plaintext: Uint8Array): { iteration: number; ciphertext: Buffer; nonce: Buffer } {
    const { messageKey, nextChainKey } = chainStep(this.chainKey, 'chatsvc-sender-key-chain');
    const nonce = randomBytes(12);
    this.chainKey = nextChainKey;
    return { iteration: this.iteration++, ciphertext: seal(messageKey, nonce, plaintext), nonce };
  }
}
