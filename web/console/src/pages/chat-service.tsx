// A profile's chat-service connector (admin), /profiles/:slug/chat-service, on the session mirror
// /api/admin/agents/{profile_id}/chatsvc: the integration's status and its bot's socket (live:
// the integration's events on /ws folded in, and the socket state read again while active), connect
// (the provision token a password field, emptied once the request is made, whatever the answer;
// a community picker filled by POST .../communities; verify_tls off warns), test, disconnect
// after a confirmation. Without the integration key the server answers 503
// integration_key_missing: the page names the setting instead of a form. A revoked integration
// offers a reconnect.

import { useRoute } from 'preact-iso';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiErrorBody, type Schemas } from '../api/client.ts';
import {
  checkBotUsername,
  checkDisplayName,
  checkExpiry,
  checkInstanceUrl,
  checkProvisionToken,
  EXPIRY_HOURS,
  nextUsername,
  suggestUsername,
} from '../chatsvc-rules.ts';
import { connected as live, listen, streamId, type LogEvent } from '../live.ts';
import { LoadFailed, Loading, NeedsAdmin, Page } from '../page.tsx';
import { Confirm } from '../ui/dialog.tsx';
import { problem, serverErrors } from '../ui/errors.ts';
import { Field, FieldFrame, FormError, focusFirstError } from '../ui/field.tsx';
import { toast } from '../ui/toast.tsx';
import './chat-service.css';
import { handler } from '../ui/handler.ts';

type Profile = Schemas['Profile'];
type Integration = Schemas['IntegrationStatus'];
type TestResult = Schemas['ChatsvcTestResult'];
interface Community {
  id: string;
  name: string;
  member_count?: number;
}

/** What the page knows of the integration: loading, none, the key missing, one, or a failure. */
type State =
  | { kind: 'loading' }
  | { kind: 'none' }
  | { kind: 'key_missing'; message: string }
  | { kind: 'integration'; integration: Integration }
  | { kind: 'failed'; error: ApiErrorBody };

const KEY_SETTING = 'ORCH_INTEGRATION_ENCRYPTION_KEY';
const KEY_FILE_SETTING = 'ORCH_INTEGRATION_ENCRYPTION_KEY_FILE';
const POLL_MS = 5000;
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString('en') : 'never');

const SOCKET_WORDS: Record<Integration['socket']['state'], string> = {
  connected: 'connected',
  connecting: 'connecting',
  disconnected: 'disconnected (reconnecting)',
  standby: 'standby (another server process holds it)',
  stopped: 'stopped',
};

/** An integration event applied to the page's state. */
function fold(state: State, event: LogEvent): State {
  const d = event.data as Record<string, unknown>;
  const text = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : '');
  if (event.type === 'ChatIntegrationDeleted') return { kind: 'none' };
  if (event.type === 'IntegrationRevokedExternally' && state.kind === 'integration') {
    return {
      kind: 'integration',
      integration: {
        ...state.integration,
        status: 'revoked_externally',
        socket: { state: 'stopped', since: null, last_error: null },
      },
    };
  }
  if (event.type === 'ChatIntegrationConnected') {
    return {
      kind: 'integration',
      integration: {
        instance_url: text('instance_url'),
        bot_user_id: text('bot_user_id'),
        bot_username: text('bot_username'),
        token_prefix: text('token_prefix'),
        token_expires_at: typeof d.token_expires_at === 'string' ? d.token_expires_at : null,
        status: 'active',
        verify_tls: d.verify_tls !== false,
        identity_fingerprint: text('identity_fingerprint'),
        connected_at: text('at') || event.at,
        socket: { state: 'connecting', since: null, last_error: null },
      },
    };
  }
  return state;
}

/** The one-line state: what the status route reports, in words. */
function headline(state: State): string {
  if (state.kind === 'none') return 'Not connected';
  if (state.kind !== 'integration') return '';
  const { integration: i } = state;
  if (i.status === 'revoked_externally') return 'Revoked on the chat service (revoked_externally)';
  return i.socket.state === 'connected'
    ? 'Connected'
    : `Connected; the bot's socket is ${SOCKET_WORDS[i.socket.state]}`;
}

