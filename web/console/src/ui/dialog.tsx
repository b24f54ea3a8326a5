// A modal dialog on the native <dialog> (showModal: the page behind is inert). Focus moves into
// it when it opens (the element marked `data-autofocus`, else the first control), Tab and
// Shift+Tab cycle inside it, Escape closes it, and focus returns to what had it before.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; describedBy?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useRef(`dialog-${Math.random().toString(36).slice(2)}`).current;
  // What had focus when the dialog was asked for (read while rendering, before any effect runs).
  const opener = useRef(document.activeElement as HTMLElement | null).current;

  useEffect(() => {
    const dialog = ref.current!;
    dialog.showModal();
    // The first control of the content (the close button in the heading comes after it in intent).
    const first = dialog.querySelector<HTMLElement>('[data-autofocus]') ?? dialog.querySelector<HTMLElement>(`.dialog-body :is(${FOCUSABLE})`) ?? dialog.querySelector<HTMLElement>(FOCUSABLE);
    first?.focus();
    return () => {
      if (dialog.open) dialog.close();
      // Back to the opener; if it is gone (its row was deleted), to the page's heading.
      const target = opener?.isConnected && opener !== document.body ? opener : document.querySelector<HTMLElement>('main h1');
      target?.focus();
      // The browser may still move focus once the dialog leaves the page (its own restore after a
      // native close): put it back where it belongs if it ended on nothing.
      requestAnimationFrame(() => {
        if (document.activeElement === document.body || document.activeElement === null) target?.focus();
      });
    };
  }, []);

  function onKeyDown(event: KeyboardEvent) {
    if (event.key !== 'Tab') return;
    const items = [...ref.current!.querySelectorAll<HTMLElement>(FOCUSABLE)];
    if (items.length === 0) return;
    const first = items[0]!;
    const last = items[items.length - 1]!;
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  }

  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId} aria-describedby={props.describedBy} onKeyDown={onKeyDown}
      onCancel={(e) => { e.preventDefault(); props.onClose(); }}>
      <div class="dialog-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" class="secondary" aria-label="Close" onClick={props.onClose}>×</button>
      </div>
      <div class="dialog-body">{props.children}</div>
    </dialog>
  );
}
