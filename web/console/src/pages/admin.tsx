// Administration (admin role): the accounts (GET /api/admin/users), PAGE_SIZE at a time by the
// route's own paging (limit, offset, total); create one (POST /api/admin/users: its key shown
// once, in the same KeyOnce dialog as the account page); change a role or activation (PATCH
// /api/admin/users/{id}, only what changed; the server's cannot_demote_self and not_an_account
// explained in words); rotate another account's key (a confirmation, then KeyOnce). Service
// principals (the runner) and agent credentials show their type and no change or rotate control:
// the server refuses both (409), they are managed elsewhere. Reached by URL without the role, the
// server's 403 shows as the "needs admin" page.

import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';
import { session } from '../session.ts';
import { Confirm, Dialog } from '../ui/dialog.tsx';
import { problem, serverErrors } from '../ui/errors.ts';
import { Field, FormError, focusFirstError } from '../ui/field.tsx';
import { KeyOnce, nextFrame, type ShownKey } from '../ui/key-once.tsx';
import { announce, toast } from '../ui/toast.tsx';
import { handler } from '../ui/handler.ts';

type Account = Schemas['AdminAccount'];
type Role = Account['role'];
export const PAGE_SIZE = 20;
const ROLE_OPTIONS: { value: Role; label: string }[] = [
  { value: 'readonly', label: 'readonly (reads only)' },
  { value: 'user', label: 'user (reads and writes work)' },
  { value: 'admin', label: 'admin (everything)' },
];
const TYPE_WORDS: Record<Account['principal_type'], string> = {
  account: 'account',
  service: 'service (the runner)',
  agent: 'agent credential',
};
const MANAGED_ELSEWHERE: Record<Exclude<Account['principal_type'], 'account'>, string> = {
  service: "Managed by the runner's configuration",
  agent: 'Rotated from its agent',
};

/** The server's refusals of a change, in words (its own message kept beside them). */
export function changeRefusal(body: ApiErrorBody): string {
  if (body.error === 'cannot_demote_self') {
    return `You cannot demote or deactivate your own account: another admin has to do it, so that an admin always remains. (The server said: ${body.message}.)`;
  }
  if (body.error === 'not_an_account') {
    return `This is not a person's account but a service principal or an agent credential; its role and activation are managed elsewhere. (The server said: ${body.message}.)`;
  }
  return body.message;
}

/** The Rotate key button of an account's row (found anew: the list may have been re-rendered). */
const rotateButtonOf = (username: string) => () =>
  document.querySelector<HTMLElement>(`tr[data-account="${CSS.escape(username)}"] button[data-action="rotate"]`);

const newAccountButton = () => document.querySelector<HTMLElement>('button[data-action="new-account"]');

