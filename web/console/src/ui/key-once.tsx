// An API key shown once (a rotation, or a new account): the key in a readonly input with a Copy
// button (navigator.clipboard; when the browser refuses, the key is selected for a manual copy),
// what happened to the old key, and Done. The key lives only in the props the caller passes while
// the dialog is open: the caller drops it (its state back to null) in `onClose`, so after the
// dialog closes nothing in the page holds it, and it is never put in storage.

import { useState } from 'preact/hooks';
import { Dialog, type ReturnTo } from './dialog.tsx';
import { FieldFrame } from './field.tsx';
import { handler } from './handler.ts';

/** After closing the dialog before it (a confirmation, a form): let it leave the page and give focus back before the next one opens (one modal at a time). */
export const nextFrame = () =>
  new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));

export interface ShownKey {
  /** The account the key belongs to. */
  username: string;
  apiKey: string;
  /** `self`: the caller's own key was rotated; `other`: an admin rotated another account's; `created`: a new account's first key. */
  kind: 'self' | 'other' | 'created';
}

const TITLES: Record<ShownKey['kind'], (username: string) => string> = {
  self: () => 'Your new API key',
  other: (username) => `New API key for ${username}`,
  created: (username) => `Account ${username} created`,
};

export function KeyOnce(props: { shown: ShownKey; onClose: () => void; returnTo?: ReturnTo }) {
  const { username, apiKey, kind } = props.shown;
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(apiKey);
      setCopied('yes');
    } catch {
      setCopied('no');
      const input = document.getElementById('once-key') as HTMLInputElement | null;
      input?.focus();
      input?.select();
    }
  }

  return (
    <Dialog
      title={TITLES[kind](username)}
      onClose={props.onClose}
      describedBy="once-key-warning"
      returnTo={props.returnTo}
    >
      <div id="once-key-warning">
        <p>
          <strong>This key is shown only this once.</strong> Copy it now and keep it somewhere safe; it cannot be shown
          again.
        </p>
        {kind === 'created' ? (
          <p>
            It lets scripts and the CLI act as {username} (the <code>X-API-Key</code> header).
          </p>
        ) : (
          <p>
            The previous key {kind === 'self' ? 'of your account' : `of ${username}`} stopped working now: anything
            still using it gets 401 until it has this one.
          </p>
        )}
      </div>
      <FieldFrame id="once-key" label={kind === 'self' ? 'Your API key' : `API key of ${username}`}>
        {(aria) => (
          <input
            {...aria}
            class="key-once"
            type="text"
            readOnly
            value={apiKey}
            spellcheck={false}
            autoComplete="off"
            onFocus={(e) => e.currentTarget.select()}
          />
        )}
      </FieldFrame>
      <p role="status" class="muted">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'no'
            ? 'The browser did not allow copying: the key is selected, copy it with your keyboard.'
            : ''}
      </p>
      <div class="dialog-actions">
        <button type="button" class="secondary" data-autofocus onClick={handler(copy)}>
          Copy key
        </button>
        <button type="button" onClick={props.onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
