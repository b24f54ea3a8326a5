// Multipart bodies and small real images for the upload suites.

import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: string | Uint8Array;
}

export function multipart(parts: Part[]): { body: Uint8Array; contentType: string } {
  const boundary = `----orchard${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    const type = p.filename !== undefined ? `\r\nContent-Type: ${p.contentType ?? 'application/octet-stream'}` : '';
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`),
      Buffer.from(p.data),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: new Uint8Array(Buffer.concat(chunks)), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The request options of a one-file upload (`http()` of tests/support/services.ts). */
export function fileUpload(
  account: { access: string },
  data: string | Uint8Array,
  options: { filename?: string; fields?: Record<string, string>; extra?: Part[] } = {},
) {
  const parts: Part[] = [
    ...Object.entries(options.fields ?? {}).map(([name, value]) => ({ name, data: value })),
    { name: 'file', filename: options.filename ?? 'notes.txt', data },
    ...(options.extra ?? []),
  ];
  const { body, contentType } = multipart(parts);
  return { method: 'POST', headers: { authorization: `Bearer ${account.access}`, 'content-type': contentType }, body };
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

/** A valid w×h RGB PNG whose pixels depend on `seed` (different seeds, different bytes). */
export function png(seed = 0, width = 2, height = 2): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let i = 1; i < row.length; i++) row[i] = (seed * 31 + y * 7 + i) & 0xff;
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const SVG =
  '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><script>alert(1)</script></svg>';
