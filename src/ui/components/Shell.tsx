/** The frame of every page: the sidebar with navigation, the live indicator and the theme switch. */
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { liveConnected } from '../api/live';
import { serverVersion } from '../api/version';
import { useLoad } from '../hooks/use-load';
import { theme, type Theme } from '../theme';

const NAV: Array<[string, string]> = [
  ['/ui/', 'Overview'],
  ['/ui/invocations', 'Invocations'],
  ['/ui/waiting', 'Waiting'],
  ['/ui/schedules', 'Schedules'],
  ['/ui/services', 'Services'],
  ['/ui/deployments', 'Deployments'],
  ['/ui/sql', 'SQL console'],
];

function isActive(path: string, href: string): boolean {
  return href === '/ui/' ? path === '/ui/' || path === '/ui' : path.startsWith(href);
}

export function Shell({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const version = useLoad(serverVersion, []);
  return (
    <div class="shell">
      <aside class="sidebar">
        <div class="sidebar-inner">
          <a class="brand" href="/ui/">
            <svg width="22" height="22" viewBox="0 0 24 24" aria-hidden="true">
              <circle cx="6" cy="6" r="3.2" fill="currentColor" />
              <circle cx="18" cy="12" r="3.2" fill="none" stroke="currentColor" stroke-width="2" />
              <circle cx="6" cy="18" r="3.2" fill="none" stroke="currentColor" stroke-width="2" />
              <path d="M9 7.2 15 10.8M15 13.2 9 16.8" stroke="currentColor" stroke-width="2" />
            </svg>
            redstate
          </a>
          <nav class="nav">
            {NAV.map(([href, label]) => (
              <a key={href} href={href} class={isActive(path, href) ? 'active' : ''}>
                {label}
              </a>
            ))}
          </nav>
          <div class="foot">
            {version.data && (
              <span
                class="version"
                title={`admin API v${version.data.min_admin_api_version}–v${version.data.max_admin_api_version}, ingress at ${version.data.ingress_endpoint}`}
              >
                speaks Restate {version.data.version}
              </span>
            )}
            <span title="Server-Sent Events from the admin API">
              <span class={`live-dot ${liveConnected.value ? 'on' : ''}`} />
              {liveConnected.value ? 'live' : 'reconnecting…'}
            </span>
            <label class="field">
              Theme
              <select
                value={theme.value}
                onChange={(e) => (theme.value = (e.currentTarget as HTMLSelectElement).value as Theme)}
              >
                <option value="system">System</option>
                <option value="light">Light</option>
                <option value="dark">Dark</option>
              </select>
            </label>
          </div>
        </div>
      </aside>
      <main>{children}</main>
    </div>
  );
}
