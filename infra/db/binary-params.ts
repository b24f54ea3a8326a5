// Query parameters in PostgreSQL's binary format. node-postgres sends a Buffer parameter as
// binary, and the server then reads it with the type's receive function instead of
// parsing text: for an array of long texts, array_in's character-by-character parsing (with
// quoting and escapes on both sides) costs more than everything else done with them. (Results
// stay in text: node-postgres decodes every result field as UTF-8, which would corrupt binary.)
//
// The array_recv format: dimensions (1), a has-nulls flag (0), the element type's OID, the
// length and lower bound (1) of the dimension, then each element as its byte length (int32)
// and its bytes in the element type's own binary format.

/** Type OIDs (pg_type) of the element types written here. */
export const OID = { bytea: 17, text: 25, tsvector: 3614 } as const;

const HEADER = 20;

/** Write the header of a one-dimensional array of `count` non-null elements; the offset after it. */
export function arrayHeader(out: Buffer, elementOid: number, count: number): number {
  out.writeInt32BE(1, 0);
  out.writeInt32BE(0, 4);
  out.writeInt32BE(elementOid, 8);
  out.writeInt32BE(count, 12);
  out.writeInt32BE(1, 16);
  return HEADER;
}

/** text[] in binary: each text's UTF-8 bytes, unparsed by the server. */
export function textArray(values: string[]): Buffer {
  let size = HEADER;
  for (const v of values) size += 4 + Buffer.byteLength(v, 'utf8');
  const out = Buffer.allocUnsafe(size);
  let at = arrayHeader(out, OID.text, values.length);
  for (const v of values) {
    const bytes = out.write(v, at + 4, 'utf8');
    out.writeInt32BE(bytes, at);
    at += 4 + bytes;
  }
  return out;
}

/** bytea[] in binary: the values' bytes as they are. */
export function byteaArray(values: Uint8Array[]): Buffer {
  let size = HEADER;
  for (const v of values) size += 4 + v.length;
  const out = Buffer.allocUnsafe(size);
  let at = arrayHeader(out, OID.bytea, values.length);
  for (const v of values) {
    at = out.writeInt32BE(v.length, at);
    out.set(v, at);
    at += v.length;
  }
  return out;
}
