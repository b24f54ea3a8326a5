// Toasts: short confirmations ("Profile saved") in one polite live region, rendered once by the
// app shell. Each stays a few seconds; a screen reader reads it without moving focus.

import { signal } from '@preact/signals';
import './ui.css';

interface Toast { id: number; text: string }
const toasts = signal<Toast[]>([]);
let next = 1;

export function toast(text: string): void {
  const id = next++;
  toasts.value = [...toasts.value, { id, text }];
  setTimeout(() => {
    toasts.value = toasts.value.filter((t) => t.id !== id);
  }, 6000);
}

export function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite" aria-atomic="false">
      {toasts.value.map((t) => <p key={t.id} class="toast">{t.text}</p>)}
    </div>
  );
}
