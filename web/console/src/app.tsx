// The app shell: a skip link, the banner with the account and sign-out, navigation by role, and
// the main landmark where the router puts each page. Pages other than sign-in and the cockpit
// are lazy chunks. Without a session every page but sign-in returns to sign-in, remembering
// where it was.

import { ErrorBoundary, lazy, LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { useEffect } from 'preact/hooks';
import { api, whenUnauthorized } from './api/client.ts';
import { Loading, Page } from './page.tsx';
import { Cockpit } from './pages/cockpit.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { loadSession, role, session, sessionError, signedOutLocally } from './session.ts';
import { Toasts } from './ui/toast.tsx';
import { handler } from './ui/handler.ts';

const Admin = lazy(() => import('./pages/admin.tsx').then((m) => m.Admin));
const Account = lazy(() => import('./pages/account.tsx').then((m) => m.Account));
const SignedOut = lazy(() => import('./pages/signed-out.tsx').then((m) => m.SignedOut));
const Projects = lazy(() => import('./pages/projects.tsx').then((m) => m.Projects));
const Board = lazy(() => import('./pages/board.tsx').then((m) => m.Board));
const Agents = lazy(() => import('./pages/agents.tsx').then((m) => m.Agents));
const Profiles = lazy(() => import('./pages/profiles.tsx').then((m) => m.Profiles));
const ProfilePage = lazy(() => import('./pages/profile.tsx').then((m) => m.ProfilePage));
const ChatService = lazy(() => import('./pages/chat-service.tsx').then((m) => m.ChatService));
const Knowledge = lazy(() => import('./pages/knowledge.tsx').then((m) => m.Knowledge));
const Templates = lazy(() => import('./pages/templates.tsx').then((m) => m.Templates));
const TemplatePage = lazy(() => import('./pages/template.tsx').then((m) => m.TemplatePage));
const Usage = lazy(() => import('./pages/usage.tsx').then((m) => m.Usage));
const Audit = lazy(() => import('./pages/audit.tsx').then((m) => m.Audit));
const Estate = lazy(() => import('./pages/estate.tsx').then((m) => m.Estate));
const EstateDoc = lazy(() => import('./pages/estate-doc.tsx').then((m) => m.EstateDoc));
const Conversations = lazy(() => import('./pages/conversations.tsx').then((m) => m.Conversations));
const ConversationPage = lazy(() => import('./pages/conversations.tsx').then((m) => m.ConversationPage));
const Activity = lazy(() => import('./pages/activity.tsx').then((m) => m.Activity));

const PUBLIC_PATHS = new Set(['/sign-in', '/signed-out']);

interface NavItem {
  href: string;
  label: string;
  admin?: boolean;
}
const NAV: NavItem[] = [
  { href: '/', label: 'Cockpit' },
  { href: '/projects', label: 'Projects' },
  { href: '/agents', label: 'Agents' },
  { href: '/estate', label: 'Estate knowledge' },
  { href: '/activity', label: 'Activity' },
  { href: '/profiles', label: 'Profiles', admin: true },
  { href: '/templates', label: 'Templates', admin: true },
  { href: '/usage', label: 'Usage', admin: true },
  { href: '/audit', label: 'Audit', admin: true },
  { href: '/conversations', label: 'Conversations', admin: true },
  { href: '/admin', label: 'Administration', admin: true },
];

function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        There is no page at this address. <a href="/">Go to the cockpit</a>.
      </p>
    </Page>
  );
}

function Nav() {
  const { path } = useLocation();
  const items = NAV.filter((item) => !item.admin || role.value === 'admin');
  return (
    <nav aria-label="Main">
      <ul>
        {items.map((item) => (
          <li key={item.href}>
            <a
              href={item.href}
              aria-current={
                path === item.href || (item.href !== '/' && path.startsWith(`${item.href}/`)) ? 'page' : undefined
              }
            >
              {item.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Banner() {
  const { route } = useLocation();
  const state = session.value;
  async function signOut() {
    await api.POST('/auth/logout');
    signedOutLocally();
    route('/signed-out');
  }
  return (
    <header class="banner">
      <a class="brand" href="/">
        Orchard
      </a>
      {state?.authenticated && state.user && (
        <div class="account">
          <span>
            Signed in as{' '}
            <a href="/account">
              <strong>{state.user.username}</strong>
              <span class="visually-hidden"> (your account)</span>
            </a>{' '}
            <span class="role">({state.user.role})</span>
          </span>
          <button type="button" onClick={handler(signOut)}>
            Sign out
          </button>
        </div>
      )}
    </header>
  );
}

function Routes() {
  const { path, url, route } = useLocation();
  const state = session.value;
  const needsSignIn = state !== null && !state.authenticated && !PUBLIC_PATHS.has(path);
  useEffect(() => {
    if (needsSignIn) route(`/sign-in?next=${encodeURIComponent(url)}`, true);
  }, [needsSignIn, url]);
  useEffect(
    () =>
      whenUnauthorized(() => {
        signedOutLocally();
      }),
    [],
  );
  if (state === null) return sessionError.value ? <p role="alert">{sessionError.value}</p> : <Loading />;
  if (needsSignIn) return <Loading />;
  return (
    <Router>
      <Route path="/" component={Cockpit} />
      <Route path="/sign-in" component={SignIn} />
      <Route path="/signed-out" component={SignedOut} />
      <Route path="/admin" component={Admin} />
      <Route path="/account" component={Account} />
      <Route path="/projects" component={Projects} />
      <Route path="/projects/:id" component={Board} />
      <Route path="/agents" component={Agents} />
      <Route path="/profiles" component={Profiles} />
      <Route path="/profiles/:slug" component={ProfilePage} />
      <Route path="/profiles/:slug/chat-service" component={ChatService} />
      <Route path="/bots/:profileId/knowledge" component={Knowledge} />
      <Route path="/templates" component={Templates} />
      <Route path="/templates/:slug" component={TemplatePage} />
      <Route path="/usage" component={Usage} />
      <Route path="/audit" component={Audit} />
      <Route path="/estate" component={Estate} />
      <Route path="/estate/docs/:id" component={EstateDoc} />
      <Route path="/conversations" component={Conversations} />
      <Route path="/conversations/:id" component={ConversationPage} />
      <Route path="/activity" component={Activity} />
      <Route default component={NotFound} />
    </Router>
  );
}

export function App() {
  useEffect(() => {
    void loadSession();
  }, []);
  const signedIn = session.value?.authenticated === true;
  return (
    <LocationProvider>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <Banner />
      {signedIn && <Nav />}
      <main id="main" tabIndex={-1}>
        <ErrorBoundary>
          <Routes />
        </ErrorBoundary>
      </main>
      <Toasts />
    </LocationProvider>
  );
}
