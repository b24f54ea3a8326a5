// A bot's knowledge, /bots/:profileId/knowledge: the snippets newest first with a title filter,
// a ranked search with scores (any signed-in account), and for admins adding, editing (only the
// changed fields are sent) and deleting. Title and content counters count code points, as the
// server does.

import { useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, Page } from '../page.tsx';
import { role } from '../session.ts';
import { Confirm, Dialog } from '../ui/dialog.tsx';
import { codePoints, problem } from '../ui/errors.ts';
import { Field, FormError } from '../ui/field.tsx';
import { useFormState } from '../ui/form-state.ts';
import { toast } from '../ui/toast.tsx';
import { handler } from '../ui/handler.ts';

type Snippet = Schemas['KnowledgeSnippet'];
type Hit = Schemas['KnowledgeSearchHit'];

const TITLE_MAX = 200;
const CONTENT_MAX = 4000;
const preview = (text: string) => (codePoints(text) > 140 ? `${[...text].slice(0, 140).join('')}…` : text);

export function Knowledge() {
  const { params } = useRoute();
  const profileId = params.profileId!;
  const admin = role.value === 'admin';
  const [name, setName] = useState<string | null>(null);
  const [filter, setFilter] = useState('');
  const [snippets, setSnippets] = useState<Snippet[] | null>(null);
  const [error, setError] = useState<ApiErrorBody | null>(null);
  const [editing, setEditing] = useState<Snippet | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Snippet | null>(null);

  async function load(titleContains = filter) {
    setError(null);
    const { data, error: refused } = await api.GET('/api/bots/{profile_id}/knowledge', {
      params: { path: { profile_id: profileId }, query: titleContains ? { title_contains: titleContains } : {} },
    });
    if (data) setSnippets(data);
    else setError(problem(refused));
  }
  useEffect(() => {
    const timer = setTimeout(() => void load(filter), filter ? 250 : 0);
    return () => clearTimeout(timer);
  }, [profileId, filter]);
  useEffect(() => {
    // The profile's name, where the account may read profiles (admins); others see the id.
    if (!admin) return;
    void api
      .GET('/api/agent-chat/profiles')
      .then(({ data }) => setName(data?.find((p) => p.id === profileId)?.name ?? null));
  }, [profileId, admin]);

  function saved(snippet: Snippet, created: boolean) {
    setEditing(null);
    toast(`Snippet “${snippet.title}” ${created ? 'added' : 'saved'}.`);
    void load();
  }

  return (
    <Page
      title={name ? `Knowledge of ${name}` : 'Bot knowledge'}
      actions={
        admin && (
          <button type="button" onClick={() => setEditing('new')}>
            Add snippet
          </button>
        )
      }
    >
      {!name && (
        <p class="muted">
          Profile <code>{profileId}</code>
        </p>
      )}
      <section aria-labelledby="snippets-heading">
        <h2 id="snippets-heading" tabIndex={-1}>
          Snippets
        </h2>
        <form
          class="form inline"
          role="search"
          aria-label="Filter snippets"
          onSubmit={(e) => {
            e.preventDefault();
            void load();
          }}
        >
          <Field
            id="title-filter"
            label="Title contains"
            type="search"
            value={filter}
            onInput={setFilter}
            hint="Case-insensitive; the list narrows as you type."
          />
        </form>
        {error ? (
          <LoadFailed error={error} retry={handler(() => load())} />
        ) : !snippets ? (
          <Loading />
        ) : (
          <>
            <p role="status" class="muted">
              {snippets.length === 1 ? '1 snippet' : `${snippets.length} snippets`}
              {filter ? ` with “${filter}” in the title` : ''}.
            </p>
            {snippets.length > 0 && (
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Knowledge snippets, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Title</th>
                      <th scope="col">Content</th>
                      <th scope="col">Source</th>
                      <th scope="col">Updated</th>
                      {admin && <th scope="col">Actions</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {snippets.map((s) => (
                      <tr key={s.id}>
                        <th scope="row">{s.title}</th>
                        <td>{preview(s.content)}</td>
                        <td>{s.source ?? ''}</td>
                        <td>
                          <time dateTime={s.updated_at}>{new Date(s.updated_at).toLocaleString()}</time>
                        </td>
                        {admin && (
                          <td class="row-actions">
                            <button
                              type="button"
                              class="secondary"
                              aria-label={`Edit ${s.title}`}
                              onClick={() => setEditing(s)}
                            >
                              Edit
                            </button>
                            <button
                              type="button"
                              class="danger"
                              aria-label={`Delete ${s.title}`}
                              onClick={() => setDeleting(s)}
                            >
                              Delete
                            </button>
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </>
        )}
      </section>
      <Search profileId={profileId} />
      {editing && (
        <SnippetDialog
          profileId={profileId}
          snippet={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={saved}
        />
      )}
      {deleting && (
        <DeleteDialog
          profileId={profileId}
          snippet={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={() => {
            setDeleting(null);
            // The row and its buttons are gone: focus goes to the list's heading, not to the page's end.
            void load().then(() => document.getElementById('snippets-heading')?.focus());
          }}
        />
      )}
    </Page>
  );
}

function Search(props: { profileId: string }) {
  const [q, setQ] = useState('');
  const [limit, setLimit] = useState('5');
  const [hits, setHits] = useState<Hit[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function search(event: Event) {
    event.preventDefault();
    if (q.trim() === '') {
      setError('Enter words to search for.');
      return;
    }
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 50) {
      setError('The number of hits is a whole number from 1 to 50.');
      return;
    }
    setError(null);
    const { data, error: refused } = await api.GET('/api/bots/{profile_id}/knowledge/search', {
      params: { path: { profile_id: props.profileId }, query: { q, limit: n } },
    });
    if (data) setHits(data);
    else setError(problem(refused).message);
  }

  return (
    <section aria-labelledby="search-heading">
      <h2 id="search-heading">Search</h2>
      <p class="muted">
        Ranked the way chat grounding ranks: words ORed, titles weigh more, hits under the relevance floor left out.
      </p>
      <form class="form inline" role="search" aria-label="Search the knowledge" onSubmit={handler(search)} noValidate>
        <Field id="knowledge-q" label="Search for" type="search" value={q} onInput={setQ} error={error ?? undefined} />
        <Field
          id="knowledge-limit"
          label="Hits at most"
          kind="number"
          value={limit}
          onInput={setLimit}
          hint="1 to 50."
        />
        <div class="actions">
          <button type="submit">Search</button>
        </div>
      </form>
      {hits && (
        <div aria-live="polite">
          {hits.length === 0 ? (
            <p>No snippet is relevant enough.</p>
          ) : (
            <ol class="hits" aria-label="Search results, most relevant first">
              {hits.map((h) => (
                <li key={h.id}>
                  <strong>{h.title}</strong> <span class="score">score {h.score.toFixed(3)}</span>
                  <p>{preview(h.content)}</p>
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}

const SNIPPET_FIELDS = ['title', 'content', 'source', 'metadata'] as const;

function SnippetDialog(props: {
  profileId: string;
  snippet: Snippet | null;
  onClose: () => void;
  onSaved: (s: Snippet, created: boolean) => void;
}) {
  const original = props.snippet;
  const [title, setTitle] = useState(original?.title ?? '');
  const [content, setContent] = useState(original?.content ?? '');
  const [source, setSource] = useState(original?.source ?? '');
  const [metadata, setMetadata] = useState(original?.metadata ? JSON.stringify(original.metadata, null, 2) : '');
  const { form, errors, formError, busy, setBusy, passes, refused } = useFormState('snippet-error');

  function check(): { body: Record<string, unknown> } | { errors: Record<string, string> } {
    const found: Record<string, string> = {};
    const t = codePoints(title);
    const c = codePoints(content);
    if (t < 1 || t > TITLE_MAX) found.title = t < 1 ? 'Enter a title.' : `At most ${TITLE_MAX} characters.`;
    if (c < 1 || c > CONTENT_MAX)
      found.content = c < 1 ? 'Enter the content.' : `At most ${CONTENT_MAX.toLocaleString('en')} characters.`;
    let meta: Record<string, unknown> | null = null;
    if (metadata.trim() !== '') {
      try {
        const parsed: unknown = JSON.parse(metadata);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
          found.metadata = 'Metadata is a JSON object, such as {"lang": "en"}.';
        else meta = parsed as Record<string, unknown>;
      } catch {
        found.metadata = 'This is not valid JSON.';
      }
    }
    if (Object.keys(found).length) return { errors: found };
    const next = { title, content, source: source === '' ? null : source, metadata: meta };
    if (!original) return { body: Object.fromEntries(Object.entries(next).filter(([, v]) => v !== null)) };
    const before = {
      title: original.title,
      content: original.content,
      source: original.source,
      metadata: original.metadata,
    };
    return {
      body: Object.fromEntries(
        Object.entries(next).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(before[k as keyof typeof before])),
      ),
    };
  }

  async function submit(event: Event) {
    event.preventDefault();
    if (busy) return;
    const checked = check();
    if (!passes('errors' in checked ? checked.errors : {}) || !('body' in checked)) return;
    if (original && Object.keys(checked.body).length === 0) {
      props.onClose();
      toast('Nothing changed, nothing sent.');
      return;
    }
    setBusy(true);
    const path = { profile_id: props.profileId };
    const result = original
      ? await api.PATCH('/api/bots/{profile_id}/knowledge/{id}', {
          params: { path: { ...path, id: original.id } },
          body: checked.body,
        })
      : await api.POST('/api/bots/{profile_id}/knowledge', {
          params: { path },
          body: checked.body as Schemas['CreateKnowledgeSnippetRequest'],
        });
    setBusy(false);
    if (result.data) {
      props.onSaved(result.data, !original);
      return;
    }
    refused(result.error, SNIPPET_FIELDS);
  }

  const counter = (n: number, max: number) => `${n.toLocaleString('en')} of ${max.toLocaleString('en')} characters.`;
  return (
    <Dialog title={original ? `Edit “${original.title}”` : 'Add a snippet'} onClose={props.onClose}>
      <form ref={form} class="form" onSubmit={handler(submit)} noValidate>
        <FormError id="snippet-error" message={formError} />
        <Field
          id="snippet-title"
          label="Title"
          required
          value={title}
          onInput={setTitle}
          error={errors.title}
          hint={counter(codePoints(title), TITLE_MAX)}
        />
        <Field
          id="snippet-content"
          label="Content"
          kind="textarea"
          rows={8}
          required
          value={content}
          onInput={setContent}
          error={errors.content}
          hint={`${counter(codePoints(content), CONTENT_MAX)} Sent to the model as written.`}
        />
        <Field
          id="snippet-source"
          label="Source"
          value={source}
          onInput={setSource}
          error={errors.source}
          hint="Optional: where this comes from."
        />
        <Field
          id="snippet-metadata"
          label="Metadata (JSON object)"
          kind="textarea"
          rows={3}
          value={metadata}
          onInput={setMetadata}
          error={errors.metadata}
          hint="Optional."
        />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : original ? 'Save snippet' : 'Add snippet'}
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function DeleteDialog(props: { profileId: string; snippet: Snippet; onClose: () => void; onDeleted: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function remove() {
    setBusy(true);
    const { error: refused, response } = await api.DELETE('/api/bots/{profile_id}/knowledge/{id}', {
      params: { path: { profile_id: props.profileId, id: props.snippet.id } },
    });
    setBusy(false);
    if (response.status === 204) {
      toast(`Snippet “${props.snippet.title}” deleted.`);
      props.onDeleted();
    } else setError(problem(refused).message);
  }
  return (
    <Confirm
      title="Delete this snippet?"
      question={`“${props.snippet.title}” goes from this bot's knowledge; replies stop using it. The log keeps its history.`}
      confirm="Delete"
      cancel="Keep it"
      busy={busy}
      error={error}
      onConfirm={handler(remove)}
      onClose={props.onClose}
    />
  );
}
