import { render } from 'preact';
import { startLive } from './api/live';
import { App } from './app';
import './styles.css';
import './theme';

startLive();
render(<App />, document.getElementById('app')!);
