// Estate knowledge, /estate (any signed-in account reads; role user or admin writes): a ranked
// search (q, scope, match, limit; the totals, truncation and a clamped limit said in words; each
// hit's snippet with the matched words in <mark>, built as text nodes from the server's `**`
// markers, never as HTML), the corpus by source repository and by category, the documents with a
// category filter (each a link to its page), the ingest runs with their failures per path, and for
// writers an ingest from a picked folder (or files) in batches of at most 500 documents, with a
// result per document. The browser skips files that cannot be text (see estate-ingest.ts).

import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { batches, folderName, relativePath, skipBeforeReading, snippetParts, textOf } from '../estate-ingest.ts';
import { LoadFailed, Loading, Page } from '../page.tsx';
import { role } from '../session.ts';
import { problem } from '../ui/errors.ts';
import { Field, FieldFrame, FormError } from '../ui/field.tsx';
import { toast } from '../ui/toast.tsx';
import './estate.css';
import { handler } from '../ui/handler.ts';

type SearchResult = Schemas['EstateSearchResult'];
type Corpus = Schemas['EstateCorpus'];
type Doc = Schemas['EstateDocument'];
type Runs = Schemas['EstateIngestStatus'];
type IngestResult = Schemas['EstateIngestResult'];

const count = new Intl.NumberFormat('en');
const when = (iso: string | null) =>
  iso ? <time dateTime={iso}>{new Date(iso).toLocaleString()}</time> : <span class="muted">never</span>;
export const canWrite = () => role.value === 'user' || role.value === 'admin';
const plural = (n: number, one: string, many = `${one}s`) => `${count.format(n)} ${n === 1 ? one : many}`;

/** A snippet as text and <mark> elements (Preact renders strings as text nodes). */
export function Snippet(props: { text: string }) {
  return <>{snippetParts(props.text).map((p, i) => (p.mark ? <mark key={i}>{p.text}</mark> : p.text))}</>;
}

