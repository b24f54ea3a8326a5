// One profile (admin), /profiles/:slug: its settings (a change sends only the fields that
// changed), enable and disable, links to its knowledge and its chat-service connector, its
// history, and a try-it panel on the private chat.

import { useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';
import { problem } from '../ui/errors.ts';
import { toast } from '../ui/toast.tsx';
import { History } from './profile/history.tsx';
import { Settings } from './profile/settings.tsx';
import { TryIt } from './profile/try-it.tsx';
import { handler } from '../ui/handler.ts';

type Profile = Schemas['Profile'];

export function ProfilePage() {
  const { params } = useRoute();
  const slug = params.slug!;
  const [profile, setProfile] = useState<Profile | null>(null);
  const [error, setError] = useState<{ status: number; body: ApiErrorBody } | null>(null);
  const [revision, setRevision] = useState(0);
  const [busy, setBusy] = useState(false);

  async function load() {
    setError(null);
    const {
      data,
      error: refused,
      response,
    } = await api.GET('/api/agent-chat/profiles/{slug}', { params: { path: { slug } } });
    if (data) setProfile(data);
    else setError({ status: response.status, body: problem(refused) });
  }
  useEffect(() => {
    setProfile(null);
    void load();
  }, [slug]);

  /** After any change: the profile as the server answered, and the history read again. */
  function changed(next: Profile) {
    setProfile(next);
    setRevision((r) => r + 1);
  }

  async function toggle() {
    if (!profile || busy) return;
    setBusy(true);
    const { data, error: refused } = await api.PUT('/api/agent-chat/profiles/{slug}', {
      params: { path: { slug } },
      body: { enabled: !profile.enabled },
    });
    setBusy(false);
    if (data) {
      changed(data);
      toast(`Profile ${data.name} ${data.enabled ? 'enabled' : 'disabled'}.`);
    } else toast(`Not changed: ${problem(refused).message}`);
  }

  if (error?.status === 403) return <NeedsAdmin error={error.body} />;
  if (error)
    return (
      <Page title={`Profile ${slug}`}>
        <LoadFailed error={error.body} retry={handler(load)} />
      </Page>
    );
  if (!profile)
    return (
      <Page title={`Profile ${slug}`}>
        <Loading />
      </Page>
    );
  return (
    <Page
      title={`Profile ${profile.name}`}
      actions={
        <div class="actions">
          <a class="button-link" href={`/bots/${profile.id}/knowledge`}>
            Knowledge
          </a>
          <a class="button-link" href={`/profiles/${profile.slug}/chat-service`}>
            Chat service
          </a>
          <button
            type="button"
            class={profile.enabled ? 'secondary' : undefined}
            disabled={busy}
            onClick={handler(toggle)}
          >
            {profile.enabled ? 'Disable' : 'Enable'}
          </button>
        </div>
      }
    >
      <p class="muted">
        Slug <code>{profile.slug}</code> · {profile.enabled ? 'enabled' : 'disabled: it answers no chat'} · reply mode{' '}
        {profile.channel_reply_mode} · knowledge search {profile.knowledge_search_enabled ? 'on' : 'off'} · id{' '}
        <code>{profile.id}</code>
      </p>
      <Settings profile={profile} onSaved={changed} />
      <History slug={slug} refresh={revision} />
      <TryIt profile={profile} />
    </Page>
  );
}
