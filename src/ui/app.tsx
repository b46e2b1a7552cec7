/** The pages and their addresses: every page has a deep link under /ui/. */
import { ErrorBoundary, LocationProvider, Route, Router } from 'preact-iso';
import { Shell } from './components/Shell';
import { Deployments } from './pages/Deployments';
import { Invocation } from './pages/Invocation';
import { Invocations } from './pages/Invocations';
import { ObjectKey } from './pages/ObjectKey';
import { Overview } from './pages/Overview';
import { Service } from './pages/Service';
import { ServiceKeys } from './pages/ServiceKeys';
import { ServiceState } from './pages/ServiceState';
import { Services } from './pages/Services';
import { Schedules } from './pages/Schedules';
import { Sql } from './pages/Sql';
import { Waiting } from './pages/Waiting';

function NotFound() {
  return (
    <div class="stack">
      <h1>Page not found</h1>
      <p>
        <a href="/ui/">Back to the overview</a>
      </p>
    </div>
  );
}

export function App() {
  return (
    <LocationProvider scope="/ui">
      <Shell>
        <ErrorBoundary>
          <Router>
            <Route path="/ui/" component={Overview} />
            <Route path="/ui/invocations" component={Invocations} />
            <Route path="/ui/invocations/:id" component={({ id }: { id: string }) => <Invocation key={id} id={id} />} />
            <Route path="/ui/services" component={Services} />
            <Route
              path="/ui/services/:name"
              component={({ name }: { name: string }) => <Service key={name} name={decodeURIComponent(name)} />}
            />
            <Route
              path="/ui/services/:name/keys"
              component={({ name }: { name: string }) => <ServiceKeys key={name} name={decodeURIComponent(name)} />}
            />
            <Route
              path="/ui/services/:name/state"
              component={({ name }: { name: string }) => <ServiceState key={name} name={decodeURIComponent(name)} />}
            />
            <Route path="/ui/waiting" component={Waiting} />
            <Route path="/ui/schedules" component={Schedules} />
            <Route path="/ui/deployments" component={Deployments} />
            <Route
              path="/ui/objects/:service/:objectKey"
              component={({ service, objectKey }: { service: string; objectKey: string }) => (
                <ObjectKey service={decodeURIComponent(service)} objectKey={decodeURIComponent(objectKey)} />
              )}
            />
            <Route path="/ui/sql" component={Sql} />
            <Route default component={NotFound} />
          </Router>
        </ErrorBoundary>
      </Shell>
    </LocationProvider>
  );
}
