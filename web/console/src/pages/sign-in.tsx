// Password sign-in (POST /auth/login). A wrong password and a locked account read the same (the
// server answers both 401 invalid_credentials); a 429 counts down `retry_after` before the form
// can be sent again; `local_auth_disabled` (forward-auth SSO) says to sign in through the proxy.

import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, type ApiErrorBody } from '../api/client.ts';
import { Page } from '../page.tsx';
import { loadSession, session } from '../session.ts';
import { handler } from '../ui/handler.ts';

/** Only a path of this console: never an absolute URL to elsewhere. */
export function safeNext(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-in') ? next : '/';
}

function SsoNotice() {
  return (
    <div class="panel" role="note">
      <p>
        This server signs people in through your organisation's single sign-on (forward-auth), not with a password here.
      </p>
      <p>Open the console through the SSO proxy's address; it signs you in on the first request.</p>
    </div>
  );
}

export function SignIn() {
  const { query, route } = useLocation();
  const state = session.value;
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [sso, setSso] = useState(false);
  const [wait, setWait] = useState(0);
  const [busy, setBusy] = useState(false);
  const errorRef = useRef<HTMLDivElement>(null);
  const next = safeNext(query.next);

  useEffect(() => {
    if (state?.authenticated) route(next, true);
  }, [state?.authenticated]);

  useEffect(() => {
    if (wait <= 0) return;
    const timer = setTimeout(() => setWait((w) => w - 1), 1000);
    return () => clearTimeout(timer);
  }, [wait]);

  async function submit(event: Event) {
    event.preventDefault();
    if (busy || wait > 0) return;
    setBusy(true);
    setMessage(null);
    const { error, response } = await api.POST('/auth/login', { body: { email, password } });
    setBusy(false);
    if (!error) {
      setPassword('');
      await loadSession();
      route(next, true);
      return;
    }
    const body = error as ApiErrorBody;
    if (response.status === 429) {
      const seconds = Math.max(1, Number(body.retry_after ?? response.headers.get('Retry-After') ?? 60));
      setWait(seconds);
      // Said once (the alert is not re-announced every second); the button counts down.
      setMessage(`Too many failed sign-ins from this address. You can try again in ${seconds} s.`);
    } else if (body.error === 'local_auth_disabled') {
      setSso(true);
    } else if (response.status === 401 || response.status === 400) {
      setMessage('The email or password is not right, or the account is locked for a while after failed attempts.');
    } else {
      setMessage(body.message ?? 'Sign-in failed; try again.');
    }
    setPassword('');
    requestAnimationFrame(() => errorRef.current?.focus());
  }

  if (state?.login === 'forward_auth' || sso)
    return (
      <Page title="Sign in">
        <SsoNotice />
      </Page>
    );

  return (
    <Page title="Sign in">
      <form
        class="form narrow"
        onSubmit={handler(submit)}
        noValidate
        aria-describedby={message ? 'sign-in-error' : undefined}
      >
        <div id="sign-in-error" class="form-error" role="alert" tabIndex={-1} ref={errorRef}>
          {message && <p>{message}</p>}
        </div>
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy || wait > 0}>
          {wait > 0 ? `Wait ${wait} s` : busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </Page>
  );
}
