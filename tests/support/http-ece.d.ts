// http_ece ships no types: the part the push suites use (decrypting aes128gcm as a browser).
declare module 'http_ece' {
  import type { ECDH } from 'node:crypto';
  export interface EceParams {
    version: 'aes128gcm' | 'aesgcm' | 'aesgcm128';
    privateKey?: ECDH;
    authSecret?: Buffer | string;
    dh?: Buffer | string;
    keyid?: string;
  }
  const ece: { decrypt(buffer: Buffer, params: EceParams): Buffer; encrypt(buffer: Buffer, params: EceParams): Buffer };
  export default ece;
}
