// The e2ee library's figures (crypto/e2ee): CPU only, no database. Each figure is measured
// paired with the same operation done with node's built-in crypto (bench/e2ee-node.ts), in
// alternating slices (measure.ts, `paired`), and carries the ratio ours / node's.
//
//   e2ee_dm_encrypt_decrypt  messages/s  encryptDm + decryptDm on one chain (100-byte plaintext)
//   e2ee_ratchet_step        steps/s     a message each way in turn, so every decrypt does a DH
//                                        ratchet step (2 X25519 + 1 key pair + 2 root KDFs)
//   e2ee_x3dh_setup          setups/s    createInitiatorSession + first encryptDm + createResponderSession
//   e2ee_group_encrypt       messages/s  encryptGroup (100-byte plaintext)
//
// The baselines do only the cryptography (no wire objects, no validation), so a ratio is what
// the whole library path costs against native primitives. Symmetric figures run in batches of
// 50 messages per operation, so the loop's own cost does not count against them.

import {
  createInitiatorSession,
  createResponderSession,
  createSenderKey,
  decryptDm,
  encryptDm,
  encryptGroup,
  generateIdentityKeyPair,
  generateOneTimePrekeys,
  generateSignedPrekey,
  type KeyBundle,
  type Session,
} from '../crypto/e2ee/index.ts';
import { ed25519Keygen, NodeRatchet, nodeIdentity, NodeSenderKey, nodeX3dhSetup } from './e2ee-node.ts';
import { paired, type Operation, type Throughput } from './measure.ts';
import type { Figure } from './figure.ts';
export type { Figure } from './figure.ts';

const BATCH = 50;
const SLICES = 8;
const PLAINTEXT = new Uint8Array(100).fill(0x61);

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const round = (value: number, digits = 0) => Number(value.toFixed(digits));
const wire = (bytes: Uint8Array) => Array.from(bytes);

/** A sync unit of work as measure.ts's Operation: `units` per call. */
const operation =
  (work: () => void, units = 1): Operation =>
  async () => {
    work();
    return units;
  };

const batch = (work: () => void): Operation =>
  operation(() => {
    for (let i = 0; i < BATCH; i++) work();
  }, BATCH);

/** Alice's identity, Bob's identity and prekeys, and the bundle Alice fetches for Bob. */
function parties() {
  const alice = generateIdentityKeyPair();
  const bob = generateIdentityKeyPair();
  const spk = generateSignedPrekey(bob, 1);
  const [opk] = generateOneTimePrekeys(1, 1);
  const bundle: KeyBundle = {
    identity_key: wire(bob.publicKey),
    signed_prekey: { key_id: spk.keyId, public_key: wire(spk.publicKey), signature: wire(spk.signature) },
    one_time_prekey: { key_id: opk!.keyId, public_key: wire(opk!.publicKey) },
  };
  return { alice, bob, spk, opk: opk!, bundle };
}

/** A session pair after the handshake. */
function sessions(): { a: Session; b: Session } {
  const { alice, bob, spk, opk, bundle } = parties();
  const a = createInitiatorSession(alice, bundle);
  const { session: b } = createResponderSession(bob, spk, opk, encryptDm(a, PLAINTEXT));
  return { a, b };
}

function nodeSessions(): { a: NodeRatchet; b: NodeRatchet } {
  const { a, b } = nodeX3dhSetup(ed25519Keygen(), nodeIdentity(), PLAINTEXT);
  return { a, b };
}

/** Ours and node's operation for each figure. */
function workloads(): { name: string; unit: string; baseline: string; ours: Operation; node: Operation }[] {
  const dm = sessions();
  const nodeDm = nodeSessions();

  const pingPong = sessions();
  const nodePingPong = nodeSessions();
  // One message each way per call: both decrypts do a DH ratchet step.
  const ratchetSteps = operation(() => {
    decryptDm(pingPong.a, encryptDm(pingPong.b, PLAINTEXT));
    decryptDm(pingPong.b, encryptDm(pingPong.a, PLAINTEXT));
  }, 2);
  const nodeRatchetSteps = operation(() => {
    nodePingPong.a.decrypt(nodePingPong.b.encrypt(PLAINTEXT));
    nodePingPong.b.decrypt(nodePingPong.a.encrypt(PLAINTEXT));
  }, 2);

  const keys = parties();
  const x3dh = operation(() => {
    const a = createInitiatorSession(keys.alice, keys.bundle);
    createResponderSession(keys.bob, keys.spk, keys.opk, encryptDm(a, PLAINTEXT));
  });
  const nodeAlice = ed25519Keygen();
  const nodeBob = nodeIdentity();
  const nodeX3dh = operation(() => void nodeX3dhSetup(nodeAlice, nodeBob, PLAINTEXT));

  const group = createSenderKey('bench');
  const nodeGroup = new NodeSenderKey();

  return [
    {
      name: 'e2ee_dm_encrypt_decrypt',
      unit: 'messages/s',
      baseline: 'node_dm_encrypt_decrypt',
      ours: batch(() => void decryptDm(dm.b, encryptDm(dm.a, PLAINTEXT))),
      node: batch(() => void nodeDm.b.decrypt(nodeDm.a.encrypt(PLAINTEXT))),
    },
    {
      name: 'e2ee_ratchet_step',
      unit: 'steps/s',
      baseline: 'node_ratchet_step',
      ours: ratchetSteps,
      node: nodeRatchetSteps,
    },
    { name: 'e2ee_x3dh_setup', unit: 'setups/s', baseline: 'node_x3dh_setup', ours: x3dh, node: nodeX3dh },
    {
      name: 'e2ee_group_encrypt',
      unit: 'messages/s',
      baseline: 'node_group_encrypt',
      ours: batch(() => void encryptGroup(group, PLAINTEXT)),
      node: batch(() => void nodeGroup.encrypt(PLAINTEXT)),
    },
  ];
}

/**
 * Every e2ee figure and its node baseline, baseline first. `seconds` is each side's measured
 * time per figure (default 2; warm-up a quarter of it), so the whole run takes about 10 × seconds.
 */
export async function e2eeFigures(options: { seconds?: number } = {}): Promise<Figure[]> {
  const seconds = options.seconds ?? 2;
  if (!(seconds > 0)) throw new Error(`seconds must be a positive number, got ${seconds}`);
  const timing = { warmupMs: seconds * 250, measureMs: seconds * 1000, slices: SLICES };
  const describe = (name: string, t: Throughput) => progress(`${name}: ${round(t.perSecond)}/s, ${t.operations} ops`);
  const figures: Figure[] = [];
  for (const workload of workloads()) {
    progress(`${workload.baseline} paired with ${workload.name} (${seconds}s each)`);
    const [node, ours] = await paired([workload.node], [workload.ours], timing);
    describe(workload.baseline, node);
    describe(workload.name, ours);
    figures.push({ name: workload.baseline, value: round(node.perSecond), unit: workload.unit });
    figures.push({
      name: workload.name,
      value: round(ours.perSecond),
      unit: workload.unit,
      baseline: workload.baseline,
      ratio: round(ours.perSecond / node.perSecond, 3),
    });
  }
  return figures;
}
