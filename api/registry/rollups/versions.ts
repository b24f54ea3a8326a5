// Ordering of version strings for the rollout view: `v` prefix ignored, dot-separated numeric
// parts compared as numbers (1.10 > 1.9), a release above its pre-releases (1.2.0 > 1.2.0-rc.1),
// anything else compared as text.

function parts(version: string): { main: (number | string)[]; pre: string | null } {
  const clean = version.trim().replace(/^v/i, '').split('+')[0]!;
  const dash = clean.indexOf('-');
  const main = (dash < 0 ? clean : clean.slice(0, dash)).split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  return { main, pre: dash < 0 ? null : clean.slice(dash + 1) };
}

export function compareVersions(a: string, b: string): number {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < Math.max(x.main.length, y.main.length); i++) {
    const p = x.main[i] ?? 0;
    const q = y.main[i] ?? 0;
    if (p === q) continue;
    if (typeof p === 'number' && typeof q === 'number') return p < q ? -1 : 1;
    return String(p) < String(q) ? -1 : 1;
  }
  if (x.pre === y.pre) return a < b ? -1 : a > b ? 1 : 0;
  if (x.pre === null) return 1;
  if (y.pre === null) return -1;
  return x.pre < y.pre ? -1 : 1;
}