export function ChatService() {
  const { params } = useRoute();
  const slug = params.slug!;
  const [profile, setProfile] = useState<Profile | null>(null);
  const [loadError, setLoadError] = useState<{ status: number; body: ApiErrorBody } | null>(null);
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [tested, setTested] = useState<{ result?: TestResult; error?: ApiErrorBody } | null>(null);
  const [testing, setTesting] = useState(false);
  const [disconnecting, setDisconnecting] = useState(false);
  const [confirmError, setConfirmError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function loadProfile() {
    setLoadError(null);
    const { data, error, response } = await api.GET('/api/agent-chat/profiles/{slug}', { params: { path: { slug } } });
    if (data) setProfile(data);
    else setLoadError({ status: response.status, body: problem(error) });
  }

  // Bumped by every event folded in: a read that started before it may predate it (the read model
  // can lag the socket), so its answer is dropped.
  const generation = useRef(0);

  async function loadStatus(id = profile?.id) {
    if (!id) return;
    const started = generation.current;
    const { data, error, response } = await api.GET('/api/admin/agents/{profile_id}/chatsvc', {
      params: { path: { profile_id: id } },
    });
    if (generation.current !== started) return;
    if (data) return setState({ kind: 'integration', integration: data });
    const body = problem(error);
    if (response.status === 404 && body.error === 'not_configured') setState({ kind: 'none' });
    else if (response.status === 503 && body.error === 'integration_key_missing')
      setState({ kind: 'key_missing', message: body.message });
    else setState({ kind: 'failed', error: body });
  }

  useEffect(() => {
    setProfile(null);
    setState({ kind: 'loading' });
    setTested(null);
    void loadProfile();
  }, [slug]);
  useEffect(() => {
    if (profile) void loadStatus(profile.id);
  }, [profile?.id]);

  // Live: the integration's own events (connected, revoked, deleted) folded into the state as the
  // projection folds them, rather than read again: the socket can deliver an event before the read
  // model has it. The bot's socket state then comes with the next read.
  useEffect(() => {
    if (!profile) return;
    return listen((event) => {
      if (streamId(event.stream, 'orch.integration') !== profile.id) return;
      generation.current++;
      setState((old) => fold(old, event));
    });
  }, [profile?.id]);
  // Events before the socket was open (or while it was down) are not replayed: read the status again when it is.
  const liveNow = live.value;
  useEffect(() => {
    if (liveNow && profile) void loadStatus(profile.id);
  }, [liveNow]);
  // The bot's socket is not in the log: while an integration is active its state is read again.
  const active = state.kind === 'integration' && state.integration.status === 'active';
  useEffect(() => {
    if (!active || !profile) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void loadStatus(profile.id);
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [active, profile?.id]);

  async function test() {
    if (!profile || testing) return;
    setTesting(true);
    setTested(null);
    const { data, error } = await api.POST('/api/admin/agents/{profile_id}/chatsvc/test', {
      params: { path: { profile_id: profile.id } },
    });
    setTesting(false);
    setTested(data ? { result: data } : { error: problem(error) });
    // A 401 to the bot token flips the integration to revoked_externally: read it again.
    void loadStatus(profile.id);
  }

  async function disconnect() {
    if (!profile || busy) return;
    setBusy(true);
    setConfirmError(null);
    const { error, response } = await api.DELETE('/api/admin/agents/{profile_id}/chatsvc', {
      params: { path: { profile_id: profile.id } },
    });
    setBusy(false);
    if (response.ok || response.status === 404) {
      setDisconnecting(false);
      setTested(null);
      toast(`${profile.name} is disconnected from the chat service.`);
      generation.current++;
      setState({ kind: 'none' });
    } else setConfirmError(problem(error).message);
  }

  function connected(integration: Integration) {
    generation.current++;
    setState({ kind: 'integration', integration });
    setTested(null);
    toast(`${profile!.name} is connected to the chat service as ${integration.bot_username}.`);
  }

  if (loadError?.status === 403) return <NeedsAdmin error={loadError.body} />;
  if (loadError)
    return (
      <Page title="Chat service">
        <LoadFailed error={loadError.body} retry={handler(loadProfile)} />
      </Page>
    );
  if (!profile)
    return (
      <Page title="Chat service">
        <Loading />
      </Page>
    );
  const integration = state.kind === 'integration' ? state.integration : null;
  return (
    <Page
      title={`Chat service of ${profile.name}`}
      actions={
        <a class="button-link" href={`/profiles/${profile.slug}`}>
          Back to the profile
        </a>
      }
    >
      <p class="muted">
        The profile's bot on a chat service: it answers direct messages and mentions there (reply mode{' '}
        {profile.channel_reply_mode}), end-to-end encrypted.
      </p>
      <section aria-labelledby="chatsvc-status-heading">
        <h2 id="chatsvc-status-heading">Status</h2>
        {state.kind !== 'key_missing' && <p class="muted">{live.value ? 'Live: up to date' : 'Live: connecting…'}</p>}
        {state.kind === 'loading' && <Loading />}
        {state.kind === 'failed' && <LoadFailed error={state.error} retry={handler(() => loadStatus())} />}
        {state.kind === 'key_missing' && <KeyMissing message={state.message} />}
        {(state.kind === 'none' || integration) && (
          <p id="chatsvc-state" class={`state-line${integration?.status === 'revoked_externally' ? ' state-bad' : ''}`}>
            {headline(state)}
          </p>
        )}
        {integration && <Details integration={integration} />}
        {integration?.status === 'active' && (
          <div class="actions">
            <button type="button" disabled={testing} onClick={handler(test)}>
              {testing ? 'Testing…' : 'Test the connection'}
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setConfirmError(null);
                setDisconnecting(true);
              }}
            >
              Disconnect
            </button>
          </div>
        )}
        <TestOutcome tested={tested} />
      </section>
      {state.kind === 'none' && (
        <ConnectForm
          profile={profile}
          onConnected={connected}
          onKeyMissing={(message) => setState({ kind: 'key_missing', message })}
        />
      )}
      {integration?.status === 'revoked_externally' && (
        <>
          <div class="panel warning" role="note">
            <p>
              The chat service refused the bot's token, so the bot is silent. Reconnect with a fresh provision token (a
              new bot: the revoked one keeps its end-to-end keys on the chat service), or disconnect to drop this
              integration.
            </p>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setConfirmError(null);
                setDisconnecting(true);
              }}
            >
              Disconnect
            </button>
          </div>
          <ConnectForm
            profile={profile}
            previous={integration}
            onConnected={connected}
            onKeyMissing={(message) => setState({ kind: 'key_missing', message })}
          />
        </>
      )}
      {disconnecting && (
        <Confirm
          title="Disconnect from the chat service"
          confirm="Disconnect"
          cancel="Keep it connected"
          busy={busy}
          error={confirmError}
          question={`Disconnect ${profile.name} from the chat service? The bot stops answering there, and its private keys and sessions here are destroyed. Its token on the chat service lives until it expires unless an admin of the chat service revokes it.`}
          onConfirm={handler(disconnect)}
          onClose={() => setDisconnecting(false)}
        />
      )}
    </Page>
  );
}

