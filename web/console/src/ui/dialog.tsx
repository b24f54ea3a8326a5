// A modal dialog on the native <dialog> (showModal makes the rest of the page inert): labelled by
// its heading, focus on its first field (or the one marked `data-autofocus`: not `autofocus`,
// which the browser applies on its own schedule) when it opens, Tab kept inside, Escape or Cancel
// closes, and focus back on what opened it when it closes, however it closed.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import './ui.css';

const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

let ids = 0;

export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; describedBy?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useRef(`dialog-title-${++ids}`).current;
  // Taken at the first render, before the dialog (and anything focused in it) is in the page.
  const opener = useRef(document.activeElement as HTMLElement | null).current;
  const unmounting = useRef(false);
  useEffect(() => {
    const dialog = ref.current!;
    dialog.showModal();
    (dialog.querySelector<HTMLElement>('[data-autofocus]') ?? dialog.querySelector<HTMLElement>(FOCUSABLE))?.focus();
    return () => {
      unmounting.current = true;
      if (dialog.open) dialog.close();
      // The opener may have been re-rendered away (a moved card): then the main heading.
      if (opener?.isConnected) opener.focus();
      else document.querySelector<HTMLElement>('main h1')?.focus();
    };
  }, []);

  function onKeyDown(event: KeyboardEvent) {
    if (event.key !== 'Tab') return;
    const items = [...ref.current!.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null);
    const first = items[0];
    const last = items[items.length - 1];
    if (!first || !last) return;
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  }

  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId} aria-describedby={props.describedBy}
      onKeyDown={onKeyDown} onCancel={(e) => { e.preventDefault(); props.onClose(); }}
      onClose={() => {
        if (unmounting.current) return;
        // Closed by the browser itself (a cancel it would not let us keep open): give focus back now.
        if (opener?.isConnected) opener.focus();
        props.onClose();
      }}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** A yes/no question (stop an agent, kill one): the safe answer has focus first. */
export function Confirm(props: { title: string; question: string; confirm: string; busy?: boolean; error?: string | null; onConfirm: () => void; onClose: () => void }) {
  return (
    <Dialog title={props.title} onClose={props.onClose} describedBy="confirm-question">
      <p id="confirm-question">{props.question}</p>
      {props.error && <p class="form-error" role="alert">{props.error}</p>}
      <div class="dialog-actions">
        <button type="button" class="secondary" data-autofocus onClick={props.onClose}>Cancel</button>
        <button type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>{props.confirm}</button>
      </div>
    </Dialog>
  );
}
