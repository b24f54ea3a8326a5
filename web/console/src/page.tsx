// What every page shares: its title (document title and the h1 that takes focus after a
// navigation, so a screen reader announces the new page), and the error panels.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { ApiErrorBody } from './api/client.ts';

let firstPage = true;

export function Page(props: { title: string; children?: ComponentChildren; actions?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Orchard`;
    if (firstPage) firstPage = false;
    else heading.current?.focus();
  }, [props.title]);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1} ref={heading}>
          {props.title}
        </h1>
        {props.actions}
      </div>
      {props.children}
    </>
  );
}

/** The server's 403 for a page reached by URL without the role it needs. */
export function NeedsAdmin(props: { error?: ApiErrorBody }) {
  return (
    <Page title="Needs admin">
      <div class="panel" role="alert">
        <p>This page is for administrators. Your account does not have the admin role.</p>
        {props.error?.message && <p class="muted">The server said: {props.error.message}</p>}
        <p>
          <a href="/">Back to the cockpit</a>
        </p>
      </div>
    </Page>
  );
}

export function LoadFailed(props: { error?: ApiErrorBody | null; retry?: () => void }) {
  return (
    <div class="panel error" role="alert">
      <p>Could not load this page{props.error?.message ? `: ${props.error.message}` : '.'}</p>
      {props.retry && (
        <button type="button" onClick={props.retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Loading() {
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}
