// A test CA (made with @peculiar/x509 on node's WebCrypto) and a TLS terminator in front of a
// plain HTTP service: every TLS connection is piped to the service's port, WebSockets included.

import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { connect, type AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:tls';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as never);
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

async function pemKey(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key as never));
  return `-----BEGIN PRIVATE KEY-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END PRIVATE KEY-----\n`;
}

export interface TestCa {
  pem: string;
  /** A server certificate for these DNS names, signed by the CA: PEM key and chain. */
  issue(names: string[]): Promise<{ key: string; cert: string }>;
}

export async function makeCa(): Promise<TestCa> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=orchard test CA',
    notBefore: new Date(Date.now() - 3_600_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: ALG,
    keys: keys as never,
    extensions: [
      new x509.BasicConstraintsExtension(true, 1, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  let serial = 1;
  return {
    pem: ca.toString('pem'),
    async issue(names) {
      const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: (++serial).toString(16).padStart(2, '0'),
        subject: `CN=${names[0]}`,
        issuer: ca.subject,
        notBefore: new Date(Date.now() - 3_600_000),
        notAfter: new Date(Date.now() + 86_400_000),
        signingAlgorithm: ALG,
        publicKey: leafKeys.publicKey as never,
        signingKey: keys.privateKey as never,
        extensions: [
          new x509.BasicConstraintsExtension(false),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value }))),
        ],
      });
      return { key: await pemKey(leafKeys.privateKey), cert: cert.toString('pem') };
    },
  };
}

export interface Terminator {
  port: number;
  close(): Promise<void>;
}

/** TLS on a loopback port, piped to `target` (a plain http://host:port). */
export async function tlsTerminator(target: string, credentials: { key: string; cert: string }): Promise<Terminator> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer(credentials, (tlsSocket) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(tlsSocket);
    sockets.add(upstream);
    tlsSocket.pipe(upstream).pipe(tlsSocket);
    const end = () => {
      tlsSocket.destroy();
      upstream.destroy();
    };
    tlsSocket.on('error', end);
    upstream.on('error', end);
    tlsSocket.on('close', () => sockets.delete(tlsSocket));
    upstream.on('close', () => sockets.delete(upstream));
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
