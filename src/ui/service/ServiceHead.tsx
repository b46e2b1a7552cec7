/**
 * The head of a service's pages: its name and type, and the tabs between its handlers, its
 * keys (virtual objects) or runs (workflows), and its state across keys. Each tab is a link.
 */
import { useLocation } from 'preact-iso';
import type { ComponentChildren } from 'preact';

const TYPE_LABEL: Record<string, string> = {
  Service: 'service',
  VirtualObject: 'virtual object',
  Workflow: 'workflow',
};

export const serviceHref = (name: string, tab = '') =>
  `/ui/services/${encodeURIComponent(name)}${tab ? `/${tab}` : ''}`;

export function ServiceHead({
  name,
  ty,
  children,
}: {
  name: string;
  ty: string | undefined;
  children?: ComponentChildren;
}) {
  const { path } = useLocation();
  const tabs: Array<[string, string]> = [['', 'Handlers']];
  if (ty === 'VirtualObject') tabs.push(['keys', 'Keys'], ['state', 'State']);
  if (ty === 'Workflow') tabs.push(['keys', 'Runs'], ['state', 'State']);
  return (
    <>
      <div class="page-head">
        <h1>{name}</h1>
        {ty && <span class="badge">{TYPE_LABEL[ty] ?? ty}</span>}
        <span class="spacer" />
        {children}
        <a class="btn" href={`/ui/invocations?service=${encodeURIComponent(name)}`}>
          Its invocations
        </a>
      </div>
      {tabs.length > 1 && (
        <nav class="tabs page-tabs">
          {tabs.map(([tab, label]) => (
            <a key={tab} href={serviceHref(name, tab)} class={path === serviceHref(name, tab) ? 'on' : ''}>
              {label}
            </a>
          ))}
        </nav>
      )}
    </>
  );
}
