/**
 * The "key contains" filter of the pages that list a service's keys: its value lives in the
 * address (`?key=`), so a filtered list is a link.
 */
import { useLocation } from 'preact-iso';

export function KeyFilter({ label }: { label: string }) {
  const { query: q, route, path } = useLocation();
  return (
    <label class="field" style={{ flexDirection: 'row', alignItems: 'center', gap: '8px' }}>
      {label} contains
      <input
        name="key"
        value={q.key ?? ''}
        placeholder="any"
        onChange={(e) =>
          route(`${path}${e.currentTarget.value ? `?key=${encodeURIComponent(e.currentTarget.value)}` : ''}`, true)
        }
      />
    </label>
  );
}
