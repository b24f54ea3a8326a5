// Conversations (admin; GET /api/agent-chat/conversations and .../{id}/messages): the recent
// conversations across profiles and callers, newest first by last message, and one
// conversation's messages oldest first. A non-admin gets the server's 403 as "needs admin".

import { useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';
import { problem } from '../ui/errors.ts';
import { Field } from '../ui/field.tsx';
import './estate.css';
import { handler } from '../ui/handler.ts';

type Conversation = Schemas['Conversation'];
type Message = Schemas['ConversationMessage'];

const count = new Intl.NumberFormat('en');
const usd = new Intl.NumberFormat('en', { style: 'currency', currency: 'USD', maximumFractionDigits: 4 });
const when = (iso: string) => <time dateTime={iso}>{new Date(iso).toLocaleString()}</time>;

export function Conversations() {
  const [limit, setLimit] = useState('20');
  const [rows, setRows] = useState<Conversation[] | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);

  async function load(n = limit) {
    setError(null);
    const {
      data,
      error: refused,
      response,
    } = await api.GET('/api/agent-chat/conversations', { params: { query: { limit: Number(n) } } });
    if (data) setRows(data);
    else setError({ status: response.status, body: problem(refused) });
  }
  useEffect(() => {
    void load(limit);
  }, [limit]);

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  return (
    <Page
      title="Conversations"
      actions={
        rows && (
          <button type="button" class="secondary" onClick={() => void load()}>
            Refresh
          </button>
        )
      }
    >
      <form class="form inline" aria-label="How many conversations" onSubmit={(e) => e.preventDefault()}>
        <Field
          id="conversations-limit"
          label="Show"
          kind="select"
          value={limit}
          onInput={setLimit}
          options={['20', '50', '100'].map((n) => ({ value: n, label: `the latest ${n}` }))}
        />
      </form>
      {error ? (
        <LoadFailed error={error.body} retry={() => void load()} />
      ) : !rows ? (
        <Loading />
      ) : rows.length === 0 ? (
        <p>No conversations yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Conversations, the most recent last message first</caption>
            <thead>
              <tr>
                <th scope="col">Conversation</th>
                <th scope="col">Profile</th>
                <th scope="col">Kind</th>
                <th scope="col" class="num">
                  Messages
                </th>
                <th scope="col">Started</th>
                <th scope="col">Last message</th>
                <th scope="col">Expires</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.id} data-conversation={c.id}>
                  <th scope="row">
                    <a href={`/conversations/${c.id}`}>
                      <code>{c.id.slice(0, 8)}</code>
                      <span class="visually-hidden">
                        {' '}
                        ({c.profile_slug}, {c.message_count} messages)
                      </span>
                    </a>
                  </th>
                  <td>{c.profile_slug}</td>
                  <td>{c.kind}</td>
                  <td class="num">{count.format(c.message_count)}</td>
                  <td>{when(c.started_at)}</td>
                  <td>{when(c.last_message_at)}</td>
                  <td>{when(c.expires_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}

export function ConversationPage() {
  const { params } = useRoute();
  const id = params.id!;
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);

  async function load() {
    setError(null);
    const {
      data,
      error: refused,
      response,
    } = await api.GET('/api/agent-chat/conversations/{id}/messages', { params: { path: { id } } });
    if (data) setMessages(data);
    else setError({ status: response.status, body: problem(refused) });
  }
  useEffect(() => {
    void load();
  }, [id]);

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  if (error?.status === 404)
    return (
      <Page title="No such conversation">
        <p>
          There is no conversation with this id (it may have expired).{' '}
          <a href="/conversations">Back to conversations</a>.
        </p>
      </Page>
    );
  return (
    <Page title={`Conversation ${id.slice(0, 8)}`}>
      <p>
        <a href="/conversations">Back to conversations</a> · <code>{id}</code>
      </p>
      {error ? (
        <LoadFailed error={error.body} retry={handler(load)} />
      ) : !messages ? (
        <Loading />
      ) : messages.length === 0 ? (
        <p>No messages.</p>
      ) : (
        <ol class="messages" aria-label="Messages, oldest first">
          {messages.map((m) => (
            <li key={m.id} class={`message message-${m.role}`} data-role={m.role}>
              <p class="message-head">
                <strong>{m.role === 'user' ? 'User' : 'Assistant'}</strong> · {when(m.created_at)}
                {m.tokens && (
                  <span class="muted">
                    {' '}
                    · {count.format(m.tokens.input)} in, {count.format(m.tokens.output)} out
                    {m.tokens.cache_read ? `, ${count.format(m.tokens.cache_read)} cached` : ''} ·{' '}
                    {usd.format(m.cost_cents / 100)}
                    {m.model ? ` · ${m.model}` : ''}
                  </span>
                )}
              </p>
              <p class="message-text">{m.content}</p>
            </li>
          ))}
        </ol>
      )}
    </Page>
  );
}