function KeyMissing(props: { message: string }) {
  return (
    <div class="panel warning" role="note" id="chatsvc-key-missing">
      <p>
        <strong>The chat-service connector is off on this server</strong> (integration_key_missing).
      </p>
      <p>
        Set <code>{KEY_SETTING}</code> (64 hex characters: 32 random bytes, for example from{' '}
        <code>openssl rand -hex 32</code>) or <code>{KEY_FILE_SETTING}</code> (a file holding it) in the server's
        settings, and restart it. The key seals the bots' tokens and private keys.
      </p>
      <p class="muted">The server said: {props.message}</p>
    </div>
  );
}

function Details(props: { integration: Integration }) {
  const i = props.integration;
  return (
    <dl class="pairs" aria-label="Integration">
      <div>
        <dt>Integration</dt>
        <dd id="chatsvc-integration-status">{i.status}</dd>
      </div>
      <div>
        <dt>Bot's socket</dt>
        <dd id="chatsvc-socket">
          {SOCKET_WORDS[i.socket.state]}
          {i.socket.since ? ` since ${when(i.socket.since)}` : ''}
        </dd>
      </div>
      {i.socket.last_error && (
        <div>
          <dt>Last socket error</dt>
          <dd>{i.socket.last_error}</dd>
        </div>
      )}
      <div>
        <dt>Chat service</dt>
        <dd>{i.instance_url}</dd>
      </div>
      <div>
        <dt>Bot</dt>
        <dd>{i.bot_username}</dd>
      </div>
      <div>
        <dt>Token</dt>
        <dd>
          <code>{i.token_prefix}…</code>, expires {when(i.token_expires_at)}
        </dd>
      </div>
      <div>
        <dt>Certificate checks</dt>
        <dd id="chatsvc-verify-tls">
          {i.verify_tls ? 'on' : "off: the REST calls of this integration do not check the chat service's certificate"}
        </dd>
      </div>
      <div>
        <dt>Bot's identity fingerprint</dt>
        <dd>
          <code>{i.identity_fingerprint}</code>
        </dd>
      </div>
      <div>
        <dt>Connected</dt>
        <dd>{when(i.connected_at)}</dd>
      </div>
    </dl>
  );
}

