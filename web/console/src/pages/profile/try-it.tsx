// Try a profile on the private chat (POST /api/agent-chat/chat/{slug}): the same pipeline as
// every chat surface, as the signed-in account. The conversation continues until "New
// conversation"; replies are announced politely.

import { useState } from 'preact/hooks';
import { api, type Schemas } from '../../api/client.ts';
import { problem } from '../../ui/errors.ts';
import { Field, FormError } from '../../ui/field.tsx';
import { handler } from '../../ui/handler.ts';

type Profile = Schemas['Profile'];
interface Turn {
  who: 'you' | 'bot';
  text: string;
  detail?: string;
}

export function TryIt(props: { profile: Profile }) {
  const [message, setMessage] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [conversation, setConversation] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function send(event: Event) {
    event.preventDefault();
    if (busy) return;
    if (message.trim() === '') {
      setError('Write a message first.');
      return;
    }
    setError(null);
    setBusy(true);
    const sent = message;
    const { data, error: refused } = await api.POST('/api/agent-chat/chat/{slug}', {
      params: { path: { slug: props.profile.slug } },
      body: { message: sent, conversation_id: conversation },
    });
    setBusy(false);
    if (!data) {
      setError(problem(refused).message);
      requestAnimationFrame(() => document.getElementById('try-error')?.focus());
      return;
    }
    setMessage('');
    setConversation(data.conversation_id);
    setTurns((t) => [
      ...t,
      { who: 'you', text: sent },
      {
        who: 'bot',
        text: data.message,
        detail: `${data.tokens.input} tokens in, ${data.tokens.output} out, ${data.cost_cents.toFixed(4)} cents`,
      },
    ]);
  }

  return (
    <section aria-labelledby="try-heading">
      <h2 id="try-heading">Try it</h2>
      <p class="muted">
        Talks to this profile through the private chat as you
        {props.profile.enabled ? '' : '; it is disabled, so it will not answer'}.
      </p>
      {turns.length > 0 && (
        <ol class="transcript" aria-live="polite" aria-label="Conversation">
          {turns.map((t, i) => (
            <li key={i} class={t.who}>
              <strong>{t.who === 'you' ? 'You' : props.profile.name}:</strong> <span class="said">{t.text}</span>
              {t.detail && <span class="muted"> ({t.detail})</span>}
            </li>
          ))}
        </ol>
      )}
      <form class="form" onSubmit={handler(send)} noValidate>
        <FormError id="try-error" message={error} />
        <Field id="try-message" label="Message" kind="textarea" rows={2} value={message} onInput={setMessage} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Waiting for the reply…' : 'Send'}
          </button>
          {conversation && (
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setConversation(null);
                setTurns([]);
              }}
            >
              New conversation
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
