// `orchard config`: every declared variable with its effective value and where that came from
// (env, file, default), then the configuration checked as a start would check it. Secrets are
// never printed: a set one shows as <redacted>, whatever its source.

import { ConfigError, type EnvVarMeta, envVarMeta } from '../infra/config/kinds.ts';
import { SECTIONS } from '../infra/config/sections.ts';
import { loadConfig } from '../infra/config.ts';

type Env = Record<string, string | undefined>;

const REDACTED = '<redacted>';

interface Row {
  name: string;
  value: string;
  source: string;
}

/** One variable: set (blank counts as unset, as loadConfig reads it), given through its `_FILE`, defaulted, or unset. */
function row(name: string, meta: EnvVarMeta, env: Env, declared: Set<string>): Row {
  const text = env[name]?.trim();
  if (text) return { name, value: meta.secret ? REDACTED : text, source: 'env' };
  const fileVar = `${name}_FILE`;
  if (declared.has(fileVar) && env[fileVar]?.trim()) return { name, value: REDACTED, source: `file (${fileVar})` };
  if (meta.default !== undefined)
    return { name, value: meta.default === '' ? '(empty)' : meta.default, source: 'default' };
  return { name, value: '-', source: 'unset' };
}

export function effectiveConfiguration(env: Env): string {
  const declared = new Set(SECTIONS.flatMap((s) => Object.keys(s.vars)));
  const blocks = SECTIONS.map((section) => ({
    title: section.title,
    rows: Object.entries(section.vars).map(([name, schema]) => row(name, envVarMeta.get(schema)!, env, declared)),
  }));
  const all = blocks.flatMap((b) => b.rows);
  const nameWidth = Math.max(...all.map((r) => r.name.length));
  const valueWidth = Math.min(48, Math.max(...all.map((r) => r.value.length)));
  return (
    blocks
      .map((b) =>
        [
          `# ${b.title}`,
          ...b.rows.map((r) => `${r.name.padEnd(nameWidth)}  ${r.value.padEnd(valueWidth)}  ${r.source}`),
        ].join('\n'),
      )
      .join('\n\n') + '\n'
  );
}

/** Prints the table; exit 1 (the problems on stderr, one line each) when a start would refuse this configuration. */
export async function configCommand(env: Env, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  await new Promise<void>((resolve, reject) =>
    out.write(effectiveConfiguration(env), (error) => (error ? reject(error) : resolve())),
  );
  try {
    loadConfig(env);
  } catch (error) {
    const problems = error instanceof ConfigError ? error.problems : [(error as Error).message];
    err.write(
      `configuration: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.map((p) => `  ${p}\n`).join('')}`,
    );
    return 1;
  }
  return 0;
}
