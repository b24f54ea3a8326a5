// Your account (`/account`, every signed-in account; the banner's name links here): who you are,
// from the session the shell already holds, and "Rotate my API key" (POST /api/me/api-key/rotate,
// a browser-session-only route): a confirmation whose safe answer has focus, then the new key
// shown once (KeyOnce), dropped from the page when that dialog closes.
//
// The current key is not shown, and the page never asks for it: GET /api/me would send it to the
// browser, so who you are comes from GET /auth/session instead. A key is a secret shown once, when
// it is made; one that is lost is replaced by rotating it.

import { useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { Page } from '../page.tsx';
import { session } from '../session.ts';
import { Confirm } from '../ui/dialog.tsx';
import { problem } from '../ui/errors.ts';
import { KeyOnce, nextFrame, type ShownKey } from '../ui/key-once.tsx';
import { handler } from '../ui/handler.ts';

const ROLE_WORDS: Record<string, string> = {
  admin: 'admin: everything, administration included',
  user: 'user: reads and writes projects, tasks and agents',
  readonly: 'readonly: reads only',
};

export function Account() {
  const state = session.value;
  const user = state?.user;
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [shown, setShown] = useState<ShownKey | null>(null);

  async function rotate() {
    if (busy) return;
    setBusy(true);
    setError(null);
    const { data, error: refused } = await api.POST('/api/me/api-key/rotate');
    setBusy(false);
    if (!data) return setError(problem(refused).message);
    setConfirming(false);
    await nextFrame();
    setShown({ username: data.username, apiKey: data.api_key, kind: 'self' });
  }

  return (
    <Page title="Your account">
      {user && (
        <section aria-labelledby="who-heading">
          <h2 id="who-heading">Who you are</h2>
          <dl class="pairs">
            <div>
              <dt>Username</dt>
              <dd>{user.username}</dd>
            </div>
            <div>
              <dt>Email</dt>
              <dd>{user.email}</dd>
            </div>
            <div>
              <dt>Role</dt>
              <dd>{ROLE_WORDS[user.role] ?? user.role}</dd>
            </div>
            <div>
              <dt>Signed in by</dt>
              <dd>{state?.login === 'forward_auth' ? "single sign-on (your organisation's proxy)" : 'password'}</dd>
            </div>
          </dl>
        </section>
      )}
      <section aria-labelledby="key-heading">
        <h2 id="key-heading">API key</h2>
        <p>
          Your API key lets scripts and the command line act as you (the <code>X-API-Key</code> header). It was shown
          once, when it was made, and is not shown here.
        </p>
        <p>
          Rotating makes a new key and shows it once; your current key stops working at that moment. Rotate it when it
          may have leaked, or when you have lost it.
        </p>
        <button
          type="button"
          id="rotate-my-key"
          onClick={() => {
            setError(null);
            setConfirming(true);
          }}
        >
          Rotate my API key
        </button>
      </section>
      {confirming && (
        <Confirm
          title="Rotate your API key?"
          confirm="Rotate my key"
          busy={busy}
          error={error}
          question="A new key is made and shown once. Your current key stops working immediately: scripts and tools using it get 401 until they have the new one."
          onConfirm={handler(rotate)}
          onClose={() => setConfirming(false)}
        />
      )}
      {shown && (
        <KeyOnce
          shown={shown}
          onClose={() => setShown(null)}
          returnTo={() => document.getElementById('rotate-my-key')}
        />
      )}
    </Page>
  );
}
