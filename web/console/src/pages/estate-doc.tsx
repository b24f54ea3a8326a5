// One estate document, /estate/docs/:id (GET /api/knowledge/doc/{id}): where it comes from, its
// size and metadata, and its chunks in order; writers (role user or admin) delete it after a
// confirmation whose safe answer has the focus, then return to the estate page.

import { useLocation, useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, Page } from '../page.tsx';
import { Confirm } from '../ui/dialog.tsx';
import { problem } from '../ui/errors.ts';
import { toast } from '../ui/toast.tsx';
import { canWrite } from './estate.tsx';
import './estate.css';
import { handler } from '../ui/handler.ts';

type Detail = Schemas['EstateDocumentDetail'];
const count = new Intl.NumberFormat('en');

export function EstateDoc() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params.id!;
  const [detail, setDetail] = useState<Detail | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [busy, setBusy] = useState(false);
  const [deleteError, setDeleteError] = useState<string | null>(null);

  async function load() {
    setError(null);
    const { data, error: refused, response } = await api.GET('/api/knowledge/doc/{id}', { params: { path: { id } } });
    if (data) setDetail(data);
    else setError({ status: response.status, body: problem(refused) });
  }
  useEffect(() => {
    void load();
  }, [id]);

  async function remove() {
    setBusy(true);
    const { error: refused, response } = await api.DELETE('/api/knowledge/doc/{id}', { params: { path: { id } } });
    setBusy(false);
    if (response.status === 204) {
      toast(`Document “${detail?.document.path ?? id}” deleted.`);
      route('/estate');
    } else setDeleteError(problem(refused).message);
  }

  if (error?.status === 404) {
    return (
      <Page title="No such document">
        <p>
          There is no document with this id (it may have been deleted). <a href="/estate">Back to estate knowledge</a>.
        </p>
      </Page>
    );
  }
  const d = detail?.document;
  return (
    <Page
      title={d ? d.path : 'Document'}
      actions={
        d &&
        canWrite() && (
          <button
            type="button"
            class="danger"
            onClick={() => {
              setDeleteError(null);
              setDeleting(true);
            }}
          >
            Delete document
          </button>
        )
      }
    >
      <p>
        <a href="/estate">Back to estate knowledge</a>
      </p>
      {error ? (
        <LoadFailed error={error.body} retry={handler(load)} />
      ) : !detail || !d ? (
        <Loading />
      ) : (
        <>
          <dl class="pairs">
            <div>
              <dt>Source repository</dt>
              <dd>
                {d.source_repo}
                {d.is_vault ? ' (customer vault)' : ''}
              </dd>
            </div>
            <div>
              <dt>Category</dt>
              <dd>{d.category}</dd>
            </div>
            <div>
              <dt>Commit</dt>
              <dd>{d.commit_sha ?? <span class="muted">none</span>}</dd>
            </div>
            <div>
              <dt>Ingested</dt>
              <dd>
                <time dateTime={d.ingested_at}>{new Date(d.ingested_at).toLocaleString()}</time>
              </dd>
            </div>
            <div>
              <dt>Size</dt>
              <dd>
                {count.format(d.content_chars)} characters in {count.format(d.chunks)}{' '}
                {d.chunks === 1 ? 'chunk' : 'chunks'}
              </dd>
            </div>
            <div>
              <dt>SHA-256</dt>
              <dd>
                <code>{d.content_sha256}</code>
              </dd>
            </div>
            {d.metadata && (
              <div>
                <dt>Metadata</dt>
                <dd>
                  <pre class="plain">{JSON.stringify(d.metadata, null, 2)}</pre>
                </dd>
              </div>
            )}
          </dl>
          <section aria-labelledby="chunks-heading">
            <h2 id="chunks-heading">Chunks, in order</h2>
            <ol class="chunks" start={0}>
              {detail.chunks.map((c) => (
                <li key={c.chunk_id} data-chunk={c.chunk_index}>
                  <h3>Chunk {c.chunk_index}</h3>
                  <pre class="plain">{c.content}</pre>
                </li>
              ))}
            </ol>
          </section>
        </>
      )}
      {deleting && d && (
        <Confirm
          title="Delete this document?"
          question={`“${d.path}” of ${d.source_repo} and its chunks leave the estate; search stops finding them. The log keeps its history.`}
          confirm="Delete"
          cancel="Keep it"
          busy={busy}
          error={deleteError}
          onConfirm={handler(remove)}
          onClose={() => setDeleting(false)}
        />
      )}
    </Page>
  );
}
