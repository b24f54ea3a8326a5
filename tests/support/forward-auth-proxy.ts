// A forward-auth reverse proxy for tests: node http in front of a service, adding the identity
// headers of the person it has "signed in" to every request, WebSocket upgrades included (the
// upgrade is forwarded and both sockets piped). Identity headers a client sends are dropped, as a
// real proxy does. It connects to the service from `localAddress` (a loopback address of its own,
// e.g. 127.0.0.3), so the service can trust exactly that peer. The Host header passes through
// unchanged: the service sees the browser's origin, as behind a real proxy.

import { request, createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Identity {
  username: string;
  email: string;
  groups: string[];
}

export interface ForwardAuthProxy {
  url: string;
  /** Upgrades forwarded, by path, with the status the service answered (101 when it switched). */
  upgrades: { path: string; status: number }[];
  close(): Promise<void>;
}

const IDENTITY = ['x-idp-username', 'x-idp-email', 'x-idp-groups'];

function forwardedHeaders(incoming: IncomingHttpHeaders, who: Identity): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming))
    if (!IDENTITY.includes(name) && value !== undefined) headers[name] = value;
  headers['x-idp-username'] = who.username;
  headers['x-idp-email'] = who.email;
  headers['x-idp-groups'] = who.groups.join('|');
  return headers;
}

function rawHead(status: number, message: string, headers: IncomingHttpHeaders): string {
  const lines = [`HTTP/1.1 ${status} ${message}`];
  for (const [name, value] of Object.entries(headers)) {
    for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined) lines.push(`${name}: ${one}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export async function startForwardAuthProxy(
  target: string,
  who: Identity,
  localAddress = '127.0.0.3',
): Promise<ForwardAuthProxy> {
  const upstream = new URL(target);
  const base = { hostname: upstream.hostname, port: upstream.port, localAddress };
  const sockets = new Set<Socket>();
  const upgrades: ForwardAuthProxy['upgrades'] = [];

  const server = createServer((req, res) => {
    const out = request(
      { ...base, method: req.method, path: req.url, headers: forwardedHeaders(req.headers, who) },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(out);
  });

  server.on('upgrade', (req, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const out = request({ ...base, method: req.method, path: req.url, headers: forwardedHeaders(req.headers, who) });
    out.on('upgrade', (answer, service: Socket, serviceHead: Buffer) => {
      upgrades.push({ path: req.url ?? '', status: 101 });
      sockets.add(service);
      service.on('close', () => sockets.delete(service));
      service.on('error', () => client.destroy());
      client.write(rawHead(101, answer.statusMessage ?? 'Switching Protocols', answer.headers));
      if (serviceHead.length) client.write(serviceHead);
      if (head.length) service.write(head);
      service.pipe(client);
      client.pipe(service);
      client.on('close', () => service.destroy());
      service.on('close', () => client.destroy());
    });
    // Refused (403 cross-origin, 401): the answer goes back as is and the socket closes.
    out.on('response', (answer) => {
      upgrades.push({ path: req.url ?? '', status: answer.statusCode ?? 0 });
      client.write(rawHead(answer.statusCode ?? 502, answer.statusMessage ?? '', answer.headers));
      answer.pipe(client);
    });
    out.on('error', () => client.destroy());
    out.end();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    upgrades,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
