/** The theme switch: the system's preference, or light / dark chosen in the sidebar and kept. */
import { effect, signal } from '@preact/signals';

export type Theme = 'system' | 'light' | 'dark';

const KEY = 'redstate.theme';
const stored = localStorage.getItem(KEY);
export const theme = signal<Theme>(stored === 'light' || stored === 'dark' ? stored : 'system');

effect(() => {
  const t = theme.value;
  if (t === 'system') {
    document.documentElement.removeAttribute('data-theme');
    localStorage.removeItem(KEY);
  } else {
    document.documentElement.setAttribute('data-theme', t);
    localStorage.setItem(KEY, t);
  }
});
