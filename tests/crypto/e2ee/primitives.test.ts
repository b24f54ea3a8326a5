import { hkdfSync } from 'node:crypto';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSenderKey, encryptGroup } from '../../../crypto/e2ee/index.ts';
import { chainStep } from '../../../crypto/e2ee/chain-kdf.ts';
import { utf8 } from '../../../crypto/e2ee/primitives.ts';

const test = suite('crypto/e2ee/primitives');

test('the hand-rolled chain step is HKDF-SHA256 (noble and OpenSSL agree), for both infos', () => {
  for (const info of ['chatsvc-msg-key', 'chatsvc-sender-key-chain', '', 'x'.repeat(100)]) {
    for (let i = 0; i < 50; i++) {
      const chainKey = crypto.getRandomValues(new Uint8Array(32));
      const { messageKey, nextChainKey } = chainStep(chainKey, utf8(info));
      assert.equal(messageKey, hkdf(sha256, Uint8Array.of(1), chainKey, utf8(info), 32));
      assert.equal(nextChainKey, hkdf(sha256, Uint8Array.of(2), chainKey, utf8(info), 32));
      assert.equal(messageKey, new Uint8Array(hkdfSync('sha256', Uint8Array.of(1), chainKey, info, 32)));
    }
  }
});

test('nonces are unique across many messages (and across refills of the nonce pool)', () => {
  const state = createSenderKey('alice');
  const seen = new Set<string>();
  for (let i = 0; i < 3000; i++) seen.add(encryptGroup(state, new Uint8Array(1)).message.nonce.join(','));
  assert.is(seen.size, 3000);
});

test.run();
