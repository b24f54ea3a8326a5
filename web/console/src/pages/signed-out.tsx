// After sign-out: the local session is over; under forward-auth the SSO session may not be, so
// the SSO's own sign-out page is linked when ORCH_FORWARD_AUTH_LOGOUT_URL is set.

import { Page } from '../page.tsx';
import { session } from '../session.ts';

export function SignedOut() {
  const state = session.value;
  return (
    <Page title="Signed out">
      <div class="panel">
        <p>You are signed out of this console.</p>
        {state?.login === 'forward_auth' ? (
          state.logout_url ? (
            <p>
              Your single sign-on session may still be open: <a href={state.logout_url}>sign out of single sign-on</a>.
            </p>
          ) : (
            <p>Your single sign-on session may still be open; close the browser to end it.</p>
          )
        ) : (
          <p>
            <a href="/sign-in">Sign in again</a>
          </p>
        )}
      </div>
    </Page>
  );
}