function TestOutcome(props: { tested: { result?: TestResult; error?: ApiErrorBody } | null }) {
  const { tested } = props;
  return (
    <div id="chatsvc-test" role="status" class="test-outcome">
      {tested?.result && (
        <p class={tested.result.ok ? undefined : 'state-bad'}>
          Test: {tested.result.ok ? 'ok' : 'not ok'}; the chat service answered {tested.result.chatsvc_status} in{' '}
          {tested.result.latency_ms} ms; integration {tested.result.status}.
        </p>
      )}
      {tested?.error && (
        <p class="state-bad">
          Test failed ({tested.error.error}
          {typeof tested.error.chatsvc_status === 'number'
            ? `, chat service status ${tested.error.chatsvc_status}`
            : ''}
          ): {tested.error.message}
        </p>
      )}
    </div>
  );
}

const CONNECT_FIELDS = [
  'instance_url',
  'provision_token',
  'bot_username',
  'display_name',
  'default_community_id',
  'expires_in_hours',
  'verify_tls',
] as const;

/** Connect, or reconnect after a revocation. The provision token lives in this form's state only until the request is made. */
function ConnectForm(props: {
  profile: Profile;
  previous?: Integration;
  onConnected: (i: Integration) => void;
  onKeyMissing: (message: string) => void;
}) {
  const { profile, previous } = props;
  const prefix = previous ? 'reconnect' : 'connect';
  const [instanceUrl, setInstanceUrl] = useState(previous?.instance_url ?? '');
  const [token, setToken] = useState('');
  const [username, setUsername] = useState(
    previous ? nextUsername(previous.bot_username) : suggestUsername(profile.slug),
  );
  const [displayName, setDisplayName] = useState(profile.name.slice(0, 64));
  const [expiry, setExpiry] = useState(String(EXPIRY_HOURS.default));
  const [verifyTls, setVerifyTls] = useState(previous?.verify_tls ?? true);
  const [communities, setCommunities] = useState<Community[] | null>(null);
  const [community, setCommunity] = useState('');
  const [loadingCommunities, setLoadingCommunities] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errorId = `${prefix}-error`;

  /** A refusal onto the form: its fields where the server names one, else the form's error. */
  function refused(body: ApiErrorBody, during: 'connect' | 'communities') {
    if (body.error === 'integration_key_missing') return props.onKeyMissing(body.message);
    const detail = typeof body.detail === 'string' ? body.detail : '';
    const status = typeof body.chatsvc_status === 'number' ? body.chatsvc_status : null;
    let fields: Record<string, string> = {};
    let message: string | null = null;
    if (body.error === 'insecure_instance_url') fields.instance_url = body.message;
    else if (body.error === 'chatsvc_mint_bot_failed') {
      const said = `${body.message}: ${detail}${status !== null ? ` (chat service status ${status})` : ''}`;
      if (status === 401 || status === 403)
        fields.provision_token = `The chat service refused this provision token. ${said}`;
      else if (/bot_username/.test(detail)) fields.bot_username = said;
      else if (during === 'communities') fields.default_community_id = `Could not list the communities. ${said}`;
      else if (status === null) fields.instance_url = `The chat service could not be reached. ${said}`;
      else message = said;
    } else {
      const r = serverErrors(body, CONNECT_FIELDS);
      fields = r.fields;
      message = r.form;
    }
    setErrors(fields);
    setFormError(message);
    focusFirstError(form.current, errorId);
  }

  /** Client checks of the fields a call sends; the errors by field. */
  function check(which: readonly string[]): Record<string, string> {
    const found: Record<string, string> = {};
    const put = (field: string, e: string | null) => {
      if (e && which.includes(field)) found[field] = e;
    };
    put('instance_url', checkInstanceUrl(instanceUrl));
    put('provision_token', checkProvisionToken(token));
    put('bot_username', checkBotUsername(username));
    put('display_name', checkDisplayName(displayName));
    const hours = checkExpiry(expiry);
    if ('error' in hours) put('expires_in_hours', hours.error);
    return found;
  }

  async function loadCommunities() {
    if (loadingCommunities) return;
    setFormError(null);
    const found = check(['instance_url', 'provision_token']);
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(form.current, errorId);
    setLoadingCommunities(true);
    const { data, error } = await api.POST('/api/admin/agents/{profile_id}/chatsvc/communities', {
      params: { path: { profile_id: profile.id } },
      body: { instance_url: instanceUrl.trim(), provision_token: token, verify_tls: verifyTls },
    });
    setLoadingCommunities(false);
    if (!data) return refused(problem(error), 'communities');
    const list = ((data as { communities?: Community[] }).communities ?? []).filter(
      (c) => typeof c?.id === 'string' && typeof c?.name === 'string',
    );
    setCommunities(list);
    if (community && !list.some((c) => c.id === community)) setCommunity('');
    toast(list.length === 1 ? 'One community to choose from.' : `${list.length} communities to choose from.`);
  }

  async function submit(event: Event) {
    event.preventDefault();
    if (busy) return;
    setFormError(null);
    const found = check(CONNECT_FIELDS);
    setErrors(found);
    if (Object.keys(found).length) return focusFirstError(form.current, errorId);
    const hours = checkExpiry(expiry) as { value: number | undefined };
    setBusy(true);
    const { data, error } = await api.POST('/api/admin/agents/{profile_id}/chatsvc/connect', {
      params: { path: { profile_id: profile.id } },
      body: {
        instance_url: instanceUrl.trim(),
        provision_token: token,
        bot_username: username,
        display_name: displayName,
        default_community_role: 'member',
        verify_tls: verifyTls,
        ...(community ? { default_community_id: community } : {}),
        ...(hours.value !== undefined ? { expires_in_hours: hours.value } : {}),
      },
    });
    // The token was used (or refused): it is not kept, whatever the answer.
    setToken('');
    setBusy(false);
    if (data) return props.onConnected(data);
    refused(problem(error), 'connect');
  }

  const communityOptions = [
    {
      value: '',
      label: communities ? 'None: join one later on the chat service' : 'None (load the communities to choose one)',
    },
    ...(communities ?? []).map((c) => ({
      value: c.id,
      label: typeof c.member_count === 'number' ? `${c.name} (${c.member_count} members)` : c.name,
    })),
  ];
  return (
    <section aria-labelledby={`${prefix}-heading`}>
      <h2 id={`${prefix}-heading`}>{previous ? 'Reconnect' : 'Connect'}</h2>
      <p class="muted">
        A chat service admin makes a provision token (scope <code>bot:provision</code>) for this. It is used for this
        request only and never stored: the field empties once the request is made.
      </p>
      <form ref={form} class="form grid" onSubmit={handler(submit)} noValidate aria-labelledby={`${prefix}-heading`}>
        <FormError id={errorId} message={formError} />
        <Field
          id={`${prefix}-instance-url`}
          label="Chat service base URL"
          required
          value={instanceUrl}
          onInput={setInstanceUrl}
          error={errors.instance_url}
          type="text"
          autoComplete="url"
          hint="https, or http to a loopback address (for example http://127.0.0.1:8080)."
        />
        <FieldFrame
          id={`${prefix}-provision-token`}
          label="Provision token"
          required
          error={errors.provision_token}
          hint="cb_ followed by 64 hex characters."
        >
          {(aria) => (
            <input
              {...aria}
              type="password"
              value={token}
              required
              autoComplete="off"
              spellcheck={false}
              onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
            />
          )}
        </FieldFrame>
        <Field
          id={`${prefix}-bot-username`}
          label="Bot username"
          required
          value={username}
          onInput={setUsername}
          error={errors.bot_username}
          hint={
            previous
              ? "3 to 32 letters, digits or underscores; not the revoked bot's name."
              : '3 to 32 letters, digits or underscores.'
          }
        />
        <Field
          id={`${prefix}-display-name`}
          label="Display name"
          required
          value={displayName}
          onInput={setDisplayName}
          error={errors.display_name}
          hint="Up to 64 characters."
        />
        <fieldset class="flags">
          <legend>Community</legend>
          <div class="actions">
            <button type="button" class="secondary" disabled={loadingCommunities} onClick={handler(loadCommunities)}>
              {loadingCommunities ? 'Loading communities…' : 'Load communities'}
            </button>
            <span class="muted">with the URL and the token above</span>
          </div>
          <Field
            id={`${prefix}-community`}
            label="Community to join"
            kind="select"
            value={community}
            onInput={setCommunity}
            options={communityOptions}
            error={errors.default_community_id}
            hint="The bot joins it as a member."
          />
        </fieldset>
        <Field
          id={`${prefix}-expiry`}
          label="Token lifetime (hours)"
          kind="number"
          value={expiry}
          onInput={setExpiry}
          error={errors.expires_in_hours}
          hint={`${EXPIRY_HOURS.min} to ${EXPIRY_HOURS.max.toLocaleString('en')}; the bot's token on the chat service expires after it.`}
        />
        <fieldset class="flags">
          <legend>Transport</legend>
          <Field
            id={`${prefix}-verify-tls`}
            label="Check the chat service's TLS certificate"
            kind="checkbox"
            checked={verifyTls}
            onChange={setVerifyTls}
            error={errors.verify_tls}
            hint={
              verifyTls ? (
                'Recommended. For a private certificate authority, set ORCH_CHATSVC_CA_BUNDLE on the server instead of turning this off.'
              ) : (
                <span class="warning-text" id={`${prefix}-tls-warning`}>
                  Warning: with certificate checks off, anyone between this server and the chat service can read and
                  change the bot's traffic, its token included. Only for a test instance; set ORCH_CHATSVC_CA_BUNDLE for
                  a private certificate authority.
                </span>
              )
            }
          />
        </fieldset>
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Connecting…' : previous ? 'Reconnect' : 'Connect'}
          </button>
        </div>
      </form>
    </section>
  );
}
