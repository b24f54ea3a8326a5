// An async function as an event handler (onClick, onSubmit, a dialog's onConfirm, a retry): the
// attribute expects a function returning nothing, so the promise would be dropped, and a rejection
// (the server not answering makes a call reject; a bug in the page) would vanish unseen. `handler`
// runs the function as it is called (a submit's preventDefault still happens in the event) and
// shows a rejection as an error toast, the console's one way of saying something failed outside a form.

import { problem } from './errors.ts';
import { toast } from './toast.tsx';

/** `fn` as a void handler whose rejection is shown as an error toast (and logged to the browser console). */
export function handler<Args extends unknown[]>(fn: (...args: Args) => Promise<unknown>): (...args: Args) => void {
  return (...args) => {
    fn(...args).catch((error: unknown) => {
      console.error(error);
      toast(`Something went wrong: ${error instanceof Error ? error.message : problem(error).message}`, 'error');
    });
  };
}
