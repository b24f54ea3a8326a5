// Chunk tsvectors as a binary tsvector[] parameter (infra/db/binary-params.ts): the lexemes the
// service computed (domain/orchestration/estate/lexemes.ts), stored by PostgreSQL as they are.
// The tsvector_recv format: the lexeme count, then each lexeme as UTF-8 ending in a zero byte,
// its number of positions (uint16) and the positions (uint16, weight bits 0). PostgreSQL sorts
// the lexemes itself, so any order in is the same tsvector.

import type { Lexicon, TextLexemes } from '../../domain/orchestration/estate/lexemes.ts';
import { arrayHeader, OID } from '../../infra/db/binary-params.ts';

export function tsvectorArray(lexicon: Lexicon, items: TextLexemes[]): Buffer {
  let size = 20;
  for (const { ids, positions } of items) {
    size += 8 + positions.length * 2;
    for (let k = 0; k < ids.length; k++) size += lexicon.utf8Length(ids[k]!) + 3;
  }
  const out = Buffer.allocUnsafe(size);
  let at = arrayHeader(out, OID.tsvector, items.length);
  for (const { ids, offsets, positions } of items) {
    const lengthAt = at;
    at = out.writeInt32BE(ids.length, at + 4);
    for (let k = 0; k < ids.length; k++) {
      at = lexicon.copyUtf8(ids[k]!, out, at);
      out[at++] = 0;
      const from = offsets[k]!;
      const to = offsets[k + 1]!;
      out[at++] = (to - from) >>> 8;
      out[at++] = (to - from) & 0xff;
      for (let p = from; p < to; p++) {
        out[at++] = positions[p]! >>> 8;
        out[at++] = positions[p]! & 0xff;
      }
    }
    out.writeInt32BE(at - lengthAt - 4, lengthAt);
  }
  return out.subarray(0, at);
}
