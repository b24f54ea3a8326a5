// Toasts and announcements in one polite live region, rendered once by the app shell (so it is in
// the page before anything is said in it). `toast(text)` shows a message for a while (an error
// looks like one); `announce(text)` is said but not shown (keyboard moves on the board).

import { signal } from '@preact/signals';
import './ui.css';

interface Toast {
  id: number;
  text: string;
  kind: 'info' | 'error';
}

const toasts = signal<Toast[]>([]);
const spoken = signal('');
let seq = 0;

const SHOW_MS = 6000;

export function toast(text: string, kind: Toast['kind'] = 'info'): void {
  const id = ++seq;
  toasts.value = [...toasts.value, { id, text, kind }];
  setTimeout(() => dismiss(id), SHOW_MS);
}

export function dismiss(id: number): void {
  toasts.value = toasts.value.filter((t) => t.id !== id);
}

/** Said by screen readers, not shown. The same text twice is still said twice. */
export function announce(text: string): void {
  spoken.value = spoken.value === text ? `${text}\u00a0` : text;
}

export function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite" aria-atomic="false">
      <p class="visually-hidden">{spoken.value}</p>
      {toasts.value.map((t) => (
        <p key={t.id} class={`toast toast-${t.kind}`}>
          <span>{t.text}</span>
          <button type="button" class="link-button" onClick={() => dismiss(t.id)}>
            Dismiss<span class="visually-hidden"> message</span>
          </button>
        </p>
      ))}
    </div>
  );
}
