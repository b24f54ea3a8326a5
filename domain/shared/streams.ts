// Declaring a stream category: `<service>.<aggregate>`, the part of a stream's name before its
// first `-` (EventStoreDB's $by_category convention), so `chat.message-<uuid>` is in category
// `chat.message`. Each service declares its categories in one table (domain/<service>/streams.ts,
// all four listed in domain/streams.ts), with the form of the id and the event types the streams
// carry; the stream-name functions come from there, so no name is spelled anywhere else.
//
// Categories are a public contract from 1.0 on: auditors and `readAll` filters select on them.

export type Service = 'orch' | 'chat' | 'registry' | 'platform';

/** `<service>.<aggregate>`: lowercase letters and underscores after the service. */
export const CATEGORY_RULE = /^(orch|chat|registry|platform)\.[a-z_]+$/;

export type IdPart = string | number;

export interface StreamCategory<P extends readonly IdPart[] = [id: string]> {
  /** The category, e.g. `chat.message`. */
  readonly category: string;
  readonly service: Service;
  /** What follows the `-`, e.g. `message uuid` or `<channel uuid>_<user uuid>`. */
  readonly id: string;
  /** The event types streams of this category carry. */
  readonly events: readonly string[];
  readonly description: string;
  /** `<category>-`: the prefix every stream of the category starts with (a `readAll` filter). */
  readonly prefix: string;
  /** The stream's name: the category, `-`, and the id parts joined by `_`. */
  readonly stream: (...idParts: P) => string;
}

/** Any declared category, whatever its id parts. */
export type AnyStreamCategory = Omit<StreamCategory, 'stream'> & { readonly stream: (...idParts: never[]) => string };

export function streamCategory<P extends readonly IdPart[] = [id: string]>(
  name: string,
  declaration: { id: string; events: readonly string[]; description: string },
): StreamCategory<P> {
  if (!CATEGORY_RULE.test(name))
    throw new Error(
      `stream category ${JSON.stringify(name)} does not follow <orch|chat|registry|platform>.<aggregate>`,
    );
  if (declaration.events.length === 0) throw new Error(`stream category ${name} carries no event type`);
  const prefix = `${name}-`;
  return Object.freeze({
    category: name,
    service: name.slice(0, name.indexOf('.')) as Service,
    id: declaration.id,
    events: Object.freeze([...declaration.events]),
    description: declaration.description,
    prefix,
    stream: (...idParts: P) => `${prefix}${idParts.join('_')}`,
  });
}

/** Some of an event list's types (a list whose types go to several categories), checked to be in it. */
export function only<T extends string>(list: readonly T[], ...types: T[]): readonly T[] {
  for (const type of types) if (!list.includes(type)) throw new Error(`${type} is not in the list`);
  return types;
}

/** The category of a stream name: the part before the first `-` (the whole name without one). */
export function categoryOf(stream: string): string {
  const dash = stream.indexOf('-');
  return dash === -1 ? stream : stream.slice(0, dash);
}