export function Admin() {
  const [offset, setOffset] = useState(0);
  const [list, setList] = useState<Schemas['AccountPage'] | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Account | null>(null);
  const [rotating, setRotating] = useState<Account | null>(null);
  const [rotateError, setRotateError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [shown, setShown] = useState<ShownKey | null>(null);
  const asked = useRef(0);
  const me = session.value?.user?.id;

  async function load(at = offset) {
    const seq = ++asked.current;
    setError(null);
    const {
      data,
      error: failed,
      response,
    } = await api.GET('/api/admin/users', { params: { query: { limit: PAGE_SIZE, offset: at } } });
    if (seq !== asked.current) return;
    if (data) setList(data);
    else setError({ status: response.status, body: problem(failed) });
  }
  useEffect(() => {
    void load(offset);
  }, [offset]);

  function go(to: number) {
    if (!list || to < 0 || to >= Math.max(list.total, 1) || to === offset) return;
    setOffset(to);
    announce(`Accounts ${to + 1} to ${Math.min(to + PAGE_SIZE, list.total)} of ${list.total}.`);
  }

  async function rotate() {
    if (!rotating || busy) return;
    setBusy(true);
    setRotateError(null);
    const { data, error: refused } = await api.POST('/api/admin/users/{user_id}/api-key/rotate', {
      params: { path: { user_id: rotating.id } },
    });
    setBusy(false);
    if (!data) return setRotateError(problem(refused).message);
    setRotating(null);
    await nextFrame();
    setShown({ username: data.username, apiKey: data.api_key, kind: 'other' });
  }

  async function created(account: { username: string; api_key: string }) {
    setCreating(false);
    void load(offset);
    await nextFrame();
    setShown({ username: account.username, apiKey: account.api_key, kind: 'created' });
  }

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  const accounts = list?.users ?? null;
  const first = (list?.offset ?? 0) + 1;
  const last = (list?.offset ?? 0) + (accounts?.length ?? 0);
  return (
    <Page
      title="Administration"
      actions={
        list && (
          <button type="button" data-action="new-account" onClick={() => setCreating(true)}>
            New account
          </button>
        )
      }
    >
      {error ? (
        <LoadFailed error={error.body} retry={handler(() => load(offset))} />
      ) : !accounts || !list ? (
        <Loading />
      ) : (
        <section aria-labelledby="accounts-heading">
          <h2 id="accounts-heading">Accounts</h2>
          <p class="muted" id="accounts-range">
            {list.total === 0 ? 'No accounts.' : `Accounts ${first} to ${last} of ${list.total}.`}
          </p>
          <div class="table-wrap">
            <table aria-describedby="accounts-range">
              <caption class="visually-hidden">Accounts</caption>
              <thead>
                <tr>
                  <th scope="col">Username</th>
                  <th scope="col">Email</th>
                  <th scope="col">Type</th>
                  <th scope="col">Role</th>
                  <th scope="col">Active</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {accounts.map((a) => (
                  <tr key={a.id} data-account={a.username}>
                    <th scope="row">
                      {a.username}
                      {a.id === me ? ' (you)' : ''}
                    </th>
                    <td>{a.email}</td>
                    <td>{TYPE_WORDS[a.principal_type]}</td>
                    <td>{a.role}</td>
                    <td>{a.is_active ? 'yes' : 'no (deactivated)'}</td>
                    <td>
                      {a.principal_type === 'account' ? (
                        <div class="row-actions">
                          <button type="button" class="secondary small" onClick={() => setEditing(a)}>
                            Change<span class="visually-hidden"> {a.username}</span>
                          </button>
                          <button
                            type="button"
                            class="secondary small"
                            data-action="rotate"
                            onClick={() => {
                              setRotateError(null);
                              setRotating(a);
                            }}
                          >
                            Rotate key<span class="visually-hidden"> of {a.username}</span>
                          </button>
                        </div>
                      ) : (
                        <span class="muted">{MANAGED_ELSEWHERE[a.principal_type]}</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="pager">
            <button
              type="button"
              class="secondary"
              aria-disabled={offset === 0 ? 'true' : undefined}
              onClick={() => go(Math.max(0, offset - PAGE_SIZE))}
            >
              Previous accounts
            </button>
            <button
              type="button"
              class="secondary"
              aria-disabled={last >= list.total ? 'true' : undefined}
              onClick={() => last < list.total && go(offset + PAGE_SIZE)}
            >
              Next accounts
            </button>
          </div>
        </section>
      )}
      {creating && <CreateAccount onClose={() => setCreating(false)} onCreated={handler(created)} />}
      {editing && (
        <ChangeAccount
          account={editing}
          self={editing.id === me}
          onClose={() => setEditing(null)}
          onChanged={(changed) => {
            setEditing(null);
            setList((l) => l && { ...l, users: l.users.map((u) => (u.id === changed.id ? changed : u)) });
            toast(`${changed.username}: role ${changed.role}, ${changed.is_active ? 'active' : 'deactivated'}.`);
          }}
        />
      )}
      {rotating && (
        <Confirm
          title={`Rotate the API key of ${rotating.username}?`}
          confirm="Rotate key"
          busy={busy}
          error={rotateError}
          question={`A new key is made and shown once. The current key of ${rotating.username} stops working immediately: whatever uses it gets 401 until it has the new one.`}
          onConfirm={handler(rotate)}
          onClose={() => setRotating(null)}
          returnTo={rotateButtonOf(rotating.username)}
        />
      )}
      {shown && (
        <KeyOnce
          shown={shown}
          onClose={() => setShown(null)}
          returnTo={shown.kind === 'other' ? rotateButtonOf(shown.username) : newAccountButton}
        />
      )}
    </Page>
  );
}

const USERNAME = /^[A-Za-z0-9_.-]+$/;
const CREATE_FIELDS = ['username', 'email', 'role', 'password'] as const;

function CreateAccount(props: {
  onClose: () => void;
  onCreated: (account: { username: string; api_key: string }) => void;
}) {
  const [values, setValues] = useState({ username: '', email: '', role: 'user' as Role, password: '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const set = (field: keyof typeof values) => (value: string) => setValues((v) => ({ ...v, [field]: value }));

  /** The server's checks (schemas.ts: CreateAccountBody), before sending. */
  function check(): Record<string, string> {
    const found: Record<string, string> = {};
    const username = values.username.trim();
    if (username === '') found.username = 'A username is required.';
    else if (username.length > 64) found.username = 'At most 64 characters.';
    else if (!USERNAME.test(username)) found.username = 'Letters, digits, dot, dash and underscore only.';
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(values.email.trim()))
      found.email = 'An email address, like name@example.com.';
    if (values.password !== '' && values.password.length < 12)
      found.password = 'At least 12 characters, or leave it empty.';
    if (values.password.length > 1024) found.password = 'At most 1,024 characters.';
    return found;
  }

  async function submit(event: Event) {
    event.preventDefault();
    if (busy) return;
    setFormError(null);
    const found = check();
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(form.current, 'create-account-error');
    setBusy(true);
    const body = {
      username: values.username.trim(),
      email: values.email.trim(),
      role: values.role,
      ...(values.password ? { password: values.password } : {}),
    };
    const { data, error } = await api.POST('/api/admin/users', { body });
    setBusy(false);
    if (data) {
      props.onCreated(data);
      return;
    }
    const refused = problem(error);
    if (refused.error === 'username_taken') setErrors({ username: `${refused.message}: choose another username.` });
    else if (refused.error === 'email_taken')
      setErrors({ email: `${refused.message}: another account has this address.` });
    else {
      const r = serverErrors(refused, CREATE_FIELDS);
      setErrors(r.fields);
      setFormError(r.form);
    }
    focusFirstError(form.current, 'create-account-error');
  }

  return (
    <Dialog title="New account" onClose={props.onClose}>
      <form ref={form} class="form" onSubmit={handler(submit)} noValidate>
        <FormError id="create-account-error" message={formError} />
        <Field
          id="new-username"
          label="Username"
          required
          value={values.username}
          onInput={set('username')}
          error={errors.username}
          hint="1 to 64 letters, digits, dots, dashes or underscores."
        />
        <Field
          id="new-email"
          label="Email"
          required
          value={values.email}
          onInput={set('email')}
          error={errors.email}
          autoComplete="off"
        />
        <Field
          id="new-role"
          label="Role"
          kind="select"
          options={ROLE_OPTIONS}
          value={values.role}
          onInput={set('role')}
          error={errors.role}
        />
        <Field
          id="new-password"
          label="Password"
          value={values.password}
          onInput={set('password')}
          error={errors.password}
          hint="Optional, at least 12 characters: to sign in to this console. Without one the account uses its API key only. Share it with its owner out of band."
        />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Creating…' : 'Create account'}
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function ChangeAccount(props: {
  account: Account;
  self: boolean;
  onClose: () => void;
  onChanged: (account: Account) => void;
}) {
  const { account } = props;
  const [role, setRole] = useState<Role>(account.role);
  const [active, setActive] = useState(account.is_active);
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  async function submit(event: Event) {
    event.preventDefault();
    if (busy) return;
    const body = {
      ...(role !== account.role ? { role } : {}),
      ...(active !== account.is_active ? { is_active: active } : {}),
    };
    if (Object.keys(body).length === 0) {
      props.onClose();
      return;
    }
    setBusy(true);
    setFormError(null);
    const { data, error } = await api.PATCH('/api/admin/users/{user_id}', {
      params: { path: { user_id: account.id } },
      body,
    });
    setBusy(false);
    if (data) return props.onChanged(data);
    setFormError(changeRefusal(problem(error)));
    focusFirstError(form.current, 'change-account-error');
  }

  return (
    <Dialog title={`Change ${account.username}${props.self ? ' (you)' : ''}`} onClose={props.onClose}>
      <form ref={form} class="form" onSubmit={handler(submit)} noValidate>
        <FormError id="change-account-error" message={formError} />
        <Field
          id="change-role"
          label="Role"
          kind="select"
          options={ROLE_OPTIONS}
          value={role}
          onInput={(v) => setRole(v as Role)}
        />
        <Field
          id="change-active"
          label="Active (can sign in and use its key)"
          kind="checkbox"
          checked={active}
          onChange={setActive}
          hint="A deactivated account's key and sessions stop working at once."
        />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save'}
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
