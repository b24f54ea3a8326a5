// Statements in flight on one connection while the caller computes the next one.
//
// node-postgres sends a connection's queries one at a time, each when the one before it has
// completed, and only while the event loop runs. So a caller that computes statement k+1 in a
// synchronous stretch overlaps that work with the server's work on statement k only if it
// yields once statement k is sent: `send` waits for the statement before the new one, which
// lets the new one go out, and returns while it runs.

export class Pipeline {
  private last: Promise<unknown> | null = null;
  private readonly sent: Promise<unknown>[] = [];

  /** Queue `statement` (already issued on the connection); resolves once the one before it completed. */
  async send(statement: Promise<unknown>): Promise<void> {
    // A failure is reported by `drain` (or by this wait, for the statement before); never unhandled.
    statement.catch(() => {});
    this.sent.push(statement);
    const before = this.last;
    this.last = statement;
    if (before) await before;
  }

  /** Wait for every statement sent; the first failure, if any. */
  async drain(): Promise<void> {
    await Promise.all(this.sent);
  }
}
