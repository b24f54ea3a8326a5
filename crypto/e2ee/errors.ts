// One error class for the whole library, told apart by `code` so callers can branch on the kind
// of failure without parsing messages. Messages name the field or rule that failed and never
// include key material, plaintext or ciphertext.

export type E2eeErrorCode =
  /** A local argument has the wrong type or length (API misuse, not attacker input). */
  | 'invalid_argument'
  /** A wire object (DM, sender key message, bundle, distribution) is malformed. */
  | 'invalid_message'
  /** A wire object's `v` is not 1, or a serialised session's `version` is not 1. */
  | 'unsupported_version'
  /** An Ed25519 public key that does not decode to a curve point under RFC 8032 rules. */
  | 'invalid_key'
  /** A small-order Ed25519 or X25519 public key: a DH with it would be all zeros. */
  | 'small_order_key'
  /** The signed prekey's signature does not verify (strict RFC 8032) under the bundle identity. */
  | 'bad_signature'
  /** The first message names prekey ids other than the prekeys the responder passed in. */
  | 'prekey_mismatch'
  /** AEAD authentication failed: tampered message, wrong key or wrong associated data. */
  | 'decrypt_failed'
  /** Decrypting would need more skipped message keys than MAX_SKIP allows. */
  | 'too_many_skipped'
  /** A DM that this session has already decrypted. */
  | 'replay'
  /** A group message older than the receiver's chain whose key is not in the cache. */
  | 'stale_iteration'
  /** A group message from a different sender-key chain than the receiver's. */
  | 'chain_mismatch'
  /** A serialised session that is not valid JSON of the documented shape. */
  | 'invalid_session';

export class E2eeError extends Error {
  override name = 'E2eeError';
  readonly code: E2eeErrorCode;

  constructor(code: E2eeErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.code = code;
  }
}
