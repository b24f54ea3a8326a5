// JSON-lines logging. Every line is one object: time, level, msg, then fields (the request id
// among them). Fields whose names say they hold a secret are replaced before writing, so a
// careless call site cannot leak a key, password, token or cookie into a log line.

export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const SECRET_FIELD = /(pass(word)?|secret|token|api[_-]?key|cookie|authorization|csrf|session|credential|private)/i;
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') {
    return typeof value === 'bigint' ? value.toString() : value;
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] =
      SECRET_FIELD.test(key) && v !== null && typeof v !== 'boolean' && typeof v !== 'object'
        ? '[redacted]'
        : redact(v, depth + 1);
  }
  return out;
}

export function createLogger(
  options: { level?: Level; sink?: (line: string) => void; base?: Record<string, unknown> } = {},
): Logger {
  const min = ORDER[options.level ?? 'info'];
  const sink = options.sink ?? ((line: string) => process.stdout.write(line + '\n'));
  const base = options.base ?? {};
  const write = (level: Level, msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[level] < min) return;
    sink(JSON.stringify({ time: new Date().toISOString(), level, msg, ...(redact({ ...base, ...fields }) as object) }));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger({ ...options, base: { ...base, ...fields } }),
  };
}
