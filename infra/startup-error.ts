// A reason the platform cannot start that the operator can fix (a port taken, a database
// unreachable, a data directory not writable). The CLI prints its message as one line and exits
// non-zero, without a stack trace; the message names the setting to change.

export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** A connection URL fit for a message: the password never appears. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
