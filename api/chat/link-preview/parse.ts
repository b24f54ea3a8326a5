// What a link preview shows, from a page's HTML: Open Graph first (`og:title`,
// `og:description`, `og:site_name`, `og:image`), then `<title>` and `<meta name=description>`.
// Plain text only (tags stripped, entities decoded, whitespace collapsed), each field capped.

export interface PageSummary {
  title: string | null;
  description: string | null;
  site_name: string | null;
  image: string | null;
}

export const CAPS = { title: 300, description: 1000, site_name: 200 };

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1]?.toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function plain(text: string | undefined, cap: number): string | null {
  if (!text) return null;
  const cleaned = decodeEntities(text.replace(/<[^>]*>/g, ' '))
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!cleaned) return null;
  return [...cleaned].length > cap ? [...cleaned].slice(0, cap - 1).join('') + '…' : cleaned;
}

function attributes(tag: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-zA-Z_:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g))
    found[m[1]!.toLowerCase()] = m[2] ?? m[3] ?? m[4] ?? '';
  return found;
}

/** The charset a page declares (header first, then `<meta charset>`), when TextDecoder knows it. */
export function decodeHtml(body: Buffer, contentType: string): string {
  const fromHeader = /charset\s*=\s*"?([\w-]+)/i.exec(contentType)?.[1];
  const head = body.subarray(0, 2048).toString('latin1');
  const fromMeta = /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1];
  for (const label of [fromHeader, fromMeta, 'utf-8']) {
    if (!label) continue;
    try {
      return new TextDecoder(label).decode(body);
    } catch {
      // unknown label: try the next
    }
  }
  return body.toString('utf8');
}

export function summarise(html: string): PageSummary {
  const meta: Record<string, string> = {};
  for (const m of html.matchAll(/<meta\b(?:[^>"']|"[^"]*"|'[^']*')*>/gi)) {
    const a = attributes(m[0]);
    const key = (a.property ?? a.name ?? '').toLowerCase();
    if (key && a.content !== undefined && !(key in meta)) meta[key] = a.content;
  }
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  return {
    title: plain(meta['og:title'] ?? meta['twitter:title'] ?? title, CAPS.title),
    description: plain(meta['og:description'] ?? meta['twitter:description'] ?? meta.description, CAPS.description),
    site_name: plain(meta['og:site_name'], CAPS.site_name),
    image:
      (meta['og:image:secure_url'] ?? meta['og:image'] ?? meta['og:image:url'] ?? meta['twitter:image'] ?? '').trim() ||
      null,
  };
}
