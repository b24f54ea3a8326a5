// A modal dialog on the native <dialog> (showModal: the page behind is inert), labelled by its
// heading, with a Close button beside it and the content in `.dialog-body`. When it opens, focus
// goes to the element marked `data-autofocus` (not `autofocus`, which the browser applies on its
// own schedule), else the first control of the content. Tab and Shift+Tab cycle inside it, Escape
// (or the browser's own cancel) closes it, and focus returns to what opened it, or to the page's
// heading when that is gone, however it closed. A dialog opened by another one (a key shown
// once after its confirmation) was not opened by whatever has focus at that moment: its caller
// names the control to return to (`returnTo`, looked up when the dialog closes, so a list
// re-rendered meanwhile still gives the right one).

import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import './ui.css';

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

let ids = 0;

/** The control a dialog gives focus back to, found when it closes. */
export type ReturnTo = () => HTMLElement | null;

/** Where focus goes back to: the named control, else the opener while it is in the page, else the main heading. */
function returnTarget(opener: HTMLElement | null, returnTo?: ReturnTo): HTMLElement | null {
  const named = returnTo?.();
  if (named?.isConnected) return named;
  return opener?.isConnected && opener !== document.body ? opener : document.querySelector<HTMLElement>('main h1');
}

function giveBack(opener: HTMLElement | null, returnTo?: ReturnTo): void {
  returnTarget(opener, returnTo)?.focus();
  // The browser may still move focus once the dialog leaves the page (its own restore after a
  // native close): put it back if it ended on nothing.
  requestAnimationFrame(() => {
    if (document.activeElement === document.body || document.activeElement === null)
      returnTarget(opener, returnTo)?.focus();
  });
}

export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  describedBy?: string;
  returnTo?: ReturnTo;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useRef(`dialog-title-${++ids}`).current;
  // What had focus when the dialog was asked for: read while rendering, before the dialog (and
  // anything focused in it) is in the page.
  const opener = useRef(document.activeElement as HTMLElement | null).current;
  const unmounting = useRef(false);

  useEffect(() => {
    const dialog = ref.current!;
    dialog.showModal();
    (
      dialog.querySelector<HTMLElement>('[data-autofocus]') ??
      dialog.querySelector<HTMLElement>(`.dialog-body :is(${FOCUSABLE})`) ??
      dialog.querySelector<HTMLElement>(FOCUSABLE)
    )?.focus();
    return () => {
      unmounting.current = true;
      if (dialog.open) dialog.close();
      giveBack(opener, props.returnTo);
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
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={titleId}
      aria-describedby={props.describedBy}
      onKeyDown={onKeyDown}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
      onClose={() => {
        if (unmounting.current) return;
        // Closed by the browser itself (a cancel it would not let us keep open): focus back now.
        giveBack(opener, props.returnTo);
        props.onClose();
      }}
    >
      <div class="dialog-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" class="secondary" aria-label="Close" onClick={props.onClose}>
          ×
        </button>
      </div>
      <div class="dialog-body">{props.children}</div>
    </dialog>
  );
}

/** A yes/no question (stop an agent, kill one, delete a snippet): the safe answer has focus first. */
export function Confirm(props: {
  title: string;
  question: string;
  confirm: string;
  cancel?: string;
  busy?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onClose: () => void;
  returnTo?: ReturnTo;
}) {
  return (
    <Dialog title={props.title} onClose={props.onClose} describedBy="confirm-question" returnTo={props.returnTo}>
      <p id="confirm-question">{props.question}</p>
      {props.error && (
        <p class="form-error" role="alert">
          {props.error}
        </p>
      )}
      <div class="dialog-actions">
        <button type="button" class="secondary" data-autofocus onClick={props.onClose}>
          {props.cancel ?? 'Cancel'}
        </button>
        <button type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>
          {props.confirm}
        </button>
      </div>
    </Dialog>
  );
}