export function Estate() {
  const [corpus, setCorpus] = useState<Corpus | null>(null);
  const [docs, setDocs] = useState<Doc[] | null>(null);
  const [runs, setRuns] = useState<Runs | null>(null);
  const [category, setCategory] = useState('');
  const [error, setError] = useState<ApiErrorBody | null>(null);

  async function loadCorpus() {
    const { data, error: refused } = await api.GET('/api/knowledge/corpus');
    if (data) setCorpus(data);
    else setError(problem(refused));
  }
  async function loadDocs(cat = category) {
    const query = cat === 'vault' ? { scope: 'vault' } : cat ? { category: cat } : {};
    const { data, error: refused } = await api.GET('/api/knowledge/docs', { params: { query } });
    if (data) setDocs(data.documents);
    else setError(problem(refused));
  }
  async function loadRuns() {
    const { data, error: refused } = await api.GET('/api/knowledge/ingest/status');
    if (data) setRuns(data);
    else setError(problem(refused));
  }
  const loadAll = () => {
    setError(null);
    return Promise.all([loadCorpus(), loadDocs(), loadRuns()]);
  };
  useEffect(() => {
    void loadAll();
  }, []);
  useEffect(() => {
    void loadDocs(category);
  }, [category]);

  const categories = corpus?.by_category.map((g) => g.key) ?? [];
  return (
    <Page
      title="Estate knowledge"
      actions={
        <button type="button" class="secondary" onClick={() => void loadAll()}>
          Refresh
        </button>
      }
    >
      {error && <LoadFailed error={error} retry={() => void loadAll()} />}
      <SearchSection categories={categories} />
      <CorpusSection corpus={corpus} />
      <section aria-labelledby="docs-heading">
        <h2 id="docs-heading">Documents</h2>
        <form class="form inline" aria-label="Filter documents" onSubmit={(e) => e.preventDefault()}>
          <Field
            id="docs-category"
            label="Category"
            kind="select"
            value={category}
            onInput={setCategory}
            options={[
              { value: '', label: 'All categories' },
              ...categories.map((c) => ({ value: c, label: c })),
              { value: 'vault', label: 'Customer vault' },
            ]}
          />
        </form>
        {!docs ? (
          <Loading />
        ) : (
          <>
            <p role="status" class="muted">
              {plural(docs.length, 'document')}
              {category ? ` in ${category === 'vault' ? 'the customer vault' : `“${category}”`}` : ''}.
            </p>
            {docs.length > 0 && (
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Documents</caption>
                  <thead>
                    <tr>
                      <th scope="col">Path</th>
                      <th scope="col">Source repository</th>
                      <th scope="col">Category</th>
                      <th scope="col" class="num">
                        Chunks
                      </th>
                      <th scope="col">Ingested</th>
                    </tr>
                  </thead>
                  <tbody>
                    {docs.map((d) => (
                      <tr key={d.id} data-doc={d.id}>
                        <th scope="row">
                          <a href={`/estate/docs/${d.id}`}>{d.path}</a>
                        </th>
                        <td>{d.source_repo}</td>
                        <td>{d.category}</td>
                        <td class="num">{count.format(d.chunks)}</td>
                        <td>{when(d.ingested_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </>
        )}
      </section>
      <RunsSection runs={runs} />
      {canWrite() && <IngestSection onDone={() => void loadAll()} />}
    </Page>
  );
}

function SearchSection(props: { categories: string[] }) {
  const [q, setQ] = useState('');
  const [scope, setScope] = useState('');
  const [match, setMatch] = useState<'any' | 'all'>('any');
  const [limit, setLimit] = useState('');
  const [errors, setErrors] = useState<{ q?: string; limit?: string }>({});
  const [result, setResult] = useState<SearchResult | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const form = useRef<HTMLFormElement>(null);

  async function search(event: Event) {
    event.preventDefault();
    const found: typeof errors = {};
    if (q.trim() === '') found.q = 'Enter words to search for.';
    else if (q.length > 2000) found.q = 'At most 2,000 characters.';
    if (limit.trim() !== '' && !/^\d+$/.test(limit.trim()))
      found.limit = 'A whole number (the server keeps it between 1 and 100).';
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length) {
      requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    const query: Record<string, string | number> = { q, match };
    if (scope) query.scope = scope;
    if (limit.trim() !== '') query.limit = Number(limit.trim());
    const { data, error } = await api.GET('/api/knowledge/search', { params: { query } });
    if (data) setResult(data);
    else setFormError(problem(error).message);
  }

  return (
    <section aria-labelledby="estate-search-heading">
      <h2 id="estate-search-heading">Search</h2>
      <form
        ref={form}
        class="form inline"
        role="search"
        aria-label="Search the estate"
        onSubmit={handler(search)}
        noValidate
      >
        <FormError id="estate-search-error" message={formError} />
        <Field id="estate-q" label="Search for" type="search" value={q} onInput={setQ} error={errors.q} />
        <Field
          id="estate-scope"
          label="Scope"
          kind="select"
          value={scope}
          onInput={setScope}
          options={[
            { value: '', label: 'Whole estate' },
            ...props.categories.map((c) => ({ value: c, label: `Category: ${c}` })),
            { value: 'vault', label: 'Customer vault' },
          ]}
        />
        <Field
          id="estate-match"
          label="Match"
          kind="select"
          value={match}
          onInput={(v) => setMatch(v === 'all' ? 'all' : 'any')}
          options={[
            { value: 'any', label: 'Any of the words' },
            { value: 'all', label: 'All of the words' },
          ]}
        />
        <Field
          id="estate-limit"
          label="Hits at most"
          kind="number"
          value={limit}
          onInput={setLimit}
          error={errors.limit}
          hint="Default 6, at most 100."
        />
        <div class="actions">
          <button type="submit">Search</button>
        </div>
      </form>
      <div aria-live="polite">
        {result && (
          <>
            <p class="search-summary" data-testid="search-summary">
              {result.truncated
                ? `Showing ${count.format(result.count)} of ${plural(result.total_matches, 'match', 'matches')}.`
                : result.total_matches === 0
                  ? 'No matches.'
                  : `${plural(result.total_matches, 'match', 'matches')}.`}
              {result.limit_clamped &&
                ` The limit was clamped to ${count.format(result.limit)} (the server returns 1 to ${count.format(result.max_limit)}).`}
            </p>
            {result.hits.length > 0 && (
              <ol class="hits" aria-label="Search results, most relevant first">
                {result.hits.map((h) => (
                  <li key={h.chunk_id} data-hit={h.document_id}>
                    <a href={`/estate/docs/${h.document_id}`}>{h.path}</a>{' '}
                    <span class="muted">
                      {h.source_repo} · {h.category}
                    </span>{' '}
                    <span class="score">score {h.score.toFixed(3)}</span>
                    <p class="snippet">
                      <Snippet text={h.snippet} />
                    </p>
                  </li>
                ))}
              </ol>
            )}
          </>
        )}
      </div>
    </section>
  );
}

function GroupTable(props: { caption: string; head: string; groups: Corpus['by_category']; id: string }) {
  return (
    <div class="table-wrap">
      <table id={props.id}>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">{props.head}</th>
            <th scope="col" class="num">
              Documents
            </th>
            <th scope="col" class="num">
              Chunks
            </th>
            <th scope="col">Last ingest</th>
          </tr>
        </thead>
        <tbody>
          {props.groups.map((g) => (
            <tr key={g.key} data-key={g.key}>
              <th scope="row">{g.key}</th>
              <td class="num">{count.format(g.documents)}</td>
              <td class="num">{count.format(g.chunks)}</td>
              <td>{when(g.last_ingest_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CorpusSection(props: { corpus: Corpus | null }) {
  const c = props.corpus;
  return (
    <section aria-labelledby="corpus-heading">
      <h2 id="corpus-heading">Corpus</h2>
      {!c ? (
        <Loading />
      ) : (
        <>
          <p data-testid="corpus-totals">
            {plural(c.documents, 'document')}, {plural(c.chunks, 'chunk')}, about {count.format(c.token_estimate)}{' '}
            tokens; the customer vault apart: {plural(c.vault_documents, 'document')}, {plural(c.vault_chunks, 'chunk')}
            . Last ingest: {when(c.last_ingest_at)}.
          </p>
          {c.documents === 0 ? (
            <p>The estate is empty.</p>
          ) : (
            <div class="corpus-tables">
              <GroupTable
                id="corpus-by-repo"
                caption="By source repository"
                head="Source repository"
                groups={c.by_source_repo}
              />
              <GroupTable id="corpus-by-category" caption="By category" head="Category" groups={c.by_category} />
            </div>
          )}
        </>
      )}
    </section>
  );
}

function RunsSection(props: { runs: Runs | null }) {
  const r = props.runs;
  return (
    <section aria-labelledby="runs-heading">
      <h2 id="runs-heading">Ingest runs</h2>
      {!r ? (
        <Loading />
      ) : r.runs.length === 0 ? (
        <p>No runs yet.</p>
      ) : (
        <>
          {r.last_incomplete_run && <p class="muted">The latest run that was not ok is marked “latest incomplete”.</p>}
          <div class="table-wrap">
            <table id="runs">
              <caption class="visually-hidden">Ingest runs, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="num">
                    Submitted
                  </th>
                  <th scope="col" class="num">
                    Stored
                  </th>
                  <th scope="col" class="num">
                    Failed
                  </th>
                  <th scope="col" class="num">
                    Chunks
                  </th>
                  <th scope="col">By</th>
                  <th scope="col">Failures</th>
                </tr>
              </thead>
              <tbody>
                {r.runs.map((run) => (
                  <tr key={run.run_id} data-run={run.run_id}>
                    <th scope="row">{when(run.started_at)}</th>
                    <td>{run.kind}</td>
                    <td>
                      {run.status}
                      {run.run_id === r.last_incomplete_run && <strong class="run-flag"> (latest incomplete)</strong>}
                    </td>
                    <td class="num">{count.format(run.documents_submitted)}</td>
                    <td class="num">{count.format(run.documents_succeeded)}</td>
                    <td class="num">{count.format(run.documents_failed)}</td>
                    <td class="num">{count.format(run.chunks_written)}</td>
                    <td>{run.actor}</td>
                    <td>
                      {run.errors.length === 0 ? (
                        <span class="muted">none</span>
                      ) : (
                        <ul class="run-errors">
                          {run.errors.map((e, i) => (
                            <li key={i}>
                              <code>{e.path ?? '(no path)'}</code>: {e.error} ({e.message})
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

interface Outcome {
  path: string;
  status: 'created' | 'updated' | 'unchanged' | 'failed' | 'skipped';
  chunks: number;
  detail: string;
}

const readBytes = (file: File) => file.arrayBuffer().then((b) => new Uint8Array(b));

function IngestSection(props: { onDone: () => void }) {
  const [files, setFiles] = useState<File[]>([]);
  const [sourceRepo, setSourceRepo] = useState('');
  const [prefix, setPrefix] = useState('');
  const [repoError, setRepoError] = useState<string | undefined>();
  const [filesError, setFilesError] = useState<string | undefined>();
  const [formError, setFormError] = useState<string | null>(null);
  const [progress, setProgress] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcomes, setOutcomes] = useState<Outcome[] | null>(null);
  const form = useRef<HTMLFormElement>(null);

  function picked(event: Event) {
    const list = [...((event.currentTarget as HTMLInputElement).files ?? [])];
    setFiles(list);
    setFilesError(undefined);
    setOutcomes(null);
    const folder = folderName(list);
    if (folder && sourceRepo === '') setSourceRepo(folder);
  }

  async function submit(event: Event) {
    event.preventDefault();
    if (busy) return;
    const repo = sourceRepo.trim();
    const noRepo =
      repo === ''
        ? 'Enter the source repository the files come from.'
        : repo === 'vault'
          ? '“vault” is reserved for the customer vault.'
          : undefined;
    const noFiles = files.length === 0 ? 'Pick a folder or files.' : undefined;
    setRepoError(noRepo);
    setFilesError(noFiles);
    setFormError(null);
    if (noRepo || noFiles) {
      requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    setBusy(true);
    const under = prefix.trim().replace(/^\/+|\/+$/g, '');
    const pathOf = (file: File) => (under ? `${under}/${relativePath(file)}` : relativePath(file));
    const results: Outcome[] = [];
    const sendable = files.filter((f) => {
      const why = skipBeforeReading(f);
      if (why) results.push({ path: pathOf(f), status: 'skipped', chunks: 0, detail: why });
      return !why;
    });
    const planned = batches(sendable, (f) => f.size);
    let sent = 0;
    try {
      for (const [i, batch] of planned.entries()) {
        setProgress(
          `Reading and sending batch ${i + 1} of ${planned.length}: ${count.format(sent)} of ${plural(sendable.length, 'file')} sent so far.`,
        );
        const documents: { source_repo: string; path: string; content: string }[] = [];
        for (const file of batch) {
          const text = textOf(await readBytes(file));
          if (text === null)
            results.push({
              path: pathOf(file),
              status: 'skipped',
              chunks: 0,
              detail: 'not text (binary or not UTF-8)',
            });
          else documents.push({ source_repo: repo, path: pathOf(file), content: text });
        }
        if (documents.length === 0) continue;
        const { data, error } = await api.POST('/api/knowledge/ingest', { body: { documents } });
        if (!data) {
          setFormError(`Batch ${i + 1} of ${planned.length} was refused: ${problem(error).message}`);
          break;
        }
        results.push(...resultsOf(data, documents));
        sent += batch.length;
      }
    } finally {
      setBusy(false);
    }
    setOutcomes(results);
    const failed = results.filter((r) => r.status === 'failed').length;
    const skipped = results.filter((r) => r.status === 'skipped').length;
    const stored = results.length - failed - skipped;
    const summary = `Ingest finished: ${count.format(stored)} stored, ${count.format(failed)} failed, ${count.format(skipped)} skipped.`;
    setProgress(summary);
    toast(summary, failed ? 'error' : 'info');
    props.onDone();
  }

  const counts =
    outcomes &&
    (['created', 'updated', 'unchanged', 'failed', 'skipped'] as const)
      .map((s) => `${outcomes.filter((o) => o.status === s).length} ${s}`)
      .join(', ');
  return (
    <section aria-labelledby="ingest-heading">
      <h2 id="ingest-heading">Ingest from a folder</h2>
      <p class="muted">
        The files are read in this browser and sent in batches of at most 500 documents, each path relative to the
        picked folder (its first segment is the category). Files that are not text (a NUL byte, or not UTF-8) or larger
        than 2 MB are skipped here; the server fails empty files and those over 500,000 characters, each on its own.
      </p>
      <form ref={form} class="form" onSubmit={handler(submit)} noValidate>
        <FormError id="ingest-error" message={formError} />
        <FieldFrame
          id="ingest-folder"
          label="Folder"
          error={filesError}
          hint={files.length ? `${plural(files.length, 'file')} picked.` : 'Every file under the folder.'}
        >
          {(aria) => (
            <input
              {...aria}
              type="file"
              {...({ webkitdirectory: true } as object)}
              multiple
              onChange={picked}
              disabled={busy}
            />
          )}
        </FieldFrame>
        <FieldFrame
          id="ingest-files"
          label="Or files"
          hint="Several files; each one's path is its name (under the path below, if given)."
        >
          {(aria) => <input {...aria} type="file" multiple onChange={picked} disabled={busy} />}
        </FieldFrame>
        <Field
          id="ingest-repo"
          label="Source repository"
          required
          value={sourceRepo}
          onInput={setSourceRepo}
          error={repoError}
          hint="The folder's name unless you change it."
          disabled={busy}
        />
        <Field
          id="ingest-prefix"
          label="Under the path"
          value={prefix}
          onInput={setPrefix}
          disabled={busy}
          hint="Optional: a folder put before every path (its first segment is then the category), such as docs for files picked on their own."
        />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Ingesting…' : 'Ingest'}
          </button>
        </div>
        <p id="ingest-progress" role="status" class="muted">
          {progress}
        </p>
      </form>
      {outcomes && (
        <div class="table-wrap">
          <table id="ingest-results">
            <caption>Results per document: {counts}</caption>
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col">Result</th>
                <th scope="col" class="num">
                  Chunks
                </th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {outcomes.map((o, i) => (
                <tr key={i} data-path={o.path} data-status={o.status}>
                  <th scope="row">{o.path}</th>
                  <td>{o.status}</td>
                  <td class="num">{count.format(o.chunks)}</td>
                  <td>{o.detail}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function resultsOf(data: IngestResult, documents: { path: string }[]): Outcome[] {
  return data.results.map((r) => {
    const failure = data.failures.find((f) => f.index === r.index);
    return {
      path: r.path ?? documents[r.index]?.path ?? `#${r.index}`,
      status: r.status,
      chunks: r.chunks,
      detail: failure ? `${failure.error}: ${failure.message}` : '',
    };
  });
}
