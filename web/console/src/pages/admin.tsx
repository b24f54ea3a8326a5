// Administration (admin role): the accounts (GET /api/admin/users). Reached by URL without the
// role, the server's 403 shows as the "needs admin" page.

import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';

type Account = Schemas['Account'];

export function Admin() {
  const [accounts, setAccounts] = useState<Account[] | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);

  async function load() {
    setError(null);
    const { data, error: failed, response } = await api.GET('/api/admin/users');
    if (data) setAccounts(data.users);
    else setError({ status: response.status, body: (failed as ApiErrorBody | undefined) ?? { error: 'network', message: 'no answer' } });
  }
  useEffect(() => {
    void load();
  }, []);

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  return (
    <Page title="Administration">
      {error ? <LoadFailed error={error.body} retry={load} /> : !accounts ? <Loading /> : (
        <section aria-labelledby="accounts-heading">
          <h2 id="accounts-heading">Accounts</h2>
          <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">Username</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Active</th></tr></thead>
              <tbody>
                {accounts.map((a) => (
                  <tr key={a.id}><th scope="row">{a.username}</th><td>{a.email}</td><td>{a.role}</td><td>{a.is_active ? 'yes' : 'no'}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </Page>
  );
}
