// Byte strings: arrays of numbers on the wire (the spec's encryption wire contract), base64 in
// the log and the read models (a quarter of the size).

import { Buffer } from 'node:buffer';
import { z } from '@hono/zod-openapi';

export const toBase64 = (values: number[] | Uint8Array) =>
  Buffer.from(values instanceof Uint8Array ? values : Uint8Array.from(values)).toString('base64');
export const fromBase64 = (text: string): number[] => Array.from(Buffer.from(text, 'base64'));

/** A byte string of exactly `length` bytes, as the wire carries it. */
export const wireBytes = (length: number, description: string) =>
  z
    .array(z.number().int().min(0).max(255))
    .length(length)
    .openapi({ description: `${description} (${length} bytes as an array of numbers)` });
